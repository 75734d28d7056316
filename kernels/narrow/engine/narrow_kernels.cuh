// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/launch.h"
#include "kernels/narrow/engine/narrow_device.cuh"
#include "kernels/narrow/traversal/bvtt_front_ops.h"
#include "kernels/narrow/traversal/front_log.h"
#include "kernels/narrow/hierarchy/lbvh_ops.h"
#include "kernels/narrow/geometry/proximity_bounds.h"
#include "kernels/narrow/geometry/triangle_ops.h"

#include <cstdint>

/// CUDA kernels of the narrow phase: leaf boxes (and the contact query's grown ones), the LBVH
/// build (Morton codes, Karras nodes, depth-first layout from left turns), the bottom-up refit,
/// the front passes and the exact tests. Each calls the per-element functions the CPU path
/// calls.

namespace bulletgpu::detail {

/// Marks a Karras child link as the right child.
constexpr std::uint32_t cRightChild = 0x80000000u;

/// The box of every triangle, moved by the transform when there is one.
__global__ void __launch_bounds__(cBlockSize)
    computeLeafBoxes(const float* positions, const std::uint32_t* indices, std::uint32_t count,
                     DeviceTransform transform, FloatBox* boxes) {
    const std::uint64_t t = globalThreadIndex();
    if (t >= count) return;
    boxes[t] = triangleBox(
        loadTriangle(positions, indices, static_cast<std::uint32_t>(t), transform.present ? transform.m : nullptr));
}

/// The box of each leaf's centre in `frame`, for the reduction to the Morton bounds.
__global__ void __launch_bounds__(cBlockSize)
    computeCentreBoxes(const FloatBox* boxes, std::uint32_t count, MortonFrame frame, FloatBox* centres) {
    const std::uint64_t t = globalThreadIndex();
    if (t < count) centres[t] = mortonCentre(boxes[t], frame);
}

/// Morton codes of the leaf centres in `frame` within `bounds` (one box on the device), and the
/// identity order.
__global__ void __launch_bounds__(cBlockSize)
    computeMortonCodes(const FloatBox* boxes, std::uint32_t count, MortonFrame frame, const FloatBox* bounds,
                       std::uint32_t* codes, std::uint32_t* order) {
    const std::uint64_t t = globalThreadIndex();
    if (t >= count) return;
    const FloatBox centres = *bounds;
    codes[t] = leafMortonCode(boxes[t], frame, centres, mortonScale(centres));
    order[t] = static_cast<std::uint32_t>(t);
}

/// Karras node i of n - 1 and the parent links of its children: parentOfInternal and
/// parentOfLeaf hold the parent's Karras index, with cRightChild for a right child.
__global__ void __launch_bounds__(cBlockSize)
    buildKarrasNodes(const std::uint32_t* codes, std::uint32_t count, KarrasNode* karras,
                     std::uint32_t* parentOfInternal, std::uint32_t* parentOfLeaf) {
    const std::uint64_t i = globalThreadIndex();
    if (i + 1 >= count) return;
    const KarrasNode node = karrasNode(codes, count, static_cast<std::int64_t>(i));
    karras[i] = node;
    const auto self = static_cast<std::uint32_t>(i);
    if (node.first == node.split) {
        parentOfLeaf[node.split] = self;
    } else {
        parentOfInternal[node.split] = self;
    }
    if (node.split + 1 == node.last) {
        parentOfLeaf[node.split + 1] = self | cRightChild;
    } else {
        parentOfInternal[node.split + 1] = self | cRightChild;
    }
    if (i == 0) parentOfInternal[0] = cNoNode;
}

/// Left turns on the path from the root to a node whose parent link is `link`.
__device__ __forceinline__ std::uint32_t leftTurnsFrom(std::uint32_t link, const std::uint32_t* parentOfInternal) {
    std::uint32_t turns = 0;
    while (link != cNoNode) {
        turns += (link & cRightChild) == 0 ? 1u : 0u;
        link = parentOfInternal[link & ~cRightChild];
    }
    return turns;
}

/// Depth-first index of every Karras node: items [0, n - 1) are internal nodes, [n - 1, 2n - 1)
/// the leaves in sorted order.
__global__ void __launch_bounds__(cBlockSize)
    computeDepthFirstIndices(const KarrasNode* karras, const std::uint32_t* parentOfInternal,
                             const std::uint32_t* parentOfLeaf, std::uint32_t count, std::uint32_t* internalIndex,
                             std::uint32_t* leafIndex) {
    const std::uint64_t item = globalThreadIndex();
    if (item + 1 >= 2ull * count) return;
    if (item + 1 < count) {
        const std::uint32_t first = karras[item].first;
        internalIndex[item] = depthFirstIndex(first, leftTurnsFrom(parentOfInternal[item], parentOfInternal));
    } else {
        const auto s = static_cast<std::uint32_t>(item - (count - 1));
        leafIndex[s] = depthFirstIndex(s, leftTurnsFrom(parentOfLeaf[s], parentOfInternal));
    }
}

/// Writes the depth-first nodes (boxes empty until the refit), escape indices, the triangle to
/// leaf map and the depth-first leaf list, from node `base` and leaf position `*firstLeaf` (0
/// when null) on: a whole tree (base 0, the root without parent), or a subtree rebuilt in place
/// (its root keeps the parent it had).
__global__ void __launch_bounds__(cBlockSize)
    writeDepthFirstNodes(const KarrasNode* karras, const std::uint32_t* parentOfInternal,
                         const std::uint32_t* parentOfLeaf, const std::uint32_t* internalIndex,
                         const std::uint32_t* leafIndex, const std::uint32_t* order, std::uint32_t count,
                         std::uint32_t base, const std::uint32_t* firstLeaf, bool keepRootParent, LbvhNode* nodes,
                         std::uint32_t* escape, std::uint32_t* leafOfTriangle, std::uint32_t* leaves) {
    const std::uint64_t item = globalThreadIndex();
    if (item + 1 >= 2ull * count) return;
    if (item + 1 < count) {
        const KarrasNode k = karras[item];
        const std::uint32_t index = base + internalIndex[item];
        const std::uint32_t right =
            base + (k.split + 1 == k.last ? leafIndex[k.split + 1] : internalIndex[k.split + 1]);
        const std::uint32_t link = parentOfInternal[item];
        const std::uint32_t parent = link != cNoNode ? base + internalIndex[link & ~cRightChild]
                                                     : (keepRootParent ? nodes[index].parent : cNoNode);
        nodes[index] = LbvhNode{emptyBox(), right, parent};
        escape[index] = index + 2 * (k.last - k.first + 1) - 1;
    } else {
        const auto s = static_cast<std::uint32_t>(item - (count - 1));
        const std::uint32_t index = base + leafIndex[s];
        const std::uint32_t link = parentOfLeaf[s];
        // A lone leaf is a whole tree of one triangle (a restructured subtree has two or more).
        const std::uint32_t parent = link == cNoNode ? cNoNode : base + internalIndex[link & ~cRightChild];
        nodes[index] = LbvhNode{emptyBox(), cLeafFlag | order[s], parent};
        escape[index] = index + 1;
        leafOfTriangle[order[s]] = index;
        leaves[(firstLeaf != nullptr ? *firstLeaf : 0u) + s] = index;
    }
}

/// The depth-first position of the first leaf of each subtree: a node's index is twice the
/// leaves before it plus the left turns on its path (depthFirstIndex), in any depth-first tree.
__global__ void __launch_bounds__(cBlockSize)
    locateSubtrees(const LbvhNode* nodes, const NodeRange* subtrees, std::uint32_t count, std::uint32_t* firstLeaves) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= count) return;
    const std::uint32_t root = subtrees[i].begin;
    std::uint32_t leftTurns = 0;
    for (std::uint32_t n = root, p = nodes[n].parent; p != cNoNode; n = p, p = nodes[p].parent) {
        leftTurns += n == p + 1 ? 1u : 0u;
    }
    firstLeaves[i] = (root - leftTurns) / 2;
}

