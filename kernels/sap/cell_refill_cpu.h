// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/cache_line.h"
#include "kernels/sap/cell_sweep_cpu.h"
#include "kernels/sap/sap_grid.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bulletgpu {

/// The cell range of a box that is in no cell (unusable, free or huge).
constexpr SapCellRange cNoCells{1, 0, 1, 0};

/// Whether two cell ranges are the same (all empty ranges are cNoCells).
inline bool sameCells(const SapCellRange& a, const SapCellRange& b) {
    return a.u0 == b.u0 && a.u1 == b.u1 && a.v0 == b.v0 && a.v1 == b.v1;
}

/// Whether a cell range contains cell (u, v).
inline bool coversCell(const SapCellRange& r, std::int32_t u, std::int32_t v) {
    return r.u0 <= u && u <= r.u1 && r.v0 <= v && v <= r.v1;
}

/// A box as the cells are filled from it, by slot: its bounds in sweep coordinates and its
/// filter. Half a cache line, so that filling a cell reads one line per entry from half the
/// memory; the cells it covers are computed again from its bounds, which costs less than
/// reading them. A box in no cell (unusable, free or huge) has NaN bounds on the sweep axis.
struct alignas(32) SlotBox {
    float minS, maxS, minU, maxU, minV, maxV; ///< As in CellEntry.
    std::uint32_t group, mask;                ///< Collision filter.

    /// Whether the box is in cells (false for the NaN bounds of one that is not).
    bool bucketed() const { return minS <= maxS; }
    /// The cells the box covers on a grid (when bucketed).
    SapCellRange cellsOn(const SapGrid& grid) const { return sapCellRange(grid, minU, maxU, minV, maxV); }
    /// The entry of the box in slot `slot` in cell (u, v), one of the cells it covers.
    CellEntry entryIn(std::uint32_t slot, const SapCellRange& cells, std::int32_t u, std::int32_t v) const {
        return CellEntry{minS, maxS, minU, maxU, minV, maxV, slot, sapCornerBits(cells, u, v), group, mask};
    }
};
static_assert(sizeof(SlotBox) == 32, "SlotBox is half a cache line");

/// SlotBox of a box in no cell.
constexpr SlotBox cNotBucketedBox{__builtin_nanf(""), __builtin_nanf(""), 0, 0, 0, 0, 0, 0};

/// A box whose cells changed since the cells were last filled, with the cells it covered then
/// and covers now (so that counting the moves reads no box).
struct MovedBox {
    std::uint32_t slot;  ///< The box's slot.
    SapCellRange before; ///< Its cells at the last fill (cNoCells when it was in none).
    SapCellRange now;    ///< Its cells now (cNoCells when it is in none).
};

/// Fills the cells again from the last fill on the same grid, for boxes that moved a little
/// since: each cell keeps its entries whose boxes still cover it, with their new bounds, takes
/// in the boxes that moved into it, and is sorted again. Boxes that moved a little keep nearly
/// the same order within a cell, so an insertion sort costs about one pass, and every array is
/// read and written in order but the boxes, which are read one SlotBox per entry. This
/// replaces a radix sort of every box and a scatter of each into its cells; the entries and
/// their order within a cell by lower bound are the same (ties may be ordered differently).
class CellRefill {
public:
    /// Empties the moved-box lists of `threads` threads for a new update.
    void beginUpdate(int threads);

    /// Thread `thread`'s list of moved boxes, filled in slot order over a contiguous run of slots.
    std::vector<MovedBox>& moved(int thread) { return m_moved[static_cast<std::size_t>(thread)].value; }

    /// Moved boxes in all lists.
    std::size_t movedCount() const;

    /// Fills entries, their slots (entrySlots) and cellStart (cellCount + 1 offsets) with the
    /// cells whose entries' slots were `previousSlots`, split by `previousStart`, last filled on
    /// `grid` from the boxes' previous cells as the moved lists give them, for the boxes now in
    /// `boxes` (indexed by slot), on up to `threads` threads. Only the slots of the last fill are
    /// read: every entry is made again from its box.
    void refill(const SapGrid& grid, const SlotBox* boxes, const std::vector<std::uint32_t>& previousSlots,
                const std::vector<std::uint32_t>& previousStart, std::vector<CellEntry>& entries,
                std::vector<std::uint32_t>& entrySlots, std::vector<std::uint32_t>& cellStart, int threads);

private:
    /// From the moved lists: each cell's new size, into cellStart, and the boxes entering it.
    void countMoves(const SapGrid& grid, const std::vector<std::uint32_t>& previousStart,
                    std::vector<std::uint32_t>& cellStart);
    /// Fills one cell's entries and their slots.
    void refillCell(const SapGrid& grid, std::uint32_t cell, const SlotBox* boxes, const std::uint32_t* previousSlots,
                    std::uint32_t previousCount, CellEntry* out, std::uint32_t* outSlots,
                    std::vector<CellEntry>& entering) const;

    std::vector<CacheLinePadded<std::vector<MovedBox>>> m_moved;     // per thread
    std::vector<std::uint32_t> m_leaving;                            // per cell: entries whose boxes left it
    std::vector<std::uint32_t> m_enterStart;                         // cellCount + 1 offsets into m_enterSlots
    std::vector<std::uint32_t> m_enterCursor;                        // per cell: next free place while filling
    std::vector<std::uint32_t> m_enterSlots;                         // boxes entering each cell, by cell
    std::vector<CacheLinePadded<std::vector<CellEntry>>> m_entering; // per thread: one cell's entering entries
};

} // namespace bulletgpu
