// SPDX-License-Identifier: Zlib
// The CUDA engine of TriangleMeshSet: positions uploaded when they change; trees built on the
// device (Morton codes, CUB radix sort, Karras nodes, depth-first layout) and refitted bottom-up;
// fronts generated or updated in two passes (count, CUB scan, write) so that they stay sorted
// and nothing overflows, an update's threads taking the entries in the histogram-sorted order
// of Wang, Tang et al. (internal, then external entries, by node); degraded subtrees rebuilt in
// place and the fronts carried over; the exact tests of the candidates, CUB select and radix
// sort; only the contacts come back. The per-element work is the CPU path's, so the results are
// bit for bit the same. The contact query grows leaf boxes over the same topologies, refits
// them, and hands the grown trees to ProximityQueryCuda (narrow_proximity_cuda.cu).
#include "kernels/narrow/engine/triangle_mesh_set.h"

#include "kernels/common/cuda_check.h"
#include "kernels/common/cuda_device.h"
#include "kernels/common/launch.h"
#include "kernels/common/stopwatch.h"
#include "kernels/narrow/engine/narrow_kernels.cuh"
#include "kernels/narrow/engine/narrow_proximity_cuda.cuh"
#include "kernels/common/cuda_resources.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace bulletgpu {
namespace {

using detail::CudaStream;
using detail::DeviceBuffer;
using detail::DeviceMeshView;
using detail::DeviceScope;
using detail::DeviceTransform;
using detail::PinnedBuffer;
using detail::ProximityPairInput;
using detail::ProximityQueryCuda;
using detail::ProximitySideInput;

/// The merge of two boxes, for CUB's reduction.
struct MergeBoxes {
    __device__ FloatBox operator()(const FloatBox& a, const FloatBox& b) const { return mergeBoxes(a, b); }
};

/// One mesh on the device.
struct DeviceMesh {
    std::uint32_t vertexCount = 0;
    std::uint32_t triangleCount = 0;
    DeviceBuffer<float> positions;
    DeviceBuffer<std::uint32_t> indices;
    DeviceBuffer<FloatBox> leafBoxes;      ///< Own frame.
    DeviceBuffer<FloatBox> worldLeafBoxes; ///< Transformed.
    DeviceBuffer<LbvhNode> nodes;          ///< Own frame.
    DeviceBuffer<LbvhNode> worldNodes;     ///< Same topology, transformed boxes.
    DeviceBuffer<std::uint32_t> escape, leafOfTriangle, leaves;
    DeviceTransform transform{};
    MortonFrame frame;      ///< The principal frame while rigid (for builds with OBBs).
    MortonFrame builtFrame; ///< Of the last build's (restructuring keeps it, as Lbvh does).
    bool needsBuild = true;
    bool positionsChanged = false;
    bool worldStale = true;
    bool refittedSinceBuild = false; ///< Deformed since its tree was built.
    BoundingVolume volume = BoundingVolume::Aabb;
    bool volumeChanged = false;              ///< The OBBs are to be fitted anew (or dropped).
    DeviceBuffer<NarrowObb> obbs, worldObbs; ///< Own frame, world (Obb only).
    std::uint64_t buildCount = 0;
    std::vector<NodeRange> pendingSubtrees;     ///< To restructure at the next query.
    std::vector<NodeRange> restructured;        ///< Restructured by this query (fronts to carry over).
    DeviceBuffer<NodeRange> restructuredRanges; ///< `restructured` on the device.
    DeviceBuffer<FloatBox> grownBoxes[2];       ///< Leaf boxes grown for the contact query (own, world frame).
    DeviceBuffer<LbvhNode> grownNodes[2];       ///< The tree over them (own, world frame).

    /// Nodes of the tree (0 when empty).
    std::uint32_t nodeCount() const { return triangleCount == 0 ? 0 : 2 * triangleCount - 1; }
};

/// The front of one query on the device, double-buffered.
struct DeviceFront {
    DeviceBuffer<FrontEntry> buffers[2];
    int current = 0;
    std::uint64_t size = 0;
    std::uint64_t buildA = 0, buildB = 0;
    bool generated = false;
    FrontQuality quality;                                        ///< The trees' quality as this front measures it.
    DeviceBuffer<std::uint64_t> referenceEntries, referenceHits; ///< The front log at the reference.
};

/// The CUDA engine.
class NarrowEngineCuda final : public detail::NarrowDeviceEngine {
public:
    explicit NarrowEngineCuda(int device)
        : m_device(device), m_deviceName(usableCudaDeviceName(device)), m_stream(device) {
        const DeviceScope scope(m_device);
        const cudaStream_t stream = m_stream.get();
        m_bounds.reserve(1, stream);
        m_counters.reserve(4, stream);
        m_hostCounters.reserve(4, stream);
    }

    void addMesh(const float* positions, std::uint32_t vertexCount, const std::uint32_t* indices,
                 std::uint32_t triangleCount, const MortonFrame& frame) override {
        const DeviceScope scope(m_device);
        const cudaStream_t stream = m_stream.get();
        auto mesh = std::make_unique<DeviceMesh>();
        mesh->vertexCount = vertexCount;
        mesh->triangleCount = triangleCount;
        mesh->frame = frame;
        mesh->positions.reserve(3ull * vertexCount, stream);
        mesh->indices.reserve(3ull * triangleCount, stream);
        if (vertexCount > 0) {
            BULLETGPU_CUDA_TRY(cudaMemcpyAsync(mesh->positions.data(), positions, 12ull * vertexCount,
                                               cudaMemcpyHostToDevice, stream));
        }
        if (triangleCount > 0) {
            BULLETGPU_CUDA_TRY(
                cudaMemcpyAsync(mesh->indices.data(), indices, 12ull * triangleCount, cudaMemcpyHostToDevice, stream));
        }
        m_meshes.push_back(std::move(mesh));
        m_proximity.addMesh();
    }

    void setPositions(std::uint32_t index, const float* positions) override {
        const DeviceScope scope(m_device);
        DeviceMesh& mesh = *m_meshes[index];
        if (mesh.vertexCount > 0) {
            // From pageable memory the call returns once the source is read, so it may be reused.
            BULLETGPU_CUDA_TRY(cudaMemcpyAsync(mesh.positions.data(), positions, 12ull * mesh.vertexCount,
                                               cudaMemcpyHostToDevice, m_stream.get()));
        }
        mesh.positionsChanged = true;
        mesh.worldStale = true;
        mesh.frame = MortonFrame{};
    }

    void setTransform(std::uint32_t index, const double* transform) override {
        DeviceMesh& mesh = *m_meshes[index];
        mesh.transform.present = transform != nullptr;
        if (transform != nullptr) std::copy(transform, transform + 12, mesh.transform.m);
        mesh.worldStale = true;
    }

