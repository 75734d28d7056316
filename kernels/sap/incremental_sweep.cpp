// SPDX-License-Identifier: Zlib
#include "kernels/sap/incremental_sweep.h"

#include "kernels/common/aabb_ops.h"
#include "kernels/common/omp_team.h"
#include "kernels/common/thread_buffers.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <omp.h>

namespace bulletgpu {
namespace {

/// The cells a slot's box covers on the grid.
SapCellRange cellsOf(const SapGrid& grid, const BoxArraysView& view, std::uint32_t slot) {
    return sapCellRange(grid, view.min[grid.uAxis][slot], view.max[grid.uAxis][slot], view.min[grid.vAxis][slot],
                        view.max[grid.vAxis][slot]);
}

} // namespace

double IncrementalSweep::widestExtent(const CellEntry* entries, std::uint32_t count) {
    double widest = 0;
    for (std::uint32_t i = 0; i < count; ++i) {
        widest = std::max(widest, static_cast<double>(entries[i].maxS) - static_cast<double>(entries[i].minS));
    }
    // Each difference is rounded to nearest, so one step up covers every exact extent.
    return std::nextafter(widest, HUGE_VAL);
}

void IncrementalSweep::writeFences(const CellEntry* entries, std::uint32_t first, std::uint32_t count, float* fences) {
    for (std::uint32_t i = (first + cFenceStride - 1) / cFenceStride * cFenceStride; i < first + count;
         i += cFenceStride) {
        fences[i / cFenceStride] = entries[i].minS;
    }
}

void IncrementalSweep::restart() {
    for (std::uint32_t slot : m_moving) m_flags[slot] = 0;
    m_moving.clear();
    m_touched.clear();
}

void IncrementalSweep::touch(std::uint32_t slot) { m_touched.push_back(slot); }

void IncrementalSweep::update(const BoxStore& boxes, const SweptCells& cells, const CellSweepRules& rules,
                              std::vector<std::uint64_t>& pairs, PairDeltas& deltas) {
    m_candidates = 0;
    m_fresh.clear();
    pairsWithinMoving(boxes, *cells.grid, rules);
    pairsWithSwept(boxes, cells, rules);
    mergeInto(pairs, deltas);
    for (std::uint32_t slot : m_changed) m_flags[slot] &= ~cChanged;
    m_changed.clear();
    m_touched.clear();
}

bool IncrementalSweep::admit(const BoxStore& boxes) {
    // The dirty slots are listed once each: when they alone are too many, say so at once.
    if (std::uint64_t{boxes.dirtySlots().size()} * cMovingShareDivisor > boxes.liveCount()) return false;
    if (m_flags.size() < boxes.size()) m_flags.resize(boxes.size(), 0);
    std::uint32_t joining = 0;
    auto mark = [&](std::uint32_t slot) {
        if ((m_flags[slot] & cChanged) != 0) return;
        m_flags[slot] |= cChanged;
        m_changed.push_back(slot);
        joining += (m_flags[slot] & cMoving) == 0 ? 1u : 0u;
    };
    for (std::uint32_t slot : boxes.dirtySlots()) mark(slot);
    for (std::uint32_t slot : m_touched) mark(slot);
    const std::uint64_t moving = m_moving.size() + std::uint64_t{joining};
    if (moving * cMovingShareDivisor > boxes.liveCount()) {
        for (std::uint32_t slot : m_changed) m_flags[slot] &= ~cChanged;
        m_changed.clear();
        return false;
    }
    for (std::uint32_t slot : m_changed) {
        if ((m_flags[slot] & cMoving) != 0) continue;
        m_flags[slot] |= cMoving;
        m_moving.push_back(slot);
    }
    return true;
}

void IncrementalSweep::pairsWithinMoving(const BoxStore& boxes, const SapGrid& grid, const CellSweepRules& rules) {
    const BoxArraysView& view = rules.view;
    m_movingEntries.clear();
    m_hugeMoving.clear();
    m_normalMoving.clear();
    for (std::uint32_t slot : m_moving) {
        if (!boxes.isUsable(slot)) continue;
        const SapCellRange r = cellsOf(grid, view, slot);
        if (sapIsHuge(grid, r)) {
            m_hugeMoving.push_back(slot);
            continue;
        }
        m_normalMoving.push_back(slot);
        const float minS = view.min[grid.sweepAxis][slot], maxS = view.max[grid.sweepAxis][slot];
        for (std::int32_t v = r.v0; v <= r.v1; ++v) {
            for (std::int32_t u = r.u0; u <= r.u1; ++u) {
                m_movingEntries.push_back(
                    MovingEntry{sapCellIndex(grid, u, v), slot, sapCornerBits(r, u, v), minS, maxS});
            }
        }
    }
    std::sort(m_movingEntries.begin(), m_movingEntries.end(), [](const MovingEntry& a, const MovingEntry& b) {
        if (a.cell != b.cell) return a.cell < b.cell;
        const std::uint32_t keyA = orderedFloatKey(a.minS), keyB = orderedFloatKey(b.minS);
        return keyA != keyB ? keyA < keyB : a.slot < b.slot;
    });
    // Sweep each cell's boxes of M; a pair is tested in its reference cell only.
    for (std::size_t first = 0; first < m_movingEntries.size();) {
        std::size_t last = first + 1;
        while (last < m_movingEntries.size() && m_movingEntries[last].cell == m_movingEntries[first].cell) ++last;
        for (std::size_t i = first; i < last; ++i) {
            const MovingEntry& probe = m_movingEntries[i];
            for (std::size_t j = i + 1; j < last && m_movingEntries[j].minS <= probe.maxS; ++j) {
                if ((probe.corner | m_movingEntries[j].corner) != cBothCorners) continue;
                testPair(probe.slot, m_movingEntries[j].slot, rules);
            }
        }
        first = last;
    }
    // Huge boxes of M against the rest of M, and against each other once.
    for (std::size_t h = 0; h < m_hugeMoving.size(); ++h) {
        for (std::uint32_t slot : m_normalMoving) testPair(m_hugeMoving[h], slot, rules);
        for (std::size_t k = h + 1; k < m_hugeMoving.size(); ++k) testPair(m_hugeMoving[h], m_hugeMoving[k], rules);
    }
}

void IncrementalSweep::pairsWithSwept(const BoxStore& boxes, const SweptCells& cells, const CellSweepRules& rules) {
    const SapGrid& grid = *cells.grid;
    const BoxArraysView& view = rules.view;
    const int s = grid.sweepAxis;
    // Queries in cell order, and in sweep order within a cell, walk the cells' entries almost
    // in memory order instead of searching cold cells at random.
    m_queries.clear();
    for (std::uint32_t slot : m_changed) {
        if (!boxes.isUsable(slot)) continue;
        const SapCellRange r = cellsOf(grid, view, slot);
        if (sapIsHuge(grid, r)) {
            // A huge box may meet any swept box: test them all.
            for (std::uint32_t other = 0; other < boxes.size(); ++other) {
                if ((m_flags[other] & cMoving) == 0 && boxes.isUsable(other)) testPair(slot, other, rules);
            }
            continue;
        }
        m_queries.push_back(QueryKey{sapCellIndex(grid, r.u0, r.v0), orderedFloatKey(view.min[s][slot]), slot});
    }
    std::sort(m_queries.begin(), m_queries.end(), [](const QueryKey& a, const QueryKey& b) {
        return a.cell != b.cell           ? a.cell < b.cell
               : a.sweepKey != b.sweepKey ? a.sweepKey < b.sweepKey
                                          : a.slot < b.slot;
    });
    // Each thread takes a contiguous run of the queries, so it walks its own stretch of cells.
    const auto queries = static_cast<std::int64_t>(m_queries.size());
    const int threads = threadsForRegion(queries >= cParallelQueries ? m_threads : 1);
    if (m_threadFresh.size() < static_cast<std::size_t>(threads))
        m_threadFresh.resize(static_cast<std::size_t>(threads));
    m_queryThreads = threads;
    std::uint64_t candidates = 0;
#pragma omp parallel num_threads(threads) reduction(+ : candidates)
    {
        const int t = omp_get_thread_num();
        const int team = omp_get_num_threads();
        std::vector<std::uint64_t>& out = m_threadFresh[static_cast<std::size_t>(t)].value;
        out.clear();
        for (std::int64_t q = queries * t / team; q < queries * (t + 1) / team; ++q) {
            candidates += querySwept(m_queries[static_cast<std::size_t>(q)].slot, cells, rules, out);
        }
    }
    m_candidates += candidates;
    const auto parts = static_cast<std::size_t>(threads);
    std::size_t total = 0;
    for (std::size_t t = 0; t < parts; ++t) {
        const std::vector<std::uint64_t>& part = m_threadFresh[t].value;
        total += part.size();
        m_fresh.insert(m_fresh.end(), part.begin(), part.end());
    }
    shareGatheringCapacity(
        m_threadFresh, parts, [](auto& part) -> auto& { return part.value; }, total);
}

std::uint64_t IncrementalSweep::querySwept(std::uint32_t slot, const SweptCells& cells, const CellSweepRules& rules,
                                           std::vector<std::uint64_t>& out) const {
    const SapGrid& grid = *cells.grid;
    const BoxArraysView& view = rules.view;
    const int s = grid.sweepAxis;
    const float minS = view.min[s][slot], maxS = view.max[s][slot];
    const float minU = view.min[grid.uAxis][slot], maxU = view.max[grid.uAxis][slot];
    const float minV = view.min[grid.vAxis][slot], maxV = view.max[grid.vAxis][slot];
    const std::uint32_t group = view.group[slot], mask = view.mask[slot];
    const SapCellRange r = sapCellRange(grid, minU, maxU, minV, maxV);
    std::uint64_t candidates = 0;
    for (std::int32_t v = r.v0; v <= r.v1; ++v) {
        for (std::int32_t u = r.u0; u <= r.u1; ++u) {
            const std::uint32_t cell = sapCellIndex(grid, u, v);
            const std::uint32_t corner = sapCornerBits(r, u, v);
            const std::uint32_t first = cells.cellStart[cell], last = cells.cellStart[cell + 1];
            // Entries that may reach minS start at or after minS - widest (rounded down); the
            // fences, every cFenceStride-th entry's lower bound, find the block to scan from.
            double from = std::nextafter(static_cast<double>(minS) - cells.widestS[cell], -HUGE_VAL);
            if (std::isnan(from)) from = -HUGE_VAL;
            const float* fenceBegin = cells.fences + (first + cFenceStride - 1) / cFenceStride;
            const float* fenceEnd = cells.fences + (last + cFenceStride - 1) / cFenceStride;
            const float* fence = std::lower_bound(fenceBegin, fenceEnd, from, [](float value, double bound) {
                return static_cast<double>(value) < bound;
            });
            const std::uint32_t start =
                fence == fenceBegin ? first : static_cast<std::uint32_t>(fence - cells.fences - 1) * cFenceStride;
            for (const CellEntry* e = cells.entries + start; e != cells.entries + last && e->minS <= maxS; ++e) {
                // The swept entry holds the other box as the store does: test it here.
                if ((e->corner | corner) != cBothCorners || (m_flags[e->slot] & cMoving) != 0) continue;
                if (e->maxS < minS || e->maxU < minU || maxU < e->minU || e->maxV < minV || maxV < e->minV) continue;
                ++candidates;
                if (rules.filterGroups && !groupsCollide(group, mask, e->group, e->mask)) continue;
                if (rules.confirmBySlot &&
                    !(sapAcceptPair(view, slot, e->slot, false) && sapOwnsPair(rules.ownership, view, slot, e->slot))) {
                    continue;
                }
                out.push_back(pairKey(slot, e->slot));
            }
        }
    }
    for (std::size_t h = 0; h < cells.hugeCount; ++h) {
        const std::uint32_t other = cells.hugeSlots[h];
        if ((m_flags[other] & cMoving) != 0) continue;
        ++candidates;
        if (sapKeepsPair(view, rules.ownership, slot, other, rules.filterGroups)) out.push_back(pairKey(slot, other));
    }
    return candidates;
}

void IncrementalSweep::testPair(std::uint32_t a, std::uint32_t b, const CellSweepRules& rules) {
    ++m_candidates;
    if (sapKeepsPair(rules.view, rules.ownership, a, b, rules.filterGroups)) m_fresh.push_back(pairKey(a, b));
}

void IncrementalSweep::mergeInto(std::vector<std::uint64_t>& pairs, PairDeltas& deltas) {
    std::sort(m_fresh.begin(), m_fresh.end());
    // One pass: the pairs this update recomputed (both boxes in M, or one changed now) leave the
    // set for m_stale; the others are copied on, with the fresh pairs merged in among them.
    m_stale.clear();
    if (m_merged.size() < pairs.size() + m_fresh.size()) m_merged.resize(pairs.size() + m_fresh.size());
    std::size_t merged = 0, fresh = 0;
    for (std::uint64_t key : pairs) {
        const std::uint8_t a = m_flags[pairLow(key)], b = m_flags[pairHigh(key)];
        if ((a & b & cMoving) != 0 || ((a | b) & cChanged) != 0) {
            m_stale.push_back(key);
            continue;
        }
        while (fresh < m_fresh.size() && m_fresh[fresh] < key) m_merged[merged++] = m_fresh[fresh++];
        m_merged[merged++] = key;
    }
    while (fresh < m_fresh.size()) m_merged[merged++] = m_fresh[fresh++];
    m_merged.resize(merged);
    pairs.swap(m_merged);
    std::set_difference(m_fresh.begin(), m_fresh.end(), m_stale.begin(), m_stale.end(),
                        std::back_inserter(deltas.found));
    std::set_difference(m_stale.begin(), m_stale.end(), m_fresh.begin(), m_fresh.end(),
                        std::back_inserter(deltas.lost));
}

} // namespace bulletgpu
