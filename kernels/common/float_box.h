// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/aabb_ops.h"
#include "kernels/common/host_device.h"

#include <cmath>

/// The float box every engine's hierarchy and per-element code uses (the narrow phase's LBVH,
/// the sphere chains' levels, the margin boxes of the broad phase), on the CPU and CUDA.

namespace bulletgpu {

/// An axis-aligned box in float (24 bytes); empty when lo > hi on an axis, and overlapping
/// nothing when a bound is NaN.
struct FloatBox {
    float lo[3]; ///< Minimum corner.
    float hi[3]; ///< Maximum corner.
};

/// A box that contains nothing and overlaps nothing.
BULLETGPU_HD FloatBox emptyBox() { return FloatBox{{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}}; }

/// Inclusive overlap, exact in float: touching boxes overlap.
BULLETGPU_HD bool boxesOverlap(const FloatBox& a, const FloatBox& b) {
    return intervalsOverlap(a.lo[0], a.hi[0], b.lo[0], b.hi[0]) &&
           intervalsOverlap(a.lo[1], a.hi[1], b.lo[1], b.hi[1]) && intervalsOverlap(a.lo[2], a.hi[2], b.lo[2], b.hi[2]);
}

/// The smallest box containing both (exact: float min and max do not round).
BULLETGPU_HD FloatBox mergeBoxes(const FloatBox& a, const FloatBox& b) {
    FloatBox m;
    for (int k = 0; k < 3; ++k) {
        m.lo[k] = a.lo[k] < b.lo[k] ? a.lo[k] : b.lo[k];
        m.hi[k] = a.hi[k] > b.hi[k] ? a.hi[k] : b.hi[k];
    }
    return m;
}

/// True when `outer` contains `inner` (inclusive).
BULLETGPU_HD bool boxContains(const FloatBox& outer, const FloatBox& inner) {
    for (int k = 0; k < 3; ++k) {
        if (!(outer.lo[k] <= inner.lo[k] && inner.hi[k] <= outer.hi[k])) return false;
    }
    return true;
}

} // namespace bulletgpu
