// SPDX-License-Identifier: Zlib
// CcdFrameQuery on the host: swept boxes and trees per mesh, the leaf walk for triangle pairs,
// then the per-element expansion and exact tests of ccd_candidate_ops.h on OpenMP threads, or
// on the device engine (ccd_frame_engine.h).
#include "kernels/narrow/ccd/ccd_frame_query.h"

#include "kernels/common/cuda_device.h"
#include "kernels/common/stopwatch.h"
#include "kernels/narrow/ccd/ccd_frame_engine.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace bulletgpu {
namespace {

/// Below this many items a stage runs on one thread.
constexpr std::int64_t cParallelItems = 1024;

/// Threads for `items` items.
int teamOf(std::int64_t items, int threads) { return items >= cParallelItems ? std::max(1, threads) : 1; }

/// Throws unless every coordinate is finite and within the exact tests' domain.
void checkPositions(const double* positions, std::uint32_t vertexCount) {
    for (std::size_t i = 0; i < 3 * static_cast<std::size_t>(vertexCount); ++i) {
        if (!(std::fabs(positions[i]) <= ccd::cMaxMagnitude)) {
            throw std::invalid_argument("bulletgpu: CCD positions must be finite and at most 2^1000 in magnitude");
        }
    }
}

/// Copies x, y, z triples into points.
void copyPoints(const double* positions, std::uint32_t count, std::vector<Vec3d>& out) {
    out.resize(count);
    for (std::uint32_t i = 0; i < count; ++i)
        out[i] = Vec3d{{positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]}};
}

} // namespace

CcdFrameQuery::CcdFrameQuery(Backend backend, int device) {
    if (backend == Backend::Auto) backend = probeCudaDevice(device).usable ? Backend::Cuda : Backend::Cpu;
    if (backend == Backend::Cuda) m_device = detail::createCudaCcdEngine(device);
}

CcdFrameQuery::~CcdFrameQuery() = default;
CcdFrameQuery::CcdFrameQuery(CcdFrameQuery&&) noexcept = default;
CcdFrameQuery& CcdFrameQuery::operator=(CcdFrameQuery&&) noexcept = default;

void CcdFrameQuery::runSelf(const CcdMesh& mesh, const CcdFrameOptions& options, CcdFrameResult& out) {
    const Clock::time_point start = Clock::now();
    prepare(0, mesh, options);
    out.counts = CcdFrameCounts{};
    out.counts.boxMs = millisecondsSince(start);
    run(true, options, out);
}

void CcdFrameQuery::runPair(const CcdMesh& a, const CcdMesh& b, const CcdFrameOptions& options, CcdFrameResult& out) {
    const Clock::time_point start = Clock::now();
    prepare(0, a, options);
    prepare(1, b, options);
    out.counts = CcdFrameCounts{};
    out.counts.boxMs = millisecondsSince(start);
    run(false, options, out);
}

