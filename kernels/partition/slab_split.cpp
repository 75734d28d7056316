// SPDX-License-Identifier: Zlib
#include "kernels/partition/slab_split.h"

#include "kernels/common/box_store.h"

#include <algorithm>
#include <cmath>

namespace bulletgpu {

int SlabCuts::slabOf(float x) const {
    if (std::isnan(x)) return 0;
    return static_cast<int>(std::upper_bound(cuts.begin(), cuts.end(), x) - cuts.begin());
}

PairOwnership SlabCuts::ownership(int slab) const {
    PairOwnership window;
    if (cuts.empty()) return window;
    window.axis = axis;
    window.lo = slab == 0 ? -HUGE_VALF : cuts[static_cast<std::size_t>(slab - 1)];
    window.hi = slab == slabCount() - 1 ? HUGE_VALF : cuts[static_cast<std::size_t>(slab)];
    return window;
}

SlabSplitter::SlabSplitter(int slabs) : m_slabs(std::max(1, slabs)) { reset(); }

void SlabSplitter::reset() {
    m_placed = false;
    m_updates = 0;
    m_lastCut = 0;
    m_usableAtCut = 0;
    m_cuts.axis = 0;
    m_cuts.cuts.assign(static_cast<std::size_t>(m_slabs - 1), 0.0f);
}

bool SlabSplitter::update(const BoxStore& boxes, const std::vector<std::uint32_t>& loads) {
    ++m_updates;
    if (m_slabs == 1) {
        const bool first = !m_placed;
        m_placed = true;
        return first;
    }
    const std::uint32_t live = boxes.liveCount();
    bool recut = !m_placed || live > 2 * m_usableAtCut + 16 || 2 * live + 16 < m_usableAtCut;
    if (!recut && !loads.empty() && m_updates - m_lastCut > cSettleUpdates) {
        std::uint64_t total = 0;
        std::uint32_t fullest = 0;
        for (std::uint32_t load : loads) {
            total += load;
            fullest = std::max(fullest, load);
        }
        const double mean = static_cast<double>(total) / static_cast<double>(loads.size());
        recut = total > 0 && fullest > (1.0 + cImbalanceTolerance) * mean;
    }
    const bool checkAxis = !m_placed || m_updates % cAxisCheckPeriod == 0;
    if (!recut && !checkAxis) return false;

    takeSample(boxes);
    int axis = m_cuts.axis;
    if (checkAxis) {
        std::uint32_t straddlers[3];
        int best = 0;
        for (int a = 0; a < 3; ++a) {
            cutsOnAxis(a, straddlers[a]);
            if (straddlers[a] < straddlers[best]) best = a;
        }
        if (!m_placed) {
            axis = best;
        } else if (best != axis && 2 * straddlers[best] + 8 < straddlers[axis]) {
            axis = best;
            recut = true;
        }
    }
    if (!recut) return false;

    std::uint32_t straddlers = 0;
    SlabCuts next = cutsOnAxis(axis, straddlers);
    const bool moved = !m_placed || next.axis != m_cuts.axis || next.cuts != m_cuts.cuts;
    m_cuts = std::move(next);
    m_placed = true;
    m_lastCut = m_updates;
    m_usableAtCut = live;
    return moved;
}

void SlabSplitter::takeSample(const BoxStore& boxes) {
    for (int axis = 0; axis < 3; ++axis) {
        m_sampleMin[axis].clear();
        m_sampleMax[axis].clear();
    }
    const std::uint32_t slots = boxes.size();
    const std::uint32_t stride = std::max<std::uint32_t>(1, slots / cSampleSize);
    for (std::uint32_t slot = 0; slot < slots; slot += stride) {
        if (!boxes.isUsable(slot)) continue;
        for (int axis = 0; axis < 3; ++axis) {
            m_sampleMin[axis].push_back(boxes.minData(axis)[slot]);
            m_sampleMax[axis].push_back(boxes.maxData(axis)[slot]);
        }
    }
}

SlabCuts SlabSplitter::cutsOnAxis(int axis, std::uint32_t& straddlers) const {
    SlabCuts result;
    result.axis = axis;
    result.cuts.assign(static_cast<std::size_t>(m_slabs - 1), 0.0f);
    const std::vector<float>& lo = m_sampleMin[axis];
    const std::vector<float>& hi = m_sampleMax[axis];
    m_centres.clear();
    for (std::size_t i = 0; i < lo.size(); ++i) {
        const float centre = 0.5f * lo[i] + 0.5f * hi[i];
        if (std::isfinite(centre)) m_centres.push_back(centre);
    }
    straddlers = 0;
    if (m_centres.empty()) return result;
    std::sort(m_centres.begin(), m_centres.end());
    const std::size_t n = m_centres.size();
    for (int k = 1; k < m_slabs; ++k) {
        result.cuts[static_cast<std::size_t>(k - 1)] = m_centres[n * static_cast<std::size_t>(k) / m_slabs];
    }
    for (std::size_t i = 0; i < lo.size(); ++i) {
        straddlers += static_cast<std::uint32_t>(result.slabOf(hi[i]) - result.slabOf(lo[i]));
    }
    return result;
}

} // namespace bulletgpu
