// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/aabb_ops.h"
#include "kernels/common/host_device.h"

#include <cstdint>

namespace bulletgpu {

/// Non-owning view of a box store's arrays (host or device pointers), passed by value.
struct BoxArraysView {
    const float* min[3];      ///< Lower bounds per axis, rounded down to float.
    const float* max[3];      ///< Upper bounds per axis, rounded up to float.
    const double* exactMin[3]; ///< Exact lower bounds, or null when not kept.
    const double* exactMax[3]; ///< Exact upper bounds, or null when not kept.
    const std::uint32_t* group; ///< Collision filter groups.
    const std::uint32_t* mask;  ///< Collision filter masks.
};

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

} // namespace bulletgpu
