// SPDX-License-Identifier: Zlib
// FrontTraversal on OpenMP threads: contiguous blocks of leaves or front entries per thread,
// joined in order, then the exact tests of the candidates in blocks (the other triangle
// prefetched ahead); or, for a walk with boxes only, chunks of query leaves taken by the threads
// as they finish, each walked and its candidates tested at once. Then one counting sort.
#include "kernels/narrow/traversal/bvtt_front.h"
#include "kernels/narrow/geometry/plane_filter.h"
#include "kernels/common/omp_team.h"
#include "kernels/common/stopwatch.h"
#include "kernels/common/thread_buffers.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstddef>

namespace bulletgpu {
namespace {

/// Below this many leaves or entries the front step runs on one thread.
constexpr std::int64_t cParallelItems = 2048;
/// Below this many candidates the exact tests run on one thread.
constexpr std::int64_t cParallelCandidates = 256;
/// Query leaves a thread takes at a time in a walk that tests as it goes (64 group walks).
constexpr std::int64_t cChunkLeaves = 64 * cWalkLanes;

/// A sink appending to one thread's vectors; with `keepFronts` false it only counts the front
/// entries.
struct VectorSink {
    std::vector<FrontEntry>& fronts;
    std::vector<FrontEntry>& candidates;
    bool keepFronts = true;
    std::uint64_t boxTests = 0;
    std::uint64_t frontEntries = 0;

