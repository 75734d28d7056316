// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/chain/chain_ops.h"
#include "kernels/common/launch.h"

#include <cstdint>

/// The CUDA kernels of the sphere-chain solver: one thread per node (refit, one launch per
/// level), per sphere (traversal) or per pair (contacts). The math is chain_ops.h's.

namespace bulletgpu::detail {

/// Computes the box of every leaf.
__global__ void __launch_bounds__(cBlockSize)
    boxChainLeaves(const ChainSphere* nodes, ChainBox* boxes, std::uint32_t leaves) {
    const std::uint64_t i = globalThreadIndex();
    if (i < leaves) boxes[i] = boxAroundSphere(nodes[i]);
}

/// Computes the sphere and box of every node of `level` from the level below.
__global__ void __launch_bounds__(cBlockSize)
    refitChainLevel(ChainSphere* nodes, ChainBox* boxes, ChainLevels tree, int level) {
    const std::uint64_t k = globalThreadIndex();
    if (k >= tree.count[level]) return;
    const auto node = static_cast<std::uint32_t>(k);
    nodes[tree.offset[level] + k] = parentNode(nodes, tree, level, node);
    boxes[tree.offset[level] + k] = parentBox(boxes, tree, level, node);
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
    traverseChainSpheres(const ChainSphere* nodes, const ChainBox* boxes, ChainLevels tree,
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
    traverseChainSphereHalves(const ChainSphere* nodes, const ChainBox* boxes, ChainLevels tree,
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