/// The leaves of a subtree in depth-first order from leaf position `*firstLeaf`: their
/// triangles and boxes, for the subtree's Morton codes.
__global__ void __launch_bounds__(cBlockSize)
    gatherSubtreeLeaves(const LbvhNode* nodes, const std::uint32_t* leaves, const std::uint32_t* firstLeaf,
                        std::uint32_t count, const FloatBox* leafBoxes, FloatBox* boxes, std::uint32_t* triangles) {
    const std::uint64_t j = globalThreadIndex();
    if (j >= count) return;
    const std::uint32_t triangle = leafTriangle(nodes[leaves[*firstLeaf + j]]);
    triangles[j] = triangle;
    boxes[j] = leafBoxes[triangle];
}

/// The triangle of each sorted position of a subtree (its sorted order held positions).
__global__ void __launch_bounds__(cBlockSize)
    mapSortedTriangles(const std::uint32_t* triangles, const std::uint32_t* sortedPositions, std::uint32_t count,
                       std::uint32_t* sortedTriangles) {
    const std::uint64_t j = globalThreadIndex();
    if (j < count) sortedTriangles[j] = triangles[sortedPositions[j]];
}

/// A box read past the L1 cache (written by another block of this launch).
__device__ __forceinline__ FloatBox loadBoxCoherent(const FloatBox* box) {
    FloatBox b;
    for (int k = 0; k < 3; ++k) {
        b.lo[k] = __ldcg(&box->lo[k]);
        b.hi[k] = __ldcg(&box->hi[k]);
    }
    return b;
}

