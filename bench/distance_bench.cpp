// SPDX-License-Identifier: Zlib
// Separation distance between two copies of a ~100,000-triangle mesh, from nearly touching to
// far, BulletGpu's MeshDistance against FCL (OBBRSS BVHModel, fcl::distance with nearest points)
// in the same process on the same meshes and transforms.
//
// Usage: bulletgpu-bench-distance [data dir] [repeats] [json file] [meshes, comma-separated]
// Meshes: a generated torus of 100,000 triangles and a wavy sheet of 100,352, and the ccd-frames
// meshes cloth-ball 92 and rod-twist 3036 when the data folder has them. For each mesh, three
// placements of the second copy (beside it along x, unturned and turned; stacked on it along y)
// and gaps of 1e-4 to 1 times the mesh's size: the copy is moved along its axis until
// MeshDistance measures the gap within 5% (bisection), then both libraries answer the same query.
// Times are medians of `repeats` queries; builds are timed once. When a CUDA device is usable,
// MeshDistance on Backend::Cuda answers the same queries too (its build, the tree built on 2
// threads and uploaded, timed apart; one untimed query first), with whether its answer equals
// the CPU's (distance, pair and points, or both meeting). Nothing is asserted.
#include "bench/machine_info.h"
#include "bench/sample_statistics.h"
#include "bench/scene_filter.h"
#include "kernels/common/cuda_device.h"
#include "kernels/narrow/distance/mesh_distance.h"
#include "tests/support/mesh_generators.h"
#include "tests/support/ply_mesh.h"
#include "tests/support/rigid_transform.h"
#include "tests/support/shared_data.h"

#include <nlohmann/json.hpp>

#if defined(BULLETGPU_WITH_FCL)
#include <fcl/fcl.h>
#endif

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace bulletgpu;
using bulletgpu::test::rigid;
using bulletgpu::test::Transform;

namespace {

using Clock = std::chrono::steady_clock;

/// Milliseconds since `start`.
double msSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// CPU time of the calling thread, in milliseconds (what a single-threaded query costs whatever
/// else the machine runs).
double threadCpuMs() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}

/// One mesh of the benchmark.
struct BenchMesh {
    std::string name;
    PlyMesh mesh;
};

/// The largest extent of a mesh's box.
double sizeOf(const PlyMesh& mesh) {
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (std::size_t v = 0; v < mesh.positions.size(); v += 3) {
        for (int k = 0; k < 3; ++k) {
            lo[k] = std::fmin(lo[k], mesh.positions[v + k]);
            hi[k] = std::fmax(hi[k], mesh.positions[v + k]);
        }
    }
    return std::fmax(hi[0] - lo[0], std::fmax(hi[1] - lo[1], hi[2] - lo[2]));
}

/// The second copy's transform: `rotation` (w, x, y, z) then a shift along `axis` found by
/// bisection so that the distance to the first copy (at the identity) is `target` within 5%.
Transform placeAtGap(const MeshDistance& engine, const double* rotation, int axis, double target, double size) {
    const double zero[3] = {0, 0, 0};
    Transform t = rigid(rotation[0], rotation[1], rotation[2], rotation[3], zero);
    const auto distanceAt = [&](double shift) {
        t[4 * axis + 3] = shift;
        const DistanceResult r = engine.distance(0, nullptr, 1, t.data());
        return r.intersecting ? -1.0 : r.distance;
    };
    double lo = 0, hi = 2 * size + 2 * target;
    while (distanceAt(hi) < target) hi *= 2;
    for (int step = 0; step < 200; ++step) {
        const double mid = 0.5 * (lo + hi), d = distanceAt(mid);
        if (std::fabs(d - target) <= 0.05 * target) return t;
        (d < target ? lo : hi) = mid;
    }
    return t;
}

#if defined(BULLETGPU_WITH_FCL)
/// FCL's model of a mesh (OBBRSS, its default split).
std::shared_ptr<fcl::BVHModel<fcl::OBBRSSd>> fclModel(const PlyMesh& mesh) {
    std::vector<fcl::Vector3d> vertices;
    for (std::size_t v = 0; v < mesh.positions.size(); v += 3) {
        vertices.emplace_back(mesh.positions[v], mesh.positions[v + 1], mesh.positions[v + 2]);
    }
    std::vector<fcl::Triangle> triangles;
    for (std::size_t t = 0; t < mesh.indices.size(); t += 3) {
        triangles.emplace_back(mesh.indices[t], mesh.indices[t + 1], mesh.indices[t + 2]);
    }
    auto model = std::make_shared<fcl::BVHModel<fcl::OBBRSSd>>();
    model->beginModel();
    model->addSubModel(vertices, triangles);
    model->endModel();
    return model;
}

