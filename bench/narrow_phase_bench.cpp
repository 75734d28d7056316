// SPDX-License-Identifier: Zlib
// Narrow-phase benchmark: self-collision of the real ccd-frames meshes (two frames, alternated),
// of a procedural folded cloth falling over a ball (120 frames) and of drifting triangle soup
// (60 frames, where a tree only refitted degrades: everywhere, or only over one corner, where
// restructuring the degraded subtrees is set against rebuilding the whole tree). For each
// engine (descent, leaf walk and fronts on 1 and 2 CPU threads, with AABBs or OBBs, with and
// without rebuilds on the fronts' measure; leaf walk and fronts with CUDA when a device is
// usable): build, refit and query times (exact triangle tests included), median and mean
// frame, box and triangle tests, front size, rebuilds and restructured subtrees.
// Against Bullet's btDbvt on the same triangle boxes in the same run (insertion build, leaf
// updates as refit, btDbvt::collideTT of the root with itself, which reports overlapping boxes
// only), and btDbvt followed by the same exact triangle tests on one thread (the whole narrow
// phase a Bullet user would write with it). Prints a table and writes JSON.
//
// Usage: bulletgpu-bench-narrow [data dir] [repeats] [json file] [scenes, comma-separated]
#include "bench/sample_statistics.h"
#include "kernels/common/cuda_device.h"
#include "kernels/common/stopwatch.h"
#include "kernels/narrow/traversal/bvtt_front_ops.h"
#include "tests/support/mesh_generators.h"
#include "tests/support/ply_mesh.h"
#include "kernels/narrow/engine/triangle_mesh_set.h"

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
/// Frames and triangles of the drifting soup.
constexpr int cSoupFrames = 60;
constexpr std::uint32_t cSoupTriangles = 50000;

/// One engine under test.
struct Engine {
    const char* name;
    Backend backend;
    int threads;
    NarrowTraversal traversal;
    BoundingVolume volume = BoundingVolume::Aabb;
    double rebuildRatio = cDefaultRebuildRatio;
    bool restructure = true; ///< Degraded subtrees rebuilt in place (else whole trees).
};

/// Counted frames of one scene: the first builds, the others refit and query.
using Frames = std::vector<PlyMesh>;

/// Timings of one engine on one scene (medians in milliseconds).
struct Timings {
    double buildMs = 0, refitMs = 0, queryMs = 0, testMs = 0, frameMs = 0;
    double meanFrameMs = 0;          ///< Mean frame (rebuilds and restructurings spread over it).
    std::uint32_t rebuilds = 0;      ///< Trees rebuilt after the first build (last repeat).
    std::uint32_t restructured = 0;  ///< Subtrees restructured (last repeat).
    std::uint64_t pairs = 0;         ///< Contacts of the last frame (dbvt: overlapping boxes).
    std::uint64_t boxTests = 0;      ///< Box tests of the last frame.
    std::uint64_t triangleTests = 0; ///< Exact triangle tests of the last frame.
    std::uint64_t frontEntries = 0;  ///< Front entries after the last frame.
};

/// Collects the triangle pairs btDbvt::collideTT reports, skipping a leaf with itself.
struct PairCollector : btDbvt::ICollide {
    std::vector<std::pair<std::uint32_t, std::uint32_t>>* pairs;
    explicit PairCollector(std::vector<std::pair<std::uint32_t, std::uint32_t>>& out) : pairs(&out) {}
    void Process(const btDbvtNode* a, const btDbvtNode* b) override {
        if (a != b)
            pairs->emplace_back(static_cast<std::uint32_t>(a->dataAsInt), static_cast<std::uint32_t>(b->dataAsInt));
    }
};

/// The exact tests of btDbvt's pairs on one thread, as TriangleMeshSet makes them (pairs
/// sharing a vertex skipped, intersection segments, contacts sorted); returns the contacts.
std::uint64_t exactTests(const PlyMesh& mesh, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pairs,
                         std::uint64_t& tested, std::vector<TriangleContact>& contacts) {
    contacts.clear();
    tested = 0;
    const TriangleSource source{nullptr, mesh.positions.data(), mesh.indices.data(), nullptr, nullptr};
    for (const auto& [ta, tb] : pairs) {
        if (shareVertex(mesh.indices.data(), ta, tb)) continue;
        ++tested;
        TriangleContact contact{};
        if (testTrianglePair(ta, source, 0, tb, source, 0, true, contact)) contacts.push_back(contact);
    }
    std::sort(contacts.begin(), contacts.end(), [](const TriangleContact& x, const TriangleContact& y) {
        return x.triangleA != y.triangleA ? x.triangleA < y.triangleA : x.triangleB < y.triangleB;
    });
    return contacts.size();
}

