// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/launch.h"
#include "kernels/narrow/ccd/ccd_candidate_ops.h"
#include "kernels/narrow/ccd/ccd_frame_query.h"
#include "kernels/narrow/traversal/bvtt_front_ops.h"

#include <cstdint>

/// CUDA kernels of the whole-frame CCD (ccd_frame_query_cuda.cu): the leaf walk for triangle
/// pairs and the expansion into feature pairs, each in two passes (count, then write from the
/// scanned offsets), the exact tests, and the keys of the impacts' sort. Each calls the
/// per-element functions the CPU path calls.

namespace bulletgpu::ccdkernels {

/// Slots of the device counters.
enum Counter : int {
    cFeaturePairs = 0,   ///< CcdExpandCounts::featurePairs.
    cFirstBoxCulled = 1, ///< CcdExpandCounts::firstBoxCulled.
    cPlaneCulled = 2,    ///< CcdExpandCounts::planeCulled.
    cIterations = 3,     ///< Boxes the exact tests examined.
    cRootRejections = 4, ///< Exact tests that ruled their pair out on the first box.
    cImpacts = 5,        ///< Hits written.
    cCounterCount = 6,   ///< Slots.
};

/// Adds `value` of every lane of the warp into `*total` (one atomic per warp). Every lane of the
/// warp must call it.
__device__ __forceinline__ void addAcrossWarp(std::uint64_t value, unsigned long long* total) {
    for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_down_sync(0xffffffffu, value, offset);
    if ((threadIdx.x & 31u) == 0 && value != 0) atomicAdd(total, static_cast<unsigned long long>(value));
}

/// The swept bounds of every feature of `mesh` (sweptBoundsOf): item i < vertexCount is vertex
/// i, the next edgeCount items the edges, the rest the triangles.
__global__ void __launch_bounds__(cBlockSize)
    computeSweptBounds(CcdMeshView mesh, std::uint32_t vertexCount, std::uint32_t edgeCount,
                       std::uint32_t triangleCount, double eta, CcdOptions options, SweptBounds* vertexBounds,
                       SweptBounds* edgeBounds, SweptBounds* faceBounds) {
    const std::uint64_t i = globalThreadIndex();
    if (i < vertexCount) {
        const auto vertex = static_cast<std::uint32_t>(i);
        vertexBounds[i] = sweptBoundsOf(mesh, &vertex, 1, eta, options);
    } else if (i < vertexCount + static_cast<std::uint64_t>(edgeCount)) {
        const std::uint64_t e = i - vertexCount;
        edgeBounds[e] = sweptBoundsOf(mesh, mesh.edges + 2 * e, 2, eta, options);
    } else if (i < vertexCount + static_cast<std::uint64_t>(edgeCount) + triangleCount) {
        const std::uint64_t t = i - vertexCount - edgeCount;
        faceBounds[t] = sweptBoundsOf(mesh, mesh.indices + 3 * t, 3, eta, options);
    }
}

/// A walk sink that writes the overlapping leaf pairs from a given position.
struct LeafPairWriter {
    FrontEntry* next; ///< Next pair goes here.

    __device__ void front(std::uint32_t, std::uint32_t) {}
    __device__ void candidate(std::uint32_t leaf, std::uint32_t node) { *next++ = FrontEntry{leaf, node}; }
    __device__ void boxTest() {}
};

/// Counts the overlapping leaf pairs of each query leaf (generateFront, boxes only).
__global__ void __launch_bounds__(cBlockSize)
    countLeafPairs(FrontTree query, FrontTree other, bool self, std::uint64_t* counts) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= query.leafCount) return;
    FrontCounter counter;
    generateFront(query, other, self, static_cast<std::uint32_t>(i), counter);
    counts[i] = counter.candidates;
}

/// Writes the overlapping leaf pairs of each query leaf from its offset.
__global__ void __launch_bounds__(cBlockSize)
    writeLeafPairs(FrontTree query, FrontTree other, bool self, const std::uint64_t* offsets, FrontEntry* pairs) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= query.leafCount) return;
    LeafPairWriter writer{pairs + offsets[i]};
    generateFront(query, other, self, static_cast<std::uint32_t>(i), writer);
}

/// What the expansion kernels read.
struct ExpandInput {
    const FrontEntry* pairs; ///< Leaf pairs (node of A, node of B).
    std::uint64_t count;     ///< Pairs.
    const LbvhNode* nodesA;  ///< Tree of A.
    const LbvhNode* nodesB;  ///< Tree of B (A's in a self query).
    CcdMeshView meshA;       ///< Mesh A on the device.
    CcdMeshView meshB;       ///< Mesh B on the device (A in a self query).
    bool self;               ///< Self query.
    bool prefilter;          ///< Drop first-box and plane-separated pairs.
    double eta;              ///< Minimum separation.
};

