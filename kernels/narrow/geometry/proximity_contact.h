// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/NarrowContacts.h>

#include "kernels/common/host_device.h"
#include "kernels/narrow/geometry/feature_distance.h"
#include "kernels/narrow/geometry/triangle_ops.h"

#include <cmath>
#include <cstdint>

/// The contact query's records and the per-element functions that make them (issue 33, part 2),
/// shared by the CPU and CUDA paths and by the oracle (kernels/reference/brute_force_proximity.h).
///
/// Features. A mesh's features are its vertices (those used by a triangle), its triangles
/// (faces) and its edges. Edge e is the e-th of the mesh's distinct vertex pairs (min index,
/// max index) over every triangle's three sides, in increasing (min, max) order (a triangle with
/// a repeated index has a zero-length edge (v, v)).
///
/// The decision. A feature pair is reported when the squared distance of its closest points,
/// computed in double by feature_distance.h from the double coordinates the exact triangle test
/// reads (float positions, moved by the mesh's transform with transformPoint), is <= d * d
/// computed in double: decided in double, and certified against the culling (the engine's grown
/// boxes never drop such a pair; proximity_query.h).

namespace bulletgpu {

/// The unit vector along v, or `fallback` when v is zero (or not finite when normalised).
BULLETGPU_HD Vec3d unitOr(const Vec3d& v, const Vec3d& fallback) {
    const double length = sqrt(vecDot(v, v));
    // Fails for zero, infinity and NaN alike.
    if (!(length > 0 && length <= 1.7976931348623157e308)) return fallback;
    return vecScale(1 / length, v);
}

/// The +z axis: the normal of last resort (a degenerate feature at distance 0).
BULLETGPU_HD Vec3d zAxis() { return Vec3d{{0, 0, 1}}; }

/// The unit winding normal (b - a) x (c - a) of a triangle, or +z when it has zero area.
BULLETGPU_HD Vec3d windingNormal(const Triangle3d& t) {
    return unitOr(vecCross(vecSub(t.p[1], t.p[0]), vecSub(t.p[2], t.p[0])), zAxis());
}

/// A unit vector perpendicular to v (v crossed with the axis of its smallest component), or +z
/// when v is zero.
BULLETGPU_HD Vec3d perpendicularTo(const Vec3d& v) {
    const double x = fabs(v.v[0]), y = fabs(v.v[1]), z = fabs(v.v[2]);
    const int axis = x <= y && x <= z ? 0 : (y <= z ? 1 : 2);
    Vec3d e{{0, 0, 0}};
    e.v[axis] = 1;
    return unitOr(vecCross(v, e), zAxis());
}

/// `v` negated when it points away from `towards` (kept when perpendicular).
BULLETGPU_HD Vec3d orientedAlong(const Vec3d& v, const Vec3d& towards) {
    return vecDot(v, towards) < 0 ? vecScale(-1, v) : v;
}

/// The record of a feature pair at `points` with unit normal `normal` (from B to A); its
/// distance is the square root of points.distanceSquared.
BULLETGPU_HD ProximityContact makeContact(std::uint32_t meshA, std::uint32_t meshB, ProximityKind kind,
                                          std::uint32_t featureA, std::uint32_t featureB, const FeaturePoints& points,
                                          const Vec3d& normal) {
    ProximityContact c;
    c.meshA = meshA;
    c.meshB = meshB;
    c.kind = static_cast<std::uint32_t>(kind);
    c.featureA = featureA;
    c.featureB = featureB;
    for (int k = 0; k < 3; ++k) {
        c.pointA[k] = static_cast<float>(points.onA.v[k]);
        c.pointB[k] = static_cast<float>(points.onB.v[k]);
        c.normal[k] = static_cast<float>(normal.v[k]);
    }
    c.distance = static_cast<float>(sqrt(points.distanceSquared));
    c.reserved = 0;
    return c;
}

/// The record of a separated feature pair: the normal is (onA - onB) normalised when the
/// points differ, else `touchingNormal` (unit, from B to A).
BULLETGPU_HD ProximityContact featureContact(std::uint32_t meshA, std::uint32_t meshB, ProximityKind kind,
                                             std::uint32_t featureA, std::uint32_t featureB,
                                             const FeaturePoints& points, const Vec3d& touchingNormal) {
    return makeContact(meshA, meshB, kind, featureA, featureB, points,
                       unitOr(vecSub(points.onA, points.onB), touchingNormal));
}

/// True when the feature pair is reported at distance `distance` (the decision in double).
BULLETGPU_HD bool withinDistance(const FeaturePoints& points, double distance) {
    return points.distanceSquared <= distance * distance;
}

/// Vertex `vertex` (of mesh A) against triangle `face` (of mesh B, corners `t`): writes the
/// contact and returns true when within `distance`. Touching normal: the face's winding normal
/// (the vertex is taken to lie on the face's front side), +z for a zero-area face.
BULLETGPU_HD bool vertexFaceContact(std::uint32_t meshA, std::uint32_t vertex, const Vec3d& p, std::uint32_t meshB,
                                    std::uint32_t face, const Triangle3d& t, double distance,
                                    ProximityContact& contact) {
    const FeaturePoints points = pointTriangleClosest(p, t.p[0], t.p[1], t.p[2]);
    if (!withinDistance(points, distance)) return false;
    contact = featureContact(meshA, meshB, ProximityKind::VertexFace, vertex, face, points, windingNormal(t));
    return true;
}

/// Triangle `face` (of mesh A) against vertex `vertex` (of mesh B): the same closest points as
/// vertexFaceContact, swapped. Touching normal: minus the face's winding normal (B taken to lie
/// on A's front side).
BULLETGPU_HD bool faceVertexContact(std::uint32_t meshA, std::uint32_t face, const Triangle3d& t, std::uint32_t meshB,
                                    std::uint32_t vertex, const Vec3d& p, double distance, ProximityContact& contact) {
    const FeaturePoints found = pointTriangleClosest(p, t.p[0], t.p[1], t.p[2]);
    if (!withinDistance(found, distance)) return false;
    const FeaturePoints points{found.onB, found.onA, found.distanceSquared};
    contact =
        featureContact(meshA, meshB, ProximityKind::FaceVertex, face, vertex, points, vecScale(-1, windingNormal(t)));
    return true;
}

/// Edge [a0, a1] (edge `edgeA` of mesh A, from its lower to its higher vertex index) against
/// edge [b0, b1] (`edgeB` of mesh B). Touching normal: the edges' cross product, oriented from
/// B's midpoint towards A's; for parallel edges a perpendicular of the longer one oriented the
/// same way; +z for two zero-length edges.
BULLETGPU_HD bool edgeEdgeContact(std::uint32_t meshA, std::uint32_t edgeA, const Vec3d& a0, const Vec3d& a1,
                                  std::uint32_t meshB, std::uint32_t edgeB, const Vec3d& b0, const Vec3d& b1,
                                  double distance, ProximityContact& contact) {
    const FeaturePoints points = segmentsClosest(a0, a1, b0, b1);
    if (!withinDistance(points, distance)) return false;
    Vec3d touching = zAxis();
    if (points.distanceSquared == 0) {
        const Vec3d da = vecSub(a1, a0), db = vecSub(b1, b0);
        const Vec3d towards = vecSub(vecAddScaled(a0, 0.5, da), vecAddScaled(b0, 0.5, db));
        const Vec3d perpendicular = perpendicularTo(vecDot(da, da) >= vecDot(db, db) ? da : db);
        touching = orientedAlong(unitOr(vecCross(da, db), perpendicular), towards);
    }
    contact = featureContact(meshA, meshB, ProximityKind::EdgeEdge, edgeA, edgeB, points, touching);
    return true;
}

/// The penetration estimate of intersecting triangles tA (of mesh A) and tB (of mesh B): the
/// depth of A's deepest corner behind B's plane (winding normal nB; zero when no corner is
/// behind), and of B's deepest corner behind A's plane (nA). The smaller of the two wins (A's
/// into B on a tie, or when A's plane is degenerate; B's into A when only B's plane is): for
/// A behind B the normal is nB (push A out along B's front), pointA the corner and pointB its
/// projection onto B's plane; for B behind A the normal is -nA, pointB the corner and pointA its
/// projection onto A's plane. distance is minus the depth. Two zero-area triangles give depth 0,
/// the first corners and +z. The estimate suits thin shells meeting at shallow depth (cloth); it
/// is no signed distance of closed volumes.
BULLETGPU_HD ProximityContact intersectionContact(std::uint32_t meshA, std::uint32_t triangleA, const Triangle3d& tA,
                                                  std::uint32_t meshB, std::uint32_t triangleB, const Triangle3d& tB) {
    const Vec3d crossA = vecCross(vecSub(tA.p[1], tA.p[0]), vecSub(tA.p[2], tA.p[0]));
    const Vec3d crossB = vecCross(vecSub(tB.p[1], tB.p[0]), vecSub(tB.p[2], tB.p[0]));
    const bool planeA = vecDot(crossA, crossA) > 0, planeB = vecDot(crossB, crossB) > 0;
    const Vec3d nA = unitOr(crossA, zAxis()), nB = unitOr(crossB, zAxis());
    // Deepest corner of `t` behind the plane through `origin` with normal `n`.
    const auto deepest = [](const Triangle3d& t, const Vec3d& origin, const Vec3d& n, int& corner) {
        double depth = 0;
        corner = 0;
        for (int i = 0; i < 3; ++i) {
            const double behind = -vecDot(n, vecSub(t.p[i], origin));
            if (behind > depth) {
                depth = behind;
                corner = i;
            }
        }
        return depth;
    };
    int cornerA = 0, cornerB = 0;
    const double depthA = planeB ? deepest(tA, tB.p[0], nB, cornerA) : INFINITY;
    const double depthB = planeA ? deepest(tB, tA.p[0], nA, cornerB) : INFINITY;
    FeaturePoints points{tA.p[0], tB.p[0], 0};
    Vec3d normal = zAxis();
    double depth = 0;
    if (planeB && depthA <= depthB) {
        depth = depthA;
        points.onA = tA.p[cornerA];
        points.onB = vecAddScaled(points.onA, depth, nB);
        normal = nB;
    } else if (planeA) {
        depth = depthB;
        points.onB = tB.p[cornerB];
        points.onA = vecAddScaled(points.onB, depth, nA);
        normal = vecScale(-1, nA);
    }
    ProximityContact c =
        makeContact(meshA, meshB, ProximityKind::TrianglesIntersect, triangleA, triangleB, points, normal);
    c.distance = static_cast<float>(-depth);
    return c;
}

/// The contacts' order: (meshA, meshB, kind, featureA, featureB); the engine and the oracle
/// sort by it.
BULLETGPU_HD bool proximityBefore(const ProximityContact& x, const ProximityContact& y) {
    if (x.meshA != y.meshA) return x.meshA < y.meshA;
    if (x.meshB != y.meshB) return x.meshB < y.meshB;
    if (x.kind != y.kind) return x.kind < y.kind;
    if (x.featureA != y.featureA) return x.featureA < y.featureA;
    return x.featureB < y.featureB;
}

/// Point `point` (coordinates p) against triangle `triangle` (corners t): writes the contact and
/// returns true when their distance, computed as for VertexFace, is within `distance`.
BULLETGPU_HD bool pointTriangleContact(std::uint32_t point, const Vec3d& p, std::uint32_t triangle, const Triangle3d& t,
                                       double distance, PointContact& contact) {
    const FeaturePoints points = pointTriangleClosest(p, t.p[0], t.p[1], t.p[2]);
    if (!withinDistance(points, distance)) return false;
    const Vec3d winding = windingNormal(t);
    const Vec3d away = vecSub(points.onA, points.onB);
    const Vec3d normal = unitOr(away, winding);
    const double separation = sqrt(points.distanceSquared);
    contact.point = point;
    contact.triangle = triangle;
    for (int k = 0; k < 3; ++k) {
        contact.onMesh[k] = static_cast<float>(points.onB.v[k]);
        contact.normal[k] = static_cast<float>(normal.v[k]);
    }
    contact.distance = static_cast<float>(vecDot(away, winding) < 0 ? -separation : separation);
    contact.reserved = 0;
    return true;
}

} // namespace bulletgpu
