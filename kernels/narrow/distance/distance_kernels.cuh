// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/narrow/distance/distance_ops.h"

#include <cuda_runtime.h>

#include <cstdint>

/// CUDA kernels of the distance query (MeshDistance's CUDA engine, mesh_distance.cu): the
/// query's state on the device, the greedy descents, the breadth-first rounds, the leaf
/// measurements and the choice of the reported pair. Each step calls the per-element functions
/// of distance_ops.h that the CPU traversal calls.

namespace bulletgpu::detail::distance_device {

/// Most rounds of a query (the depths of both trees plus one); median-split trees of 2^32
/// triangles need 65.
constexpr int cMaxRounds = 160;
/// Threads per block of the traversal kernels (a multiple of the warp).
constexpr unsigned int cTraversalThreads = 128;
/// The most pairs of a round that descend greedily.
constexpr std::uint32_t cMaxDescents = 4096;
/// Leaf pairs the tie list holds.
constexpr std::uint32_t cTieCapacity = 1u << 16;
/// The key of no pair.
constexpr unsigned long long cNoKey = ~0ull;
/// Threads of the finishing kernel.
constexpr unsigned int cFinishThreads = 256;

/// A mesh on the device: what the kernels read of it.
struct DeviceMeshView {
    const float* positions;       ///< x, y, z per vertex (own frame).
    const std::uint32_t* indices; ///< Three per triangle.
    const RssNode* nodes;         ///< Its RSS tree, depth first.
};

/// A leaf pair measured at or below the running bound of its moment.
struct TieCandidate {
    double distance; ///< Its distance.
    std::uint32_t a; ///< Triangle of A.
    std::uint32_t b; ///< Triangle of B.
};

/// Inputs and shared state of one pass of a query, in device memory.
struct QueryState {
    double transformA[12];               ///< A to the world.
    double transformB[12];               ///< B to the world.
    double relative[12];                 ///< B's frame in A's (relativeTransform, computed on the host).
    double slack;                        ///< The query's allowance (querySlack).
    double knownFinal;                   ///< The final distance when known (its ties go to tieKey), else NaN.
    unsigned long long bestBits;         ///< Bits of the running bound (smallest distance measured).
    unsigned long long tieKey;           ///< Smallest (a << 32 | b) at the final distance.
    unsigned long long meetKey;          ///< Smallest (a << 32 | b) of the meeting pairs found.
    unsigned long long volumeTests;      ///< Lower bounds computed.
    unsigned long long triangleTests;    ///< Leaf pairs measured.
    unsigned int meeting;                ///< A meeting pair was found: every thread stops.
    unsigned int frontierOverflow;       ///< A round produced more pairs than a frontier holds.
    unsigned int tieOverflow;            ///< More leaf pairs were listed than the list holds.
    unsigned int tieCount;               ///< Leaf pairs listed (possibly past the list).
    unsigned int counts[cMaxRounds + 1]; ///< Pairs produced for each round (possibly past the frontier).
    unsigned int leafCounts[cMaxRounds]; ///< Leaf pairs listed in each round (possibly past the list).
};

/// What one pass sends back.
struct PassResult {
    double distance;                  ///< Distance of the reported pair.
    double best;                      ///< Final running bound.
    double pointA[3];                 ///< Closest (or meeting) point on A.
    double pointB[3];                 ///< Closest (or meeting) point on B.
    std::uint32_t triangleA;          ///< Reported triangle of A, or cNoNode.
    std::uint32_t triangleB;          ///< Reported triangle of B, or cNoNode.
    unsigned int intersecting;        ///< The reported pair meets.
    unsigned int frontierOverflow;    ///< See QueryState.
    unsigned int tieOverflow;         ///< See QueryState.
    unsigned int peakPairs;           ///< Most pairs produced or leaf pairs listed for one round.
    unsigned int leftover;            ///< Pairs produced past the last round (0 unless the depths are wrong).
    unsigned long long volumeTests;   ///< Lower bounds computed.
    unsigned long long triangleTests; ///< Leaf pairs measured.
};

/// The running bound.
__device__ __forceinline__ double runningBest(const QueryState* s) {
    return __longlong_as_double(static_cast<long long>(*static_cast<const volatile unsigned long long*>(&s->bestBits)));
}

/// True once a meeting pair was found.
__device__ __forceinline__ bool stopped(const QueryState* s) {
    return *static_cast<const volatile unsigned int*>(&s->meeting) != 0;
}

/// The key that orders pairs by (a, b).
__device__ __forceinline__ unsigned long long trianglePairKey(std::uint32_t a, std::uint32_t b) {
    return (static_cast<unsigned long long>(a) << 32) | b;
}

/// A device mesh placed by `transform`.
__device__ __forceinline__ DistanceMeshView placed(const DeviceMeshView& m, const double* transform) {
    return DistanceMeshView{m.positions, m.indices, m.nodes, transform};
}

/// Measures a leaf pair: a meeting pair stops the query; else the running bound is lowered and
/// the pair listed (or keyed, when the final distance is known) if it is at or below it.
__device__ void measureLeaf(const DeviceMeshView& a, const DeviceMeshView& b, QueryState* s,
                            const DistanceNodePair& pair, TieCandidate* ties, unsigned long long& triangleTests) {
    std::uint32_t ta, tb;
    const TriangleDistance d = leafPairDistance(placed(a, s->transformA), placed(b, s->transformB), pair, &ta, &tb);
    ++triangleTests;
    if (d.intersecting) {
        atomicMin(&s->meetKey, trianglePairKey(ta, tb));
        atomicMin(&s->bestBits, 0ull);
        atomicExch(&s->meeting, 1u);
        return;
    }
    const auto bits = static_cast<unsigned long long>(__double_as_longlong(d.distance));
    const unsigned long long before = atomicMin(&s->bestBits, bits);
    if (d.distance == s->knownFinal) {
        atomicMin(&s->tieKey, trianglePairKey(ta, tb));
        return;
    }
    if (bits > before) return;
    const unsigned int slot = atomicAdd(&s->tieCount, 1u);
    if (slot < cTieCapacity) {
        ties[slot] = TieCandidate{d.distance, ta, tb};
    } else {
        s->tieOverflow = 1;
    }
}

/// Descends from `pair` to a leaf pair, always into the child pair of smaller bound (bounds
/// computed in full), and measures it; stops where the bound exceeds the running one.
__device__ void descend(const DeviceMeshView& a, const DeviceMeshView& b, QueryState* s, DistanceNodePair pair,
                        TieCandidate* ties, unsigned long long& volumeTests, unsigned long long& triangleTests) {
    while (!isLeafPair(a.nodes, b.nodes, pair)) {
        if (pair.bound > runningBest(s)) return;
        DistanceNodePair child[2];
        childPairs(a.nodes, b.nodes, s->relative, pair, INFINITY, s->slack, child);
        volumeTests += 2;
        pair = child[1].bound < child[0].bound ? child[1] : child[0];
    }
    if (pair.bound <= runningBest(s)) measureLeaf(a, b, s, pair, ties, triangleTests);
}

/// Adds a thread's counters to the query's.
__device__ __forceinline__ void addCounters(QueryState* s, unsigned long long volumeTests,
                                            unsigned long long triangleTests) {
    if (volumeTests != 0) atomicAdd(&s->volumeTests, volumeTests);
    if (triangleTests != 0) atomicAdd(&s->triangleTests, triangleTests);
}

/// Greedy descents from the first cMaxDescents pairs of round `round` (held in `pairs`).
__global__ void __launch_bounds__(cTraversalThreads)
    descendKernel(DeviceMeshView a, DeviceMeshView b, QueryState* s, const DistanceNodePair* pairs,
                  std::uint32_t capacity, int round, TieCandidate* ties) {
    const std::uint32_t count = min(min(s->counts[round], capacity), cMaxDescents);
    const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count || stopped(s)) return;
    unsigned long long volumeTests = 0, triangleTests = 0;
    descend(a, b, s, pairs[i], ties, volumeTests, triangleTests);
    addCounters(s, volumeTests, triangleTests);
}

