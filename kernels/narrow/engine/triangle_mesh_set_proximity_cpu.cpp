// SPDX-License-Identifier: Zlib
// TriangleMeshSet's contact query and points-against-mesh query on the host: trees with grown
// leaf boxes over the meshes' topologies, candidates from FrontTraversal (a walk or a kept
// front), the per-element tests of candidate_proximity.h on OpenMP threads, each thread's
// contacts sorted and the parts merged. On the CUDA backend both queries run on the device
// engine, to which this file hands the features, welds and queries.
#include "kernels/narrow/engine/triangle_mesh_set.h"
#include "kernels/common/stopwatch.h"
#include "kernels/narrow/geometry/candidate_proximity.h"
#include "kernels/narrow/geometry/own_frame_bounds.h"
#include "kernels/narrow/geometry/proximity_bounds.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace bulletgpu {
namespace {

/// Below this many candidates or points the tests run on one thread.
constexpr std::int64_t cParallelProximity = 256;
/// Candidates a thread takes at a time in the contact query's tests.
constexpr std::int64_t cProximityChunk = 1024;
/// From this many queries in a batch, the queries run one per thread (each walked and tested on
/// one thread): a batch of many small mesh pairs would otherwise open a team per query.
constexpr std::uint32_t cQueriesPerThreadFrom = 8;
/// A pair query culls in its first mesh's own frame when that mesh has at most 1/cOwnFrameRatio
/// of the second's triangles (a hull against a landscape).
constexpr std::size_t cOwnFrameRatio = 8;

/// Throws unless `distance` is finite and >= 0.
void checkDistance(double distance) {
    if (!(distance >= 0) || !std::isfinite(distance)) {
        throw std::invalid_argument("bulletgpu: the contact distance must be finite and >= 0");
    }
}

/// proximityBefore as a function object, so that std::sort inlines it.
struct ProximityOrder {
    bool operator()(const ProximityContact& x, const ProximityContact& y) const { return proximityBefore(x, y); }
};

/// An emit functor appending to a vector.
template <typename Contact>
struct AppendTo {
    std::vector<Contact>& out;
    void operator()(const Contact& c) { out.push_back(c); }
};

} // namespace

std::uint32_t TriangleMeshSetImpl::grownFrameOf(std::uint32_t index, bool world) const {
    return world && m_meshes[index].hasTransform ? 1u : 0u;
}

void TriangleMeshSetImpl::growTree(std::uint32_t index, bool world, double distance, int threads) {
    Mesh& mesh = m_meshes[index];
    const std::uint32_t frame = grownFrameOf(index, world);
    if (mesh.grownCorners[frame] == mesh.cornersVersion[0] && mesh.grownTopology[frame] == mesh.topologyVersion &&
        mesh.grownDistance[frame] == distance && (frame == 0 || mesh.grownTransform == mesh.transformVersion)) {
        return;
    }
    if (frame == 1) moveVertices(index, threads);
    std::vector<FloatBox>& boxes = mesh.grownBoxes[frame];
    const auto count = static_cast<std::int64_t>(mesh.corners.size());
    boxes.resize(mesh.corners.size());
    // Own corners as stored; world ones from the moved vertices (the same doubles).
    const TriangleSource source{
        frame == 0 ? mesh.corners.data() : nullptr,      mesh.positions.data(), mesh.indices.data(), nullptr, nullptr,
        frame == 1 ? mesh.movedVertices.data() : nullptr};
#pragma omp parallel for num_threads(threads) schedule(static) if (count >= 4096)
    for (std::int64_t t = 0; t < count; ++t) {
        Triangle3d scratch;
        boxes[t] = grownTriangleBox(source.triangle(static_cast<std::uint32_t>(t), scratch), distance);
    }
    if (count > 0) {
        mesh.tree.refitInto(boxes.data(), mesh.grownNodes[frame], threads);
    } else {
        mesh.grownNodes[frame].clear();
    }
    mesh.grownCorners[frame] = mesh.cornersVersion[0];
    mesh.grownTopology[frame] = mesh.topologyVersion;
    mesh.grownDistance[frame] = distance;
    if (frame == 1) mesh.grownTransform = mesh.transformVersion;
}

