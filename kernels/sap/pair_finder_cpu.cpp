// SPDX-License-Identifier: Zlib
#include "kernels/sap/pair_finder_cpu.h"
#include "kernels/common/stopwatch.h"

#include "kernels/common/aabb_ops.h"
#include "kernels/common/omp_team.h"
#include "kernels/common/thread_buffers.h"
#include "kernels/sap/sap_ops.h"

#include <omp.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <iterator>

namespace bulletgpu {
namespace {

/// How far ahead the gathers in sweep order prefetch (they read boxes in random order).
constexpr std::int64_t cPrefetchDistance = 16;

BoxArraysView viewOf(const BoxStore& boxes) {
    BoxArraysView view{};
    for (int axis = 0; axis < 3; ++axis) {
        view.min[axis] = boxes.minData(axis);
        view.max[axis] = boxes.maxData(axis);
        view.exactMin[axis] = boxes.exactMinData(axis);
        view.exactMax[axis] = boxes.exactMaxData(axis);
    }
    view.group = boxes.groupData();
    view.mask = boxes.maskData();
    return view;
}

} // namespace

PairFinderCpu::PairFinderCpu(int threads)
    : m_threads(threads > 0 ? threads : omp_get_max_threads()), m_tuner(m_threads), m_incremental(m_threads) {
    m_threadPairs.resize(static_cast<std::size_t>(m_threads));
    m_threadLanes.resize(static_cast<std::size_t>(m_threads));
    m_threadKeys.resize(static_cast<std::size_t>(m_threads));
}

std::string PairFinderCpu::description() const {
    return "CPU backend, " + std::to_string(m_threads) + " OpenMP thread" + (m_threads == 1 ? "" : "s");
}

void PairFinderCpu::reset() {
    m_gridChooser.reset();
    m_cellsFilled = false;
    m_pairs.clear();
    m_gate.open();
    m_sweptCellsValid = false;
}

void PairFinderCpu::setOwnership(const PairOwnership& window) {
    if (window == m_ownership) return;
    m_ownership = window;
    m_gate.open();
    m_sweptCellsValid = false;
}

CellSweepRules PairFinderCpu::sweepRules(const BoxStore& boxes, bool filterGroups) const {
    CellSweepRules rules;
    rules.filterGroups = filterGroups;
    rules.view = viewOf(boxes);
    rules.confirmBySlot = rules.view.exactMin[0] != nullptr || m_ownership.axis >= 0;
    rules.ownership = m_ownership;
    return rules;
}

void PairFinderCpu::indexSweptCells() {
    if (m_sweptCellsIndexed) return;
    const std::uint32_t cells = m_grid.cellCount();
    m_cellWidestS.resize(cells);
    m_fences.resize((m_entries.size() + IncrementalSweep::cFenceStride - 1) / IncrementalSweep::cFenceStride);
#pragma omp parallel for schedule(static) num_threads(threadsForRegion(m_threads))
    for (std::int64_t cell = 0; cell < static_cast<std::int64_t>(cells); ++cell) {
        const std::uint32_t first = m_cellStart[static_cast<std::size_t>(cell)];
        const std::uint32_t count = m_cellStart[static_cast<std::size_t>(cell) + 1] - first;
        m_cellWidestS[static_cast<std::size_t>(cell)] = IncrementalSweep::widestExtent(m_entries.data() + first, count);
        IncrementalSweep::writeFences(m_entries.data(), first, count, m_fences.data());
    }
    m_sweptCellsIndexed = true;
}

bool PairFinderCpu::updateIncrementally(const BoxStore& boxes, bool filterGroups, PairDeltas& deltas) {
    if (!m_sweptCellsValid || filterGroups != m_sweptFilterGroups) return false;
    const auto start = Clock::now();
    if (!m_incremental.admit(boxes)) return false;
    indexSweptCells();
    SweptCells cells;
    cells.grid = &m_grid;
    cells.entries = m_entries.data();
    cells.cellStart = m_cellStart.data();
    cells.widestS = m_cellWidestS.data();
    cells.fences = m_fences.data();
    cells.hugeSlots = m_hugeSlots.data();
    cells.hugeCount = m_hugeSlots.size();
    m_incremental.update(boxes, cells, sweepRules(boxes, filterGroups), m_pairs, deltas);
    const PairFinderStats swept = m_stats;
    m_stats = PairFinderStats{};
    m_stats.objects = swept.objects;
    m_stats.hugeObjects = swept.hugeObjects;
    m_stats.cells = swept.cells;
    m_stats.entries = swept.entries;
    m_stats.sweepAxis = swept.sweepAxis;
    m_stats.movingObjects = m_incremental.movingCount();
    m_stats.threads = m_incremental.queryThreads();
    m_stats.candidates = m_incremental.candidates();
    m_stats.pairs = m_pairs.size();
    m_stats.sweepMs = millisecondsSince(start);
    return true;
}

void PairFinderCpu::update(BoxStore& boxes, bool filterGroups, PairDeltas& deltas) {
    if (m_gate.skip(boxes, filterGroups, deltas, m_stats)) return;
    if (updateIncrementally(boxes, filterGroups, deltas)) {
        m_gate.record(boxes, filterGroups);
        boxes.clearDirty();
#if defined(BULLETGPU_VALIDATE)
        assert(validate());
#endif
        return;
    }
    m_stats = PairFinderStats{};
    auto start = Clock::now();
    const bool refill = classify(boxes);
    m_stats.classifyMs = millisecondsSince(start);

    start = Clock::now();
    if (refill) {
        refillCells();
    } else {
        // classify() wrote the sort keys when there were no cells to refill (m_cellsFilled false).
        sortBySweepKey(boxes.size(), !m_cellsFilled);
        bucketIntoCells();
    }
    m_stats.cellsRefilled = refill;
    m_stats.sortMs = millisecondsSince(start);
    m_cellsFilled = true;

    start = Clock::now();
    const bool lostEarly = m_lostSink != nullptr && m_ownership.axis < 0;
    if (lostEarly) findLost(boxes, filterGroups);
    const double findLostMs = millisecondsSince(start);

    start = Clock::now();
    sweep(boxes, filterGroups, lostEarly);
    m_stats.sweepMs = millisecondsSince(start);

    start = Clock::now();
    diff(boxes.size(), deltas, lostEarly);
    m_stats.diffMs = findLostMs + millisecondsSince(start);
    if (boxes.size() >= cParallelThreshold) {
        m_tuner.record(m_stats.classifyMs + m_stats.sortMs + m_stats.sweepMs + m_stats.diffMs);
    }
    m_stats.threads = m_activeThreads;
    m_incremental.restart();
    m_sweptCellsValid = true;
    m_sweptCellsIndexed = false;
    m_sweptFilterGroups = filterGroups;

    m_gate.record(boxes, filterGroups);
    boxes.clearDirty();
#if defined(BULLETGPU_VALIDATE)
    assert(validate());
#endif
}

bool PairFinderCpu::classify(const BoxStore& boxes) {
    const std::int64_t slots = boxes.size();
    // Small scenes run on one thread: waking a team costs more than the work, and a team whose
    // threads share cores with other programs waits at every barrier.
    m_activeThreads = threadsForRegion(slots >= cParallelThreshold ? m_tuner.threadsForNextUpdate() : 1);
    const SapGrid previousGrid = m_grid;
    m_grid = m_gridChooser.choose(boxes, boxes.liveCount());
    // The store never shrinks, so every slot of the last fill is still a slot.
    m_cellsFilled = m_cellsFilled && m_grid == previousGrid && m_cells.size() <= static_cast<std::size_t>(slots);
    const bool findMoves = m_cellsFilled;

    // One pass, indexed by slot: each slot's box and cells (cNotBucketedBox and cNoCells for free,
    // unusable and huge ones), and the boxes whose cells changed. Without a fill to start from,
    // the sort keys too: bucketed boxes get their sweep key, every other slot the largest key, so
    // the stable sort puts the bucketed boxes first, in sweep order and, on ties, in slot order.
    const auto filled = static_cast<std::int64_t>(m_cells.size());
    m_boxes.resize(static_cast<std::size_t>(slots));
    m_cells.resize(static_cast<std::size_t>(slots));
    if (!findMoves) {
        m_sortKeys.resize(static_cast<std::size_t>(slots));
        m_sortOrder.resize(static_cast<std::size_t>(slots));
    }
    const float* minS = boxes.minData(m_grid.sweepAxis);
    const float* maxS = boxes.maxData(m_grid.sweepAxis);
    const float* minU = boxes.minData(m_grid.uAxis);
    const float* maxU = boxes.maxData(m_grid.uAxis);
    const float* minV = boxes.minData(m_grid.vAxis);
    const float* maxV = boxes.maxData(m_grid.vAxis);
    const std::uint32_t* group = boxes.groupData();
    const std::uint32_t* mask = boxes.maskData();
    const int threads = m_activeThreads;
    m_threadHuge.resize(static_cast<std::size_t>(threads));
    for (auto& huge : m_threadHuge) huge.clear();
    m_refill.beginUpdate(threads);
    std::uint32_t usable = 0;
    std::uint32_t normals = 0;
#pragma omp parallel num_threads(threads) reduction(+ : usable, normals)
    {
        const int t = omp_get_thread_num();
        const int team = omp_get_num_threads();
        const std::int64_t begin = slots * t / team;
        const std::int64_t end = slots * (t + 1) / team;
        std::vector<std::uint32_t>& huge = m_threadHuge[static_cast<std::size_t>(t)];
        std::vector<MovedBox>& moved = m_refill.moved(t);
        for (std::int64_t s = begin; s < end; ++s) {
            const auto slot = static_cast<std::uint32_t>(s);
            SapCellRange& cellsOfSlot = m_cells[slot];
            const SapCellRange before = s < filled ? cellsOfSlot : cNoCells;
            SapCellRange cells = cNoCells;
            SlotBox box = cNotBucketedBox;
            if (boxes.isUsable(slot)) {
                ++usable;
                const SapCellRange range = sapCellRange(m_grid, minU[slot], maxU[slot], minV[slot], maxV[slot]);
                if (sapIsHuge(m_grid, range)) {
                    huge.push_back(slot);
                } else {
                    cells = range;
                    box = SlotBox{minS[slot], maxS[slot], minU[slot],  maxU[slot],
                                  minV[slot], maxV[slot], group[slot], mask[slot]};
                    ++normals;
                }
            }
            m_boxes[slot] = box;
            cellsOfSlot = cells;
            if (findMoves) {
                if (!sameCells(before, cells)) moved.push_back(MovedBox{slot, before, cells});
            } else {
                m_sortOrder[slot] = slot;
                m_sortKeys[slot] = sameCells(cells, cNoCells) ? cNotBucketed : orderedFloatKey(minS[slot]);
            }
        }
    }
    m_hugeSlots.clear();
    for (const auto& huge : m_threadHuge) m_hugeSlots.insert(m_hugeSlots.end(), huge.begin(), huge.end());
    m_bucketedCount = normals;
    m_stats.objects = usable;
    m_stats.hugeObjects = static_cast<std::uint32_t>(m_hugeSlots.size());
    m_stats.cells = m_grid.cellCount();
    m_stats.sweepAxis = m_grid.sweepAxis;
    return findMoves && m_refill.movedCount() <= normals / cRefillMovedDivisor;
}

void PairFinderCpu::sortBySweepKey(std::uint32_t slots, bool keysWritten) {
    if (!keysWritten) {
        m_sortKeys.resize(slots);
        m_sortOrder.resize(slots);
#pragma omp parallel for schedule(static) num_threads(m_activeThreads)
        for (std::int64_t s = 0; s < static_cast<std::int64_t>(slots); ++s) {
            const SlotBox& box = m_boxes[static_cast<std::size_t>(s)];
            m_sortOrder[static_cast<std::size_t>(s)] = static_cast<std::uint32_t>(s);
            m_sortKeys[static_cast<std::size_t>(s)] = box.bucketed() ? orderedFloatKey(box.minS) : cNotBucketed;
        }
    }
    m_sorter.sortPairs(m_sortKeys, m_sortOrder, slots, m_activeThreads);
}

void PairFinderCpu::refillCells() {
    m_entrySlots.swap(m_previousEntrySlots);
    m_cellStart.swap(m_previousCellStart);
    m_refill.refill(m_grid, m_boxes.data(), m_previousEntrySlots, m_previousCellStart, m_entries, m_entrySlots,
                    m_cellStart, m_activeThreads);
    m_stats.entries = m_cellStart[m_grid.cellCount()];
}

void PairFinderCpu::bucketIntoCells() {
    // Threads take contiguous runs of the sweep order; counting per thread and per cell lets
    // each thread scatter its run into its own part of every cell, so each cell stays in
    // sweep order.
    const std::uint32_t cells = m_grid.cellCount();
    const int threads = m_activeThreads;
    const std::int64_t count = m_bucketedCount;
    m_threadCellOffsets.resize(static_cast<std::size_t>(threads));
    m_cellStart.assign(cells + 1, 0);
    m_sortedBoxes.resize(static_cast<std::size_t>(count));
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num();
        const int team = omp_get_num_threads();
        const std::int64_t begin = count * t / team;
        const std::int64_t end = count * (t + 1) / team;
        std::vector<std::uint32_t>& offsets = m_threadCellOffsets[static_cast<std::size_t>(t)];
        offsets.assign(cells, 0);
        // Gather the boxes into sweep order (the one random-order pass) while counting.
        for (std::int64_t k = begin; k < end; ++k) {
            if (k + cPrefetchDistance < end) {
                __builtin_prefetch(&m_boxes[m_sortOrder[static_cast<std::size_t>(k + cPrefetchDistance)]]);
            }
            const SlotBox& box = m_sortedBoxes[static_cast<std::size_t>(k)] =
                m_boxes[m_sortOrder[static_cast<std::size_t>(k)]];
            const SapCellRange r = box.cellsOn(m_grid);
            for (std::int32_t v = r.v0; v <= r.v1; ++v) {
                for (std::int32_t u = r.u0; u <= r.u1; ++u) ++offsets[sapCellIndex(m_grid, u, v)];
            }
        }
#pragma omp barrier
#pragma omp single
        {
            // Exclusive offsets: cell by cell, thread by thread.
            std::uint32_t running = 0;
            for (std::uint32_t cell = 0; cell < cells; ++cell) {
                m_cellStart[cell] = running;
                for (int k = 0; k < team; ++k) {
                    std::uint32_t& offset = m_threadCellOffsets[static_cast<std::size_t>(k)][cell];
                    const std::uint32_t n = offset;
                    offset = running;
                    running += n;
                }
            }
            m_cellStart[cells] = running;
            m_entries.resize(running);
            m_entrySlots.resize(running);
        }
        for (std::int64_t k = begin; k < end; ++k) {
            const SlotBox& box = m_sortedBoxes[static_cast<std::size_t>(k)];
            const std::uint32_t slot = m_sortOrder[static_cast<std::size_t>(k)];
            const SapCellRange r = box.cellsOn(m_grid);
            for (std::int32_t v = r.v0; v <= r.v1; ++v) {
                for (std::int32_t u = r.u0; u <= r.u1; ++u) {
                    const std::uint32_t at = offsets[sapCellIndex(m_grid, u, v)]++;
                    m_entries[at] = box.entryIn(slot, r, u, v);
                    m_entrySlots[at] = slot;
                }
            }
        }
    }
    m_stats.entries = m_cellStart[cells];
}

