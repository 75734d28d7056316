// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/aabb_ops.h"
#include "kernels/common/host_device.h"

#include <cmath>
#include <cstdint>

namespace bulletgpu {

/// Non-owning view of a box store's arrays (host or device pointers), passed by value.
struct BoxArraysView {
    const float* min[3];        ///< Lower bounds per axis, rounded down to float.
    const float* max[3];        ///< Upper bounds per axis, rounded up to float.
    const double* exactMin[3];  ///< Exact lower bounds, or null when not kept.
    const double* exactMax[3];  ///< Exact upper bounds, or null when not kept.
    const std::uint32_t* group; ///< Collision filter groups.
    const std::uint32_t* mask;  ///< Collision filter masks.
};

/// Which overlapping pairs a finder keeps when the scene is split into slabs along one axis
/// (PartitionedPairFinder): only those whose reference point, the larger of the two boxes'
/// lower bounds on the split axis, lies in [lo, hi). Both boxes of an overlapping pair contain
/// that point, so the one slab that holds it reports the pair. An infinite hi is inclusive.
struct PairOwnership {
    int axis = -1;         ///< Split axis; -1 keeps every pair.
    float lo = -HUGE_VALF; ///< Lower edge of the slab (inclusive).
    float hi = HUGE_VALF;  ///< Upper edge of the slab (exclusive unless infinite).

    /// Whether two windows keep the same pairs.
    BULLETGPU_HD bool operator==(const PairOwnership& other) const {
        return axis == other.axis && (axis < 0 || (lo == other.lo && hi == other.hi));
    }
    /// Whether two windows keep different pairs.
    BULLETGPU_HD bool operator!=(const PairOwnership& other) const { return !(*this == other); }
};

/// Whether the window keeps the pair of overlapping boxes with these lower bounds on its axis.
BULLETGPU_HD bool pairOwned(const PairOwnership& window, float minA, float minB) {
    const float r = minA > minB ? minA : minB;
    return !(r < window.lo) && (r < window.hi || window.hi == HUGE_VALF);
}

/// Whether a box with these bounds on the window's axis touches the window's slab, as
/// SlabCuts::slabOf places boxes: max at or above lo, min below hi (infinite edges always hold).
/// Both boxes of every pair the window owns touch it.
BULLETGPU_HD bool boxTouchesWindow(const PairOwnership& window, float min, float max) {
    return (window.lo == -HUGE_VALF || max >= window.lo) && (window.hi == HUGE_VALF || min < window.hi);
}

/// Whether the window keeps the overlapping pair of slots a and b.
BULLETGPU_HD bool sapOwnsPair(const PairOwnership& window, const BoxArraysView& boxes, std::uint32_t a,
                              std::uint32_t b) {
    return window.axis < 0 || pairOwned(window, boxes.min[window.axis][a], boxes.min[window.axis][b]);
}

/// Inclusive float overlap of two slots' boxes on all three axes.
BULLETGPU_HD bool sapOverlapFloat(const BoxArraysView& boxes, std::uint32_t a, std::uint32_t b) {
    for (int axis = 0; axis < 3; ++axis) {
        if (!intervalsOverlap(boxes.min[axis][a], boxes.max[axis][a], boxes.min[axis][b], boxes.max[axis][b])) {
            return false;
        }
    }
    return true;
}

/// Final acceptance of a float candidate: group/mask when filtering, then the exact test when
/// exact boxes are kept (float boxes are rounded outward, so they may overlap by rounding alone).
BULLETGPU_HD bool sapAcceptPair(const BoxArraysView& boxes, std::uint32_t a, std::uint32_t b, bool filterGroups) {
    if (filterGroups && !groupsCollide(boxes.group[a], boxes.mask[a], boxes.group[b], boxes.mask[b])) return false;
    if (boxes.exactMin[0] != nullptr) {
        for (int axis = 0; axis < 3; ++axis) {
            const double minA = boxes.exactMin[axis][a], maxA = boxes.exactMax[axis][a];
            const double minB = boxes.exactMin[axis][b], maxB = boxes.exactMax[axis][b];
            if (!(minA <= maxA && minB <= maxB && intervalsOverlap(minA, maxA, minB, maxB))) return false;
        }
    }
    return true;
}

/// The whole test of a pair of slots no cell sweep has filtered (huge boxes, incremental updates):
/// their float boxes overlap, the pair passes sapAcceptPair and the window owns it.
BULLETGPU_HD bool sapKeepsPair(const BoxArraysView& boxes, const PairOwnership& window, std::uint32_t a,
                               std::uint32_t b, bool filterGroups) {
    return sapOverlapFloat(boxes, a, b) && sapAcceptPair(boxes, a, b, filterGroups) && sapOwnsPair(window, boxes, a, b);
}

} // namespace bulletgpu
