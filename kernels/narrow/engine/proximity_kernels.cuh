// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/launch.h"
#include "kernels/narrow/engine/narrow_device.cuh"
#include "kernels/narrow/geometry/candidate_proximity.h"
#include "kernels/narrow/traversal/bvtt_front_ops.h"

#include <cuda/std/tuple>

#include <cstdint>

/// CUDA kernels of the contact query (TriangleMeshSet::findProximity) and of the points-against-
/// mesh query (findPointContacts): the walk of every query leaf (or point's grown box) over the
/// other mesh's grown tree (the CPU walk's generateFront and walkFront, counted then written),
/// the per-candidate work of candidate_proximity.h (pointTriangleContact) appending to one
/// buffer, and the gather after the sort by the CPU sort's key. Included by
/// narrow_proximity_cuda.cu only.

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

/// One query of a batch on the device: a against b, or a against itself when `self`.
struct DeviceProximityQuery {
    DeviceProximitySide a;   ///< The side whose leaves walk the other's tree.
    DeviceProximitySide b;   ///< The other side (a's own arrays again in a self query).
    std::uint32_t firstLeaf; ///< Where the query's leaves of a start among the batch's walk items.
    std::uint32_t self;      ///< 1 in a self query.
};

/// The query of the batch that walk item `item` belongs to.
__device__ __forceinline__ std::uint32_t queryOfLeaf(const DeviceProximityQuery* queries, std::uint32_t count,
                                                     std::uint64_t item) {
    return batchEntryOf(count, item, [queries](std::uint32_t q) { return queries[q].firstLeaf; });
}

/// The sort key of a contact in a batch: the query's position, then proximityBefore's order from
/// kind down (meshA and meshB are the query's).
struct ProximityKey {
    std::uint32_t query;    ///< Position of the contact's query in the batch.
    std::uint32_t kind;     ///< ProximityContact::kind.
    std::uint32_t featureA; ///< ProximityContact::featureA.
    std::uint32_t featureB; ///< ProximityContact::featureB.
};

/// ProximityKey's members for CUB's radix sort, most significant first.
struct ProximityKeyParts {
    /// References to kind, featureA and featureB.
    __host__ __device__ ::cuda::std::tuple<std::uint32_t&, std::uint32_t&, std::uint32_t&, std::uint32_t&>
    operator()(ProximityKey& key) const {
        return {key.query, key.kind, key.featureA, key.featureB};
    }
};

/// A walk sink that writes the candidates only (the contact query keeps no front on the device),
/// and each one's query when `queries` is not null.
struct CandidateWriter {
    FrontEntry* candidates;  ///< Next candidate (query leaf, other leaf) goes here.
    std::uint32_t* queries;  ///< Next candidate's query goes here, or null.
    std::uint32_t query = 0; ///< The query of the walking leaf.

    /// A node where the walk stops: not kept.
    __device__ void front(std::uint32_t, std::uint32_t) {}
    /// A candidate leaf pair: written.
    __device__ void candidate(std::uint32_t leaf, std::uint32_t node) {
        *candidates++ = FrontEntry{leaf, node};
        if (queries != nullptr) *queries++ = query;
    }
    /// A box test: not counted.
    __device__ void boxTest() {}
};

/// First pass of the walk over a batch of `queryCount` queries: the candidates of each of the
/// `items` walk items (a query's leaf of a, depth-first position) counted; `totals` receives the
/// sums of box tests, walk entries and candidates in 64 bits.
__global__ void __launch_bounds__(cBlockSize)
    countProximityCandidates(const DeviceProximityQuery* queries, std::uint32_t queryCount, std::uint32_t items,
                             std::uint32_t* counts, unsigned long long* totals) {
    const std::uint64_t i = globalThreadIndex();
    FrontCounter counter;
    if (i < items) {
        const DeviceProximityQuery& query = queries[queryOfLeaf(queries, queryCount, i)];
        generateFront(query.a.tree, query.b.tree, query.self != 0, static_cast<std::uint32_t>(i - query.firstLeaf),
                      counter);
        counts[i] = counter.candidates;
    }
    addWarpSum(totals, counter.boxTests);
    addWarpSum(totals + 1, counter.fronts);
    addWarpSum(totals + 2, counter.candidates);
}

/// Second pass of the walk: each walk item writes its candidates and their query from its offset.
__global__ void __launch_bounds__(cBlockSize)
    writeProximityCandidates(const DeviceProximityQuery* queries, std::uint32_t queryCount, std::uint32_t items,
                             const std::uint32_t* offsets, FrontEntry* candidates, std::uint32_t* candidateQueries) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= items) return;
    const std::uint32_t q = queryOfLeaf(queries, queryCount, i);
    const DeviceProximityQuery& query = queries[q];
    CandidateWriter writer{candidates + offsets[i], candidateQueries + offsets[i], q};
    generateFront(query.a.tree, query.b.tree, query.self != 0, static_cast<std::uint32_t>(i - query.firstLeaf), writer);
}

/// The contact query's view of one side, as the CPU path makes it (proximityViewOf): triangles
/// computed from the positions (moved by the side's transform), planes computed by the exact test.
__device__ __forceinline__ ProximityMeshView proximityViewOf(const DeviceProximitySide& side) {
    return ProximityMeshView{TriangleSource{nullptr, side.positions, side.indices,
                                            side.transform.present ? side.transform.m : nullptr, nullptr, nullptr},
                             side.indices,
                             side.triangleEdges,
                             side.owned,
                             side.weld,
                             side.mesh};
}