void CcdFrameQuery::prepare(int s, const CcdMesh& mesh, const CcdFrameOptions& options) {
    if (!(options.eta >= 0.0) || !std::isfinite(options.eta)) {
        throw std::invalid_argument("bulletgpu: the CCD separation eta must be finite and >= 0");
    }
    checkPositions(mesh.positions0, mesh.vertexCount);
    checkPositions(mesh.positions1, mesh.vertexCount);
    Side& side = m_sides[s];
    copyPoints(mesh.positions0, mesh.vertexCount, side.x0);
    copyPoints(mesh.positions1, mesh.vertexCount, side.x1);
    const std::size_t indexCount = 3 * static_cast<std::size_t>(mesh.triangleCount);
    if (side.indices.size() != indexCount || !std::equal(side.indices.begin(), side.indices.end(), mesh.indices) ||
        side.features.owned.size() != mesh.triangleCount) {
        side.indices.assign(mesh.indices, mesh.indices + indexCount);
        buildMeshFeatures(mesh.indices, mesh.triangleCount, mesh.vertexCount, side.features);
        ++side.featuresRevision;
    }
    const std::vector<std::uint32_t>& edges = side.features.edges;
    // The device engine computes the features' swept bounds itself.
    const bool featureBounds = !m_device;
    side.vertexBounds.resize(featureBounds ? mesh.vertexCount : 0);
    side.edgeBounds.resize(featureBounds ? edges.size() / 2 : 0);
    side.faceBounds.resize(featureBounds ? mesh.triangleCount : 0);
    side.boxes.resize(mesh.triangleCount);
    const CcdMeshView view = viewOf(s);
    const auto vertices = static_cast<std::int64_t>(side.vertexBounds.size());
    const auto edgeCount = static_cast<std::int64_t>(side.edgeBounds.size());
    const auto count = static_cast<std::int64_t>(mesh.triangleCount);
    const double eta = options.eta;
    const CcdOptions& exact = options.exact;
#pragma omp parallel num_threads(teamOf(count, options.threads))
    {
#pragma omp for schedule(static) nowait
        for (std::int64_t v = 0; v < vertices; ++v) {
            const auto vertex = static_cast<std::uint32_t>(v);
            side.vertexBounds[v] = sweptBoundsOf(view, &vertex, 1, eta, exact);
        }
#pragma omp for schedule(static) nowait
        for (std::int64_t e = 0; e < edgeCount; ++e) {
            side.edgeBounds[e] = sweptBoundsOf(view, edges.data() + 2 * e, 2, eta, exact);
        }
#pragma omp for schedule(static)
        for (std::int64_t t = 0; t < count; ++t) {
            if (featureBounds) side.faceBounds[t] = sweptBoundsOf(view, mesh.indices + 3 * t, 3, eta, exact);
            side.boxes[t] = sweptTriangleBox(view, static_cast<std::uint32_t>(t), eta, exact);
        }
    }
    side.tree.build(side.boxes.data(), mesh.triangleCount, std::max(1, options.threads));
}

CcdMeshView CcdFrameQuery::viewOf(int s) const {
    const Side& side = m_sides[s];
    return CcdMeshView{side.x0.data(),
                       side.x1.data(),
                       side.indices.data(),
                       side.features.edges.data(),
                       side.features.triangleEdges.data(),
                       side.features.owned.data(),
                       side.vertexBounds.data(),
                       side.edgeBounds.data(),
                       side.faceBounds.data()};
}

MeshView CcdFrameQuery::treeViewOf(int s) const {
    const Lbvh& tree = m_sides[s].tree;
    MeshView view{};
    view.nodes = tree.nodes().empty() ? nullptr : tree.nodes().data();
    view.escape = tree.escapes().data();
    view.leaves = tree.leafNodes().data();
    view.nodeCount = static_cast<std::uint32_t>(tree.nodes().size());
    view.leafCount = tree.leafCount();
    view.mesh = static_cast<std::uint32_t>(s);
    return view;
}

void CcdFrameQuery::run(bool self, const CcdFrameOptions& options, CcdFrameResult& out) {
    if (!m_device) {
        runOnHost(self, options, out);
        return;
    }
    m_candidates.clear();
    detail::CcdPreparedSide sides[2];
    for (int s = 0; s < (self ? 1 : 2); ++s) {
        const Side& side = m_sides[s];
        const Lbvh& tree = side.tree;
        sides[s] = detail::CcdPreparedSide{viewOf(s),
                                           static_cast<std::uint32_t>(side.x0.size()),
                                           static_cast<std::uint32_t>(side.features.edges.size() / 2),
                                           static_cast<std::uint32_t>(side.indices.size() / 3),
                                           tree.nodes().data(),
                                           tree.escapes().data(),
                                           tree.leafNodes().data(),
                                           static_cast<std::uint32_t>(tree.nodes().size()),
                                           tree.leafCount(),
                                           side.featuresRevision};
    }
    m_device->run(sides, self, options, out);
}

