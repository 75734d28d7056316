// SPDX-License-Identifier: Zlib
// The CUDA engine of the whole-frame CCD query: uploads what the host prepared (positions and
// trees every query; features when they changed) through pinned staging, then computes the
// features' swept bounds, walks the trees, expands and filters, runs the exact tests and sorts
// the impacts on the device (ccd_frame_kernels.cuh), and copies back only the impacts and
// counters.
#include "kernels/common/cuda_check.h"
#include "kernels/common/cuda_device.h"
#include "kernels/common/cuda_resources.cuh"
#include "kernels/common/launch.h"
#include "kernels/common/stopwatch.h"
#include "kernels/narrow/ccd/ccd_frame_engine.h"
#include "kernels/narrow/ccd/ccd_frame_kernels.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace bulletgpu {
namespace {

using detail::CcdPreparedSide;
using detail::DeviceBuffer;
using detail::PinnedBuffer;
namespace kernels = ccdkernels;

/// Alignment of each array in the staging buffer.
constexpr std::uint64_t cStagingAlignment = 256;

/// One mesh on the device.
struct DeviceSide {
    DeviceBuffer<Vec3d> x0, x1;                                     ///< Positions at t = 0 and t = 1.
    DeviceBuffer<std::uint32_t> indices, edges, triangleEdges;      ///< Triangles and features.
    DeviceBuffer<FeatureOwnership> owned;                           ///< Owner bits of each triangle.
    DeviceBuffer<SweptBounds> vertexBounds, edgeBounds, faceBounds; ///< Swept bounds of each feature.
    DeviceBuffer<LbvhNode> nodes;                                   ///< The tree.
    DeviceBuffer<std::uint32_t> escape, leaves;                     ///< Its escapes and leaf nodes.
    std::uint64_t featuresRevision = 0; ///< Of the features uploaded; 0: none (the host's start at 1).
};

/// The CUDA engine.
class CcdEngineCuda final : public detail::CcdDeviceEngine {
public:
    explicit CcdEngineCuda(int device)
        : m_device(device), m_deviceName(usableCudaDeviceName(device)), m_stream(device) {
        const detail::DeviceScope scope(m_device);
        m_counters.reserve(kernels::cCounterCount, m_stream.get());
        m_hostCounters.reserve(kernels::cCounterCount, m_stream.get());
    }

    const std::string& deviceName() const override { return m_deviceName; }

    void run(const CcdPreparedSide* sides, bool self, const CcdFrameOptions& options, CcdFrameResult& out) override {
        const detail::DeviceScope scope(m_device);
        try {
            runQuery(sides, self, options, out);
        } catch (...) {
            // The device copies may be partial: upload everything again next time.
            for (DeviceSide& side : m_sides) side.featuresRevision = 0;
            throw;
        }
    }

private:
    /// One pending copy through the staging buffer.
    struct Upload {
        const void* source;  ///< Host array.
        void* target;        ///< Device array.
        std::uint64_t bytes; ///< Its size.
    };

    /// Makes room for `count` elements in `target` and queues the copy of `source` into it.
    template <typename T>
    void queueUpload(const T* source, std::uint64_t count, DeviceBuffer<T>& target) {
        target.reserve(count, m_stream.get());
        if (count > 0) m_uploads.push_back(Upload{source, target.data(), count * sizeof(T)});
    }
    /// Queues the copies of side `s`: every per-query array, and the features when they changed.
    void queueSide(const CcdPreparedSide& in, DeviceSide& side);
    /// Computes the swept bounds of side `s`'s features (after its upload).
    void computeBounds(const CcdPreparedSide& in, DeviceSide& side, const CcdFrameOptions& options);
    /// Copies every queued array through the pinned staging buffer and waits.
    void flushUploads();
    /// The device view of a side.
    static CcdMeshView meshViewOf(const DeviceSide& side);
    /// The walk's view of a side's tree.
    static FrontTree treeOf(const DeviceSide& side, const CcdPreparedSide& in);
    /// Makes the CUB scratch at least `bytes`.
    void* scratch(std::size_t bytes) {
        m_scratch.reserve(std::max<std::size_t>(bytes, 1), m_stream.get());
        return m_scratch.data();
    }
    /// Writes offsets[0] = 0 and offsets[i + 1] = counts[0] + ... + counts[i], then waits and
    /// returns offsets[count] (the total).
    std::uint64_t scanCounts(const std::uint64_t* counts, std::uint64_t* offsets, std::uint64_t count);
    /// Sorts the `count` impacts in m_impacts by featurePairBefore into m_sortedImpacts: a stable
    /// radix sort by b, then by (kind, a).
    void sortImpacts(std::uint64_t count);
    /// Copies `count` counters from the device and waits.
    void readCounters(int count);
    /// The whole query (see run).
    void runQuery(const CcdPreparedSide* sides, bool self, const CcdFrameOptions& options, CcdFrameResult& out);

