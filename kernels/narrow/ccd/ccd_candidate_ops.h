// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/narrow/ccd/ccd_plane_filter.h"
#include "kernels/narrow/ccd/ccd_queries.h"
#include "kernels/narrow/ccd/ccd_swept_bounds.h"

#include <cstdint>

/// Per-element work of the whole-frame CCD (ccd_frame_query.h), shared by the CPU and CUDA
/// paths: the expansion of a triangle pair into its feature pairs, each once, the filters in
/// front of the exact tests (swept extents, ccd_swept_bounds.h; planes, ccd_plane_filter.h), and
/// the exact test of one feature pair.

namespace bulletgpu {

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

/// The allowance of firstBoxSeparated per unit of magnitude (2^-40).
constexpr double cFirstBoxAllowance = 0x1p-40;

/// True when the exact test would rule the pair out on its first parameter box along an axis
/// (x0, x1 as gatherPair gives them): on some axis every corner value of F over [0, 1]^3
/// (ccd_queries.h) exceeds eta + 2^-40 M, or every one is below its negative, M the largest
/// |coordinate|. The corners are the differences of the points at t = 0 and t = 1: vertex-face
/// p - a, p - b, p - c and p - b - c + a; edge-edge a_i - b_j. Computed here with at most 3
/// roundings, off the exact values by less than 2^-48 M, and the exact test's own corner values
/// are off by less than 2^-45 M while its threshold is eta + 2^-45 M rounded up (ccd_queries.h):
/// a pair ruled out here is ruled out there, so it has no hit (when maxIterations > 0). The
/// points must be finite.
BULLETGPU_HD bool firstBoxSeparated(const Vec3d x0[4], const Vec3d x1[4], bool vertexFace, double eta) {
    double magnitude = 0;
    for (int i = 0; i < 4; ++i) {
        for (int k = 0; k < 3; ++k)
            magnitude = ccdplane::larger(magnitude, ccdplane::larger(fabs(x0[i][k]), fabs(x1[i][k])));
    }
    const double limit = (eta + cFirstBoxAllowance * magnitude) + cCcdTinyAllowance;
    bool separated = false;
    for (int k = 0; k < 3; ++k) {
        double lo = HUGE_VAL, hi = -HUGE_VAL;
        for (int end = 0; end < 2; ++end) {
            const Vec3d* x = end == 0 ? x0 : x1;
            double corner[4];
            if (vertexFace) {
                corner[0] = x[0][k] - x[1][k];
                corner[1] = x[0][k] - x[2][k];
                corner[2] = x[0][k] - x[3][k];
                corner[3] = ((x[0][k] - x[2][k]) - x[3][k]) + x[1][k];
            } else {
                corner[0] = x[0][k] - x[2][k];
                corner[1] = x[0][k] - x[3][k];
                corner[2] = x[1][k] - x[2][k];
                corner[3] = x[1][k] - x[3][k];
            }
            for (double c : corner) {
                lo = ccdplane::smaller(lo, c);
                hi = ccdplane::larger(hi, c);
            }
        }
        separated |= lo > limit || hi < -limit;
    }
    return separated;
}

/// True when the pair's features (x0, x1 as gatherPair gives them) stay farther apart than
/// sqrt(3) `margin` all through the step (planeSeparated): the exact test, whose hits lie within
/// `margin` on every axis (see ccd_swept_bounds.h), would report none.
BULLETGPU_HD bool pairPlaneSeparated(const Vec3d x0[4], const Vec3d x1[4], bool vertexFace, double margin) {
    const double distance = ccd::cSqrt3Up * margin * (1.0 + cPlaneFilterAllowance);
    using ccdplane::sub;
    if (!vertexFace) {
        return planeSeparated(sub(x0[2], x0[0]), sub(x1[2], x1[0]), sub(x0[1], x0[0]), sub(x1[1], x1[0]),
                              sub(x0[3], x0[2]), sub(x1[3], x1[2]), distance);
    }
    return planeSeparated(sub(x0[0], x0[1]), sub(x1[0], x1[1]), sub(x0[2], x0[1]), sub(x1[2], x1[1]), sub(x0[3], x0[1]),
                          sub(x1[3], x1[1]), distance);
}

/// What the expansion of triangle pairs counts.
struct CcdExpandCounts {
    std::uint64_t featurePairs = 0;   ///< Feature pairs owned (shared vertices excluded).
    std::uint64_t firstBoxCulled = 0; ///< Of those near by their extents, ruled out by firstBoxSeparated.
    std::uint64_t planeCulled = 0;    ///< Of the rest, ruled out by the plane filter.
};

/// Emits through `emit(pair)` every feature pair of triangles ta (of A) and tb (of B) that the
/// pair owns and the filter keeps: A's owned vertices against tb, ta against B's owned vertices
/// (a self query: tb's owned vertices against ta, as VertexFace), A's owned edges against B's.
/// Self queries skip features sharing a vertex and order edge pairs a < b. Each feature pair
/// of two meshes (or unordered pair of one) comes from exactly one triangle pair: the owners of
/// its vertex or edges, and the triangle. `prefilter`: also drop the pairs that
/// firstBoxSeparated (at `eta`) or pairPlaneSeparated rule out. Adds to `counts`.
template <typename Emit>
BULLETGPU_HD void expandTrianglePair(const CcdMeshView& meshA, std::uint32_t ta, const CcdMeshView& meshB,
                                     std::uint32_t tb, bool self, bool prefilter, double eta, Emit& emit,
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
        if (prefilter) {
            Vec3d x0[4], x1[4];
            gatherPair(meshA, meshB, pair, x0, x1);
            const bool vertexFace = pair.kind != CcdFeatureKind::EdgeEdge;
            if (firstBoxSeparated(x0, x1, vertexFace, eta)) {
                ++counts.firstBoxCulled;
                return;
            }
            if (pairPlaneSeparated(x0, x1, vertexFace, margin)) {
                ++counts.planeCulled;
                return;
            }
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