bool PairFinderCpu::stillPaired(const BoxStore& boxes, const BoxArraysView& view, std::uint32_t a, std::uint32_t b,
                                bool filterGroups) const {
    const SlotBox& boxA = m_boxes[a];
    const SlotBox& boxB = m_boxes[b];
    if (!boxA.bucketed() || !boxB.bucketed()) {
        // Huge, unusable or freed: as the huge-box tests and the brute force decide.
        return boxes.isUsable(a) && boxes.isUsable(b) && sapKeepsPair(view, m_ownership, a, b, filterGroups);
    }
    // Two bucketed boxes: the cell sweep's tests, on the same floats.
    if (!(intervalsOverlap(boxA.minS, boxA.maxS, boxB.minS, boxB.maxS) &&
          intervalsOverlap(boxA.minU, boxA.maxU, boxB.minU, boxB.maxU) &&
          intervalsOverlap(boxA.minV, boxA.maxV, boxB.minV, boxB.maxV))) {
        return false;
    }
    if (filterGroups && !groupsCollide(boxA.group, boxA.mask, boxB.group, boxB.mask)) return false;
    return view.exactMin[0] == nullptr || sapAcceptPair(view, a, b, false);
}

void PairFinderCpu::findLost(const BoxStore& boxes, bool filterGroups) {
    const BoxArraysView view = viewOf(boxes);
    const auto count = static_cast<std::int64_t>(m_pairs.size());
    for (auto& lost : m_threadKeys) lost.value.clear();
#pragma omp parallel num_threads(m_activeThreads)
    {
        const int t = omp_get_thread_num();
        const int team = omp_get_num_threads();
        const std::int64_t begin = count * t / team;
        const std::int64_t end = count * (t + 1) / team;
        std::vector<std::uint64_t>& lost = m_threadKeys[static_cast<std::size_t>(t)].value;
        // The pairs are sorted by their lower slot, so only the higher one is read at random.
        for (std::int64_t k = begin; k < end; ++k) {
            if (k + cPrefetchDistance < end) {
                __builtin_prefetch(&m_boxes[pairHigh(m_pairs[static_cast<std::size_t>(k + cPrefetchDistance)])]);
            }
            const std::uint64_t key = m_pairs[static_cast<std::size_t>(k)];
            if (!stillPaired(boxes, view, pairLow(key), pairHigh(key), filterGroups)) lost.push_back(key);
        }
    }
    // Contiguous runs of the sorted set, in thread order: the lost pairs come out sorted.
    m_lost.clear();
    for (const auto& lost : m_threadKeys) m_lost.insert(m_lost.end(), lost.value.begin(), lost.value.end());
}

