// SPDX-License-Identifier: Zlib
// The contact query on the device (ProximityQueryCuda): all queries of a call as one batch (so
// that hundreds of small mesh pairs a step cost one pass, not one each): the walk of every query
// leaf over its query's other grown tree (count, CUB scan, write), the per-candidate work of
// candidate_proximity.h appending to buffers that grow and run again when they overflow, a CUB
// radix sort by (query, kind, featureA, featureB) and the gather; only the contacts come back.
// The per-element work is the CPU path's, so the sorted contacts are the same bytes.
#include "kernels/narrow/engine/narrow_proximity_cuda.cuh"

#include "kernels/common/cuda_check.h"
#include "kernels/common/launch.h"
#include "kernels/common/stopwatch.h"
#include "kernels/narrow/engine/proximity_kernels.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <stdexcept>

namespace bulletgpu::detail {
namespace {

/// The largest count the 32-bit scans, positions and launches take.
constexpr unsigned long long cMaxItems = 0xffffffffull;

/// Copies `count` elements of `from` to a device buffer, grown first (at least one element, so
/// that its data is never null).
template <typename T>
void upload(DeviceBuffer<T>& to, const T* from, std::size_t count, cudaStream_t stream) {
    to.reserve(std::max<std::size_t>(count, 1), stream);
    // From pageable memory the call returns once the source is read.
    if (count > 0) {
        BULLETGPU_CUDA_TRY(cudaMemcpyAsync(to.data(), from, count * sizeof(T), cudaMemcpyHostToDevice, stream));
    }
}

} // namespace

void ProximityQueryCuda::addMesh() { m_meshes.push_back(std::make_unique<MeshState>()); }

void ProximityQueryCuda::clear() { m_meshes.clear(); }

void ProximityQueryCuda::setFeatures(std::uint32_t mesh, const MeshFeatures& features, cudaStream_t stream) {
    MeshState& state = *m_meshes[mesh];
    state.hasFeatures = false;
    upload(state.triangleEdges, features.triangleEdges.data(), features.triangleEdges.size(), stream);
    upload(state.owned, features.owned.data(), features.owned.size(), stream);
    state.hasFeatures = true;
}

void ProximityQueryCuda::setWeld(std::uint32_t mesh, const std::vector<std::uint32_t>& weld, cudaStream_t stream) {
    MeshState& state = *m_meshes[mesh];
    if (state.hasWeld && state.uploadedWeld == weld) return;
    state.hasWeld = false;
    upload(state.weld, weld.data(), weld.size(), stream);
    state.uploadedWeld = weld;
    state.hasWeld = true;
}

void* ProximityQueryCuda::scratch(std::size_t bytes, cudaStream_t stream) {
    m_scratch.reserve(std::max<std::size_t>(bytes, 1), stream);
    return m_scratch.data();
}

void ProximityQueryCuda::readTotals(int count, cudaStream_t stream) {
    BULLETGPU_CUDA_TRY(cudaMemcpyAsync(m_hostTotals.data(), m_totals.data(), count * sizeof(unsigned long long),
                                       cudaMemcpyDeviceToHost, stream));
    BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
}

void ProximityQueryCuda::prepareWalk(std::uint32_t items, cudaStream_t stream) {
    m_totals.reserve(4, stream);
    m_hostTotals.reserve(4, stream);
    m_counts.reserve(items, stream);
    m_offsets.reserve(items, stream);
    BULLETGPU_CUDA_TRY(cudaMemsetAsync(m_totals.data(), 0, 4 * sizeof(unsigned long long), stream));
}

std::uint32_t ProximityQueryCuda::finishCount(std::uint32_t items, cudaStream_t stream, NarrowStats& stats) {
    std::size_t bytes = 0;
    BULLETGPU_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, m_counts.data(), m_offsets.data(),
                                                     static_cast<std::int64_t>(items), stream));
    BULLETGPU_CUDA_TRY(cub::DeviceScan::ExclusiveSum(scratch(bytes, stream), bytes, m_counts.data(), m_offsets.data(),
                                                     static_cast<std::int64_t>(items), stream));
    readTotals(3, stream);
    const unsigned long long candidates = m_hostTotals.data()[2];
    if (candidates > cMaxItems) throw std::length_error("bulletgpu: a contact query passed 2^32 candidates");
    stats.boxTests += m_hostTotals.data()[0];
    stats.frontEntries += m_hostTotals.data()[1];
    stats.triangleTests += candidates;
    m_candidates.reserve(std::max<unsigned long long>(candidates, 1), stream);
    return static_cast<std::uint32_t>(candidates);
}

