// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/cache_line.h"
#include "kernels/common/radix_sort_cpu.h"
#include "kernels/common/thread_tuner.h"
#include "kernels/sap/cell_refill_cpu.h"
#include "kernels/sap/cell_sweep_cpu.h"
#include "kernels/sap/incremental_sweep.h"
#include "kernels/sap/pair_finder.h"
#include "kernels/sap/sap_grid.h"

#include <cstdint>
#include <vector>

namespace bulletgpu {

/// The CPU backend of PairFinder: OpenMP threads, structure-of-arrays buffers that are
/// reused from frame to frame (no allocation once sizes have settled). When few boxes changed
/// since the last full sweep, an update recomputes only their pairs (IncrementalSweep). A full
/// sweep refills the last one's cells when the grid is the same and few boxes changed cells
/// (CellRefill); otherwise it sorts every box and buckets it into its cells. With a
/// LostPairSink, a full sweep hands the caller its lost pairs while the other threads sweep.
class PairFinderCpu final : public PairFinder {
public:
    /// threads <= 0 uses OpenMP's default.
    explicit PairFinderCpu(int threads);

    Backend backend() const override { return Backend::Cpu; }
    void update(BoxStore& boxes, bool filterGroups, PairDeltas& deltas) override;
    void applyEdits(const std::vector<std::uint64_t>& added, const std::vector<std::uint64_t>& removed) override;
    void setOwnership(const PairOwnership& window) override;
    /// A full sweep finds the lost pairs before it sweeps, by testing the last pair set on the
    /// new boxes, and hands them to the sink on the calling thread while the other threads sweep.
    /// Partitioned finders (an ownership window set) and incremental updates do not.
    void setLostPairSink(LostPairSink* sink) override { m_lostSink = sink; }
    void reset() override;
    std::uint64_t pairCount() const override { return m_pairs.size(); }
    const std::vector<std::uint64_t>* hostPairs() const override { return &m_pairs; }
    const PairFinderStats& stats() const override { return m_stats; }
    std::string description() const override;

    /// The current pair set, sorted (for tests and validators).
    const std::vector<std::uint64_t>& pairs() const { return m_pairs; }

    /// Checks the invariants: the pair set sorted and unique, each cell's entries in sweep order.
    /// Runs after every update in BULLETGPU_VALIDATE builds; tests call it too.
    bool validate() const;

private:
    /// Chooses the grid and fills m_boxes, m_cells, the huge list and, when the cells can be
    /// refilled, the moved lists; returns whether the cells are to be refilled.
    bool classify(const BoxStore& boxes);
    /// Sorts the bucketed boxes by lower bound on the sweep axis.
    void sortBySweepKey(std::uint32_t slots, bool keysWritten);
    /// Copies each sorted box into every cell it covers, keeping the sweep order per cell.
    void bucketIntoCells();
    /// Refills the last full sweep's cells (CellRefill).
    void refillCells();
    /// Finds the pairs of the last set that this update loses, into m_lost (sorted), from the
    /// boxes classify() recorded: those that no longer pass what the sweep tests.
    void findLost(const BoxStore& boxes, bool filterGroups);
    /// Whether the pair of slots a and b passes this update's tests (see findLost).
    bool stillPaired(const BoxStore& boxes, const BoxArraysView& view, std::uint32_t a, std::uint32_t b,
                     bool filterGroups) const;
    /// Whether m_lost holds exactly the pairs of m_pairs that m_newPairs lacks (the validator of a
    /// difference whose lost pairs were found before the sweep; allocates nothing, so the
    /// allocation test holds in validating builds too).
    bool lostIsDifference() const;
    /// Appends the pairs of m_newPairs (sorted) that are not in m_pairs to `found`, on the threads.
    void findFound(std::vector<std::uint64_t>& found);
    /// Sweeps every cell and tests huge boxes against all others, into m_threadPairs; with
    /// handLost, the calling thread first hands m_lost to the sink while the others start.
    void sweep(const BoxStore& boxes, bool filterGroups, bool handLost);
    /// Gathers, sorts and diffs the pairs against the last update; with lostFound, the lost pairs
    /// are m_lost and only the found ones are computed.
    void diff(std::uint32_t slotCount, PairDeltas& deltas, bool lostFound);
    /// Updates only the pairs of the boxes that changed, from the last full sweep's cells;
    /// returns false when too many boxes changed since that sweep.
    bool updateIncrementally(const BoxStore& boxes, bool filterGroups, PairDeltas& deltas);
    /// Computes the swept cells' widest extents and fences, once per full sweep, when an
    /// incremental update first needs them.
    void indexSweptCells();
    /// The rules every pair of this update must pass.
    CellSweepRules sweepRules(const BoxStore& boxes, bool filterGroups) const;

