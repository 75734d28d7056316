// SPDX-License-Identifier: Zlib
// SphereChainSet and its CPU solver: the level-by-level refit, and the simultaneous descent of
// the hierarchy against itself on OpenMP threads (steps shared out dynamically) or, when the
// query asks for it, one walk per sphere; the pair keys are sorted so the contacts come out in
// one deterministic order.
#include "kernels/chain/sphere_chain.h"
#include "kernels/chain/chain_descent.h"
#include "kernels/chain/chain_leaf_tiles.h"
#include "kernels/common/cache_line.h"
#include "kernels/common/lane_mask.h"
#include "kernels/common/stopwatch.h"
#include "kernels/common/thread_buffers.h"

#include "kernels/common/cuda_device.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

namespace bulletgpu {
namespace {

/// Tests the leaves' pairs of two buckets of the descent (or of one, when a == b) and appends
/// the keys (i << 32 | j) of the contacts: each leaf of a whose box meets b's box is tested in
/// float against b's whole tile at once, then the lanes its candidate range allows that pass
/// are confirmed in double.
struct BucketTester {
    const ChainTreeView& tree;
    const ChainFilter& filter;
    const ChainLeafTile* tiles;
    std::vector<std::uint64_t>& pairs;

    void operator()(ChainNode a, ChainNode b) const {
        const std::uint32_t endA = endLeafOf(tree.levels, a);
        const std::uint32_t firstB = firstLeafOf(b);
        const std::uint32_t endB = endLeafOf(tree.levels, b);
        const std::uint32_t base = firstB - firstB % cChainTileLanes;
        const ChainLeafTile& tile = tiles[firstB / cChainTileLanes];
        const FloatBox& boxB = tree.boxes[tree.indexOf(b)];
        for (std::uint32_t i = firstLeafOf(a); i < endA; ++i) {
            if (!boxesOverlap(tree.boxes[i], boxB)) continue;
            const ChainCandidates range = filter.candidates(i);
            const std::uint32_t first = std::max(range.begin, firstB);
            const std::uint32_t last = std::min(range.end, endB);
            if (first >= last) continue;
            // Lanes [first - base, last - base): base <= firstB <= first < last <= endB <= base + lanes.
            const std::uint32_t allowed = ((1u << (last - base)) - 1u) & ~((1u << (first - base)) - 1u);
            for (std::uint32_t lanes = tileMayTouch(tile, tree.spheres[i]) & allowed; lanes != 0; lanes &= lanes - 1) {
                const std::uint32_t j = base + lowestLane(lanes);
                if (spheresTouchExact(tree.spheres[i], tree.spheres[j])) pairs.push_back(std::uint64_t{i} << 32 | j);
            }
        }
    }
};

/// One thread's pair keys and descent stack.
struct ThreadScratch {
    std::vector<std::uint64_t> pairs; ///< Keys (i << 32 | j) of the contacts it found.
    std::vector<ChainNodePair> stack; ///< Steps of the descent still to expand.
};

/// The CPU backend of SphereChainSet.
class ChainSolverCpu final : public detail::ChainSolver {
public:
    explicit ChainSolverCpu(int threads) : m_threads(threads > 0 ? threads : omp_get_max_threads()) {
        m_scratch.resize(static_cast<std::size_t>(m_threads));
    }

    void findContacts(ChainLayout& layout, const ChainQuery& query, std::vector<ChainContact>& contacts,
                      ChainStats& stats) override;
    void findContactsOf(ChainLayout& layout, const std::uint32_t* spheres, std::uint32_t count, const ChainQuery& query,
                        std::vector<ChainContact>& contacts, ChainStats& stats) override;

    std::string description() const override {
        return "CPU backend, " + std::to_string(m_threads) + " OpenMP thread" + (m_threads == 1 ? "" : "s");
    }

private:
    /// Steps of the descent expanded breadth-first before the threads share them out.
    static constexpr std::size_t cTasksPerThread = 64;
    /// A sphere's partners are sorted by insertion up to this many, by std::sort beyond.
    static constexpr std::ptrdiff_t cInsertionSortMax = 16;

