// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/cache_line.h"
#include "kernels/common/box_store.h"
#include "kernels/sap/cell_sweep_cpu.h"
#include "kernels/sap/pair_finder.h"
#include "kernels/sap/sap_grid.h"
#include "kernels/sap/sap_ops.h"

#include <cstdint>
#include <vector>

namespace bulletgpu {

/// The cells of the last full sweep, as an incremental update reads them: every box that was
/// usable then is in the cells it covered (in sweep order within each cell) or in the huge list.
struct SweptCells {
    const SapGrid* grid = nullptr;            ///< The grid the boxes were bucketed on.
    const CellEntry* entries = nullptr;       ///< Box-in-cell entries, by cell.
    const std::uint32_t* cellStart = nullptr; ///< cellCount + 1 offsets into entries.
    const double* widestS = nullptr;          ///< Per cell, at least the largest sweep-axis extent of its entries.
    const float* fences = nullptr;            ///< Lower bound of every IncrementalSweep::cFenceStride-th entry.
    const std::uint32_t* hugeSlots = nullptr; ///< Boxes too large for the grid.
    std::size_t hugeCount = 0;                ///< Number of huge boxes.
};

/// Updates a pair set when few boxes changed, in time proportional to what changed and to the
/// number of pairs, instead of sweeping every box again.
///
/// The boxes that changed since the last full sweep form the moving set M; the others are
/// still exactly where the sweep's cells have them. An update recomputes every pair of two
/// boxes of M (bucketing M alone into the same grid) and every pair of a box that changed in
/// this update with a box outside M (searching the swept cells); every other pair is unchanged
/// and kept. The result equals a full sweep's. M grows until it passes a share of the boxes;
/// then the caller sweeps everything again and empties M with restart().
class IncrementalSweep {
public:
    /// Largest share of the boxes M may hold: 1 / cMovingShareDivisor.
    static constexpr std::uint32_t cMovingShareDivisor = 32;
    /// Fewer changed boxes than this are looked up on one thread.
    static constexpr std::int64_t cParallelQueries = 256;

    /// Looks changed boxes up on up to `threads` OpenMP threads.
    explicit IncrementalSweep(int threads) : m_threads(threads) {}

    /// Empties M (after a full sweep).
    void restart();

    /// Adds slots whose pairs must be recomputed at the next update although their boxes did not
    /// change (the ends of pairs edited outside the finder).
    void touch(std::uint32_t slot);

    /// Takes the store's dirty slots and the touched ones as this update's changed boxes and adds
    /// them to M; returns false, changing nothing, when M would grow past its share of the boxes
    /// (the caller then sweeps everything). The dirty list is left to the caller.
    bool admit(const BoxStore& boxes);

    /// After admit(): updates pairs (sorted) for the changed boxes, writing the difference into deltas.
    void update(const BoxStore& boxes, const SweptCells& cells, const CellSweepRules& rules,
                std::vector<std::uint64_t>& pairs, PairDeltas& deltas);

    /// Boxes in M after the last update.
    std::uint32_t movingCount() const { return static_cast<std::uint32_t>(m_moving.size()); }

    /// Box pairs tested in the last update.
    std::uint64_t candidates() const { return m_candidates; }

    /// Threads the last update looked changed boxes up on.
    int queryThreads() const { return m_queryThreads; }

    /// SweptCells::widestS of a cell's entries: their largest sweep-axis extent, rounded up.
    static double widestExtent(const CellEntry* entries, std::uint32_t count);

    /// Entries between two fences (SweptCells::fences).
    static constexpr std::uint32_t cFenceStride = 8;

    /// Writes the fences of the entries [first, first + count) of one cell: fences[i / cFenceStride]
    /// for every i in that range that is a multiple of cFenceStride.
    static void writeFences(const CellEntry* entries, std::uint32_t first, std::uint32_t count, float* fences);

private:
    /// A box of M in one cell it covers, for the M x M pass.
    struct MovingEntry {
        std::uint32_t cell;   // cell index
        std::uint32_t slot;   // the box
        std::uint32_t corner; // sapCornerBits of the box's cells, seen from this cell
        float minS, maxS;     // the box's bounds on the sweep axis
    };

    /// A changed box to look up in the swept cells, ordered by its first cell and lower bound.
    struct QueryKey {
        std::uint32_t cell;     // first cell the box covers
        std::uint32_t sweepKey; // orderedFloatKey of its lower bound on the sweep axis
        std::uint32_t slot;     // the box
    };

    void pairsWithinMoving(const BoxStore& boxes, const SapGrid& grid, const CellSweepRules& rules);
    void pairsWithSwept(const BoxStore& boxes, const SweptCells& cells, const CellSweepRules& rules);
    std::uint64_t querySwept(std::uint32_t slot, const SweptCells& cells, const CellSweepRules& rules,
                             std::vector<std::uint64_t>& out) const;
    void testPair(std::uint32_t a, std::uint32_t b, const CellSweepRules& rules);
    void mergeInto(std::vector<std::uint64_t>& pairs, PairDeltas& deltas);

    int m_threads;
    static constexpr std::uint8_t cMoving = 1;  // m_flags: the slot is in M
    static constexpr std::uint8_t cChanged = 2; // m_flags: the slot changed in this update (then also in M)
    std::vector<std::uint8_t> m_flags;          // per slot
    std::vector<std::uint32_t> m_moving;        // M
    std::vector<std::uint32_t> m_changed;       // slots changed in this update
    std::vector<std::uint32_t> m_touched;       // slots touched since the last update
    std::vector<std::uint32_t> m_hugeMoving;    // the usable huge boxes of M
    std::vector<std::uint32_t> m_normalMoving;  // the usable other boxes of M
    std::vector<MovingEntry> m_movingEntries;   // M's boxes in their cells, sorted by cell
    std::vector<QueryKey> m_queries;            // changed boxes to look up in the swept cells
    std::vector<CacheLinePadded<std::vector<std::uint64_t>>> m_threadFresh; // each thread's pairs with swept boxes
    std::vector<std::uint64_t> m_fresh;                                     // recomputed pairs, sorted
    std::vector<std::uint64_t> m_stale;                                     // affected pairs as they were
    std::vector<std::uint64_t> m_merged; // the next pair set, swapped with the caller's
    std::uint64_t m_candidates = 0;
    int m_queryThreads = 1;
};

} // namespace bulletgpu
