// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/launch.h"
#include "kernels/narrow/engine/narrow_device.cuh"
#include "kernels/narrow/geometry/candidate_proximity.h"
#include "kernels/narrow/traversal/bvtt_front_ops.h"

#include <cuda/std/tuple>

#include <cstdint>

/// CUDA kernels of the contact query (TriangleMeshSet::findProximity): the walk of every query
/// leaf over the other mesh's grown tree (the CPU walk's generateFront, counted then written),
/// the per-candidate work of candidate_proximity.h appending to one buffer, and the gather after
/// the sort by proximityBefore's key. Included by narrow_proximity_cuda.cu only.

namespace bulletgpu::detail {

/// What the contact-query kernels read of one side of a query.
struct DeviceProximitySide {
    FrontTree tree;                     ///< The grown tree in the query's frame (boxes only).
    const float* positions;             ///< Own-frame positions.
    const std::uint32_t* indices;       ///< Three vertex indices per triangle.
    const std::uint32_t* triangleEdges; ///< MeshFeatures::triangleEdges.
    const FeatureOwnership* owned;      ///< MeshFeatures::owned.
    const std::uint32_t* weld;          ///< Canonical vertices, or null (no welds).
    DeviceTransform transform;          ///< To the query's frame.
    std::uint32_t mesh;                 ///< Index reported in contacts.
};

/// The sort key of a contact within one query (meshA and meshB are the query's): proximityBefore's
/// order from kind down.
struct ProximityKey {
    std::uint32_t kind;     ///< ProximityContact::kind.
    std::uint32_t featureA; ///< ProximityContact::featureA.
    std::uint32_t featureB; ///< ProximityContact::featureB.
};

/// ProximityKey's members for CUB's radix sort, most significant first.
struct ProximityKeyParts {
    __host__ __device__ ::cuda::std::tuple<std::uint32_t&, std::uint32_t&, std::uint32_t&>
    operator()(ProximityKey& key) const {
        return {key.kind, key.featureA, key.featureB};
    }
};

/// A walk sink that writes the candidates only (the contact query keeps no front on the device).
struct CandidateWriter {
    FrontEntry* candidates; ///< Next candidate (query leaf, other leaf) goes here.

    __device__ void front(std::uint32_t, std::uint32_t) {}
    __device__ void candidate(std::uint32_t leaf, std::uint32_t node) { *candidates++ = FrontEntry{leaf, node}; }
    __device__ void boxTest() {}
};

/// First pass of the walk: the candidates of each query leaf (depth-first position), counted;
/// `totals` receives the sums of box tests, walk entries and candidates in 64 bits.
__global__ void __launch_bounds__(cBlockSize)
    countProximityCandidates(FrontTree query, FrontTree other, bool self, std::uint32_t* counts,
                             unsigned long long* totals) {
    const std::uint64_t i = globalThreadIndex();
    FrontCounter counter;
    if (i < query.leafCount) {
        generateFront(query, other, self, static_cast<std::uint32_t>(i), counter);
        counts[i] = counter.candidates;
    }
    addWarpSum(totals, counter.boxTests);
    addWarpSum(totals + 1, counter.fronts);
    addWarpSum(totals + 2, counter.candidates);
}

/// Second pass of the walk: each query leaf writes its candidates from its offset.
__global__ void __launch_bounds__(cBlockSize)
    writeProximityCandidates(FrontTree query, FrontTree other, bool self, const std::uint32_t* offsets,
                             FrontEntry* candidates) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= query.leafCount) return;
    CandidateWriter writer{candidates + offsets[i]};
    generateFront(query, other, self, static_cast<std::uint32_t>(i), writer);
}

/// The contact query's view of one side, as the CPU path makes it (proximityViewOf): triangles
/// computed from the positions (moved by the side's transform), planes computed by the exact test.
__device__ __forceinline__ ProximityMeshView proximityViewOf(const DeviceProximitySide& side) {
    return ProximityMeshView{TriangleSource{nullptr, side.positions, side.indices,
                                            side.transform.present ? side.transform.m : nullptr, nullptr},
                             side.indices,
                             side.triangleEdges,
                             side.owned,
                             side.weld,
                             side.mesh};
}

/// An emit functor of candidateProximity appending each contact, its key and its position to
/// buffers of `capacity`; past the capacity it only counts (the caller grows and runs again).
struct AppendProximity {
    ProximityContact* contacts; ///< The contacts, in no order.
    ProximityKey* keys;         ///< Their sort keys.
    std::uint32_t* positions;   ///< Their positions (the values the sort carries).
    std::uint64_t capacity;     ///< Room in each buffer.
    unsigned long long* count;  ///< Contacts emitted so far (may pass the capacity).

    __device__ void operator()(const ProximityContact& contact) {
        const unsigned long long slot = atomicAdd(count, 1ull);
        if (slot >= capacity) return;
        contacts[slot] = contact;
        keys[slot] = ProximityKey{contact.kind, contact.featureA, contact.featureB};
        positions[slot] = static_cast<std::uint32_t>(slot);
    }
};

/// The per-candidate work of every candidate (candidateProximity, the CPU path's function).
__global__ void __launch_bounds__(cBlockSize)
    testProximityCandidates(DeviceProximitySide a, DeviceProximitySide b, bool self, double distance,
                            const FrontEntry* candidates, std::uint32_t count, AppendProximity append) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= count) return;
    const FrontEntry pair = candidates[i];
    const ProximityMeshView viewA = proximityViewOf(a), viewB = proximityViewOf(b);
    candidateProximity(viewA, leafTriangle(a.tree.nodes[pair.leaf]), viewB, leafTriangle(b.tree.nodes[pair.node]), self,
                       distance, append);
}

/// Gathers the contacts in sorted order.
__global__ void __launch_bounds__(cBlockSize)
    gatherProximityContacts(const ProximityContact* contacts, const std::uint32_t* order, std::uint32_t count,
                            ProximityContact* out) {
    const std::uint64_t i = globalThreadIndex();
    if (i < count) out[i] = contacts[order[i]];
}

} // namespace bulletgpu::detail
