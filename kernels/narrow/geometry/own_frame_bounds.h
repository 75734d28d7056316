// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/aabb_ops.h"
#include "kernels/common/float_box.h"
#include "kernels/common/host_device.h"
#include "kernels/narrow/geometry/feature_distance.h"
#include "kernels/narrow/geometry/proximity_bounds.h"
#include "kernels/narrow/geometry/triangle_ops.h"

#include <cmath>

/// Culling a pair query in the first mesh's own frame (per-element, CPU and CUDA): the first
/// mesh A keeps its tree grown in its own frame, the second mesh B's world-frame triangles are
/// moved into A's frame by the inverse of A's transform [R | t]. No feature pair the world-frame
/// walk keeps may be culled, so the boxes here cover what proximity_bounds.h covers plus what
/// the change of frame adds.
///
/// The bound. The exact tests read A's corners as x_w = fl(R x + t) and report a pair when the
/// closest points are within d + 2^-27 (M_A + M_B + d) (proximity_bounds.h), M the world
/// magnitudes. R is a double matrix made from a float rotation, orthonormal only up to
/// e >= |R^T R - I|_2 (about 1e-7). For a point y of B's triangle and the point x of A's
/// triangle closest to it, y_A = R^T (y - t) gives y_A - x = R^T (y - x_w) + (R^T R - I) x, so
/// |y_A - x| <= (1 + e)(d + 2^-27 (M_A + M_B + d) + rounding) + e |x|, |x| <= 2 M_local.
/// A's own leaf boxes are grown by at least d / 2; B's triangle's box in A's frame is grown by
/// d / 2 + e (d + 2 M_local) + 2^-23 (W + d), with W >= M_A, M_B (a world magnitude), which
/// covers the rest with a factor of 4 to spare, the rounding of R^T (y - t) included. The walk of
/// B's world tree reads A's own grown root box moved to the world: the box holds each point of
/// A with d / 2 around it, R shrinks that by at most e, and the world box is grown by
/// e d + 2^-23 (W + d) for the rest.

namespace bulletgpu {

/// Above this orthonormality error of a transform's rotation, a query does not cull in the
/// mesh's own frame (the change of frame would need more growth than it saves).
constexpr double cOwnFrameSkewLimit = 9.765625e-04; // 2^-10
/// The own-frame allowance per unit of world magnitude (2^-23).
constexpr double cOwnFrameAllowance = 1.1920928955078125e-07;

/// An upper bound of |R^T R - I|_2 for the rotation R of the row-major 3x4 transform `m`: the
/// Frobenius norm, which bounds the spectral one.
BULLETGPU_HD double transformSkew(const double* m) {
    double sum = 0;
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            double dot = 0;
            for (int r = 0; r < 3; ++r) dot += m[4 * r + i] * m[4 * r + j];
            const double entry = dot - (i == j ? 1.0 : 0.0);
            sum += entry * entry;
        }
    }
    return sqrt(sum);
}

/// The largest |coordinate| of a float box (0 for an empty one).
BULLETGPU_HD double boxMagnitude(const FloatBox& box) {
    double magnitude = 0;
    for (int k = 0; k < 3; ++k) {
        magnitude = fabs(static_cast<double>(box.lo[k])) > magnitude ? fabs(static_cast<double>(box.lo[k])) : magnitude;
        magnitude = fabs(static_cast<double>(box.hi[k])) > magnitude ? fabs(static_cast<double>(box.hi[k])) : magnitude;
    }
    return magnitude;
}

/// A world magnitude bound of a mesh under transform `m` whose own-frame points lie within
/// `ownMagnitude` of the origin on each axis: |t| + 2 |x| per axis, |x| <= sqrt(3) ownMagnitude.
BULLETGPU_HD double movedMagnitude(const double* m, double ownMagnitude) {
    double translation = 0;
    for (int r = 0; r < 3; ++r) translation = fabs(m[4 * r + 3]) > translation ? fabs(m[4 * r + 3]) : translation;
    return translation + 4 * ownMagnitude;
}

