// SPDX-License-Identifier: Zlib
// The CPU engine of MeshDistance on OpenMP threads: the calling thread walks the test tree depth first; past
// DistanceOptions::serialBounds bounds, the pairs still pending are cut into tasks ordered by
// their lower bounds, and every thread walks tasks depth first, sharing the bound through an
// atomic double.
#include "kernels/narrow/distance/mesh_distance.h"

#include "kernels/narrow/distance/distance_ops.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <omp.h>

namespace bulletgpu {
namespace {

/// No limit on a walk's bounds.
constexpr std::uint64_t cUnlimited = std::numeric_limits<std::uint64_t>::max();

/// Tasks per thread the pending pairs are cut into.
constexpr std::size_t cTasksPerThread = 32;

using NodePair = DistanceNodePair;

/// The best leaf pair one thread found.
struct Candidate {
    double distance = INFINITY;      ///< Its distance.
    std::uint32_t a = cNoNode;       ///< Triangle of A.
    std::uint32_t b = cNoNode;       ///< Triangle of B.
    TriangleDistance closest{};      ///< Its closest points.
    std::uint64_t volumeTests = 0;   ///< Lower bounds this thread computed.
    std::uint64_t triangleTests = 0; ///< Leaf pairs this thread measured.
};

/// The state a query's threads share, and the steps of its walk.
class Walk {
public:
    Walk(const DistanceMeshView& a, const DistanceMeshView& b, double slack) : m_a(a), m_b(b), m_slack(slack) {
        relativeTransform(a.transform, b.transform, m_relative);
    }

    /// The bound below which pairs still matter.
    double best() const { return m_best.load(std::memory_order_relaxed); }
    /// True once a meeting pair was found.
    bool stopped() const { return m_stop.load(std::memory_order_relaxed); }

    /// The two child pairs of a pair that is not two leaves (childPairs).
    void children(const NodePair& pair, NodePair* out, Candidate& c) const {
        childPairs(m_a.nodes, m_b.nodes, m_relative, pair, cutoff(), m_slack, out);
        c.volumeTests += 2;
    }

    /// The span of the node children() would split, or -1 for a pair of leaves (or one past the
    /// bound): what cutTasks splits first.
    float splitSize(const NodePair& pair) const {
        if (leaves(pair) || pair.bound > best()) return -1;
        const RssNode& na = m_a.nodes[pair.a];
        const RssNode& nb = m_b.nodes[pair.b];
        return splitsA(na, nb) ? na.span : nb.span;
    }

    /// True when both nodes of the pair are leaves.
    bool leaves(const NodePair& pair) const { return isLeafPair(m_a.nodes, m_b.nodes, pair); }

    /// Measures a leaf pair, keeps it in `c` when it precedes c's, lowers the shared bound, and
    /// stops every thread when the triangles meet.
    void measure(const NodePair& pair, Candidate& c) {
        std::uint32_t ta, tb;
        const TriangleDistance d = leafPairDistance(m_a, m_b, pair, &ta, &tb);
        ++c.triangleTests;
        if (!pairPrecedes(d.distance, ta, tb, c.distance, c.a, c.b)) return;
        c.distance = d.distance;
        c.a = ta;
        c.b = tb;
        c.closest = d;
        double seen = m_best.load(std::memory_order_relaxed);
        while (d.distance < seen && !m_best.compare_exchange_weak(seen, d.distance, std::memory_order_relaxed)) {
        }
        if (d.intersecting) m_stop.store(true, std::memory_order_relaxed);
    }

    /// Walks the pairs on `stack` and below them depth first, the closer child pair first,
    /// until the stack is empty or `c` has computed `maxTests` bounds.
    void walk(std::vector<NodePair>& stack, Candidate& c, std::uint64_t maxTests) {
        while (!stack.empty() && !stopped() && c.volumeTests < maxTests) {
            const NodePair pair = stack.back();
            stack.pop_back();
            if (pair.bound > best()) continue;
            if (leaves(pair)) {
                measure(pair, c);
                continue;
            }
            NodePair child[2];
            children(pair, child, c);
            const int nearer = child[1].bound < child[0].bound ? 1 : 0;
            const double limit = best();
            if (child[1 - nearer].bound <= limit) stack.push_back(child[1 - nearer]);
            if (child[nearer].bound <= limit) stack.push_back(child[nearer]);
        }
    }

private:
    /// The raw bound past which a pair is pruned: the running best plus the allowance.
    double cutoff() const { return best() + m_slack; }

