// SPDX-License-Identifier: Zlib
#include "kernels/sap/cell_refill_cpu.h"

#include "kernels/common/omp_team.h"
#include "kernels/common/thread_buffers.h"

#include <omp.h>

#include <algorithm>
#include <cassert>

namespace bulletgpu {
namespace {

/// How many entries ahead a cell's fill fetches their boxes (read in slot order, so at random).
constexpr std::uint32_t cPrefetchDistance = 32;
/// Cells are handed to threads this many at a time.
constexpr int cCellsPerChunk = 16;
/// An insertion sort that has moved entries this many times the cell's size gives way to std::sort.
constexpr std::uint64_t cInsertionMovesPerEntry = 8;

bool byLowerBound(const CellEntry& a, const CellEntry& b) { return a.minS < b.minS; }

/// Sorts entries[0, count) by lower bound by insertion, stable, unless that takes more than
/// cInsertionMovesPerEntry moves per entry, in which case std::sort finishes the job: cheap
/// for nearly sorted cells and for the few entries entering a cell, bounded for the rest.
void sortNearlySorted(CellEntry* entries, std::uint32_t count) {
    const std::uint64_t budget = cInsertionMovesPerEntry * count;
    std::uint64_t moves = 0;
    for (std::uint32_t i = 1; i < count; ++i) {
        if (!(entries[i].minS < entries[i - 1].minS)) continue;
        const CellEntry key = entries[i];
        std::uint32_t j = i;
        do {
            entries[j] = entries[j - 1];
            --j;
        } while (j > 0 && key.minS < entries[j - 1].minS);
        entries[j] = key;
        moves += i - j;
        if (moves > budget) {
            std::sort(entries, entries + count, byLowerBound);
            return;
        }
    }
}

/// Calls visit(u, v) for every cell of r that is not in `other`.
template <typename Visit>
void forCellsNotIn(const SapCellRange& r, const SapCellRange& other, Visit visit) {
    for (std::int32_t v = r.v0; v <= r.v1; ++v) {
        for (std::int32_t u = r.u0; u <= r.u1; ++u) {
            if (!coversCell(other, u, v)) visit(u, v);
        }
    }
}

} // namespace

void CellRefill::beginUpdate(int threads) {
    if (m_moved.size() < static_cast<std::size_t>(threads)) m_moved.resize(static_cast<std::size_t>(threads));
    if (m_entering.size() < static_cast<std::size_t>(threads)) m_entering.resize(static_cast<std::size_t>(threads));
    for (auto& list : m_moved) list.value.clear();
}

std::size_t CellRefill::movedCount() const {
    std::size_t count = 0;
    for (const auto& list : m_moved) count += list.value.size();
    return count;
}

void CellRefill::countMoves(const SapGrid& grid, const std::vector<std::uint32_t>& previousStart,
                            std::vector<std::uint32_t>& cellStart) {
    const std::uint32_t cells = grid.cellCount();
    m_leaving.assign(cells, 0);
    m_enterStart.assign(cells + 1, 0);
    for (const auto& list : m_moved) {
        for (const MovedBox& moved : list.value) {
            forCellsNotIn(moved.before, moved.now,
                          [&](std::int32_t u, std::int32_t v) { ++m_leaving[sapCellIndex(grid, u, v)]; });
            forCellsNotIn(moved.now, moved.before,
                          [&](std::int32_t u, std::int32_t v) { ++m_enterStart[sapCellIndex(grid, u, v)]; });
        }
    }
    // Exclusive offsets of the entering boxes, and each cell's new place.
    cellStart.resize(cells + 1);
    m_enterCursor.resize(cells);
    std::uint32_t entering = 0, filled = 0;
    for (std::uint32_t cell = 0; cell < cells; ++cell) {
        const std::uint32_t enteringHere = m_enterStart[cell];
        m_enterStart[cell] = m_enterCursor[cell] = entering;
        cellStart[cell] = filled;
        filled += previousStart[cell + 1] - previousStart[cell] - m_leaving[cell] + enteringHere;
        entering += enteringHere;
    }
    m_enterStart[cells] = entering;
    cellStart[cells] = filled;
    m_enterSlots.resize(entering);
    for (const auto& list : m_moved) {
        for (const MovedBox& moved : list.value) {
            forCellsNotIn(moved.now, moved.before, [&](std::int32_t u, std::int32_t v) {
                m_enterSlots[m_enterCursor[sapCellIndex(grid, u, v)]++] = moved.slot;
            });
        }
    }
}

void CellRefill::refillCell(const SapGrid& grid, std::uint32_t cell, const SlotBox* boxes,
                            const std::uint32_t* previousSlots, std::uint32_t previousCount, CellEntry* out,
                            std::uint32_t* outSlots, std::vector<CellEntry>& entering) const {
    const std::int32_t u = sapCellColumn(grid, cell);
    const std::int32_t v = sapCellRow(grid, cell);
    std::uint32_t kept = 0;
    for (std::uint32_t i = 0; i < previousCount; ++i) {
        if (i + cPrefetchDistance < previousCount) __builtin_prefetch(&boxes[previousSlots[i + cPrefetchDistance]]);
        const std::uint32_t slot = previousSlots[i];
        const SlotBox& box = boxes[slot];
        if (!box.bucketed()) continue;
        const SapCellRange cells = box.cellsOn(grid);
        if (coversCell(cells, u, v)) out[kept++] = box.entryIn(slot, cells, u, v);
    }
    sortNearlySorted(out, kept);

    entering.clear();
    for (std::uint32_t k = m_enterStart[cell]; k < m_enterStart[cell + 1]; ++k) {
        const std::uint32_t slot = m_enterSlots[k];
        const SlotBox& box = boxes[slot];
        entering.push_back(box.entryIn(slot, box.cellsOn(grid), u, v));
    }
    if (!entering.empty()) {
        sortNearlySorted(entering.data(), static_cast<std::uint32_t>(entering.size()));
        // Merge from the back, so that the kept entries move at most once.
        std::size_t from = kept, in = entering.size(), to = kept + entering.size();
        while (in > 0) {
            if (from > 0 && entering[in - 1].minS < out[from - 1].minS) {
                out[--to] = out[--from];
            } else {
                out[--to] = entering[--in];
            }
        }
    }
    // The cell's slots, for the next refill (read back from the core's cache).
    const std::size_t count = kept + entering.size();
    for (std::size_t i = 0; i < count; ++i) outSlots[i] = out[i].slot;
}

void CellRefill::refill(const SapGrid& grid, const SlotBox* boxes, const std::vector<std::uint32_t>& previousSlots,
                        const std::vector<std::uint32_t>& previousStart, std::vector<CellEntry>& entries,
                        std::vector<std::uint32_t>& entrySlots, std::vector<std::uint32_t>& cellStart, int threads) {
    countMoves(grid, previousStart, cellStart);
    const std::uint32_t cells = grid.cellCount();
    entries.resize(cellStart[cells]);
    entrySlots.resize(cellStart[cells]);
#pragma omp parallel num_threads(threadsForRegion(threads))
    {
        std::vector<CellEntry>& entering = m_entering[static_cast<std::size_t>(omp_get_thread_num())].value;
#pragma omp for schedule(dynamic, cCellsPerChunk)
        for (std::int64_t c = 0; c < static_cast<std::int64_t>(cells); ++c) {
            const auto cell = static_cast<std::uint32_t>(c);
            refillCell(grid, cell, boxes, previousSlots.data() + previousStart[cell],
                       previousStart[cell + 1] - previousStart[cell], entries.data() + cellStart[cell],
                       entrySlots.data() + cellStart[cell], entering);
            assert(
                std::is_sorted(entries.data() + cellStart[cell], entries.data() + cellStart[cell + 1], byLowerBound));
        }
    }
    shareCapacity(m_entering, m_entering.size(),
                  [](auto& scratch) -> std::vector<CellEntry>& { return scratch.value; });
}

} // namespace bulletgpu
