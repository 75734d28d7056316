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

/// The largest |coordinate| of a triangle's corners.
BULLETGPU_HD double triangleMagnitude(const Triangle3d& t) {
    double magnitude = 0;
    for (int c = 0; c < 3; ++c) {
        for (int k = 0; k < 3; ++k) magnitude = fabs(t.p[c].v[k]) > magnitude ? fabs(t.p[c].v[k]) : magnitude;
    }
    return magnitude;
}

/// The box of triangle `t` grown by `growth`, rounded outward to float.
BULLETGPU_HD FloatBox triangleBoxGrownBy(const Triangle3d& t, double growth) {
    double lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
        lo[k] = hi[k] = t.p[0].v[k];
        for (int c = 1; c < 3; ++c) {
            lo[k] = t.p[c].v[k] < lo[k] ? t.p[c].v[k] : lo[k];
            hi[k] = t.p[c].v[k] > hi[k] ? t.p[c].v[k] : hi[k];
        }
    }
    FloatBox box;
    for (int k = 0; k < 3; ++k) {
        box.lo[k] = floatBelow(lo[k] - growth);
        box.hi[k] = floatAbove(hi[k] + growth);
    }
    return box;
}

/// The box of triangle t grown for query distance `distance`, rounded outward to float.
BULLETGPU_HD FloatBox grownTriangleBox(const Triangle3d& t, double distance) {
    return triangleBoxGrownBy(t, proximityGrowth(triangleMagnitude(t), distance));
}

/// The box of point p grown for query distance `distance`, rounded outward to float.
BULLETGPU_HD FloatBox grownPointBox(const Vec3d& p, double distance) {
    const double magnitude = fmax(fabs(p.v[0]), fmax(fabs(p.v[1]), fabs(p.v[2])));
    const double growth = proximityGrowth(magnitude, distance);
    FloatBox box;
    for (int k = 0; k < 3; ++k) {
        box.lo[k] = floatBelow(p.v[k] - growth);
        box.hi[k] = floatAbove(p.v[k] + growth);
    }
    return box;
}

/// The features' filter's allowance per unit of magnitude (2^-20).
constexpr double cFeatureFilterAllowance = 9.5367431640625e-07;

/// An axis-aligned box in double around a feature's points.
struct FeatureExtent {
    double lo[3]; ///< Minimum corner.
    double hi[3]; ///< Maximum corner.
};

/// The extent of `count` points.
BULLETGPU_HD FeatureExtent extentOf(const Vec3d* points, int count) {
    FeatureExtent e;
    for (int k = 0; k < 3; ++k) {
        e.lo[k] = e.hi[k] = points[0].v[k];
        for (int i = 1; i < count; ++i) {
            e.lo[k] = points[i].v[k] < e.lo[k] ? points[i].v[k] : e.lo[k];
            e.hi[k] = points[i].v[k] > e.hi[k] ? points[i].v[k] : e.hi[k];
        }
    }
    return e;
}

/// The larger of a and b; b when a is NaN, a when b is (fmax's choice when one is NaN, inline
/// where the compiler would call fmax).
BULLETGPU_HD double largerOf(double a, double b) { return a > b || b != b ? a : b; }

/// The largest |coordinate| of an extent (NaN coordinates ignored, as fmax ignores them).
BULLETGPU_HD double extentMagnitude(const FeatureExtent& e) {
    double m = 0;
    for (int k = 0; k < 3; ++k) m = largerOf(largerOf(m, fabs(e.lo[k])), fabs(e.hi[k]));
    return m;
}

/// The gap along an axis beyond which two features whose coordinates reach `magnitude` hold no
/// pair the query reports at `distance`: d + 2^-20 (M + d). A reported pair's computed points
/// lie within d (1 + 2u) of each other and within 2^-27 (M + d) of their features (the bound
/// above), so its features' extents are never farther apart than that along any axis.
BULLETGPU_HD double featureFilterMargin(double magnitude, double distance) {
    return distance + cFeatureFilterAllowance * (magnitude + distance);
}

/// True when the extents are apart by more than `margin` along some axis.
BULLETGPU_HD bool extentsApart(const FeatureExtent& a, const FeatureExtent& b, double margin) {
    bool apart = false;
    for (int k = 0; k < 3; ++k) apart |= (b.lo[k] - a.hi[k] > margin) | (a.lo[k] - b.hi[k] > margin);
    return apart;
}

} // namespace bulletgpu