template <typename Test, typename Reserve>
std::uint32_t ProximityQueryCuda::appendUntilRoom(std::uint64_t room, const Test& test, const Reserve& reserve,
                                                  cudaStream_t stream) {
    unsigned long long* appended = m_totals.data() + 3;
    for (;;) {
        BULLETGPU_CUDA_TRY(cudaMemsetAsync(appended, 0, sizeof(unsigned long long), stream));
        test(room, appended);
        readTotals(4, stream);
        const unsigned long long found = m_hostTotals.data()[3];
        if (found > cMaxItems) throw std::length_error("bulletgpu: a contact query passed 2^32 contacts");
        if (found <= room) return static_cast<std::uint32_t>(found);
        room = reserve(found);
    }
}

void ProximityQueryCuda::run(const ProximityPairInput* queries, std::uint32_t count, const ProximityOptions& options,
                             cudaStream_t stream, std::vector<ProximityContact>& contacts, NarrowStats& stats) {
    // The batch as the kernels read it: queries with an empty side find nothing and are left out.
    m_hostQueries.reserve(std::max<std::uint32_t>(count, 1), stream);
    std::uint32_t kept = 0;
    std::uint64_t leaves = 0;
    for (std::uint32_t q = 0; q < count; ++q) {
        const ProximityPairInput& query = queries[q];
        if (query.a.tree.nodeCount == 0 || query.b.tree.nodeCount == 0) continue;
        const MeshState& stateA = *m_meshes[query.a.mesh];
        const MeshState& stateB = *m_meshes[query.b.mesh];
        const bool welds = query.self && options.excludeWelded;
        if (!stateA.hasFeatures || !stateB.hasFeatures) {
            throw std::logic_error("bulletgpu: a contact query reads a mesh without features");
        }
        if (welds && !stateA.hasWeld) {
            throw std::logic_error("bulletgpu: a self contact query excluding welds has no weld");
        }
        const auto sideOf = [welds](const ProximitySideInput& in, const MeshState& state) {
            return DeviceProximitySide{in.tree,
                                       in.positions,
                                       in.indices,
                                       state.triangleEdges.data(),
                                       state.owned.data(),
                                       welds ? state.weld.data() : nullptr,
                                       in.transform,
                                       in.mesh};
        };
        m_hostQueries.data()[kept++] = DeviceProximityQuery{sideOf(query.a, stateA), sideOf(query.b, stateB),
                                                            static_cast<std::uint32_t>(leaves), query.self ? 1u : 0u};
        leaves += query.a.tree.leafCount;
        if (leaves > cMaxItems) throw std::length_error("bulletgpu: a contact query batch passed 2^32 leaves");
    }
    if (kept == 0 || leaves == 0) return;
    m_queries.reserve(kept, stream);
    BULLETGPU_CUDA_TRY(cudaMemcpyAsync(m_queries.data(), m_hostQueries.data(), kept * sizeof(DeviceProximityQuery),
                                       cudaMemcpyHostToDevice, stream));

    // The walk: candidates of each query leaf counted, scanned, written with their query.
    const auto items = static_cast<std::uint32_t>(leaves);
    prepareWalk(items, stream);
    launchPerItem(stream, items, countProximityCandidates, m_queries.data(), kept, items, m_counts.data(),
                  m_totals.data());
    const std::uint32_t candidates = finishCount(items, stream, stats);
    if (candidates == 0) return;
    m_candidateQueries.reserve(candidates, stream);
    launchPerItem(stream, items, writeProximityCandidates, m_queries.data(), kept, items, m_offsets.data(),
                  m_candidates.data(), m_candidateQueries.data());

    // The per-candidate work, appending; run again into larger buffers when they overflowed.
    const Clock::time_point testStart = Clock::now();
    const auto reserve = [&](std::uint64_t count) {
        const std::uint64_t items = std::max<std::uint64_t>(count, 1);
        m_contacts.reserve(items, stream);
        m_keys.reserve(items, stream);
        m_positions.reserve(items, stream);
        return std::min({m_contacts.capacity(), m_keys.capacity(), m_positions.capacity()});
    };
    const auto test = [&](std::uint64_t room, unsigned long long* appended) {
        launchPerItem(stream, candidates, testProximityCandidates, m_queries.data(), options.distance,
                      options.vertexFaceOnly, m_candidates.data(), m_candidateQueries.data(), candidates,
                      AppendProximity{m_contacts.data(), m_keys.data(), m_positions.data(), room, appended});
    };
    const std::uint32_t n =
        appendUntilRoom(reserve(std::max<std::uint64_t>(candidates, m_contacts.capacity())), test, reserve, stream);

    // The sort by (query, kind, featureA, featureB) (meshA and meshB are the query's), then the
    // gather.
    if (n > 0) {
        m_sortedKeys.reserve(n, stream);
        m_sortedPositions.reserve(n, stream);
        m_sorted.reserve(n, stream);
        std::size_t bytes = 0;
        BULLETGPU_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, m_keys.data(), m_sortedKeys.data(),
                                                           m_positions.data(), m_sortedPositions.data(),
                                                           static_cast<std::int64_t>(n), ProximityKeyParts{}, stream));
        BULLETGPU_CUDA_TRY(cub::DeviceRadixSort::SortPairs(
            scratch(bytes, stream), bytes, m_keys.data(), m_sortedKeys.data(), m_positions.data(),
            m_sortedPositions.data(), static_cast<std::int64_t>(n), ProximityKeyParts{}, stream));
        launchPerItem(stream, n, gatherProximityContacts, m_contacts.data(), m_sortedPositions.data(), n,
                      m_sorted.data());
        const std::size_t first = contacts.size();
        contacts.resize(first + n);
        BULLETGPU_CUDA_TRY(cudaMemcpyAsync(contacts.data() + first, m_sorted.data(), n * sizeof(ProximityContact),
                                           cudaMemcpyDeviceToHost, stream));
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
    }
    stats.testMs += millisecondsSince(testStart);
}

