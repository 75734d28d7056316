// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/narrow/hierarchy/lbvh_ops.h"
#include "kernels/narrow/hierarchy/obb_ops.h"
#include "kernels/narrow/geometry/triangle_contact.h"

#include <cstdint>

/// Per-element work of the bounding-volume-test-tree fronts, shared by the CPU and CUDA paths
/// (Wang, Tang et al., "Efficient BVH-based Collision Detection Scheme with Ordering and
/// Restructuring", 2018, sections 2-3; gProximity section 4.1.2).
///
/// A front entry (leaf, node) says that the traversal of query leaf `leaf` (a node index of the
/// query tree) against the other tree stopped at `node`: their boxes were disjoint, or `node` is
/// a leaf. A leaf's traversal is stackless over the depth-first layout (Damkjaer's leaf
/// algorithm): an overlapping internal node is entered (its left child is the next node), a
/// disjoint one is skipped to its escape index (the node after its subtree). In a self query
/// leaf p walks only the nodes after itself, [p + 1, size), which holds every leaf after p and
/// none of p's ancestors, so each pair is met once. A leaf's entries cut its traversal: every
/// other-tree leaf it can reach lies below exactly one entry. The update keeps that true:
/// an overlapping internal entry sprouts into the front of its subtree, a disjoint entry is
/// pruned to its highest disjoint ancestor (within the leaf's range), which its disjoint
/// neighbours below that ancestor reach too, so only the first of them keeps it.

