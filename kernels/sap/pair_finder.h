// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/box_store.h"
#include "kernels/sap/sap_ops.h"

#include <bulletgpu/Backend.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bulletgpu {

/// Pairs that appeared and disappeared in one update, as sorted pair keys (see pairKey()).
struct PairDeltas {
    std::vector<std::uint64_t> found; ///< Pairs overlapping now and not at the last update.
    std::vector<std::uint64_t> lost;  ///< Pairs overlapping at the last update and not now.
    /// The update already handed `lost` to the finder's LostPairSink (every update starts it
    /// false in UpdateGate::skip; a finder that calls the sink sets it true).
    bool lostTaken = false;
};

/// Takes an update's lost pairs while the update goes on, so that the caller's work on them
/// (removing them from a pair cache, which is serial) overlaps the finder's sweep.
class LostPairSink {
public:
    virtual ~LostPairSink() = default;
    /// Called at most once per update, inside it, on the thread that called update(), while the
    /// finder's other threads sweep; `lost` (sorted keys) is what deltas.lost will hold. Must
    /// not throw, and must not touch the finder or the store.
    virtual void takeLost(const std::vector<std::uint64_t>& lost) = 0;
};

/// Per-update counters and timings of a pair finder.
struct PairFinderStats {
    std::uint32_t objects = 0;     ///< Live usable boxes swept.
    std::uint32_t hugeObjects = 0; ///< Boxes too large for the grid, tested against all others.
    std::uint32_t cells = 0;       ///< Grid cells across the two non-sweep axes.
    std::uint32_t entries = 0;     ///< Box-in-cell entries swept.
    int sweepAxis = 0;             ///< Axis the boxes were sorted on.
    int threads = 1;               ///< CPU threads the update ran on.
    std::uint64_t candidates = 0;  ///< Box pairs tested on all three axes.
    std::uint64_t pairs = 0;       ///< Overlapping pairs after the update.
    double classifyMs = 0;         ///< Grid choice, cell ranges and huge list.
    double sortMs = 0;             ///< Endpoint sort and bucketing into cells, or refilling them.
    bool cellsRefilled = false;    ///< The last full sweep's cells were refilled instead of sorted (CPU).
    double sweepMs = 0;            ///< Sweeps and huge-object tests (and the LostPairSink, overlapping them).
    double diffMs = 0;             ///< Pair-key sort and the difference with the last update.
    double transferMs = 0;         ///< Host-device copies (CUDA only).
    bool skipped = false;          ///< Nothing had changed: the last result stood.
    /// Boxes changed since the last full sweep when this update recomputed only their pairs
    /// (objects, cells and entries then describe that sweep); 0 after a full sweep.
    std::uint32_t movingObjects = 0;

    bool margins = false;               ///< Margin boxes were swept (MarginPairFinder); the fields below apply.
    std::uint32_t marginEscapes = 0;    ///< Boxes that got a new margin box (left theirs, or changed state or filter).
    std::uint64_t marginCandidates = 0; ///< Pairs of overlapping margin boxes, the candidates re-tested from.
    std::uint64_t retests = 0;          ///< Candidates re-tested on the real boxes.
    double marginMs = 0;                ///< Refreshing the margin boxes and re-testing (the inner sweep excluded).

    /// Most partitions whose loads are reported one by one.
    static constexpr int cReportedPartitions = 16;
    int partitions = 1;           ///< Slabs the scene was split into (PartitionedPairFinder).
    int splitAxis = -1;           ///< Axis cut into slabs; -1 when not split.
    std::uint32_t straddlers = 0; ///< Extra copies of boxes that cross a cut (sum of loads - objects).
    std::uint32_t maxLoad = 0;    ///< Boxes in the fullest slab.
    std::uint32_t migrated = 0;   ///< Boxes that entered or left a slab in this update.
    double imbalance = 1.0;       ///< Fullest slab's load over the mean load.
    std::array<std::uint32_t, cReportedPartitions> partitionLoads{}; ///< Boxes per slab (first slabs).
    bool rebalanced = false; ///< The cuts moved (or the axis changed) in this update.
};

