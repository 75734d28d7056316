// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/radix_sort_cpu.h"
#include "kernels/narrow/hierarchy/lbvh_ops.h"
#include "kernels/narrow/hierarchy/obb_ops.h"

#include <cstdint>
#include <string>
#include <vector>

/// A linear BVH over the triangles of one mesh, built and refitted on OpenMP threads.

namespace bulletgpu {

/// A binary tree over leaf boxes in depth-first order (see LbvhNode): Morton codes of the
/// box centres in the boxes' bounds, a radix sort, Karras' one-pass construction of every
/// internal node in parallel, then a depth-first layout and a bottom-up refit. Scratch buffers
/// are reused, so rebuilding or refitting a tree of settled size allocates nothing.
class Lbvh {
public:
    /// Builds the tree over `count` leaf boxes (leaf t holds triangle t) on up to `threads`,
    /// with the Morton codes of the box centres taken in `frame` (restructure keeps it).
    void build(const FloatBox* leafBoxes, std::uint32_t count, int threads, const MortonFrame& frame = {});

    /// Rebuilds each subtree of `subtrees` (sorted, disjoint, internal roots) in place over the
    /// same leaves, from Morton codes within the subtree's own bounds, then refits every box
    /// from `leafBoxes` (Wang, Tang et al. 2018, section 4.2). Nodes outside the subtrees keep
    /// their indices; the ancestors' boxes do not change.
    void restructure(const FloatBox* leafBoxes, const std::vector<NodeRange>& subtrees, int threads);

    /// Recomputes every box from new leaf boxes (same count), keeping the topology.
    void refit(const FloatBox* leafBoxes, int threads) { refitInto(leafBoxes, m_nodes, threads); }

    /// Writes to `out` this tree's topology with boxes refitted from `leafBoxes` (same count):
    /// the tree of the same triangles in another frame.
    void refitInto(const FloatBox* leafBoxes, std::vector<LbvhNode>& out, int threads);

    /// Writes to `out` the OBB of every node: each leaf's around its triangle (`triangles`, one per
    /// triangle: triangleObb), each parent's merged from its children's, bottom-up in parallel:
    /// fitted anew by covariance (mergeObbs), or along the axes `out` already holds when
    /// `keepAxes` (a refit after deformation, as cheap as a few projections per node) and the
    /// node lies outside `fitAnew` (restructured subtrees).
    void refitObbs(const Triangle3d* triangles, std::vector<NarrowObb>& out, bool keepAxes,
                   const std::vector<NodeRange>& fitAnew, int threads);

    /// Checks `obbs` against this tree: each node's contains the corners of every triangle below
    /// it (`triangles`, one per triangle). Empty when valid, else what is wrong.
    std::string validateObbs(const std::vector<NarrowObb>& obbs, const Triangle3d* triangles) const;

    /// Nodes in depth-first order; node 0 is the root (empty when there are no leaves).
    const std::vector<LbvhNode>& nodes() const { return m_nodes; }
    /// Leaves (triangles) of the tree.
    std::uint32_t leafCount() const { return m_leafCount; }
    /// The node after each node's subtree (its escape index), for stackless traversal.
    const std::vector<std::uint32_t>& escapes() const { return m_escape; }
    /// Node index of each leaf, in depth-first (sorted Morton) order.
    const std::vector<std::uint32_t>& leafNodes() const { return m_leafOrder; }
    /// Times the topology was built; fronts over an older topology are stale.
    std::uint64_t buildCount() const { return m_buildCount; }

    /// Checks `nodes` (this tree's or a refitInto copy): every leaf reached exactly once from the
    /// root, depth-first layout, parent and child links consistent, each parent containing its
    /// children and each leaf containing `leafBoxes` (when not null). Returns an empty string
    /// when valid, else what is wrong.
    std::string validate(const std::vector<LbvhNode>& nodes, const FloatBox* leafBoxes) const;

private:
    /// Morton codes of the box centres and their sort.
    void sortLeaves(const FloatBox* leafBoxes, std::uint32_t count, int threads);
    /// Builds the Karras nodes over the `count` sorted codes and lays them out depth-first into
    /// m_nodes from node `base` (topology only): the root's parent is `rootParent`, the leaves
    /// take depth-first leaf positions from `firstLeaf`, m_order holds their triangles.
    void layOutDepthFirst(std::uint32_t count, std::uint32_t base, std::uint32_t firstLeaf, std::uint32_t rootParent,
                          int threads);
    /// Fills m_cutRoots with up to `subtrees` disjoint subtrees covering every leaf (the largest
    /// split first) and m_cutAbove with the internal nodes above them, ascending.
    void cutTop(std::uint32_t subtrees);
    /// One bottom-up pass on up to `threads`: setLeaf(triangle, node) for every leaf, and
    /// mergeInto(parent, left, right) for each parent after both children. Children follow their
    /// parent in depth-first order: each subtree of the top cut is swept from its last node back
    /// to its root by one thread, then the nodes above the cut, last first.
    template <typename SetLeaf, typename MergeInto>
    void sweepUp(SetLeaf setLeaf, MergeInto mergeInto, int threads);

    std::uint32_t m_leafCount = 0;
    std::vector<LbvhNode> m_nodes;
    std::vector<std::uint32_t> m_leafNode;  ///< Node of each triangle's leaf.
    std::vector<std::uint32_t> m_escape;    ///< Node after each node's subtree.
    std::vector<std::uint32_t> m_leafOrder; ///< Leaf nodes in depth-first order.
    std::uint64_t m_buildCount = 0;
    MortonFrame m_frame;                           ///< The frame of the Morton codes.
    std::vector<std::uint32_t> m_codes;            ///< Sorted Morton codes.
    std::vector<std::uint32_t> m_order;            ///< Triangle of each sorted position.
    std::vector<FloatBox> m_subtreeBoxes;         ///< Leaf boxes of a restructured subtree.
    std::vector<std::uint32_t> m_subtreeTriangles; ///< Its triangles, in the same order.
    std::vector<KarrasNode> m_karras;              ///< Internal nodes of the Karras numbering.
    std::vector<std::uint64_t> m_stack;            ///< Depth-first layout work list.
    std::vector<std::uint32_t> m_cutRoots;         ///< Subtrees a refit sweeps in parallel.
    std::vector<std::uint32_t> m_cutAbove;         ///< Internal nodes above them, ascending.
    RadixSorterCpu m_sorter;
};

/// The principal frame of a triangle mesh (gProximity section 4.4): the mean of its triangle
/// centroids and the eigenvectors of their covariance, in double, in deterministic passes (the
/// same frame for both backends). Absent for fewer than two triangles, and when the centroids'
/// box in it is not clearly smaller than in the mesh's own axes.
MortonFrame principalFrame(const float* positions, const std::uint32_t* indices, std::uint32_t triangleCount);

} // namespace bulletgpu
