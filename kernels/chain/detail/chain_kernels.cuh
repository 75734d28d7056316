// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/chain/chain_ops.h"
#include "kernels/common/launch.h"

#include <cstdint>

/// The CUDA kernels of the sphere-chain solver: the refit as independent subtrees and then the
/// upper tree (two launches), the traversal one thread per sphere (or per listed sphere), the
/// contacts one thread per pair. The math is chain_ops.h's.

namespace bulletgpu::detail {

/// Leaves of one subtree of the refit: 2^cChainSubtreeLevels, eight per thread of a block.
constexpr int cChainSubtreeLevels = 11;

/// Computes the sphere and box of the nodes k in [first, end) of `level` (>= 1) from the level
/// below, the block's threads striding over them.
__device__ inline void refitChainRange(ChainSphere* nodes, FloatBox* boxes, const ChainLevels& tree, int level,
                                       std::uint64_t first, std::uint64_t end) {
    for (std::uint64_t k = first + threadIdx.x; k < end; k += blockDim.x) {
        const auto node = static_cast<std::uint32_t>(k);
        nodes[tree.offset[level] + k] = parentNode(nodes, tree, level, node);
        boxes[tree.offset[level] + k] = parentBox(boxes, tree, level, node);
    }
}

/// Refits the independent subtrees (the paper's aGPU2): block b owns the leaves
/// [b * 2^L, (b + 1) * 2^L), L = cChainSubtreeLevels, and every node above them up to level L.
/// The children of a node lie in its parent's block, so a barrier between levels suffices, and
/// one launch replaces the L + 1 launches of a level-by-level refit.
__global__ void __launch_bounds__(cBlockSize)
    refitChainSubtrees(ChainSphere* nodes, FloatBox* boxes, ChainLevels tree) {
    const std::uint64_t firstLeaf = static_cast<std::uint64_t>(blockIdx.x) << cChainSubtreeLevels;
    const std::uint64_t subtreeEnd = firstLeaf + (std::uint64_t{1} << cChainSubtreeLevels);
    const std::uint64_t leafEnd = subtreeEnd < tree.count[0] ? subtreeEnd : tree.count[0];
    for (std::uint64_t i = firstLeaf + threadIdx.x; i < leafEnd; i += blockDim.x) boxes[i] = boxAroundSphere(nodes[i]);
    for (int level = 1; level <= cChainSubtreeLevels && level < tree.levels; ++level) {
        __syncthreads(); // the level below is written (global writes are visible within the block)
        const std::uint64_t first = firstLeaf >> level;
        const std::uint64_t levelEnd = first + (std::uint64_t{1} << (cChainSubtreeLevels - level));
        const std::uint64_t end = levelEnd < tree.count[level] ? levelEnd : tree.count[level];
        refitChainRange(nodes, boxes, tree, level, first, end);
    }
}

/// Refits every level above the subtrees in one block, level after level.
__global__ void __launch_bounds__(cBlockSize)
    refitChainUpperTree(ChainSphere* nodes, FloatBox* boxes, ChainLevels tree) {
    for (int level = cChainSubtreeLevels + 1; level < tree.levels; ++level) {
        __syncthreads();
        refitChainRange(nodes, boxes, tree, level, 0, tree.count[level]);
    }
}

/// Appends the pair key (first << 32 | leaf) of every reported leaf; keys past `capacity` are
/// counted but not written, so the caller can grow the buffer and run again.
struct DevicePairAppender {
    unsigned long long* keys;
    unsigned long long capacity;
    unsigned long long* count;
    std::uint64_t first;

    __device__ void operator()(std::uint32_t leaf) {
        const unsigned long long slot = atomicAdd(count, 1ull);
        if (slot < capacity) keys[slot] = first << 32 | leaf;
    }
};

/// Traverses the hierarchy for every sphere (the paper's GPU2), appending unsorted pair keys.
__global__ void __launch_bounds__(cBlockSize)
    traverseChainSpheres(const ChainSphere* nodes, const FloatBox* boxes, ChainLevels tree,
                         const std::uint32_t* sphereChain, const std::uint32_t* chainStart, ChainQuery query,
                         unsigned long long* keys, unsigned long long capacity, unsigned long long* count) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= tree.count[0]) return;
    const auto leaf = static_cast<std::uint32_t>(i);
    const ChainCandidates range = candidatesOf(leaf, chainStart[sphereChain[leaf] + 1], tree.count[0], query);
    DevicePairAppender append{keys, capacity, count, i};
    visitTouchingLeaves(nodes, boxes, tree, leaf, range, append);
}