/// Bottom-up refit from triangle t's leaf: it writes its box, then climbs; the first child to
/// arrive at a parent stops, the second merges both children (same order as the CPU: left, right).
__device__ __forceinline__ void refitFromLeaf(const FloatBox* leafBoxes, const std::uint32_t* leafOfTriangle,
                                              std::uint32_t t, LbvhNode* nodes, std::uint32_t* arrivals) {
    const std::uint32_t index = leafOfTriangle[t];
    nodes[index].box = leafBoxes[t];
    for (std::uint32_t p = nodes[index].parent; p != cNoNode; p = nodes[p].parent) {
        __threadfence();
        if (atomicAdd(&arrivals[p], 1u) == 0) return;
        __threadfence();
        const FloatBox left = loadBoxCoherent(&nodes[p + 1].box);
        const FloatBox right = loadBoxCoherent(&nodes[nodes[p].child].box);
        nodes[p].box = mergeBoxes(left, right);
    }
}

/// Bottom-up refit of a tree over `count` leaf boxes (refitFromLeaf from every leaf).
__global__ void __launch_bounds__(cBlockSize) refitTree(const FloatBox* leafBoxes, const std::uint32_t* leafOfTriangle,
                                                        std::uint32_t count, LbvhNode* nodes, std::uint32_t* arrivals) {
    const std::uint64_t t = globalThreadIndex();
    if (t < count) refitFromLeaf(leafBoxes, leafOfTriangle, static_cast<std::uint32_t>(t), nodes, arrivals);
}

/// One tree of a batch grown for the contact query (NarrowEngineCuda::growTrees): a copy of a
/// mesh's topology refitted over its leaf boxes grown in one frame.
struct GrowJob {
    const float* positions;              ///< Own-frame positions.
    const std::uint32_t* indices;        ///< Three vertex indices per triangle.
    const std::uint32_t* leafOfTriangle; ///< The leaf node of each triangle.
    const LbvhNode* nodes;               ///< The mesh's own tree (its topology is copied).
    FloatBox* grownBoxes;                ///< The grown leaf boxes, written.
    LbvhNode* grownNodes;                ///< The grown tree, written.
    DeviceTransform transform;           ///< To the frame grown in, or none.
    std::uint32_t firstTriangle;         ///< Where its triangles start among the batch's.
    std::uint32_t firstNode;             ///< Where its nodes start among the batch's.
};

/// The box of every triangle of a batch of `jobCount` trees (`count` triangles in all) grown for
/// the contact query at `distance` (proximity_bounds.h), moved by its job's transform when there
/// is one: what the CPU path grows from the same corners.
__global__ void __launch_bounds__(cBlockSize)
    growLeafBoxesOfJobs(const GrowJob* jobs, std::uint32_t jobCount, std::uint32_t count, double distance) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= count) return;
    const GrowJob& job = jobs[batchEntryOf(jobCount, i, [jobs](std::uint32_t j) { return jobs[j].firstTriangle; })];
    const auto t = static_cast<std::uint32_t>(i - job.firstTriangle);
    job.grownBoxes[t] = grownTriangleBox(
        loadTriangle(job.positions, job.indices, t, job.transform.present ? job.transform.m : nullptr), distance);
}