/// One round: every pair of `in` within the running bound is listed in `leaves` (two leaves)
/// or split into its child pairs within the bound, appended to `out` (a warp reserves its room
/// in each with one atomicAdd). Pairs past `capacity` are counted, not stored, and flag the
/// pass.
__global__ void __launch_bounds__(cTraversalThreads)
    expandKernel(DeviceMeshView a, DeviceMeshView b, QueryState* s, const DistanceNodePair* in, DistanceNodePair* out,
                 DistanceNodePair* leaves, std::uint32_t capacity, int round) {
    const std::uint32_t total = min(s->counts[round], capacity);
    const std::uint32_t lane = threadIdx.x & 31u;
    const std::uint32_t stride = gridDim.x * blockDim.x;
    unsigned long long volumeTests = 0;
    // The loop runs alike on every lane of a warp (it steps by whole warps), so the ballots and
    // shuffles below see all 32 lanes.
    for (std::uint32_t first = blockIdx.x * blockDim.x + threadIdx.x - lane; first < total; first += stride) {
        const std::uint32_t i = first + lane;
        DistanceNodePair child[2];
        int pushes = 0;
        bool leaf = false;
        if (i < total && !stopped(s)) {
            const DistanceNodePair pair = in[i];
            if (pair.bound <= runningBest(s)) {
                if (isLeafPair(a.nodes, b.nodes, pair)) {
                    leaf = true;
                    child[0] = pair;
                } else {
                    DistanceNodePair split[2];
                    childPairs(a.nodes, b.nodes, s->relative, pair, runningBest(s) + s->slack, s->slack, split);
                    volumeTests += 2;
                    const double best = runningBest(s);
                    for (const DistanceNodePair& c : split) {
                        if (c.bound <= best) child[pushes++] = c;
                    }
                }
            }
        }
        const unsigned int leafLanes = __ballot_sync(0xffffffffu, leaf);
        if (leafLanes != 0) {
            unsigned int leafBase = 0;
            if (lane == 0) leafBase = atomicAdd(&s->leafCounts[round], static_cast<unsigned int>(__popc(leafLanes)));
            leafBase = __shfl_sync(0xffffffffu, leafBase, 0);
            const unsigned int at = leafBase + static_cast<unsigned int>(__popc(leafLanes & ((1u << lane) - 1u)));
            if (leaf && at < capacity) {
                leaves[at] = child[0];
            } else if (leaf) {
                s->frontierOverflow = 1;
            }
        }
        int end = pushes; // inclusive prefix sum of the lanes' pushes
        for (int d = 1; d < 32; d <<= 1) {
            const int below = __shfl_up_sync(0xffffffffu, end, d);
            if (lane >= static_cast<std::uint32_t>(d)) end += below;
        }
        unsigned int base = 0;
        if (lane == 31 && end > 0) base = atomicAdd(&s->counts[round + 1], static_cast<unsigned int>(end));
        base = __shfl_sync(0xffffffffu, base, 31);
        for (int k = 0; k < pushes; ++k) {
            const unsigned int at = base + static_cast<unsigned int>(end - pushes + k);
            if (at < capacity) {
                out[at] = child[k];
            } else {
                s->frontierOverflow = 1;
            }
        }
    }
    addCounters(s, volumeTests, 0);
}

