// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/aabb_ops.h"
#include "kernels/common/float_box.h"
#include "kernels/common/host_device.h"
#include "kernels/narrow/ccd/ccd_plane_filter.h"
#include "kernels/narrow/ccd/ccd_queries.h"
#include "kernels/narrow/geometry/mesh_features.h"
#include "kernels/narrow/geometry/proximity_bounds.h"

#include <cstdint>

/// Per-element work of the whole-frame CCD (ccd_frame_query.h), shared by the CPU and CUDA
/// paths: swept boxes grown so that culling loses no impact, the expansion of a triangle pair
/// into its feature pairs, and the exact test of one feature pair.
///
/// The bound. A feature pair is given to the exact test (vertexFaceCcd, edgeEdgeCcd) only when
/// the swept extents of its two features (the box of their points at t = 0 and t = 1, which
/// holds every position during the step) lie within g_1 + g_2 of each other on every axis, where
/// a feature's growth is
///   g = reach / 2 + 8 tau W + 2^-20 (M + reach) + 2^-1000,
/// reach = eta + CcdOptions::tolerance, tau = max(CcdOptions::timeTolerance, 2^-40), W the
/// largest width of its swept extent and M its largest |coordinate|. What that margin covers:
/// - a true contact: features within eta at some time are within eta on every axis;
/// - a hit the exact test reports on its tolerance: a parameter box whose corner values all lie
///   within eta + tolerance, off the exact values by err_k <= 2^-48 M (ccd_queries.h);
/// - a hit reported on its time stop (a box of width tau in t that is not separated): when t
///   was last split its spread was the widest, so the box's spread in u and v is at most
///   2 tau V and its spread in t at most tau V, V the relative motion and edge lengths (at most
///   W_1 + W_2); the corner (t_lo, u_lo, v_lo), a true point of both features, is then within
///   eta + err_k + 5 tau (W_1 + W_2) on every axis. The margin carries 8 tau per feature.
/// The 2^-20 M term covers the rounding of the computed extents and gaps; 2^-1000 the subnormal
/// allowance of the exact test. Hits reported undecided (iteration limit, queue capacity) of
/// pairs beyond the margin are not covered; they are hits without a decision.
///
/// A triangle's box is its swept extent grown by its own g plus 2^-24 M more (the rounding of the
/// float box) and rounded outward to float. A triangle's extent holds its features', and g grows
/// with M and W, so two features that pass the filter lie in triangles whose boxes overlap: the
/// tree finds every pair the filter keeps.