/// Traverses the hierarchy with two threads per sphere, one per half of the hierarchy (the
/// paper's GPU2v2), appending unsorted pair keys.
__global__ void __launch_bounds__(cBlockSize)
    traverseChainSphereHalves(const ChainSphere* nodes, const FloatBox* boxes, ChainLevels tree,
                              const std::uint32_t* sphereChain, const std::uint32_t* chainStart, ChainQuery query,
                              unsigned long long* keys, unsigned long long capacity, unsigned long long* count) {
    const std::uint64_t thread = globalThreadIndex();
    const std::uint64_t i = thread / 2;
    if (i >= tree.count[0]) return;
    const auto leaf = static_cast<std::uint32_t>(i);
    const ChainCandidates range = candidatesOf(leaf, chainStart[sphereChain[leaf] + 1], tree.count[0], query);
    DevicePairAppender append{keys, capacity, count, i};
    visitTouchingLeaves(nodes, boxes, tree, leaf, halfOfCandidates(range, tree, static_cast<std::uint32_t>(thread & 1)),
                        append);
}

/// Marks the `count` listed spheres in `listed` (one byte per sphere, zero elsewhere).
__global__ void __launch_bounds__(cBlockSize)
    markListedChainSpheres(const std::uint32_t* spheres, std::uint64_t count, std::uint8_t* listed) {
    const std::uint64_t k = globalThreadIndex();
    if (k < count) listed[spheres[k]] = 1;
}

/// Clears the marks markListedChainSpheres set.
__global__ void __launch_bounds__(cBlockSize)
    clearListedChainSpheres(const std::uint32_t* spheres, std::uint64_t count, std::uint8_t* listed) {
    const std::uint64_t k = globalThreadIndex();
    if (k < count) listed[spheres[k]] = 0;
}

/// Whether a sphere is listed, from the marks.
struct DeviceListedSpheres {
    const std::uint8_t* listed;
    __device__ bool operator()(std::uint32_t j) const { return listed[j] != 0; }
};

/// Appends the pair key (i << 32 | j) of every reported pair, as DevicePairAppender does.
struct DeviceKeyAppender {
    unsigned long long* keys;
    unsigned long long capacity;
    unsigned long long* count;

    __device__ void operator()(std::uint32_t i, std::uint32_t j) {
        const unsigned long long slot = atomicAdd(count, 1ull);
        if (slot < capacity) keys[slot] = static_cast<unsigned long long>(i) << 32 | j;
    }
};

/// Traverses the hierarchy for every listed sphere (visitPairsOfListed), one thread each,
/// appending unsorted pair keys.
__global__ void __launch_bounds__(cBlockSize)
    traverseListedChainSpheres(const ChainSphere* nodes, const FloatBox* boxes, ChainLevels tree,
                               const std::uint32_t* sphereChain, const std::uint32_t* chainStart, ChainQuery query,
                               const std::uint32_t* spheres, std::uint64_t listedCount, const std::uint8_t* listed,
                               unsigned long long* keys, unsigned long long capacity, unsigned long long* count) {
    const std::uint64_t k = globalThreadIndex();
    if (k >= listedCount) return;
    const DeviceListedSpheres isListed{listed};
    DeviceKeyAppender report{keys, capacity, count};
    visitPairsOfListed(nodes, boxes, tree, sphereChain, chainStart, query, spheres[k], isListed, report);
}

/// The contact of each sorted pair key.
__global__ void __launch_bounds__(cBlockSize)
    writeChainContacts(const ChainSphere* leaves, const std::uint32_t* sphereChain, const std::uint32_t* chainStart,
                       const unsigned long long* keys, std::uint64_t pairs, ChainContact* contacts) {
    const std::uint64_t p = globalThreadIndex();
    if (p >= pairs) return;
    const unsigned long long key = keys[p];
    contacts[p] = makeContact(leaves, sphereChain, chainStart, static_cast<std::uint32_t>(key >> 32),
                              static_cast<std::uint32_t>(key));
}

} // namespace bulletgpu::detail