void TriangleMeshSetImpl::moveVertices(std::uint32_t index, int threads) {
    Mesh& mesh = m_meshes[index];
    const auto count = static_cast<std::int64_t>(mesh.positions.size() / 3);
    mesh.movedVertices.resize(mesh.positions.size());
#pragma omp parallel for num_threads(threads) schedule(static) if (count >= 4096)
    for (std::int64_t v = 0; v < count; ++v) {
        const Vec3d moved = transformPoint(mesh.transform, &mesh.positions[3 * v]);
        for (int k = 0; k < 3; ++k) mesh.movedVertices[3 * v + k] = moved.v[k];
    }
}

void TriangleMeshSetImpl::prepareFeatures(const MeshPairQuery* queries, std::uint32_t count,
                                          const ProximityOptions& options) {
    for (std::uint32_t q = 0; q < count; ++q) {
        for (std::uint32_t index : {queries[q].meshA, queries[q].meshB}) {
            Mesh& mesh = m_meshes[index];
            if (mesh.featuresBuilt) continue;
            buildMeshFeatures(mesh.indices.data(), static_cast<std::uint32_t>(mesh.indices.size() / 3),
                              static_cast<std::uint32_t>(mesh.positions.size() / 3), mesh.features);
            // Built only once the device has them too: a failed upload is tried again.
            if (m_device) m_device->setFeatures(index, mesh.features);
            mesh.featuresBuilt = true;
        }
        if (queries[q].meshA == queries[q].meshB && options.excludeWelded) {
            Mesh& mesh = m_meshes[queries[q].meshA];
            weldVertices(mesh.positions.data(), static_cast<std::uint32_t>(mesh.positions.size() / 3), mesh.weld,
                         m_weldOrder);
            if (m_device) m_device->setWeld(queries[q].meshA, mesh.weld);
        }
    }
}

void TriangleMeshSetImpl::prepareGrownTrees(const MeshPairQuery* queries, std::uint32_t count, double distance) {
    // What each mesh needs (bit 0: its own frame, bit 1: the world's), the meshes in index order.
    m_growNeeds.assign(m_meshes.size(), 0);
    for (std::uint32_t q = 0; q < count; ++q) {
        const bool self = queries[q].meshA == queries[q].meshB;
        const bool ownFrame = cullsInOwnFrame(queries[q]);
        m_growNeeds[queries[q].meshA] |=
            static_cast<std::uint8_t>(1u << grownFrameOf(queries[q].meshA, !self && !ownFrame));
        m_growNeeds[queries[q].meshB] |= static_cast<std::uint8_t>(1u << grownFrameOf(queries[q].meshB, !self));
    }
    m_growList.clear();
    for (std::uint32_t index = 0; index < m_meshes.size(); ++index) {
        if (m_growNeeds[index] != 0) m_growList.push_back(index);
    }
    const Clock::time_point start = Clock::now();
    const auto meshes = static_cast<std::int64_t>(m_growList.size());
    // Many meshes: one per thread; few: each on the team.
    const bool perMesh = meshes >= cQueriesPerThreadFrom && m_threads > 1;
    const int inner = perMesh ? 1 : m_threads;
#pragma omp parallel for num_threads(perMesh ? m_threads : 1) schedule(dynamic, 1)
    for (std::int64_t i = 0; i < meshes; ++i) {
        const std::uint32_t index = m_growList[i];
        if ((m_growNeeds[index] & 2u) != 0) growTree(index, true, distance, inner);
        if ((m_growNeeds[index] & 1u) != 0) growTree(index, false, distance, inner);
    }
    m_stats.refitMs += millisecondsSince(start);
}

MeshView TriangleMeshSetImpl::grownViewOf(std::uint32_t index, bool world) const {
    MeshView view = viewOf(index, world);
    const std::vector<LbvhNode>& nodes = m_meshes[index].grownNodes[grownFrameOf(index, world)];
    view.nodes = nodes.empty() ? nullptr : nodes.data();
    view.nodeCount = static_cast<std::uint32_t>(nodes.size());
    view.obbs = nullptr;
    // In the world frame the exact tests read the moved vertices and compute the planes they
    // need: this query keeps no corners or planes (growTree).
    if (grownFrameOf(index, world) == 1) {
        view.corners = nullptr;
        view.planes = nullptr;
        view.moved = m_meshes[index].movedVertices.data();
    }
    return view;
}