namespace bulletgpu {

/// One entry of a front (8 bytes).
struct FrontEntry {
    std::uint32_t leaf; ///< Node index of the query tree's leaf.
    std::uint32_t node; ///< Node index in the other tree where the traversal stopped.
};

/// What the front kernels read of one tree.
struct FrontTree {
    const LbvhNode* nodes;       ///< Depth-first nodes (boxes in the query's frame).
    const std::uint32_t* escape; ///< Node after each node's subtree.
    const std::uint32_t* leaves; ///< Node index of each leaf, in depth-first order.
    std::uint32_t nodeCount;     ///< Nodes.
    std::uint32_t leafCount;     ///< Leaves.
    const NarrowObb* obbs;       ///< OBB of each node (query's frame), or null (boxes only).
};

/// The OBB of node n, or null when the tree keeps none.
BULLETGPU_HD const NarrowObb* obbOf(const FrontTree& tree, std::uint32_t n) {
    return tree.obbs != nullptr ? tree.obbs + n : nullptr;
}

/// Walks nodes [begin, end) of `tree` for query leaf `leaf` with box `box` (and OBB `obb`, or
/// null): every overlapping leaf goes to sink.candidate, every node where the walk stops to
/// sink.front, in node order.
template <typename Sink>
BULLETGPU_HD void walkFront(const FrontTree& tree, const FloatBox& box, const NarrowObb* obb, std::uint32_t leaf,
                            std::uint32_t begin, std::uint32_t end, Sink& sink) {
    std::uint32_t n = begin;
    while (n < end) {
        const LbvhNode& node = tree.nodes[n];
        sink.boxTest();
        if (volumesOverlap(box, obb, node.box, obbOf(tree, n))) {
            if (isLeaf(node)) {
                sink.candidate(leaf, n);
                sink.front(leaf, n);
            }
            ++n;
        } else {
            sink.front(leaf, n);
            n = tree.escape[n];
        }
    }
}

/// The first node the traversal of query leaf `leaf` visits: after the leaf itself in a self
/// query, the root otherwise.
BULLETGPU_HD std::uint32_t frontBegin(std::uint32_t leaf, bool self) { return self ? leaf + 1 : 0; }

/// Generates the front of the `index`-th query leaf (depth-first order) against `other`.
template <typename Sink>
BULLETGPU_HD void generateFront(const FrontTree& query, const FrontTree& other, bool self, std::uint32_t index,
                                Sink& sink) {
    const std::uint32_t leaf = query.leaves[index];
    walkFront(other, query.nodes[leaf].box, obbOf(query, leaf), leaf, frontBegin(leaf, self), other.nodeCount, sink);
}

/// Updates entry `i` of `front` (sorted by leaf, then node) against the refitted trees: keeps
/// an overlapping leaf entry (a candidate), sprouts an overlapping internal one, prunes a
/// disjoint one to its highest disjoint ancestor after the leaf, and drops it when the entry
/// before it (same leaf) lies below that ancestor and so emits it. Returns the ancestor a
/// disjoint entry was pruned to, or cNoNode when the entry overlapped.
template <typename Sink>
BULLETGPU_HD std::uint32_t updateFrontEntry(const FrontTree& query, const FrontTree& other, bool self,
                                            const FrontEntry* front, std::uint64_t i, Sink& sink) {
    const FrontEntry entry = front[i];
    const FloatBox box = query.nodes[entry.leaf].box;
    const NarrowObb* obb = obbOf(query, entry.leaf);
    const LbvhNode& node = other.nodes[entry.node];
    sink.boxTest();
    if (volumesOverlap(box, obb, node.box, obbOf(other, entry.node))) {
        if (isLeaf(node)) {
            sink.candidate(entry.leaf, entry.node);
            sink.front(entry.leaf, entry.node);
        } else {
            walkFront(other, box, obb, entry.leaf, entry.node + 1, other.escape[entry.node], sink);
        }
        return cNoNode;
    }
    std::uint32_t top = entry.node;
    for (std::uint32_t p = node.parent; p != cNoNode && (!self || p > entry.leaf); p = other.nodes[p].parent) {
        sink.boxTest();
        if (volumesOverlap(box, obb, other.nodes[p].box, obbOf(other, p))) break;
        top = p;
    }
    if (top != entry.node && i > 0 && front[i - 1].leaf == entry.leaf && front[i - 1].node >= top) return top;
    sink.front(entry.leaf, top);
    return top;
}

/// The subtrees of one tree restructured since a front was made (Lbvh::restructure): sorted,
/// disjoint node ranges; none when count is 0.
struct RestructuredRanges {
    const NodeRange* ranges; ///< The subtrees.
    std::uint32_t count;     ///< How many.
};

/// Seeds the front of query leaf `leaf`: the maximal subtrees of the nodes its traversal visits
/// (the root, or in a self query the right siblings along the path after the leaf), a cut that
/// the next update sprouts where the boxes overlap.
template <typename Sink>
BULLETGPU_HD void seedFront(const FrontTree& other, bool self, std::uint32_t leaf, Sink& sink) {
    for (std::uint32_t n = frontBegin(leaf, self); n < other.nodeCount; n = other.escape[n]) sink.front(leaf, n);
}

/// Carries item `i` of `front` (`size` entries sorted by leaf, then node; item `size` stands
/// past the last) over to the trees whose subtrees `inQuery` and `inOther` were restructured
/// (the same ranges in a self query), without box tests (Wang/Tang 4.3): the entries of query
/// leaves inside a restructured range are dropped and every new leaf there is seeded instead,
/// by the first item whose leaf is at or past the range; the entries that stopped inside a
/// restructured range of the other tree collapse into one entry at its root, which the next
/// update sprouts or prunes. The result is again a cut of every leaf's traversal, sorted.
template <typename Sink>
BULLETGPU_HD void restructureFrontEntry(const FrontTree& query, const FrontTree& other, bool self,
                                        RestructuredRanges inQuery, RestructuredRanges inOther, const FrontEntry* front,
                                        std::uint64_t size, std::uint64_t i, Sink& sink) {
    const std::int64_t previous = i > 0 ? static_cast<std::int64_t>(front[i - 1].leaf) : -1;
    const std::int64_t leaf = i < size ? static_cast<std::int64_t>(front[i].leaf) : INT64_MAX;
    for (std::uint32_t r = 0; r < inQuery.count; ++r) {
        const NodeRange range = inQuery.ranges[r];
        if (previous >= range.begin || range.begin > leaf) continue;
        for (std::uint32_t n = range.begin; n < range.end; ++n) {
            if (isLeaf(query.nodes[n])) seedFront(other, self, n, sink);
        }
    }
    if (i >= size) return;
    const FrontEntry entry = front[i];
    if (rangeHolding(inQuery.ranges, inQuery.count, entry.leaf) != nullptr) return;
    const NodeRange* range = rangeHolding(inOther.ranges, inOther.count, entry.node);
    if (range == nullptr) {
        sink.front(entry.leaf, entry.node);
        return;
    }
    // The leaf's entries are sorted by node: only the first inside the range emits its root.
    if (i > 0 && front[i - 1].leaf == entry.leaf && front[i - 1].node >= range->begin) return;
    sink.front(entry.leaf, range->begin);
}

/// The segment of an entry in the order an update takes the front (Wang, Tang et al. 2018,
/// section 3.3): entries that stopped at internal nodes first, by node, then those at leaves,
/// by node, so that neighbouring threads read neighbouring nodes and take the same branches.
/// 2 * other.nodeCount segments.
BULLETGPU_HD std::uint32_t frontSegment(const FrontTree& other, const FrontEntry& entry) {
    return isLeaf(other.nodes[entry.node]) ? other.nodeCount + entry.node : entry.node;
}

/// A sink that only counts (the first pass of a two-pass write).
struct FrontCounter {
    std::uint32_t fronts = 0;     ///< Entries emitted.
    std::uint32_t candidates = 0; ///< Leaf pairs emitted.
    std::uint32_t boxTests = 0;   ///< Box tests made.