/// Copies every node of a batch's trees (`count` nodes in all) to their grown trees.
__global__ void __launch_bounds__(cBlockSize)
    copyNodesOfJobs(const GrowJob* jobs, std::uint32_t jobCount, std::uint32_t count) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= count) return;
    const GrowJob& job = jobs[batchEntryOf(jobCount, i, [jobs](std::uint32_t j) { return jobs[j].firstNode; })];
    const auto n = static_cast<std::uint32_t>(i - job.firstNode);
    job.grownNodes[n] = job.nodes[n];
}

/// Refits every grown tree of a batch over its grown boxes (`count` triangles in all), each with
/// its own range of `arrivals` (zeroed, one per node of the batch).
__global__ void __launch_bounds__(cBlockSize)
    refitTreesOfJobs(const GrowJob* jobs, std::uint32_t jobCount, std::uint32_t count, std::uint32_t* arrivals) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= count) return;
    const GrowJob& job = jobs[batchEntryOf(jobCount, i, [jobs](std::uint32_t j) { return jobs[j].firstTriangle; })];
    refitFromLeaf(job.grownBoxes, job.leafOfTriangle, static_cast<std::uint32_t>(i - job.firstTriangle), job.grownNodes,
                  arrivals + job.firstNode);
}

/// An OBB read past the L1 cache (written by another block of this launch).
__device__ __forceinline__ NarrowObb loadObbCoherent(const NarrowObb* obb) {
    NarrowObb o;
    const double* from = obb->centre;
    double* to = o.centre;
    for (int i = 0; i < 15; ++i) to[i] = __ldcg(from + i);
    return o;
}

/// Bottom-up OBB refit over the tree's topology, like refitTree (same merge order as the CPU):
/// each leaf's around its triangle (own frame), each parent's fitted anew, or along the axes
/// `obbs` holds when `keepAxes` and the parent lies outside the `fitAnewCount` ranges `fitAnew`.
__global__ void __launch_bounds__(cBlockSize)
    refitObbTree(const float* positions, const std::uint32_t* indices, const std::uint32_t* leafOfTriangle,
                 std::uint32_t count, const LbvhNode* nodes, bool keepAxes, const NodeRange* fitAnew,
                 std::uint32_t fitAnewCount, NarrowObb* obbs, std::uint32_t* arrivals) {
    const std::uint64_t t = globalThreadIndex();
    if (t >= count) return;
    const std::uint32_t index = leafOfTriangle[t];
    obbs[index] = triangleObb(loadTriangle(positions, indices, static_cast<std::uint32_t>(t), nullptr));
    for (std::uint32_t p = nodes[index].parent; p != cNoNode; p = nodes[p].parent) {
        __threadfence();
        if (atomicAdd(&arrivals[p], 1u) == 0) return;
        __threadfence();
        const NarrowObb left = loadObbCoherent(&obbs[p + 1]), right = loadObbCoherent(&obbs[nodes[p].child]);
        obbs[p] = keepAxes && rangeHolding(fitAnew, fitAnewCount, p) == nullptr
                      ? mergeObbsAlong(obbs[p].axis, left, right)
                      : mergeObbs(left, right);
    }
}

/// Every OBB of a tree moved by a rigid transform.
__global__ void __launch_bounds__(cBlockSize)
    transformObbs(DeviceTransform transform, const NarrowObb* own, std::uint32_t count, NarrowObb* out) {
    const std::uint64_t i = globalThreadIndex();
    if (i < count) out[i] = transformObb(transform.m, own[i]);
}