bool TriangleMeshSetImpl::cullsInOwnFrame(const MeshPairQuery& query) const {
    if (query.meshA == query.meshB || m_traversal != NarrowTraversal::LeafWalk) return false;
    const Mesh& a = m_meshes[query.meshA];
    return a.hasTransform && a.indices.size() * cOwnFrameRatio <= m_meshes[query.meshB].indices.size() &&
           transformSkew(a.transform) <= cOwnFrameSkewLimit;
}

MeshView TriangleMeshSetImpl::ownFrameViewOf(std::uint32_t index) const {
    MeshView view = grownViewOf(index, false);
    view.transform = m_meshes[index].transform;
    view.corners = nullptr;
    view.planes = nullptr;
    return view;
}

void TriangleMeshSetImpl::ownFrameCandidates(const MeshPairQuery& query, double distance,
                                             std::vector<FrontEntry>& leaves, std::vector<FrontEntry>& candidates,
                                             FrontCounters& counters) const {
    counters = FrontCounters{};
    counters.generated = true;
    candidates.clear();
    const MeshView own = grownViewOf(query.meshA, false);
    const MeshView other = grownViewOf(query.meshB, true);
    if (own.nodes == nullptr || other.nodes == nullptr) return;
    const double* transform = m_meshes[query.meshA].transform;
    const double skew = transformSkew(transform);
    const double ownMagnitude = boxMagnitude(own.nodes[0].box);
    const double moved = movedMagnitude(transform, ownMagnitude);
    const double world = std::max(moved, boxMagnitude(other.nodes[0].box));
    // The other mesh's leaves near the first mesh.
    struct Leaves {
        std::vector<FrontEntry>& out;
        std::uint64_t& boxTests;
        void front(std::uint32_t, std::uint32_t) {}
        void candidate(std::uint32_t leaf, std::uint32_t node) { out.push_back(FrontEntry{leaf, node}); }
        void boxTest() { ++boxTests; }
    };
    leaves.clear();
    Leaves near{leaves, counters.boxTests};
    walkFront(frontTreeOf(other), movedOwnBox(transform, own.nodes[0].box, skew, distance, world), nullptr, 0, 0,
              other.nodeCount, near);
    const TriangleSource source = sourceOf(other);
    for (const FrontEntry& leaf : leaves) {
        Triangle3d scratch;
        const Triangle3d& triangle = source.triangle(leafTriangle(other.nodes[leaf.node]), scratch);
        const double magnitude = std::max(moved, triangleMagnitude(triangle));
        const Triangle3d inOwn = movedIntoOwnFrame(transform, triangle);
        const double growth = ownFrameGrowth(skew, distance, ownMagnitude, magnitude);
        const FloatBox box = triangleBoxGrownBy(inOwn, growth);
        const TriangleSlab slab = triangleSlab(inOwn, growth, 2 * magnitude);
        // The own tree's nodes that meet both the box and the slab.
        for (std::uint32_t n = 0; n < own.nodeCount;) {
            const LbvhNode& node = own.nodes[n];
            ++counters.boxTests;
            if (!boxesOverlap(box, node.box) || !boxMeetsSlab(node.box, slab)) {
                n = own.escape[n];
                continue;
            }
            if (isLeaf(node)) candidates.push_back(FrontEntry{n, leaf.node});
            ++n;
        }
    }
    counters.candidates = candidates.size();
}

BvttFront& TriangleMeshSetImpl::proximityFrontOf(const MeshPairQuery& query, double distance) {
    ProximityFront& kept = m_proximityFronts[static_cast<std::uint64_t>(query.meshA) << 32 | query.meshB];
    const std::uint64_t versionA = m_meshes[query.meshA].topologyVersion;
    const std::uint64_t versionB = m_meshes[query.meshB].topologyVersion;
    if (kept.distance != distance || kept.front.buildA != versionA || kept.front.buildB != versionB) {
        kept.front.generated = false;
        kept.front.entries.clear();
        kept.front.buildA = versionA;
        kept.front.buildB = versionB;
        kept.distance = distance;
    }
    return kept.front;
}

const BvttFront* TriangleMeshSetImpl::proximityFront(std::uint32_t meshA, std::uint32_t meshB) const {
    const auto found = m_proximityFronts.find(static_cast<std::uint64_t>(meshA) << 32 | meshB);
    return found == m_proximityFronts.end() ? nullptr : &found->second.front;
}

