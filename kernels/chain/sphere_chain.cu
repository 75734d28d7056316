// SPDX-License-Identifier: Zlib
// The CUDA solver of SphereChainSet: leaves uploaded when they move, the hierarchy refitted on
// the device one level per launch, one thread per sphere traversing it (or two, one per half),
// the pair keys radix sorted (deterministic order) and turned into contacts on the device.
#include "kernels/chain/sphere_chain.h"
#include "kernels/common/stopwatch.h"

#include "kernels/chain/detail/chain_kernels.cuh"
#include "kernels/common/cuda_check.h"
#include "kernels/common/cuda_device.h"
#include "kernels/common/launch.h"
#include "kernels/common/cuda_resources.cuh"

#include <cub/device/device_radix_sort.cuh>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace bulletgpu {
namespace {

using detail::DeviceBuffer;
using detail::DeviceScope;
using detail::PinnedBuffer;

/// Up to this many spheres the default traversal runs two threads per sphere (GPU2v2): on an
/// H100 it beat one thread per sphere by 0.01 ms up to 30,000 spheres, tied at 40,000 and
/// 50,000 and lost from 100,000 (docs/benchmarks/sphere-chains-h100.md).
constexpr std::uint32_t cHalvesPerSphereUpTo = 32768;

/// Whether a query runs GPU2v2 on `spheres` spheres.
bool walksHalves(const ChainQuery& query, std::uint32_t spheres) {
    return query.traversal == ChainTraversal::HalvesPerSphere ||
           (query.traversal == ChainTraversal::Default && spheres <= cHalvesPerSphereUpTo);
}

/// Bits that hold every value below `count`.
int bitsBelow(std::uint64_t count) {
    int bits = 0;
    while (bits < 64 && (1ull << bits) < count) ++bits;
    return bits;
}

/// The CUDA backend of SphereChainSet.
class ChainSolverCuda final : public detail::ChainSolver {
public:
    explicit ChainSolverCuda(int device)
        : m_device(device), m_deviceName(usableCudaDeviceName(device)), m_stream(device) {
        const DeviceScope scope(m_device);
        m_count.reserve(1, m_stream.get());
    }

    void findContacts(ChainLayout& layout, const ChainQuery& query, std::vector<ChainContact>& contacts,
                      ChainStats& stats) override;
    void findContactsOf(ChainLayout& layout, const std::uint32_t* spheres, std::uint32_t count, const ChainQuery& query,
                        std::vector<ChainContact>& contacts, ChainStats& stats) override;

    std::string description() const override {
        return "CUDA backend on " + m_deviceName + " (device " + std::to_string(m_device) + ")";
    }

private:
    /// Uploads the chain tables when chains were added, and the leaves when they moved, and
    /// refits every level; returns whether it refitted.
    bool uploadAndRefit(const ChainLayout& layout);
    /// Runs the traversal into m_keys, growing it and running again on overflow; returns the pair count.
    std::uint64_t traverse(const ChainLayout& layout, const ChainQuery& query);
    /// Uploads the `count` listed spheres, marks them, runs their walks into m_keys (growing it
    /// and running again on overflow) and clears the marks; returns the pair count.
    std::uint64_t traverseListed(const ChainLayout& layout, const std::uint32_t* spheres, std::uint32_t count,
                                 const ChainQuery& query);
    /// uploadAndRefit, timed into `stats`; the layout's list of moved leaves is then spent.
    void refitTimed(ChainLayout& layout, ChainStats& stats);
    /// writeContacts, timed into `stats`.
    void writeContactsTimed(const ChainLayout& layout, std::uint64_t pairs, std::vector<ChainContact>& contacts,
                            ChainStats& stats);
    /// Sorts the pair keys and copies their contacts into `contacts`.
    void writeContacts(const ChainLayout& layout, std::uint64_t pairs, std::vector<ChainContact>& contacts);