/// An expansion sink that only counts.
struct FeaturePairCounter {
    std::uint32_t kept = 0; ///< Pairs emitted.

    __device__ void operator()(const CcdFeaturePair&) { ++kept; }
};

/// An expansion sink that writes from a given position.
struct FeaturePairWriter {
    CcdFeaturePair* next; ///< Next pair goes here.

    __device__ void operator()(const CcdFeaturePair& pair) { *next++ = pair; }
};

/// Expands leaf pair i of `in` into `emit`, adding to `counts`.
template <typename Emit>
__device__ void expandLeafPair(const ExpandInput& in, std::uint64_t i, Emit& emit, CcdExpandCounts& counts) {
    const std::uint32_t ta = leafTriangle(in.nodesA[in.pairs[i].leaf]);
    const std::uint32_t tb = leafTriangle(in.nodesB[in.pairs[i].node]);
    expandTrianglePair(in.meshA, ta, in.meshB, tb, in.self, in.prefilter, in.eta, emit, counts);
}

/// Counts the feature pairs each leaf pair keeps, and adds the expansion's counts to
/// counters[cFeaturePairs..cPlaneCulled].
__global__ void __launch_bounds__(cBlockSize)
    countFeaturePairs(ExpandInput in, std::uint64_t* counts, unsigned long long* counters) {
    const std::uint64_t i = globalThreadIndex();
    CcdExpandCounts expand;
    if (i < in.count) {
        FeaturePairCounter counter;
        expandLeafPair(in, i, counter, expand);
        counts[i] = counter.kept;
    }
    addAcrossWarp(expand.featurePairs, counters + cFeaturePairs);
    addAcrossWarp(expand.firstBoxCulled, counters + cFirstBoxCulled);
    addAcrossWarp(expand.planeCulled, counters + cPlaneCulled);
}

/// Writes the feature pairs each leaf pair keeps from its offset.
__global__ void __launch_bounds__(cBlockSize)
    writeFeaturePairs(ExpandInput in, const std::uint64_t* offsets, CcdFeaturePair* candidates) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= in.count) return;
    CcdExpandCounts expand;
    FeaturePairWriter writer{candidates + offsets[i]};
    expandLeafPair(in, i, writer, expand);
}

/// The exact test of each candidate; hits are appended to `impacts` (room for every candidate)
/// in any order, counted in counters[cImpacts], with the tests' counts in cIterations and
/// cRootRejections.
__global__ void __launch_bounds__(cBlockSize)
    runExactTests(const CcdFeaturePair* candidates, std::uint64_t count, CcdMeshView meshA, CcdMeshView meshB,
                  double eta, CcdOptions options, CcdImpact* impacts, unsigned long long* counters) {
    const std::uint64_t i = globalThreadIndex();
    std::uint64_t iterations = 0, rootRejections = 0;
    if (i < count) {
        const CcdFeaturePair pair = candidates[i];
        const CcdResult result = testFeaturePair(meshA, meshB, pair, eta, options);
        iterations = result.iterations;
        rootRejections = !result.hit && result.iterations == 1;
        if (result.hit) impacts[atomicAdd(counters + cImpacts, 1ull)] = CcdImpact{pair, result.toi, result.undecided};
    }
    addAcrossWarp(iterations, counters + cIterations);
    addAcrossWarp(rootRejections, counters + cRootRejections);
}

/// The first sort pass's keys (b) and the identity order.
__global__ void __launch_bounds__(cBlockSize)
    impactKeysByB(const CcdImpact* impacts, std::uint64_t count, std::uint32_t* keys, std::uint32_t* order) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= count) return;
    keys[i] = impacts[i].pair.b;
    order[i] = static_cast<std::uint32_t>(i);
}

/// The second sort pass's keys: (kind, a) of the impacts in `order`, kind above bit 32.
__global__ void __launch_bounds__(cBlockSize) impactKeysByKindAndA(const CcdImpact* impacts, const std::uint32_t* order,
                                                                   std::uint64_t count, std::uint64_t* keys) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= count) return;
    const CcdFeaturePair pair = impacts[order[i]].pair;
    keys[i] = (static_cast<std::uint64_t>(pair.kind) << 32) | pair.a;
}

/// out[i] = impacts[order[i]].
__global__ void __launch_bounds__(cBlockSize)
    gatherImpacts(const CcdImpact* impacts, const std::uint32_t* order, std::uint64_t count, CcdImpact* out) {
    const std::uint64_t i = globalThreadIndex();
    if (i < count) out[i] = impacts[order[i]];
}

} // namespace bulletgpu::ccdkernels