std::vector<FrontEntry> TriangleMeshSetImpl::walkedProximityFront(std::uint32_t meshA, std::uint32_t meshB) const {
    checkMesh(meshA);
    checkMesh(meshB);
    const bool self = meshA == meshB;
    return walkedFrontOf(frontTreeOf(grownViewOf(meshA, !self)), frontTreeOf(grownViewOf(meshB, !self)), self);
}

ProximityMeshView TriangleMeshSetImpl::proximityViewOf(const MeshView& view, bool self,
                                                       const ProximityOptions& options) const {
    const Mesh& mesh = m_meshes[view.mesh];
    const bool welds = self && options.excludeWelded;
    return ProximityMeshView{sourceOf(view),
                             view.indices,
                             mesh.features.triangleEdges.data(),
                             mesh.features.owned.data(),
                             welds ? mesh.weld.data() : nullptr,
                             view.mesh};
}

NeighbourCull* TriangleMeshSetImpl::neighbourCullOf(std::uint32_t meshA, std::uint32_t meshB,
                                                    const ProximityOptions& options) {
    return meshA == meshB && !options.excludeWelded ? &m_meshes[meshA].neighbours : nullptr;
}

void TriangleMeshSetImpl::prepareNeighbourCulls(const MeshPairQuery* queries, std::uint32_t count,
                                                const ProximityOptions& options) {
    m_culledMeshes.clear();
    for (std::uint32_t q = 0; q < count; ++q) {
        const std::uint32_t index = queries[q].meshA;
        NeighbourCull* cull = neighbourCullOf(index, queries[q].meshB, options);
        if (cull == nullptr || std::find(m_culledMeshes.begin(), m_culledMeshes.end(), index) != m_culledMeshes.end())
            continue;
        m_culledMeshes.push_back(index);
        const Mesh& mesh = m_meshes[index];
        if (!cull->built())
            cull->build(mesh.indices.data(), static_cast<std::uint32_t>(mesh.indices.size() / 3),
                        static_cast<std::uint32_t>(mesh.positions.size() / 3));
        cull->prepare(mesh.positions.data(), options.distance, m_threads);
        m_stats.neighbourPatchesApart += cull->apartCount();
    }
}

void TriangleMeshSetImpl::refreshNeighbourCulls() {
    for (const std::uint32_t index : m_culledMeshes) {
        Mesh& mesh = m_meshes[index];
        mesh.neighbours.refresh(mesh.indices.data(), mesh.positions.data(), m_threads);
    }
}

void TriangleMeshSetImpl::testProximityCandidates(const BvttQuery& views, const std::vector<FrontEntry>& candidates,
                                                  const ProximityOptions& options,
                                                  std::vector<ProximityContact>& contacts) {
    const auto count = static_cast<std::int64_t>(candidates.size());
    const int team = count >= cParallelProximity ? m_threads : 1;
    if (m_proximityThreads.size() < static_cast<std::size_t>(team)) m_proximityThreads.resize(team);
    const ProximityMeshView a = proximityViewOf(views.a, views.self, options);
    const ProximityMeshView b = proximityViewOf(views.b, views.self, options);
    const double distance = options.distance;
    const NeighbourCull* cull = neighbourCullOf(views.a.mesh, views.b.mesh, options);
    std::uint64_t skipped = 0;
    for (int t = 0; t < team; ++t) m_proximityThreads[t].value.contacts.clear();
        // Chunks handed out as threads free up (the cost of a candidate varies by region), each
        // thread's contacts sorted on that thread, then merged: the same order whoever tested what.
#pragma omp parallel num_threads(team) reduction(+ : skipped)
    {
        ProximityThreadOut& mine = m_proximityThreads[omp_get_thread_num()].value;
        std::vector<ProximityContact>& out = mine.contacts;
        AppendTo<ProximityContact> emit{out};
#pragma omp for schedule(dynamic, cProximityChunk) nowait
        for (std::int64_t i = 0; i < count; ++i) {
            const std::uint32_t ta = leafTriangle(views.a.nodes[candidates[i].leaf]);
            const std::uint32_t tb = leafTriangle(views.b.nodes[candidates[i].node]);
            if (cull != nullptr && cull->skips(views.a.indices, ta, tb)) {
                ++skipped;
                continue;
            }
            candidateProximity(a, ta, b, tb, views.self, distance, options.vertexFaceOnly, emit);
        }
        sortProximityContacts(out, 0, mine.sort);
    }
    m_stats.neighboursSkipped += skipped;
    // The first part merged with each next one, the last merge into `contacts`.
    const std::vector<ProximityContact>* merged = &m_proximityThreads[0].value.contacts;
    for (int t = 1; t < team; ++t) {
        const std::vector<ProximityContact>& part = m_proximityThreads[t].value.contacts;
        std::vector<ProximityContact>& into = m_proximityMerge[t % 2];
        into.resize(merged->size() + part.size());
        std::merge(merged->begin(), merged->end(), part.begin(), part.end(), into.begin(), ProximityOrder{});
        merged = &into;
    }
    contacts.insert(contacts.end(), merged->begin(), merged->end());
}