    /// Sort key of slots that are not bucketed: above every float's key.
    static constexpr std::uint32_t cNotBucketed = 0xffffffffu;
    /// The cells are refilled only when at most 1 / cRefillMovedDivisor of the bucketed boxes
    /// changed cells.
    static constexpr std::uint32_t cRefillMovedDivisor = 8;

    /// Below this many slots an update runs on one thread.
    static constexpr std::int64_t cParallelThreshold = 8192;

    int m_threads;
    ThreadTuner m_tuner;
    int m_activeThreads = 1;
    SapGrid m_grid;
    SapGridChooser m_gridChooser;
    RadixSorterCpu m_sorter;
    std::vector<SlotBox> m_boxes;           // every slot's box as of the last full sweep
    std::vector<SapCellRange> m_cells;      // every slot's cells as of the last full sweep
    std::vector<SlotBox> m_sortedBoxes;     // the bucketed ones, in sweep order
    std::vector<std::uint32_t> m_sortKeys;  // ordered-float lower bound on the sweep axis
    std::vector<std::uint32_t> m_sortOrder; // slots, bucketed boxes first in sweep order after the sort
    std::uint32_t m_bucketedCount = 0;      // bucketed boxes at the front of m_sortOrder
    std::vector<std::uint32_t> m_hugeSlots;
    std::vector<std::uint32_t> m_cellStart;                      // cellCount + 1 offsets into m_entries
    std::vector<std::vector<std::uint32_t>> m_threadHuge;        // huge slots found by each thread
    std::vector<std::vector<std::uint32_t>> m_threadCellOffsets; // per thread, per cell: where its entries go
    std::vector<CellEntry> m_entries;                // box-in-cell copies, by cell, in sweep order within a cell
    std::vector<std::uint32_t> m_entrySlots;         // each entry's slot (all a refill reads of the last fill)
    std::vector<std::uint32_t> m_previousEntrySlots; // the last fill's, while refilling
    std::vector<std::uint32_t> m_previousCellStart;  // the same
    CellRefill m_refill;
    std::vector<CacheLinePadded<CellLanes>> m_threadLanes; // each thread's sweep scratch
    std::vector<CacheLinePadded<SweepOutput>> m_threadPairs;
    LostPairSink* m_lostSink = nullptr;
    std::vector<CacheLinePadded<std::vector<std::uint64_t>>> m_threadKeys; // findLost's and findFound's, per thread
    std::vector<std::uint64_t> m_lost;     // pairs of m_pairs this update loses, when found before the sweep
    std::vector<std::uint64_t> m_pairs;    // current pair set, sorted
    std::vector<std::uint64_t> m_newPairs; // scratch for the next set
    std::vector<std::size_t> m_partStart;  // where each thread's pairs go in m_newPairs
    std::vector<double> m_cellWidestS;     // per cell, SweptCells::widestS of the last full sweep
    std::vector<float> m_fences;           // SweptCells::fences of the last full sweep
    IncrementalSweep m_incremental;
    bool m_cellsFilled = false;       // the cells and m_boxes hold the last full sweep, on m_grid
    bool m_sweptCellsValid = false;   // the cells hold the last full sweep of the current rules
    bool m_sweptCellsIndexed = false; // m_cellWidestS and m_fences describe those cells
    bool m_sweptFilterGroups = false; // the filter setting of that sweep
    PairOwnership m_ownership;
    UpdateGate m_gate;
    PairFinderStats m_stats;
};

} // namespace bulletgpu