/// The float boxes of a frame's triangles.
std::vector<FloatBox> boxesOf(const PlyMesh& mesh) {
    std::vector<FloatBox> boxes(mesh.indices.size() / 3);
    for (std::uint32_t t = 0; t < boxes.size(); ++t) {
        boxes[t] = triangleBox(loadTriangle(mesh.positions.data(), mesh.indices.data(), t, nullptr));
    }
    return boxes;
}

/// btDbvt volume of a box.
btDbvtVolume volumeOf(const FloatBox& b) {
    return btDbvtVolume::FromMM(btVector3(b.lo[0], b.lo[1], b.lo[2]), btVector3(b.hi[0], b.hi[1], b.hi[2]));
}

/// The engine over `steps` frames after the build on frames[0]; frame s is frames[s % size].
Timings timeEngine(const Frames& frames, int steps, const Engine& engine, int repeats) {
    std::vector<double> build, refit, query, test, frame;
    Timings result;
    for (int r = 0; r < repeats; ++r) {
        TriangleMeshSet set(engine.backend, engine.backend == Backend::Cuda ? 0 : engine.threads);
        set.setTraversal(engine.traversal);
        set.setRebuildRatio(engine.rebuildRatio);
        set.setRestructuring(engine.restructure);
        const PlyMesh& f0 = frames[0];
        const std::uint32_t mesh = set.addMesh(f0.positions.data(), static_cast<std::uint32_t>(f0.positions.size() / 3),
                                               f0.indices.data(), static_cast<std::uint32_t>(f0.indices.size() / 3));
        set.setBoundingVolume(mesh, engine.volume);
        std::vector<TriangleContact> contacts;
        set.findSelfContacts(mesh, contacts);
        build.push_back(set.stats().buildMs);
        result.rebuilds = result.restructured = 0;
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
            result.rebuilds += set.stats().rebuilt;
            result.restructured += set.stats().subtreesRestructured;
        }
    }
    result.buildMs = bench::median(build);
    result.refitMs = bench::median(refit);
    result.queryMs = bench::median(query);
    result.testMs = bench::median(test);
    result.frameMs = bench::median(frame);
    result.meanFrameMs = bench::mean(frame);
    return result;
}

/// btDbvt on the same boxes and frames: insertion build, leaf updates as refit, collideTT; the
/// second result adds the exact tests of its pairs (one thread) to the query.
std::pair<Timings, Timings> timeDbvt(const Frames& frames, int steps, int repeats) {
    std::vector<std::vector<FloatBox>> boxes;
    for (const PlyMesh& f : frames) boxes.push_back(boxesOf(f));
    std::vector<double> build, refit, query, frame, exact, exactFrame;
    Timings boxesOnly, withExact;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    std::vector<TriangleContact> contacts;
    for (int r = 0; r < repeats; ++r) {
        btDbvt tree;
        std::vector<btDbvtNode*> leaves(boxes[0].size());
        Clock::time_point start = Clock::now();
        for (std::size_t t = 0; t < leaves.size(); ++t) {
            leaves[t] = tree.insert(volumeOf(boxes[0][t]), nullptr);
            leaves[t]->dataAsInt = static_cast<int>(t);
        }
        build.push_back(millisecondsSince(start));
        for (int step = 1; step <= steps; ++step) {
            const std::size_t f = step % boxes.size();
            start = Clock::now();
            for (std::size_t t = 0; t < leaves.size(); ++t) {
                btDbvtVolume volume = volumeOf(boxes[f][t]);
                tree.update(leaves[t], volume);
            }
            const double refitMs = millisecondsSince(start);
            refit.push_back(refitMs);
            pairs.clear();
            PairCollector collector(pairs);
            start = Clock::now();
            tree.collideTT(tree.m_root, tree.m_root, collector);
            query.push_back(millisecondsSince(start));
            frame.push_back(refitMs + query.back());
            boxesOnly.pairs = pairs.size();
            start = Clock::now();
            withExact.pairs = exactTests(frames[f], pairs, withExact.triangleTests, contacts);
            exact.push_back(query.back() + millisecondsSince(start));
            exactFrame.push_back(refitMs + exact.back());
            boxesOnly.meanFrameMs += frame.back() / (repeats * steps);
            withExact.meanFrameMs += exactFrame.back() / (repeats * steps);
        }
    }
    boxesOnly.buildMs = withExact.buildMs = bench::median(build);
    boxesOnly.refitMs = withExact.refitMs = bench::median(refit);
    boxesOnly.queryMs = bench::median(query);
    boxesOnly.frameMs = bench::median(frame);
    withExact.queryMs = bench::median(exact);
    withExact.testMs = withExact.queryMs - boxesOnly.queryMs;
    withExact.frameMs = bench::median(exactFrame);
    return {boxesOnly, withExact};
}

