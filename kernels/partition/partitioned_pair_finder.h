// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/partition/slab_split.h"
#include "kernels/sap/pair_finder.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bulletgpu {

/// A pair finder that splits space into K slabs along one axis (Avril et al. 2014) and gives
/// each slab to its own finder (a CPU thread, a CUDA stream or a CUDA device), all running at
/// once on one host thread each.
///
/// Each slab keeps its own box store (resident buffers on its device), holding the boxes that
/// touch the slab; a box crossing a cut is in both slabs, and a pair is reported only by the
/// slab holding its reference point (PairOwnership), so every pair is found exactly once.
/// Only boxes that changed are copied into slab stores, and only those that crossed a cut
/// enter or leave one. The slabs' found and lost pairs are merged once per update, and a pair
/// that moved from one slab to another cancels out. The pair set, and so the deltas, are the
/// same as a single finder's for every K.
///
/// Slab finders that share one device copy of the store (PairFinder::sharesStore, the K streams
/// of one GPU) get no slab stores: the changed boxes are uploaded once, and each slab's finder
/// searches the boxes touching its slab in place, in global slots.
class PartitionedPairFinder final : public PairFinder {
public:
    /// One finder per slab (at least one); they must not be used elsewhere. hostThreads is
    /// the number of host threads that run the slabs (<= 0: one per slab).
    PartitionedPairFinder(std::vector<std::unique_ptr<PairFinder>> slabFinders, int hostThreads);
    ~PartitionedPairFinder() override;

    Backend backend() const override;
    void update(BoxStore& boxes, bool filterGroups, PairDeltas& deltas) override;
    void applyEdits(const std::vector<std::uint64_t>& added, const std::vector<std::uint64_t>& removed) override;
    void setOwnership(const PairOwnership& window) override;
    void reset() override;
    std::uint64_t pairCount() const override { return m_pairs.size(); }
    const std::vector<std::uint64_t>* hostPairs() const override { return &m_pairs; }
    const PairFinderStats& stats() const override { return m_stats; }
    std::string description() const override;

    /// The current pair set, sorted (for tests).
    const std::vector<std::uint64_t>& pairs() const { return m_pairs; }

    /// The current cuts.
    const SlabCuts& cuts() const { return m_splitter.cuts(); }

    /// Boxes held by each slab after the last update.
    const std::vector<std::uint32_t>& loads() const { return m_loads; }

    /// Checks that every live usable box is in exactly the slabs its extent touches, that the
    /// slot maps agree, and that the pair set is sorted and unique. Runs after every update in
    /// BULLETGPU_VALIDATE builds; tests call it too.
    bool validate(const BoxStore& boxes) const;

private:
    struct Slab;
    struct MergeRange;

    /// Brings one slab's store up to date with the scanned slots, runs its finder and turns its
    /// deltas into global pair keys.
    void updateSlab(int index, BoxStore& boxes, bool filterGroups);
    /// The slabs a slot's box touches now, as [first, last]; first > last when none.
    void slabRange(const BoxStore& boxes, std::uint32_t slot, int& first, int& last) const;
    /// Merges the slabs' deltas, reconciles them with the edits and updates the pair set.
    void merge(PairDeltas& deltas);
    /// The slabs' found and lost pairs merged into `deltas`, less the pairs in both (sorted).
    void mergeSlabDeltas(PairDeltas& deltas);
    void fillStats(double distributeMs);
    /// Books an edit of the pairs in m_found against the slabs' union: pairs in `undone` (put
    /// there by the opposite edit) leave it, the others join `recorded`.
    void recordEdit(std::vector<std::uint64_t>& undone, std::vector<std::uint64_t>& recorded);

    std::vector<std::unique_ptr<Slab>> m_slabs;
    int m_hostThreads;
    bool m_initialised = false;
    bool m_sharedStore = false; // the slab finders share one device copy of the caller's store
    SlabSplitter m_splitter;
    std::vector<std::uint8_t> m_first;     // per global slot: first slab it is in (cNoSlab: none)
    std::vector<std::uint8_t> m_last;      // per global slot: last slab it is in
    std::vector<std::uint32_t> m_scan;     // global slots to re-examine in this update
    std::vector<std::uint8_t> m_nextFirst; // per scanned slot: first slab it is in now (cNoSlab: none)
    std::vector<std::uint8_t> m_nextLast;  // per scanned slot: last slab it is in now
    bool m_scanAll = true;
    std::uint32_t m_objects = 0; // global slots in at least one slab
    std::vector<std::uint32_t> m_loads;
    std::vector<std::uint64_t> m_pairs;       // the pair set the caller holds (after edits)
    std::vector<std::uint64_t> m_editAdded;   // pairs edits put into m_pairs that the slabs do not hold
    std::vector<std::uint64_t> m_editRemoved; // pairs edits took out of m_pairs that the slabs hold
    std::vector<std::uint64_t> m_found, m_lost, m_scratch, m_slabPairs;
    std::vector<MergeRange> m_mergeRanges;
    UpdateGate m_gate;
    PairFinderStats m_stats;
};

/// Most slabs a PartitionedPairFinder takes.
constexpr int cMaxSlabs = 64;

/// A partitioned finder of K CPU slabs run on `threads` host threads (<= 0: OpenMP's default).
std::unique_ptr<PairFinder> createPartitionedCpuPairFinder(int slabs, int threads);

/// A partitioned finder of one CUDA finder per slab, slab k on devices[k % devices.size()].
/// When every slab is on one device, the slabs run on separate streams and share one device
/// copy of the store (createCudaSlabFinders). Throws std::runtime_error saying why when a
/// device cannot be used.
std::unique_ptr<PairFinder> createPartitionedCudaPairFinder(int slabs, const std::vector<int>& devices);

} // namespace bulletgpu