void PairFinderCpu::sweep(const BoxStore& boxes, bool filterGroups, bool handLost) {
    const BoxArraysView view = viewOf(boxes);
    const std::int64_t cells = m_grid.cellCount();
    const auto slots = static_cast<std::int64_t>(m_cells.size());
    const std::int64_t huge = static_cast<std::int64_t>(m_hugeSlots.size());
    std::uint64_t candidates = 0;
    const CellSweepRules rules = sweepRules(boxes, filterGroups);

    for (auto& part : m_threadPairs) part.value.count = 0;
#pragma omp parallel num_threads(m_activeThreads) reduction(+ : candidates)
    {
        const auto thread = static_cast<std::size_t>(omp_get_thread_num());
        SweepOutput& out = m_threadPairs[thread].value;
        CellLanes& lanes = m_threadLanes[thread].value;

        // The caller's work on the lost pairs runs on its own thread while the others take
        // cells; it takes what cells are left when it is done.
#pragma omp master
        {
            if (handLost) m_lostSink->takeLost(m_lost);
        }

        // Bucketed boxes: sweep each cell; a pair is kept only by its reference cell.
#pragma omp for schedule(dynamic, 16) nowait
        for (std::int64_t cell = 0; cell < cells; ++cell) {
            const std::uint32_t first = m_cellStart[cell];
            candidates += sweepCell(m_entries.data() + first, m_cellStart[cell + 1] - first, rules, lanes, out);
        }

        // Huge boxes against every bucketed box, then against each other.
        if (huge > 0) {
#pragma omp for schedule(static) nowait
            for (std::int64_t s = 0; s < slots; ++s) {
                const auto a = static_cast<std::uint32_t>(s);
                if (sameCells(m_cells[a], cNoCells)) continue;
                for (std::uint32_t b : m_hugeSlots) {
                    ++candidates;
                    if (sapKeepsPair(view, m_ownership, a, b, filterGroups)) out.push(pairKey(a, b));
                }
            }
#pragma omp for schedule(dynamic, 16) nowait
            for (std::int64_t i = 0; i < huge; ++i) {
                const std::uint32_t a = m_hugeSlots[static_cast<std::size_t>(i)];
                for (std::int64_t j = i + 1; j < huge; ++j) {
                    const std::uint32_t b = m_hugeSlots[static_cast<std::size_t>(j)];
                    ++candidates;
                    if (sapKeepsPair(view, m_ownership, a, b, filterGroups)) out.push(pairKey(a, b));
                }
            }
        }
    }
    m_stats.candidates = candidates;
    // Cells go to whichever thread is free (thread_buffers.h): every thread's scratch gets room
    // for the largest cell any swept, and its pair list the gathering room of this sweep.
    std::size_t pairs = 0, largestShare = 0, cellRoom = 0;
    for (const auto& part : m_threadPairs) {
        pairs += part.value.count;
        largestShare = std::max(largestShare, part.value.count);
    }
    // A group of lanes is written before its hits are counted: room for one group more.
    const std::size_t pairRoom = gatheringRoom(largestShare, pairs) + CellLanes::cLanes;
    for (auto& part : m_threadPairs) {
        if (part.value.keys.size() < pairRoom) part.value.keys.resize(pairRoom);
    }
    for (const auto& lanes : m_threadLanes) cellRoom = std::max(cellRoom, lanes.value.room());
    for (auto& lanes : m_threadLanes) lanes.value.makeRoom(cellRoom);
}