    void requestRebuild(std::uint32_t index) override { m_meshes[index]->needsBuild = true; }

    void setBoundingVolume(std::uint32_t index, BoundingVolume volume) override {
        DeviceMesh& mesh = *m_meshes[index];
        mesh.volume = volume;
        mesh.volumeChanged = true;
        mesh.worldStale = true;
        dropFronts();
    }

    void clear() override {
        const DeviceScope scope(m_device);
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(m_stream.get()));
        m_meshes.clear();
        m_fronts.clear();
        m_proximity.clear();
    }

    void resetFronts() override { dropFronts(); }

    void setRebuildRatio(double ratio) override { m_rebuildRatio = ratio; }

    void setRestructuring(bool restructure) override { m_restructuring = restructure; }

    void findContacts(const MeshPairQuery* queries, std::uint32_t count, bool keepFronts,
                      std::vector<TriangleContact>& contacts, NarrowStats& stats) override;

    void setFeatures(std::uint32_t index, const MeshFeatures& features) override {
        const DeviceScope scope(m_device);
        m_proximity.setFeatures(index, features, m_stream.get());
    }

    void setWeld(std::uint32_t index, const std::vector<std::uint32_t>& weld) override {
        const DeviceScope scope(m_device);
        m_proximity.setWeld(index, weld, m_stream.get());
    }

    void findProximity(const MeshPairQuery* queries, std::uint32_t count, const ProximityOptions& options,
                       std::vector<ProximityContact>& contacts, NarrowStats& stats) override;

    void findPointContacts(const float* points, std::uint32_t count, std::uint32_t index, double distance,
                           std::vector<PointContact>& contacts, NarrowStats& stats) override;

    TreeSnapshot tree(std::uint32_t index) const override {
        const DeviceScope scope(m_device);
        const DeviceMesh& mesh = *m_meshes[index];
        TreeSnapshot snapshot;
        // A rebuild scheduled for the next query leaves the current tree in place, as on the CPU.
        if (mesh.buildCount == 0 || mesh.triangleCount == 0) return snapshot;
        snapshot.nodes.resize(mesh.nodeCount());
        snapshot.escape.resize(mesh.nodeCount());
        snapshot.leaves.resize(mesh.triangleCount);
        const cudaStream_t stream = m_stream.get();
        BULLETGPU_CUDA_TRY(cudaMemcpyAsync(snapshot.nodes.data(), mesh.nodes.data(),
                                           snapshot.nodes.size() * sizeof(LbvhNode), cudaMemcpyDeviceToHost, stream));
        BULLETGPU_CUDA_TRY(cudaMemcpyAsync(snapshot.escape.data(), mesh.escape.data(),
                                           snapshot.escape.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost,
                                           stream));
        BULLETGPU_CUDA_TRY(cudaMemcpyAsync(snapshot.leaves.data(), mesh.leaves.data(),
                                           snapshot.leaves.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost,
                                           stream));
        // OBBs once a query has fitted them.
        if (mesh.volume == BoundingVolume::Obb && !mesh.volumeChanged) {
            snapshot.obbs.resize(mesh.nodeCount());
            BULLETGPU_CUDA_TRY(cudaMemcpyAsync(snapshot.obbs.data(), mesh.obbs.data(),
                                               snapshot.obbs.size() * sizeof(NarrowObb), cudaMemcpyDeviceToHost,
                                               stream));
        }
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
        return snapshot;
    }

