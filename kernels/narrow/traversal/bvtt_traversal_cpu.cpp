// SPDX-License-Identifier: Zlib
// BvttTraversal on OpenMP threads: breadth-first expansion into tasks, then one depth-first
// stack per task, per-thread contact lists, and one sort at the end (deterministic).
#include "kernels/narrow/traversal/bvtt_traversal.h"
#include "kernels/common/thread_buffers.h"
#include "kernels/narrow/traversal/bvtt_front_ops.h"

#include <omp.h>

#include <algorithm>

namespace bulletgpu {
namespace {

/// Tasks per thread the expansion aims at, so that dynamic scheduling balances the work.
constexpr std::size_t cTasksPerThread = 64;
/// Breadth-first steps at most (each at least doubles an unfinished test tree's frontier).
constexpr int cMaxExpansionSteps = 24;

/// Sum of a box's extents: the size used to choose which node to descend.
float halfPerimeter(const FloatBox& box) {
    return (box.hi[0] - box.lo[0]) + (box.hi[1] - box.lo[1]) + (box.hi[2] - box.lo[2]);
}

/// Contact order: (meshA, meshB, triangleA, triangleB).
bool contactBefore(const TriangleContact& x, const TriangleContact& y) {
    if (x.meshA != y.meshA) return x.meshA < y.meshA;
    if (x.meshB != y.meshB) return x.meshB < y.meshB;
    if (x.triangleA != y.triangleA) return x.triangleA < y.triangleA;
    return x.triangleB < y.triangleB;
}

} // namespace

bool BvttTraversal::splitTask(const BvttQuery& query, const Task& task, std::vector<Task>& out,
                              BvttCounters& counters) {
    const LbvhNode& nodeA = query.a.nodes[task.a];
    if (query.self && task.a == task.b) {
        // A subtree against itself: both children against themselves and each other.
        if (isLeaf(nodeA)) return true;
        const std::uint32_t left = task.a + 1, right = nodeA.child;
        out.push_back(Task{left, right, task.query});
        out.push_back(Task{right, right, task.query});
        out.push_back(Task{left, left, task.query});
        return true;
    }
    const LbvhNode& nodeB = query.b.nodes[task.b];
    ++counters.boxTests;
    const NarrowObb* obbA = query.a.obbs != nullptr ? query.a.obbs + task.a : nullptr;
    const NarrowObb* obbB = query.b.obbs != nullptr ? query.b.obbs + task.b : nullptr;
    if (!volumesOverlap(nodeA.box, obbA, nodeB.box, obbB)) return true;
    const bool leafA = isLeaf(nodeA), leafB = isLeaf(nodeB);
    if (leafA && leafB) return false;
    const bool descendA = !leafA && (leafB || halfPerimeter(nodeA.box) >= halfPerimeter(nodeB.box));
    if (descendA) {
        out.push_back(Task{nodeA.child, task.b, task.query});
        out.push_back(Task{task.a + 1, task.b, task.query});
    } else {
        out.push_back(Task{task.a, nodeB.child, task.query});
        out.push_back(Task{task.a, task.b + 1, task.query});
    }
    return true;
}

void BvttTraversal::testLeaves(const BvttQuery& query, std::uint32_t a, std::uint32_t b,
                               std::vector<TriangleContact>& out, BvttCounters& counters) {
    if (query.self && shareVertex(query.a.indices, leafTriangle(query.a.nodes[a]), leafTriangle(query.b.nodes[b]))) {
        return;
    }
    ++counters.triangleTests;
    TriangleContact contact;
    if (testCandidateLeaves(query.a.nodes, sourceOf(query.a), query.a.mesh, query.b.nodes, sourceOf(query.b),
                            query.b.mesh, query.self, FrontEntry{a, b}, contact)) {
        out.push_back(contact);
    }
}

void BvttTraversal::traverseTask(const BvttQuery& query, const Task& task, std::vector<Task>& stack,
                                 std::vector<TriangleContact>& out, BvttCounters& counters) const {
    stack.clear();
    stack.push_back(task);
    while (!stack.empty()) {
        const Task top = stack.back();
        stack.pop_back();
        if (!splitTask(query, top, stack, counters)) testLeaves(query, top.a, top.b, out, counters);
    }
}

void BvttTraversal::expandTasks(const BvttQuery* queries, std::uint32_t count, std::size_t target) {
    m_tasks.clear();
    for (std::uint32_t q = 0; q < count; ++q) {
        if (queries[q].a.nodes != nullptr && queries[q].b.nodes != nullptr) m_tasks.push_back(Task{0, 0, q});
    }
    for (int step = 0; step < cMaxExpansionSteps && m_tasks.size() < target; ++step) {
        m_nextTasks.clear();
        bool split = false;
        for (const Task& task : m_tasks) {
            const std::size_t before = m_nextTasks.size();
            if (splitTask(queries[task.query], task, m_nextTasks, m_counters)) {
                split = split || m_nextTasks.size() > before;
            } else {
                m_nextTasks.push_back(task);
            }
        }
        m_tasks.swap(m_nextTasks);
        if (!split) break;
    }
}

void BvttTraversal::run(const BvttQuery* queries, std::uint32_t count, int threads,
                        std::vector<TriangleContact>& contacts) {
    m_counters = BvttCounters{};
    threads = std::max(1, threads);
    expandTasks(queries, count, cTasksPerThread * static_cast<std::size_t>(threads));
    m_counters.tasks = static_cast<std::uint32_t>(m_tasks.size());
    if (m_threadStacks.size() < static_cast<std::size_t>(threads)) {
        m_threadStacks.resize(threads);
        m_threadContacts.resize(threads);
    }
    m_threadCounters.assign(threads, CacheLinePadded<BvttCounters>{});
    const auto tasks = static_cast<std::int64_t>(m_tasks.size());
    const int team = tasks > 1 ? threads : 1;
    for (int t = 0; t < team; ++t) m_threadContacts[t].value.clear();
#pragma omp parallel num_threads(team)
    {
        const int t = omp_get_thread_num();
        std::vector<TriangleContact>& out = m_threadContacts[t].value;
#pragma omp for schedule(dynamic, 1)
        for (std::int64_t i = 0; i < tasks; ++i) {
            const Task& task = m_tasks[i];
            traverseTask(queries[task.query], task, m_threadStacks[t].value, out, m_threadCounters[t].value);
        }
    }
    contacts.clear();
    for (int t = 0; t < team; ++t) {
        contacts.insert(contacts.end(), m_threadContacts[t].value.begin(), m_threadContacts[t].value.end());
        m_counters.boxTests += m_threadCounters[t].value.boxTests;
        m_counters.triangleTests += m_threadCounters[t].value.triangleTests;
    }
    // Tasks go to whichever thread is free (thread_buffers.h).
    const auto owned = static_cast<std::size_t>(threads);
    shareCapacity(m_threadStacks, owned, [](auto& stack) -> std::vector<Task>& { return stack.value; });
    shareGatheringCapacity(
        m_threadContacts, owned, [](auto& list) -> std::vector<TriangleContact>& { return list.value; },
        contacts.size());
    std::sort(contacts.begin(), contacts.end(), contactBefore);
}

} // namespace bulletgpu