/// Remembers what the last full update saw, so that an update with nothing new is skipped.
class UpdateGate {
public:
    /// Starts an update: empties the deltas (lostTaken false) and, when the store and the filter
    /// setting are as the last recorded update saw them, consumes the dirty list, marks the stats
    /// skipped and returns true (the last result stands).
    bool skip(BoxStore& boxes, bool filterGroups, PairDeltas& deltas, PairFinderStats& stats) const {
        deltas.found.clear();
        deltas.lost.clear();
        deltas.lostTaken = false;
        if (boxes.revision() != m_revision || filterGroups != m_filterGroups) return false;
        stats.skipped = true;
        boxes.clearDirty();
        return true;
    }
    /// Records a full update.
    void record(const BoxStore& boxes, bool filterGroups) {
        m_revision = boxes.revision();
        m_filterGroups = filterGroups;
    }
    /// Makes the next update a full one.
    void open() { m_revision = ~0ull; }

private:
    std::uint64_t m_revision = ~0ull;
    bool m_filterGroups = false;
};

/// Finds every overlapping pair of live boxes with sort-based sweep-and-prune over a grid
/// of cells across the two non-sweep axes, and reports the difference with the last call.
///
/// The pair set after update() is exactly the pairs of live, usable boxes that overlap
/// inclusively on all three axes (touching counts), in exact precision when the store keeps
/// it, and that pass group/mask when filtering is on. Implementations differ only in where
/// they run; their results are identical.
class PairFinder {
public:
    virtual ~PairFinder() = default;

    /// The backend this finder runs on (Cpu or Cuda).
    virtual Backend backend() const = 0;

    /// Recomputes the pair set from the store and writes what changed since the last update.
    /// Consumes the store's dirty list (the store's clearDirty() is called).
    virtual void update(BoxStore& boxes, bool filterGroups, PairDeltas& deltas) = 0;

    /// Records pair changes made outside update() (immediate ghost queries, destroyed proxies,
    /// pairs the caller refused), so the next update's difference starts from them. Both lists
    /// sorted; an added pair already present or a removed pair absent is ignored.
    virtual void applyEdits(const std::vector<std::uint64_t>& added, const std::vector<std::uint64_t>& removed) = 0;

    /// Keeps only the pairs the window owns from the next update on (see PairOwnership).
    virtual void setOwnership(const PairOwnership& window) = 0;

    /// Whether this finder is one slab of several that share one device copy of the store
    /// (createCudaSlabFinders): its update() searches the caller's whole store, only the boxes
    /// that touch its ownership window, after uploadSharedStore(), and leaves the store's dirty
    /// list to the caller.
    virtual bool sharesStore() const { return false; }

    /// Hands the lost pairs of later updates to `sink` during the update, where the finder can
    /// (null: never). Finders that cannot ignore it and report the lost pairs in the deltas alone.
    virtual void setLostPairSink(LostPairSink* /*sink*/) {}

    /// Sends the store's changed boxes to the copy the slab finders share; called once per update,
    /// before their update(), on a finder that sharesStore().
    virtual void uploadSharedStore(const BoxStore& /*boxes*/) {}

    /// The pair set after the last update and edits, sorted, when it is kept on the host; null
    /// otherwise (the CUDA finder keeps it on the device).
    virtual const std::vector<std::uint64_t>* hostPairs() const { return nullptr; }

    /// Forgets the pair set (the next update reports every pair as found).
    virtual void reset() = 0;

    /// Number of pairs after the last update and edits.
    virtual std::uint64_t pairCount() const = 0;

    /// Counters of the last update.
    virtual const PairFinderStats& stats() const = 0;

    /// The backend and what it runs on, e.g. "CPU backend, 2 OpenMP threads" or "CUDA backend on <device>".
    virtual std::string description() const = 0;
};

/// CPU pair finder on OpenMP threads; threads <= 0 uses OpenMP's default.
std::unique_ptr<PairFinder> createCpuPairFinder(int threads);

/// CUDA pair finder on the given device. Throws std::runtime_error saying why when the
/// library was built without CUDA or the device cannot be used.
std::unique_ptr<PairFinder> createCudaPairFinder(int device);

/// `count` CUDA pair finders on one device that share one device copy of the store, one per slab
/// of a PartitionedPairFinder, each on its own stream (see PairFinder::sharesStore). Throws
/// std::runtime_error saying why when the library was built without CUDA or the device cannot be used.
std::vector<std::unique_ptr<PairFinder>> createCudaSlabFinders(int device, int count);

} // namespace bulletgpu
