// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/narrow/distance/rss_ops.h"
#include "kernels/narrow/hierarchy/lbvh_ops.h"

#include <cstdint>
#include <string>
#include <vector>

/// A tree of rectangle swept spheres over the triangles of one mesh, for distance queries.

namespace bulletgpu {

/// One node of an RssTree in depth-first order (72 bytes): an internal node's left child is
/// the next node, its right child is `child`.
struct RssNode {
    NarrowRss rss;       ///< Contains every triangle below (in the mesh's own frame).
    std::uint32_t child; ///< Right child, or cLeafFlag | triangle for a leaf.
    float span;          ///< rssSpan(rss): the traversal splits the larger node of a pair.
};
static_assert(sizeof(RssNode) == 72, "an RSS, a child and a size");

/// A binary tree of RSS over a mesh's triangles, built top down on OpenMP threads: each node's
/// rectangle lies along the principal axes of the corners below it (their covariance, ordered
/// by the corners' spread along them), and its triangles are split at the median of their
/// centroids along its longest axis (a balanced tree of depth ceil(log2 n)), down to one
/// triangle per leaf (triangleRss). Principal-axis splits, as in PQP and FCL, give tighter
/// nodes for distance queries than the Morton order of an Lbvh (gProximity section 4.4 had to
/// orient its Morton codes to approach them), and a rigid mesh builds its tree once.
class RssTree {
public:
    /// Builds the tree over `triangleCount` triangles: corners from `positions` (x, y, z floats
    /// per vertex, in the mesh's own frame) through `indices` (three per triangle), on up to
    /// `threads` threads.
    void build(const float* positions, const std::uint32_t* indices, std::uint32_t triangleCount, int threads);

    /// Nodes in depth-first order; node 0 is the root (empty when there are no triangles).
    const std::vector<RssNode>& nodes() const { return m_nodes; }

    /// Checks the tree against the mesh it was built from: every triangle in exactly one leaf,
    /// depth-first layout, and every node's RSS containing every corner below it (measured in
    /// double). Returns an empty string when valid, else what is wrong.
    std::string validate(const float* positions, const std::uint32_t* indices) const;

private:
    /// Fits node `node` over the triangles m_order[begin, end), splits them and builds its
    /// children (as OpenMP tasks when large).
    void buildNode(std::uint32_t node, std::uint32_t begin, std::uint32_t end);

    std::vector<RssNode> m_nodes;
    std::vector<Triangle3d> m_corners;  ///< Corners of each triangle (own frame), while building.
    std::vector<Vec3d> m_centroids;     ///< Centroid of each triangle, while building.
    std::vector<std::uint32_t> m_order; ///< Triangles in leaf order.
};

} // namespace bulletgpu
