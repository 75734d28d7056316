// SPDX-License-Identifier: Zlib
// The front log on the host: a histogram of the entries per node, its prefix sums, and a
// depth-first pass that takes each chosen subtree and skips what lies below it.
#include "kernels/narrow/traversal/front_log.h"

#include <algorithm>

namespace bulletgpu {
namespace {

/// Exclusive prefix sums (nodeCount + 1 of them) of the entries of `list` per node.
void countPerNode(const std::vector<FrontEntry>& list, std::uint32_t nodeCount, std::vector<std::uint64_t>& offsets) {
    offsets.assign(static_cast<std::size_t>(nodeCount) + 1, 0);
    for (const FrontEntry& entry : list) ++offsets[entry.node + 1];
    for (std::size_t n = 1; n < offsets.size(); ++n) offsets[n] += offsets[n - 1];
}

/// Adds subtrees to `pending` (kept sorted and disjoint): one inside another is dropped.
void addSubtrees(std::vector<NodeRange>& pending, const std::vector<NodeRange>& more) {
    pending.insert(pending.end(), more.begin(), more.end());
    std::sort(pending.begin(), pending.end(), [](const NodeRange& x, const NodeRange& y) {
        return x.begin != y.begin ? x.begin < y.begin : x.end > y.end;
    });
    std::size_t kept = 0;
    for (const NodeRange& range : pending) {
        if (kept > 0 && range.begin < pending[kept - 1].end) continue;
        pending[kept++] = range;
    }
    pending.resize(kept);
}

} // namespace

bool scheduleRepair(const std::vector<NodeRange>& chosen, std::uint32_t treeLeaves, std::vector<NodeRange>& pending,
                    FrontQuality& quality) {
    addSubtrees(pending, chosen);
    if (chosen.empty() || 2 * leavesIn(pending) > treeLeaves) {
        pending.clear();
        return true;
    }
    quality.restructured = true;
    return false;
}

void FrontLog::record(std::uint32_t nodeCount, const std::vector<FrontEntry>& front,
                      const std::vector<FrontEntry>& hits) {
    countPerNode(front, nodeCount, entryOffsets);
    countPerNode(hits, nodeCount, hitOffsets);
}

void FrontLog::recordCounts(std::uint32_t nodeCount, const std::uint32_t* const* entriesPerNode,
                            const std::uint32_t* const* hitsPerNode, int parts) {
    entryOffsets.assign(static_cast<std::size_t>(nodeCount) + 1, 0);
    hitOffsets.assign(static_cast<std::size_t>(nodeCount) + 1, 0);
    for (int p = 0; p < parts; ++p) {
        for (std::uint32_t n = 0; n < nodeCount; ++n) {
            entryOffsets[n + 1] += entriesPerNode[p][n];
            hitOffsets[n + 1] += hitsPerNode[p][n];
        }
    }
    for (std::size_t n = 1; n <= nodeCount; ++n) {
        entryOffsets[n] += entryOffsets[n - 1];
        hitOffsets[n] += hitOffsets[n - 1];
    }
}

void chooseSubtrees(const FrontTree& other, const FrontLog& current, const FrontLog& reference, double ratio,
                    std::vector<NodeRange>& out) {
    // In depth-first order an ancestor comes first: the first eligible node on a path starts a
    // chain of degraded children, whose end is chosen (subtreeChosen).
    std::uint32_t n = 0;
    while (n < other.nodeCount) {
        if (!subtreeEligible(other, current.view(), reference.view(), n, ratio)) {
            ++n;
            continue;
        }
        std::uint32_t chosen = n;
        for (std::uint32_t child = n; child != cNoNode;
             child = degradedChild(other, current.view(), reference.view(), chosen, ratio)) {
            chosen = child;
        }
        out.push_back(NodeRange{chosen, other.escape[chosen]});
        n = other.escape[n];
    }
}

} // namespace bulletgpu