    /// Computes the leaves' boxes and tiles, then every inner node from the level below, one
    /// level after another.
    void refit(ChainLayout& layout);
    /// Expands the descent from the root until there are enough steps to share out, into
    /// m_tasks; contacts met on the way go to thread 0's list.
    void seedTasks(const ChainTreeView& tree, const ChainFilter& filter);
    /// Runs the descent on every thread, then gathers the pair keys into m_keys, sorted.
    void descend(const ChainLayout& layout, const ChainQuery& query);
    /// Walks the hierarchy once per sphere (the paper's GPU2) on every thread, then gathers the
    /// pair keys into m_keys, sorted.
    void walkPerSphere(const ChainLayout& layout, const ChainQuery& query);
    /// Walks the hierarchy once per listed sphere (visitPairsOfListed) on every thread, then
    /// gathers the pair keys into m_keys, sorted.
    void walkListed(const ChainLayout& layout, const std::uint32_t* spheres, std::uint32_t count,
                    const ChainQuery& query);
    /// Refits the hierarchy when the layout changed since the last refit (only the moved
    /// leaves' paths when moveSpheres listed every change); returns whether it did.
    bool refitIfMoved(ChainLayout& layout);
    /// Recomputes the boxes and tiles of layout.movedLeaves and every node above them.
    void refitMoved(ChainLayout& layout);
    /// Gathers the threads' pair keys into m_keys sorted: a counting sort on the first sphere, then
    /// each sphere's few partners sorted.
    void gatherSorted(std::uint32_t leaves);
    /// Turns the sorted pair keys into contacts.
    void writeContacts(const ChainLayout& layout, std::vector<ChainContact>& contacts) const;

