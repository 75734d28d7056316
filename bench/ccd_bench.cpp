// SPDX-License-Identifier: Zlib
// Whole-frame CCD benchmark (issue 29): CcdFrameQuery::runSelf (swept boxes, tree builds, leaf
// walk, feature expansion and filter, exact vertex-face and edge-edge tests, sort) on the
// ccd-frames scenes, from one frame to the next, eta = 0. A fresh query object is timed first
// (its allocations included), then steady runs reusing its buffers, with the prefilters on and
// off in turn; the medians are printed with the stage medians, the counts and the load average
// before and after each scene.
//
// Side by side on the vertex-face pairs alone: Bullet's bernsteinCCD (btSoftBodyInternals.h, the
// soft-body CCD of btDeformableBodySolver; Bullet's btScalar, not conservative) and vertexFaceCcd,
// both on the same threads over the same vertex-face candidates of our culling, with their hits.
//
// When a CUDA device is usable, the same query on Backend::Cuda (boxes and trees on the host
// threads, the rest on the device): first and median ms per frame with the stages, and whether
// its impacts equal the CPU's.
//
// Usage: bulletgpu-bench-ccd [data dir] [runs] [threads] [scenes, comma-separated] [backends: cpu,cuda]
#include "bench/machine_info.h"
#include "bench/sample_statistics.h"
#include "kernels/common/cuda_device.h"
#include "kernels/common/stopwatch.h"
#include "kernels/narrow/ccd/ccd_frame_query.h"
#include "tests/support/ply_mesh.h"
#include "tests/support/shared_data.h"

#include <BulletSoftBody/btSoftBodyInternals.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace bulletgpu;

namespace {

/// One scene: its folder and its two frames.
struct Scene {
    const char* name;      ///< Folder under ccd-frames.
    const char* frames[2]; ///< PLY names at t = 0 and t = 1.
};

/// Steady-run times of one setting: the whole query and its stages.
struct Samples {
    std::vector<double> total, boxes, upload, walk, expand, exact;

    /// Adds one run.
    void add(double ms, const CcdFrameCounts& c) {
        total.push_back(ms);
        boxes.push_back(c.boxMs);
        upload.push_back(c.uploadMs);
        walk.push_back(c.traverseMs);
        expand.push_back(c.expandMs);
        exact.push_back(c.exactMs);
    }
};

/// True when `name` is in the comma-separated `list` (or the list is empty).
bool selected(const std::string& list, const std::string& name) {
    return list.empty() || ("," + list + ",").find("," + name + ",") != std::string::npos;
}

// btAlignedObjectArray::resize copies a default-constructed Node or Face, whose btVector3 members
// are left uninitialized by design; every member bernsteinCCD reads is set below.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
/// Bullet's soft-body nodes and faces for bernsteinCCD: m_x at t = 0, m_q at t = 1, m_v the
/// motion over dt = 1, and the face normals getBernsteinCoeff reads: m_n0 and m_n1 at both ends,
/// m_vn the cross product of the edges' motions.
struct BulletCloth {
    btAlignedObjectArray<btSoftBody::Node> nodes;
    btAlignedObjectArray<btSoftBody::Face> faces;

