// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/narrow/geometry/exact_predicates.h"

#include <cmath>

/// Closest points between mesh features in double: a point and a triangle, two segments.
/// Per-element and Bullet-free, shared by the CPU and CUDA paths and by the oracle.
///
/// Every result is a pair of points that lie on the two features (up to the rounding of one
/// interpolation, a + t (b - a) with t in [0, 1], or a projection onto a triangle's plane), and
/// its squared distance: a computed distance is never below the exact one by more than a few
/// units of roundoff of the coordinates' magnitude (proximity_query.h uses that bound to grow the
/// culling boxes). Degenerate input has no special failure: a zero-length segment is its point,
/// a zero-area (or sliver) triangle is its three edges. Ties go to the first candidate in the
/// documented order, so the results are deterministic.

namespace bulletgpu {

/// The closest points of two features and their squared distance.
struct FeaturePoints {
    Vec3d onA;              ///< Point of the first feature.
    Vec3d onB;              ///< Point of the second feature.
    double distanceSquared; ///< |onA - onB|^2, computed in double.
};

/// a - b.
BULLETGPU_HD Vec3d vecSub(const Vec3d& a, const Vec3d& b) {
    return Vec3d{{a.v[0] - b.v[0], a.v[1] - b.v[1], a.v[2] - b.v[2]}};
}

/// a + s b.
BULLETGPU_HD Vec3d vecAddScaled(const Vec3d& a, double s, const Vec3d& b) {
    return Vec3d{{a.v[0] + s * b.v[0], a.v[1] + s * b.v[1], a.v[2] + s * b.v[2]}};
}

/// s a.
BULLETGPU_HD Vec3d vecScale(double s, const Vec3d& a) { return Vec3d{{s * a.v[0], s * a.v[1], s * a.v[2]}}; }

/// a . b, summed x, y, z in that order.
BULLETGPU_HD double vecDot(const Vec3d& a, const Vec3d& b) {
    return (a.v[0] * b.v[0] + a.v[1] * b.v[1]) + a.v[2] * b.v[2];
}

/// a x b.
BULLETGPU_HD Vec3d vecCross(const Vec3d& a, const Vec3d& b) {
    return Vec3d{
        {a.v[1] * b.v[2] - a.v[2] * b.v[1], a.v[2] * b.v[0] - a.v[0] * b.v[2], a.v[0] * b.v[1] - a.v[1] * b.v[0]}};
}

/// Squared distance of two points.
BULLETGPU_HD double distanceSquared(const Vec3d& a, const Vec3d& b) {
    const Vec3d d = vecSub(a, b);
    return vecDot(d, d);
}

/// t clamped to [0, 1].
BULLETGPU_HD double clampUnit(double t) { return t < 0 ? 0 : (t > 1 ? 1 : t); }

/// The point of segment [a, b] closest to p (a when the segment has zero length).
BULLETGPU_HD Vec3d closestOnSegment(const Vec3d& p, const Vec3d& a, const Vec3d& b) {
    const Vec3d ab = vecSub(b, a);
    const double length2 = vecDot(ab, ab);
    if (!(length2 > 0)) return a;
    return vecAddScaled(a, clampUnit(vecDot(vecSub(p, a), ab) / length2), ab);
}

/// A triangle is taken as its three edges when the sine of its angle at the first corner is
/// below 2^-20 (|ab x ac|^2 <= 2^-40 |ab|^2 |ac|^2): its computed normal could point anywhere.
constexpr double cSliverSine2 = 9.094947017729282e-13;

/// Closest points of point p (first feature) and triangle (a, b, c) (second feature): the
/// projection onto the triangle's plane when it falls inside the closed triangle (edge tests
/// against the normal ab x ac), otherwise the closest of the edges ab, bc, ca (first of equals).
BULLETGPU_HD FeaturePoints pointTriangleClosest(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    const Vec3d ab = vecSub(b, a), ac = vecSub(c, a);
    const Vec3d n = vecCross(ab, ac);
    const double nn = vecDot(n, n);
    if (nn > cSliverSine2 * vecDot(ab, ab) * vecDot(ac, ac)) {
        const Vec3d ap = vecSub(p, a), bp = vecSub(p, b), cp = vecSub(p, c);
        const bool inside = vecDot(n, vecCross(ab, ap)) >= 0 && vecDot(n, vecCross(vecSub(c, b), bp)) >= 0 &&
                            vecDot(n, vecCross(vecSub(a, c), cp)) >= 0;
        if (inside) {
            const double height = vecDot(n, ap) / nn;
            const Vec3d q = vecAddScaled(p, -height, n);
            return FeaturePoints{p, q, distanceSquared(p, q)};
        }
    }
    const Vec3d edges[3][2] = {{a, b}, {b, c}, {c, a}};
    FeaturePoints best{p, a, INFINITY};
    for (const auto& edge : edges) {
        const Vec3d q = closestOnSegment(p, edge[0], edge[1]);
        const double d2 = distanceSquared(p, q);
        if (d2 < best.distanceSquared) best = FeaturePoints{p, q, d2};
    }
    return best;
}

/// Closest points of segments [p1, q1] (first feature) and [p2, q2] (second): the minimum over
/// the interior solution of the two lines (when they are not parallel, |d1 x d2|^2 > 2^-40
/// |d1|^2 |d2|^2, and both parameters fall in [0, 1]) and the four endpoint-to-segment pairs
/// (p1, q1, p2, q2 in that order; first of equals). Parallel and zero-length segments therefore
/// need no special case: the minimum then lies at an endpoint.
BULLETGPU_HD FeaturePoints segmentsClosest(const Vec3d& p1, const Vec3d& q1, const Vec3d& p2, const Vec3d& q2) {
    const Vec3d d1 = vecSub(q1, p1), d2 = vecSub(q2, p2), r = vecSub(p1, p2);
    const double a = vecDot(d1, d1), e = vecDot(d2, d2), b = vecDot(d1, d2);
    const double denom = a * e - b * b;
    FeaturePoints best{p1, p2, INFINITY};
    if (a > 0 && e > 0 && denom > cSliverSine2 * a * e) {
        const double c = vecDot(d1, r), f = vecDot(d2, r);
        const double s = (b * f - c * e) / denom, t = (a * f - b * c) / denom;
        if (s >= 0 && s <= 1 && t >= 0 && t <= 1) {
            const Vec3d onA = vecAddScaled(p1, s, d1), onB = vecAddScaled(p2, t, d2);
            best = FeaturePoints{onA, onB, distanceSquared(onA, onB)};
        }
    }
    const auto consider = [&best](const Vec3d& onA, const Vec3d& onB) {
        const double d = distanceSquared(onA, onB);
        if (d < best.distanceSquared) best = FeaturePoints{onA, onB, d};
    };
    consider(p1, closestOnSegment(p1, p2, q2));
    consider(q1, closestOnSegment(q1, p2, q2));
    consider(closestOnSegment(p2, p1, q1), p2);
    consider(closestOnSegment(q2, p1, q1), q2);
    return best;
}

} // namespace bulletgpu