/// Measures the leaf pairs that round `round` listed, those still within the running bound.
__global__ void __launch_bounds__(cTraversalThreads)
    measureKernel(DeviceMeshView a, DeviceMeshView b, QueryState* s, const DistanceNodePair* leaves,
                  std::uint32_t capacity, int round, TieCandidate* ties) {
    const std::uint32_t total = min(s->leafCounts[round], capacity);
    unsigned long long triangleTests = 0;
    for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        if (stopped(s)) break;
        const DistanceNodePair pair = leaves[i];
        if (pair.bound <= runningBest(s)) measureLeaf(a, b, s, pair, ties, triangleTests);
    }
    addCounters(s, 0, triangleTests);
}

/// Picks the reported pair (a meeting one, else the smallest (a, b) of the listed pairs at the
/// final bound), recomputes its points and writes the pass's result (one block).
__global__ void __launch_bounds__(cFinishThreads)
    finishKernel(DeviceMeshView a, DeviceMeshView b, QueryState* s, const TieCandidate* ties, int rounds,
                 PassResult* result) {
    const double best = runningBest(s);
    const std::uint32_t listed = min(s->tieCount, cTieCapacity);
    for (std::uint32_t i = threadIdx.x; i < listed; i += blockDim.x) {
        if (ties[i].distance == best) atomicMin(&s->tieKey, trianglePairKey(ties[i].a, ties[i].b));
    }
    __syncthreads();
    if (threadIdx.x != 0) return;
    PassResult r{};
    r.best = best;
    r.distance = INFINITY;
    r.triangleA = r.triangleB = cNoNode;
    const bool meeting = s->meetKey != cNoKey;
    const unsigned long long key = meeting ? s->meetKey : *static_cast<const volatile unsigned long long*>(&s->tieKey);
    if (key != cNoKey) {
        r.triangleA = static_cast<std::uint32_t>(key >> 32);
        r.triangleB = static_cast<std::uint32_t>(key & 0xffffffffu);
        const TriangleDistance d =
            leafPairDistance(placed(a, s->transformA), r.triangleA, placed(b, s->transformB), r.triangleB, meeting);
        r.distance = d.distance;
        r.intersecting = d.intersecting ? 1u : 0u;
        for (int k = 0; k < 3; ++k) {
            r.pointA[k] = d.a[k];
            r.pointB[k] = d.b[k];
        }
    }
    for (int k = 0; k < rounds; ++k) r.peakPairs = max(r.peakPairs, max(s->counts[k], s->leafCounts[k]));
    r.leftover = s->counts[rounds];
    r.frontierOverflow = s->frontierOverflow;
    r.tieOverflow = s->tieOverflow;
    r.volumeTests = s->volumeTests;
    r.triangleTests = s->triangleTests;
    *result = r;
}

} // namespace bulletgpu::detail::distance_device