    std::string description() const override {
        return "CUDA backend on " + m_deviceName + " (device " + std::to_string(m_device) + ")";
    }

private:
    /// Frees every front once the stream's work, which may still read them, is done.
    void dropFronts() {
        const DeviceScope scope(m_device);
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(m_stream.get()));
        m_fronts.clear();
    }
    /// After an error part-way through a query: every tree is built again and every front
    /// generated again at the next one, since a tree may be half restructured and a front half
    /// carried over. Never throws.
    void forgetDeviceState() noexcept;
    /// Builds the mesh's tree topology on the device (boxes follow in refit).
    void buildTopology(DeviceMesh& mesh);
    /// Sorts `count` leaf boxes by their Morton codes (in mesh.builtFrame) within their own
    /// bounds and lays the tree over them out depth-first from node `base` and leaf position
    /// `*firstLeaf` (0 when null): `triangles` names the triangle of each box (null: box t is
    /// triangle t); the root keeps its parent when `keepRootParent`.
    void layOutSorted(DeviceMesh& mesh, const FloatBox* boxes, const std::uint32_t* triangles, std::uint32_t count,
                      std::uint32_t base, const std::uint32_t* firstLeaf, bool keepRootParent);
    /// Rebuilds the subtrees `mesh.restructured` in place (topology only), as Lbvh::restructure.
    void restructure(DeviceMesh& mesh);
    /// Carries every kept front over the trees restructured by this query's updates.
    void carryFrontsOver();
    /// Writes the front log of `entries` and `hits` (second components in a tree of `nodeCount`
    /// nodes) to `entryOffsets` and `hitOffsets` (front_log.h).
    void recordFrontLog(const FrontEntry* entries, std::uint64_t entryCount, const FrontEntry* hits,
                        std::uint64_t hitCount, std::uint32_t nodeCount, DeviceBuffer<std::uint64_t>& entryOffsets,
                        DeviceBuffer<std::uint64_t>& hitOffsets);
    /// Records a query's front quality; when degraded, schedules the restructuring of the
    /// degraded subtrees of meshB's tree, or its rebuild, as the CPU backend does.
    void recordQuality(DeviceFront& front, DeviceMesh& meshB, const FrontTree& b, const FrontEntry* entries,
                       std::uint64_t entryCount, std::uint64_t candidateCount, std::uint32_t queryLeaves,
                       NarrowStats& stats);
    /// Brings the mesh's own tree up to date; returns whether it built (true) or refitted.
    void updateTree(DeviceMesh& mesh, NarrowStats& stats);
    /// Brings the mesh's transformed tree up to date.
    void updateWorldTree(DeviceMesh& mesh);
    /// Refits `nodes` (a copy of the mesh's topology) from `leafBoxes`.
    void refit(const DeviceMesh& mesh, const FloatBox* leafBoxes, LbvhNode* nodes);
    /// The mesh's leaf OBBs and their bottom-up merge over its topology (own frame).
    void refitObbs(DeviceMesh& mesh);
    /// The front view of a mesh's tree, transformed when `world` and it has a transform.
    static FrontTree frontTreeOf(const DeviceMesh& mesh, bool world);
    /// Which grown tree of a mesh a query reads: 1 (world) for a pair query of a mesh with a
    /// transform, else 0 (own frame), as on the CPU.
    static std::uint32_t grownFrameOf(const DeviceMesh& mesh, bool world) {
        return world && mesh.transform.present ? 1u : 0u;
    }
    /// Grows the leaf boxes of every (mesh, frame) of m_toGrow by `distance` (proximity_bounds.h)
    /// and refits a copy of each one's topology over them, all meshes in one pass of launches.
    void growTrees(double distance);
    /// The contact query's view of one side: its grown tree and arrays.
    static ProximitySideInput proximitySideOf(const DeviceMesh& mesh, std::uint32_t index, bool world);
    /// The exact-test view of a mesh.
    static DeviceMeshView meshViewOf(const DeviceMesh& mesh, std::uint32_t index, bool world);
    /// The order in which an update's threads take the `size` entries of `front` (frontSegment,
    /// by histogram sort); the front itself stays sorted by leaf.
    const std::uint32_t* orderFront(const FrontTree& other, const FrontEntry* front, std::uint32_t size);
    /// Runs one query: front passes, exact tests, sort; appends its contacts.
    void runQuery(const MeshPairQuery& query, bool keepFronts, std::vector<TriangleContact>& contacts,
                  NarrowStats& stats);
    /// Makes the CUB scratch at least `bytes`.
    void* scratch(std::size_t bytes) {
        m_scratch.reserve(std::max<std::size_t>(bytes, 1), m_stream.get());
        return m_scratch.data();
    }
    /// Writes the exclusive prefix sums of `count` counts to `offsets` (CUB, on the stream).
    void exclusiveSum(const std::uint32_t* counts, std::uint32_t* offsets, std::uint64_t count) {
        std::size_t bytes = 0;
        const auto items = static_cast<std::int64_t>(count);
        BULLETGPU_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, counts, offsets, items, m_stream.get()));
        BULLETGPU_CUDA_TRY(
            cub::DeviceScan::ExclusiveSum(scratch(bytes), bytes, counts, offsets, items, m_stream.get()));
    }
    /// Copies `count` counters from the device and waits.
    void readCounters(const unsigned long long* counters, int count) {
        BULLETGPU_CUDA_TRY(cudaMemcpyAsync(m_hostCounters.data(), counters, count * sizeof(unsigned long long),
                                           cudaMemcpyDeviceToHost, m_stream.get()));
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(m_stream.get()));
    }

    int m_device;
    std::string m_deviceName;
    std::vector<std::unique_ptr<DeviceMesh>> m_meshes;
    std::map<std::uint64_t, std::unique_ptr<DeviceFront>> m_fronts;
    double m_rebuildRatio = cDefaultRebuildRatio;
    bool m_restructuring = true;
    // Build scratch.
    DeviceBuffer<FloatBox> m_centres, m_bounds;
    DeviceBuffer<std::uint32_t> m_codes, m_order, m_sortedCodes, m_sortedOrder;
    DeviceBuffer<KarrasNode> m_karras;
    DeviceBuffer<std::uint32_t> m_parentOfInternal, m_parentOfLeaf, m_internalIndex, m_leafIndex, m_arrivals;
    // Front order scratch.
    DeviceBuffer<std::uint32_t> m_segmentCounts, m_segmentOffsets, m_segmentRanks, m_frontOrder;
    // Restructuring scratch.
    DeviceBuffer<std::uint32_t> m_firstLeaves, m_subtreeTriangles, m_carryCounts, m_carryOffsets;
    DeviceBuffer<FloatBox> m_subtreeBoxes;
    DeviceBuffer<std::uint64_t> m_logCounts, m_logEntries, m_logHits;
    DeviceBuffer<std::uint8_t> m_chosenFlags;
    DeviceBuffer<std::uint32_t> m_nodeIds, m_chosenNodes, m_chosenCount;
    DeviceBuffer<NodeRange> m_chosenRanges;
    std::vector<NodeRange> m_chosen;
    DeviceBuffer<std::uint8_t> m_scratch;
    // Contact query.
    ProximityQueryCuda m_proximity;
    std::vector<std::uint8_t> m_grown; ///< Frames grown by this contact query, per mesh (bits 0, 1).
    std::vector<std::pair<std::uint32_t, std::uint32_t>> m_toGrow; ///< (mesh, frame) to grow.
    PinnedBuffer<detail::GrowJob> m_hostGrowJobs;                  ///< Their jobs as the kernels read them.
    DeviceBuffer<detail::GrowJob> m_growJobs;                      ///< Their upload.
    std::vector<ProximityPairInput> m_pairInputs;                  ///< A contact query's batch.
    // Query scratch.
    DeviceBuffer<std::uint32_t> m_frontCounts, m_candidateCounts, m_frontOffsets, m_candidateOffsets;
    DeviceBuffer<FrontEntry> m_candidates;
    DeviceBuffer<TriangleContact> m_contacts, m_sortedContacts;
    DeviceBuffer<unsigned long long> m_keys, m_selectedKeys, m_sortedKeys;
    DeviceBuffer<std::uint32_t> m_positions, m_selectedPositions, m_sortedPositions;
    DeviceBuffer<std::uint8_t> m_meets;
    DeviceBuffer<unsigned long long> m_counters; ///< Box tests, triangle tests, front total, candidate total.
    DeviceBuffer<std::uint32_t> m_selected;
    PinnedBuffer<unsigned long long> m_hostCounters;
    CudaStream m_stream; // last: destroyed first, after waiting for the work that uses the buffers
};

void NarrowEngineCuda::buildTopology(DeviceMesh& mesh) {
    const cudaStream_t stream = m_stream.get();
    mesh.nodes.reserve(mesh.nodeCount(), stream);
    mesh.escape.reserve(mesh.nodeCount(), stream);
    mesh.leaves.reserve(mesh.triangleCount, stream);
    mesh.leafOfTriangle.reserve(mesh.triangleCount, stream);
    // OBBs of a rigid mesh gain from a tree sorted in its principal frame; boxes do not.
    mesh.builtFrame = mesh.volume == BoundingVolume::Obb ? mesh.frame : MortonFrame{};
    layOutSorted(mesh, mesh.leafBoxes.data(), nullptr, mesh.triangleCount, 0, nullptr, false);
    ++mesh.buildCount;
}

