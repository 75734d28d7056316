// SPDX-License-Identifier: Zlib
// bulletgpu-bench-mesh (issue 27): whole dynamics steps of mesh scenes with Bullet's narrow phase
// and with bulletgpu::CollisionDispatcher (CPU backend, and CUDA backend when a device is usable),
// same dbvt broad phase, same solver, in one process, one after the other from the same start:
//  - gimpact-pile-256: 256 GImpact meshes of 1,000 to 5,000 triangles on a static BVH ground,
//    Bullet's side btCollisionDispatcher + btGImpactCollisionAlgorithm::registerAlgorithm;
//  - benchmark-6: BenchmarkDemo 6, 1,000 convex hulls on a landscape, Bullet's side its default
//    convex-concave path.
// Each step is stepSimulation(1/60, 0) (exactly one internal step). Times: the whole step and the
// dispatcher's dispatchAllCollisionPairs (the narrow phase's own time), and for ours the mesh
// batch (meshStats().totalMs) and its contact query (queryMs). At the end: rest heights, bodies
// below the ground, bodies at rest, manifolds, contacts and the deepest manifold point.
//
// Usage: bulletgpu-bench-mesh [steps] [json file] [scenes, comma-separated] [threads] [sides]
//        (defaults: each scene's steps (pile 150, benchmark-6 300, as 0), mesh_dispatcher_bench.json,
//        all, 2, both; sides: bullet, bulletgpu, cuda or both)
#include "bench/benchmark_demo6_scene.h"
#include "bench/machine_info.h"
#include "bench/mesh_pile_scene.h"
#include "bench/sample_statistics.h"
#include "bench/scene_filter.h"
#include "kernels/common/cuda_device.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <ctime>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

using json = nlohmann::json;
using bulletgpu::bench::MeshBenchWorld;
using bulletgpu::bench::MeshNarrow;

/// A scene: how to build it, the steps it runs by default and the height of its ground at (x, z).
struct Scene {
    const char* name;
    int steps;
    std::function<void(MeshBenchWorld&)> build;
    std::function<btScalar(btScalar, btScalar)> groundHeight;
};

/// Milliseconds of CPU time the process has used (all its threads).
double processCpuMs() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6;
}

/// Median, min and max of a sample, and its sum.
json summary(const std::vector<double>& ms) {
    return {{"median", bulletgpu::bench::median(ms)},
            {"min", *std::min_element(ms.begin(), ms.end())},
            {"max", *std::max_element(ms.begin(), ms.end())},
            {"sum", bulletgpu::bench::mean(ms) * static_cast<double>(ms.size())}};
}

/// The state at the end of a run: where the bodies rest and what the manifolds hold.
json endState(MeshBenchWorld& world, const Scene& scene) {
    const std::vector<btRigidBody*>& bodies = world.dynamicBodies();
    double sumY = 0, maxY = -1e30;
    int below = 0, resting = 0;
    for (const btRigidBody* body : bodies) {
        const btVector3& p = body->getCenterOfMassPosition();
        sumY += p.y();
        maxY = std::max(maxY, double(p.y()));
        if (p.y() < scene.groundHeight(p.x(), p.z())) ++below;
        if (body->getLinearVelocity().length() < btScalar(0.1)) ++resting;
    }
    btDispatcher* dispatcher = world.world().getDispatcher();
    int manifolds = 0, contacts = 0;
    double deepest = 0;
    for (int i = 0; i < dispatcher->getNumManifolds(); ++i) {
        const btPersistentManifold* manifold = dispatcher->getManifoldByIndexInternal(i);
        if (manifold->getNumContacts() > 0) ++manifolds;
        contacts += manifold->getNumContacts();
        for (int c = 0; c < manifold->getNumContacts(); ++c)
            deepest = std::max(deepest, -double(manifold->getContactPoint(c).getDistance()));
    }
    return {{"meanY", sumY / double(bodies.size())},
            {"maxY", maxY},
            {"belowGround", below},
            {"resting", resting},
            {"bodies", bodies.size()},
            {"manifolds", manifolds},
            {"contacts", contacts},
            {"maxPenetration", deepest}};
}