    int m_device;
    std::string m_deviceName;
    detail::CudaStream m_stream;
    DeviceSide m_sides[2];
    std::vector<Upload> m_uploads;
    PinnedBuffer<unsigned char> m_staging;
    DeviceBuffer<std::uint64_t> m_leafCounts, m_leafOffsets;
    DeviceBuffer<FrontEntry> m_leafPairs;
    DeviceBuffer<std::uint64_t> m_pairCounts, m_pairOffsets;
    DeviceBuffer<CcdFeaturePair> m_candidates;
    DeviceBuffer<CcdImpact> m_impacts, m_sortedImpacts;
    DeviceBuffer<std::uint32_t> m_keysB, m_sortedKeysB, m_order, m_sortedOrder;
    DeviceBuffer<std::uint64_t> m_keysKindA, m_sortedKeysKindA;
    DeviceBuffer<unsigned long long> m_counters;
    PinnedBuffer<unsigned long long> m_hostCounters;
    PinnedBuffer<CcdImpact> m_hostImpacts;
    DeviceBuffer<unsigned char> m_scratch;
};

void CcdEngineCuda::queueSide(const CcdPreparedSide& in, DeviceSide& side) {
    const CcdMeshView& mesh = in.mesh;
    queueUpload(mesh.x0, in.vertexCount, side.x0);
    queueUpload(mesh.x1, in.vertexCount, side.x1);
    queueUpload(in.nodes, in.nodeCount, side.nodes);
    queueUpload(in.escape, in.nodeCount, side.escape);
    queueUpload(in.leaves, in.leafCount, side.leaves);
    if (side.featuresRevision == in.featuresRevision) return;
    queueUpload(mesh.indices, 3ull * in.triangleCount, side.indices);
    queueUpload(mesh.edges, 2ull * in.edgeCount, side.edges);
    queueUpload(mesh.triangleEdges, 3ull * in.triangleCount, side.triangleEdges);
    queueUpload(mesh.owned, in.triangleCount, side.owned);
    side.featuresRevision = in.featuresRevision;
}

void CcdEngineCuda::computeBounds(const CcdPreparedSide& in, DeviceSide& side, const CcdFrameOptions& options) {
    const cudaStream_t stream = m_stream.get();
    side.vertexBounds.reserve(in.vertexCount, stream);
    side.edgeBounds.reserve(in.edgeCount, stream);
    side.faceBounds.reserve(in.triangleCount, stream);
    const std::uint64_t items = static_cast<std::uint64_t>(in.vertexCount) + in.edgeCount + in.triangleCount;
    launchPerItem(stream, items, kernels::computeSweptBounds, meshViewOf(side), in.vertexCount, in.edgeCount,
                  in.triangleCount, options.eta, options.exact, side.vertexBounds.data(), side.edgeBounds.data(),
                  side.faceBounds.data());
}

void CcdEngineCuda::flushUploads() {
    const cudaStream_t stream = m_stream.get();
    std::uint64_t total = 0;
    for (const Upload& upload : m_uploads)
        total += (upload.bytes + cStagingAlignment - 1) / cStagingAlignment * cStagingAlignment;
    m_staging.reserve(total, stream);
    std::uint64_t offset = 0;
    for (const Upload& upload : m_uploads) {
        unsigned char* staged = m_staging.data() + offset;
        std::memcpy(staged, upload.source, upload.bytes);
        BULLETGPU_CUDA_TRY(cudaMemcpyAsync(upload.target, staged, upload.bytes, cudaMemcpyHostToDevice, stream));
        offset += (upload.bytes + cStagingAlignment - 1) / cStagingAlignment * cStagingAlignment;
    }
    m_uploads.clear();
    BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
}

CcdMeshView CcdEngineCuda::meshViewOf(const DeviceSide& side) {
    return CcdMeshView{side.x0.data(),
                       side.x1.data(),
                       side.indices.data(),
                       side.edges.data(),
                       side.triangleEdges.data(),
                       side.owned.data(),
                       side.vertexBounds.data(),
                       side.edgeBounds.data(),
                       side.faceBounds.data()};
}

FrontTree CcdEngineCuda::treeOf(const DeviceSide& side, const CcdPreparedSide& in) {
    return FrontTree{side.nodes.data(), side.escape.data(), side.leaves.data(), in.nodeCount, in.leafCount, nullptr};
}

std::uint64_t CcdEngineCuda::scanCounts(const std::uint64_t* counts, std::uint64_t* offsets, std::uint64_t count) {
    const cudaStream_t stream = m_stream.get();
    BULLETGPU_CUDA_TRY(cudaMemsetAsync(offsets, 0, sizeof(std::uint64_t), stream));
    if (count > 0) {
        const auto items = static_cast<std::int64_t>(count);
        std::size_t bytes = 0;
        BULLETGPU_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, bytes, counts, offsets + 1, items, stream));
        BULLETGPU_CUDA_TRY(cub::DeviceScan::InclusiveSum(scratch(bytes), bytes, counts, offsets + 1, items, stream));
    }
    BULLETGPU_CUDA_TRY(
        cudaMemcpyAsync(m_hostCounters.data(), offsets + count, sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream));
    BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
    return m_hostCounters.data()[0];
}