void ProximityQueryCuda::runPoints(const ProximitySideInput& side, const float* points, std::uint32_t count,
                                   double distance, cudaStream_t stream, std::vector<PointContact>& contacts,
                                   NarrowStats& stats) {
    if (side.tree.nodeCount == 0 || count == 0) return;
    // The points are the query's input: they cross to the device, the mesh does not.
    upload(m_points, points, 3 * static_cast<std::size_t>(count), stream);

    // The walk: candidate leaves of each point's grown box counted, scanned, written.
    prepareWalk(count, stream);
    launchPerItem(stream, count, countPointCandidates, side.tree, m_points.data(), count, distance, m_counts.data(),
                  m_totals.data());
    const std::uint32_t candidates = finishCount(count, stream, stats);
    if (candidates == 0) return;
    launchPerItem(stream, count, writePointCandidates, side.tree, m_points.data(), count, distance, m_offsets.data(),
                  m_candidates.data());

    // The tests, appending; run again into larger buffers when they overflowed.
    const Clock::time_point testStart = Clock::now();
    const DeviceProximitySide mesh{side.tree, side.positions, side.indices,   nullptr,
                                   nullptr,   nullptr,        side.transform, side.mesh};
    const auto reserve = [&](std::uint64_t items) {
        const std::uint64_t room = std::max<std::uint64_t>(items, 1);
        m_pointContacts.reserve(room, stream);
        m_pointKeys.reserve(room, stream);
        m_positions.reserve(room, stream);
        return std::min({m_pointContacts.capacity(), m_pointKeys.capacity(), m_positions.capacity()});
    };
    const auto test = [&](std::uint64_t room, unsigned long long* appended) {
        launchPerItem(
            stream, candidates, testPointCandidates, mesh, m_points.data(), distance, m_candidates.data(), candidates,
            AppendPointContact{m_pointContacts.data(), m_pointKeys.data(), m_positions.data(), room, appended});
    };
    const std::uint32_t n = appendUntilRoom(reserve(std::max<std::uint64_t>(candidates, m_pointContacts.capacity())),
                                            test, reserve, stream);

    // The sort by (point, triangle), then the gather.
    if (n > 0) {
        m_sortedPointKeys.reserve(n, stream);
        m_sortedPositions.reserve(n, stream);
        m_sortedPointContacts.reserve(n, stream);
        std::size_t bytes = 0;
        BULLETGPU_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, m_pointKeys.data(), m_sortedPointKeys.data(),
                                                           m_positions.data(), m_sortedPositions.data(),
                                                           static_cast<std::int64_t>(n), 0, 64, stream));
        BULLETGPU_CUDA_TRY(cub::DeviceRadixSort::SortPairs(
            scratch(bytes, stream), bytes, m_pointKeys.data(), m_sortedPointKeys.data(), m_positions.data(),
            m_sortedPositions.data(), static_cast<std::int64_t>(n), 0, 64, stream));
        launchPerItem(stream, n, gatherPointContacts, m_pointContacts.data(), m_sortedPositions.data(), n,
                      m_sortedPointContacts.data());
        const std::size_t first = contacts.size();
        contacts.resize(first + n);
        BULLETGPU_CUDA_TRY(cudaMemcpyAsync(contacts.data() + first, m_sortedPointContacts.data(),
                                           n * sizeof(PointContact), cudaMemcpyDeviceToHost, stream));
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
    }
    stats.testMs += millisecondsSince(testStart);
}

} // namespace bulletgpu::detail