/// FCL's bounding-volume and leaf tests for one query, counted by running its traversal node
/// (what fcl::distance runs for two OBBRSS meshes) with statistics on.
std::array<long long, 2> fclTests(const fcl::BVHModel<fcl::OBBRSSd>& model, const fcl::Transform3d& ta,
                                  const fcl::Transform3d& tb) {
    fcl::DistanceRequestd request(true);
    fcl::DistanceResultd result;
    fcl::detail::MeshDistanceTraversalNodeOBBRSS<double> node;
    fcl::detail::initialize(node, model, ta, model, tb, request, result);
    node.enable_statistics = true;
    fcl::detail::distance(&node, nullptr, 2);
    return {static_cast<long long>(node.num_bv_tests), static_cast<long long>(node.num_leaf_tests)};
}

/// A row-major 3x4 as FCL's transform.
fcl::Transform3d fclTransform(const double* m) {
    fcl::Transform3d t = fcl::Transform3d::Identity();
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) t.linear()(r, c) = m[4 * r + c];
        t.translation()(r) = m[4 * r + 3];
    }
    return t;
}
#endif

/// True when two answers agree: both meeting, or the same distance, pair and points.
bool sameAnswer(const DistanceResult& x, const DistanceResult& y) {
    if (x.intersecting || y.intersecting) return x.intersecting == y.intersecting && x.distance == y.distance;
    bool same = x.distance == y.distance && x.triangleA == y.triangleA && x.triangleB == y.triangleB;
    for (int k = 0; k < 3; ++k) same = same && x.pointA[k] == y.pointA[k] && x.pointB[k] == y.pointB[k];
    return same;
}