    explicit BulletCloth(const CcdMesh& mesh) {
        nodes.resize(static_cast<int>(mesh.vertexCount));
        faces.resize(static_cast<int>(mesh.triangleCount));
        for (std::uint32_t v = 0; v < mesh.vertexCount; ++v) {
            const double* p0 = mesh.positions0 + 3 * v;
            const double* p1 = mesh.positions1 + 3 * v;
            btSoftBody::Node& node = nodes[static_cast<int>(v)];
            node.m_x = btVector3(btScalar(p0[0]), btScalar(p0[1]), btScalar(p0[2]));
            node.m_q = btVector3(btScalar(p1[0]), btScalar(p1[1]), btScalar(p1[2]));
            node.m_v = node.m_q - node.m_x;
        }
        for (std::uint32_t f = 0; f < mesh.triangleCount; ++f) {
            btSoftBody::Face& face = faces[static_cast<int>(f)];
            for (int c = 0; c < 3; ++c) face.m_n[c] = &nodes[static_cast<int>(mesh.indices[3 * f + c])];
            const btSoftBody::Node *a = face.m_n[0], *b = face.m_n[1], *c = face.m_n[2];
            face.m_n0 = (b->m_x - a->m_x).cross(c->m_x - a->m_x);
            face.m_n1 = (b->m_q - a->m_q).cross(c->m_q - a->m_q);
            face.m_vn = (b->m_v - a->m_v).cross(c->m_v - a->m_v);
        }
    }
};

#pragma GCC diagnostic pop

/// Times (median of `runs`) and counts the hits of `test(pair)` over `pairs` on `threads`.
template <typename Test>
void timeTests(const std::vector<CcdFeaturePair>& pairs, int threads, int runs, const Test& test, double& ms,
               std::vector<bool>& hits) {
    std::vector<double> samples;
    hits.assign(pairs.size(), false);
    std::vector<char> hit(pairs.size(), 0);
    for (int r = 0; r < runs; ++r) {
        const Clock::time_point start = Clock::now();
        const auto count = static_cast<std::int64_t>(pairs.size());
#pragma omp parallel for num_threads(threads) schedule(dynamic, 256)
        for (std::int64_t i = 0; i < count; ++i) hit[i] = test(pairs[i]) ? 1 : 0;
        samples.push_back(millisecondsSince(start));
    }
    for (std::size_t i = 0; i < pairs.size(); ++i) hits[i] = hit[i] != 0;
    ms = bench::median(samples);
}

/// Bullet's bernsteinCCD and vertexFaceCcd on the vertex-face candidates of the last query: a
/// table row.
std::string compareBernstein(const char* name, const CcdMesh& mesh, const CcdFrameQuery& query, int threads, int runs) {
    std::vector<CcdFeaturePair> pairs;
    for (const CcdFeaturePair& pair : query.candidates()) {
        if (pair.kind == CcdFeatureKind::VertexFace) pairs.push_back(pair);
    }
    const BulletCloth cloth(mesh);
    std::vector<Vec3d> x0(mesh.vertexCount), x1(mesh.vertexCount);
    for (std::uint32_t v = 0; v < mesh.vertexCount; ++v) {
        for (int k = 0; k < 3; ++k) {
            x0[v].v[k] = mesh.positions0[3 * v + k];
            x1[v].v[k] = mesh.positions1[3 * v + k];
        }
    }
    const CcdMeshView view{x0.data(), x1.data(), mesh.indices, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
    double bulletMs = 0, oursMs = 0;
    std::vector<bool> bulletHits, ourHits;
    const std::string loadBefore = loadAverages();
    timeTests(
        pairs, threads, runs,
        [&](const CcdFeaturePair& pair) {
            btVector3 bary;
            return bernsteinCCD(&cloth.faces[static_cast<int>(pair.b)], &cloth.nodes[static_cast<int>(pair.a)],
                                btScalar(1), btScalar(SAFE_EPSILON), bary);
        },
        bulletMs, bulletHits);
    timeTests(
        pairs, threads, runs,
        [&](const CcdFeaturePair& pair) { return testFeaturePair(view, view, pair, 0.0, CcdOptions{}).hit; }, oursMs,
        ourHits);
    std::size_t bulletCount = 0, ourCount = 0, bulletOnly = 0, oursOnly = 0;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
        bulletCount += bulletHits[i];
        ourCount += ourHits[i];
        bulletOnly += bulletHits[i] && !ourHits[i];
        oursOnly += ourHits[i] && !bulletHits[i];
    }
    char row[512];
    std::snprintf(row, sizeof(row), "| %s | %zu | %.1f | %zu | %.1f | %zu | %zu | %zu | %s | %s |\n", name,
                  pairs.size(), oursMs, ourCount, bulletMs, bulletCount, oursOnly, bulletOnly, loadBefore.c_str(),
                  loadAverages().c_str());
    return row;
}

/// The same impacts (pairs, times bit for bit, flags) and earliest time.
bool sameImpacts(const CcdFrameResult& x, const CcdFrameResult& y) {
    if (x.impacts.size() != y.impacts.size()) return false;
    if (std::memcmp(&x.earliestToi, &y.earliestToi, sizeof(double)) != 0) return false;
    for (std::size_t i = 0; i < x.impacts.size(); ++i) {
        const CcdImpact& a = x.impacts[i];
        const CcdImpact& b = y.impacts[i];
        if (a.pair.kind != b.pair.kind || a.pair.a != b.pair.a || a.pair.b != b.pair.b ||
            std::memcmp(&a.toi, &b.toi, sizeof(double)) != 0 || a.undecided != b.undecided) {
            return false;
        }
    }
    return true;
}

/// Steady runs of one query, prefilters on (index 1) and off (index 0).
struct SteadyRuns {
    Samples samples[2];                        ///< Times and stage times.
    CcdFrameCounts counts[2];                  ///< Counts of the last run.
    double earliest[2] = {HUGE_VAL, HUGE_VAL}; ///< Earliest time of impact of the last run.
};

/// `runs` steady runs of `query` on `mesh` with the prefilters on and off, alternated so that
/// load falls on both.
SteadyRuns runSteady(CcdFrameQuery& query, const CcdMesh& mesh, CcdFrameOptions options, int runs) {
    SteadyRuns steady;
    CcdFrameResult result;
    for (int r = 0; r < runs; ++r) {
        for (int filter = 1; filter >= 0; --filter) {
            options.prefilter = filter == 1;
            const Clock::time_point start = Clock::now();
            query.runSelf(mesh, options, result);
            steady.samples[filter].add(millisecondsSince(start), result.counts);
            steady.counts[filter] = result.counts;
            steady.earliest[filter] = result.earliestToi;
        }
    }
    return steady;
}

/// The query on Backend::Cuda: a fresh query timed first, then `runs` steady runs with the
/// prefilters on and off in turn; table rows, with whether the impacts equal `cpu` (the CPU's,
/// prefilters on; null: not run).
std::string benchCuda(const char* name, const CcdMesh& mesh, const CcdFrameResult* cpu, int runs, int threads) {
    CcdFrameOptions options;
    options.threads = threads;
    CcdFrameResult result;
    Clock::time_point start = Clock::now();
    CcdFrameQuery query(Backend::Cuda);
    query.runSelf(mesh, options, result);
    const double firstMs = millisecondsSince(start);
    const char* same = cpu == nullptr ? "-" : (sameImpacts(*cpu, result) ? "yes" : "NO");
    const SteadyRuns steady = runSteady(query, mesh, options, runs);
    const Samples* samples = steady.samples;
    const CcdFrameCounts* counts = steady.counts;
    const double* earliest = steady.earliest;
    std::string rows;
    for (int filter = 1; filter >= 0; --filter) {
        const CcdFrameCounts& c = counts[filter];
        const Samples& t = samples[filter];
        char row[512];
        std::snprintf(row, sizeof(row),
                      "| %s | %s | %llu | %llu | %llu | %llu | %llu | %.3g | %s | %.2f | %.2f | %.2f | %.2f | %.2f | "
                      "%.2f | %.2f |\n",
                      name, filter == 1 ? "on" : "off", static_cast<unsigned long long>(c.trianglePairs),
                      static_cast<unsigned long long>(c.featurePairs), static_cast<unsigned long long>(c.exactTests),
                      static_cast<unsigned long long>(c.iterations), static_cast<unsigned long long>(c.impacts),
                      earliest[filter], filter == 1 ? same : "-", filter == 1 ? firstMs : 0.0, bench::median(t.total),
                      bench::median(t.boxes), bench::median(t.upload), bench::median(t.walk), bench::median(t.expand),
                      bench::median(t.exact));
        rows += row;
    }
    return rows;
}

} // namespace