void PairFinderCpu::diff(std::uint32_t slotCount, PairDeltas& deltas, bool lostFound) {
    const auto parts = static_cast<std::int64_t>(m_threadPairs.size());
    m_partStart.resize(static_cast<std::size_t>(parts) + 1);
    m_partStart[0] = 0;
    for (std::int64_t p = 0; p < parts; ++p) {
        m_partStart[static_cast<std::size_t>(p) + 1] =
            m_partStart[static_cast<std::size_t>(p)] + m_threadPairs[static_cast<std::size_t>(p)].value.count;
    }
    const std::size_t total = m_partStart.back();
    m_newPairs.resize(total);
#pragma omp parallel for schedule(static) num_threads(m_activeThreads)
    for (std::int64_t p = 0; p < parts; ++p) {
        const SweepOutput& part = m_threadPairs[static_cast<std::size_t>(p)].value;
        std::copy(part.keys.begin(), part.keys.begin() + static_cast<std::ptrdiff_t>(part.count),
                  m_newPairs.begin() + static_cast<std::ptrdiff_t>(m_partStart[static_cast<std::size_t>(p)]));
    }
    const int bits = bitWidth(slotCount == 0 ? 0 : slotCount - 1);
    m_sorter.sortKeys64(m_newPairs, total, bits, bits, m_activeThreads);

    if (lostFound) {
        findFound(deltas.found);
        deltas.lost.assign(m_lost.begin(), m_lost.end());
        deltas.lostTaken = true;
#if defined(BULLETGPU_VALIDATE)
        assert(lostIsDifference() && "the lost pairs found before the sweep are not the ones it lost");
#endif
    } else {
        // The found and the lost pairs are two independent merges.
#pragma omp parallel sections num_threads(std::min(m_activeThreads, 2))
        {
#pragma omp section
            std::set_difference(m_newPairs.begin(), m_newPairs.end(), m_pairs.begin(), m_pairs.end(),
                                std::back_inserter(deltas.found));
#pragma omp section
            std::set_difference(m_pairs.begin(), m_pairs.end(), m_newPairs.begin(), m_newPairs.end(),
                                std::back_inserter(deltas.lost));
        }
    }
    m_pairs.swap(m_newPairs);
    m_stats.pairs = m_pairs.size();
}

