// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/narrow/traversal/bvtt_front_ops.h"

#include <cstdint>
#include <vector>

/// The leaf walks of up to sixteen consecutive query leaves, made together on the CPU.
///
/// generateFront walks one query leaf's range of the other tree and tests one box per node, a
/// branch whose outcome the processor cannot predict. Consecutive leaves in depth-first order
/// are neighbours in space, so their walks visit mostly the same nodes: here one walk visits
/// the union of their nodes in order and tests each node against all their boxes at once (SSE
/// where the compiler targets it; the walk is also built for x86-64-v3, cpu_clones.h). A
/// lane's state follows its own walk exactly: it reaches a node when the node's parent is
/// alive for it (its box overlapped, or, in a self query, the parent is an ancestor of the
/// lane's leaf, which its walk starts after), so every lane emits the same front entries,
/// candidates and box tests, in the same order, as generateFront.
/// Boxes only: trees with OBBs walk leaf by leaf.

namespace bulletgpu {

/// Query leaves walked together (16 walked cloth-ball and rod-twist 13% faster than 8; 32 no
/// faster than 16).
constexpr std::uint32_t cWalkLanes = 16;

/// One thread's reusable buffers for group walks.
struct GroupWalkScratch {
    /// A node on the walk's current path and the lanes alive there.
    struct PathNode {
        std::uint32_t node;
        std::uint32_t alive;
    };
    std::vector<PathNode> path;
    std::vector<FrontEntry> fronts[cWalkLanes];     ///< Each lane's front entries, in node order.
    std::vector<FrontEntry> candidates[cWalkLanes]; ///< Each lane's overlapping leaves.
};

/// What a group walk adds to a thread's output.
struct GroupWalkOutput {
    std::vector<FrontEntry>& fronts;     ///< Front entries (appended only when keepFronts).
    std::vector<FrontEntry>& candidates; ///< Overlapping leaf pairs.
    bool keepFronts;                     ///< Else the entries are only counted.
    std::uint64_t boxTests = 0;          ///< Boxes tested, as the leaves' own walks count them.
    std::uint64_t frontEntries = 0;      ///< Front entries emitted.
    /// When set, the entries are also counted per node of the other tree.
    std::uint32_t* entriesPerNode = nullptr;
};

/// Generates the fronts of query leaves [first, first + count) (depth-first leaf indices,
/// count at most cWalkLanes) against `other`, as generateFront of each in turn would: appends their
/// entries and candidates to `out` in leaf order, then node order. Neither tree may keep OBBs.
void generateFrontGroup(const FrontTree& query, const FrontTree& other, bool self, std::uint32_t first,
                        std::uint32_t count, GroupWalkScratch& scratch, GroupWalkOutput& out);

} // namespace bulletgpu