    int m_device;
    std::string m_deviceName;
    detail::CudaStream m_stream;
    std::uint64_t m_fittedTopology = ~0ull;
    std::uint64_t m_fittedPositions = ~0ull;
    DeviceBuffer<ChainSphere> m_nodes;
    DeviceBuffer<FloatBox> m_boxes;
    DeviceBuffer<std::uint32_t> m_sphereChain, m_chainStart;
    DeviceBuffer<unsigned long long> m_keys, m_sortedKeys, m_count;
    DeviceBuffer<std::uint8_t> m_sortScratch;
    DeviceBuffer<ChainContact> m_contacts;
    DeviceBuffer<std::uint32_t> m_listedSpheres; ///< findContactsOf's list.
    DeviceBuffer<std::uint8_t> m_listed;         ///< Per sphere: listed (zero between calls).
    PinnedBuffer<unsigned long long> m_hostCount;
};

bool ChainSolverCuda::uploadAndRefit(const ChainLayout& layout) {
    const cudaStream_t stream = m_stream.get();
    const ChainLevels& tree = layout.tree;
    const bool newTopology = layout.topologyRevision != m_fittedTopology;
    if (newTopology) {
        m_nodes.reserve(layout.nodes.size(), stream);
        m_boxes.reserve(layout.nodes.size(), stream);
        m_sphereChain.reserve(layout.sphereChain.size(), stream);
        m_chainStart.reserve(layout.chainStart.size(), stream);
        BULLETGPU_CUDA_TRY(cudaMemcpyAsync(m_sphereChain.data(), layout.sphereChain.data(),
                                           layout.sphereChain.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice,
                                           stream));
        BULLETGPU_CUDA_TRY(cudaMemcpyAsync(m_chainStart.data(), layout.chainStart.data(),
                                           layout.chainStart.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice,
                                           stream));
        m_fittedTopology = layout.topologyRevision;
    }
    if (!newTopology && layout.positionsRevision == m_fittedPositions) return false;
    BULLETGPU_CUDA_TRY(cudaMemcpyAsync(m_nodes.data(), layout.nodes.data(), tree.count[0] * sizeof(ChainSphere),
                                       cudaMemcpyHostToDevice, stream));
    const std::uint64_t subtrees =
        (std::uint64_t{tree.count[0]} + (1ull << detail::cChainSubtreeLevels) - 1) >> detail::cChainSubtreeLevels;
    detail::refitChainSubtrees<<<static_cast<unsigned>(subtrees), cBlockSize, 0, stream>>>(m_nodes.data(),
                                                                                           m_boxes.data(), tree);
    BULLETGPU_CUDA_CHECK_LAUNCH(stream);
    if (tree.levels > detail::cChainSubtreeLevels + 1) {
        detail::refitChainUpperTree<<<1, cBlockSize, 0, stream>>>(m_nodes.data(), m_boxes.data(), tree);
        BULLETGPU_CUDA_CHECK_LAUNCH(stream);
    }
    BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
    m_fittedPositions = layout.positionsRevision;
    return true;
}

std::uint64_t ChainSolverCuda::traverse(const ChainLayout& layout, const ChainQuery& query) {
    const cudaStream_t stream = m_stream.get();
    for (;;) {
        BULLETGPU_CUDA_TRY(cudaMemsetAsync(m_count.data(), 0, sizeof(unsigned long long), stream));
        if (walksHalves(query, layout.tree.count[0])) {
            launchPerItem(stream, 2 * static_cast<std::uint64_t>(layout.tree.count[0]),
                          detail::traverseChainSphereHalves, m_nodes.data(), m_boxes.data(), layout.tree,
                          m_sphereChain.data(), m_chainStart.data(), query, m_keys.data(),
                          static_cast<unsigned long long>(m_keys.capacity()), m_count.data());
        } else {
            launchPerItem(stream, layout.tree.count[0], detail::traverseChainSpheres, m_nodes.data(), m_boxes.data(),
                          layout.tree, m_sphereChain.data(), m_chainStart.data(), query, m_keys.data(),
                          static_cast<unsigned long long>(m_keys.capacity()), m_count.data());
        }
        m_hostCount.reserve(1, stream);
        BULLETGPU_CUDA_TRY(cudaMemcpyAsync(m_hostCount.data(), m_count.data(), sizeof(unsigned long long),
                                           cudaMemcpyDeviceToHost, stream));
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
        const std::uint64_t pairs = *m_hostCount.data();
        if (pairs <= m_keys.capacity()) return pairs;
        m_keys.reserve(pairs, stream);
    }
}

std::uint64_t ChainSolverCuda::traverseListed(const ChainLayout& layout, const std::uint32_t* spheres,
                                              std::uint32_t count, const ChainQuery& query) {
    const cudaStream_t stream = m_stream.get();
    const std::uint32_t leaves = layout.tree.count[0];
    if (m_listed.reserve(leaves, stream))
        BULLETGPU_CUDA_TRY(cudaMemsetAsync(m_listed.data(), 0, m_listed.capacity(), stream));
    m_listedSpheres.reserve(count, stream);
    BULLETGPU_CUDA_TRY(cudaMemcpyAsync(m_listedSpheres.data(), spheres, std::size_t{count} * sizeof(std::uint32_t),
                                       cudaMemcpyHostToDevice, stream));
    launchPerItem(stream, count, detail::markListedChainSpheres, m_listedSpheres.data(), std::uint64_t{count},
                  m_listed.data());
    std::uint64_t pairs = 0;
    for (;;) {
        BULLETGPU_CUDA_TRY(cudaMemsetAsync(m_count.data(), 0, sizeof(unsigned long long), stream));
        launchPerItem(stream, count, detail::traverseListedChainSpheres, m_nodes.data(), m_boxes.data(), layout.tree,
                      m_sphereChain.data(), m_chainStart.data(), query, m_listedSpheres.data(), std::uint64_t{count},
                      m_listed.data(), m_keys.data(), static_cast<unsigned long long>(m_keys.capacity()),
                      m_count.data());
        m_hostCount.reserve(1, stream);
        BULLETGPU_CUDA_TRY(cudaMemcpyAsync(m_hostCount.data(), m_count.data(), sizeof(unsigned long long),
                                           cudaMemcpyDeviceToHost, stream));
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
        pairs = *m_hostCount.data();
        if (pairs <= m_keys.capacity()) break;
        m_keys.reserve(pairs, stream);
    }
    // Clearing the marks again costs one byte per listed sphere.
    launchPerItem(stream, count, detail::clearListedChainSpheres, m_listedSpheres.data(), std::uint64_t{count},
                  m_listed.data());
    return pairs;
}

void ChainSolverCuda::writeContacts(const ChainLayout& layout, std::uint64_t pairs,
                                    std::vector<ChainContact>& contacts) {
    const cudaStream_t stream = m_stream.get();
    contacts.resize(pairs);
    if (pairs == 0) return;
    m_sortedKeys.reserve(pairs, stream);
    const int endBit = 32 + bitsBelow(layout.tree.count[0]);
    std::size_t scratchBytes = 0;
    BULLETGPU_CUDA_TRY(cub::DeviceRadixSort::SortKeys(nullptr, scratchBytes, m_keys.data(), m_sortedKeys.data(),
                                                      static_cast<std::int64_t>(pairs), 0, endBit, stream));
    m_sortScratch.reserve(scratchBytes, stream);
    BULLETGPU_CUDA_TRY(cub::DeviceRadixSort::SortKeys(m_sortScratch.data(), scratchBytes, m_keys.data(),
                                                      m_sortedKeys.data(), static_cast<std::int64_t>(pairs), 0, endBit,
                                                      stream));
    m_contacts.reserve(pairs, stream);
    launchPerItem(stream, pairs, detail::writeChainContacts, m_nodes.data(), m_sphereChain.data(), m_chainStart.data(),
                  m_sortedKeys.data(), pairs, m_contacts.data());
    BULLETGPU_CUDA_TRY(cudaMemcpyAsync(contacts.data(), m_contacts.data(), pairs * sizeof(ChainContact),
                                       cudaMemcpyDeviceToHost, stream));
    BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
}

void ChainSolverCuda::refitTimed(ChainLayout& layout, ChainStats& stats) {
    const Clock::time_point start = Clock::now();
    stats.refitted = uploadAndRefit(layout);
    layout.movedLeaves.clear(); // Refitted whole.
    layout.wholeMoved = false;
    stats.refitMs = millisecondsSince(start);
}

void ChainSolverCuda::writeContactsTimed(const ChainLayout& layout, std::uint64_t pairs,
                                         std::vector<ChainContact>& contacts, ChainStats& stats) {
    const Clock::time_point start = Clock::now();
    writeContacts(layout, pairs, contacts);
    stats.contactMs = millisecondsSince(start);
}

void ChainSolverCuda::findContacts(ChainLayout& layout, const ChainQuery& query, std::vector<ChainContact>& contacts,
                                   ChainStats& stats) {
    const DeviceScope scope(m_device);
    if (layout.tree.count[0] == 0) {
        contacts.clear();
        return;
    }
    refitTimed(layout, stats);
    const Clock::time_point start = Clock::now();
    const std::uint64_t pairs = traverse(layout, query);
    stats.traverseMs = millisecondsSince(start);
    writeContactsTimed(layout, pairs, contacts, stats);
}

void ChainSolverCuda::findContactsOf(ChainLayout& layout, const std::uint32_t* spheres, std::uint32_t count,
                                     const ChainQuery& query, std::vector<ChainContact>& contacts, ChainStats& stats) {
    const DeviceScope scope(m_device);
    refitTimed(layout, stats);
    const Clock::time_point start = Clock::now();
    const std::uint64_t pairs = traverseListed(layout, spheres, count, query);
    stats.traverseMs = millisecondsSince(start);
    writeContactsTimed(layout, pairs, contacts, stats);
}

} // namespace

std::unique_ptr<detail::ChainSolver> detail::createCudaChainSolver(int device) {
    return std::make_unique<ChainSolverCuda>(device);
}

} // namespace bulletgpu
