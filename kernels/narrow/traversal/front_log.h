// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/narrow/traversal/bvtt_front_ops.h"
#include "kernels/narrow/traversal/front_quality.h"

#include <cstdint>
#include <vector>

/// The front log of Wang, Tang et al. 2018 (sections 3.3 and 4.1): how many front entries and
/// overlapping leaf pairs stop at each node of the other tree. Its prefix sums over the
/// depth-first layout give every subtree's sums as one subtraction (a subtree is the node range
/// up to its escape index), from which the degraded subtrees are chosen for restructuring.

namespace bulletgpu {

/// The front log's prefix sums of one query: per node of the other tree, in depth-first order,
/// the entries and the overlapping leaf pairs that stop before it (nodeCount + 1 of each).
struct FrontLogView {
    const std::uint64_t* entryOffsets; ///< Exclusive prefix sums of entries per node.
    const std::uint64_t* hitOffsets;   ///< Exclusive prefix sums of overlapping leaf pairs per node.
};

/// How much the measure of node n's subtree (entries per overlapping leaf pair and leaf) has
/// grown from the `reference` log to the `current` one; huge when no entry stopped there before.
BULLETGPU_HD double subtreeGrowth(const FrontTree& tree, FrontLogView current, FrontLogView reference,
                                  std::uint32_t n) {
    const std::uint32_t end = tree.escape[n];
    const double leaves = subtreeLeaves(n, end);
    const double entries = static_cast<double>(current.entryOffsets[end] - current.entryOffsets[n]);
    const double hits = static_cast<double>(current.hitOffsets[end] - current.hitOffsets[n]);
    const double referenceEntries = static_cast<double>(reference.entryOffsets[end] - reference.entryOffsets[n]);
    const double referenceHits = static_cast<double>(reference.hitOffsets[end] - reference.hitOffsets[n]);
    if (referenceEntries == 0) return 1e300;
    return (entries * (referenceHits + leaves)) / (referenceEntries * (hits + leaves));
}

/// Whether node n of `tree` is an internal node whose subtree may be restructured: it holds 2
/// to half of the leaves and cMinEntriesForRestructure entries, and its measure has grown by
/// more than `ratio`.
BULLETGPU_HD bool subtreeEligible(const FrontTree& tree, FrontLogView current, FrontLogView reference, std::uint32_t n,
                                  double ratio) {
    if (isLeaf(tree.nodes[n])) return false;
    const std::uint32_t end = tree.escape[n];
    const std::uint32_t leaves = subtreeLeaves(n, end);
    if (leaves < 2 || 2ull * leaves > tree.leafCount) return false;
    if (current.entryOffsets[end] - current.entryOffsets[n] < cMinEntriesForRestructure) return false;
    return subtreeGrowth(tree, current, reference, n) > ratio;
}

/// The child of eligible node p where its degradation lies, or cNoNode: an eligible child that
/// has grown more than p while its sibling is not eligible. Restructuring the child then mends
/// what restructuring p would, over fewer leaves.
BULLETGPU_HD std::uint32_t degradedChild(const FrontTree& tree, FrontLogView current, FrontLogView reference,
                                         std::uint32_t p, double ratio) {
    if (!subtreeEligible(tree, current, reference, p, ratio)) return cNoNode;
    const std::uint32_t left = p + 1, right = tree.nodes[p].child;
    const bool leftEligible = subtreeEligible(tree, current, reference, left, ratio);
    const bool rightEligible = subtreeEligible(tree, current, reference, right, ratio);
    if (leftEligible == rightEligible) return cNoNode;
    const std::uint32_t child = leftEligible ? left : right;
    return subtreeGrowth(tree, current, reference, child) > subtreeGrowth(tree, current, reference, p) ? child
                                                                                                       : cNoNode;
}

/// Whether node n is chosen for restructuring: the end of the chain of degraded children from
/// the highest eligible node on its path (no ancestor of that node is eligible).
BULLETGPU_HD bool subtreeChosen(const FrontTree& tree, FrontLogView current, FrontLogView reference, std::uint32_t n,
                                double ratio) {
    if (!subtreeEligible(tree, current, reference, n, ratio)) return false;
    if (degradedChild(tree, current, reference, n, ratio) != cNoNode) return false;
    std::uint32_t top = n;
    for (std::uint32_t p = tree.nodes[top].parent;
         p != cNoNode && degradedChild(tree, current, reference, p, ratio) == top; p = tree.nodes[p].parent) {
        top = p;
    }
    for (std::uint32_t p = tree.nodes[top].parent; p != cNoNode; p = tree.nodes[p].parent) {
        if (subtreeEligible(tree, current, reference, p, ratio)) return false;
    }
    return true;
}

/// Leaves of the subtrees `ranges`.
inline std::uint64_t leavesIn(const std::vector<NodeRange>& ranges) {
    std::uint64_t leaves = 0;
    for (const NodeRange& range : ranges) leaves += subtreeLeaves(range.begin, range.end);
    return leaves;
}

/// Schedules the repair of a degraded tree of `treeLeaves` leaves whose front chose the subtrees
/// `chosen` (front_quality.h): adds them to the tree's `pending` subtrees and marks `quality`
/// restructured, or, when none was chosen or the pending subtrees hold over half the leaves,
/// clears `pending` and returns true: the whole tree is to be rebuilt.
bool scheduleRepair(const std::vector<NodeRange>& chosen, std::uint32_t treeLeaves, std::vector<NodeRange>& pending,
                    FrontQuality& quality);

/// The front log of one query on the host.
struct FrontLog {
    std::vector<std::uint64_t> entryOffsets; ///< Exclusive prefix sums of entries per node.
    std::vector<std::uint64_t> hitOffsets;   ///< Exclusive prefix sums of overlapping leaf pairs per node.

    /// Counts the entries of `front` and the overlapping leaf pairs `hits` (both: query leaf,
    /// node of the other tree) per node of a tree of `nodeCount` nodes.
    void record(std::uint32_t nodeCount, const std::vector<FrontEntry>& front, const std::vector<FrontEntry>& hits);
    /// The same from counts already made per node: the sums over `parts` of entriesPerNode[p][n]
    /// and hitsPerNode[p][n] (nodeCount each).
    void recordCounts(std::uint32_t nodeCount, const std::uint32_t* const* entriesPerNode,
                      const std::uint32_t* const* hitsPerNode, int parts);
    /// The view of the sums.
    FrontLogView view() const { return FrontLogView{entryOffsets.data(), hitOffsets.data()}; }
};

/// Appends to `out`, in node order, the subtrees of `other` that subtreeChosen picks.
void chooseSubtrees(const FrontTree& other, const FrontLog& current, const FrontLog& reference, double ratio,
                    std::vector<NodeRange>& out);

} // namespace bulletgpu