void NarrowEngineCuda::layOutSorted(DeviceMesh& mesh, const FloatBox* boxes, const std::uint32_t* triangles,
                                    std::uint32_t count, std::uint32_t base, const std::uint32_t* firstLeaf,
                                    bool keepRootParent) {
    const cudaStream_t stream = m_stream.get();
    const std::uint32_t n = count;
    m_centres.reserve(n, stream);
    m_codes.reserve(n, stream);
    m_order.reserve(n, stream);
    m_sortedCodes.reserve(n, stream);
    m_sortedOrder.reserve(n, stream);
    m_karras.reserve(n, stream);
    m_parentOfInternal.reserve(n, stream);
    m_parentOfLeaf.reserve(n, stream);
    m_internalIndex.reserve(n, stream);
    m_leafIndex.reserve(n, stream);

    launchPerItem(stream, n, detail::computeCentreBoxes, boxes, n, mesh.builtFrame, m_centres.data());
    std::size_t bytes = 0;
    BULLETGPU_CUDA_TRY(cub::DeviceReduce::Reduce(nullptr, bytes, m_centres.data(), m_bounds.data(),
                                                 static_cast<std::int64_t>(n), MergeBoxes{}, emptyBox(), stream));
    BULLETGPU_CUDA_TRY(cub::DeviceReduce::Reduce(scratch(bytes), bytes, m_centres.data(), m_bounds.data(),
                                                 static_cast<std::int64_t>(n), MergeBoxes{}, emptyBox(), stream));
    launchPerItem(stream, n, detail::computeMortonCodes, boxes, n, mesh.builtFrame, m_bounds.data(), m_codes.data(),
                  m_order.data());
    bytes = 0;
    BULLETGPU_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, m_codes.data(), m_sortedCodes.data(),
                                                       m_order.data(), m_sortedOrder.data(),
                                                       static_cast<std::int64_t>(n), 0, 30, stream));
    BULLETGPU_CUDA_TRY(cub::DeviceRadixSort::SortPairs(scratch(bytes), bytes, m_codes.data(), m_sortedCodes.data(),
                                                       m_order.data(), m_sortedOrder.data(),
                                                       static_cast<std::int64_t>(n), 0, 30, stream));
    // The sort is done with m_order: it takes the sorted positions' triangles.
    const std::uint32_t* order = m_sortedOrder.data();
    if (triangles != nullptr) {
        launchPerItem(stream, n, detail::mapSortedTriangles, triangles, m_sortedOrder.data(), n, m_order.data());
        order = m_order.data();
    }
    // A lone leaf has no parent; every other leaf gets one from buildKarrasNodes.
    BULLETGPU_CUDA_TRY(cudaMemsetAsync(m_parentOfLeaf.data(), 0xff, sizeof(std::uint32_t) * n, stream));
    launchPerItem(stream, n - 1, detail::buildKarrasNodes, m_sortedCodes.data(), n, m_karras.data(),
                  m_parentOfInternal.data(), m_parentOfLeaf.data());
    launchPerItem(stream, 2ull * n - 1, detail::computeDepthFirstIndices, m_karras.data(), m_parentOfInternal.data(),
                  m_parentOfLeaf.data(), n, m_internalIndex.data(), m_leafIndex.data());
    launchPerItem(stream, 2ull * n - 1, detail::writeDepthFirstNodes, m_karras.data(), m_parentOfInternal.data(),
                  m_parentOfLeaf.data(), m_internalIndex.data(), m_leafIndex.data(), order, n, base, firstLeaf,
                  keepRootParent, mesh.nodes.data(), mesh.escape.data(), mesh.leafOfTriangle.data(),
                  mesh.leaves.data());
}

void NarrowEngineCuda::restructure(DeviceMesh& mesh) {
    const cudaStream_t stream = m_stream.get();
    const auto count = static_cast<std::uint32_t>(mesh.restructured.size());
    mesh.restructuredRanges.reserve(count, stream);
    m_firstLeaves.reserve(count, stream);
    // From pageable memory the call returns once the source is read.
    BULLETGPU_CUDA_TRY(cudaMemcpyAsync(mesh.restructuredRanges.data(), mesh.restructured.data(),
                                       count * sizeof(NodeRange), cudaMemcpyHostToDevice, stream));
    // Every subtree is located before any is rebuilt (their ancestors are outside them all).
    launchPerItem(stream, count, detail::locateSubtrees, mesh.nodes.data(), mesh.restructuredRanges.data(), count,
                  m_firstLeaves.data());
    for (std::uint32_t i = 0; i < count; ++i) {
        const NodeRange subtree = mesh.restructured[i];
        const std::uint32_t leaves = subtreeLeaves(subtree.begin, subtree.end);
        m_subtreeBoxes.reserve(leaves, stream);
        m_subtreeTriangles.reserve(leaves, stream);
        launchPerItem(stream, leaves, detail::gatherSubtreeLeaves, mesh.nodes.data(), mesh.leaves.data(),
                      m_firstLeaves.data() + i, leaves, mesh.leafBoxes.data(), m_subtreeBoxes.data(),
                      m_subtreeTriangles.data());
        layOutSorted(mesh, m_subtreeBoxes.data(), m_subtreeTriangles.data(), leaves, subtree.begin,
                     m_firstLeaves.data() + i, true);
    }
}

void NarrowEngineCuda::refit(const DeviceMesh& mesh, const FloatBox* leafBoxes, LbvhNode* nodes) {
    const cudaStream_t stream = m_stream.get();
    m_arrivals.reserve(mesh.nodeCount(), stream);
    BULLETGPU_CUDA_TRY(cudaMemsetAsync(m_arrivals.data(), 0, sizeof(std::uint32_t) * mesh.nodeCount(), stream));
    launchPerItem(stream, mesh.triangleCount, detail::refitTree, leafBoxes, mesh.leafOfTriangle.data(),
                  mesh.triangleCount, nodes, m_arrivals.data());
}

void NarrowEngineCuda::refitObbs(DeviceMesh& mesh) {
    const cudaStream_t stream = m_stream.get();
    const std::uint32_t n = mesh.triangleCount;
    mesh.obbs.reserve(mesh.nodeCount(), stream);
    m_arrivals.reserve(mesh.nodeCount(), stream);
    BULLETGPU_CUDA_TRY(cudaMemsetAsync(m_arrivals.data(), 0, sizeof(std::uint32_t) * mesh.nodeCount(), stream));
    // A refit keeps the orientations fitted at the build (or at the switch to OBBs) outside the
    // restructured subtrees.
    const bool keepAxes = !mesh.needsBuild && !mesh.volumeChanged;
    launchPerItem(stream, n, detail::refitObbTree, mesh.positions.data(), mesh.indices.data(),
                  mesh.leafOfTriangle.data(), n, mesh.nodes.data(), keepAxes, mesh.restructuredRanges.data(),
                  static_cast<std::uint32_t>(mesh.restructured.size()), mesh.obbs.data(), m_arrivals.data());
}

