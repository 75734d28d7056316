// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/TriangleMeshSet.h>

#include "kernels/common/cuda_resources.cuh"
#include "kernels/narrow/engine/narrow_device.cuh"
#include "kernels/narrow/geometry/mesh_features.h"
#include "kernels/narrow/traversal/bvtt_front_ops.h"

#include <cstdint>
#include <memory>
#include <vector>

/// The contact query (TriangleMeshSet::findProximity) and the points-against-mesh query
/// (findPointContacts) on the device, for the CUDA engine (narrow_engine_cuda.cu), which keeps
/// the trees and grows them: this part keeps each mesh's features and welds, walks the grown
/// trees, runs the per-candidate work and sorts.

namespace bulletgpu::detail {

struct ProximityKey;
struct DeviceProximityQuery;

/// One side of a device contact query as the engine hands it over (device pointers).
struct ProximitySideInput {
    FrontTree tree;               ///< The grown tree in the query's frame (boxes only).
    const float* positions;       ///< Own-frame positions.
    const std::uint32_t* indices; ///< Three vertex indices per triangle.
    DeviceTransform transform;    ///< To the query's frame (absent in a self query).
    std::uint32_t mesh;           ///< The mesh's index.
};

/// One query of a device contact-query batch: a against b, or a against itself when `self`.
struct ProximityPairInput {
    ProximitySideInput a; ///< The side whose leaves walk b's tree.
    ProximitySideInput b; ///< The other side (a again in a self query).
    bool self;            ///< A self query.
};

/// The device side of the contact query: per-mesh features and welds, and the buffers of one
/// query (grown, never shrunk). Every call runs on the engine's stream.
class ProximityQueryCuda {
public:
    /// Adds the (empty) state of a new mesh.
    void addMesh();
    /// Forgets every mesh's state; the stream's work must be done.
    void clear();
    /// Uploads a mesh's features (they depend on its indices only).
    void setFeatures(std::uint32_t mesh, const MeshFeatures& features, cudaStream_t stream);
    /// Uploads a mesh's canonical vertices (weldVertices) unless they equal the last uploaded.
    void setWeld(std::uint32_t mesh, const std::vector<std::uint32_t>& weld, cudaStream_t stream);
    /// Runs `count` queries as one batch (one walk, one test launch, one sort) at
    /// options.distance, welds excluded in self queries when options.excludeWelded; appends their
    /// contacts, query by query and each query's sorted by proximityBefore, to `contacts` and
    /// adds their counters to `stats`. Waits for the stream.
    void run(const ProximityPairInput* queries, std::uint32_t count, const ProximityOptions& options,
             cudaStream_t stream, std::vector<ProximityContact>& contacts, NarrowStats& stats);
    /// Runs the points-against-mesh query of `count` points (host array, x, y, z each, in the
    /// frame of `side`) at `distance`; appends its contacts, sorted by (point, triangle), to
    /// `contacts` and adds its counters to `stats`. Waits for the stream.
    void runPoints(const ProximitySideInput& side, const float* points, std::uint32_t count, double distance,
                   cudaStream_t stream, std::vector<PointContact>& contacts, NarrowStats& stats);

private:
    /// What the contact query keeps of one mesh on the device.
    struct MeshState {
        DeviceBuffer<std::uint32_t> triangleEdges; ///< MeshFeatures::triangleEdges.
        DeviceBuffer<FeatureOwnership> owned;      ///< MeshFeatures::owned.
        DeviceBuffer<std::uint32_t> weld;          ///< The last canonical vertices uploaded.
        std::vector<std::uint32_t> uploadedWeld;   ///< Their host copy.
        bool hasFeatures = false;                  ///< `triangleEdges` and `owned` hold an upload.
        bool hasWeld = false;                      ///< `weld` holds an upload.
    };

    /// Makes the CUB scratch at least `bytes`.
    void* scratch(std::size_t bytes, cudaStream_t stream);
    /// Copies the first `count` totals from the device and waits.
    void readTotals(int count, cudaStream_t stream);
    /// Sizes the walk's counts, offsets and totals for `items` items and zeroes the totals.
    void prepareWalk(std::uint32_t items, cudaStream_t stream);
    /// After a walk's counting pass over `items` items: scans the counts into the offsets, reads
    /// the totals (box tests, walk entries, candidates) into `stats` and makes room for the
    /// candidates; returns how many there are.
    std::uint32_t finishCount(std::uint32_t items, cudaStream_t stream, NarrowStats& stats);
    /// Runs test(room, counter), an appending launch, with the counter zeroed until what it
    /// appends fits the room; reserve(count) makes room for `count` and returns the room. Returns
    /// how many it appended.
    template <typename Test, typename Reserve>
    std::uint32_t appendUntilRoom(std::uint64_t room, const Test& test, const Reserve& reserve, cudaStream_t stream);

    std::vector<std::unique_ptr<MeshState>> m_meshes;
    PinnedBuffer<DeviceProximityQuery> m_hostQueries;           ///< A batch's queries as the kernels read them.
    DeviceBuffer<DeviceProximityQuery> m_queries;               ///< Their upload.
    DeviceBuffer<std::uint32_t> m_counts, m_offsets;            ///< Candidates of each query leaf, their offsets.
    DeviceBuffer<FrontEntry> m_candidates;                      ///< The walk's candidates.
    DeviceBuffer<std::uint32_t> m_candidateQueries;             ///< The query of each candidate.
    DeviceBuffer<ProximityContact> m_contacts, m_sorted;        ///< Appended contacts, then sorted.
    DeviceBuffer<std::uint32_t> m_positions, m_sortedPositions; ///< Positions of the appended contacts, then sorted.
    DeviceBuffer<ProximityKey> m_keys, m_sortedKeys;            ///< Their sort keys.
    DeviceBuffer<float> m_points;                               ///< The points of a points-against-mesh query.
    DeviceBuffer<PointContact> m_pointContacts, m_sortedPointContacts; ///< Its contacts appended, then sorted.
    DeviceBuffer<unsigned long long> m_pointKeys, m_sortedPointKeys;   ///< Their keys (point << 32 | triangle).
    DeviceBuffer<unsigned long long> m_totals;     ///< Box tests, walk entries, candidates, contacts.
    PinnedBuffer<unsigned long long> m_hostTotals; ///< m_totals read back.
    DeviceBuffer<std::uint8_t> m_scratch;          ///< CUB's temporary storage.
};

} // namespace bulletgpu::detail
