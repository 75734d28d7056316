// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/narrow/geometry/mesh_features.h"
#include "kernels/narrow/geometry/proximity_bounds.h"
#include "kernels/narrow/geometry/proximity_contact.h"
#include "kernels/narrow/geometry/triangle_intersection.h"

#include <cstddef>
#include <cstdint>

/// The contact query's work on one candidate triangle pair (per-element, CPU and CUDA): the
/// feature pairs the two triangles own (mesh_features.h), each tested at the query distance
/// (proximity_contact.h), and the exact intersection test of the triangles themselves.

namespace bulletgpu {

/// What the contact query reads of one mesh.
struct ProximityMeshView {
    TriangleSource source;              ///< Triangles in the query's frame.
    const std::uint32_t* indices;       ///< Three vertex indices per triangle.
    const std::uint32_t* triangleEdges; ///< MeshFeatures::triangleEdges.
    const FeatureOwnership* owned;      ///< MeshFeatures::owned.
    const std::uint32_t* weld;          ///< Canonical vertex of each vertex (weldVertices), or null:
                                        ///< self exclusions then compare vertex indices.
    std::uint32_t mesh;                 ///< Index reported in contacts.
};

/// The identity of vertex v for self exclusions: its canonical vertex with welds, else itself.
BULLETGPU_HD std::uint32_t vertexIdentity(const ProximityMeshView& view, std::uint32_t v) {
    return view.weld != nullptr ? view.weld[v] : v;
}

/// True when vertex v is (or is welded to) a corner of triangle t.
BULLETGPU_HD bool isCornerOf(const ProximityMeshView& view, std::uint32_t v, std::uint32_t t) {
    const std::uint32_t id = vertexIdentity(view, v);
    const std::uint32_t* corner = view.indices + 3 * static_cast<std::size_t>(t);
    return id == vertexIdentity(view, corner[0]) || id == vertexIdentity(view, corner[1]) ||
           id == vertexIdentity(view, corner[2]);
}

/// True when two triangles share (or weld) a vertex.
BULLETGPU_HD bool trianglesTouchInIndices(const ProximityMeshView& view, std::uint32_t a, std::uint32_t b) {
    const std::uint32_t* corner = view.indices + 3 * static_cast<std::size_t>(a);
    return isCornerOf(view, corner[0], b) || isCornerOf(view, corner[1], b) || isCornerOf(view, corner[2], b);
}

/// One side of a triangle as an edge feature: its id and endpoints, lower vertex index first.
struct EdgeSide {
    std::uint32_t edge; ///< Edge id (MeshFeatures::edges).
    std::uint32_t low;  ///< Lower vertex index.
    std::uint32_t high; ///< Higher vertex index.
    Vec3d lowPoint;     ///< Position of `low`.
    Vec3d highPoint;    ///< Position of `high`.
};

/// Side `side` of triangle t (corners `tri`).
BULLETGPU_HD EdgeSide edgeSide(const ProximityMeshView& view, std::uint32_t t, const Triangle3d& tri, int side) {
    const std::uint32_t* corner = view.indices + 3 * static_cast<std::size_t>(t);
    const int next = side == 2 ? 0 : side + 1;
    const bool ordered = corner[side] <= corner[next];
    const int low = ordered ? side : next, high = ordered ? next : side;
    return EdgeSide{view.triangleEdges[3 * static_cast<std::size_t>(t) + side], corner[low], corner[high], tri.p[low],
                    tri.p[high]};
}

/// True when every corner of `t` lies farther than `margin` from the plane of `s`, all on one
/// side: then no point of t comes within `margin` of s, so the pair holds no reported contact
/// (featureFilterMargin bounds how far apart a reported pair's features can be). Sliver
/// triangles (sine of their sharpest angle under 1e-3), whose computed normal may point
/// anywhere, are never said to be apart; otherwise the normal's direction is off by far less
/// than the margin's 2^-20 (M + d) allowance covers.
BULLETGPU_HD bool apartByPlane(const Triangle3d& s, const Triangle3d& t, double margin) {
    const Vec3d e1 = vecSub(s.p[1], s.p[0]), e2 = vecSub(s.p[2], s.p[0]);
    const Vec3d n = vecCross(e1, e2);
    const double nn = vecDot(n, n);
    if (!(nn > 1e-6 * vecDot(e1, e1) * vecDot(e2, e2))) return false;
    const double limit = margin * sqrt(nn) * (1 + 1e-9);
    double lo = INFINITY, hi = -INFINITY;
    for (int c = 0; c < 3; ++c) {
        const double h = vecDot(n, vecSub(t.p[c], s.p[0]));
        lo = h < lo ? h : lo;
        hi = h > hi ? h : hi;
    }
    return lo > limit || hi < -limit;
}

/// Tests candidate pair (ta of a, tb of b) at `distance` and passes every contact to emit(contact),
/// in no particular order. A self query (a and b the same view) takes each unordered pair once:
/// both vertex-triangle directions are VertexFace records, edge pairs go smaller edge first,
/// intersecting triangles smaller triangle first; features that share (or weld) a vertex, and
/// triangles that do, are skipped.
template <typename Emit>
BULLETGPU_HD void candidateProximity(const ProximityMeshView& a, std::uint32_t ta, const ProximityMeshView& b,
                                     std::uint32_t tb, bool self, double distance, Emit& emit) {
    Triangle3d scratchA, scratchB;
    const Triangle3d& triA = a.source.triangle(ta, scratchA);
    const Triangle3d& triB = b.source.triangle(tb, scratchB);
    const FeatureOwnership ownedA = a.owned[ta], ownedB = b.owned[tb];
    // Feature pairs whose extents lie apart by more than the filter's margin are skipped without
    // changing any decision (proximity_bounds.h); so is the whole pair when the triangles' do.
    const FeatureExtent extentA = extentOf(triA.p, 3), extentB = extentOf(triB.p, 3);
    const double margin = featureFilterMargin(fmax(extentMagnitude(extentA), extentMagnitude(extentB)), distance);
    if (extentsApart(extentA, extentB, margin)) return;
    if (apartByPlane(triA, triB, margin) || apartByPlane(triB, triA, margin)) return;
    ProximityContact contact;
    for (int i = 0; i < 3; ++i) {
        if ((ownedA & ownsVertexBit(i)) == 0 || extentsApart(extentOf(&triA.p[i], 1), extentB, margin)) continue;
        const std::uint32_t v = a.indices[3 * static_cast<std::size_t>(ta) + i];
        if (self && isCornerOf(a, v, tb)) continue;
        if (vertexFaceContact(a.mesh, v, triA.p[i], b.mesh, tb, triB, distance, contact)) emit(contact);
    }
    for (int j = 0; j < 3; ++j) {
        if ((ownedB & ownsVertexBit(j)) == 0 || extentsApart(extentOf(&triB.p[j], 1), extentA, margin)) continue;
        const std::uint32_t v = b.indices[3 * static_cast<std::size_t>(tb) + j];
        if (self) {
            if (!isCornerOf(a, v, ta) && vertexFaceContact(a.mesh, v, triB.p[j], a.mesh, ta, triA, distance, contact))
                emit(contact);
        } else if (faceVertexContact(a.mesh, ta, triA, b.mesh, v, triB.p[j], distance, contact)) {
            emit(contact);
        }
    }
    for (int i = 0; i < 3; ++i) {
        if ((ownedA & ownsEdgeBit(i)) == 0) continue;
        const EdgeSide ea = edgeSide(a, ta, triA, i);
        for (int j = 0; j < 3; ++j) {
            if ((ownedB & ownsEdgeBit(j)) == 0) continue;
            const EdgeSide eb = edgeSide(b, tb, triB, j);
            const Vec3d endsA[2] = {ea.lowPoint, ea.highPoint}, endsB[2] = {eb.lowPoint, eb.highPoint};
            if (extentsApart(extentOf(endsA, 2), extentOf(endsB, 2), margin)) continue;
            if (self) {
                const std::uint32_t a0 = vertexIdentity(a, ea.low), a1 = vertexIdentity(a, ea.high);
                const std::uint32_t b0 = vertexIdentity(a, eb.low), b1 = vertexIdentity(a, eb.high);
                if (a0 == b0 || a0 == b1 || a1 == b0 || a1 == b1) continue;
            }
            const bool swap = self && eb.edge < ea.edge;
            const EdgeSide& first = swap ? eb : ea;
            const EdgeSide& second = swap ? ea : eb;
            if (edgeEdgeContact(a.mesh, first.edge, first.lowPoint, first.highPoint, b.mesh, second.edge,
                                second.lowPoint, second.highPoint, distance, contact)) {
                emit(contact);
            }
        }
    }
    if (self && trianglesTouchInIndices(a, ta, tb)) return;
    const bool swap = self && tb < ta;
    const Triangle3d& first = swap ? triB : triA;
    const Triangle3d& second = swap ? triA : triB;
    TriangleTestDetail detail;
    if (trianglesIntersect(first, swap ? b.source.plane(tb) : a.source.plane(ta), second,
                           swap ? a.source.plane(ta) : b.source.plane(tb), detail)) {
        emit(intersectionContact(a.mesh, swap ? tb : ta, first, b.mesh, swap ? ta : tb, second));
    }
}

} // namespace bulletgpu