/// Times every configuration of one mesh and appends its rows to `report`.
void runMesh(const BenchMesh& bench, int repeats, nlohmann::json& report) {
    const PlyMesh& mesh = bench.mesh;
    const auto vertices = static_cast<std::uint32_t>(mesh.positions.size() / 3);
    const auto triangles = static_cast<std::uint32_t>(mesh.indices.size() / 3);
    MeshDistance engine;
    auto start = Clock::now();
    engine.addMesh(mesh.positions.data(), vertices, mesh.indices.data(), triangles, 2);
    const double buildOurs = msSince(start);
    engine.addMesh(mesh.positions.data(), vertices, mesh.indices.data(), triangles, 2);
#if defined(BULLETGPU_WITH_FCL)
    start = Clock::now();
    const auto model = fclModel(mesh);
    const double buildFcl = msSince(start);
#else
    const double buildFcl = NAN;
#endif
    // The CUDA engine, when a device is usable: the same meshes, built on 2 threads and uploaded.
    std::optional<MeshDistance> gpu;
    double buildCuda = NAN;
    if (probeCudaDevice(0).usable) {
        gpu.emplace(Backend::Cuda, 0);
        start = Clock::now();
        gpu->addMesh(mesh.positions.data(), vertices, mesh.indices.data(), triangles, 2);
        buildCuda = msSince(start);
        gpu->addMesh(mesh.positions.data(), vertices, mesh.indices.data(), triangles, 2);
    }
    std::printf("%s: %u triangles, build %.1f ms (ours, 2 threads), %.1f ms (FCL), %.1f ms (CUDA: build and upload)\n",
                bench.name.c_str(), triangles, buildOurs, buildFcl, buildCuda);
    const double size = sizeOf(mesh);
    // The copy beside the mesh along x, unturned and turned, and stacked on it along y (for the
    // sheet: parallel layers, close over their whole area).
    struct Orientation {
        const char* name;
        double q[4];
        int axis;
    };
    const Orientation orientations[] = {
        {"aligned", {1, 0, 0, 0}, 0}, {"turned", {0.9, 0.3, 0.2, 0.1}, 0}, {"stacked", {1, 0, 0, 0}, 1}};
    for (const Orientation& orientation : orientations) {
        for (double gap : {1e-4, 1e-3, 1e-2, 1e-1, 1.0}) {
            const Transform tb = placeAtGap(engine, orientation.q, orientation.axis, gap * size, size);
            std::vector<double> ours2, ours1, fclTimes, ours1Cpu, fclCpu, cudaTimes;
            DistanceResult r2, r1, rc;
            if (gpu) rc = gpu->distance(0, nullptr, 1, tb.data()); // buffers settle
            double fclDistance = NAN;
#if defined(BULLETGPU_WITH_FCL)
            const Transform identity{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
            fcl::CollisionObjectd a(model, fclTransform(identity.data())), b(model, fclTransform(tb.data()));
#endif
            // Interleaved, so that a change in the machine's load hits every contender alike.
            for (int i = 0; i < repeats; ++i) {
                start = Clock::now();
                r2 = engine.distance(0, nullptr, 1, tb.data(), DistanceOptions{2});
                ours2.push_back(msSince(start));
                start = Clock::now();
                double cpu = threadCpuMs();
                r1 = engine.distance(0, nullptr, 1, tb.data(), DistanceOptions{1});
                ours1Cpu.push_back(threadCpuMs() - cpu);
                ours1.push_back(msSince(start));
                if (gpu) {
                    start = Clock::now();
                    rc = gpu->distance(0, nullptr, 1, tb.data());
                    cudaTimes.push_back(msSince(start));
                }
#if defined(BULLETGPU_WITH_FCL)
                fcl::DistanceRequestd request(true);
                fcl::DistanceResultd result;
                start = Clock::now();
                cpu = threadCpuMs();
                fcl::distance(&a, &b, request, result);
                fclCpu.push_back(threadCpuMs() - cpu);
                fclTimes.push_back(msSince(start));
                fclDistance = result.min_distance;
#endif
            }
            const double fclMs = fclTimes.empty() ? NAN : bench::median(fclTimes);
            const double fclCpuMs = fclCpu.empty() ? NAN : bench::median(fclCpu);
            const double ours1CpuMs = bench::median(ours1Cpu);
#if defined(BULLETGPU_WITH_FCL)
            const std::array<long long, 2> fclCounts = fclTests(*model, a.getTransform(), b.getTransform());
#else
            const std::array<long long, 2> fclCounts{-1, -1};
#endif
            const double ms2 = bench::median(ours2), ms1 = bench::median(ours1);
            const double msCuda = cudaTimes.empty() ? NAN : bench::median(cudaTimes);
            const char* cudaSame = !gpu ? "-" : (sameAnswer(r2, rc) && sameAnswer(r1, rc) ? "yes" : "NO");
            std::printf("%-13s %-8s %7.0e %12.6e %12.6e %9.2e %9.3f %9.3f %9.3f %7.2f %9.3f %9.3f %7.2f %10llu %8llu "
                        "%10lld %8lld %9.3f %4s %10llu %8llu\n",
                        bench.name.c_str(), orientation.name, gap, r2.distance, fclDistance,
                        std::fabs(r2.distance - fclDistance), ms2, ms1, fclMs, fclMs / ms2, ours1CpuMs, fclCpuMs,
                        fclCpuMs / ours1CpuMs, static_cast<unsigned long long>(r2.volumeTests),
                        static_cast<unsigned long long>(r2.triangleTests), fclCounts[0], fclCounts[1], msCuda, cudaSame,
                        static_cast<unsigned long long>(rc.volumeTests),
                        static_cast<unsigned long long>(rc.triangleTests));
            report["rows"].push_back({{"mesh", bench.name},
                                      {"triangles", triangles},
                                      {"orientation", orientation.name},
                                      {"gap_over_size", gap},
                                      {"size", size},
                                      {"distance_ours", r2.distance},
                                      {"distance_ours_1t", r1.distance},
                                      {"distance_fcl", fclDistance},
                                      {"intersecting", r2.intersecting},
                                      {"ms_ours_2t", ms2},
                                      {"ms_ours_1t", ms1},
                                      {"ms_fcl", fclMs},
                                      {"fcl_over_ours_2t", fclMs / ms2},
                                      {"cpu_ms_ours_1t", ours1CpuMs},
                                      {"cpu_ms_fcl", fclCpuMs},
                                      {"fcl_over_ours_cpu_1t", fclCpuMs / ours1CpuMs},
                                      {"rss_tests", r2.volumeTests},
                                      {"triangle_tests", r2.triangleTests},
                                      {"fcl_bv_tests", fclCounts[0]},
                                      {"fcl_leaf_tests", fclCounts[1]},
                                      {"build_ms_ours_2t", buildOurs},
                                      {"build_ms_fcl", buildFcl},
                                      {"ms_cuda", msCuda},
                                      {"distance_cuda", rc.distance},
                                      {"cuda_equals_cpu", std::string(cudaSame)},
                                      {"cuda_rss_tests", rc.volumeTests},
                                      {"cuda_triangle_tests", rc.triangleTests},
                                      {"build_ms_cuda", buildCuda},
                                      {"samples_ms_cuda", cudaTimes},
                                      {"samples_ms_ours_2t", ours2}});
        }
    }
}

} // namespace