void CcdEngineCuda::sortImpacts(std::uint64_t count) {
    const cudaStream_t stream = m_stream.get();
    m_sortedImpacts.reserve(count, stream);
    if (count == 0) return;
    if (count > std::numeric_limits<std::uint32_t>::max()) {
        throw std::length_error("bulletgpu: more than 2^32 - 1 CCD impacts in one query");
    }
    for (DeviceBuffer<std::uint32_t>* buffer : {&m_keysB, &m_sortedKeysB, &m_order, &m_sortedOrder})
        buffer->reserve(count, stream);
    m_keysKindA.reserve(count, stream);
    m_sortedKeysKindA.reserve(count, stream);
    const auto items = static_cast<std::int64_t>(count);
    launchPerItem(stream, count, kernels::impactKeysByB, m_impacts.data(), count, m_keysB.data(), m_order.data());
    std::size_t bytes = 0;
    BULLETGPU_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, m_keysB.data(), m_sortedKeysB.data(),
                                                       m_order.data(), m_sortedOrder.data(), items, 0, 32, stream));
    BULLETGPU_CUDA_TRY(cub::DeviceRadixSort::SortPairs(scratch(bytes), bytes, m_keysB.data(), m_sortedKeysB.data(),
                                                       m_order.data(), m_sortedOrder.data(), items, 0, 32, stream));
    launchPerItem(stream, count, kernels::impactKeysByKindAndA, m_impacts.data(), m_sortedOrder.data(), count,
                  m_keysKindA.data());
    bytes = 0;
    BULLETGPU_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, m_keysKindA.data(), m_sortedKeysKindA.data(),
                                                       m_sortedOrder.data(), m_order.data(), items, 0, 34, stream));
    BULLETGPU_CUDA_TRY(cub::DeviceRadixSort::SortPairs(scratch(bytes), bytes, m_keysKindA.data(),
                                                       m_sortedKeysKindA.data(), m_sortedOrder.data(), m_order.data(),
                                                       items, 0, 34, stream));
    launchPerItem(stream, count, kernels::gatherImpacts, m_impacts.data(), m_order.data(), count,
                  m_sortedImpacts.data());
}

void CcdEngineCuda::readCounters(int count) {
    BULLETGPU_CUDA_TRY(cudaMemcpyAsync(m_hostCounters.data(), m_counters.data(), count * sizeof(unsigned long long),
                                       cudaMemcpyDeviceToHost, m_stream.get()));
    BULLETGPU_CUDA_TRY(cudaStreamSynchronize(m_stream.get()));
}