void NarrowEngineCuda::updateTree(DeviceMesh& mesh, NarrowStats& stats) {
    const bool build = mesh.needsBuild, moved = mesh.positionsChanged;
    const bool restructure = !build && !mesh.pendingSubtrees.empty();
    if (!build && !moved && !mesh.volumeChanged && !restructure) return;
    const cudaStream_t stream = m_stream.get();
    const Clock::time_point start = Clock::now();
    const std::uint32_t n = mesh.triangleCount;
    mesh.restructured.clear();
    if (n > 0) {
        if (build || moved) {
            mesh.leafBoxes.reserve(n, stream);
            launchPerItem(stream, n, detail::computeLeafBoxes, mesh.positions.data(), mesh.indices.data(), n,
                          DeviceTransform{}, mesh.leafBoxes.data());
        }
        if (build) {
            buildTopology(mesh);
        } else if (restructure) {
            mesh.restructured.swap(mesh.pendingSubtrees);
            this->restructure(mesh);
            stats.subtreesRestructured += static_cast<std::uint32_t>(mesh.restructured.size());
            stats.leavesRestructured += leavesIn(mesh.restructured);
        }
        if (build || moved || restructure) refit(mesh, mesh.leafBoxes.data(), mesh.nodes.data());
        if (mesh.volume == BoundingVolume::Obb) refitObbs(mesh);
    } else if (build) {
        ++mesh.buildCount;
    }
    mesh.pendingSubtrees.clear();
    BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
    (build || restructure ? stats.buildMs : stats.refitMs) += millisecondsSince(start);
    if (build) {
        ++stats.rebuilt;
    } else if (moved) {
        ++stats.refitted;
    }
    // A change of volumes alone is no deformation.
    mesh.refittedSinceBuild = !build && (mesh.refittedSinceBuild || moved);
    mesh.needsBuild = false;
    mesh.positionsChanged = false;
    mesh.volumeChanged = false;
    mesh.worldStale = true;
}

void NarrowEngineCuda::updateWorldTree(DeviceMesh& mesh) {
    if (!mesh.transform.present || !mesh.worldStale || mesh.triangleCount == 0) return;
    const cudaStream_t stream = m_stream.get();
    const std::uint32_t n = mesh.triangleCount;
    mesh.worldLeafBoxes.reserve(n, stream);
    mesh.worldNodes.reserve(mesh.nodeCount(), stream);
    launchPerItem(stream, n, detail::computeLeafBoxes, mesh.positions.data(), mesh.indices.data(), n, mesh.transform,
                  mesh.worldLeafBoxes.data());
    BULLETGPU_CUDA_TRY(cudaMemcpyAsync(mesh.worldNodes.data(), mesh.nodes.data(), sizeof(LbvhNode) * mesh.nodeCount(),
                                       cudaMemcpyDeviceToDevice, stream));
    refit(mesh, mesh.worldLeafBoxes.data(), mesh.worldNodes.data());
    if (mesh.volume == BoundingVolume::Obb) {
        mesh.worldObbs.reserve(mesh.nodeCount(), stream);
        launchPerItem(stream, mesh.nodeCount(), detail::transformObbs, mesh.transform, mesh.obbs.data(),
                      mesh.nodeCount(), mesh.worldObbs.data());
    }
    mesh.worldStale = false;
}

FrontTree NarrowEngineCuda::frontTreeOf(const DeviceMesh& mesh, bool world) {
    const bool moved = world && mesh.transform.present;
    const NarrowObb* obbs = nullptr;
    if (mesh.volume == BoundingVolume::Obb) obbs = moved ? mesh.worldObbs.data() : mesh.obbs.data();
    return FrontTree{moved ? mesh.worldNodes.data() : mesh.nodes.data(),
                     mesh.escape.data(),
                     mesh.leaves.data(),
                     mesh.nodeCount(),
                     mesh.triangleCount,
                     obbs};
}

DeviceMeshView NarrowEngineCuda::meshViewOf(const DeviceMesh& mesh, std::uint32_t index, bool world) {
    const bool moved = world && mesh.transform.present;
    DeviceMeshView view{moved ? mesh.worldNodes.data() : mesh.nodes.data(), mesh.positions.data(), mesh.indices.data(),
                        moved ? mesh.transform : DeviceTransform{}, index};
    return view;
}

void NarrowEngineCuda::growTrees(double distance) {
    const cudaStream_t stream = m_stream.get();
    // The staging buffer may still feed the last call's upload.
    BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
    m_hostGrowJobs.reserve(std::max<std::size_t>(m_toGrow.size(), 1), stream);
    std::uint32_t jobs = 0;
    std::uint64_t triangles = 0, nodes = 0;
    for (const auto& [index, frame] : m_toGrow) {
        DeviceMesh& mesh = *m_meshes[index];
        if (mesh.triangleCount == 0) continue;
        mesh.grownBoxes[frame].reserve(mesh.triangleCount, stream);
        mesh.grownNodes[frame].reserve(mesh.nodeCount(), stream);
        m_hostGrowJobs.data()[jobs++] = detail::GrowJob{mesh.positions.data(),
                                                        mesh.indices.data(),
                                                        mesh.leafOfTriangle.data(),
                                                        mesh.nodes.data(),
                                                        mesh.grownBoxes[frame].data(),
                                                        mesh.grownNodes[frame].data(),
                                                        frame == 1 ? mesh.transform : DeviceTransform{},
                                                        static_cast<std::uint32_t>(triangles),
                                                        static_cast<std::uint32_t>(nodes)};
        triangles += mesh.triangleCount;
        nodes += mesh.nodeCount();
        if (nodes > 0xffffffffull) throw std::length_error("bulletgpu: a contact query grows over 2^32 nodes");
    }
    if (jobs == 0) return;
    m_growJobs.reserve(jobs, stream);
    BULLETGPU_CUDA_TRY(cudaMemcpyAsync(m_growJobs.data(), m_hostGrowJobs.data(), jobs * sizeof(detail::GrowJob),
                                       cudaMemcpyHostToDevice, stream));
    m_arrivals.reserve(nodes, stream);
    BULLETGPU_CUDA_TRY(cudaMemsetAsync(m_arrivals.data(), 0, sizeof(std::uint32_t) * nodes, stream));
    const auto triangleItems = static_cast<std::uint32_t>(triangles);
    launchPerItem(stream, triangles, detail::growLeafBoxesOfJobs, m_growJobs.data(), jobs, triangleItems, distance);
    launchPerItem(stream, nodes, detail::copyNodesOfJobs, m_growJobs.data(), jobs, static_cast<std::uint32_t>(nodes));
    launchPerItem(stream, triangles, detail::refitTreesOfJobs, m_growJobs.data(), jobs, triangleItems,
                  m_arrivals.data());
}

ProximitySideInput NarrowEngineCuda::proximitySideOf(const DeviceMesh& mesh, std::uint32_t index, bool world) {
    const std::uint32_t frame = grownFrameOf(mesh, world);
    const FrontTree tree{mesh.triangleCount == 0 ? nullptr : mesh.grownNodes[frame].data(),
                         mesh.escape.data(),
                         mesh.leaves.data(),
                         mesh.nodeCount(),
                         mesh.triangleCount,
                         nullptr};
    return ProximitySideInput{tree, mesh.positions.data(), mesh.indices.data(),
                              frame == 1 ? mesh.transform : DeviceTransform{}, index};
}

