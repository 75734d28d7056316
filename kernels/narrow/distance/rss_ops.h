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
/// An RSS is the set of points within `radius` of a rectangle. Its centre is stored in double and
/// the rest in float (60 bytes), fitted so that the stored parameters themselves bound the
/// geometry: the axes are fitted in double and rounded to float, the rectangle is fitted along
/// the rounded axes, then the radius is measured in double from the stored rectangle to every
/// bounded point, grown by cRssFitSlack times the magnitude of the numbers involved (2^16 times
/// more than the few roundings of a projection and a clamp can move the measured distance) and
/// rounded up to float. (A float centre would be off the points' plane by up to half a float
/// ulp of its coordinates, and every radius would grow by that: 3e-8 for a mesh of size 1,
/// more than the distances between near-equal triangle pairs that close queries separate.)
/// The rounded axes are orthonormal only up to float rounding: the rectangle is then a
/// parallelogram, which every function here handles as such (projections onto the axes only
/// ever choose points of it).
///
/// The distance lower bound between two RSS is the largest gap between the parallelograms along
/// three directions: one found by alternating projections and the two normals (the support gap
/// along any direction bounds the distance between convex sets from below, and equals it along
/// the direction of the closest points), minus both radii. Its rounding is covered by the query's allowance
/// (rssQuerySlack), subtracted before any pruning.

namespace bulletgpu {

/// A rectangle swept sphere (60 bytes and 4 of padding): the points within `radius` of the
/// parallelogram centre + s * axis[0] + t * axis[1], |s| <= half[0], |t| <= half[1].
struct NarrowRss {
    double centre[3]; ///< Centre of the rectangle.
    float axis[2][3]; ///< Unit axes of the rectangle (to float rounding).
    float half[2];    ///< Half lengths of the rectangle along the axes.
    float radius;     ///< Radius of the swept sphere.
};
static_assert(sizeof(NarrowRss) == 64, "one cache line");

/// Relative allowance of an RSS radius for the rounding of its fit (2^-40).
constexpr double cRssFitSlack = 9.094947017729282e-13;

/// Relative allowance of a lower bound for the rounding of transforms and gaps (2^-36).
constexpr double cRssQuerySlack = 1.4551915228366852e-11;

/// Alternating projections that choose the direction of the lower bound (more give a tighter
/// bound but cost more than the tests they save: on two stacked 100,000-triangle sheets, 1, 2
/// and 3 rounds computed 1.30, 1.35 and 1.21 million bounds in 110, 150 and 195 ms).
constexpr int cRssProjections = 1;

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

/// 1 - 2^-20, below 1 / (1 + 2^-20): the cross product of two placed axes (each a float-rounded
/// unit vector, moved by a rotation) is at most 1 + 2^-21 long, so a gap along it times this
/// factor is at most the gap along the unit normal.
constexpr double cNormalShrink = 0.99999904632568359375;

/// The parallelograms' gap along the normal of `r` (not normalised: a positive gap is shrunk by
/// cNormalShrink; a negative one bounds a distance from below whatever its scale, and is kept
/// for the traversal's order); `d` is the other's centre less r's.
BULLETGPU_HD double normalGap(const PlacedRss& r, const PlacedRss& other, const double* d) {
    double n[3];
    cross3(r.axis[0], r.axis[1], n);
    const double gap = fabs(dot3(n, d)) - rectangleSupport(r, n) - rectangleSupport(other, n);
    return gap > 0 ? gap * cNormalShrink : gap;
}

/// A lower bound of the distance between two RSS in one frame, before the query's allowance:
/// the largest of the parallelograms' gaps along a's normal, b's normal, and the direction
/// between the points that cRssProjections alternating projections, started at b's centre,
/// reach; less both radii.
/// The normals are cheap and exact for nearly parallel rectangles over each other; as soon as
/// the bound exceeds `cutoff` it is returned (the caller prunes it whatever its value).
BULLETGPU_HD double rssLowerBound(const PlacedRss& a, const PlacedRss& b, double cutoff = INFINITY) {
    const double radii = a.radius + b.radius;
    const double d[3] = {b.centre[0] - a.centre[0], b.centre[1] - a.centre[1], b.centre[2] - a.centre[2]};
    double best = normalGap(a, b, d);
    if (best - radii > cutoff) return best - radii;
    const double gapB = normalGap(b, a, d);
    best = gapB > best ? gapB : best;
    if (best - radii > cutoff) return best - radii;
    double pa[3], pb[3] = {b.centre[0], b.centre[1], b.centre[2]};
    for (int i = 0; i < cRssProjections; ++i) {
        rectanglePointNear(a, pb, pa);
        rectanglePointNear(b, pa, pb);
    }
    const double n[3] = {pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]};
    const double length = sqrt(dot3(n, n));
    if (length > 0) {
        const double gap = (dot3(n, d) - rectangleSupport(a, n) - rectangleSupport(b, n)) / length;
        best = gap > best ? gap : best;
    }
    return best - radii;
}

