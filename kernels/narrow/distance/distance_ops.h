// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/narrow/distance/rss_tree.h"
#include "kernels/narrow/distance/triangle_distance.h"

#include <cmath>
#include <cstdint>

/// Per-step math of the distance traversal, shared by the CPU and CUDA paths: the frames of a
/// query, the child pairs of a node pair with their lower bounds, and the distance of a leaf
/// pair.

namespace bulletgpu {

/// Row-major 3x4 [R | t] of the identity.
constexpr double cIdentityTransform[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};

/// Where a query reads one mesh: its vertices, triangles, tree and transform to the world.
struct DistanceMeshView {
    const float* positions;       ///< x, y, z per vertex (own frame).
    const std::uint32_t* indices; ///< Three per triangle.
    const RssNode* nodes;         ///< Its RSS tree, depth first.
    const double* transform;      ///< Row-major 3x4 [R | t] to the world.
};

/// `out` = A^-1 B for rigid transforms A and B (row-major 3x4 [R | t]): B's frame in A's,
/// taking A's rotation's inverse as its transpose.
BULLETGPU_HD void relativeTransform(const double* a, const double* b, double* out) {
    const double dt[3] = {b[3] - a[3], b[7] - a[7], b[11] - a[11]};
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) out[4 * r + c] = (a[r] * b[c] + a[4 + r] * b[4 + c]) + a[8 + r] * b[8 + c];
        out[4 * r + 3] = (a[r] * dt[0] + a[4 + r] * dt[1]) + a[8 + r] * dt[2];
    }
}

/// Largest |entry| of the translation of a 3x4 transform.
BULLETGPU_HD double translationMagnitude(const double* m) {
    const double x = fabs(m[3]), y = fabs(m[7]), z = fabs(m[11]);
    return x > y ? (x > z ? x : z) : (y > z ? y : z);
}

/// The allowance subtracted from every lower bound of a query between meshes whose vertices
/// are at most `magnitudeA` and `magnitudeB` from their origins, placed by `transformA` and
/// `transformB`: cRssQuerySlack times the largest magnitude any computed point can have. It
/// covers, about 2^17 times over, the rounding of the relative transform, of the placed RSS and
/// of the gap (a few dozen roundings of numbers of that magnitude), the difference between
/// distances in A's frame and in the world where the triangles are measured, and the RSS fit.
BULLETGPU_HD double querySlack(double magnitudeA, const double* transformA, double magnitudeB,
                               const double* transformB) {
    const double scale =
        2 * (magnitudeA + magnitudeB + translationMagnitude(transformA) + translationMagnitude(transformB));
    return cRssQuerySlack * scale;
}

/// The distance between triangle `ta` of A and `tb` of B, both moved to the world frame
/// (`mayMeet` false: their volumes proved them apart, triangleDistance skips the exact test).
BULLETGPU_HD TriangleDistance leafPairDistance(const DistanceMeshView& a, std::uint32_t ta, const DistanceMeshView& b,
                                               std::uint32_t tb, bool mayMeet) {
    const Triangle3d t1 = loadTriangle(a.positions, a.indices, ta, a.transform);
    const Triangle3d t2 = loadTriangle(b.positions, b.indices, tb, b.transform);
    return triangleDistance(t1, t2, mayMeet);
}

/// A pair of nodes of two RSS trees to visit, with the lower bound that put it on a list.
struct DistanceNodePair {
    std::uint32_t a; ///< Node of A's tree.
    std::uint32_t b; ///< Node of B's tree.
    double bound;    ///< Lower bound of the distance below both, less the query's allowance.
};

/// True when both nodes of the pair are leaves.
BULLETGPU_HD bool isLeafPair(const RssNode* nodesA, const RssNode* nodesB, const DistanceNodePair& pair) {
    return (nodesA[pair.a].child & nodesB[pair.b].child & cLeafFlag) != 0;
}

/// True when a pair of nodes `na`, `nb` (not two leaves) is split on A's side: the larger node,
/// or the one that is not a leaf.
BULLETGPU_HD bool splitsA(const RssNode& na, const RssNode& nb) {
    const bool leafA = (na.child & cLeafFlag) != 0, leafB = (nb.child & cLeafFlag) != 0;
    return !leafA && (leafB || na.span >= nb.span);
}

/// The two child pairs of a pair that is not two leaves (left child first), in A's frame
/// (`relative`: B's frame in A's, relativeTransform): each bound is rssLowerBound, which may
/// stop early past `cutoff` (the running best plus the allowance), less `slack`.
BULLETGPU_HD void childPairs(const RssNode* nodesA, const RssNode* nodesB, const double* relative,
                             const DistanceNodePair& pair, double cutoff, double slack, DistanceNodePair* out) {
    const RssNode& na = nodesA[pair.a];
    const RssNode& nb = nodesB[pair.b];
    if (splitsA(na, nb)) {
        const PlacedRss placedB = placeRss(nb.rss, relative);
        const std::uint32_t child[2] = {pair.a + 1, na.child};
        for (int i = 0; i < 2; ++i) {
            const double raw = rssLowerBound(placeRss(nodesA[child[i]].rss, nullptr), placedB, cutoff);
            out[i] = DistanceNodePair{child[i], pair.b, raw - slack};
        }
    } else {
        const PlacedRss placedA = placeRss(na.rss, nullptr);
        const std::uint32_t child[2] = {pair.b + 1, nb.child};
        for (int i = 0; i < 2; ++i) {
            const double raw = rssLowerBound(placedA, placeRss(nodesB[child[i]].rss, relative), cutoff);
            out[i] = DistanceNodePair{pair.a, child[i], raw - slack};
        }
    }
}

/// The distance of a leaf pair: its triangles measured in the world frame, the exact test run
/// only when the pair's bound does not prove them apart.
BULLETGPU_HD TriangleDistance leafPairDistance(const DistanceMeshView& a, const DistanceMeshView& b,
                                               const DistanceNodePair& pair, std::uint32_t* ta, std::uint32_t* tb) {
    *ta = a.nodes[pair.a].child & ~cLeafFlag;
    *tb = b.nodes[pair.b].child & ~cLeafFlag;
    // A positive bound (past the allowance) proves the triangles apart: no exact test.
    return leafPairDistance(a, *ta, b, *tb, pair.bound <= 0);
}

/// True when (d1, a1, b1) precedes (d2, a2, b2): the order that picks the reported pair.
BULLETGPU_HD bool pairPrecedes(double d1, std::uint32_t a1, std::uint32_t b1, double d2, std::uint32_t a2,
                               std::uint32_t b2) {
    if (d1 != d2) return d1 < d2;
    return a1 != a2 ? a1 < a2 : b1 < b2;
}

} // namespace bulletgpu