int main(int argc, char** argv) {
    const std::string data = argc > 1 ? argv[1] : bulletgpu::test::sharedDataDir();
    const int runs = argc > 2 ? std::atoi(argv[2]) : 7;
    const int threads = argc > 3 ? std::atoi(argv[3]) : 2;
    const std::string scenes = argc > 4 ? argv[4] : "";
    const std::string backends = argc > 5 ? argv[5] : "cpu,cuda";
    const bool onCpu = selected(backends, "cpu");
    const CudaDeviceProbe device = probeCudaDevice(0);
    const bool onCuda = selected(backends, "cuda") && device.usable;
    std::vector<std::string> sideBySide, cudaRows;
    std::printf("CPU: %s, %u hardware threads; %d threads, %d steady runs per scene, eta = 0\n", cpuModel().c_str(),
                std::thread::hardware_concurrency(), threads, runs);
    if (onCpu) {
        std::printf(
            "| scene | prefilters | triangles | triangle pairs | feature pairs | first-box culled | plane-separated | "
            "exact tests | root rejections | boxes examined | impacts | undecided | earliest toi | first ms | median "
            "ms | boxes+trees | walk | expand+filter | exact+sort | load before | load after |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    }
    for (const Scene& scene : {Scene{"cloth-ball", {"cloth_ball92", "cloth_ball93"}},
                               Scene{"cloth-funnel", {"227", "228"}}, Scene{"rod-twist", {"3036", "3037"}}}) {
        if (!selected(scenes, scene.name)) continue;
        const std::string folder = data + "/ccd-frames/" + scene.name + "/frames/";
        PlyMesh frames[2];
        try {
            for (int f = 0; f < 2; ++f) frames[f] = readPlyMesh(folder + scene.frames[f] + ".ply");
        } catch (const std::exception& e) {
            std::printf("| %s | skipped: %s |\n", scene.name, e.what());
            continue;
        }
        const CcdMesh mesh{frames[0].exactPositions.data(), frames[1].exactPositions.data(),
                           static_cast<std::uint32_t>(frames[0].exactPositions.size() / 3), frames[0].indices.data(),
                           static_cast<std::uint32_t>(frames[0].indices.size() / 3)};
        CcdFrameOptions options;
        options.threads = threads;
        if (!onCpu) {
            if (onCuda) cudaRows.push_back(benchCuda(scene.name, mesh, nullptr, runs, threads));
            continue;
        }
        const std::string loadBefore = loadAverages();
        CcdFrameResult result;
        Clock::time_point start = Clock::now();
        CcdFrameQuery query;
        query.runSelf(mesh, options, result);
        const double firstMs = millisecondsSince(start);
        const SteadyRuns steady = runSteady(query, mesh, options, runs);
        const Samples* samples = steady.samples;
        const CcdFrameCounts* counts = steady.counts;
        const double* earliest = steady.earliest;
        const std::string loadAfter = loadAverages();
        char first[32];
        std::snprintf(first, sizeof(first), "%.1f", firstMs);
        for (int filter = 1; filter >= 0; --filter) {
            const CcdFrameCounts& c = counts[filter];
            const Samples& t = samples[filter];
            std::printf(
                "| %s | %s | %u | %llu | %llu | %llu | %llu | %llu | %llu | %llu | %llu | %llu | %.3g | %s | %.1f | "
                "%.1f | "
                "%.1f | %.1f | %.1f | %s | %s |\n",
                scene.name, filter == 1 ? "on" : "off", mesh.triangleCount,
                static_cast<unsigned long long>(c.trianglePairs), static_cast<unsigned long long>(c.featurePairs),
                static_cast<unsigned long long>(c.firstBoxCulled), static_cast<unsigned long long>(c.planeCulled),
                static_cast<unsigned long long>(c.exactTests), static_cast<unsigned long long>(c.rootRejections),
                static_cast<unsigned long long>(c.iterations), static_cast<unsigned long long>(c.impacts),
                static_cast<unsigned long long>(c.undecided), earliest[filter], filter == 1 ? first : "-",
                bench::median(t.total), bench::median(t.boxes), bench::median(t.walk), bench::median(t.expand),
                bench::median(t.exact), loadBefore.c_str(), loadAfter.c_str());
        }
        std::fflush(stdout);
        // The vertex-face side by side reads the candidates of the default query (prefilters on).
        options.prefilter = true;
        query.runSelf(mesh, options, result);
        if (onCuda) cudaRows.push_back(benchCuda(scene.name, mesh, &result, runs, threads));
        sideBySide.push_back(compareBernstein(scene.name, mesh, query, threads, runs));
    }
    if (onCuda) {
        std::printf("\nCUDA on %s (boxes and trees on %d host threads), median ms per frame:\n"
                    "| scene | prefilters | triangle pairs | feature pairs | exact tests | boxes examined | impacts | "
                    "earliest toi | same as CPU | first ms | median ms | boxes+trees | upload | walk | expand+filter | "
                    "exact+sort+copy |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
                    device.name.c_str(), threads);
        for (const std::string& row : cudaRows) std::printf("%s", row.c_str());
    } else {
        std::printf("\nCUDA: not run (%s)\n", device.usable ? "not selected" : device.reason.c_str());
    }
    if (!onCpu) return 0;
    std::printf(
        "\nVertex-face candidates only, %d threads, median ms:\n| scene | vertex-face pairs | vertexFaceCcd ms | "
        "hits | bernsteinCCD ms | hits | ours only | Bullet only | load before | load after |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n",
        threads);
    for (const std::string& row : sideBySide) std::printf("%s", row.c_str());
    return 0;
}