/// The distance from p to the parallelogram of `r` as rectanglePointNear measures it (at least
/// the true distance, up to rounding).
BULLETGPU_HD double rectangleDistance(const PlacedRss& r, const double* p) {
    double q[3];
    rectanglePointNear(r, p, q);
    const double d[3] = {p[0] - q[0], p[1] - q[1], p[2] - q[2]};
    return sqrt(dot3(d, d));
}

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

/// The RSS along `axis` (roundFrame's: rows 0 and 1 the rectangle's axes, row 2 its normal)
/// around `count` points, point(i) the i-th (a Vec3d). The sphere's radius starts as half the
/// points' span along the normal, the rectangle in the middle of that span; along each axis the
/// rectangle reaches only as far as the farthest point needs, less the sphere's reach at that
/// point's height (as in PQP). Then the radius is measured over all points from the stored
/// rectangle (corners included) and grown by the fit allowance.
template <typename Points>
BULLETGPU_HD NarrowRss rssAround(const double axis[3][3], std::uint32_t count, Points point) {
    // Projections are taken from the first point: the rounded axes are orthonormal only to float
    // rounding, so rebuilding the centre from its projections errs by that much of their size.
    const Vec3d origin = point(0);
    const auto relative = [&](std::uint32_t i, double* d) {
        for (int k = 0; k < 3; ++k) d[k] = point(i)[k] - origin[k];
    };
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, d[3];
    for (std::uint32_t i = 0; i < count; ++i) {
        relative(i, d);
        spanAdd(axis, d, lo, hi);
    }
    const double radius = 0.5 * (hi[2] - lo[2]), middle = 0.5 * (lo[2] + hi[2]);
    double from[2] = {INFINITY, INFINITY}, to[2] = {-INFINITY, -INFINITY};
    for (std::uint32_t i = 0; i < count; ++i) {
        relative(i, d);
        const double height = dot3(axis[2], d) - middle, room = radius * radius - height * height;
        const double reach = room > 0 ? sqrt(room) : 0.0;
        for (int a = 0; a < 2; ++a) {
            const double s = dot3(axis[a], d);
            from[a] = s + reach < from[a] ? s + reach : from[a];
            to[a] = s - reach > to[a] ? s - reach : to[a];
        }
    }
    NarrowRss rss;
    double mid[2];
    for (int a = 0; a < 2; ++a) {
        if (from[a] > to[a]) from[a] = to[a] = 0.5 * (from[a] + to[a]);
        mid[a] = 0.5 * (from[a] + to[a]);
        rss.half[a] = static_cast<float>(0.5 * (to[a] - from[a]));
    }
    for (int k = 0; k < 3; ++k) {
        rss.centre[k] = origin[k] + ((mid[0] * axis[0][k] + mid[1] * axis[1][k]) + middle * axis[2][k]);
        rss.axis[0][k] = static_cast<float>(axis[0][k]);
        rss.axis[1][k] = static_cast<float>(axis[1][k]);
    }
    rss.radius = 0;
    const PlacedRss placed = placeRss(rss, nullptr);
    double reach = 0, scale = rssMagnitude(rss);
    for (std::uint32_t i = 0; i < count; ++i) {
        const Vec3d& p = point(i);
        const double d = rectangleDistance(placed, p.v);
        reach = d > reach ? d : reach;
        for (int k = 0; k < 3; ++k) scale = fabs(p[k]) > scale ? fabs(p[k]) : scale;
    }
    rss.radius = floatAbove(reach + cRssFitSlack * scale);
    return rss;
}

/// The RSS of a triangle: the rectangle along its longest edge in its plane (the world axes
/// when it is degenerate).
BULLETGPU_HD NarrowRss triangleRss(const Triangle3d& t) {
    const NarrowObb obb = triangleObb(t);
    double axis[3][3];
    for (int r = 0; r < 3; ++r) {
        for (int k = 0; k < 3; ++k) axis[r][k] = obb.axis[r][k];
    }
    // triangleObb puts the longest edge first and the in-plane direction second.
    roundFrame(axis);
    return rssAround(axis, 3, [&](std::uint32_t i) -> const Vec3d& { return t.p[i]; });
}

/// The largest half length plus the radius: the size that decides which node a traversal
/// splits (an upper bound of half the RSS's diameter over sqrt 2).
BULLETGPU_HD float rssSpan(const NarrowRss& rss) {
    return (rss.half[0] > rss.half[1] ? rss.half[0] : rss.half[1]) + rss.radius;
}

} // namespace bulletgpu