const std::uint32_t* NarrowEngineCuda::orderFront(const FrontTree& other, const FrontEntry* front, std::uint32_t size) {
    const cudaStream_t stream = m_stream.get();
    const std::uint64_t segments = 2ull * other.nodeCount;
    m_segmentCounts.reserve(segments, stream);
    m_segmentOffsets.reserve(segments, stream);
    m_segmentRanks.reserve(size, stream);
    m_frontOrder.reserve(size, stream);
    BULLETGPU_CUDA_TRY(cudaMemsetAsync(m_segmentCounts.data(), 0, segments * sizeof(std::uint32_t), stream));
    launchPerItem(stream, size, detail::countFrontSegments, other, front, size, m_segmentCounts.data(),
                  m_segmentRanks.data());
    exclusiveSum(m_segmentCounts.data(), m_segmentOffsets.data(), segments);
    launchPerItem(stream, size, detail::scatterFrontOrder, other, front, size, m_segmentOffsets.data(),
                  m_segmentRanks.data(), m_frontOrder.data());
    return m_frontOrder.data();
}

void NarrowEngineCuda::runQuery(const MeshPairQuery& query, bool keepFronts, std::vector<TriangleContact>& contacts,
                                NarrowStats& stats) {
    const cudaStream_t stream = m_stream.get();
    const bool self = query.meshA == query.meshB;
    DeviceMesh& meshA = *m_meshes[query.meshA];
    DeviceMesh& meshB = *m_meshes[query.meshB];
    std::unique_ptr<DeviceFront>& slot = m_fronts[static_cast<std::uint64_t>(query.meshA) << 32 | query.meshB];
    if (!slot) slot = std::make_unique<DeviceFront>();
    DeviceFront& front = *slot;
    const bool generate =
        !keepFronts || !front.generated || front.buildA != meshA.buildCount || front.buildB != meshB.buildCount;
    if (front.buildA != meshA.buildCount || front.buildB != meshB.buildCount) front.quality = FrontQuality{};
    // Until the new front is in place, so that an error below leaves no front marked current.
    front.generated = false;
    front.buildA = meshA.buildCount;
    front.buildB = meshB.buildCount;
    stats.frontsGenerated += generate ? 1 : 0;
    const FrontTree a = frontTreeOf(meshA, !self), b = frontTreeOf(meshB, !self);
    const std::uint64_t items = a.nodeCount == 0 || b.nodeCount == 0 ? 0 : (generate ? a.leafCount : front.size);
    if (items == 0) {
        front.size = 0;
        front.generated = true;
        return;
    }
    const auto n = static_cast<std::uint32_t>(items);
    m_frontCounts.reserve(n, stream);
    m_candidateCounts.reserve(n, stream);
    m_frontOffsets.reserve(n, stream);
    m_candidateOffsets.reserve(n, stream);
    BULLETGPU_CUDA_TRY(cudaMemsetAsync(m_counters.data(), 0, 4 * sizeof(unsigned long long), stream));
    const FrontEntry* old = front.buffers[front.current].data();
    const std::uint32_t* order = generate ? nullptr : orderFront(b, old, n);
    launchPerItem(stream, n, detail::countFront, a, b, self, generate, old, n, order, m_frontCounts.data(),
                  m_candidateCounts.data(), m_counters.data(), m_counters.data() + 2);
    exclusiveSum(m_frontCounts.data(), m_frontOffsets.data(), n);
    exclusiveSum(m_candidateCounts.data(), m_candidateOffsets.data(), n);
    readCounters(m_counters.data(), 4);
    const unsigned long long boxTests = m_hostCounters.data()[0];
    const unsigned long long frontTotal = m_hostCounters.data()[2];
    const unsigned long long candidateTotal = m_hostCounters.data()[3];
    if (frontTotal > 0xffffffffull || candidateTotal > 0xffffffffull) {
        throw std::length_error("bulletgpu: a front or candidate list passed 2^32 entries");
    }
    DeviceFront& next = front;
    const int target = 1 - front.current;
    next.buffers[target].reserve(std::max<unsigned long long>(frontTotal, 1), stream);
    m_candidates.reserve(std::max<unsigned long long>(candidateTotal, 1), stream);
    launchPerItem(stream, n, detail::writeFront, a, b, self, generate, old, n, order, m_frontOffsets.data(),
                  m_candidateOffsets.data(), next.buffers[target].data(), m_candidates.data());
    front.current = target;
    front.size = frontTotal;
    front.generated = true;
    stats.boxTests += boxTests;
    stats.frontEntries += frontTotal;
    recordQuality(front, meshB, b, next.buffers[target].data(), frontTotal, candidateTotal, a.leafCount, stats);
    const auto candidates = static_cast<std::uint32_t>(candidateTotal);
    if (candidates == 0) return;

    const Clock::time_point testStart = Clock::now();
    m_contacts.reserve(candidates, stream);
    m_keys.reserve(candidates, stream);
    m_meets.reserve(candidates, stream);
    m_positions.reserve(candidates, stream);
    m_selectedKeys.reserve(candidates, stream);
    m_selectedPositions.reserve(candidates, stream);
    m_selected.reserve(1, stream);
    launchPerItem(stream, candidates, detail::testCandidates, meshViewOf(meshA, query.meshA, !self),
                  meshViewOf(meshB, query.meshB, !self), self, m_candidates.data(), candidates, m_contacts.data(),
                  m_keys.data(), m_meets.data(), m_positions.data(), m_counters.data() + 1);
    // One scratch for both selections: the larger of their needs.
    std::size_t bytes = 0, positionBytes = 0;
    BULLETGPU_CUDA_TRY(cub::DeviceSelect::Flagged(nullptr, bytes, m_keys.data(), m_meets.data(), m_selectedKeys.data(),
                                                  m_selected.data(), static_cast<std::int64_t>(candidates), stream));
    BULLETGPU_CUDA_TRY(cub::DeviceSelect::Flagged(nullptr, positionBytes, m_positions.data(), m_meets.data(),
                                                  m_selectedPositions.data(), m_selected.data(),
                                                  static_cast<std::int64_t>(candidates), stream));
    bytes = std::max(bytes, positionBytes);
    void* temp = scratch(bytes);
    BULLETGPU_CUDA_TRY(cub::DeviceSelect::Flagged(temp, bytes, m_keys.data(), m_meets.data(), m_selectedKeys.data(),
                                                  m_selected.data(), static_cast<std::int64_t>(candidates), stream));
    BULLETGPU_CUDA_TRY(cub::DeviceSelect::Flagged(temp, bytes, m_positions.data(), m_meets.data(),
                                                  m_selectedPositions.data(), m_selected.data(),
                                                  static_cast<std::int64_t>(candidates), stream));
    std::uint32_t selected = 0;
    BULLETGPU_CUDA_TRY(
        cudaMemcpyAsync(&selected, m_selected.data(), sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream));
    readCounters(m_counters.data() + 1, 1);
    stats.triangleTests += m_hostCounters.data()[0];
    if (selected > 0) {
        m_sortedKeys.reserve(selected, stream);
        m_sortedPositions.reserve(selected, stream);
        m_sortedContacts.reserve(selected, stream);
        bytes = 0;
        BULLETGPU_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, m_selectedKeys.data(), m_sortedKeys.data(),
                                                           m_selectedPositions.data(), m_sortedPositions.data(),
                                                           static_cast<std::int64_t>(selected), 0, 64, stream));
        BULLETGPU_CUDA_TRY(cub::DeviceRadixSort::SortPairs(
            scratch(bytes), bytes, m_selectedKeys.data(), m_sortedKeys.data(), m_selectedPositions.data(),
            m_sortedPositions.data(), static_cast<std::int64_t>(selected), 0, 64, stream));
        launchPerItem(stream, selected, detail::gatherContacts, m_contacts.data(), m_sortedPositions.data(), selected,
                      m_sortedContacts.data());
        const std::size_t first = contacts.size();
        contacts.resize(first + selected);
        BULLETGPU_CUDA_TRY(cudaMemcpyAsync(contacts.data() + first, m_sortedContacts.data(),
                                           selected * sizeof(TriangleContact), cudaMemcpyDeviceToHost, stream));
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
    }
    stats.testMs += millisecondsSince(testStart);
}