void TriangleMeshSetImpl::runProximityQueriesPerThread(const MeshPairQuery* queries, const ProximityOptions& options,
                                                       int team, std::vector<ProximityContact>& contacts) {
    const bool keep = m_traversal == NarrowTraversal::Fronts;
    const auto count = static_cast<std::int64_t>(m_order.size());
    // Fronts are found (and made) here, on one thread: the map is not shared-write safe.
    m_queryFronts.clear();
    for (std::uint32_t q : m_order)
        m_queryFronts.push_back(keep ? &proximityFrontOf(queries[q], options.distance) : nullptr);
    if (m_proximityThreads.size() < static_cast<std::size_t>(team)) m_proximityThreads.resize(team);
#pragma omp parallel num_threads(team)
    {
        ProximityThreadOut& out = m_proximityThreads[omp_get_thread_num()].value;
        out.contacts.clear();
        out.ends.clear();
        out.queries.clear();
        out.counters = FrontCounters{};
        out.frontsGenerated = 0;
        out.neighboursSkipped = 0;
        AppendTo<ProximityContact> emit{out.contacts};
#pragma omp for schedule(dynamic, 4)
        for (std::int64_t position = 0; position < count; ++position) {
            const MeshPairQuery& query = queries[m_order[position]];
            const bool self = query.meshA == query.meshB;
            const bool ownFrame = cullsInOwnFrame(query);
            const BvttQuery views{ownFrame ? ownFrameViewOf(query.meshA) : grownViewOf(query.meshA, !self),
                                  grownViewOf(query.meshB, !self), self};
            FrontCounters ownCounters;
            if (ownFrame) {
                ownFrameCandidates(query, options.distance, out.walk, out.ownCandidates, ownCounters);
            } else {
                BvttFront& front = keep ? *m_queryFronts[position] : out.walkFront;
                out.traversal.collectCandidates(views, front, keep ? FrontRun::Update : FrontRun::Walk, 1);
            }
            const FrontCounters& counters = ownFrame ? ownCounters : out.traversal.counters();
            const std::vector<FrontEntry>& candidates = ownFrame ? out.ownCandidates : out.traversal.candidates();
            out.counters.boxTests += counters.boxTests;
            out.counters.candidates += counters.candidates;
            out.counters.frontEntries += counters.frontEntries;
            out.frontsGenerated += counters.generated ? 1 : 0;
            const ProximityMeshView a = proximityViewOf(views.a, self, options);
            const ProximityMeshView b = proximityViewOf(views.b, self, options);
            const NeighbourCull* cull = neighbourCullOf(query.meshA, query.meshB, options);
            const std::size_t first = out.contacts.size();
            for (const FrontEntry& candidate : candidates) {
                const std::uint32_t ta = leafTriangle(views.a.nodes[candidate.leaf]);
                const std::uint32_t tb = leafTriangle(views.b.nodes[candidate.node]);
                if (cull != nullptr && cull->skips(views.a.indices, ta, tb)) {
                    ++out.neighboursSkipped;
                    continue;
                }
                candidateProximity(a, ta, b, tb, self, options.distance, options.vertexFaceOnly, emit);
            }
            sortProximityContacts(out.contacts, first, out.sort);
            out.ends.push_back(out.contacts.size());
            out.queries.push_back(static_cast<std::uint32_t>(position));
        }
    }
    // Joined in m_order's order: where each position's contacts lie.
    m_queryRanges.assign(static_cast<std::size_t>(count), QueryRange{});
    for (int t = 0; t < team; ++t) {
        const ProximityThreadOut& out = m_proximityThreads[t].value;
        for (std::size_t i = 0; i < out.queries.size(); ++i) {
            m_queryRanges[out.queries[i]] = QueryRange{t, i == 0 ? 0 : out.ends[i - 1], out.ends[i]};
        }
        m_stats.boxTests += out.counters.boxTests;
        m_stats.triangleTests += out.counters.candidates;
        m_stats.frontEntries += out.counters.frontEntries;
        m_stats.frontsGenerated += out.frontsGenerated;
        m_stats.neighboursSkipped += out.neighboursSkipped;
    }
    for (const QueryRange& range : m_queryRanges) {
        const std::vector<ProximityContact>& part = m_proximityThreads[range.thread].value.contacts;
        contacts.insert(contacts.end(), part.begin() + static_cast<std::ptrdiff_t>(range.begin),
                        part.begin() + static_cast<std::ptrdiff_t>(range.end));
    }
}

