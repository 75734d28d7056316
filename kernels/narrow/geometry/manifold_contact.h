// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/narrow/geometry/feature_distance.h"
#include "kernels/narrow/geometry/triangle_ops.h"

#include <bulletgpu/NarrowContacts.h>

#include <cmath>
#include <cstdint>

/// From the contact query's feature pairs to contacts a rigid-body solver can use (per-element,
/// CPU and CUDA), for meshes that bound solids or are thin two-sided surfaces.
///
/// The contact query reports unsigned feature distances; a solver needs a normal that pushes the
/// solids apart and a depth that is negative when they overlap. Each surface gives its faces'
/// unit normals in its own frame: outward when it is closed (it bounds a solid), or, for an open
/// surface (a terrain, a sheet), turned towards the other surface's centre. Then:
///  - vertex-face (and face-vertex): the face's normal; depth = the vertex's height over the
///    face's plane. Kept only when the vertex projects inside the face (the closest point is the
///    projection): a vertex beside the face is the business of the neighbouring face or edge.
///  - every vertex and edge must face the other surface along the contact normal (supportsVertex,
///    supportsEdge: no neighbour beyond the plane through it), so that a feature turned away (a
///    box's side edge near a floor edge, a floor vertex in line with a box's side) gives no
///    contact pointing sideways: the solver would take those for walls (Bullet's internal-edge
///    problem).
///  - edge-edge: along the closest points, kept only when that points out of B and into A by their
///    edge normals (the mean of an edge's faces' normals; for a two-sided surface, towards the
///    other's centre), so never a penetration: the direction between edges that passed each other
///    says nothing about the way out, and intersecting triangles carry that depth. Parallel edges
///    are skipped: the vertex-face pairs at their ends carry that contact.
///  - intersecting triangles: the shallower of (A's deepest corner behind B's face) and (B's
///    deepest corner behind A's face), along that face's normal; when one surface is two-sided,
///    only the other's corners behind its face.
/// Then each surface's margin is added: depth -= marginA + marginB, and the point on B moves
/// out along the normal by marginB (Bullet's convention: pointOnA = pointOnB + normal * depth).