    BULLETGPU_HD void front(std::uint32_t, std::uint32_t) { ++fronts; }
    BULLETGPU_HD void candidate(std::uint32_t, std::uint32_t) { ++candidates; }
    BULLETGPU_HD void boxTest() { ++boxTests; }
};

/// A sink that writes entries and candidates from given offsets (the second pass).
struct FrontWriter {
    FrontEntry* fronts;     ///< Next entry goes here.
    FrontEntry* candidates; ///< Next candidate (query leaf, other leaf) goes here.

    BULLETGPU_HD void front(std::uint32_t leaf, std::uint32_t node) { *fronts++ = FrontEntry{leaf, node}; }
    BULLETGPU_HD void candidate(std::uint32_t leaf, std::uint32_t node) { *candidates++ = FrontEntry{leaf, node}; }
    BULLETGPU_HD void boxTest() {}
};

/// The exact test of triangles ta (of mesh A) and tb (of mesh B): writes the contact and
/// returns true when they meet. A self query reports the smaller triangle first; its callers
/// skip (and do not count) the pairs that share a vertex.
BULLETGPU_HD bool testTrianglePair(std::uint32_t ta, const TriangleSource& sourceA, std::uint32_t meshA,
                                   std::uint32_t tb, const TriangleSource& sourceB, std::uint32_t meshB, bool self,
                                   TriangleContact& contact) {
    if (self && ta > tb) {
        const std::uint32_t t = ta;
        ta = tb;
        tb = t;
    }
    Triangle3d scratch1, scratch2;
    const Triangle3d& t1 = sourceA.triangle(ta, scratch1);
    const Triangle3d& t2 = sourceB.triangle(tb, scratch2);
    TriangleTestDetail detail;
    if (!trianglesIntersect(t1, sourceA.plane(ta), t2, sourceB.plane(tb), detail)) return false;
    contact.meshA = meshA;
    contact.triangleA = ta;
    contact.meshB = meshB;
    contact.triangleB = tb;
    contact.flags = intersectionSegment(t1, t2, detail, contact.segment);
    return true;
}

/// testTrianglePair of candidate leaves (pair.leaf of the query tree, pair.node of the other).
BULLETGPU_HD bool testCandidateLeaves(const LbvhNode* nodesA, const TriangleSource& sourceA, std::uint32_t meshA,
                                      const LbvhNode* nodesB, const TriangleSource& sourceB, std::uint32_t meshB,
                                      bool self, const FrontEntry& pair, TriangleContact& contact) {
    return testTrianglePair(leafTriangle(nodesA[pair.leaf]), sourceA, meshA, leafTriangle(nodesB[pair.node]), sourceB,
                            meshB, self, contact);
}

} // namespace bulletgpu
