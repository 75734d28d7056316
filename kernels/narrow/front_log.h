// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/narrow/bvtt_front_ops.h"
#include "kernels/narrow/front_quality.h"

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

/// Whether node n of `tree` is an internal node whose subtree is degraded (subtreeDegraded)
/// between the `reference` log and the `current` one.
BULLETGPU_HD bool subtreeEligible(const FrontTree& tree, FrontLogView current, FrontLogView reference, std::uint32_t n,
                                  double ratio) {
    if (isLeaf(tree.nodes[n])) return false;
    const std::uint32_t end = tree.escape[n];
    return subtreeDegraded(
        current.entryOffsets[end] - current.entryOffsets[n], current.hitOffsets[end] - current.hitOffsets[n],
        reference.entryOffsets[end] - reference.entryOffsets[n], reference.hitOffsets[end] - reference.hitOffsets[n],
        subtreeLeaves(n, end), tree.leafCount, ratio);
}

/// Whether node n is chosen for restructuring: eligible, and no ancestor of it is.
BULLETGPU_HD bool subtreeChosen(const FrontTree& tree, FrontLogView current, FrontLogView reference, std::uint32_t n,
                                double ratio) {
    if (!subtreeEligible(tree, current, reference, n, ratio)) return false;
    for (std::uint32_t p = tree.nodes[n].parent; p != cNoNode; p = tree.nodes[p].parent) {
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

/// Adds subtrees to `pending` (kept sorted and disjoint): one inside another is dropped.
void addSubtrees(std::vector<NodeRange>& pending, const std::vector<NodeRange>& more);

/// The front log of one query on the host.
struct FrontLog {
    std::vector<std::uint64_t> entryOffsets; ///< Exclusive prefix sums of entries per node.
    std::vector<std::uint64_t> hitOffsets;   ///< Exclusive prefix sums of overlapping leaf pairs per node.

    /// Counts the entries of `front` and the overlapping leaf pairs `hits` (both: query leaf,
    /// node of the other tree) per node of a tree of `nodeCount` nodes.
    void record(std::uint32_t nodeCount, const std::vector<FrontEntry>& front, const std::vector<FrontEntry>& hits);
    /// The view of the sums.
    FrontLogView view() const { return FrontLogView{entryOffsets.data(), hitOffsets.data()}; }
};

/// Appends to `out`, in node order, the subtrees of `other` that subtreeChosen picks.
void chooseSubtrees(const FrontTree& other, const FrontLog& current, const FrontLog& reference, double ratio,
                    std::vector<NodeRange>& out);

} // namespace bulletgpu