/// Builds the scene on one narrow phase, steps it and returns its row.
json runScene(const Scene& scene, MeshNarrow narrow, int steps, int threads) {
    const auto start = std::chrono::steady_clock::now();
    MeshBenchWorld world(narrow, threads);
    scene.build(world);
    const double buildMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::vector<double> stepMs, cpuMs, dispatchMs, batchMs, queryMs;
    unsigned long long triangleTests = 0, featureContacts = 0, maxPairs = 0;
    for (int i = 0; i < steps; ++i) {
        const auto before = std::chrono::steady_clock::now();
        const double cpuBefore = processCpuMs();
        world.world().stepSimulation(btScalar(1) / 60, 0);
        stepMs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - before).count());
        cpuMs.push_back(processCpuMs() - cpuBefore);
        dispatchMs.push_back(world.lastDispatchMs());
        if (const bulletgpu::CollisionDispatcher* ours = world.ours()) {
            const bulletgpu::MeshBatchStats& stats = ours->meshStats();
            batchMs.push_back(stats.totalMs);
            queryMs.push_back(stats.queryMs);
            triangleTests += stats.triangleTests;
            featureContacts += stats.featureContacts;
            maxPairs = std::max<unsigned long long>(maxPairs, stats.pairs);
        }
    }
    json row = {{"scene", scene.name},
                {"narrow", bulletgpu::bench::narrowName(narrow)},
                {"steps", steps},
                {"buildMs", buildMs},
                {"stepMs", summary(stepMs)},
                {"stepCpuMs", summary(cpuMs)},
                {"dispatchMs", summary(dispatchMs)},
                {"end", endState(world, scene)}};
    if (!batchMs.empty()) {
        row["batchMs"] = summary(batchMs);
        row["queryMs"] = summary(queryMs);
        row["triangleTests"] = triangleTests;
        row["featureContacts"] = featureContacts;
        row["maxMeshPairs"] = maxPairs;
    }
    return row;
}

