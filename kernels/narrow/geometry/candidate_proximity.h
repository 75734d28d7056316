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

/// Bit 3 i + j of the result is set when corner i of triangle a and corner j of triangle b
/// are the same vertex (or welded); 0 when the triangles share none.
BULLETGPU_HD unsigned sharedCorners(const ProximityMeshView& view, std::uint32_t a, std::uint32_t b) {
    const std::uint32_t* ca = view.indices + 3 * static_cast<std::size_t>(a);
    const std::uint32_t* cb = view.indices + 3 * static_cast<std::size_t>(b);
    std::uint32_t ia[3], ib[3];
    for (int k = 0; k < 3; ++k) {
        ia[k] = vertexIdentity(view, ca[k]);
        ib[k] = vertexIdentity(view, cb[k]);
    }
    unsigned shared = 0;
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) shared |= static_cast<unsigned>(ia[i] == ib[j]) << (3 * i + j);
    }
    return shared;
}

/// The sharedCorners bits of corner i of the first triangle (against every corner of the second).
BULLETGPU_HD unsigned cornerBitsOfFirst(int i) { return 7u << (3 * i); }

/// The sharedCorners bits of corner j of the second triangle (against every corner of the first).
BULLETGPU_HD unsigned cornerBitsOfSecond(int j) { return 0x49u << j; }

/// The feature pairs two triangles test, from their ownership bits and sharedCorners bits: bit
/// i of `vertices` for corner i of the first against the second, bit 3 + j for corner j of the
/// second against the first; bit 3 i + j of `edges` for side i of the first against side j of
/// the second. A feature pair is in when each triangle owns its feature and they share no corner.
BULLETGPU_HD void featureMasks(FeatureOwnership ownedA, FeatureOwnership ownedB, unsigned shared, unsigned& vertices,
                               unsigned& edges) {
    vertices = (ownedA & 7u) | static_cast<unsigned>(ownedB & 7u) << 3;
    edges = 0;
    for (int i = 0; i < 3; ++i) {
        if ((ownedA & ownsEdgeBit(i)) != 0) edges |= static_cast<unsigned>(ownedB >> 3 & 7u) << (3 * i);
    }
    if (shared == 0) return;
    for (int c = 0; c < 3; ++c) {
        if ((shared & cornerBitsOfFirst(c)) != 0) vertices &= ~(1u << c);
        if ((shared & cornerBitsOfSecond(c)) != 0) vertices &= ~(8u << c);
    }
    for (int i = 0; i < 3; ++i) {
        const unsigned cornersA = cornerBitsOfFirst(i) | cornerBitsOfFirst(i == 2 ? 0 : i + 1);
        for (int j = 0; j < 3; ++j) {
            const unsigned cornersB = cornerBitsOfSecond(j) | cornerBitsOfSecond(j == 2 ? 0 : j + 1);
            if ((shared & cornersA & cornersB) != 0) edges &= ~(1u << (3 * i + j));
        }
    }
}