void CcdFrameQuery::runOnHost(bool self, const CcdFrameOptions& options, CcdFrameResult& out) {
    const int sideB = self ? 0 : 1;
    const int threads = std::max(1, options.threads);
    CcdFrameCounts& counts = out.counts;

    // Triangle pairs whose grown swept boxes overlap.
    Clock::time_point start = Clock::now();
    const BvttQuery query{treeViewOf(0), treeViewOf(sideB), self};
    m_traversal.collectCandidates(query, m_walkFront, FrontRun::Walk, threads);
    const std::vector<FrontEntry>& pairs = m_traversal.candidates();
    counts.trianglePairs = pairs.size();
    counts.traverseMs = millisecondsSince(start);

    // Their feature pairs, each once, filtered by their own swept extents.
    start = Clock::now();
    const CcdMeshView meshA = viewOf(0), meshB = viewOf(sideB);
    const LbvhNode* nodesA = query.a.nodes;
    const LbvhNode* nodesB = query.b.nodes;
    const auto pairCount = static_cast<std::int64_t>(pairs.size());
    const int team = teamOf(pairCount, threads);
    // The prefilters rely on the exact test examining its first box (maxIterations > 0).
    const bool prefilter = options.prefilter && options.exact.maxIterations > 0;
    if (m_threads.size() < static_cast<std::size_t>(threads)) m_threads.resize(threads);
#pragma omp parallel num_threads(team)
    {
        const int t = omp_get_thread_num(), size = omp_get_num_threads();
        ThreadOut& mine = m_threads[t].value;
        mine.candidates.clear();
        mine.expand = CcdExpandCounts{};
        const auto emit = [&](const CcdFeaturePair& pair) { mine.candidates.push_back(pair); };
        const std::int64_t lo = pairCount * t / size, hi = pairCount * (t + 1) / size;
        for (std::int64_t i = lo; i < hi; ++i) {
            const std::uint32_t ta = leafTriangle(nodesA[pairs[i].leaf]);
            const std::uint32_t tb = leafTriangle(nodesB[pairs[i].node]);
            expandTrianglePair(meshA, ta, meshB, tb, self, prefilter, options.eta, emit, mine.expand);
        }
    }
    m_candidates.clear();
    for (int t = 0; t < team; ++t) {
        const ThreadOut& part = m_threads[t].value;
        m_candidates.insert(m_candidates.end(), part.candidates.begin(), part.candidates.end());
        counts.featurePairs += part.expand.featurePairs;
        counts.firstBoxCulled += part.expand.firstBoxCulled;
        counts.planeCulled += part.expand.planeCulled;
    }
    counts.exactTests = m_candidates.size();
    counts.expandMs = millisecondsSince(start);

    // The exact tests; their cost varies, so threads take small chunks as they finish.
    start = Clock::now();
    const auto tests = static_cast<std::int64_t>(m_candidates.size());
    const int testTeam = teamOf(tests, threads);
#pragma omp parallel num_threads(testTeam)
    {
        ThreadOut& mine = m_threads[omp_get_thread_num()].value;
        std::vector<CcdImpact>& impacts = mine.impacts;
        impacts.clear();
        mine.iterations = mine.rootRejections = 0;
#pragma omp for schedule(dynamic, 256)
        for (std::int64_t i = 0; i < tests; ++i) {
            const CcdResult result = testFeaturePair(meshA, meshB, m_candidates[i], options.eta, options.exact);
            mine.iterations += result.iterations;
            mine.rootRejections += !result.hit && result.iterations == 1;
            if (result.hit) impacts.push_back(CcdImpact{m_candidates[i], result.toi, result.undecided});
        }
    }
    out.impacts.clear();
    for (int t = 0; t < testTeam; ++t) {
        const ThreadOut& part = m_threads[t].value;
        out.impacts.insert(out.impacts.end(), part.impacts.begin(), part.impacts.end());
        counts.iterations += part.iterations;
        counts.rootRejections += part.rootRejections;
    }
    std::sort(out.impacts.begin(), out.impacts.end(),
              [](const CcdImpact& x, const CcdImpact& y) { return featurePairBefore(x.pair, y.pair); });
    out.earliestToi = HUGE_VAL;
    for (const CcdImpact& impact : out.impacts) {
        out.earliestToi = std::min(out.earliestToi, impact.toi);
        counts.undecided += impact.undecided;
    }
    counts.impacts = out.impacts.size();
    counts.exactMs = millisecondsSince(start);
}

} // namespace bulletgpu
