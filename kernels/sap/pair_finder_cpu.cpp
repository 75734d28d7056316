// SPDX-License-Identifier: Zlib
#include "kernels/sap/pair_finder_cpu.h"

#include "kernels/common/aabb_ops.h"
#include "kernels/sap/sap_ops.h"

#include <omp.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <iterator>

namespace bulletgpu {
namespace {

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

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

PairFinderCpu::PairFinderCpu(int threads) : m_threads(threads > 0 ? threads : omp_get_max_threads()) {
    m_threadPairs.resize(static_cast<std::size_t>(m_threads));
}

std::string PairFinderCpu::description() const { return "CPU, " + std::to_string(m_threads) + " OpenMP threads"; }

void PairFinderCpu::reset() {
    m_pairs.clear();
    m_lastRevision = ~0ull;
}

void PairFinderCpu::update(BoxStore& boxes, bool filterGroups, PairDeltas& deltas) {
    deltas.found.clear();
    deltas.lost.clear();
    if (boxes.revision() == m_lastRevision && filterGroups == m_lastFilterGroups) {
        m_stats.skipped = true;
        boxes.clearDirty();
        return;
    }
    m_stats = PairFinderStats{};
    auto start = Clock::now();
    classifyAndSort(boxes);
    m_stats.classifyMs = millisecondsSince(start);

    start = Clock::now();
    bucketIntoCells(boxes);
    m_stats.sortMs = millisecondsSince(start);

    start = Clock::now();
    sweep(boxes, filterGroups);
    m_stats.sweepMs = millisecondsSince(start);

    start = Clock::now();
    diff(boxes.size(), deltas);
    m_stats.diffMs = millisecondsSince(start);

    m_lastRevision = boxes.revision();
    m_lastFilterGroups = filterGroups;
    boxes.clearDirty();
#if defined(BULLETGPU_VALIDATE)
    assert(validate());
#endif
}

void PairFinderCpu::classifyAndSort(const BoxStore& boxes) {
    const std::uint32_t slots = boxes.size();
    std::uint32_t usable = 0;
    for (std::uint32_t slot = 0; slot < slots; ++slot) usable += boxes.isUsable(slot) ? 1u : 0u;
    m_grid = chooseSapGrid(boxes, usable);

    if (m_sortKeys.size() < usable) {
        m_sortKeys.resize(usable);
        m_sortedSlots.resize(usable);
    }
    m_hugeSlots.clear();
    const float* minS = boxes.minData(m_grid.sweepAxis);
    const float* minU = boxes.minData(m_grid.uAxis);
    const float* maxU = boxes.maxData(m_grid.uAxis);
    const float* minV = boxes.minData(m_grid.vAxis);
    const float* maxV = boxes.maxData(m_grid.vAxis);
    std::uint32_t count = 0;
    for (std::uint32_t slot = 0; slot < slots; ++slot) {
        if (!boxes.isUsable(slot)) continue;
        const SapCellRange range = sapCellRange(m_grid, minU[slot], maxU[slot], minV[slot], maxV[slot]);
        if (sapIsHuge(m_grid, range)) {
            m_hugeSlots.push_back(slot);
            continue;
        }
        m_sortKeys[count] = orderedFloatKey(minS[slot]);
        m_sortedSlots[count] = slot;
        ++count;
    }
    m_sortKeys.resize(count);
    m_sortedSlots.resize(count);
    m_sorter.sortPairs(m_sortKeys, m_sortedSlots, count);
    m_stats.objects = usable;
    m_stats.hugeObjects = static_cast<std::uint32_t>(m_hugeSlots.size());
    m_stats.cells = m_grid.cellCount();
    m_stats.sweepAxis = m_grid.sweepAxis;
}

void PairFinderCpu::bucketIntoCells(const BoxStore& boxes) {
    const std::uint32_t cells = m_grid.cellCount();
    m_cellStart.assign(cells + 1, 0);
    const float* minS = boxes.minData(m_grid.sweepAxis);
    const float* maxS = boxes.maxData(m_grid.sweepAxis);
    const float* minU = boxes.minData(m_grid.uAxis);
    const float* maxU = boxes.maxData(m_grid.uAxis);
    const float* minV = boxes.minData(m_grid.vAxis);
    const float* maxV = boxes.maxData(m_grid.vAxis);

    for (std::uint32_t slot : m_sortedSlots) {
        const SapCellRange r = sapCellRange(m_grid, minU[slot], maxU[slot], minV[slot], maxV[slot]);
        for (std::int32_t v = r.v0; v <= r.v1; ++v) {
            for (std::int32_t u = r.u0; u <= r.u1; ++u) ++m_cellStart[sapCellIndex(m_grid, u, v) + 1];
        }
    }
    for (std::uint32_t cell = 0; cell < cells; ++cell) m_cellStart[cell + 1] += m_cellStart[cell];
    const std::uint32_t entries = m_cellStart[cells];
    m_stats.entries = entries;
    for (auto* array : {&m_entryMinS, &m_entryMaxS, &m_entryMinU, &m_entryMaxU, &m_entryMinV, &m_entryMaxV}) {
        if (array->size() < entries) array->resize(entries);
    }
    if (m_entrySlot.size() < entries) m_entrySlot.resize(entries);

    m_cellFill.assign(m_cellStart.begin(), m_cellStart.end() - 1);
    for (std::uint32_t slot : m_sortedSlots) {
        const SapCellRange r = sapCellRange(m_grid, minU[slot], maxU[slot], minV[slot], maxV[slot]);
        for (std::int32_t v = r.v0; v <= r.v1; ++v) {
            for (std::int32_t u = r.u0; u <= r.u1; ++u) {
                const std::uint32_t at = m_cellFill[sapCellIndex(m_grid, u, v)]++;
                m_entryMinS[at] = minS[slot];
                m_entryMaxS[at] = maxS[slot];
                m_entryMinU[at] = minU[slot];
                m_entryMaxU[at] = maxU[slot];
                m_entryMinV[at] = minV[slot];
                m_entryMaxV[at] = maxV[slot];
                m_entrySlot[at] = slot;
            }
        }
    }
}

void PairFinderCpu::sweep(const BoxStore& boxes, bool filterGroups) {
    const BoxArraysView view = viewOf(boxes);
    const std::int64_t cells = m_grid.cellCount();
    const std::int64_t normals = static_cast<std::int64_t>(m_sortedSlots.size());
    const std::int64_t huge = static_cast<std::int64_t>(m_hugeSlots.size());
    std::uint64_t candidates = 0;

#pragma omp parallel num_threads(m_threads) reduction(+ : candidates)
    {
        std::vector<std::uint64_t>& out = m_threadPairs[static_cast<std::size_t>(omp_get_thread_num())];
        out.clear();

        // Bucketed boxes: sweep each cell; a pair is kept only by its reference cell.
#pragma omp for schedule(dynamic, 64) nowait
        for (std::int64_t cell = 0; cell < cells; ++cell) {
            const std::uint32_t end = m_cellStart[cell + 1];
            for (std::uint32_t i = m_cellStart[cell]; i < end; ++i) {
                const float maxS = m_entryMaxS[i];
                const float minU = m_entryMinU[i], maxU = m_entryMaxU[i];
                const float minV = m_entryMinV[i], maxV = m_entryMaxV[i];
                for (std::uint32_t j = i + 1; j < end && m_entryMinS[j] <= maxS; ++j) {
                    ++candidates;
                    if (!intervalsOverlap(minU, maxU, m_entryMinU[j], m_entryMaxU[j]) ||
                        !intervalsOverlap(minV, maxV, m_entryMinV[j], m_entryMaxV[j])) {
                        continue;
                    }
                    if (sapReferenceCell(m_grid, minU, minV, m_entryMinU[j], m_entryMinV[j]) !=
                        static_cast<std::uint32_t>(cell)) {
                        continue;
                    }
                    const std::uint32_t a = m_entrySlot[i], b = m_entrySlot[j];
                    if (sapAcceptPair(view, a, b, filterGroups)) out.push_back(pairKey(a, b));
                }
            }
        }

        // Huge boxes against every bucketed box, then against each other.
        if (huge > 0) {
#pragma omp for schedule(static) nowait
            for (std::int64_t i = 0; i < normals; ++i) {
                const std::uint32_t a = m_sortedSlots[static_cast<std::size_t>(i)];
                for (std::uint32_t b : m_hugeSlots) {
                    ++candidates;
                    if (sapOverlapFloat(view, a, b) && sapAcceptPair(view, a, b, filterGroups)) {
                        out.push_back(pairKey(a, b));
                    }
                }
            }
#pragma omp for schedule(dynamic, 16) nowait
            for (std::int64_t i = 0; i < huge; ++i) {
                const std::uint32_t a = m_hugeSlots[static_cast<std::size_t>(i)];
                for (std::int64_t j = i + 1; j < huge; ++j) {
                    const std::uint32_t b = m_hugeSlots[static_cast<std::size_t>(j)];
                    ++candidates;
                    if (sapOverlapFloat(view, a, b) && sapAcceptPair(view, a, b, filterGroups)) {
                        out.push_back(pairKey(a, b));
                    }
                }
            }
        }
    }
    m_stats.candidates = candidates;
}

void PairFinderCpu::diff(std::uint32_t slotCount, PairDeltas& deltas) {
    std::size_t total = 0;
    for (const auto& part : m_threadPairs) total += part.size();
    m_newPairs.resize(total);
    auto at = m_newPairs.begin();
    for (const auto& part : m_threadPairs) at = std::copy(part.begin(), part.end(), at);
    const int bits = bitWidth(slotCount == 0 ? 0 : slotCount - 1);
    m_sorter.sortKeys64(m_newPairs, total, bits, bits);

    std::set_difference(m_newPairs.begin(), m_newPairs.end(), m_pairs.begin(), m_pairs.end(),
                        std::back_inserter(deltas.found));
    std::set_difference(m_pairs.begin(), m_pairs.end(), m_newPairs.begin(), m_newPairs.end(),
                        std::back_inserter(deltas.lost));
    m_pairs.swap(m_newPairs);
    m_stats.pairs = m_pairs.size();
}

void PairFinderCpu::applyEdits(const std::vector<std::uint64_t>& added, const std::vector<std::uint64_t>& removed) {
    if (added.empty() && removed.empty()) return;
    m_lastRevision = ~0ull; // the next update recomputes, so refused pairs are offered again
    m_newPairs.clear();
    std::set_difference(m_pairs.begin(), m_pairs.end(), removed.begin(), removed.end(), std::back_inserter(m_newPairs));
    m_pairs.clear();
    std::set_union(m_newPairs.begin(), m_newPairs.end(), added.begin(), added.end(), std::back_inserter(m_pairs));
}

bool PairFinderCpu::validate() const {
    for (std::size_t i = 1; i < m_pairs.size(); ++i) {
        if (m_pairs[i - 1] >= m_pairs[i]) return false;
    }
    for (std::uint32_t cell = 0; cell < m_grid.cellCount(); ++cell) {
        for (std::uint32_t i = m_cellStart[cell] + 1; i < m_cellStart[cell + 1]; ++i) {
            if (!(m_entryMinS[i - 1] <= m_entryMinS[i])) return false;
        }
    }
    return true;
}

std::unique_ptr<PairFinder> createCpuPairFinder(int threads) { return std::make_unique<PairFinderCpu>(threads); }

} // namespace bulletgpu