/// The index of the lowest set bit of `bits` (not zero).
BULLETGPU_HD int lowestBit(unsigned bits) {
#ifdef __CUDA_ARCH__
    return __ffs(static_cast<int>(bits)) - 1;
#else
    return __builtin_ctz(bits);
#endif
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
/// (featureFilterMargin bounds how far apart a reported pair's features can be). `minors`, when
/// not null, are planeMinors of s (their normal is the cross product computed here). Sliver
/// triangles (sine of their sharpest angle under 1e-3), whose computed normal may point
/// anywhere, are never said to be apart; otherwise the normal's direction is off by far less
/// than the margin's 2^-20 (M + d) allowance covers.
BULLETGPU_HD bool apartByPlane(const Triangle3d& s, const PlaneMinors* minors, const Triangle3d& t, double margin) {
    const Vec3d e1 = vecSub(s.p[1], s.p[0]), e2 = vecSub(s.p[2], s.p[0]);
    const Vec3d n =
        minors != nullptr ? Vec3d{{minors->normal[0], minors->normal[1], minors->normal[2]}} : vecCross(e1, e2);
    const double nn = vecDot(n, n);
    if (!(nn > 1e-6 * vecDot(e1, e1) * vecDot(e2, e2))) return false;
    double lo = INFINITY, hi = -INFINITY;
    for (int c = 0; c < 3; ++c) {
        const double h = vecDot(n, vecSub(t.p[c], s.p[0]));
        lo = h < lo ? h : lo;
        hi = h > hi ? h : hi;
    }
    // Every corner farther than margin |n| (1 + 1e-9) on one side, compared squared.
    const double beyond = margin * margin * nn * (1 + 2e-9);
    return (lo > 0 && lo * lo > beyond) || (hi < 0 && hi * hi > beyond);
}

/// Tests candidate pair (ta of a, tb of b) at `distance` and passes every contact to emit(contact),
/// in no particular order. A self query (a and b the same view) takes each unordered pair once:
/// both vertex-triangle directions are VertexFace records, edge pairs go smaller edge first,
/// intersecting triangles smaller triangle first; features that share (or weld) a vertex, and
/// triangles that do, are skipped. With `vertexFaceOnly`, only the vertex-triangle pairs are
/// tested (no edge pairs, no intersection test).
template <typename Emit>
BULLETGPU_HD void candidateProximity(const ProximityMeshView& a, std::uint32_t ta, const ProximityMeshView& b,
                                     std::uint32_t tb, bool self, double distance, bool vertexFaceOnly, Emit& emit) {
    const FeatureOwnership ownedA = a.owned[ta], ownedB = b.owned[tb];
    // The feature pairs to test, as masks: owned by these triangles and sharing no corner (bit i
    // of `vertices` for corner i of A against B, bit 3 + j for corner j of B against A; bit 3 i + j
    // of `edges` for side i of A against side j of B). Mesh neighbours (about half the candidates
    // of a self query) often own none, and never test the triangle pair itself.
    const unsigned shared = self ? sharedCorners(a, ta, tb) : 0u;
    unsigned vertices = 0, edges = 0;
    featureMasks(ownedA, ownedB, shared, vertices, edges);
    if (vertexFaceOnly) edges = 0;
    if ((shared != 0 || vertexFaceOnly) && (vertices | edges) == 0) return;
    Triangle3d scratchA, scratchB;
    const Triangle3d& triA = a.source.triangle(ta, scratchA);
    const Triangle3d& triB = b.source.triangle(tb, scratchB);
    // Feature pairs whose extents lie apart by more than the filter's margin are skipped without
    // changing any decision (proximity_bounds.h); so is the whole pair when the triangles' do.
    const FeatureExtent extentA = extentOf(triA.p, 3), extentB = extentOf(triB.p, 3);
    const double margin = featureFilterMargin(largerOf(extentMagnitude(extentA), extentMagnitude(extentB)), distance);
    if (extentsApart(extentA, extentB, margin)) return;
    // The planes rarely part neighbours (they meet at a shared corner), so only others try them.
    if (shared == 0 &&
        (apartByPlane(triA, a.source.plane(ta), triB, margin) || apartByPlane(triB, b.source.plane(tb), triA, margin)))
        return;
    ProximityContact contact;
    for (; vertices != 0; vertices &= vertices - 1) {
        const int bit = lowestBit(vertices);
        if (bit < 3) {
            if (extentsApart(extentOf(&triA.p[bit], 1), extentB, margin)) continue;
            const std::uint32_t v = a.indices[3 * static_cast<std::size_t>(ta) + bit];
            if (vertexFaceContact(a.mesh, v, triA.p[bit], b.mesh, tb, triB, distance, contact)) emit(contact);
            continue;
        }
        const int j = bit - 3;
        if (extentsApart(extentOf(&triB.p[j], 1), extentA, margin)) continue;
        const std::uint32_t v = b.indices[3 * static_cast<std::size_t>(tb) + j];
        if (self) {
            if (vertexFaceContact(a.mesh, v, triB.p[j], a.mesh, ta, triA, distance, contact)) emit(contact);
        } else if (faceVertexContact(a.mesh, ta, triA, b.mesh, v, triB.p[j], distance, contact)) {
            emit(contact);
        }
    }
    for (; edges != 0; edges &= edges - 1) {
        const int bit = lowestBit(edges), i = bit / 3, j = bit % 3;
        const Vec3d endsA[2] = {triA.p[i], triA.p[i == 2 ? 0 : i + 1]};
        const Vec3d endsB[2] = {triB.p[j], triB.p[j == 2 ? 0 : j + 1]};
        if (extentsApart(extentOf(endsA, 2), extentOf(endsB, 2), margin)) continue;
        const EdgeSide ea = edgeSide(a, ta, triA, i), eb = edgeSide(b, tb, triB, j);
        const bool swap = self && eb.edge < ea.edge;
        const EdgeSide& first = swap ? eb : ea;
        const EdgeSide& second = swap ? ea : eb;
        if (edgeEdgeContact(a.mesh, first.edge, first.lowPoint, first.highPoint, b.mesh, second.edge, second.lowPoint,
                            second.highPoint, distance, contact)) {
            emit(contact);
        }
    }
    if (shared != 0 || vertexFaceOnly) return;
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
