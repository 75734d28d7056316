// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/aabb_ops.h"
#include "kernels/common/host_device.h"
#include "kernels/narrow/distance/triangle_distance.h"
#include "kernels/narrow/hierarchy/obb_ops.h"

#include <cmath>

/// Rectangle swept spheres (Larsen, Gottschalk, Lin, Manocha 2000; gProximity section 4.2) for
/// distance queries, shared by the CPU and CUDA paths.
///
/// An RSS is the set of points within `radius` of a rectangle. It is stored in float (48 bytes)
/// and fitted so that the float parameters themselves bound the geometry: the axes and the
/// rectangle are fitted in double and rounded to float, then the radius is measured in double
/// from the rounded rectangle to every bounded point, grown by cRssFitSlack times the
/// magnitude of the numbers involved (2^16 times more than the few roundings of a projection
/// and a clamp can move the measured distance) and rounded up to float. The rounded axes are
/// orthonormal only up to float rounding: the rectangle is then a parallelogram, which every
/// function here handles as such (projections onto the axes only ever choose points of it).
///
/// The distance lower bound between two RSS is the gap between the parallelograms along a
/// direction found by a few alternating projections (the support gap along any direction
/// bounds the distance between convex sets from below, and equals it along the direction of
/// the closest points), minus both radii. Its rounding is covered by the query's allowance
/// (rssQuerySlack), subtracted before any pruning.

namespace bulletgpu {

/// A rectangle swept sphere (48 bytes): the points within `radius` of the parallelogram
/// centre + s * axis[0] + t * axis[1], |s| <= half[0], |t| <= half[1].
struct NarrowRss {
    float centre[3];  ///< Centre of the rectangle.
    float axis[2][3]; ///< Unit axes of the rectangle (to float rounding).
    float half[2];    ///< Half lengths of the rectangle along the axes.
    float radius;     ///< Radius of the swept sphere.
};
static_assert(sizeof(NarrowRss) == 48, "twelve floats");

/// Relative allowance of an RSS radius for the rounding of its fit (2^-40).
constexpr double cRssFitSlack = 9.094947017729282e-13;

/// Relative allowance of a lower bound for the rounding of transforms and gaps (2^-36).
constexpr double cRssQuerySlack = 1.4551915228366852e-11;

/// Alternating projections that choose the direction of the lower bound.
constexpr int cRssProjections = 2;

/// An RSS in double, placed in a query's frame.
struct PlacedRss {
    double centre[3];  ///< Centre of the rectangle.
    double axis[2][3]; ///< Axes of the rectangle.
    double half[2];    ///< Half lengths.
    double radius;     ///< Radius.
};

/// The point of the parallelogram of `r` closest to p along its axes (its projections clamped):
/// a point of the parallelogram, the closest one when the axes are orthonormal.
BULLETGPU_HD void rectanglePointNear(const PlacedRss& r, const double* p, double* out) {
    const double d[3] = {p[0] - r.centre[0], p[1] - r.centre[1], p[2] - r.centre[2]};
    double s = dot3(r.axis[0], d), t = dot3(r.axis[1], d);
    s = s > r.half[0] ? r.half[0] : (s < -r.half[0] ? -r.half[0] : s);
    t = t > r.half[1] ? r.half[1] : (t < -r.half[1] ? -r.half[1] : t);
    for (int k = 0; k < 3; ++k) out[k] = (r.centre[k] + s * r.axis[0][k]) + t * r.axis[1][k];
}

/// `rss` in double, moved by the rigid transform `m` (row-major 3x4 [R | t]; null: unmoved).
BULLETGPU_HD PlacedRss placeRss(const NarrowRss& rss, const double* m) {
    PlacedRss out;
    for (int k = 0; k < 3; ++k) {
        out.centre[k] = rss.centre[k];
        out.axis[0][k] = rss.axis[0][k];
        out.axis[1][k] = rss.axis[1][k];
    }
    out.half[0] = rss.half[0];
    out.half[1] = rss.half[1];
    out.radius = rss.radius;
    if (m == nullptr) return out;
    for (int r = 0; r < 3; ++r) {
        const double* row = m + 4 * r;
        out.centre[r] = ((row[0] * rss.centre[0] + row[1] * rss.centre[1]) + row[2] * rss.centre[2]) + row[3];
        for (int a = 0; a < 2; ++a) {
            out.axis[a][r] = (row[0] * rss.axis[a][0] + row[1] * rss.axis[a][1]) + row[2] * rss.axis[a][2];
        }
    }
    return out;
}

/// Half the width of the parallelogram of `r` along direction n (its support about the centre).
BULLETGPU_HD double rectangleSupport(const PlacedRss& r, const double* n) {
    return fabs(dot3(r.axis[0], n)) * r.half[0] + fabs(dot3(r.axis[1], n)) * r.half[1];
}

/// A lower bound of the distance between two RSS in one frame, before the query's allowance
/// (negative or zero when they may meet): the parallelograms' gap along the direction between
/// the points that cRssProjections alternating projections, started at b's centre, reach.
BULLETGPU_HD double rssLowerBound(const PlacedRss& a, const PlacedRss& b) {
    double pa[3], pb[3] = {b.centre[0], b.centre[1], b.centre[2]};
    for (int i = 0; i < cRssProjections; ++i) {
        rectanglePointNear(a, pb, pa);
        rectanglePointNear(b, pa, pb);
    }
    const double n[3] = {pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]};
    const double length = sqrt(dot3(n, n));
    if (!(length > 0)) return -(a.radius + b.radius);
    const double d[3] = {b.centre[0] - a.centre[0], b.centre[1] - a.centre[1], b.centre[2] - a.centre[2]};
    const double gap = dot3(n, d) - rectangleSupport(a, n) - rectangleSupport(b, n);
    return gap / length - (a.radius + b.radius);
}

