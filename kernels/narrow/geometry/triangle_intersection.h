// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/narrow/geometry/exact_predicates.h"
#include "kernels/narrow/geometry/proximity_bounds.h"
#include "kernels/narrow/geometry/triangle_ops.h"

/// The exact triangle-triangle intersection test, shared by the CPU and CUDA paths.
///
/// Two closed triangles meet exactly when an edge of one meets the other (their intersection,
/// when not empty, is a convex set whose extreme points lie on edges). Every decision is a sign
/// of orient3d or orient2d (exact_predicates.h) or a comparison of input coordinates, so the
/// answer is the exact one for the double corners given, touching included: coplanar overlaps,
/// shared edges and vertices, and degenerate triangles (collinear corners, repeated corners,
/// single points, whose edges then cover them).

namespace bulletgpu {

/// Signs of the three corners of one triangle against the plane of another.
struct PlaneSides {
    int s[3]; ///< orient3d sign of each corner.

    /// True when every corner lies strictly on the same side.
    BULLETGPU_HD bool separated() const { return (s[0] == s[1] && s[1] == s[2] && s[0] != 0); }
    /// True when every corner lies on the plane.
    BULLETGPU_HD bool coplanar() const { return s[0] == 0 && s[1] == 0 && s[2] == 0; }
    /// True when no corner lies on the plane (with separated() false: one corner is alone on
    /// its side).
    BULLETGPU_HD bool offPlane() const { return s[0] != 0 && s[1] != 0 && s[2] != 0; }
    /// The corner alone on its side, for offPlane() sides that are not separated().
    BULLETGPU_HD int alone() const { return s[1] == s[2] ? 0 : (s[0] == s[2] ? 1 : 2); }
};

/// The axis to drop to project triangle `t` injectively onto a coordinate plane (the largest
/// normal component whose exact sign is not zero), or -1 when the corners are collinear.
BULLETGPU_HD int projectionAxis(const Triangle3d& t) {
    const Vec3d& p = t.p[0];
    const double ux = t.p[1][0] - p[0], uy = t.p[1][1] - p[1], uz = t.p[1][2] - p[2];
    const double vx = t.p[2][0] - p[0], vy = t.p[2][1] - p[1], vz = t.p[2][2] - p[2];
    const double n[3] = {exact::magnitude(uy * vz - uz * vy), exact::magnitude(uz * vx - ux * vz),
                         exact::magnitude(ux * vy - uy * vx)};
    const int first = n[0] >= n[1] ? (n[0] >= n[2] ? 0 : 2) : (n[1] >= n[2] ? 1 : 2);
    for (int step = 0; step < 3; ++step) {
        const int k = (first + step) % 3;
        if (orient2d(t.p[0], t.p[1], t.p[2], (k + 1) % 3, (k + 2) % 3) != 0) return k;
    }
    return -1;
}

/// Signs of the corners of `t` against the plane of `plane`, whose minors are `minors`.
BULLETGPU_HD PlaneSides planeSides(const Triangle3d& plane, const PlaneMinors& minors, const Triangle3d& t) {
    PlaneSides sides;
    for (int c = 0; c < 3; ++c) sides.s[c] = orient3dOnPlane(minors, plane.p[0], plane.p[1], plane.p[2], t.p[c]);
    return sides;
}

/// Signs of the corners of `t` against the plane of `plane`.
BULLETGPU_HD PlaneSides planeSides(const Triangle3d& plane, const Triangle3d& t) {
    return planeSides(plane, planeMinors(plane.p[0], plane.p[1], plane.p[2]), t);
}

/// True when the static filter of orient3dOnPlane alone shows every corner of `t` strictly on
/// one side of the plane of `plane` (minors `minors`), so that trianglesIntersect finds them
/// separated; false when a corner is on the other side or too near the plane to tell. Branch
/// free: planeFilterKeep (plane_filter.h) evaluates it for several pairs at once, with the same
/// operations in the same order.
BULLETGPU_HD bool certainlySeparated(const Triangle3d& plane, const PlaneMinors& minors, const Triangle3d& t) {
    // Three certain signs, all alike, sum to 3 or -3; an uncertain (0) or opposite one cannot.
    int sum = 0;
    for (int c = 0; c < 3; ++c) sum += orient3dOnPlaneFiltered(minors, plane.p[0], t.p[c]);
    return sum == 3 || sum == -3;
}

/// True when x, known collinear with a and b in coordinates (i, j), lies within their box.
BULLETGPU_HD bool withinSpan2d(const Vec3d& a, const Vec3d& b, const Vec3d& x, int i, int j) {
    return intervalsOverlap(x[i], x[i], a[i] < b[i] ? a[i] : b[i], a[i] < b[i] ? b[i] : a[i]) &&
           intervalsOverlap(x[j], x[j], a[j] < b[j] ? a[j] : b[j], a[j] < b[j] ? b[j] : a[j]);
}

/// True when the boxes of segments [a, b] and [c, d] overlap in coordinates (i, j) (closed: a
/// shared bound counts).
BULLETGPU_HD bool segmentBoxesOverlap2d(const Vec3d& a, const Vec3d& b, const Vec3d& c, const Vec3d& d, int i, int j) {
    const int axes[2] = {i, j};
    for (const int k : axes) {
        const double lo1 = a[k] < b[k] ? a[k] : b[k], hi1 = a[k] < b[k] ? b[k] : a[k];
        const double lo2 = c[k] < d[k] ? c[k] : d[k], hi2 = c[k] < d[k] ? d[k] : c[k];
        if (!intervalsOverlap(lo1, hi1, lo2, hi2)) return false;
    }
    return true;
}

/// Exact closed segment-segment test in coordinates (i, j); segments may be single points.
/// Segments whose boxes are apart are decided on their coordinates alone (as in a flat mesh,
/// where most tested edges are far apart and many orientations are exactly zero, which only the
/// exact stage of orient2d decides).
BULLETGPU_HD bool segmentsMeet2d(const Vec3d& a, const Vec3d& b, const Vec3d& c, const Vec3d& d, int i, int j) {
    if (!segmentBoxesOverlap2d(a, b, c, d, i, j)) return false;
    const int o1 = orient2d(a, b, c, i, j), o2 = orient2d(a, b, d, i, j);
    const int o3 = orient2d(c, d, a, i, j), o4 = orient2d(c, d, b, i, j);
    if (o1 * o2 < 0 && o3 * o4 < 0) return true;
    return (o1 == 0 && withinSpan2d(a, b, c, i, j)) || (o2 == 0 && withinSpan2d(a, b, d, i, j)) ||
           (o3 == 0 && withinSpan2d(c, d, a, i, j)) || (o4 == 0 && withinSpan2d(c, d, b, i, j));
}

/// Exact closed point-in-triangle test in coordinates (i, j); the projected triangle must not
/// be degenerate. A point outside the triangle's box is decided on coordinates alone.
BULLETGPU_HD bool pointInTriangle2d(const Triangle3d& t, const Vec3d& x, int i, int j) {
    const int axes[2] = {i, j};
    for (const int k : axes) {
        const double lo = t.p[0][k] < t.p[1][k] ? t.p[0][k] : t.p[1][k],
                     hi = t.p[0][k] < t.p[1][k] ? t.p[1][k] : t.p[0][k];
        if (x[k] < (lo < t.p[2][k] ? lo : t.p[2][k]) || x[k] > (hi > t.p[2][k] ? hi : t.p[2][k])) return false;
    }
    const int o0 = orient2d(t.p[0], t.p[1], x, i, j);
    const int o1 = orient2d(t.p[1], t.p[2], x, i, j);
    const int o2 = orient2d(t.p[2], t.p[0], x, i, j);
    const bool negative = o0 < 0 || o1 < 0 || o2 < 0;
    const bool positive = o0 > 0 || o1 > 0 || o2 > 0;
    return !(negative && positive);
}

/// Segment [a, b] against triangle `t` when all lie in one plane; `k` is t's projection axis.
BULLETGPU_HD bool coplanarSegmentMeetsTriangle(const Vec3d& a, const Vec3d& b, const Triangle3d& t, int k) {
    const int i = (k + 1) % 3, j = (k + 2) % 3;
    if (pointInTriangle2d(t, a, i, j) || pointInTriangle2d(t, b, i, j)) return true;
    for (int e = 0; e < 3; ++e) {
        if (segmentsMeet2d(a, b, t.p[e], t.p[(e + 1) % 3], i, j)) return true;
    }
    return false;
}

/// Segment [a, b] against non-degenerate triangle `t` (projection axis k), given the signs sa
/// and sb of a and b against t's plane.
BULLETGPU_HD bool segmentMeetsTriangle(const Vec3d& a, const Vec3d& b, int sa, int sb, const Triangle3d& t, int k) {
    if (sa == sb && sa != 0) return false;
    if (sa == 0 && sb == 0) return coplanarSegmentMeetsTriangle(a, b, t, k);
    // The line ab crosses t's plane once, inside the segment: it meets the closed triangle when
    // it passes no edge on the opposite side from another.
    const int o0 = orient3d(a, b, t.p[0], t.p[1]);
    const int o1 = orient3d(a, b, t.p[1], t.p[2]);
    const int o2 = orient3d(a, b, t.p[2], t.p[0]);
    const bool negative = o0 < 0 || o1 < 0 || o2 < 0;
    const bool positive = o0 > 0 || o1 > 0 || o2 > 0;
    return !(negative && positive);
}

/// Exact closed segment-segment test in 3D; segments may be single points.
BULLETGPU_HD bool segmentsMeet3d(const Vec3d& a, const Vec3d& b, const Vec3d& c, const Vec3d& d) {
    if (orient3d(a, b, c, d) != 0) return false;
    // Coplanar: at least one coordinate projection is injective on their plane (or line), and
    // every projection of meeting segments meets, so all three decide exactly.
    return segmentsMeet2d(a, b, c, d, 1, 2) && segmentsMeet2d(a, b, c, d, 2, 0) && segmentsMeet2d(a, b, c, d, 0, 1);
}

/// Whether two triangles meet when each has corners strictly on both sides of the other's plane
/// (`sides1`: t1's corners against t2's plane, `sides2` the reverse; both offPlane() and not
/// separated()): the test of Devillers and Guigue ("Faster triangle-triangle intersection
/// tests", 2002). Each triangle is turned cyclically so that its alone corner comes first, and
/// the other's last two corners are swapped where that corner lies on the negative side; the
/// segments where each triangle crosses the other's plane then overlap exactly when two more
/// orient3d signs are not positive. Exact, as orient3d is; touching counts as meeting.
BULLETGPU_HD bool straddlingTrianglesMeet(const Triangle3d& t1, const PlaneSides& sides1, const Triangle3d& t2,
                                          const PlaneSides& sides2) {
    const int a1 = sides1.alone(), a2 = sides2.alone();
    const Vec3d* p1 = &t1.p[a1];
    const Vec3d* q1 = &t1.p[(a1 + 1) % 3];
    const Vec3d* r1 = &t1.p[(a1 + 2) % 3];
    const Vec3d* p2 = &t2.p[a2];
    const Vec3d* q2 = &t2.p[(a2 + 1) % 3];
    const Vec3d* r2 = &t2.p[(a2 + 2) % 3];
    if (sides1.s[a1] < 0) {
        const Vec3d* swap = q2;
        q2 = r2;
        r2 = swap;
    }
    if (sides2.s[a2] < 0) {
        const Vec3d* swap = q1;
        q1 = r1;
        r1 = swap;
    }
    return orient3d(*p1, *q1, *p2, *q2) <= 0 && orient3d(*p1, *r1, *r2, *p2) <= 0;
}

/// How two meeting triangles were classified by trianglesIntersect (input of the segment).
struct TriangleTestDetail {
    int axis[2];         ///< Projection axis of each triangle, -1 when degenerate.
    PlaneSides sides[2]; ///< Corners of the first against the second's plane, and the reverse.
};

/// True when an edge of `other` meets non-degenerate triangle `flat` (projection axis k),
/// given the sides of other's corners against flat's plane.
BULLETGPU_HD bool edgesMeetTriangle(const Triangle3d& other, const PlaneSides& sides, const Triangle3d& flat, int k) {
    for (int e = 0; e < 3; ++e) {
        const int f = (e + 1) % 3;
        if (segmentMeetsTriangle(other.p[e], other.p[f], sides.s[e], sides.s[f], flat, k)) return true;
    }
    return false;
}

/// The exact test: true when the closed triangles share a point. Fills `detail` for
/// intersectionSegment. `minors1` and `minors2` are the triangles' plane minors when computed
/// beforehand (planeMinors of their corners), or null.
BULLETGPU_HD bool trianglesIntersect(const Triangle3d& t1, const PlaneMinors* minors1, const Triangle3d& t2,
                                     const PlaneMinors* minors2, TriangleTestDetail& detail) {
    // Closed triangles whose boxes are apart share no point.
    if (extentsApart(extentOf(t1.p, 3), extentOf(t2.p, 3), 0.0)) return false;
    // A corner off a degenerate triangle's "plane" is impossible (every orient3d is zero), so
    // strict separation by either plane is decided first, before classifying the triangles.
    detail.sides[0] = minors2 != nullptr ? planeSides(t2, *minors2, t1) : planeSides(t2, t1);
    if (detail.sides[0].separated()) return false;
    detail.sides[1] = minors1 != nullptr ? planeSides(t1, *minors1, t2) : planeSides(t1, t2);
    if (detail.sides[1].separated()) return false;
    // In general position (every corner strictly off the other's plane, so neither triangle is
    // degenerate) two more signs decide.
    const bool straddling = detail.sides[0].offPlane() && detail.sides[1].offPlane();
    if (straddling && !straddlingTrianglesMeet(t1, detail.sides[0], t2, detail.sides[1])) return false;
    detail.axis[0] = projectionAxis(t1);
    detail.axis[1] = projectionAxis(t2);
    if (straddling) return true;
    if (detail.axis[0] >= 0 && detail.axis[1] >= 0) {
        return edgesMeetTriangle(t1, detail.sides[0], t2, detail.axis[1]) ||
               edgesMeetTriangle(t2, detail.sides[1], t1, detail.axis[0]);
    }
    if (detail.axis[0] >= 0 || detail.axis[1] >= 0) {
        // One is degenerate: its edges cover it.
        const bool firstFlat = detail.axis[0] >= 0;
        const Triangle3d& flat = firstFlat ? t1 : t2;
        const Triangle3d& other = firstFlat ? t2 : t1;
        return edgesMeetTriangle(other, detail.sides[firstFlat ? 1 : 0], flat, detail.axis[firstFlat ? 0 : 1]);
    }
    for (int e = 0; e < 3; ++e) {
        for (int f = 0; f < 3; ++f) {
            if (segmentsMeet3d(t1.p[e], t1.p[(e + 1) % 3], t2.p[f], t2.p[(f + 1) % 3])) return true;
        }
    }
    return false;
}

/// The exact test, the plane minors computed here.
BULLETGPU_HD bool trianglesIntersect(const Triangle3d& t1, const Triangle3d& t2, TriangleTestDetail& detail) {
    return trianglesIntersect(t1, nullptr, t2, nullptr, detail);
}

/// The exact test without detail.
BULLETGPU_HD bool trianglesIntersect(const Triangle3d& t1, const Triangle3d& t2) {
    TriangleTestDetail detail;
    return trianglesIntersect(t1, t2, detail);
}

} // namespace bulletgpu