    void front(std::uint32_t leaf, std::uint32_t node) {
        ++frontEntries;
        if (keepFronts) fronts.push_back(FrontEntry{leaf, node});
    }
    void candidate(std::uint32_t leaf, std::uint32_t node) { candidates.push_back(FrontEntry{leaf, node}); }
    void boxTest() { ++boxTests; }
};

/// How many candidates ahead the exact tests prefetch the other tree's leaf node, and half as
/// many ahead what the test reads of its triangle: the candidates' other leaves are scattered.
constexpr std::int64_t cPrefetchNodes = 16;
constexpr std::int64_t cPrefetchTriangles = cPrefetchNodes / 2;
/// Candidates filtered together before their exact tests (their triangles stay in L1).
constexpr int cFilterBlock = 64;

/// Prefetches a cache line into every level of the data caches.
void prefetch(const void* address) { __builtin_prefetch(address, 0, 3); }

/// Prefetches what the filters and the exact test of `pair` read of the other tree's triangle.
void prefetchTriangle(const FrontTree& b, const MeshView& viewB, bool self, const FrontEntry& pair) {
    const std::uint32_t t = leafTriangle(b.nodes[pair.node]);
    if (self) prefetch(viewB.indices + 3 * static_cast<std::size_t>(t));
    if (viewB.corners != nullptr) {
        const char* corners = reinterpret_cast<const char*>(viewB.corners + t);
        prefetch(corners);
        prefetch(corners + sizeof(Triangle3d) - 1);
    }
    if (viewB.planes != nullptr) {
        const char* plane = reinterpret_cast<const char*>(viewB.planes + t);
        prefetch(plane);
        prefetch(plane + sizeof(PlaneMinors) - 1);
    }
}

/// The triangles of a block of candidates that share no vertex.
struct UnsharedBlock {
    std::uint32_t triangleA[cFilterBlock]; ///< Query tree's triangle of each.
    std::uint32_t triangleB[cFilterBlock]; ///< Other tree's triangle of each.
    int count = 0;                         ///< Candidates kept.
};

/// The exact tests of `count` candidate pairs; appends the contacts to `out` and returns the
/// pairs tested (those not sharing a vertex). Block by block, without branches on outcomes
/// that are unpredictable candidate to candidate: first the pairs sharing a vertex are
/// dropped, then those the planes' static filters separate (most of the rest); the exact test
/// runs on what remains. The other tree's triangles are prefetched ahead.
std::uint64_t testCandidateRange(const BvttQuery& query, const FrontEntry* pairs, std::int64_t count,
                                 std::vector<TriangleContact>& out) {
    const FrontTree a = frontTreeOf(query.a), b = frontTreeOf(query.b);
    const bool self = query.self;
    const TriangleSource sourceA = sourceOf(query.a), sourceB = sourceOf(query.b);
    const bool filterPlanes = sourceA.corners != nullptr && sourceA.planes != nullptr && sourceB.corners != nullptr &&
                              sourceB.planes != nullptr;
    std::uint64_t tested = 0;
    for (std::int64_t first = 0; first < count; first += cFilterBlock) {
        const int size = static_cast<int>(std::min<std::int64_t>(cFilterBlock, count - first));
        UnsharedBlock unshared;
        for (int j = 0; j < size; ++j) {
            const std::int64_t i = first + j;
            if (i + cPrefetchNodes < count) prefetch(b.nodes + pairs[i + cPrefetchNodes].node);
            if (i + cPrefetchTriangles < count) prefetchTriangle(b, query.b, self, pairs[i + cPrefetchTriangles]);
            const std::uint32_t ta = leafTriangle(a.nodes[pairs[i].leaf]);
            const std::uint32_t tb = leafTriangle(b.nodes[pairs[i].node]);
            unshared.triangleA[unshared.count] = ta;
            unshared.triangleB[unshared.count] = tb;
            unshared.count += static_cast<int>(!(self && shareVertex(query.a.indices, ta, tb)));
        }
        tested += static_cast<std::uint64_t>(unshared.count);
        const int crossing =
            filterPlanes ? planeFilterKeep(sourceA, sourceB, unshared.triangleA, unshared.triangleB, unshared.count)
                         : unshared.count;
        for (int j = 0; j < crossing; ++j) {
            TriangleContact contact;
            if (testTrianglePair(unshared.triangleA[j], sourceA, query.a.mesh, unshared.triangleB[j], sourceB,
                                 query.b.mesh, self, contact)) {
                out.push_back(contact);
            }
        }
    }
    return tested;
}

/// The team for `items` work items.
int teamFor(std::int64_t items, std::int64_t threshold, int threads) {
    return items >= threshold ? threadsForRegion(std::max(1, threads)) : 1;
}

} // namespace

void FrontTraversal::join(std::vector<FrontEntry> ThreadOut::*member, int team, std::vector<FrontEntry>& out) {
    // Appended, not resized and copied over: resize would zero every entry first.
    std::size_t total = 0;
    for (int t = 0; t < team; ++t) total += (m_threads[t].value.*member).size();
    out.clear();
    out.reserve(total);
    for (int t = 0; t < team; ++t) {
        const std::vector<FrontEntry>& part = m_threads[t].value.*member;
        out.insert(out.end(), part.begin(), part.end());
    }
}

void FrontTraversal::carryOver(const FrontTree& query, const FrontTree& other, bool self, RestructuredRanges inQuery,
                               RestructuredRanges inOther, BvttFront& front, int threads) {
    // One item per entry and one past the last, which seeds the ranges after every entry's leaf.
    const auto items = static_cast<std::int64_t>(front.entries.size()) + 1;
    const int team = teamFor(items, cParallelItems, threads);
    resetThreads(team);
    const FrontEntry* old = front.entries.data();
    const std::uint64_t size = front.entries.size();
#pragma omp parallel num_threads(team)
    {
        const int t = omp_get_thread_num(), count = omp_get_num_threads();
        ThreadOut& out = m_threads[t].value;
        VectorSink sink{out.fronts, out.candidates};
        const std::int64_t lo = items * t / count, hi = items * (t + 1) / count;
        for (std::int64_t i = lo; i < hi; ++i) {
            restructureFrontEntry(query, other, self, inQuery, inOther, old, size, static_cast<std::uint64_t>(i), sink);
        }
    }
    join(&ThreadOut::fronts, team, m_next);
    front.entries.swap(m_next);
}

bool FrontTraversal::begin(const BvttQuery& query, BvttFront& front, FrontRun mode) {
    m_counters = FrontCounters{};
    m_counters.generated = mode == FrontRun::Walk || !front.generated;
    front.generated = true;
    if (query.a.nodes != nullptr && query.b.nodes != nullptr) return true;
    front.entries.clear();
    m_candidates.clear();
    return false;
}

void FrontTraversal::run(const BvttQuery& query, BvttFront& front, FrontRun mode, int threads,
                         std::vector<TriangleContact>& contacts, FrontLog* log) {
    if (!begin(query, front, mode)) {
        if (log != nullptr) log->record(query.b.nodeCount, front.entries, m_candidates);
        return;
    }
    if (mode == FrontRun::Walk && query.a.obbs == nullptr && query.b.obbs == nullptr) {
        front.entries.clear();
        m_candidates.clear();
        walkAndTest(query, threads, contacts, log);
        return;
    }
    traverse(query, front, m_counters.generated, mode == FrontRun::Update || log != nullptr, threads);
    if (log != nullptr) log->record(query.b.nodeCount, front.entries, m_candidates);
    if (mode == FrontRun::Walk) front.entries.clear();
    testCandidates(query, threads, contacts);
}

void FrontTraversal::collectCandidates(const BvttQuery& query, BvttFront& front, FrontRun mode, int threads) {
    if (!begin(query, front, mode)) return;
    traverse(query, front, m_counters.generated, mode == FrontRun::Update, threads);
}

std::vector<FrontEntry> walkedFrontOf(const FrontTree& query, const FrontTree& other, bool self) {
    std::vector<FrontEntry> entries;
    if (query.nodes == nullptr || other.nodes == nullptr) return entries;
    struct Collector {
        std::vector<FrontEntry>& fronts;
        void front(std::uint32_t leaf, std::uint32_t node) { fronts.push_back(FrontEntry{leaf, node}); }
        void candidate(std::uint32_t, std::uint32_t) {}
        void boxTest() {}
    } sink{entries};
    for (std::uint32_t leaf = 0; leaf < query.leafCount; ++leaf) generateFront(query, other, self, leaf, sink);
    return entries;
}

void FrontTraversal::walkAndTest(const BvttQuery& query, int threads, std::vector<TriangleContact>& contacts,
                                 FrontLog* log) {
    const FrontTree a = frontTreeOf(query.a), b = frontTreeOf(query.b);
    const bool self = query.self;
    const auto leaves = static_cast<std::int64_t>(a.leafCount);
    const int team = teamFor(leaves, cParallelItems, threads);
    resetThreads(team);
    std::atomic<std::int64_t> nextChunk{0};
#pragma omp parallel num_threads(team)
    {
        ThreadOut& out = m_threads[omp_get_thread_num()].value;
        GroupWalkOutput group{out.fronts, out.candidates, false};
        if (log != nullptr) {
            out.entriesPerNode.assign(b.nodeCount, 0);
            out.hitsPerNode.assign(b.nodeCount, 0);
            group.entriesPerNode = out.entriesPerNode.data();
        }
        for (std::int64_t first = nextChunk.fetch_add(cChunkLeaves); first < leaves;
             first = nextChunk.fetch_add(cChunkLeaves)) {
            const std::int64_t last = std::min(leaves, first + cChunkLeaves);
            for (std::int64_t i = first; i < last; i += cWalkLanes) {
                const auto count = static_cast<std::uint32_t>(std::min<std::int64_t>(cWalkLanes, last - i));
                generateFrontGroup(a, b, self, static_cast<std::uint32_t>(i), count, out.groupWalk, group);
            }
            if (log != nullptr) {
                for (const FrontEntry& candidate : out.candidates) ++out.hitsPerNode[candidate.node];
            }
            const Clock::time_point testStart = Clock::now();
            out.triangleTests += testCandidateRange(query, out.candidates.data(),
                                                    static_cast<std::int64_t>(out.candidates.size()), out.contacts);
            out.testMs += millisecondsSince(testStart);
            out.candidateCount += out.candidates.size();
            out.candidates.clear();
        }
        out.boxTests = group.boxTests;
        out.frontEntries = group.frontEntries;
    }
    for (int t = 0; t < team; ++t) {
        const ThreadOut& out = m_threads[t].value;
        m_counters.boxTests += out.boxTests;
        m_counters.frontEntries += out.frontEntries;
        m_counters.candidates += out.candidateCount;
        // The threads test side by side: their mean is the share of the wall time.
        m_counters.testMs += out.testMs / team;
    }
    if (log != nullptr) {
        m_entryCounts.clear();
        m_hitCounts.clear();
        for (int t = 0; t < team; ++t) {
            m_entryCounts.push_back(m_threads[t].value.entriesPerNode.data());
            m_hitCounts.push_back(m_threads[t].value.hitsPerNode.data());
        }
        log->recordCounts(b.nodeCount, m_entryCounts.data(), m_hitCounts.data(), team);
    }
    const Clock::time_point sortStart = Clock::now();
    const std::size_t joined = joinContacts(team, a.leafCount, contacts);
    m_counters.testMs += millisecondsSince(sortStart);
    // Chunks go to whichever thread is free (thread_buffers.h).
    const auto owned = static_cast<std::size_t>(team);
    shareCapacity(m_threads, owned, [](auto& out) -> std::vector<FrontEntry>& { return out.value.candidates; });
    shareGatheringCapacity(
        m_threads, owned, [](auto& out) -> std::vector<TriangleContact>& { return out.value.contacts; }, joined);
    shareCapacity(m_threads, owned,
                  [](auto& out) -> std::vector<GroupWalkScratch::PathNode>& { return out.value.groupWalk.path; });
    for (std::uint32_t lane = 0; lane < cWalkLanes; ++lane) {
        shareCapacity(m_threads, owned,
                      [lane](auto& out) -> std::vector<FrontEntry>& { return out.value.groupWalk.candidates[lane]; });
    }
}

std::size_t FrontTraversal::joinContacts(int team, std::uint32_t queryLeaves, std::vector<TriangleContact>& contacts) {
    const std::size_t first = contacts.size();
    for (int t = 0; t < team; ++t) {
        const ThreadOut& out = m_threads[t].value;
        contacts.insert(contacts.end(), out.contacts.begin(), out.contacts.end());
        m_counters.triangleTests += out.triangleTests;
    }
    m_sorter.sort(contacts, first, queryLeaves);
    return contacts.size() - first;
}

void FrontTraversal::resetThreads(int team) {
    if (m_threads.size() < static_cast<std::size_t>(team)) m_threads.resize(team);
    for (int t = 0; t < team; ++t) m_threads[t].value.reset();
}

void FrontTraversal::regenerateEntries(const BvttQuery& query, BvttFront& front, int threads) {
    if (query.a.nodes == nullptr || query.b.nodes == nullptr) return;
    const FrontCounters counters = m_counters;
    traverse(query, front, true, true, threads);
    m_counters = counters;
}

void FrontTraversal::traverse(const BvttQuery& query, BvttFront& front, bool generate, bool keepFront, int threads) {
    const FrontTree a = frontTreeOf(query.a), b = frontTreeOf(query.b);
    const bool self = query.self;
    const std::int64_t items =
        generate ? static_cast<std::int64_t>(a.leafCount) : static_cast<std::int64_t>(front.entries.size());
    const int team = teamFor(items, cParallelItems, threads);
    resetThreads(team);
    const FrontEntry* old = front.entries.data();
    // Boxes only: consecutive leaves walk together (front_group_walk.h).
    const bool groups = generate && a.obbs == nullptr && b.obbs == nullptr;
#pragma omp parallel num_threads(team)
    {
        const int t = omp_get_thread_num(), size = omp_get_num_threads();
        ThreadOut& out = m_threads[t].value;
        const std::int64_t lo = items * t / size, hi = items * (t + 1) / size;
        if (groups) {
            GroupWalkOutput group{out.fronts, out.candidates, keepFront};
            for (std::int64_t i = lo; i < hi; i += cWalkLanes) {
                const auto count = static_cast<std::uint32_t>(std::min<std::int64_t>(cWalkLanes, hi - i));
                generateFrontGroup(a, b, self, static_cast<std::uint32_t>(i), count, out.groupWalk, group);
            }
            out.boxTests = group.boxTests;
            out.frontEntries = group.frontEntries;
        } else {
            VectorSink sink{out.fronts, out.candidates, keepFront};
            // The last subtree an entry of this block was pruned to: a later entry of the same
            // leaf inside it is disjoint too (boxes nest), climbs to the same ancestor and is
            // dropped, so it is skipped without its climb. OBB tests are not exactly monotone.
            const bool nested = a.obbs == nullptr && b.obbs == nullptr;
            FrontEntry pruned{cNoNode, 0};
            std::uint32_t prunedEnd = 0;
            for (std::int64_t i = lo; i < hi; ++i) {
                if (generate) {
                    generateFront(a, b, self, static_cast<std::uint32_t>(i), sink);
                    continue;
                }
                const FrontEntry entry = old[i];
                if (entry.leaf == pruned.leaf && entry.node > pruned.node && entry.node < prunedEnd) continue;
                const std::uint32_t top = updateFrontEntry(a, b, self, old, static_cast<std::uint64_t>(i), sink);
                if (nested && top != cNoNode) {
                    pruned = FrontEntry{entry.leaf, top};
                    prunedEnd = b.escape[top];
                }
            }
            out.boxTests = sink.boxTests;
            out.frontEntries = sink.frontEntries;
        }
    }
    if (keepFront) {
        join(&ThreadOut::fronts, team, m_next);
        front.entries.swap(m_next);
    } else {
        front.entries.clear();
    }
    join(&ThreadOut::candidates, team, m_candidates);
    for (int t = 0; t < team; ++t) {
        m_counters.boxTests += m_threads[t].value.boxTests;
        m_counters.frontEntries += m_threads[t].value.frontEntries;
    }
    m_counters.candidates = m_candidates.size();
}

void FrontTraversal::testCandidates(const BvttQuery& query, int threads, std::vector<TriangleContact>& contacts) {
    const Clock::time_point testStart = Clock::now();
    const auto candidates = static_cast<std::int64_t>(m_candidates.size());
    const int testTeam = teamFor(candidates, cParallelCandidates, threads);
    resetThreads(testTeam);
#pragma omp parallel num_threads(testTeam)
    {
        const int t = omp_get_thread_num(), size = omp_get_num_threads();
        ThreadOut& out = m_threads[t].value;
        const std::int64_t lo = candidates * t / size, hi = candidates * (t + 1) / size;
        out.triangleTests = testCandidateRange(query, m_candidates.data() + lo, hi - lo, out.contacts);
    }
    joinContacts(testTeam, frontTreeOf(query.a).leafCount, contacts);
    m_counters.testMs = millisecondsSince(testStart);
}

} // namespace bulletgpu