    int m_threads;
    std::uint64_t m_fittedTopology = ~0ull;
    std::uint64_t m_fittedPositions = ~0ull;
    std::vector<ChainLeafTile> m_tiles;
    std::vector<ChainNodePair> m_tasks, m_nextTasks;
    std::vector<CacheLinePadded<ThreadScratch>> m_scratch;
    std::vector<std::uint64_t> m_slots;         ///< Per sphere and thread: its keys' count, then next slot.
    std::vector<std::uint64_t> m_partnersStart; ///< Per sphere: its first key in m_keys, then the total.
    std::vector<std::uint64_t> m_keys;
    std::size_t m_keyCount = 0;
    std::vector<std::uint8_t> m_listed; ///< Per sphere: whether findContactsOf lists it (all 0 between calls).
    std::vector<std::uint32_t> m_moved; ///< refitMoved's nodes of one level, sorted.
};

void ChainSolverCpu::refit(ChainLayout& layout) {
    ChainSphere* nodes = layout.nodes.data();
    m_tiles.resize((layout.tree.count[0] + cChainTileLanes - 1) / cChainTileLanes);
    FloatBox* boxes = layout.boxes.data();
    const ChainLevels& tree = layout.tree;
#pragma omp parallel num_threads(m_threads)
    {
        const auto leaves = static_cast<std::int64_t>(tree.levels > 0 ? tree.count[0] : 0);
#pragma omp for schedule(static)
        for (std::int64_t i = 0; i < leaves; ++i) boxes[i] = boxAroundSphere(nodes[i]);
        const std::int64_t tiles = (leaves + cChainTileLanes - 1) / cChainTileLanes;
#pragma omp for schedule(static)
        for (std::int64_t t = 0; t < tiles; ++t) {
            fillLeafTile(nodes, static_cast<std::uint32_t>(leaves), static_cast<std::uint32_t>(t),
                         m_tiles[static_cast<std::size_t>(t)]);
        }
        for (int level = 1; level < tree.levels; ++level) {
            const std::int64_t count = tree.count[level];
#pragma omp for schedule(static)
            for (std::int64_t k = 0; k < count; ++k) {
                const auto node = static_cast<std::uint32_t>(k);
                nodes[tree.offset[level] + node] = parentNode(nodes, tree, level, node);
                boxes[tree.offset[level] + node] = parentBox(boxes, tree, level, node);
            }
        }
    }
}

void ChainSolverCpu::seedTasks(const ChainTreeView& tree, const ChainFilter& filter) {
    m_tasks.clear();
    if (tree.levels.levels == 0) return;
    const auto top = static_cast<std::uint32_t>(tree.levels.levels - 1);
    m_tasks.push_back(ChainNodePair{ChainNode{0, top}, ChainNode{0, top}});
    const BucketTester testBuckets{tree, filter, m_tiles.data(), m_scratch[0].value.pairs};
    const auto push = [&](const ChainNodePair& step) { m_nextTasks.push_back(step); };
    const std::size_t wanted = cTasksPerThread * static_cast<std::size_t>(m_threads);
    while (!m_tasks.empty() && m_tasks.size() < wanted) {
        m_nextTasks.clear();
        for (const ChainNodePair& step : m_tasks) expandDescent(tree, filter, step, push, testBuckets);
        std::swap(m_tasks, m_nextTasks);
    }
}

void ChainSolverCpu::walkPerSphere(const ChainLayout& layout, const ChainQuery& query) {
    const ChainFilter filter{layout.sphereChain.data(), layout.chainStart.data(), layout.tree.count[0], query};
    const auto leaves = static_cast<std::int64_t>(layout.tree.count[0]);
    for (CacheLinePadded<ThreadScratch>& scratch : m_scratch) scratch.value.pairs.clear();
#pragma omp parallel num_threads(m_threads)
    {
        std::vector<std::uint64_t>& pairs = m_scratch[static_cast<std::size_t>(omp_get_thread_num())].value.pairs;
#pragma omp for schedule(dynamic, 256)
        for (std::int64_t i = 0; i < leaves; ++i) {
            const auto leaf = static_cast<std::uint32_t>(i);
            const auto append = [&](std::uint32_t j) { pairs.push_back(std::uint64_t{leaf} << 32 | j); };
            visitTouchingLeaves(layout.nodes.data(), layout.boxes.data(), layout.tree, leaf, filter.candidates(leaf),
                                append);
        }
    }
    gatherSorted(layout.tree.count[0]);
}

void ChainSolverCpu::walkListed(const ChainLayout& layout, const std::uint32_t* spheres, std::uint32_t count,
                                const ChainQuery& query) {
    m_listed.resize(layout.tree.count[0], 0);
    for (std::uint32_t k = 0; k < count; ++k) m_listed[spheres[k]] = 1;
    for (CacheLinePadded<ThreadScratch>& scratch : m_scratch) scratch.value.pairs.clear();
    const std::uint8_t* listed = m_listed.data();
    const auto isListed = [listed](std::uint32_t j) { return listed[j] != 0; };
#pragma omp parallel num_threads(m_threads)
    {
        std::vector<std::uint64_t>& pairs = m_scratch[static_cast<std::size_t>(omp_get_thread_num())].value.pairs;
        const auto report = [&](std::uint32_t i, std::uint32_t j) { pairs.push_back(std::uint64_t{i} << 32 | j); };
#pragma omp for schedule(dynamic, 64)
        for (std::int64_t k = 0; k < static_cast<std::int64_t>(count); ++k) {
            visitPairsOfListed(layout.nodes.data(), layout.boxes.data(), layout.tree, layout.sphereChain.data(),
                               layout.chainStart.data(), query, spheres[k], isListed, report);
        }
    }
    for (std::uint32_t k = 0; k < count; ++k) m_listed[spheres[k]] = 0;
    gatherSorted(layout.tree.count[0]);
}

void ChainSolverCpu::descend(const ChainLayout& layout, const ChainQuery& query) {
    const ChainFilter filter{layout.sphereChain.data(), layout.chainStart.data(), layout.tree.count[0], query};
    for (CacheLinePadded<ThreadScratch>& scratch : m_scratch) scratch.value.pairs.clear();
    const ChainTreeView tree{layout.nodes.data(), layout.boxes.data(), layout.tree};
    seedTasks(tree, filter);
    const auto tasks = static_cast<std::int64_t>(m_tasks.size());
#pragma omp parallel num_threads(m_threads)
    {
        const auto thread = static_cast<std::size_t>(omp_get_thread_num());
        std::vector<std::uint64_t>& pairs = m_scratch[thread].value.pairs;
        std::vector<ChainNodePair>& stack = m_scratch[thread].value.stack;
        const BucketTester testBuckets{tree, filter, m_tiles.data(), pairs};
        const auto push = [&](const ChainNodePair& step) { stack.push_back(step); };
#pragma omp for schedule(dynamic, 1)
        for (std::int64_t task = 0; task < tasks; ++task) {
            stack.assign(1, m_tasks[static_cast<std::size_t>(task)]);
            while (!stack.empty()) {
                const ChainNodePair step = stack.back();
                stack.pop_back();
                expandDescent(tree, filter, step, push, testBuckets);
            }
        }
    }
    gatherSorted(layout.tree.count[0]);
}

void ChainSolverCpu::gatherSorted(std::uint32_t leaves) {
    const auto threads = static_cast<std::size_t>(m_threads);
    m_slots.assign(static_cast<std::size_t>(leaves) * threads, 0);
    m_partnersStart.resize(static_cast<std::size_t>(leaves) + 1);
    // Each thread's list is counted and scattered whole by one thread of this team, which may be
    // smaller than the team that filled the lists.
#pragma omp parallel num_threads(m_threads)
    {
        for (auto thread = static_cast<std::size_t>(omp_get_thread_num()); thread < threads;
             thread += static_cast<std::size_t>(omp_get_num_threads())) {
            for (const std::uint64_t key : m_scratch[thread].value.pairs) ++m_slots[(key >> 32) * threads + thread];
        }
    }
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < leaves; ++i) {
        m_partnersStart[i] = total;
        for (std::size_t t = 0; t < threads; ++t) {
            const std::uint64_t count = m_slots[i * threads + t];
            m_slots[i * threads + t] = total;
            total += count;
        }
    }
    m_partnersStart[leaves] = total;
    if (m_keys.size() < total) m_keys.resize(total);
    m_keyCount = total;
    // Work goes to whichever thread is free (thread_buffers.h).
    shareGatheringCapacity(
        m_scratch, threads, [](auto& scratch) -> std::vector<std::uint64_t>& { return scratch.value.pairs; },
        static_cast<std::size_t>(total));
    shareCapacity(m_scratch, threads, [](auto& scratch) -> std::vector<ChainNodePair>& { return scratch.value.stack; });
#pragma omp parallel num_threads(m_threads)
    {
        for (auto thread = static_cast<std::size_t>(omp_get_thread_num()); thread < threads;
             thread += static_cast<std::size_t>(omp_get_num_threads())) {
            for (const std::uint64_t key : m_scratch[thread].value.pairs)
                m_keys[m_slots[(key >> 32) * threads + thread]++] = key;
        }
#pragma omp barrier
#pragma omp for schedule(dynamic, 4096)
        for (std::int64_t i = 0; i < static_cast<std::int64_t>(leaves); ++i) {
            const auto first = m_keys.begin() + static_cast<std::ptrdiff_t>(m_partnersStart[i]);
            const auto last = m_keys.begin() + static_cast<std::ptrdiff_t>(m_partnersStart[i + 1]);
            if (last - first > cInsertionSortMax) {
                std::sort(first, last);
                continue;
            }
            for (auto key = first + 1; key < last; ++key) {
                const std::uint64_t value = *key;
                auto hole = key;
                for (; hole > first && *(hole - 1) > value; --hole) *hole = *(hole - 1);
                *hole = value;
            }
        }
    }
}

void ChainSolverCpu::writeContacts(const ChainLayout& layout, std::vector<ChainContact>& contacts) const {
    contacts.resize(m_keyCount);
    const ChainSphere* leaves = layout.nodes.data();
    const auto count = static_cast<std::int64_t>(m_keyCount);
#pragma omp parallel for num_threads(m_threads) schedule(static)
    for (std::int64_t p = 0; p < count; ++p) {
        const std::uint64_t key = m_keys[static_cast<std::size_t>(p)];
        contacts[static_cast<std::size_t>(p)] =
            makeContact(leaves, layout.sphereChain.data(), layout.chainStart.data(),
                        static_cast<std::uint32_t>(key >> 32), static_cast<std::uint32_t>(key));
    }
}

void ChainSolverCpu::refitMoved(ChainLayout& layout) {
    ChainSphere* nodes = layout.nodes.data();
    FloatBox* boxes = layout.boxes.data();
    const ChainLevels& tree = layout.tree;
    m_moved.assign(layout.movedLeaves.begin(), layout.movedLeaves.end());
    std::sort(m_moved.begin(), m_moved.end());
    m_moved.erase(std::unique(m_moved.begin(), m_moved.end()), m_moved.end());
    std::uint32_t tile = ~0u;
    for (const std::uint32_t leaf : m_moved) {
        boxes[leaf] = boxAroundSphere(nodes[leaf]);
        if (leaf / cChainTileLanes == tile) continue;
        tile = leaf / cChainTileLanes;
        fillLeafTile(nodes, tree.count[0], tile, m_tiles[tile]);
    }
    for (int level = 1; level < tree.levels; ++level) {
        std::size_t parents = 0;
        for (const std::uint32_t child : m_moved)
            if (parents == 0 || m_moved[parents - 1] != child >> 1) m_moved[parents++] = child >> 1;
        m_moved.resize(parents);
        for (const std::uint32_t node : m_moved) {
            nodes[tree.offset[level] + node] = parentNode(nodes, tree, level, node);
            boxes[tree.offset[level] + node] = parentBox(boxes, tree, level, node);
        }
    }
}

bool ChainSolverCpu::refitIfMoved(ChainLayout& layout) {
    if (layout.topologyRevision == m_fittedTopology && layout.positionsRevision == m_fittedPositions) return false;
    if (layout.topologyRevision == m_fittedTopology && !layout.wholeMoved)
        refitMoved(layout);
    else
        refit(layout);
    layout.movedLeaves.clear();
    layout.wholeMoved = false;
    m_fittedTopology = layout.topologyRevision;
    m_fittedPositions = layout.positionsRevision;
    return true;
}

void ChainSolverCpu::findContactsOf(ChainLayout& layout, const std::uint32_t* spheres, std::uint32_t count,
                                    const ChainQuery& query, std::vector<ChainContact>& contacts, ChainStats& stats) {
    Clock::time_point start = Clock::now();
    stats.refitted = refitIfMoved(layout);
    stats.refitMs = millisecondsSince(start);
    start = Clock::now();
    walkListed(layout, spheres, count, query);
    stats.traverseMs = millisecondsSince(start);
    start = Clock::now();
    writeContacts(layout, contacts);
    stats.contactMs = millisecondsSince(start);
}

void ChainSolverCpu::findContacts(ChainLayout& layout, const ChainQuery& query, std::vector<ChainContact>& contacts,
                                  ChainStats& stats) {
    Clock::time_point start = Clock::now();
    stats.refitted = refitIfMoved(layout);
    stats.refitMs = millisecondsSince(start);
    start = Clock::now();
    if (query.traversal == ChainTraversal::Default) {
        descend(layout, query);
    } else {
        walkPerSphere(layout, query);
    }
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
    m_layout.markWholeMoved();
    ++m_layout.topologyRevision;
    ++m_layout.positionsRevision;
    layOutLevels();
}

std::uint32_t SphereChainSet::addChain(const float* centres, const float* radii, std::uint32_t count) {
    const std::uint64_t first = sphereCount();
    if (first + count >= (1ull << 31))
        throw std::invalid_argument("bulletgpu: a SphereChainSet holds under 2^31 spheres");
    if (count > 0 && (centres == nullptr || radii == nullptr)) {
        throw std::invalid_argument("bulletgpu: addChain needs centres and radii");
    }
    const auto chain = chainCount();
    writeLeaves(static_cast<std::uint32_t>(first), centres, radii, count);
    m_layout.sphereChain.resize(first + count, chain);
    m_layout.chainStart.push_back(static_cast<std::uint32_t>(first + count));
    m_layout.markWholeMoved();
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
    m_layout.markWholeMoved();
    ++m_layout.positionsRevision;
}

void SphereChainSet::moveSpheres(const std::uint32_t* spheres, std::uint32_t count, const float* centres) {
    constexpr float cLimit = 1e18f;
    for (std::uint32_t k = 0; k < count; ++k) {
        if (spheres[k] >= sphereCount()) throw std::invalid_argument("bulletgpu: moveSpheres of an unknown sphere");
        for (int a = 0; a < 3; ++a)
            if (!(std::fabs(centres[3 * k + a]) < cLimit))
                throw std::invalid_argument("bulletgpu: centres must lie below 1e18");
    }
    for (std::uint32_t k = 0; k < count; ++k) {
        ChainSphere& leaf = m_layout.nodes[spheres[k]];
        leaf = ChainSphere{centres[3 * k], centres[3 * k + 1], centres[3 * k + 2], leaf.r};
    }
    if (!m_layout.wholeMoved) {
        m_layout.movedLeaves.insert(m_layout.movedLeaves.end(), spheres, spheres + count);
        // Beyond a quarter of the leaves a whole refit costs less than the paths.
        if (m_layout.movedLeaves.size() > sphereCount() / 4) m_layout.markWholeMoved();
    }
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
        leaf =
            ChainSphere{centres[3 * s], centres[3 * s + 1], centres[3 * s + 2], radii != nullptr ? radii[s] : leaf.r};
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
    m_layout.boxes.resize(offset);
}

void SphereChainSet::findContacts(const ChainQuery& query, std::vector<ChainContact>& contacts) {
    m_stats = ChainStats{};
    m_stats.spheres = sphereCount();
    m_stats.chains = chainCount();
    m_solver->findContacts(m_layout, query, contacts, m_stats);
    m_stats.contacts = contacts.size();
}

void SphereChainSet::findContactsOf(const std::uint32_t* spheres, std::uint32_t count, const ChainQuery& query,
                                    std::vector<ChainContact>& contacts) {
    for (std::uint32_t k = 0; k < count; ++k) {
        if (spheres[k] >= sphereCount() || (k > 0 && spheres[k] <= spheres[k - 1]))
            throw std::invalid_argument("bulletgpu::SphereChainSet::findContactsOf: the spheres must be strictly "
                                        "increasing global indices below sphereCount()");
    }
    m_stats = ChainStats{};
    m_stats.spheres = sphereCount();
    m_stats.chains = chainCount();
    if (count == 0) {
        contacts.clear();
        return;
    }
    m_solver->findContactsOf(m_layout, spheres, count, query, contacts, m_stats);
    m_stats.contacts = contacts.size();
}

} // namespace bulletgpu
