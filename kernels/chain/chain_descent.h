// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/chain/chain_ops.h"

#include <cstdint>

/// Per-element steps of the simultaneous descent of the chain hierarchy against itself (a
/// bounding-volume test tree walk): where the per-sphere traversal (visitTouchingLeaves) tests
/// every sphere against the upper levels on its own, the descent tests each pair of nodes
/// once, so the work of the upper levels is shared by all the leaves below them. Each pair of
/// spheres is reached at most once, through the pair of disjoint subtrees that separates them.
/// The tests are those of chain_ops.h: conservative in float, leaves confirmed in double.

namespace bulletgpu {

/// Node k of level `level` of the implicit hierarchy (see ChainLevels).
struct ChainNode {
    std::uint32_t k;     ///< Index on its level.
    std::uint32_t level; ///< 0 for a leaf.
};

/// One step of the descent: the pairs inside node a (when a == b), or the pairs between a and b,
/// whose leaves all come after a's.
struct ChainNodePair {
    ChainNode a; ///< The node whose leaves come first.
    ChainNode b; ///< The same node, or a later disjoint one.
};

/// The hierarchy as the descent reads it: the nodes' spheres and boxes, and the levels.
struct ChainTreeView {
    const ChainSphere* spheres; ///< Leaves, then each level (ChainLayout::nodes).
    const FloatBox* boxes;      ///< The same nodes' boxes.
    ChainLevels levels;         ///< Level sizes and offsets.

    /// Node `n`'s index in the node arrays.
    BULLETGPU_HD std::uint32_t indexOf(ChainNode n) const { return levels.offset[n.level] + n.k; }
};

/// Level of the leaf buckets: below it the descent stops and tests every pair of leaves of the
/// two buckets (up to 8 x 8), which costs less than descending the last levels pair by pair.
constexpr std::uint32_t cChainBucketLevel = 3;

/// The first leaf under `n`.
BULLETGPU_HD std::uint32_t firstLeafOf(ChainNode n) { return n.k << n.level; }

/// The leaf after the last one under `n`.
BULLETGPU_HD std::uint32_t endLeafOf(const ChainLevels& tree, ChainNode n) {
    const std::uint64_t end = (static_cast<std::uint64_t>(n.k) + 1) << n.level;
    return end < tree.count[0] ? static_cast<std::uint32_t>(end) : tree.count[0];
}

/// Children of `n` (0 for a leaf, 1 when the level below ends with a lone node).
BULLETGPU_HD std::uint32_t childCountOf(const ChainLevels& tree, ChainNode n) {
    if (n.level == 0) return 0;
    return 2 * n.k + 1 < tree.count[n.level - 1] ? 2u : 1u;
}

/// Child `c` (0 or 1) of inner node `n`.
BULLETGPU_HD ChainNode childOf(ChainNode n, std::uint32_t c) { return ChainNode{2 * n.k + c, n.level - 1}; }

/// The chain tables and the query the descent filters pairs with.
struct ChainFilter {
    const std::uint32_t* sphereChain; ///< Chain of each global sphere.
    const std::uint32_t* chainStart;  ///< First global sphere of each chain, then the total.
    std::uint32_t total;              ///< Spheres of all chains.
    ChainQuery query;                 ///< What is reported.

    /// The later spheres that global sphere `i` may pair with (candidatesOf).
    BULLETGPU_HD ChainCandidates candidates(std::uint32_t i) const {
        return candidatesOf(i, chainStart[sphereChain[i] + 1], total, query);
    }
};

/// Whether some leaf of `a` and some later leaf of `b` may be a reported contact: the two nodes'
/// boxes meet, the query's index ranges reach b (both ends of a range grow with the sphere
/// index, so a's first and last leaves bound them), and their spheres meet. Never false for a pair of
/// nodes holding a contact.
BULLETGPU_HD bool nodesMayHoldContacts(const ChainTreeView& tree, const ChainFilter& filter, ChainNode a, ChainNode b) {
    const std::uint32_t ia = tree.indexOf(a);
    const std::uint32_t ib = tree.indexOf(b);
    if (!boxesOverlap(tree.boxes[ia], tree.boxes[ib])) return false;
    if (filter.candidates(firstLeafOf(a)).begin >= endLeafOf(tree.levels, b)) return false;
    if (filter.candidates(endLeafOf(tree.levels, a) - 1).end <= firstLeafOf(b)) return false;
    return spheresMayTouch(tree.spheres[ia], tree.spheres[ib]);
}

/// Expands one step of the descent. A node alone (a == b) at or below the bucket level, or a
/// pair of nodes both at or below it, goes to testBuckets(a, b), which tests their leaves' pairs.
/// Above it, a node alone gives its children alone and the pair of them; of a pair of nodes, the
/// one above the bucket level is split (of two, the one with the larger sphere) and the pairs of
/// its children with the other node go on. Pairs of nodes that may hold contacts go to
/// push(ChainNodePair). A pair `step` must itself have passed nodesMayHoldContacts.
template <typename Push, typename TestBuckets>
BULLETGPU_HD void expandDescent(const ChainTreeView& tree, const ChainFilter& filter, const ChainNodePair& step,
                                Push& push, TestBuckets& testBuckets) {
    const ChainNode a = step.a;
    const ChainNode b = step.b;
    const bool bucketA = a.level <= cChainBucketLevel;
    const bool bucketB = b.level <= cChainBucketLevel;
    if (bucketA && bucketB) {
        testBuckets(a, b);
        return;
    }
    const auto offer = [&](ChainNode x, ChainNode y) {
        if (nodesMayHoldContacts(tree, filter, x, y)) push(ChainNodePair{x, y});
    };
    if (a.k == b.k && a.level == b.level) {
        const std::uint32_t children = childCountOf(tree.levels, a);
        for (std::uint32_t c = 0; c < children; ++c) push(ChainNodePair{childOf(a, c), childOf(a, c)});
        if (children == 2) offer(childOf(a, 0), childOf(a, 1));
        return;
    }
    const bool splitA = bucketB || (!bucketA && tree.spheres[tree.indexOf(a)].r >= tree.spheres[tree.indexOf(b)].r);
    const std::uint32_t children = childCountOf(tree.levels, splitA ? a : b);
    for (std::uint32_t c = 0; c < children; ++c) {
        if (splitA) {
            offer(childOf(a, c), b);
        } else {
            offer(a, childOf(b, c));
        }
    }
}

} // namespace bulletgpu
