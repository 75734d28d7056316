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

/// The contact query (TriangleMeshSet::findProximity) on the device, for the CUDA engine
/// (narrow_engine_cuda.cu), which keeps the trees and grows them: this part keeps each mesh's
/// features and welds, walks the grown trees, runs the per-candidate work and sorts.

namespace bulletgpu::detail {

struct ProximityKey;

/// One side of a device contact query as the engine hands it over (device pointers).
struct ProximitySideInput {
    FrontTree tree;               ///< The grown tree in the query's frame (boxes only).
    const float* positions;       ///< Own-frame positions.
    const std::uint32_t* indices; ///< Three vertex indices per triangle.
    DeviceTransform transform;    ///< To the query's frame (absent in a self query).
    std::uint32_t mesh;           ///< The mesh's index.
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
    /// Runs one query (a against b, or a against itself when `self`) at options.distance,
    /// welds excluded in a self query when options.excludeWelded; appends its contacts, sorted
    /// by proximityBefore, to `contacts` and adds its counters to `stats`. Waits for the stream.
    void run(const ProximitySideInput& a, const ProximitySideInput& b, bool self, const ProximityOptions& options,
             cudaStream_t stream, std::vector<ProximityContact>& contacts, NarrowStats& stats);

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
    /// Makes room for `count` appended contacts, keys and positions; returns the room.
    std::uint64_t reserveAppend(std::uint64_t count, cudaStream_t stream);

    std::vector<std::unique_ptr<MeshState>> m_meshes;
    DeviceBuffer<std::uint32_t> m_counts, m_offsets;            ///< Candidates of each query leaf, their offsets.
    DeviceBuffer<FrontEntry> m_candidates;                      ///< The walk's candidates.
    DeviceBuffer<ProximityContact> m_contacts, m_sorted;        ///< Appended contacts, then sorted.
    DeviceBuffer<std::uint32_t> m_positions, m_sortedPositions; ///< Their positions, then sorted.
    DeviceBuffer<ProximityKey> m_keys, m_sortedKeys;            ///< Their sort keys.
    DeviceBuffer<unsigned long long> m_totals;                  ///< Box tests, walk entries, candidates, contacts.
    PinnedBuffer<unsigned long long> m_hostTotals;              ///< m_totals read back.
    DeviceBuffer<std::uint8_t> m_scratch;                       ///< CUB's temporary storage.
};

} // namespace bulletgpu::detail