void TriangleMeshSetImpl::findProximity(const MeshPairQuery* queries, std::uint32_t count,
                                        const ProximityOptions& options, std::vector<ProximityContact>& contacts) {
    checkDistance(options.distance);
    m_stats = NarrowStats{};
    orderQueries(queries, count);
    if (m_device) {
        prepareFeatures(queries, count, options);
        m_sortedQueries.resize(count);
        for (std::uint32_t q = 0; q < count; ++q) m_sortedQueries[q] = queries[m_order[q]];
        contacts.clear();
        m_device->findProximity(m_sortedQueries.data(), count, options, contacts, m_stats);
        m_stats.contacts = contacts.size();
        return;
    }
    m_threads = m_treeTuner.threadsForNextUpdate();
    const Clock::time_point treeStart = Clock::now();
    for (std::uint32_t q = 0; q < count; ++q) {
        updateTree(m_meshes[queries[q].meshA]);
        updateTree(m_meshes[queries[q].meshB]);
    }
    // The intersection query's fronts follow any restructuring done here.
    carryFrontsOver();
    prepareFeatures(queries, count, options);
    prepareGrownTrees(queries, count, options.distance);
    m_treeTuner.record(millisecondsSince(treeStart));
    for (std::uint32_t q = 0; q < count; ++q) m_stats.ownFrameQueries += cullsInOwnFrame(queries[q]) ? 1 : 0;
    const Clock::time_point start = Clock::now();
    contacts.clear();
    m_threads = m_queryTuner.threadsForNextUpdate();
    prepareNeighbourCulls(queries, count, options);
    if (count >= cQueriesPerThreadFrom && m_threads > 1) {
        runProximityQueriesPerThread(queries, options, m_threads, contacts);
        refreshNeighbourCulls();
        m_stats.traverseMs = millisecondsSince(start);
        m_stats.contacts = contacts.size();
        m_queryTuner.record(m_stats.traverseMs);
        return;
    }
    const bool keep = m_traversal == NarrowTraversal::Fronts;
    for (std::uint32_t q : m_order) {
        const MeshPairQuery& query = queries[q];
        const bool self = query.meshA == query.meshB;
        const bool ownFrame = cullsInOwnFrame(query);
        const BvttQuery views{ownFrame ? ownFrameViewOf(query.meshA) : grownViewOf(query.meshA, !self),
                              grownViewOf(query.meshB, !self), self};
        FrontCounters ownCounters;
        if (ownFrame) {
            ownFrameCandidates(query, options.distance, m_ownLeaves, m_ownCandidates, ownCounters);
        } else {
            BvttFront& front = keep ? proximityFrontOf(query, options.distance) : m_walkFront;
            m_frontTraversal.collectCandidates(views, front, keep ? FrontRun::Update : FrontRun::Walk, m_threads);
        }
        const FrontCounters& counters = ownFrame ? ownCounters : m_frontTraversal.counters();
        m_stats.boxTests += counters.boxTests;
        m_stats.triangleTests += counters.candidates;
        m_stats.frontEntries += counters.frontEntries;
        m_stats.frontsGenerated += counters.generated ? 1 : 0;
        const Clock::time_point testStart = Clock::now();
        testProximityCandidates(views, ownFrame ? m_ownCandidates : m_frontTraversal.candidates(), options, contacts);
        m_stats.testMs += millisecondsSince(testStart);
    }
    refreshNeighbourCulls();
    m_stats.traverseMs = millisecondsSince(start);
    m_stats.contacts = contacts.size();
    m_queryTuner.record(m_stats.traverseMs);
}