/// The distance from p to the parallelogram of `r` as rectanglePointNear measures it (at least
/// the true distance, up to rounding).
BULLETGPU_HD double rectangleDistance(const PlacedRss& r, const double* p) {
    double q[3];
    rectanglePointNear(r, p, q);
    const double d[3] = {p[0] - q[0], p[1] - q[1], p[2] - q[2]};
    return sqrt(dot3(d, d));
}

/// The rectangle of an RSS with float axes `axis` (rows 0 and 1 of a near-orthonormal frame
/// whose row 2 is the normal) around points whose projections on the three rows span [lo, hi]:
/// the rectangle lies in the mid plane of the normal's span and is inset by half that span on
/// each side (the sphere covers the rest), then rounded to float. The radius is left at 0 for
/// rssRadiusFor.
BULLETGPU_HD NarrowRss rssRectangle(const double axis[3][3], const double* lo, const double* hi) {
    NarrowRss out;
    const double inset = 0.5 * (hi[2] - lo[2]);
    double mid[3];
    for (int k = 0; k < 3; ++k) mid[k] = 0.5 * (lo[k] + hi[k]);
    for (int k = 0; k < 3; ++k) {
        out.centre[k] = static_cast<float>((mid[0] * axis[0][k] + mid[1] * axis[1][k]) + mid[2] * axis[2][k]);
        out.axis[0][k] = static_cast<float>(axis[0][k]);
        out.axis[1][k] = static_cast<float>(axis[1][k]);
    }
    for (int a = 0; a < 2; ++a) {
        const double half = 0.5 * (hi[a] - lo[a]) - inset;
        out.half[a] = half > 0 ? static_cast<float>(half) : 0.0f;
    }
    out.radius = 0;
    return out;
}

/// The radius that makes the RSS of `rss`'s rectangle contain points at most `reach` from it,
/// measured with rectangleDistance, whose numbers are at most `scale` in magnitude: grown by
/// the fit allowance and rounded up to float.
BULLETGPU_HD float rssRadiusFor(double reach, double scale) { return floatAbove(reach + cRssFitSlack * scale); }

/// Magnitude of the numbers in the rectangle of `rss` (for the fit allowance).
BULLETGPU_HD double rssMagnitude(const NarrowRss& rss) {
    double m = 0;
    for (int k = 0; k < 3; ++k) m = fabs(rss.centre[k]) > m ? fabs(rss.centre[k]) : m;
    return m + rss.half[0] + rss.half[1];
}

/// The projections of p on the rows of `axis` folded into the span [lo, hi].
BULLETGPU_HD void spanAdd(const double axis[3][3], const double* p, double* lo, double* hi) {
    for (int k = 0; k < 3; ++k) {
        const double s = dot3(axis[k], p);
        lo[k] = s < lo[k] ? s : lo[k];
        hi[k] = s > hi[k] ? s : hi[k];
    }
}

/// Rounds the rows of an orthonormal frame to float and back, then sets the normal (row 2) to
/// the normalised cross product of the rounded rows 0 and 1, the frame the fit projects on.
BULLETGPU_HD void roundFrame(double axis[3][3]) {
    for (int r = 0; r < 2; ++r) {
        for (int k = 0; k < 3; ++k) axis[r][k] = static_cast<float>(axis[r][k]);
    }
    cross3(axis[0], axis[1], axis[2]);
    if (!normalize3(axis[2])) identityAxes(axis);
}

/// The RSS of a triangle: the rectangle along its longest edge in its plane (the world axes
/// when it is degenerate), the radius measured from the rectangle to the corners.
BULLETGPU_HD NarrowRss triangleRss(const Triangle3d& t) {
    const NarrowObb obb = triangleObb(t);
    double axis[3][3];
    for (int r = 0; r < 3; ++r) {
        for (int k = 0; k < 3; ++k) axis[r][k] = obb.axis[r][k];
    }
    // triangleObb puts the longest edge first and the in-plane direction second.
    roundFrame(axis);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (const Vec3d& p : t.p) spanAdd(axis, p.v, lo, hi);
    NarrowRss rss = rssRectangle(axis, lo, hi);
    const PlacedRss placed = placeRss(rss, nullptr);
    double reach = 0, scale = rssMagnitude(rss);
    for (const Vec3d& p : t.p) {
        const double d = rectangleDistance(placed, p.v);
        reach = d > reach ? d : reach;
        for (int k = 0; k < 3; ++k) scale = fabs(p.v[k]) > scale ? fabs(p.v[k]) : scale;
    }
    rss.radius = rssRadiusFor(reach, scale);
    return rss;
}

/// The largest half length plus the radius: the size that decides which node a traversal
/// splits (an upper bound of half the RSS's diameter over sqrt 2).
BULLETGPU_HD float rssSpan(const NarrowRss& rss) {
    return (rss.half[0] > rss.half[1] ? rss.half[0] : rss.half[1]) + rss.radius;
}

} // namespace bulletgpu
