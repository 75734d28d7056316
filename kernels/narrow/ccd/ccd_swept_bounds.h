// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/aabb_ops.h"
#include "kernels/common/float_box.h"
#include "kernels/common/host_device.h"
#include "kernels/narrow/ccd/ccd_queries.h"
#include "kernels/narrow/geometry/mesh_features.h"
#include "kernels/narrow/geometry/proximity_bounds.h"

#include <cstdint>

/// The swept bounds of the whole-frame CCD's culling (ccd_frame_query.h), per element on the CPU
/// and CUDA: the feature pair and mesh view types, each feature's swept extent and growth, and
/// the grown swept triangle boxes the tree is built over.
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
///   within eta + tolerance, off the exact values by err_k < 2^-45 M (ccd_queries.h);
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

} // namespace bulletgpu
