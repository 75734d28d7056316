// SPDX-License-Identifier: Zlib
// SphereChainSet and its CPU solver: the level-by-level refit and the per-sphere traversal on
// OpenMP threads, with per-chunk pair lists that are concatenated in order (deterministic).
#include "kernels/chain/sphere_chain.h"
#include "kernels/common/stopwatch.h"

#include "kernels/common/cuda_device.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

namespace bulletgpu {
namespace {



/// Appends the pair key (i << 32 | j) of every leaf j the traversal of sphere i reports.
struct PairAppender {
    std::vector<std::uint64_t>& pairs;
    std::uint64_t first;

    void operator()(std::uint32_t leaf) { pairs.push_back(first << 32 | leaf); }
};

/// The CPU backend of SphereChainSet.
class ChainSolverCpu final : public detail::ChainSolver {
public:
    explicit ChainSolverCpu(int threads) : m_threads(threads > 0 ? threads : omp_get_max_threads()) {}

    void findContacts(ChainLayout& layout, const ChainQuery& query, std::vector<ChainContact>& contacts,
                      ChainStats& stats) override;

    std::string description() const override {
        return "CPU backend, " + std::to_string(m_threads) + " OpenMP thread" + (m_threads == 1 ? "" : "s");
    }

private:
    /// Leaves handled by one task of the traversal; its pairs form one list.
    static constexpr std::int64_t cChunkLeaves = 256;

    /// Computes every inner node from the level below, one level after another.
    void refit(ChainLayout& layout) const;
    /// Fills m_chunkPairs with the sorted pair keys of each chunk of leaves.
    void traverse(const ChainLayout& layout, const ChainQuery& query);
    /// Turns the chunks' pair keys into contacts, in chunk order.
    void writeContacts(const ChainLayout& layout, std::vector<ChainContact>& contacts);

    int m_threads;
    std::uint64_t m_fittedTopology = ~0ull;
    std::uint64_t m_fittedPositions = ~0ull;
    std::vector<std::vector<std::uint64_t>> m_chunkPairs;
    std::vector<std::uint64_t> m_chunkOffset;
};

void ChainSolverCpu::refit(ChainLayout& layout) const {
    ChainSphere* nodes = layout.nodes.data();
    const ChainLevels& tree = layout.tree;
#pragma omp parallel num_threads(m_threads)
    for (int level = 1; level < tree.levels; ++level) {
        const std::int64_t count = tree.count[level];
        ChainSphere* out = nodes + tree.offset[level];
#pragma omp for schedule(static)
        for (std::int64_t k = 0; k < count; ++k) {
            out[k] = parentNode(nodes, tree, level, static_cast<std::uint32_t>(k));
        }
    }
}

void ChainSolverCpu::traverse(const ChainLayout& layout, const ChainQuery& query) {
    const std::int64_t total = layout.tree.count[0];
    const std::int64_t chunks = (total + cChunkLeaves - 1) / cChunkLeaves;
    if (m_chunkPairs.size() < static_cast<std::size_t>(chunks)) m_chunkPairs.resize(static_cast<std::size_t>(chunks));
    const ChainSphere* nodes = layout.nodes.data();
    const std::uint32_t* sphereChain = layout.sphereChain.data();
    const std::uint32_t* chainStart = layout.chainStart.data();
#pragma omp parallel for num_threads(m_threads) schedule(dynamic, 1)
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
        std::vector<std::uint64_t>& pairs = m_chunkPairs[static_cast<std::size_t>(chunk)];
        pairs.clear();
        const std::int64_t end = std::min(total, (chunk + 1) * cChunkLeaves);
        for (std::int64_t i = chunk * cChunkLeaves; i < end; ++i) {
            const auto leaf = static_cast<std::uint32_t>(i);
            const ChainCandidates range = candidatesOf(leaf, chainStart[sphereChain[leaf] + 1],
                                                       static_cast<std::uint32_t>(total), query);
            PairAppender append{pairs, leaf};
            visitTouchingLeaves(nodes, layout.tree, nodes[leaf], range, append);
        }
    }
}

void ChainSolverCpu::writeContacts(const ChainLayout& layout, std::vector<ChainContact>& contacts) {
    const std::int64_t chunks = (static_cast<std::int64_t>(layout.tree.count[0]) + cChunkLeaves - 1) / cChunkLeaves;
    m_chunkOffset.resize(static_cast<std::size_t>(chunks) + 1);
    m_chunkOffset[0] = 0;
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
        m_chunkOffset[chunk + 1] = m_chunkOffset[chunk] + m_chunkPairs[chunk].size();
    }
    contacts.resize(m_chunkOffset[chunks]);
    const ChainSphere* leaves = layout.nodes.data();
#pragma omp parallel for num_threads(m_threads) schedule(dynamic, 4)
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
        ChainContact* out = contacts.data() + m_chunkOffset[chunk];
        for (const std::uint64_t key : m_chunkPairs[chunk]) {
            *out++ = makeContact(leaves, layout.sphereChain.data(), layout.chainStart.data(),
                                 static_cast<std::uint32_t>(key >> 32), static_cast<std::uint32_t>(key));
        }
    }
}