/// The world box of own-frame box `own` moved by `m` (the box of the moved box), grown by
/// e d + 2^-23 (W + d) and rounded outward to float; `world` is W.
BULLETGPU_HD FloatBox movedOwnBox(const double* m, const FloatBox& own, double skew, double distance, double world) {
    const double pad = skew * distance + cOwnFrameAllowance * (world + distance);
    FloatBox box;
    for (int r = 0; r < 3; ++r) {
        double centre = m[4 * r + 3], half = 0;
        for (int k = 0; k < 3; ++k) {
            const double c = 0.5 * (static_cast<double>(own.lo[k]) + static_cast<double>(own.hi[k]));
            const double h = 0.5 * (static_cast<double>(own.hi[k]) - static_cast<double>(own.lo[k]));
            centre += m[4 * r + k] * c;
            half += fabs(m[4 * r + k]) * h;
        }
        box.lo[r] = floatBelow(centre - half - pad);
        box.hi[r] = floatAbove(centre + half + pad);
    }
    return box;
}

/// World triangle `t` moved into the own frame of a mesh with transform `m`: R^T (p - t).
BULLETGPU_HD Triangle3d movedIntoOwnFrame(const double* m, const Triangle3d& t) {
    Triangle3d own;
    for (int c = 0; c < 3; ++c) {
        const double d0 = t.p[c].v[0] - m[3], d1 = t.p[c].v[1] - m[7], d2 = t.p[c].v[2] - m[11];
        // Column k of R: row k of R^T.
        for (int k = 0; k < 3; ++k) own.p[c].v[k] = m[k] * d0 + m[4 + k] * d1 + m[8 + k] * d2;
    }
    return own;
}

/// How far a world triangle moved into a mesh's own frame is grown there:
/// d / 2 + e (d + 2 M_local) + 2^-23 (W + d).
BULLETGPU_HD double ownFrameGrowth(double skew, double distance, double ownMagnitude, double world) {
    return 0.5 * distance + skew * (distance + 2 * ownMagnitude) + cOwnFrameAllowance * (world + distance);
}

/// The slab around a triangle's plane that every point within `growth` of it (along the plane's
/// normal) lies in: unit normal, offset and half-width. A triangle whose smallest angle at its
/// first corner has a sine below 2^-10 gets no slab (`valid` false): its normal's direction is
/// then not trusted, and only its box culls.
struct TriangleSlab {
    double normal[3];   ///< Unit normal.
    double offset;      ///< normal . first corner.
    double halfWidth;   ///< Growth plus the allowance for the normal's rounding.
    bool valid = false; ///< False: the slab culls nothing.
};

/// The slab of triangle `t` grown by `growth`. With a sine of at least 2^-10, the computed
/// normal's direction is off by at most about 2^-43, and its offset by as much times the
/// corners' magnitude; both are covered by 2^-23 (W + growth), `world` >= W the magnitude of the
/// corners and of any box tested against the slab.
BULLETGPU_HD TriangleSlab triangleSlab(const Triangle3d& t, double growth, double world) {
    TriangleSlab slab{};
    const Vec3d e1 = vecSub(t.p[1], t.p[0]), e2 = vecSub(t.p[2], t.p[0]);
    const Vec3d n = vecCross(e1, e2);
    const double n2 = vecDot(n, n), l1 = vecDot(e1, e1), l2 = vecDot(e2, e2);
    // sin^2 >= 2^-20 of the angle between the edges.
    if (!(n2 >= 9.5367431640625e-07 * l1 * l2) || !(n2 > 0)) return slab;
    const double length = sqrt(n2);
    for (int k = 0; k < 3; ++k) slab.normal[k] = n.v[k] / length;
    slab.offset = slab.normal[0] * t.p[0].v[0] + slab.normal[1] * t.p[0].v[1] + slab.normal[2] * t.p[0].v[2];
    slab.halfWidth = growth + cOwnFrameAllowance * (world + growth);
    slab.valid = true;
    return slab;
}

/// True when float box `box` meets `slab` (always when the slab is not valid); a NaN box meets
/// no valid slab.
BULLETGPU_HD bool boxMeetsSlab(const FloatBox& box, const TriangleSlab& slab) {
    if (!slab.valid) return true;
    double centre = 0, reach = 0;
    for (int k = 0; k < 3; ++k) {
        const double c = 0.5 * (static_cast<double>(box.lo[k]) + static_cast<double>(box.hi[k]));
        const double h = 0.5 * (static_cast<double>(box.hi[k]) - static_cast<double>(box.lo[k]));
        centre += slab.normal[k] * c;
        reach += fabs(slab.normal[k]) * h;
    }
    return fabs(centre - slab.offset) <= reach + slab.halfWidth;
}

} // namespace bulletgpu