/// Prints a row's times and end state.
void printRow(const json& row) {
    const json& step = row["stepMs"];
    const json& dispatch = row["dispatchMs"];
    const json& end = row["end"];
    std::printf("%-17s %-9s %5d %7.2f %7.2f %7.2f %8.2f %8.2f %7.2f %8.2f", row["scene"].get<std::string>().c_str(),
                row["narrow"].get<std::string>().c_str(), row["steps"].get<int>(), step["median"].get<double>(),
                step["min"].get<double>(), step["max"].get<double>(), step["sum"].get<double>() / 1000,
                row["stepCpuMs"]["sum"].get<double>() / 1000, dispatch["median"].get<double>(),
                dispatch["sum"].get<double>() / 1000);
    if (row.contains("batchMs")) {
        std::printf(" %7.2f %7.2f %11llu", row["batchMs"]["sum"].get<double>() / 1000,
                    row["queryMs"]["sum"].get<double>() / 1000, row["triangleTests"].get<unsigned long long>());
    } else {
        std::printf(" %7s %7s %11s", "-", "-", "not counted");
    }
    std::printf(" | %6.3f %6.3f %4d %4d/%-4d %5d %6d %7.4f\n", end["meanY"].get<double>(), end["maxY"].get<double>(),
                end["belowGround"].get<int>(), end["resting"].get<int>(), end["bodies"].get<int>(),
                end["manifolds"].get<int>(), end["contacts"].get<int>(), end["maxPenetration"].get<double>());
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "--help") {
        std::puts("usage: bulletgpu-bench-mesh [steps] [json file] [scenes] [threads] [sides]\n"
                  "  steps: 0 (default) for each scene's own (gimpact-pile-256 150, benchmark-6 300);\n"
                  "  scenes: comma-separated from gimpact-pile-256, benchmark-6 (default all); threads: ours (2);\n"
                  "  sides: bullet, bulletgpu, cuda or both (default: Bullet's and ours on the CPU, and ours on\n"
                  "  CUDA when a device is usable)");
        return 0;
    }
    const int steps = argc > 1 ? std::max(0, std::atoi(argv[1])) : 0;
    const std::string jsonPath = argc > 2 ? argv[2] : "mesh_dispatcher_bench.json";
    const bulletgpu::bench::SceneFilter filter(argc > 3 ? argv[3] : "");
    const int threads = argc > 4 ? std::atoi(argv[4]) : 2;
    const std::string sides = argc > 5 ? argv[5] : "both";

    json report;
    report["machine"] = {{"cpuModel", bulletgpu::cpuModel()},
                         {"logicalCores", std::thread::hardware_concurrency()},
                         {"loadAverageAtStart", bulletgpu::loadAverages()},
                         {"compiler", bulletgpu::compilerName()},
                         {"bulletVersion", btGetVersion()},
                         {"btUseDoublePrecision", sizeof(btScalar) == sizeof(double)},
                         {"date", bulletgpu::utcTimestamp()}};
    report["command"] = {
        {"steps", steps}, {"scenes", argc > 3 ? argv[3] : "all"}, {"threads", threads}, {"sides", sides}};
    report["rows"] = json::array();
    std::printf("%s, %u logical cores, load %s, %s, Bullet %d, %s\n", bulletgpu::cpuModel().c_str(),
                std::thread::hardware_concurrency(), bulletgpu::loadAverages().c_str(),
                bulletgpu::compilerName().c_str(), btGetVersion(),
                report["machine"]["date"].get<std::string>().c_str());
    const bulletgpu::CudaDeviceProbe probe = bulletgpu::probeCudaDevice(0);
    std::printf("steps of 1/60 s; ours: CPU backend, %d threads; CUDA: %s\n", threads,
                probe.usable ? probe.name.c_str() : probe.reason.c_str());
    std::printf("%-17s %-9s %5s %7s %7s %7s %8s %8s %7s %8s %7s %7s %11s | %6s %6s %4s %9s %5s %6s %7s\n", "scene",
                "narrow", "steps", "step", "min", "max", "steps s", "cpu s", "narrow", "narrow s", "batch s", "query s",
                "tri tests", "meanY", "maxY", "fell", "rest", "mfds", "points", "deepest");

    const Scene scenes[] = {
        {"gimpact-pile-256", 150, [](MeshBenchWorld& world) { bulletgpu::bench::buildMeshPile(world); },
         [](btScalar x, btScalar z) {
             return bulletgpu::bench::cPileBump * btSin(x * btScalar(0.7)) * btCos(z * btScalar(0.5));
         }},
        {"benchmark-6", 300, bulletgpu::bench::buildBenchmarkDemo6,
         [](btScalar x, btScalar z) { return bulletgpu::bench::landscapeHeight(x, z) - 25; }}};
    for (const Scene& scene : scenes) {
        if (!filter.chosen(scene.name)) continue;
        json rows[3];
        for (const MeshNarrow narrow : {MeshNarrow::Bullet, MeshNarrow::BulletGpu, MeshNarrow::BulletGpuCuda}) {
            const char* side = bulletgpu::bench::narrowName(narrow);
            const bool cuda = narrow == MeshNarrow::BulletGpuCuda;
            if (sides == "both" ? cuda && !probe.usable : sides != side) continue;
            json row = runScene(scene, narrow, steps > 0 ? steps : scene.steps, threads);
            printRow(row);
            report["rows"].push_back(row);
            rows[static_cast<int>(narrow)] = row;
        }
        if (sides != "both") continue;
        for (int ours = 1; ours < 3; ++ours) {
            if (rows[ours].is_null()) continue;
            const auto ratio = [&](const char* what, const char* stat) {
                return rows[0][what][stat].get<double>() / rows[ours][what][stat].get<double>();
            };
            std::printf("%-17s Bullet/ours (%s): whole steps %.2fx (sum), %.2fx (median), %.2fx (CPU time); narrow "
                        "phase %.2fx (sum), %.2fx (median)\n",
                        scene.name, ours == 1 ? "CPU" : "CUDA", ratio("stepMs", "sum"), ratio("stepMs", "median"),
                        ratio("stepCpuMs", "sum"), ratio("dispatchMs", "sum"), ratio("dispatchMs", "median"));
        }
    }
    report["machine"]["loadAverageAtEnd"] = bulletgpu::loadAverages();
    std::ofstream(jsonPath) << report.dump(2) << "\n";
    std::printf("ms per step (median, min, max; s: sum over the steps; cpu s: the process's CPU time over the "
                "steps, all threads); narrow = dispatchAllCollisionPairs (median, "
                "sum); batch s, query s: our mesh batch and its contact query (sums); tri tests: sum over the steps; "
                "end state: "
                "centre heights, fell = centres below the ground under them, rest = |v| < 0.1 m/s, mfds/points = "
                "manifolds with points and their points, deepest = largest -distance of a point\n");
    std::printf("load at end %s; JSON written to %s\n", bulletgpu::loadAverages().c_str(), jsonPath.c_str());
    return 0;
}