void ChainSolverCpu::findContacts(ChainLayout& layout, const ChainQuery& query, std::vector<ChainContact>& contacts,
                                  ChainStats& stats) {
    Clock::time_point start = Clock::now();
    stats.refitted = layout.topologyRevision != m_fittedTopology || layout.positionsRevision != m_fittedPositions;
    if (stats.refitted) {
        refit(layout);
        m_fittedTopology = layout.topologyRevision;
        m_fittedPositions = layout.positionsRevision;
    }
    stats.refitMs = millisecondsSince(start);
    start = Clock::now();
    traverse(layout, query);
    stats.traverseMs = millisecondsSince(start);
    start = Clock::now();
    writeContacts(layout, contacts);
    stats.contactMs = millisecondsSince(start);
}

} // namespace

std::unique_ptr<detail::ChainSolver> detail::createCpuChainSolver(int threads) {
    return std::make_unique<ChainSolverCpu>(threads);
}

SphereChainSet::SphereChainSet(Backend backend, int threadsOrDevice) {
    if (backend == Backend::Auto) backend = probeCudaDevice(0).usable ? Backend::Cuda : Backend::Cpu;
    m_backend = backend;
    m_solver = backend == Backend::Cuda ? detail::createCudaChainSolver(threadsOrDevice)
                                        : detail::createCpuChainSolver(threadsOrDevice);
    clear();
}

SphereChainSet::~SphereChainSet() = default;

void SphereChainSet::clear() {
    m_layout.nodes.clear();
    m_layout.sphereChain.clear();
    m_layout.chainStart.assign(1, 0);
    ++m_layout.topologyRevision;
    ++m_layout.positionsRevision;
    layOutLevels();
}

std::uint32_t SphereChainSet::addChain(const float* centres, const float* radii, std::uint32_t count) {
    const std::uint64_t first = sphereCount();
    if (first + count >= (1ull << 31)) throw std::invalid_argument("bulletgpu: a SphereChainSet holds under 2^31 spheres");
    if (count > 0 && (centres == nullptr || radii == nullptr)) {
        throw std::invalid_argument("bulletgpu: addChain needs centres and radii");
    }
    const auto chain = chainCount();
    writeLeaves(static_cast<std::uint32_t>(first), centres, radii, count);
    m_layout.sphereChain.resize(first + count, chain);
    m_layout.chainStart.push_back(static_cast<std::uint32_t>(first + count));
    ++m_layout.topologyRevision;
    ++m_layout.positionsRevision;
    layOutLevels();
    return chain;
}

void SphereChainSet::setPositions(std::uint32_t chain, const float* centres, const float* radii) {
    if (chain >= chainCount()) throw std::invalid_argument("bulletgpu: setPositions of an unknown chain");
    const std::uint32_t first = m_layout.chainStart[chain];
    const std::uint32_t count = m_layout.chainStart[chain + 1] - first;
    if (count > 0 && centres == nullptr) throw std::invalid_argument("bulletgpu: setPositions needs centres");
    writeLeaves(first, centres, radii, count);
    ++m_layout.positionsRevision;
}

void SphereChainSet::writeLeaves(std::uint32_t first, const float* centres, const float* radii, std::uint32_t count) {
    constexpr float cLimit = 1e18f;
    for (std::uint32_t s = 0; s < 3 * count; ++s) {
        if (!(std::fabs(centres[s]) < cLimit)) throw std::invalid_argument("bulletgpu: centres must lie below 1e18");
    }
    for (std::uint32_t s = 0; radii != nullptr && s < count; ++s) {
        if (!(radii[s] >= 0 && radii[s] < cLimit)) throw std::invalid_argument("bulletgpu: radii must be in [0, 1e18)");
    }
    if (m_layout.nodes.size() < static_cast<std::size_t>(first) + count) m_layout.nodes.resize(first + count);
    for (std::uint32_t s = 0; s < count; ++s) {
        ChainSphere& leaf = m_layout.nodes[first + s];
        leaf = ChainSphere{centres[3 * s], centres[3 * s + 1], centres[3 * s + 2], radii != nullptr ? radii[s] : leaf.r};
    }
}

void SphereChainSet::layOutLevels() {
    ChainLevels& tree = m_layout.tree;
    tree = ChainLevels{};
    std::uint32_t count = sphereCount();
    std::uint64_t offset = 0;
    while (count > 0) {
        tree.count[tree.levels] = count;
        tree.offset[tree.levels] = static_cast<std::uint32_t>(offset);
        ++tree.levels;
        offset += count;
        if (count == 1) break;
        count = (count + 1) / 2;
    }
    m_layout.nodes.resize(offset);
}

void SphereChainSet::findContacts(const ChainQuery& query, std::vector<ChainContact>& contacts) {
    m_stats = ChainStats{};
    m_stats.spheres = sphereCount();
    m_stats.chains = chainCount();
    m_solver->findContacts(m_layout, query, contacts, m_stats);
    m_stats.contacts = contacts.size();
}

} // namespace bulletgpu
