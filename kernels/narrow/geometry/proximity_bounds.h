// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/narrow/geometry/triangle_ops.h"

#include <cmath>

/// The contact query's culling boxes (per-element, CPU and CUDA): boxes grown so that no feature
/// pair the query reports can be culled.
///
/// The bound. A pair is reported when its closest points, computed in double
/// (feature_distance.h), are within d. Those points lie on the features up to rounding: an
/// interpolation on a segment is off by a few units of roundoff u = 2^-53 of the coordinates'
/// magnitude M; a projection onto a triangle's plane, and the inside test that chooses it, are off
/// by the error of the computed normal's direction, at most about 4 u / sin(angle) <= 2^-29
/// (sin >= 2^-20, or the triangle counts as its edges), times the distance from a corner, itself
/// at most 2 M + d. So the exact distance of
/// a reported pair is below d + 2^-27 (M_A + M_B + d). Each triangle's box is grown by
/// g = d / 2 + 2^-24 (M_t + d), M_t the largest |coordinate| of its corners, and rounded outward
/// to float; two grown boxes then lie within 2 g of each other's triangles' distance, which covers
/// d plus that error with a factor of 8 to spare (the rounding of min - g included), and the
/// distance along any axis never exceeds the Euclidean one. A point's box is grown the same way.

namespace bulletgpu {

/// The allowance per unit of magnitude added to every grown box (2^-24).
constexpr double cProximityAllowance = 5.9604644775390625e-08;

/// The growth of a box whose coordinates reach magnitude `magnitude`, for query distance d.
BULLETGPU_HD double proximityGrowth(double magnitude, double distance) {
    return 0.5 * distance + cProximityAllowance * (magnitude + distance);
}

/// The box of triangle t grown for query distance `distance`, rounded outward to float.
BULLETGPU_HD NarrowBox grownTriangleBox(const Triangle3d& t, double distance) {
    double lo[3], hi[3], magnitude = 0;
    for (int k = 0; k < 3; ++k) {
        lo[k] = hi[k] = t.p[0][k];
        for (int c = 0; c < 3; ++c) {
            lo[k] = t.p[c][k] < lo[k] ? t.p[c][k] : lo[k];
            hi[k] = t.p[c][k] > hi[k] ? t.p[c][k] : hi[k];
            magnitude = fabs(t.p[c][k]) > magnitude ? fabs(t.p[c][k]) : magnitude;
        }
    }
    const double growth = proximityGrowth(magnitude, distance);
    NarrowBox box;
    for (int k = 0; k < 3; ++k) {
        box.lo[k] = floatBelow(lo[k] - growth);
        box.hi[k] = floatAbove(hi[k] + growth);
    }
    return box;
}

/// The box of point p grown for query distance `distance`, rounded outward to float.
BULLETGPU_HD NarrowBox grownPointBox(const Vec3d& p, double distance) {
    const double magnitude = fmax(fabs(p.v[0]), fmax(fabs(p.v[1]), fabs(p.v[2])));
    const double growth = proximityGrowth(magnitude, distance);
    NarrowBox box;
    for (int k = 0; k < 3; ++k) {
        box.lo[k] = floatBelow(p.v[k] - growth);
        box.hi[k] = floatAbove(p.v[k] + growth);
    }
    return box;
}

} // namespace bulletgpu
