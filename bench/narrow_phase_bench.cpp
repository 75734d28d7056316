// SPDX-License-Identifier: Zlib
// Narrow-phase benchmark: self-collision of the real ccd-frames meshes (two frames, alternated)
// and of a procedural folded cloth falling over a ball (120 frames). For each engine (descent,
// leaf walk and fronts on 1 and 2 CPU threads; leaf walk and fronts with CUDA when a device is
// usable): build, refit and query times (exact triangle tests included), whole frame, box and
// triangle tests and front size; against Bullet's btDbvt on the same triangle boxes in the same
// run (insertion build, leaf updates as refit, btDbvt::collideTT of the root with itself, which
// reports overlapping boxes only). Prints a table and writes JSON.
//
// Usage: bulletgpu-bench-narrow [data dir] [repeats] [json file]
#include "bench/sample_statistics.h"
#include "kernels/common/cuda_device.h"
#include "kernels/common/stopwatch.h"
#include "kernels/narrow/mesh_generators.h"
#include "kernels/narrow/ply_mesh.h"
#include "kernels/narrow/triangle_mesh_set.h"

#include <BulletCollision/BroadphaseCollision/btDbvt.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace bulletgpu;

namespace {

/// Frames of the procedural scene.
constexpr int cAnimationFrames = 120;
/// Grid side of the procedural cloth (2 * 199^2 = 79,202 triangles).
constexpr std::uint32_t cClothSide = 200;

/// One engine under test.
struct Engine {
    const char* name;
    Backend backend;
    int threads;
    NarrowTraversal traversal;
};

/// Counted frames of one scene: the first builds, the others refit and query.
using Frames = std::vector<PlyMesh>;

/// Timings of one engine on one scene (medians in milliseconds).
struct Timings {
    double buildMs = 0, refitMs = 0, queryMs = 0, testMs = 0, frameMs = 0;
    std::uint64_t pairs = 0;         ///< Contacts of the last frame (dbvt: overlapping boxes).
    std::uint64_t boxTests = 0;      ///< Box tests of the last frame.
    std::uint64_t triangleTests = 0; ///< Exact triangle tests of the last frame.
    std::uint64_t frontEntries = 0;  ///< Front entries after the last frame.
};

/// Counts the leaf pairs btDbvt::collideTT reports, skipping a leaf with itself.
struct PairCounter : btDbvt::ICollide {
    std::uint64_t pairs = 0;
    void Process(const btDbvtNode* a, const btDbvtNode* b) override { pairs += a != b; }
};

/// The float boxes of a frame's triangles.
std::vector<NarrowBox> boxesOf(const PlyMesh& mesh) {
    std::vector<NarrowBox> boxes(mesh.indices.size() / 3);
    for (std::uint32_t t = 0; t < boxes.size(); ++t) {
        boxes[t] = triangleBox(loadTriangle(mesh.positions.data(), mesh.indices.data(), t, nullptr));
    }
    return boxes;
}

/// btDbvt volume of a box.
btDbvtVolume volumeOf(const NarrowBox& b) {
    return btDbvtVolume::FromMM(btVector3(b.lo[0], b.lo[1], b.lo[2]), btVector3(b.hi[0], b.hi[1], b.hi[2]));
}

/// The engine over `steps` frames after the build on frames[0]; frame s is frames[s % size].
Timings timeEngine(const Frames& frames, int steps, const Engine& engine, int repeats) {
    std::vector<double> build, refit, query, test, frame;
    Timings result;
    for (int r = 0; r < repeats; ++r) {
        TriangleMeshSet set(engine.backend, engine.backend == Backend::Cuda ? 0 : engine.threads);
        set.setTraversal(engine.traversal);
        const PlyMesh& f0 = frames[0];
        const std::uint32_t mesh = set.addMesh(f0.positions.data(), static_cast<std::uint32_t>(f0.positions.size() / 3),
                                               f0.indices.data(), static_cast<std::uint32_t>(f0.indices.size() / 3));
        std::vector<TriangleContact> contacts;
        set.findSelfContacts(mesh, contacts);
        build.push_back(set.stats().buildMs);
        for (int step = 1; step <= steps; ++step) {
            const Clock::time_point start = Clock::now();
            set.setPositions(mesh, frames[step % frames.size()].positions.data());
            set.findSelfContacts(mesh, contacts);
            frame.push_back(millisecondsSince(start));
            refit.push_back(set.stats().refitMs);
            query.push_back(set.stats().traverseMs);
            test.push_back(set.stats().testMs);
            result.pairs = set.stats().contacts;
            result.boxTests = set.stats().boxTests;
            result.triangleTests = set.stats().triangleTests;
            result.frontEntries = set.stats().frontEntries;
        }
    }
    result.buildMs = bench::median(build);
    result.refitMs = bench::median(refit);
    result.queryMs = bench::median(query);
    result.testMs = bench::median(test);
    result.frameMs = bench::median(frame);
    return result;
}

/// btDbvt on the same boxes and frames: insertion build, leaf updates as refit, collideTT.
Timings timeDbvt(const Frames& frames, int steps, int repeats) {
    std::vector<std::vector<NarrowBox>> boxes;
    for (const PlyMesh& f : frames) boxes.push_back(boxesOf(f));
    std::vector<double> build, refit, query, frame;
    Timings result;
    for (int r = 0; r < repeats; ++r) {
        btDbvt tree;
        std::vector<btDbvtNode*> leaves(boxes[0].size());
        Clock::time_point start = Clock::now();
        for (std::size_t t = 0; t < leaves.size(); ++t) leaves[t] = tree.insert(volumeOf(boxes[0][t]), nullptr);
        build.push_back(millisecondsSince(start));
        for (int step = 1; step <= steps; ++step) {
            const std::vector<NarrowBox>& now = boxes[step % boxes.size()];
            start = Clock::now();
            for (std::size_t t = 0; t < leaves.size(); ++t) {
                btDbvtVolume volume = volumeOf(now[t]);
                tree.update(leaves[t], volume);
            }
            const double refitMs = millisecondsSince(start);
            refit.push_back(refitMs);
            PairCounter counter;
            start = Clock::now();
            tree.collideTT(tree.m_root, tree.m_root, counter);
            query.push_back(millisecondsSince(start));
            frame.push_back(refitMs + query.back());
            result.pairs = counter.pairs;
        }
    }
    result.buildMs = bench::median(build);
    result.refitMs = bench::median(refit);
    result.queryMs = bench::median(query);
    result.frameMs = bench::median(frame);
    return result;
}

/// Runs every engine and btDbvt on one scene; prints and records the rows.
void runScene(const char* scene, const Frames& frames, int steps, int repeats, const std::vector<Engine>& engines,
              nlohmann::json& report) {
    const std::size_t triangles = frames[0].indices.size() / 3;
    std::vector<std::pair<std::string, Timings>> runs;
    for (const Engine& engine : engines) runs.emplace_back(engine.name, timeEngine(frames, steps, engine, repeats));
    runs.emplace_back("btDbvt", timeDbvt(frames, steps, repeats));
    for (const auto& [engine, t] : runs) {
        std::printf("%-13s %7zu %-15s %8.2f %8.3f %8.3f %8.3f %8.3f %9llu %10llu %9llu %9llu\n", scene, triangles,
                    engine.c_str(), t.buildMs, t.refitMs, t.queryMs, t.testMs, t.frameMs,
                    static_cast<unsigned long long>(t.pairs), static_cast<unsigned long long>(t.boxTests),
                    static_cast<unsigned long long>(t.triangleTests), static_cast<unsigned long long>(t.frontEntries));
        report.push_back({{"scene", scene},
                          {"triangles", triangles},
                          {"frames", steps},
                          {"engine", engine},
                          {"build_ms", t.buildMs},
                          {"refit_ms", t.refitMs},
                          {"query_ms", t.queryMs},
                          {"exact_test_ms", t.testMs},
                          {"frame_ms", t.frameMs},
                          {"pairs", t.pairs},
                          {"box_tests", t.boxTests},
                          {"triangle_tests", t.triangleTests},
                          {"front_entries", t.frontEntries},
                          {"pairs_meaning", engine == "btDbvt" ? "overlapping boxes" : "intersecting triangles"}});
    }
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
    const char* fromEnv = std::getenv("BULLETGPU_DATA_DIR");
    const std::string dataDir = argc > 1 ? argv[1] : (fromEnv != nullptr ? fromEnv : "../shared/data");
    const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
    const std::string jsonPath = argc > 3 ? argv[3] : "narrow_phase_bench.json";
    std::vector<Engine> engines = {{"descent 1t", Backend::Cpu, 1, NarrowTraversal::Descent},
                                   {"descent 2t", Backend::Cpu, 2, NarrowTraversal::Descent},
                                   {"leafwalk 2t", Backend::Cpu, 2, NarrowTraversal::LeafWalk},
                                   {"fronts 1t", Backend::Cpu, 1, NarrowTraversal::Fronts},
                                   {"fronts 2t", Backend::Cpu, 2, NarrowTraversal::Fronts}};
    const CudaDeviceProbe probe = probeCudaDevice(0);
    if (probe.usable) {
        engines.push_back({"cuda leafwalk", Backend::Cuda, 0, NarrowTraversal::LeafWalk});
        engines.push_back({"cuda fronts", Backend::Cuda, 0, NarrowTraversal::Fronts});
        std::printf("CUDA device: %s\n", probe.name.c_str());
    } else {
        std::printf("CUDA rows skipped: %s\n", probe.reason.c_str());
    }
    nlohmann::json report = nlohmann::json::array();
    std::printf("%-13s %7s %-15s %8s %8s %8s %8s %8s %9s %10s %9s %9s\n", "scene", "tris", "engine", "build", "refit",
                "query", "exact", "frame", "pairs", "box tests", "tri tests", "front");
    struct Scene {
        const char* name;
        const char* frames[2];
    };
    const Scene scenes[] = {{"cloth-funnel", {"227", "228"}},
                            {"cloth-ball", {"cloth_ball92", "cloth_ball93"}},
                            {"rod-twist", {"3036", "3037"}}};
    for (const Scene& scene : scenes) {
        Frames frames(2);
        try {
            for (int f = 0; f < 2; ++f) {
                frames[f] = readPlyMesh(dataDir + "/ccd-frames/" + scene.name + "/frames/" + scene.frames[f] + ".ply");
            }
        } catch (const std::exception& error) {
            std::printf("%-13s skipped: %s\n", scene.name, error.what());
            continue;
        }
        runScene(scene.name, frames, 4, repeats, engines, report);
    }
    Frames animation;
    for (int f = 0; f < cAnimationFrames; ++f) animation.push_back(drapedCloth(cClothSide, 0.05 * f));
    runScene("draped-cloth", animation, cAnimationFrames - 1, 1, engines, report);
    std::ofstream(jsonPath) << report.dump(2) << "\n";
    std::printf("times in ms (medians); exact = exact tests and sort, part of query; frame = setPositions + query\n");
    std::printf("JSON written to %s\n", jsonPath.c_str());
    return 0;
}