/// The histogram of an update's front by segment (frontSegment): `counts` (zeroed before) and
/// each entry's rank within its segment.
__global__ void __launch_bounds__(cBlockSize)
    countFrontSegments(FrontTree other, const FrontEntry* front, std::uint32_t size, std::uint32_t* counts,
                       std::uint32_t* ranks) {
    const std::uint64_t i = globalThreadIndex();
    if (i < size) ranks[i] = atomicAdd(counts + frontSegment(other, front[i]), 1u);
}

/// The order in which an update's threads take the entries: by segment (the histogram sort of
/// Wang, Tang et al. 2018, section 3.3), from the segments' offsets and the entries' ranks.
__global__ void __launch_bounds__(cBlockSize)
    scatterFrontOrder(FrontTree other, const FrontEntry* front, std::uint32_t size, const std::uint32_t* offsets,
                      const std::uint32_t* ranks, std::uint32_t* order) {
    const std::uint64_t i = globalThreadIndex();
    if (i < size) order[offsets[frontSegment(other, front[i])] + ranks[i]] = static_cast<std::uint32_t>(i);
}

/// First front pass: what each item (a query leaf when generating, an entry when updating)
/// emits, counted. Thread t takes item order[t] (item t when `order` is null); the counts are
/// stored by item, so the scan and the write keep the front's order. `totals` receives the sums
/// of the front and candidate counts in 64 bits (the 32-bit scans of the counts are valid only
/// while they stay under 2^32).
__global__ void __launch_bounds__(cBlockSize)
    countFront(FrontTree query, FrontTree other, bool self, bool generate, const FrontEntry* front, std::uint32_t items,
               const std::uint32_t* order, std::uint32_t* frontCounts, std::uint32_t* candidateCounts,
               unsigned long long* boxTests, unsigned long long* totals) {
    const std::uint64_t t = globalThreadIndex();
    FrontCounter counter;
    if (t < items) {
        const std::uint64_t i = order != nullptr ? order[t] : t;
        if (generate) {
            generateFront(query, other, self, static_cast<std::uint32_t>(i), counter);
        } else {
            updateFrontEntry(query, other, self, front, i, counter);
        }
        frontCounts[i] = counter.fronts;
        candidateCounts[i] = counter.candidates;
    }
    addWarpSum(boxTests, counter.boxTests);
    addWarpSum(totals, counter.fronts);
    addWarpSum(totals + 1, counter.candidates);
}

/// Second front pass: each item writes its entries and candidates from its offsets (thread t
/// takes item order[t], as in countFront).
__global__ void __launch_bounds__(cBlockSize)
    writeFront(FrontTree query, FrontTree other, bool self, bool generate, const FrontEntry* front, std::uint32_t items,
               const std::uint32_t* order, const std::uint32_t* frontOffsets, const std::uint32_t* candidateOffsets,
               FrontEntry* nextFront, FrontEntry* candidates) {
    const std::uint64_t t = globalThreadIndex();
    if (t >= items) return;
    const std::uint64_t i = order != nullptr ? order[t] : t;
    FrontWriter writer{nextFront + frontOffsets[i], candidates + candidateOffsets[i]};
    if (generate) {
        generateFront(query, other, self, static_cast<std::uint32_t>(i), writer);
    } else {
        updateFrontEntry(query, other, self, front, i, writer);
    }
}

/// Carry-over of a front to restructured trees, first pass: what each item emits, counted, and
/// their sum in 64 bits in `total`.
__global__ void __launch_bounds__(cBlockSize)
    countCarriedFront(FrontTree query, FrontTree other, bool self, RestructuredRanges inQuery,
                      RestructuredRanges inOther, const FrontEntry* front, std::uint64_t size, std::uint32_t* counts,
                      unsigned long long* total) {
    const std::uint64_t i = globalThreadIndex();
    FrontCounter counter;
    if (i <= size) {
        restructureFrontEntry(query, other, self, inQuery, inOther, front, size, i, counter);
        counts[i] = counter.fronts;
    }
    addWarpSum(total, counter.fronts);
}

/// Carry-over of a front, second pass: each item writes its entries from its offset.
__global__ void __launch_bounds__(cBlockSize)
    writeCarriedFront(FrontTree query, FrontTree other, bool self, RestructuredRanges inQuery,
                      RestructuredRanges inOther, const FrontEntry* front, std::uint64_t size,
                      const std::uint32_t* offsets, FrontEntry* next) {
    const std::uint64_t i = globalThreadIndex();
    if (i > size) return;
    FrontWriter writer{next + offsets[i], nullptr};
    restructureFrontEntry(query, other, self, inQuery, inOther, front, size, i, writer);
}