int main(int argc, char** argv) {
    const std::string dataDir = argc > 1 ? argv[1] : bulletgpu::test::sharedDataDir();
    const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 7;
    const std::string jsonPath = argc > 3 ? argv[3] : "distance_bench.json";
    const bench::SceneFilter filter(argc > 4 ? argv[4] : "");
    nlohmann::json report;
    report["machine"] = {
        {"cpu", cpuModel()},
        {"hardware_threads", std::thread::hardware_concurrency()},
        {"compiler", compilerName()},
#if defined(BULLETGPU_WITH_FCL)
        {"fcl", FCL_VERSION},
#else
        {"fcl", "not built (libfcl-dev not found)"},
#endif
        {"repeats", repeats}
    };
    report["rows"] = nlohmann::json::array();
#if !defined(BULLETGPU_WITH_FCL)
    std::printf("note: built without FCL (libfcl-dev not found): the FCL columns are nan\n");
#endif
    const CudaDeviceProbe probe = probeCudaDevice(0);
    report["machine"]["cuda"] = probe.usable ? probe.name : "not usable: " + probe.reason;
    std::printf("CUDA: %s\n", probe.usable ? probe.name.c_str() : ("not usable: " + probe.reason).c_str());
    std::printf("%-13s %-8s %7s %12s %12s %9s %9s %9s %9s %7s %9s %9s %7s %10s %8s %10s %8s %9s %4s %10s %8s\n", "mesh",
                "turn", "gap", "ours", "fcl", "|diff|", "ours 2t", "ours 1t", "fcl", "fcl/2t", "cpu 1t", "cpu fcl",
                "fcl/1t", "rss tests", "tri tests", "fcl bv", "fcl tri", "cuda", "same", "cuda rss", "cuda tri");
    std::vector<BenchMesh> meshes;
    meshes.push_back({"torus-100k", torusMesh(250, 200, 1.0, 0.35)});
    meshes.push_back({"sheet-100k", gridMesh(225, 225, false, false, [](double u, double v, double* p) {
                          const double x = 2 * u - 1, z = 2 * v - 1;
                          p[0] = x;
                          p[1] = 0.1 * std::sin(3 * x) * std::cos(2 * z) + 0.05 * std::sin(7 * x + 5 * z);
                          p[2] = z;
                      })});
    const char* files[][2] = {{"cloth-ball92", "cloth-ball/frames/cloth_ball92.ply"},
                              {"rod-twist3036", "rod-twist/frames/3036.ply"}};
    for (const auto& file : files) {
        try {
            meshes.push_back({file[0], readPlyMesh(dataDir + "/ccd-frames/" + file[1])});
        } catch (const std::exception& error) {
            std::printf("%s skipped: %s\n", file[0], error.what());
        }
    }
    for (const BenchMesh& mesh : meshes) {
        if (filter.chosen(mesh.name)) runMesh(mesh, repeats, report);
    }
    std::ofstream(jsonPath) << report.dump(2) << "\n";
    std::printf("times in ms per query (medians of %d); gap: distance over the mesh's size; fcl/2t: FCL's time over "
                "ours on 2 threads; cpu: the calling thread's CPU time, ours on 1 thread and FCL, and their ratio; "
                "cuda: ours on the CUDA device, same: its answer equals the CPU's\n"
                "JSON written to %s\n",
                repeats, jsonPath.c_str());
    return 0;
}
