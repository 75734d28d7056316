// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/narrow/geometry/triangle_contact.h"
#include "kernels/narrow/geometry/triangle_intersection.h"

/// Closest points between triangles in double, shared by the CPU and CUDA paths.
///
/// Two closed triangles that do not meet have their closest points on a vertex and the other's
/// face, or on two edges (one of the closest points lies on a triangle's boundary; sliding it
/// along a parallel face ends at an edge). The distance is therefore the smallest of 6
/// vertex-face and 9 edge-edge distances, where a vertex-face distance only counts when the
/// vertex projects inside the face (else an edge-edge pair, one edge through the vertex, is at
/// least as close), and an edge-edge distance is that of the lines' closest points when inside
/// both edges, else that of an end point against the other edge (the 18 vertex-edge pairs,
/// each computed once). Degenerate triangles (collinear or repeated corners) have no face: their
/// edges cover them. Whether the triangles meet is decided by the exact trianglesIntersect,
/// since two crossing triangles are at distance 0 though no feature pair says so. Every
/// reported distance is the length of the difference of the two reported points, each on its
/// triangle up to rounding, so the points always realise the distance that is returned.

namespace bulletgpu {

/// Closest points between two features.
struct ClosestPoints {
    double squared; ///< Squared distance between the points.
    Vec3d a;        ///< Point on the first feature.
    Vec3d b;        ///< Point on the second feature.
};

/// Closest points between two triangles.
struct TriangleDistance {
    double distance;   ///< Distance (0 when they meet).
    Vec3d a;           ///< Point on the first triangle.
    Vec3d b;           ///< Point on the second triangle.
    bool intersecting; ///< The triangles meet (exact).
};

/// a - b.
BULLETGPU_HD Vec3d sub3(const Vec3d& a, const Vec3d& b) { return Vec3d{{a[0] - b[0], a[1] - b[1], a[2] - b[2]}}; }

/// a . b.
BULLETGPU_HD double dot3(const Vec3d& a, const Vec3d& b) { return (a[0] * b[0] + a[1] * b[1]) + a[2] * b[2]; }

/// a + s * d.
BULLETGPU_HD Vec3d along3(const Vec3d& a, double s, const Vec3d& d) {
    return Vec3d{{a[0] + s * d[0], a[1] + s * d[1], a[2] + s * d[2]}};
}

/// x clamped to [0, 1] (NaN to 0).
BULLETGPU_HD double clampUnit(double x) { return x > 0 ? (x < 1 ? x : 1.0) : 0.0; }

/// The point of segment [p0, p1] (possibly a single point) closest to x: an end point itself
/// when the projection falls outside.
BULLETGPU_HD Vec3d segmentPointClosestTo(const Vec3d& p0, const Vec3d& p1, const Vec3d& x) {
    const Vec3d d = sub3(p1, p0);
    const double dd = dot3(d, d), s = dot3(sub3(x, p0), d);
    if (!(s > 0) || !(dd > 0)) return p0;
    if (s >= dd) return p1;
    return along3(p0, s / dd, d);
}

/// Closest points of x and a point y.
BULLETGPU_HD ClosestPoints closestPair(const Vec3d& x, const Vec3d& y) {
    const Vec3d gap = sub3(x, y);
    return ClosestPoints{dot3(gap, gap), x, y};
}

/// Keeps `candidate` in `best` when strictly closer (the first of equals wins: a fixed order).
BULLETGPU_HD void keepCloser(ClosestPoints& best, const ClosestPoints& candidate) {
    if (candidate.squared < best.squared) best = candidate;
}

/// Closest points of segments [p0, p0 + d] and [q0, q0 + e] (dd = d . d, ee = e . e) when the
/// lines are not parallel and their closest points fall strictly inside both segments; else
/// `squared` is infinite. With the four end points against the other segment (vertex-edge
/// pairs), this gives the segments' closest pair, parallel and nearly parallel ones included
/// (where the lines' parameters are ill-conditioned, the ends are nearly as close).
BULLETGPU_HD ClosestPoints edgesInteriorClosest(const Vec3d& p0, const Vec3d& d, double dd, const Vec3d& q0,
                                                const Vec3d& e, double ee) {
    ClosestPoints out{INFINITY, p0, q0};
    const Vec3d r = sub3(p0, q0);
    const double de = dot3(d, e);
    const double denominator = dd * ee - de * de;
    if (!(denominator > 0)) return out;
    const double dr = dot3(d, r), er = dot3(e, r);
    const double s = (de * er - dr * ee) / denominator, t = (dd * er - de * dr) / denominator;
    if (s > 0 && s < 1 && t > 0 && t < 1) out = closestPair(along3(p0, s, d), along3(q0, t, e));
    return out;
}

/// Closest points of point `x` and the face of triangle `t` with unnormalised normal `n`
/// (n . n = `nn` > 0), when x projects inside the face (barycentric coordinates all >= 0);
/// else `squared` is infinite.
BULLETGPU_HD ClosestPoints pointFaceClosest(const Vec3d& x, const Triangle3d& t, const Vec3d& n, double nn) {
    ClosestPoints out;
    out.squared = INFINITY;
    out.a = x;
    out.b = x;
    for (int e = 0; e < 3; ++e) {
        const Vec3d& p0 = t.p[e];
        const Vec3d& p1 = t.p[(e + 1) % 3];
        const Vec3d edge = sub3(p1, p0), toX = sub3(x, p0);
        // (edge x toX) . n < 0: x projects outside this edge.
        const double c0 = edge[1] * toX[2] - edge[2] * toX[1];
        const double c1 = edge[2] * toX[0] - edge[0] * toX[2];
        const double c2 = edge[0] * toX[1] - edge[1] * toX[0];
        if ((c0 * n[0] + c1 * n[1]) + c2 * n[2] < 0) return out;
    }
    const double h = dot3(sub3(x, t.p[0]), n) / nn;
    out.b = along3(x, -h, n);
    const Vec3d gap = sub3(out.a, out.b);
    out.squared = dot3(gap, gap);
    return out;
}

/// Closest points of two triangles by their features only, in a fixed order: the 18
/// vertex-edge pairs, the interiors of the 9 edge-edge pairs and the 6 vertex-face pairs
/// (correct when the triangles do not meet).
BULLETGPU_HD ClosestPoints featureClosest(const Triangle3d& t1, const Triangle3d& t2) {
    ClosestPoints best{INFINITY, t1.p[0], t2.p[0]};
    for (int c = 0; c < 3; ++c) {
        for (int e = 0; e < 3; ++e) {
            const int f = (e + 1) % 3;
            keepCloser(best, closestPair(t1.p[c], segmentPointClosestTo(t2.p[e], t2.p[f], t1.p[c])));
            keepCloser(best, closestPair(segmentPointClosestTo(t1.p[e], t1.p[f], t2.p[c]), t2.p[c]));
        }
    }
    Vec3d d1[3], d2[3];
    double dd1[3], dd2[3];
    for (int e = 0; e < 3; ++e) {
        d1[e] = sub3(t1.p[(e + 1) % 3], t1.p[e]);
        d2[e] = sub3(t2.p[(e + 1) % 3], t2.p[e]);
        dd1[e] = dot3(d1[e], d1[e]);
        dd2[e] = dot3(d2[e], d2[e]);
    }
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j)
            keepCloser(best, edgesInteriorClosest(t1.p[i], d1[i], dd1[i], t2.p[j], d2[j], dd2[j]));
    }
    const Vec3d n1 = triangleNormal(t1), n2 = triangleNormal(t2);
    const double nn1 = dot3(n1, n1), nn2 = dot3(n2, n2);
    for (int c = 0; c < 3; ++c) {
        if (nn2 > 0) keepCloser(best, pointFaceClosest(t1.p[c], t2, n2, nn2));
        if (nn1 > 0) {
            const ClosestPoints swapped = pointFaceClosest(t2.p[c], t1, n1, nn1);
            keepCloser(best, ClosestPoints{swapped.squared, swapped.b, swapped.a});
        }
    }
    return best;
}

/// The distance and closest points of two triangles: 0 and a point where they meet when the
/// exact test says they meet (a point of their intersection segment, rounded to float, or for
/// coplanar and degenerate pairs the representative point intersectionSegment gives), else the
/// closest feature pair. A caller that has proven the triangles apart passes `mayMeet` false to
/// skip the exact test (the answer is the same).
BULLETGPU_HD TriangleDistance triangleDistance(const Triangle3d& t1, const Triangle3d& t2, bool mayMeet = true) {
    TriangleDistance out;
    TriangleTestDetail detail;
    if (mayMeet && trianglesIntersect(t1, t2, detail)) {
        float segment[2][3];
        intersectionSegment(t1, t2, detail, segment);
        out.distance = 0;
        out.a = toVec3d(segment[0]);
        out.b = out.a;
        out.intersecting = true;
        return out;
    }
    const ClosestPoints closest = featureClosest(t1, t2);
    out.distance = sqrt(closest.squared);
    out.a = closest.a;
    out.b = closest.b;
    out.intersecting = false;
    return out;
}

} // namespace bulletgpu