namespace bulletgpu {

/// The features' allowance per unit of magnitude (2^-20).
constexpr double cCcdAllowance = 9.5367431640625e-07;
/// The triangles' extra allowance per unit of magnitude for the float rounding (2^-24).
constexpr double cCcdBoxAllowance = 5.9604644775390625e-08;
/// The absolute allowance of every growth (2^-1000, above the exact test's subnormal bound).
constexpr double cCcdTinyAllowance = 0x1p-1000;

/// The kinds of feature pair (mesh A first, mesh B second; one mesh twice in a self query).
enum class CcdFeatureKind : std::uint8_t {
    VertexFace = 0, ///< A vertex of A against a triangle of B.
    FaceVertex = 1, ///< A triangle of A against a vertex of B (pair queries only).
    EdgeEdge = 2,   ///< An edge of A against an edge of B (MeshFeatures edges; a < b in a self query).
};

/// One feature pair (12 bytes).
struct CcdFeaturePair {
    std::uint32_t a;     ///< Feature of mesh A: vertex, triangle or edge by `kind`.
    std::uint32_t b;     ///< Feature of mesh B.
    CcdFeatureKind kind; ///< What a and b are.
};

/// Strict order of feature pairs: kind, then a, then b.
BULLETGPU_HD bool featurePairBefore(const CcdFeaturePair& x, const CcdFeaturePair& y) {
    if (x.kind != y.kind) return x.kind < y.kind;
    return x.a < y.a || (x.a == y.a && x.b < y.b);
}

/// A feature's swept extent and its growth (see the bound), computed once per feature (56 bytes).
struct SweptBounds {
    FeatureExtent extent; ///< Box of the feature's points at t = 0 and t = 1.
    double growth;        ///< featureGrowth of that extent.
};

/// What the candidate stage reads of one mesh: positions at t = 0 and t = 1, triangles, features.
struct CcdMeshView {
    const Vec3d* x0;                    ///< Vertex positions at t = 0.
    const Vec3d* x1;                    ///< Vertex positions at t = 1.
    const std::uint32_t* indices;       ///< Three vertex indices per triangle.
    const std::uint32_t* edges;         ///< Two vertex indices per edge (MeshFeatures::edges).
    const std::uint32_t* triangleEdges; ///< Edge of each triangle's sides (MeshFeatures).
    const FeatureOwnership* owned;      ///< Owner bits of each triangle (MeshFeatures).
    const SweptBounds* vertexBounds;    ///< Of each vertex (sweptBoundsOf), or null.
    const SweptBounds* edgeBounds;      ///< Of each edge, or null.
    const SweptBounds* faceBounds;      ///< Of each triangle, or null (null: no expansion).
};

/// The growth of a swept extent with largest |coordinate| `magnitude` and largest width `width`
/// (see the bound above); `allowance` per unit of magnitude.
BULLETGPU_HD double ccdGrowth(double magnitude, double width, double eta, const CcdOptions& options, double allowance) {
    const double reach = eta + options.tolerance;
    const double tau = options.timeTolerance > ccd::cMinWidth ? options.timeTolerance : ccd::cMinWidth;
    return ((0.5 * reach + 8.0 * tau * width) + allowance * (magnitude + reach)) + cCcdTinyAllowance;
}

/// The largest width of an extent.
BULLETGPU_HD double extentWidth(const FeatureExtent& e) {
    double w = 0;
    for (int k = 0; k < 3; ++k) w = e.hi[k] - e.lo[k] > w ? e.hi[k] - e.lo[k] : w;
    return w;
}

/// The swept extent of `count` (at most 3) points of `mesh`, given by vertex index.
BULLETGPU_HD FeatureExtent sweptExtent(const CcdMeshView& mesh, const std::uint32_t* vertices, int count) {
    Vec3d points[6];
    for (int i = 0; i < count; ++i) {
        points[i] = mesh.x0[vertices[i]];
        points[count + i] = mesh.x1[vertices[i]];
    }
    return extentOf(points, 2 * count);
}

/// The growth of a feature with swept extent `e`.
BULLETGPU_HD double featureGrowth(const FeatureExtent& e, double eta, const CcdOptions& options) {
    return ccdGrowth(extentMagnitude(e), extentWidth(e), eta, options, cCcdAllowance);
}

/// The box of triangle t's swept extent, grown (see the bound) and rounded outward to float.
BULLETGPU_HD FloatBox sweptTriangleBox(const CcdMeshView& mesh, std::uint32_t t, double eta,
                                       const CcdOptions& options) {
    const FeatureExtent e = sweptExtent(mesh, mesh.indices + 3 * t, 3);
    const double magnitude = extentMagnitude(e);
    const double growth = ccdGrowth(magnitude, extentWidth(e), eta, options, cCcdAllowance + cCcdBoxAllowance);
    FloatBox box;
    for (int k = 0; k < 3; ++k) {
        box.lo[k] = floatBelow(e.lo[k] - growth);
        box.hi[k] = floatAbove(e.hi[k] + growth);
    }
    return box;
}

/// The vertices of feature `index` of `kind`'s side (vertex, triangle or edge) and their count.
BULLETGPU_HD int featureVertices(const CcdMeshView& mesh, bool face, bool edge, std::uint32_t index,
                                 std::uint32_t* out) {
    if (edge) {
        out[0] = mesh.edges[2 * index];
        out[1] = mesh.edges[2 * index + 1];
        return 2;
    }
    if (face) {
        for (int c = 0; c < 3; ++c) out[c] = mesh.indices[3 * index + c];
        return 3;
    }
    out[0] = index;
    return 1;
}

/// The vertices of both features of `pair`: A's in a[0..countA), B's in b[0..countB).
BULLETGPU_HD void pairVertices(const CcdMeshView& meshA, const CcdMeshView& meshB, const CcdFeaturePair& pair,
                               std::uint32_t a[3], int& countA, std::uint32_t b[3], int& countB) {
    const bool edge = pair.kind == CcdFeatureKind::EdgeEdge;
    countA = featureVertices(meshA, pair.kind == CcdFeatureKind::FaceVertex, edge, pair.a, a);
    countB = featureVertices(meshB, pair.kind == CcdFeatureKind::VertexFace, edge, pair.b, b);
}

/// True when the features of a self query's pair share a vertex.
BULLETGPU_HD bool sharesVertex(const std::uint32_t* a, int countA, const std::uint32_t* b, int countB) {
    bool shared = false;
    for (int i = 0; i < countA; ++i) {
        for (int j = 0; j < countB; ++j) shared |= a[i] == b[j];
    }
    return shared;
}

/// The swept bounds of `count` (at most 3) points of `mesh`, given by vertex index.
BULLETGPU_HD SweptBounds sweptBoundsOf(const CcdMeshView& mesh, const std::uint32_t* vertices, int count, double eta,
                                       const CcdOptions& options) {
    SweptBounds bounds;
    bounds.extent = sweptExtent(mesh, vertices, count);
    bounds.growth = featureGrowth(bounds.extent, eta, options);
    return bounds;
}

/// The swept bounds of a vertex, triangle (`face`) or edge (`edge`) of `mesh`.
BULLETGPU_HD const SweptBounds& featureBounds(const CcdMeshView& mesh, bool face, bool edge, std::uint32_t index) {
    return edge ? mesh.edgeBounds[index] : (face ? mesh.faceBounds[index] : mesh.vertexBounds[index]);
}

/// True when the swept extents of the pair's features lie within the sum of their growths on
/// every axis (see the bound), which it writes to `margin`.
BULLETGPU_HD bool sweptFeaturesNear(const CcdMeshView& meshA, const CcdMeshView& meshB, const CcdFeaturePair& pair,
                                    double& margin) {
    const bool edge = pair.kind == CcdFeatureKind::EdgeEdge;
    const SweptBounds& a = featureBounds(meshA, pair.kind == CcdFeatureKind::FaceVertex, edge, pair.a);
    const SweptBounds& b = featureBounds(meshB, pair.kind == CcdFeatureKind::VertexFace, edge, pair.b);
    margin = a.growth + b.growth;
    return !extentsApart(a.extent, b.extent, margin);
}

/// The four points of `pair` at t = 0 and t = 1, in the order of the exact tests: the vertex,
/// then the face's corners; or edge A's ends, then edge B's.
BULLETGPU_HD void gatherPair(const CcdMeshView& meshA, const CcdMeshView& meshB, const CcdFeaturePair& pair,
                             Vec3d x0[4], Vec3d x1[4]) {
    std::uint32_t a[3] = {0, 0, 0}, b[3] = {0, 0, 0};
    int countA, countB;
    pairVertices(meshA, meshB, pair, a, countA, b, countB);
    const bool faceFirst = pair.kind == CcdFeatureKind::FaceVertex;
    const CcdMeshView& first = faceFirst ? meshB : meshA;
    const CcdMeshView& second = faceFirst ? meshA : meshB;
    const std::uint32_t* firstVertices = faceFirst ? b : a;
    const std::uint32_t* secondVertices = faceFirst ? a : b;
    const int firstCount = faceFirst ? countB : countA;
    for (int i = 0; i < 4; ++i) {
        const bool inFirst = i < firstCount;
        const CcdMeshView& mesh = inFirst ? first : second;
        const std::uint32_t v = inFirst ? firstVertices[i] : secondVertices[i - firstCount];
        x0[i] = mesh.x0[v];
        x1[i] = mesh.x1[v];
    }
}

/// True when the pair's features stay farther apart than sqrt(3) `margin` all through the step
/// (planeSeparated): the exact test, whose hits lie within `margin` on every axis (see the
/// bound), would report none.
BULLETGPU_HD bool pairPlaneSeparated(const CcdMeshView& meshA, const CcdMeshView& meshB, const CcdFeaturePair& pair,
                                     double margin) {
    Vec3d x0[4], x1[4];
    gatherPair(meshA, meshB, pair, x0, x1);
    const double distance = ccd::cSqrt3Up * margin * (1.0 + cPlaneFilterAllowance);
    using ccdplane::sub;
    if (pair.kind == CcdFeatureKind::EdgeEdge) {
        return planeSeparated(sub(x0[2], x0[0]), sub(x1[2], x1[0]), sub(x0[1], x0[0]), sub(x1[1], x1[0]),
                              sub(x0[3], x0[2]), sub(x1[3], x1[2]), distance);
    }
    return planeSeparated(sub(x0[0], x0[1]), sub(x1[0], x1[1]), sub(x0[2], x0[1]), sub(x1[2], x1[1]), sub(x0[3], x0[1]),
                          sub(x1[3], x1[1]), distance);
}

/// What the expansion of triangle pairs counts.
struct CcdExpandCounts {
    std::uint64_t featurePairs = 0; ///< Feature pairs owned (shared vertices excluded).
    std::uint64_t planeCulled = 0;  ///< Of those near by their extents, ruled out by the plane filter.
};

/// Emits through `emit(pair)` every feature pair of triangles ta (of A) and tb (of B) that the
/// pair owns and the filter keeps: A's owned vertices against tb, ta against B's owned vertices
/// (a self query: tb's owned vertices against ta, as VertexFace), A's owned edges against B's.
/// Self queries skip features sharing a vertex and order edge pairs a < b. Each feature pair
/// of two meshes (or unordered pair of one) comes from exactly one triangle pair: the owners of
/// its vertex or edges, and the triangle. `planeFilter`: also drop plane-separated pairs
/// (pairPlaneSeparated). Adds to `counts`.
template <typename Emit>
BULLETGPU_HD void expandTrianglePair(const CcdMeshView& meshA, std::uint32_t ta, const CcdMeshView& meshB,
                                     std::uint32_t tb, bool self, bool planeFilter, Emit& emit,
                                     CcdExpandCounts& counts) {
    const auto offer = [&](CcdFeaturePair pair) {
        if (self) {
            std::uint32_t a[3] = {0, 0, 0}, b[3] = {0, 0, 0};
            int countA, countB;
            pairVertices(meshA, meshB, pair, a, countA, b, countB);
            if (sharesVertex(a, countA, b, countB)) return;
        }
        ++counts.featurePairs;
        double margin;
        if (!sweptFeaturesNear(meshA, meshB, pair, margin)) return;
        if (planeFilter && pairPlaneSeparated(meshA, meshB, pair, margin)) {
            ++counts.planeCulled;
            return;
        }
        if (self && pair.kind == CcdFeatureKind::EdgeEdge && pair.a > pair.b) {
            const std::uint32_t swap = pair.a;
            pair.a = pair.b;
            pair.b = swap;
        }
        emit(pair);
    };
    const FeatureOwnership ownedA = meshA.owned[ta], ownedB = meshB.owned[tb];
    for (int c = 0; c < 3; ++c) {
        if ((ownedA & ownsVertexBit(c)) != 0) offer({meshA.indices[3 * ta + c], tb, CcdFeatureKind::VertexFace});
        if ((ownedB & ownsVertexBit(c)) == 0) continue;
        if (self) {
            offer({meshB.indices[3 * tb + c], ta, CcdFeatureKind::VertexFace});
        } else {
            offer({ta, meshB.indices[3 * tb + c], CcdFeatureKind::FaceVertex});
        }
    }
    for (int i = 0; i < 3; ++i) {
        if ((ownedA & ownsEdgeBit(i)) == 0) continue;
        for (int j = 0; j < 3; ++j) {
            if ((ownedB & ownsEdgeBit(j)) == 0) continue;
            offer({meshA.triangleEdges[3 * ta + i], meshB.triangleEdges[3 * tb + j], CcdFeatureKind::EdgeEdge});
        }
    }
}

/// The exact test of one feature pair (vertexFaceCcd or edgeEdgeCcd, the default queue).
BULLETGPU_HD CcdResult testFeaturePair(const CcdMeshView& meshA, const CcdMeshView& meshB, const CcdFeaturePair& pair,
                                       double eta, const CcdOptions& options) {
    Vec3d x0[4], x1[4];
    gatherPair(meshA, meshB, pair, x0, x1);
    CcdResult result;
    if (pair.kind == CcdFeatureKind::EdgeEdge) {
        edgeEdgeCcd(x0, x1, eta, options, result);
    } else {
        vertexFaceCcd(x0, x1, eta, options, result);
    }
    return result;
}

} // namespace bulletgpu