void NarrowEngineCuda::recordFrontLog(const FrontEntry* entries, std::uint64_t entryCount, const FrontEntry* hits,
                                      std::uint64_t hitCount, std::uint32_t nodeCount,
                                      DeviceBuffer<std::uint64_t>& entryOffsets,
                                      DeviceBuffer<std::uint64_t>& hitOffsets) {
    const cudaStream_t stream = m_stream.get();
    const std::uint64_t size = static_cast<std::uint64_t>(nodeCount) + 1;
    m_logCounts.reserve(size, stream);
    for (auto [list, count, out] :
         {std::make_tuple(entries, entryCount, &entryOffsets), std::make_tuple(hits, hitCount, &hitOffsets)}) {
        out->reserve(size, stream);
        BULLETGPU_CUDA_TRY(cudaMemsetAsync(m_logCounts.data(), 0, size * sizeof(std::uint64_t), stream));
        launchPerItem(stream, count, detail::countFrontLog, list, count,
                      reinterpret_cast<unsigned long long*>(m_logCounts.data()));
        std::size_t bytes = 0;
        BULLETGPU_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, bytes, m_logCounts.data(), out->data(),
                                                         static_cast<std::int64_t>(size), stream));
        BULLETGPU_CUDA_TRY(cub::DeviceScan::InclusiveSum(scratch(bytes), bytes, m_logCounts.data(), out->data(),
                                                         static_cast<std::int64_t>(size), stream));
    }
}

void NarrowEngineCuda::recordQuality(DeviceFront& front, DeviceMesh& meshB, const FrontTree& b,
                                     const FrontEntry* entries, std::uint64_t entryCount, std::uint64_t candidateCount,
                                     std::uint32_t queryLeaves, NarrowStats& stats) {
    const cudaStream_t stream = m_stream.get();
    const bool degraded = recordFrontQuality(front.quality, entryCount, candidateCount, queryLeaves, m_rebuildRatio);
    stats.worstQualityRatio = std::max(stats.worstQualityRatio, front.quality.ratio());
    if (front.quality.logStale && m_rebuildRatio > 0) {
        recordFrontLog(entries, entryCount, m_candidates.data(), candidateCount, b.nodeCount, front.referenceEntries,
                       front.referenceHits);
        front.quality.logStale = false;
    }
    if (!degraded) {
        front.quality.restructured = false;
        return;
    }
    // The entries stop in meshB's tree; meshA's tree enters the query only through its leaves.
    if (!meshB.refittedSinceBuild || meshB.needsBuild) return;
    m_chosen.clear();
    if (m_restructuring && !front.quality.restructured) {
        recordFrontLog(entries, entryCount, m_candidates.data(), candidateCount, b.nodeCount, m_logEntries, m_logHits);
        m_chosenFlags.reserve(b.nodeCount, stream);
        m_nodeIds.reserve(b.nodeCount, stream);
        m_chosenNodes.reserve(b.nodeCount, stream);
        m_chosenRanges.reserve(b.nodeCount, stream);
        m_chosenCount.reserve(1, stream);
        launchPerItem(stream, b.nodeCount, detail::flagChosenSubtrees, b,
                      FrontLogView{m_logEntries.data(), m_logHits.data()},
                      FrontLogView{front.referenceEntries.data(), front.referenceHits.data()}, m_rebuildRatio,
                      m_chosenFlags.data(), m_nodeIds.data());
        std::size_t bytes = 0;
        BULLETGPU_CUDA_TRY(cub::DeviceSelect::Flagged(nullptr, bytes, m_nodeIds.data(), m_chosenFlags.data(),
                                                      m_chosenNodes.data(), m_chosenCount.data(),
                                                      static_cast<std::int64_t>(b.nodeCount), stream));
        BULLETGPU_CUDA_TRY(cub::DeviceSelect::Flagged(scratch(bytes), bytes, m_nodeIds.data(), m_chosenFlags.data(),
                                                      m_chosenNodes.data(), m_chosenCount.data(),
                                                      static_cast<std::int64_t>(b.nodeCount), stream));
        launchPerItem(stream, b.nodeCount, detail::chosenRanges, m_chosenNodes.data(), b.escape, m_chosenCount.data(),
                      m_chosenRanges.data());
        std::uint32_t chosen = 0;
        BULLETGPU_CUDA_TRY(
            cudaMemcpyAsync(&chosen, m_chosenCount.data(), sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream));
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
        m_chosen.resize(chosen);
        if (chosen > 0) {
            BULLETGPU_CUDA_TRY(cudaMemcpyAsync(m_chosen.data(), m_chosenRanges.data(), chosen * sizeof(NodeRange),
                                               cudaMemcpyDeviceToHost, stream));
            BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
        }
    }
    if (scheduleRepair(m_chosen, meshB.triangleCount, meshB.pendingSubtrees, front.quality)) {
        meshB.needsBuild = true;
        ++stats.rebuildsScheduled;
    } else {
        stats.restructuresScheduled += static_cast<std::uint32_t>(m_chosen.size());
    }
}