/// Runs every engine and btDbvt on one scene; prints and records the rows.
void runScene(const char* scene, const Frames& frames, int steps, int repeats, const std::vector<Engine>& engines,
              nlohmann::json& report) {
    const std::size_t triangles = frames[0].indices.size() / 3;
    std::vector<std::pair<std::string, Timings>> runs;
    for (const Engine& engine : engines) runs.emplace_back(engine.name, timeEngine(frames, steps, engine, repeats));
    const auto [boxesOnly, withExact] = timeDbvt(frames, steps, repeats);
    runs.emplace_back("btDbvt", boxesOnly);
    runs.emplace_back("btDbvt+exact", withExact);
    for (const auto& [engine, t] : runs) {
        std::printf("%-13s %7zu %-22s %8.2f %8.3f %8.3f %8.3f %8.3f %8.3f %9llu %10llu %9llu %9llu %4u/%u\n", scene,
                    triangles, engine.c_str(), t.buildMs, t.refitMs, t.queryMs, t.testMs, t.frameMs, t.meanFrameMs,
                    static_cast<unsigned long long>(t.pairs), static_cast<unsigned long long>(t.boxTests),
                    static_cast<unsigned long long>(t.triangleTests), static_cast<unsigned long long>(t.frontEntries),
                    t.rebuilds, t.restructured);
        report.push_back({{"scene", scene},
                          {"triangles", triangles},
                          {"frames", steps},
                          {"engine", engine},
                          {"build_ms", t.buildMs},
                          {"refit_ms", t.refitMs},
                          {"query_ms", t.queryMs},
                          {"exact_test_ms", t.testMs},
                          {"frame_ms", t.frameMs},
                          {"mean_frame_ms", t.meanFrameMs},
                          {"rebuilds", t.rebuilds},
                          {"subtrees_restructured", t.restructured},
                          {"pairs", t.pairs},
                          {"box_tests", t.boxTests},
                          {"triangle_tests", t.triangleTests},
                          {"front_entries", t.frontEntries},
                          {"pairs_meaning", engine == "btDbvt" ? "overlapping boxes" : "intersecting triangles"},
                          {"speedup_vs_btDbvt_frame", runs[runs.size() - 2].second.frameMs / t.frameMs},
                          {"speedup_vs_btDbvt_exact_frame", runs.back().second.frameMs / t.frameMs}});
    }
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
    const char* fromEnv = std::getenv("BULLETGPU_DATA_DIR");
    const std::string dataDir = argc > 1 ? argv[1] : (fromEnv != nullptr ? fromEnv : "../shared/data");
    const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
    const std::string jsonPath = argc > 3 ? argv[3] : "narrow_phase_bench.json";
    const std::string only = argc > 4 ? "," + std::string(argv[4]) + "," : std::string();
    const auto chosen = [&](const char* scene) {
        return only.empty() || only.find("," + std::string(scene) + ",") != std::string::npos;
    };
    const BoundingVolume obb = BoundingVolume::Obb;
    std::vector<Engine> engines = {{"descent 1t", Backend::Cpu, 1, NarrowTraversal::Descent},
                                   {"descent 2t", Backend::Cpu, 2, NarrowTraversal::Descent},
                                   {"descent 2t obb", Backend::Cpu, 2, NarrowTraversal::Descent, obb},
                                   {"leafwalk 2t", Backend::Cpu, 2, NarrowTraversal::LeafWalk},
                                   {"fronts 1t", Backend::Cpu, 1, NarrowTraversal::Fronts},
                                   {"fronts 2t", Backend::Cpu, 2, NarrowTraversal::Fronts},
                                   {"fronts 2t obb", Backend::Cpu, 2, NarrowTraversal::Fronts, obb}};
    // Drifting soups: the tree degrades (everywhere, or only in the subtrees over one corner), so
    // only engines that repair it, restructuring or rebuilding it whole, and the fronts without
    // repairs for comparison.
    std::vector<Engine> soupEngines = {
        {"leafwalk 2t", Backend::Cpu, 2, NarrowTraversal::LeafWalk},
        {"fronts 2t", Backend::Cpu, 2, NarrowTraversal::Fronts},
        {"fronts 2t whole rebuild", Backend::Cpu, 2, NarrowTraversal::Fronts, BoundingVolume::Aabb,
         cDefaultRebuildRatio, false},
        {"fronts 2t obb", Backend::Cpu, 2, NarrowTraversal::Fronts, obb},
        {"fronts 2t refit only", Backend::Cpu, 2, NarrowTraversal::Fronts, BoundingVolume::Aabb, 0.0}};
    const CudaDeviceProbe probe = probeCudaDevice(0);
    if (probe.usable) {
        for (std::vector<Engine>* list : {&engines, &soupEngines}) {
            list->push_back({"cuda leafwalk", Backend::Cuda, 0, NarrowTraversal::LeafWalk});
            list->push_back({"cuda fronts", Backend::Cuda, 0, NarrowTraversal::Fronts});
            list->push_back({"cuda fronts obb", Backend::Cuda, 0, NarrowTraversal::Fronts, obb});
        }
        soupEngines.push_back({"cuda fronts whole rebuild", Backend::Cuda, 0, NarrowTraversal::Fronts,
                               BoundingVolume::Aabb, cDefaultRebuildRatio, false});
        std::printf("CUDA device: %s\n", probe.name.c_str());
    } else {
        std::printf("CUDA rows skipped: %s\n", probe.reason.c_str());
    }
    nlohmann::json report = nlohmann::json::array();
    std::printf("%-13s %7s %-22s %8s %8s %8s %8s %8s %8s %9s %10s %9s %9s %s\n", "scene", "tris", "engine", "build",
                "refit", "query", "exact", "frame", "mean", "pairs", "box tests", "tri tests", "front",
                "rebuilt/restr");
    struct Scene {
        const char* name;
        const char* frames[2];
    };
    const Scene scenes[] = {{"cloth-funnel", {"227", "228"}},
                            {"cloth-ball", {"cloth_ball92", "cloth_ball93"}},
                            {"rod-twist", {"3036", "3037"}}};
    for (const Scene& scene : scenes) {
        if (!chosen(scene.name)) continue;
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
    if (chosen("draped-cloth")) {
        Frames animation;
        for (int f = 0; f < cAnimationFrames; ++f) animation.push_back(drapedCloth(cClothSide, 0.05 * f));
        runScene("draped-cloth", animation, cAnimationFrames - 1, 1, engines, report);
    }
    if (chosen("drifting-soup")) {
        Frames soup;
        for (int f = 0; f < cSoupFrames; ++f) soup.push_back(driftingSoup(cSoupTriangles, 0.02, 5, 0.01, f));
        runScene("drifting-soup", soup, cSoupFrames - 1, 1, soupEngines, report);
    }
    if (chosen("corner-drift")) {
        Frames corner;
        for (int f = 0; f < cSoupFrames; ++f) corner.push_back(driftingSoup(cSoupTriangles, 0.02, 5, 0.02, f, 0.0));
        runScene("corner-drift", corner, cSoupFrames - 1, 1, soupEngines, report);
    }
    std::ofstream(jsonPath) << report.dump(2) << "\n";
    std::printf(
        "times in ms (medians; mean: mean frame); exact = exact tests and sort, part of query; frame = "
        "setPositions + query; rebuilt/restr = trees rebuilt and subtrees restructured after the first build\n");
    std::printf("JSON written to %s\n", jsonPath.c_str());
    return 0;
}