namespace bulletgpu {

/// No vertex (an edge with a single triangle has one opposite corner).
constexpr std::uint32_t cNoVertex = 0xffffffffu;

/// One mesh of a pair as the physics contacts see it (arrays in its own frame).
struct ContactSurface {
    const float* positions = nullptr;               ///< x, y, z per vertex.
    const std::uint32_t* indices = nullptr;         ///< Three vertices per triangle.
    const float* faceNormals = nullptr;             ///< Unit normal per triangle (zero when degenerate).
    const float* edgeNormals = nullptr;             ///< Unit mean of its faces' normals per edge (MeshFeatures order).
    const std::uint32_t* edges = nullptr;           ///< Two vertices per edge (MeshFeatures::edges).
    const std::uint32_t* neighbourStarts = nullptr; ///< Vertex v's neighbours: [starts[v], starts[v + 1]).
    const std::uint32_t* neighbours = nullptr;      ///< Vertices sharing an edge, per vertex.
    const std::uint32_t* edgeOpposite = nullptr;    ///< Third corners of an edge's first two triangles.
    const double* transform = nullptr;              ///< Row-major 3x4 [R | t] to the world.
    Vec3d centre{};                                 ///< The surface's centre in the world.
    double margin = 0;                              ///< Thickness added outside the triangles.
    bool twoSided = false;                          ///< Open: normals face the other surface's centre.
};

/// R v for the rotation of a row-major 3x4 transform.
BULLETGPU_HD Vec3d rotateVector(const double* m, const Vec3d& v) {
    Vec3d out;
    for (int r = 0; r < 3; ++r) out.v[r] = (m[4 * r] * v.v[0] + m[4 * r + 1] * v.v[1]) + m[4 * r + 2] * v.v[2];
    return out;
}

/// Vector `i` of a float array of triples, rotated to the world.
BULLETGPU_HD Vec3d worldVector(const ContactSurface& s, const float* triples, std::uint32_t i) {
    return rotateVector(s.transform, toVec3d(triples + 3 * static_cast<std::size_t>(i)));
}

/// `n` turned towards `otherCentre` from `at` when the surface is two-sided.
BULLETGPU_HD Vec3d orientNormal(const ContactSurface& s, const Vec3d& n, const Vec3d& at, const Vec3d& otherCentre) {
    if (s.twoSided && vecDot(n, vecSub(otherCentre, at)) < 0) return vecScale(-1, n);
    return n;
}

/// v / |v|, or zero when v is zero.
BULLETGPU_HD Vec3d unitOrZero(const Vec3d& v) {
    const double length = sqrt(vecDot(v, v));
    return length > 0 ? vecScale(1 / length, v) : Vec3d{{0, 0, 0}};
}

/// Whether the offset `v` between a vertex and its closest point on a face runs along the face's
/// unit normal `n` (the vertex projects inside the face), to a relative tolerance.
BULLETGPU_HD bool alongNormal(const Vec3d& v, const Vec3d& n, double scale) {
    const double s = vecDot(v, n);
    const Vec3d lateral = vecAddScaled(v, -s, n);
    const double tolerance = 1e-5 * fabs(s) + 1e-7 * scale;
    return vecDot(lateral, lateral) <= tolerance * tolerance;
}

/// Whether the world direction `d` is an outward normal of the surface at vertex `v`: no
/// neighbour of v lies beyond the plane through v with normal d (to a relative tolerance), so
/// that v is where the surface meets a plane moving in along -d. A vertex's cone is checked only
/// with neighbours (null arrays: every direction passes).
BULLETGPU_HD bool supportsVertex(const ContactSurface& s, std::uint32_t v, const Vec3d& d) {
    if (s.neighbourStarts == nullptr) return true;
    const Vec3d at = worldVector(s, s.positions, v);
    for (std::uint32_t i = s.neighbourStarts[v]; i < s.neighbourStarts[v + 1]; ++i) {
        const Vec3d offset = vecSub(worldVector(s, s.positions, s.neighbours[i]), at);
        if (vecDot(d, offset) > 1e-6 * sqrt(vecDot(offset, offset))) return false;
    }
    return true;
}

/// Whether the world direction `d` is an outward normal of the surface along edge `e`: the third
/// corners of its triangles lie on or behind the plane through the edge with normal d.
BULLETGPU_HD bool supportsEdge(const ContactSurface& s, std::uint32_t e, const Vec3d& d) {
    if (s.edgeOpposite == nullptr) return true;
    const Vec3d at = worldVector(s, s.positions, s.edges[2 * e]);
    for (int k = 0; k < 2; ++k) {
        const std::uint32_t w = s.edgeOpposite[2 * e + k];
        if (w == cNoVertex) continue;
        const Vec3d offset = vecSub(worldVector(s, s.positions, w), at);
        if (vecDot(d, offset) > 1e-6 * sqrt(vecDot(offset, offset))) return false;
    }
    return true;
}

/// The deepest corner of `t` behind the plane through `on` with unit normal `n`: its depth
/// (>= 0) and index.
BULLETGPU_HD double deepestBehind(const Triangle3d& t, const Vec3d& on, const Vec3d& n, int& corner) {
    double depth = 0;
    corner = 0;
    for (int c = 0; c < 3; ++c) {
        const double behind = -vecDot(vecSub(t.p[c], on), n);
        if (behind > depth) {
            depth = behind;
            corner = c;
        }
    }
    return depth;
}

/// Turns contact `c` between surfaces a and b (its points in the world) into a solver contact
/// `out`: pointA and pointB on the surfaces with margins, the unit normal from B to A, and
/// distance the signed depth (negative when they overlap). Returns false for a contact the
/// rules above skip or whose normal is undefined (degenerate faces).
BULLETGPU_HD bool manifoldContact(const ProximityContact& c, const ContactSurface& a, const ContactSurface& b,
                                  ProximityContact& out) {
    const Vec3d pA = toVec3d(c.pointA), pB = toVec3d(c.pointB);
    const double scale = 1 + fmax(fabs(pB.v[0]), fmax(fabs(pB.v[1]), fabs(pB.v[2])));
    const Vec3d offset = vecSub(pA, pB);
    Vec3d normal;
    double signedDistance;
    Vec3d onB = pB;
    switch (static_cast<ProximityKind>(c.kind)) {
        case ProximityKind::VertexFace: {
            normal = orientNormal(b, worldVector(b, b.faceNormals, c.featureB), pB, a.centre);
            if (vecDot(normal, normal) == 0 || !alongNormal(offset, normal, scale)) return false;
            if (!supportsVertex(a, c.featureA, vecScale(-1, normal))) return false;
            signedDistance = vecDot(offset, normal);
            break;
        }
        case ProximityKind::FaceVertex: {
            const Vec3d nA = orientNormal(a, worldVector(a, a.faceNormals, c.featureA), pA, b.centre);
            if (vecDot(nA, nA) == 0 || !alongNormal(offset, nA, scale)) return false;
            normal = vecScale(-1, nA);
            if (!supportsVertex(b, c.featureB, normal)) return false;
            signedDistance = vecDot(offset, normal);
            break;
        }
        case ProximityKind::EdgeEdge: {
            const std::uint32_t* ea = a.edges + 2 * static_cast<std::size_t>(c.featureA);
            const std::uint32_t* eb = b.edges + 2 * static_cast<std::size_t>(c.featureB);
            const Vec3d dA = vecSub(worldVector(a, a.positions, ea[1]), worldVector(a, a.positions, ea[0]));
            const Vec3d dB = vecSub(worldVector(b, b.positions, eb[1]), worldVector(b, b.positions, eb[0]));
            const Vec3d across = vecCross(dA, dB);
            const double sine2 = 1e-6 * vecDot(dA, dA) * vecDot(dB, dB);
            if (vecDot(across, across) <= sine2) return false;
            const double length = sqrt(vecDot(offset, offset));
            Vec3d outOfB = worldVector(b, b.edgeNormals, c.featureB);
            if (b.twoSided || vecDot(outOfB, outOfB) == 0) outOfB = vecSub(a.centre, pB);
            Vec3d outOfA = worldVector(a, a.edgeNormals, c.featureA);
            if (a.twoSided || vecDot(outOfA, outOfA) == 0) outOfA = vecSub(b.centre, pA);
            normal = length > 1e-9 * scale ? vecScale(1 / length, offset) : unitOrZero(across);
            if (length <= 1e-9 * scale && vecDot(normal, outOfB) < 0) normal = vecScale(-1, normal);
            if (vecDot(normal, outOfB) < 0 || vecDot(normal, outOfA) > 0) return false;
            if (!supportsEdge(b, c.featureB, normal) || !supportsEdge(a, c.featureA, vecScale(-1, normal)))
                return false;
            signedDistance = length;
            break;
        }
        case ProximityKind::TrianglesIntersect: {
            const Triangle3d tA = loadTriangle(a.positions, a.indices, c.featureA, a.transform);
            const Triangle3d tB = loadTriangle(b.positions, b.indices, c.featureB, b.transform);
            const Vec3d nA = orientNormal(a, worldVector(a, a.faceNormals, c.featureA), tA.p[0], b.centre);
            const Vec3d nB = orientNormal(b, worldVector(b, b.faceNormals, c.featureB), tB.p[0], a.centre);
            // A two-sided surface (a terrain) has no depth behind it to measure the other's
            // corners by: its normal alone decides.
            const bool hasA = vecDot(nA, nA) > 0 && !(b.twoSided && !a.twoSided);
            const bool hasB = vecDot(nB, nB) > 0 && !(a.twoSided && !b.twoSided);
            if (!hasA && !hasB) return false;
            int cornerA = 0, cornerB = 0;
            const double depthA = hasB ? deepestBehind(tA, tB.p[0], nB, cornerA) : INFINITY;
            const double depthB = hasA ? deepestBehind(tB, tA.p[0], nA, cornerB) : INFINITY;
            if (depthA <= depthB) {
                normal = nB;
                signedDistance = -depthA;
                onB = vecAddScaled(tA.p[cornerA], depthA, nB);
            } else {
                normal = vecScale(-1, nA);
                signedDistance = -depthB;
                onB = tB.p[cornerB];
            }
            break;
        }
        default:
            return false;
    }
    out = c;
    const double depth = signedDistance - a.margin - b.margin;
    const Vec3d surfaceB = vecAddScaled(onB, b.margin, normal);
    const Vec3d surfaceA = vecAddScaled(surfaceB, depth, normal);
    for (int k = 0; k < 3; ++k) {
        out.pointA[k] = static_cast<float>(surfaceA.v[k]);
        out.pointB[k] = static_cast<float>(surfaceB.v[k]);
        out.normal[k] = static_cast<float>(normal.v[k]);
    }
    out.distance = static_cast<float>(depth);
    return true;
}

} // namespace bulletgpu