void PairFinderCpu::findFound(std::vector<std::uint64_t>& found) {
    // Each thread merges a run of the new set with the run of the last set between the same keys.
    const auto total = static_cast<std::int64_t>(m_newPairs.size());
    for (auto& keys : m_threadKeys) keys.value.clear();
#pragma omp parallel num_threads(m_activeThreads)
    {
        const int t = omp_get_thread_num();
        const int team = omp_get_num_threads();
        const auto begin = m_newPairs.begin() + total * t / team;
        const auto end = m_newPairs.begin() + total * (t + 1) / team;
        const auto lastBegin =
            begin == m_newPairs.end() ? m_pairs.end() : std::lower_bound(m_pairs.begin(), m_pairs.end(), *begin);
        const auto lastEnd = end == m_newPairs.end() ? m_pairs.end() : std::lower_bound(lastBegin, m_pairs.end(), *end);
        std::vector<std::uint64_t>& keys = m_threadKeys[static_cast<std::size_t>(t)].value;
        std::set_difference(begin, end, lastBegin, lastEnd, std::back_inserter(keys));
    }
    for (const auto& keys : m_threadKeys) found.insert(found.end(), keys.value.begin(), keys.value.end());
}

void PairFinderCpu::applyEdits(const std::vector<std::uint64_t>& added, const std::vector<std::uint64_t>& removed) {
    if (added.empty() && removed.empty()) return;
    m_gate.open(); // the next update recomputes, so refused pairs are offered again
    for (const auto* keys : {&added, &removed}) {
        for (std::uint64_t key : *keys) {
            m_incremental.touch(pairLow(key));
            m_incremental.touch(pairHigh(key));
        }
    }
    m_newPairs.clear();
    std::set_difference(m_pairs.begin(), m_pairs.end(), removed.begin(), removed.end(), std::back_inserter(m_newPairs));
    m_pairs.clear();
    std::set_union(m_newPairs.begin(), m_newPairs.end(), added.begin(), added.end(), std::back_inserter(m_pairs));
}