void NarrowEngineCuda::carryFrontsOver() {
    const cudaStream_t stream = m_stream.get();
    for (auto& [key, slot] : m_fronts) {
        DeviceMesh& a = *m_meshes[key >> 32];
        DeviceMesh& b = *m_meshes[static_cast<std::uint32_t>(key)];
        if (a.restructured.empty() && b.restructured.empty()) continue;
        DeviceFront& front = *slot;
        // A front over a rebuilt tree is generated anew anyway.
        if (!front.generated || front.buildA != a.buildCount || front.buildB != b.buildCount) continue;
        const std::uint64_t items = front.size + 1;
        m_carryCounts.reserve(items, stream);
        m_carryOffsets.reserve(items, stream);
        const RestructuredRanges inA{a.restructuredRanges.data(), static_cast<std::uint32_t>(a.restructured.size())};
        const RestructuredRanges inB{b.restructuredRanges.data(), static_cast<std::uint32_t>(b.restructured.size())};
        const FrontTree treeA = frontTreeOf(a, false), treeB = frontTreeOf(b, false);
        const bool self = &a == &b;
        const FrontEntry* old = front.buffers[front.current].data();
        BULLETGPU_CUDA_TRY(cudaMemsetAsync(m_counters.data(), 0, sizeof(unsigned long long), stream));
        launchPerItem(stream, items, detail::countCarriedFront, treeA, treeB, self, inA, inB, old, front.size,
                      m_carryCounts.data(), m_counters.data());
        exclusiveSum(m_carryCounts.data(), m_carryOffsets.data(), items);
        readCounters(m_counters.data(), 1);
        const std::uint64_t total = m_hostCounters.data()[0];
        if (total > 0xffffffffull) throw std::length_error("bulletgpu: a carried-over front passed 2^32 entries");
        const int target = 1 - front.current;
        front.buffers[target].reserve(std::max<std::uint64_t>(total, 1), stream);
        launchPerItem(stream, items, detail::writeCarriedFront, treeA, treeB, self, inA, inB, old, front.size,
                      m_carryOffsets.data(), front.buffers[target].data());
        front.current = target;
        front.size = total;
        // The restructured subtrees have new nodes: the next query records the reference log.
        front.quality.logStale = true;
    }
    for (const std::unique_ptr<DeviceMesh>& mesh : m_meshes) mesh->restructured.clear();
}

void NarrowEngineCuda::forgetDeviceState() noexcept {
    for (const std::unique_ptr<DeviceMesh>& mesh : m_meshes) {
        mesh->needsBuild = true;
        mesh->worldStale = true;
        mesh->pendingSubtrees.clear();
        mesh->restructured.clear();
    }
    for (auto& entry : m_fronts) entry.second->generated = false;
}

void NarrowEngineCuda::findContacts(const MeshPairQuery* queries, std::uint32_t count, bool keepFronts,
                                    std::vector<TriangleContact>& contacts, NarrowStats& stats) {
    const DeviceScope scope(m_device);
    try {
        for (std::uint32_t q = 0; q < count; ++q) {
            const bool self = queries[q].meshA == queries[q].meshB;
            for (std::uint32_t index : {queries[q].meshA, queries[q].meshB}) {
                updateTree(*m_meshes[index], stats);
                if (!self) updateWorldTree(*m_meshes[index]);
            }
        }
        carryFrontsOver();
        const Clock::time_point start = Clock::now();
        for (std::uint32_t q = 0; q < count; ++q) runQuery(queries[q], keepFronts, contacts, stats);
        // Kernels of the last query may still run (its front log): wait, so that a fault shows
        // in this call and the caller may free or reuse what they read.
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(m_stream.get()));
        stats.traverseMs = millisecondsSince(start);
    } catch (...) {
        forgetDeviceState();
        throw;
    }
}

void NarrowEngineCuda::findProximity(const MeshPairQuery* queries, std::uint32_t count, const ProximityOptions& options,
                                     std::vector<ProximityContact>& contacts, NarrowStats& stats) {
    const DeviceScope scope(m_device);
    try {
        for (std::uint32_t q = 0; q < count; ++q) {
            updateTree(*m_meshes[queries[q].meshA], stats);
            updateTree(*m_meshes[queries[q].meshB], stats);
        }
        // The intersection query's fronts follow any restructuring done here.
        carryFrontsOver();
        const Clock::time_point growStart = Clock::now();
        // Each tree a query reads grown once per call: positions, transforms and the distance
        // may all have changed since the last.
        m_grown.assign(m_meshes.size(), 0);
        m_toGrow.clear();
        for (std::uint32_t q = 0; q < count; ++q) {
            const bool self = queries[q].meshA == queries[q].meshB;
            for (std::uint32_t index : {queries[q].meshA, queries[q].meshB}) {
                const std::uint32_t frame = grownFrameOf(*m_meshes[index], !self);
                if ((m_grown[index] & (1u << frame)) != 0) continue;
                m_toGrow.emplace_back(index, frame);
                m_grown[index] |= static_cast<std::uint8_t>(1u << frame);
            }
        }
        growTrees(options.distance);
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(m_stream.get()));
        stats.refitMs += millisecondsSince(growStart);
        const Clock::time_point start = Clock::now();
        m_pairInputs.clear();
        for (std::uint32_t q = 0; q < count; ++q) {
            const MeshPairQuery& query = queries[q];
            const bool self = query.meshA == query.meshB;
            m_pairInputs.push_back(ProximityPairInput{proximitySideOf(*m_meshes[query.meshA], query.meshA, !self),
                                                      proximitySideOf(*m_meshes[query.meshB], query.meshB, !self),
                                                      self});
        }
        m_proximity.run(m_pairInputs.data(), count, options, m_stream.get(), contacts, stats);
        stats.traverseMs = millisecondsSince(start);
    } catch (...) {
        forgetDeviceState();
        throw;
    }
}

void NarrowEngineCuda::findPointContacts(const float* points, std::uint32_t count, std::uint32_t index, double distance,
                                         std::vector<PointContact>& contacts, NarrowStats& stats) {
    const DeviceScope scope(m_device);
    contacts.clear();
    try {
        DeviceMesh& mesh = *m_meshes[index];
        updateTree(mesh, stats);
        carryFrontsOver();
        const Clock::time_point growStart = Clock::now();
        m_toGrow.assign(1, {index, grownFrameOf(mesh, true)});
        growTrees(distance);
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(m_stream.get()));
        stats.refitMs += millisecondsSince(growStart);
        const Clock::time_point start = Clock::now();
        m_proximity.runPoints(proximitySideOf(mesh, index, true), points, count, distance, m_stream.get(), contacts,
                              stats);
        stats.traverseMs = millisecondsSince(start);
    } catch (...) {
        forgetDeviceState();
        throw;
    }
}

} // namespace

std::unique_ptr<detail::NarrowDeviceEngine> detail::createCudaNarrowEngine(int device) {
    return std::make_unique<NarrowEngineCuda>(device);
}

} // namespace bulletgpu