/// An emit functor of candidateProximity appending each contact of query `query`, its key and
/// its position to buffers of `capacity`; past the capacity it only counts (the caller grows and
/// runs again).
struct AppendProximity {
    ProximityContact* contacts; ///< The contacts, in no order.
    ProximityKey* keys;         ///< Their sort keys.
    std::uint32_t* positions;   ///< Their positions (the values the sort carries).
    std::uint64_t capacity;     ///< Room in each buffer.
    unsigned long long* count;  ///< Contacts emitted so far (may pass the capacity).
    std::uint32_t query = 0;    ///< The query of the contacts emitted.

    /// Appends one contact.
    __device__ void operator()(const ProximityContact& contact) {
        const unsigned long long slot = atomicAdd(count, 1ull);
        if (slot >= capacity) return;
        contacts[slot] = contact;
        keys[slot] = ProximityKey{query, contact.kind, contact.featureA, contact.featureB};
        positions[slot] = static_cast<std::uint32_t>(slot);
    }
};

/// The per-candidate work of every candidate of a batch (candidateProximity, the CPU path's
/// function), each with its query's sides.
__global__ void __launch_bounds__(cBlockSize)
    testProximityCandidates(const DeviceProximityQuery* queries, double distance, bool vertexFaceOnly,
                            const FrontEntry* candidates, const std::uint32_t* candidateQueries, std::uint32_t count,
                            AppendProximity append) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= count) return;
    const FrontEntry pair = candidates[i];
    append.query = candidateQueries[i];
    const DeviceProximityQuery& query = queries[append.query];
    const ProximityMeshView viewA = proximityViewOf(query.a), viewB = proximityViewOf(query.b);
    candidateProximity(viewA, leafTriangle(query.a.tree.nodes[pair.leaf]), viewB,
                       leafTriangle(query.b.tree.nodes[pair.node]), query.self != 0, distance, vertexFaceOnly, append);
}

/// First pass of the points' walk: the candidate leaves of each point's grown box
/// (grownPointBox), counted; `totals` as in countProximityCandidates.
__global__ void __launch_bounds__(cBlockSize)
    countPointCandidates(FrontTree tree, const float* points, std::uint32_t count, double distance,
                         std::uint32_t* counts, unsigned long long* totals) {
    const std::uint64_t i = globalThreadIndex();
    FrontCounter counter;
    if (i < count) {
        walkFront(tree, grownPointBox(toVec3d(points + 3 * i), distance), nullptr, static_cast<std::uint32_t>(i), 0,
                  tree.nodeCount, counter);
        counts[i] = counter.candidates;
    }
    addWarpSum(totals, counter.boxTests);
    addWarpSum(totals + 1, counter.fronts);
    addWarpSum(totals + 2, counter.candidates);
}

/// Second pass of the points' walk: each point writes its candidates (point, leaf) from its offset.
__global__ void __launch_bounds__(cBlockSize)
    writePointCandidates(FrontTree tree, const float* points, std::uint32_t count, double distance,
                         const std::uint32_t* offsets, FrontEntry* candidates) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= count) return;
    CandidateWriter writer{candidates + offsets[i], nullptr};
    walkFront(tree, grownPointBox(toVec3d(points + 3 * i), distance), nullptr, static_cast<std::uint32_t>(i), 0,
              tree.nodeCount, writer);
}

/// An emit functor appending each point contact, its key (point, triangle) and its position, as
/// AppendProximity does.
struct AppendPointContact {
    PointContact* contacts;    ///< The contacts, in no order.
    unsigned long long* keys;  ///< Their sort keys: point << 32 | triangle.
    std::uint32_t* positions;  ///< Their positions (the values the sort carries).
    std::uint64_t capacity;    ///< Room in each buffer.
    unsigned long long* count; ///< Contacts emitted so far (may pass the capacity).

    /// Appends one point contact.
    __device__ void operator()(const PointContact& contact) {
        const unsigned long long slot = atomicAdd(count, 1ull);
        if (slot >= capacity) return;
        contacts[slot] = contact;
        keys[slot] = static_cast<unsigned long long>(contact.point) << 32 | contact.triangle;
        positions[slot] = static_cast<std::uint32_t>(slot);
    }
};

/// The test of every (point, leaf) candidate (pointTriangleContact, the CPU path's function).
__global__ void __launch_bounds__(cBlockSize)
    testPointCandidates(DeviceProximitySide side, const float* points, double distance, const FrontEntry* candidates,
                        std::uint32_t count, AppendPointContact append) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= count) return;
    const FrontEntry pair = candidates[i];
    const std::uint32_t triangle = leafTriangle(side.tree.nodes[pair.node]);
    const ProximityMeshView view = proximityViewOf(side);
    Triangle3d scratch;
    PointContact contact;
    if (pointTriangleContact(pair.leaf, toVec3d(points + 3 * static_cast<std::size_t>(pair.leaf)), triangle,
                             view.source.triangle(triangle, scratch), distance, contact)) {
        append(contact);
    }
}

/// Gathers the point contacts in sorted order.
__global__ void __launch_bounds__(cBlockSize)
    gatherPointContacts(const PointContact* contacts, const std::uint32_t* order, std::uint32_t count,
                        PointContact* out) {
    const std::uint64_t i = globalThreadIndex();
    if (i < count) out[i] = contacts[order[i]];
}

/// Gathers the contacts in sorted order.
__global__ void __launch_bounds__(cBlockSize)
    gatherProximityContacts(const ProximityContact* contacts, const std::uint32_t* order, std::uint32_t count,
                            ProximityContact* out) {
    const std::uint64_t i = globalThreadIndex();
    if (i < count) out[i] = contacts[order[i]];
}

} // namespace bulletgpu::detail