void TriangleMeshSetImpl::findSelfProximity(std::uint32_t mesh, const ProximityOptions& options,
                                            std::vector<ProximityContact>& contacts) {
    const MeshPairQuery query{mesh, mesh};
    findProximity(&query, 1, options, contacts);
}

void TriangleMeshSetImpl::findPairProximity(std::uint32_t meshA, std::uint32_t meshB, const ProximityOptions& options,
                                            std::vector<ProximityContact>& contacts) {
    if (meshA == meshB) throw std::invalid_argument("bulletgpu: findPairProximity needs two different meshes");
    const MeshPairQuery query{meshA, meshB};
    findProximity(&query, 1, options, contacts);
}

void TriangleMeshSetImpl::findPointContacts(const float* points, std::uint32_t count, std::uint32_t index,
                                            double distance, std::vector<PointContact>& contacts) {
    checkMesh(index);
    checkDistance(distance);
    if (count > 0 && points == nullptr) throw std::invalid_argument("bulletgpu: findPointContacts needs points");
    for (std::size_t i = 0; i < 3 * static_cast<std::size_t>(count); ++i) {
        if (!std::isfinite(points[i])) throw std::invalid_argument("bulletgpu: query points must be finite");
    }
    m_stats = NarrowStats{};
    if (m_device) {
        m_device->findPointContacts(points, count, index, distance, contacts, m_stats);
        m_stats.contacts = contacts.size();
        return;
    }
    Mesh& mesh = m_meshes[index];
    updateTree(mesh);
    carryFrontsOver();
    const Clock::time_point growStart = Clock::now();
    growTree(index, true, distance, m_threads);
    m_stats.refitMs += millisecondsSince(growStart);
    const Clock::time_point start = Clock::now();
    const MeshView view = grownViewOf(index, true);
    const FrontTree tree = frontTreeOf(view);
    const TriangleSource source = sourceOf(view);
    const auto items = static_cast<std::int64_t>(count);
    const int team = items >= cParallelProximity ? m_threads : 1;
    if (m_proximityThreads.size() < static_cast<std::size_t>(team)) m_proximityThreads.resize(team);
    contacts.clear();
#pragma omp parallel num_threads(team)
    {
        const int t = omp_get_thread_num(), size = omp_get_num_threads();
        ProximityThreadOut& out = m_proximityThreads[t].value;
        out.points.clear();
        // A point's walk: candidates collected, then tested (its leaves in node order).
        struct Candidates {
            std::vector<FrontEntry>& leaves;
            void front(std::uint32_t, std::uint32_t) {}
            void candidate(std::uint32_t point, std::uint32_t node) { leaves.push_back(FrontEntry{point, node}); }
            void boxTest() {}
        } sink{out.walk};
        const std::int64_t lo = items * t / size, hi = items * (t + 1) / size;
        for (std::int64_t i = lo; i < hi && tree.nodes != nullptr; ++i) {
            const Vec3d p = toVec3d(points + 3 * i);
            out.walk.clear();
            walkFront(tree, grownPointBox(p, distance), nullptr, static_cast<std::uint32_t>(i), 0, tree.nodeCount,
                      sink);
            for (const FrontEntry& leaf : out.walk) {
                const std::uint32_t triangle = leafTriangle(tree.nodes[leaf.node]);
                Triangle3d scratch;
                PointContact contact;
                if (pointTriangleContact(leaf.leaf, p, triangle, source.triangle(triangle, scratch), distance,
                                         contact)) {
                    out.points.push_back(contact);
                }
            }
        }
    }
    for (int t = 0; t < team; ++t) {
        const std::vector<PointContact>& part = m_proximityThreads[t].value.points;
        contacts.insert(contacts.end(), part.begin(), part.end());
    }
    std::sort(contacts.begin(), contacts.end(), [](const PointContact& x, const PointContact& y) {
        return x.point != y.point ? x.point < y.point : x.triangle < y.triangle;
    });
    m_stats.traverseMs = millisecondsSince(start);
    m_stats.contacts = contacts.size();
}

} // namespace bulletgpu