bool PairFinderCpu::lostIsDifference() const {
    auto lost = m_lost.begin();
    auto now = m_newPairs.begin();
    for (const std::uint64_t key : m_pairs) {
        while (now != m_newPairs.end() && *now < key) ++now;
        if (now != m_newPairs.end() && *now == key) continue;
        if (lost == m_lost.end() || *lost != key) return false;
        ++lost;
    }
    return lost == m_lost.end();
}

bool PairFinderCpu::validate() const {
    for (std::size_t i = 1; i < m_pairs.size(); ++i) {
        if (m_pairs[i - 1] >= m_pairs[i]) return false;
    }
    if (!m_cellsFilled) return true;
    // Each bucketed box is in exactly its cells, as itself; each cell in sweep order.
    std::uint64_t expectedEntries = 0;
    for (const SapCellRange& cells : m_cells) expectedEntries += cells.count();
    if (expectedEntries != m_cellStart[m_grid.cellCount()]) return false;
    for (std::uint32_t cell = 0; cell < m_grid.cellCount(); ++cell) {
        const std::int32_t u = sapCellColumn(m_grid, cell);
        const std::int32_t v = sapCellRow(m_grid, cell);
        for (std::uint32_t i = m_cellStart[cell]; i < m_cellStart[cell + 1]; ++i) {
            const CellEntry& entry = m_entries[i];
            if (entry.slot >= m_boxes.size() || m_entrySlots[i] != entry.slot) return false;
            const SlotBox& box = m_boxes[entry.slot];
            const SapCellRange& cells = m_cells[entry.slot];
            if (!box.bucketed() || !sameCells(box.cellsOn(m_grid), cells)) return false;
            if (!coversCell(cells, u, v) || entry.corner != sapCornerBits(cells, u, v)) return false;
            if (entry.minS != box.minS || entry.maxU != box.maxU || entry.mask != box.mask) return false;
            if (i > m_cellStart[cell] && !(m_entries[i - 1].minS <= entry.minS)) return false;
        }
    }
    return true;
}

std::unique_ptr<PairFinder> createCpuPairFinder(int threads) { return std::make_unique<PairFinderCpu>(threads); }

} // namespace bulletgpu