    DistanceMeshView m_a, m_b;
    double m_slack;
    double m_relative[12];
    std::atomic<double> m_best{INFINITY};
    std::atomic<bool> m_stop{false};
};

/// Cuts the pending pairs `tasks` into at least `wanted` pairs (fewer when the trees are
/// small): the pair with the largest node is split until there are enough (so that no task
/// holds most of the work), pairs past the bound dropped; then orders them by bound (ties by
/// nodes, so the order is fixed).
std::vector<NodePair> cutTasks(Walk& walk, std::vector<NodePair> tasks, std::size_t wanted, Candidate& c) {
    while (tasks.size() < wanted && !walk.stopped()) {
        std::size_t largest = tasks.size();
        float size = -1;
        for (std::size_t i = 0; i < tasks.size(); ++i) {
            const float s = walk.splitSize(tasks[i]);
            if (s > size) size = s, largest = i;
        }
        if (largest == tasks.size()) break;
        NodePair child[2];
        walk.children(tasks[largest], child, c);
        tasks[largest] = tasks.back();
        tasks.pop_back();
        for (const NodePair& ch : child) {
            if (ch.bound <= walk.best()) tasks.push_back(ch);
        }
    }
    std::sort(tasks.begin(), tasks.end(), [](const NodePair& x, const NodePair& y) {
        if (x.bound != y.bound) return x.bound < y.bound;
        return x.a != y.a ? x.a < y.a : x.b < y.b;
    });
    return tasks;
}

/// Keeps in `best` whichever of the two candidates precedes (a meeting pair first).
void keepPreceding(Candidate& best, const Candidate& c) {
    const bool meets = c.closest.intersecting && c.a != cNoNode, bestMeets = best.closest.intersecting;
    if ((meets && !bestMeets) ||
        (meets == bestMeets && pairPrecedes(c.distance, c.a, c.b, best.distance, best.a, best.b))) {
        const std::uint64_t volumeTests = best.volumeTests, triangleTests = best.triangleTests;
        best = c;
        best.volumeTests = volumeTests;
        best.triangleTests = triangleTests;
    }
    best.volumeTests += c.volumeTests;
    best.triangleTests += c.triangleTests;
}

} // namespace

DistanceResult detail::cpuMeshDistance(const DistanceQuery& query, const DistanceOptions& options) {
    DistanceResult result;
    const DistanceMesh& ma = *query.a;
    const DistanceMesh& mb = *query.b;
    const DistanceMeshView viewA{ma.positions.data(), ma.indices.data(), ma.tree.nodes().data(), query.transformA};
    const DistanceMeshView viewB{mb.positions.data(), mb.indices.data(), mb.tree.nodes().data(), query.transformB};
    Walk walk(viewA, viewB, query.slack);

    // Depth first on this thread alone: most queries end within options.serialBounds bounds,
    // sooner than other threads would start (on a loaded 2-core machine, waking the second
    // thread and waiting for it at the end cost 13 to 20 ms). The pairs still pending are then
    // cut into tasks for all threads.
    const int threads = std::max(1, options.threads);
    Candidate best;
    std::vector<NodePair> stack{{0, 0, -INFINITY}};
    walk.walk(stack, best, threads == 1 ? cUnlimited : options.serialBounds);
    const std::vector<NodePair> tasks =
        stack.empty() ? stack : cutTasks(walk, stack, cTasksPerThread * static_cast<std::size_t>(threads), best);
    std::vector<Candidate> found(tasks.empty() ? 0 : static_cast<std::size_t>(threads));
    std::atomic<std::size_t> nextTask{0};
    if (!found.empty()) {
#pragma omp parallel num_threads(threads)
        {
            Candidate& mine = found[static_cast<std::size_t>(omp_get_thread_num())];
            std::vector<NodePair> own;
            for (std::size_t i = nextTask++; i < tasks.size(); i = nextTask++) {
                own.assign(1, tasks[i]);
                walk.walk(own, mine, cUnlimited);
            }
        }
    }
    for (const Candidate& c : found) keepPreceding(best, c);

    result.distance = best.distance;
    result.triangleA = best.a;
    result.triangleB = best.b;
    result.intersecting = best.closest.intersecting;
    for (int k = 0; k < 3; ++k) {
        result.pointA[k] = best.closest.a[k];
        result.pointB[k] = best.closest.b[k];
    }
    result.volumeTests = best.volumeTests;
    result.triangleTests = best.triangleTests;
    return result;
}

} // namespace bulletgpu
