// SPDX-License-Identifier: Zlib
#include "kernels/narrow/traversal/front_group_walk.h"

#include "kernels/common/cpu_clones.h"
#include "kernels/common/lane_mask.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace bulletgpu {
namespace {

static_assert(cWalkLanes < 32, "lane masks are 32-bit words with a bit to spare for (1 << count) - 1");

/// The lanes' boxes, coordinate-major; unused lanes hold empty boxes.
struct LaneBoxes {
    alignas(16) float lo[3][cWalkLanes];
    alignas(16) float hi[3][cWalkLanes];
};

/// Bit i set when lane i's box overlaps `box` inclusively (as boxesOverlap; NaN overlaps nothing).
std::uint32_t overlappingLanes(const LaneBoxes& lanes, const FloatBox& box) {
#if defined(__SSE2__)
    std::uint32_t mask = 0;
    for (std::uint32_t half = 0; half < cWalkLanes; half += 4) {
        __m128 meet = _mm_set1_ps(0.0f);
        meet = _mm_cmpeq_ps(meet, meet);
        for (int k = 0; k < 3; ++k) {
            const __m128 below = _mm_cmple_ps(_mm_load_ps(&lanes.lo[k][half]), _mm_set1_ps(box.hi[k]));
            const __m128 above = _mm_cmple_ps(_mm_set1_ps(box.lo[k]), _mm_load_ps(&lanes.hi[k][half]));
            meet = _mm_and_ps(meet, _mm_and_ps(below, above));
        }
        mask |= static_cast<std::uint32_t>(_mm_movemask_ps(meet)) << half;
    }
    return mask;
#else
    std::uint32_t mask = 0;
    for (std::uint32_t i = 0; i < cWalkLanes; ++i) {
        bool meet = true;
        for (int k = 0; k < 3; ++k) meet = meet && lanes.lo[k][i] <= box.hi[k] && box.lo[k] <= lanes.hi[k][i];
        mask |= static_cast<std::uint32_t>(meet) << i;
    }
    return mask;
#endif
}

/// Appends (leaf, node) to `entries`, the two words stored one by one: a pair built on the
/// stack and copied as one 64-bit word made each append wait on a failed store forward.
void appendEntry(std::vector<FrontEntry>& entries, std::uint32_t leaf, std::uint32_t node) {
    FrontEntry& entry = entries.emplace_back();
    entry.leaf = leaf;
    entry.node = node;
}

} // namespace

BULLETGPU_CPU_CLONES
void generateFrontGroup(const FrontTree& query, const FrontTree& other, bool self, std::uint32_t first,
                        std::uint32_t count, GroupWalkScratch& scratch, GroupWalkOutput& out) {
    if (count == 0) return;
    LaneBoxes boxes;
    std::uint32_t leaf[cWalkLanes];
    for (std::uint32_t i = 0; i < cWalkLanes; ++i) {
        const FloatBox box = i < count ? query.nodes[query.leaves[first + i]].box : emptyBox();
        leaf[i] = i < count ? query.leaves[first + i] : leaf[count - 1];
        for (int k = 0; k < 3; ++k) {
            boxes.lo[k][i] = box.lo[k];
            boxes.hi[k][i] = box.hi[k];
        }
    }
    const std::uint32_t lanes = (1u << count) - 1;
    for (std::uint32_t i = 0; i < count; ++i) {
        scratch.fronts[i].clear();
        scratch.candidates[i].clear();
    }
    scratch.path.clear();
    // Leaves in depth-first order ascend: the first lane's walk starts first, and past the
    // last lane's leaf every lane walks.
    const std::uint32_t lastLeaf = leaf[count - 1];
    std::uint32_t n = frontBegin(leaf[0], self);
    bool descended = false; // n is the left child of the path's last node
    while (n < other.nodeCount) {
        const LbvhNode& node = other.nodes[n];
        if (!descended) {
            while (!scratch.path.empty() && scratch.path.back().node != node.parent) scratch.path.pop_back();
        }
        // A parent above the walk's start is an ancestor of every lane's leaf.
        const std::uint32_t parentAlive = scratch.path.empty() ? lanes : scratch.path.back().alive;
        std::uint32_t walking = lanes, ancestors = 0;
        if (self && n <= lastLeaf) {
            // A lane walks only the nodes after its leaf; before it, only the leaf's ancestors
            // (whose subtrees hold it) let the walk go on for the lane.
            walking = ancestors = 0;
            for (std::uint32_t i = 0; i < count; ++i) {
                walking |= static_cast<std::uint32_t>(n > leaf[i]) << i;
                ancestors |= static_cast<std::uint32_t>(n < leaf[i] && other.escape[n] > leaf[i]) << i;
            }
        }
        const std::uint32_t visited = walking & parentAlive;
        const std::uint32_t overlap = overlappingLanes(boxes, node.box) & visited;
        out.boxTests += laneCount(visited);
        const bool leafNode = isLeaf(node);
        const std::uint32_t stops = leafNode ? visited : visited & ~overlap;
        out.frontEntries += laneCount(stops);
        if (out.entriesPerNode != nullptr) out.entriesPerNode[n] += laneCount(stops);
        if (out.keepFronts) {
            for (std::uint32_t bits = stops; bits != 0; bits &= bits - 1) {
                const std::uint32_t i = lowestLane(bits);
                appendEntry(scratch.fronts[i], leaf[i], n);
            }
        }
        if (leafNode) {
            for (std::uint32_t bits = overlap; bits != 0; bits &= bits - 1) {
                const std::uint32_t i = lowestLane(bits);
                appendEntry(scratch.candidates[i], leaf[i], n);
            }
            n = other.escape[n];
            descended = false;
            continue;
        }
        const std::uint32_t alive = overlap | ancestors;
        descended = alive != 0;
        if (descended) {
            GroupWalkScratch::PathNode& top = scratch.path.emplace_back();
            top.node = n;
            top.alive = alive;
            ++n;
        } else {
            n = other.escape[n];
        }
    }
    for (std::uint32_t i = 0; i < count; ++i) {
        if (out.keepFronts) out.fronts.insert(out.fronts.end(), scratch.fronts[i].begin(), scratch.fronts[i].end());
        out.candidates.insert(out.candidates.end(), scratch.candidates[i].begin(), scratch.candidates[i].end());
    }
}

} // namespace bulletgpu