/// The front log's histogram: counts[node + 1] of every entry's node (counts zeroed before), so
/// that an inclusive scan of counts gives the exclusive prefix sums per node.
__global__ void __launch_bounds__(cBlockSize)
    countFrontLog(const FrontEntry* entries, std::uint64_t size, unsigned long long* counts) {
    const std::uint64_t i = globalThreadIndex();
    if (i < size) atomicAdd(counts + entries[i].node + 1, 1ull);
}

/// Flags the nodes subtreeChosen picks, beside every node's index (what the selection keeps).
__global__ void __launch_bounds__(cBlockSize)
    flagChosenSubtrees(FrontTree tree, FrontLogView current, FrontLogView reference, double ratio, std::uint8_t* chosen,
                       std::uint32_t* ids) {
    const std::uint64_t n = globalThreadIndex();
    if (n >= tree.nodeCount) return;
    chosen[n] = subtreeChosen(tree, current, reference, static_cast<std::uint32_t>(n), ratio) ? 1 : 0;
    ids[n] = static_cast<std::uint32_t>(n);
}

/// The ranges of the `*count` chosen nodes (selected in node order).
__global__ void __launch_bounds__(cBlockSize) chosenRanges(const std::uint32_t* nodes, const std::uint32_t* escape,
                                                           const std::uint32_t* count, NodeRange* ranges) {
    const std::uint64_t i = globalThreadIndex();
    if (i < *count) ranges[i] = NodeRange{nodes[i], escape[nodes[i]]};
}

/// What the exact tests read of one mesh.
struct DeviceMeshView {
    const LbvhNode* nodes;        ///< Tree in the query's frame.
    const float* positions;       ///< Own-frame positions.
    const std::uint32_t* indices; ///< Triangles.
    DeviceTransform transform;    ///< To the query's frame.
    std::uint32_t mesh;           ///< Index reported.
};

/// The exact test of every candidate: a flag, the contact, its sort key (triangleA, triangleB)
/// and its position (for the gather after the sort).
__global__ void __launch_bounds__(cBlockSize)
    testCandidates(DeviceMeshView a, DeviceMeshView b, bool self, const FrontEntry* candidates, std::uint32_t count,
                   TriangleContact* contacts, unsigned long long* keys, std::uint8_t* meets, std::uint32_t* positions,
                   unsigned long long* triangleTests) {
    const std::uint64_t i = globalThreadIndex();
    bool tested = false;
    if (i < count) {
        const FrontEntry pair = candidates[i];
        tested = !self || !shareVertex(a.indices, leafTriangle(a.nodes[pair.leaf]), leafTriangle(b.nodes[pair.node]));
        TriangleContact contact;
        const bool meet = tested && testCandidateLeaves(
                                        a.nodes,
                                        TriangleSource{nullptr, a.positions, a.indices,
                                                       a.transform.present ? a.transform.m : nullptr, nullptr, nullptr},
                                        a.mesh, b.nodes,
                                        TriangleSource{nullptr, b.positions, b.indices,
                                                       b.transform.present ? b.transform.m : nullptr, nullptr, nullptr},
                                        b.mesh, self, pair, contact);
        meets[i] = meet ? 1 : 0;
        positions[i] = static_cast<std::uint32_t>(i);
        if (meet) {
            contacts[i] = contact;
            keys[i] = static_cast<unsigned long long>(contact.triangleA) << 32 | contact.triangleB;
        }
    }
    addWarpSum(triangleTests, tested ? 1u : 0u);
}

/// Gathers the contacts in sorted order.
__global__ void __launch_bounds__(cBlockSize)
    gatherContacts(const TriangleContact* contacts, const std::uint32_t* order, std::uint32_t count,
                   TriangleContact* out) {
    const std::uint64_t i = globalThreadIndex();
    if (i < count) out[i] = contacts[order[i]];
}

} // namespace bulletgpu::detail