void CcdEngineCuda::runQuery(const CcdPreparedSide* sides, bool self, const CcdFrameOptions& options,
                             CcdFrameResult& out) {
    const cudaStream_t stream = m_stream.get();
    CcdFrameCounts& counts = out.counts;
    const CcdPreparedSide& inA = sides[0];
    const CcdPreparedSide& inB = sides[self ? 0 : 1];

    // Upload.
    Clock::time_point start = Clock::now();
    queueSide(inA, m_sides[0]);
    if (!self) queueSide(inB, m_sides[1]);
    flushUploads();
    counts.uploadMs = millisecondsSince(start);

    // The features' swept bounds, then the triangle pairs whose grown swept boxes overlap: the
    // leaf walk of every leaf of A.
    start = Clock::now();
    computeBounds(inA, m_sides[0], options);
    if (!self) computeBounds(inB, m_sides[1], options);
    const DeviceSide& sideA = m_sides[0];
    const DeviceSide& sideB = m_sides[self ? 0 : 1];
    const FrontTree treeA = treeOf(sideA, inA), treeB = treeOf(sideB, inB);
    m_leafCounts.reserve(inA.leafCount, stream);
    m_leafOffsets.reserve(inA.leafCount + 1ull, stream);
    launchPerItem(stream, inA.leafCount, kernels::countLeafPairs, treeA, treeB, self, m_leafCounts.data());
    const std::uint64_t pairCount = scanCounts(m_leafCounts.data(), m_leafOffsets.data(), inA.leafCount);
    m_leafPairs.reserve(pairCount, stream);
    if (pairCount > 0) {
        launchPerItem(stream, inA.leafCount, kernels::writeLeafPairs, treeA, treeB, self, m_leafOffsets.data(),
                      m_leafPairs.data());
    }
    counts.trianglePairs = pairCount;
    counts.traverseMs = millisecondsSince(start);

    // Their feature pairs, each once, and the filters.
    start = Clock::now();
    BULLETGPU_CUDA_TRY(
        cudaMemsetAsync(m_counters.data(), 0, kernels::cCounterCount * sizeof(unsigned long long), stream));
    const kernels::ExpandInput expand{m_leafPairs.data(),
                                      pairCount,
                                      sideA.nodes.data(),
                                      sideB.nodes.data(),
                                      meshViewOf(sideA),
                                      meshViewOf(sideB),
                                      self,
                                      options.prefilter && options.exact.maxIterations > 0,
                                      options.eta};
    m_pairCounts.reserve(pairCount, stream);
    m_pairOffsets.reserve(pairCount + 1, stream);
    launchPerItem(stream, pairCount, kernels::countFeaturePairs, expand, m_pairCounts.data(), m_counters.data());
    const std::uint64_t tests = scanCounts(m_pairCounts.data(), m_pairOffsets.data(), pairCount);
    m_candidates.reserve(tests, stream);
    if (tests > 0) {
        launchPerItem(stream, pairCount, kernels::writeFeaturePairs, expand, m_pairOffsets.data(), m_candidates.data());
    }
    counts.exactTests = tests;
    counts.expandMs = millisecondsSince(start);

    // The exact tests, then the sort of their hits and the copy back.
    start = Clock::now();
    m_impacts.reserve(tests, stream);
    launchPerItem(stream, tests, kernels::runExactTests, m_candidates.data(), tests, expand.meshA, expand.meshB,
                  options.eta, options.exact, m_impacts.data(), m_counters.data());
    readCounters(kernels::cCounterCount);
    const unsigned long long* counters = m_hostCounters.data();
    counts.featurePairs = counters[kernels::cFeaturePairs];
    counts.firstBoxCulled = counters[kernels::cFirstBoxCulled];
    counts.planeCulled = counters[kernels::cPlaneCulled];
    counts.iterations = counters[kernels::cIterations];
    counts.rootRejections = counters[kernels::cRootRejections];
    const std::uint64_t impactCount = counters[kernels::cImpacts];
    sortImpacts(impactCount);
    m_hostImpacts.reserve(impactCount, stream);
    if (impactCount > 0) {
        BULLETGPU_CUDA_TRY(cudaMemcpyAsync(m_hostImpacts.data(), m_sortedImpacts.data(),
                                           impactCount * sizeof(CcdImpact), cudaMemcpyDeviceToHost, stream));
    }
    BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
    out.impacts.assign(m_hostImpacts.data(), m_hostImpacts.data() + impactCount);
    out.earliestToi = HUGE_VAL;
    counts.undecided = 0;
    for (const CcdImpact& impact : out.impacts) {
        out.earliestToi = std::min(out.earliestToi, impact.toi);
        counts.undecided += impact.undecided;
    }
    counts.impacts = impactCount;
    counts.exactMs = millisecondsSince(start);
}

} // namespace

std::unique_ptr<detail::CcdDeviceEngine> detail::createCudaCcdEngine(int device) {
    return std::make_unique<CcdEngineCuda>(device);
}

} // namespace bulletgpu
