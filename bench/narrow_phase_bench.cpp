// SPDX-License-Identifier: Zlib
// Narrow-phase benchmark on the real ccd-frames meshes: LBVH build, refit and self-collision
// traversal (exact triangle tests included) on 1 and 2 threads, against Bullet's btDbvt
// (build by insertion, refit by update, btDbvt::collideTT of the root with itself on the same
// triangle boxes, which reports overlapping boxes only). Prints a table and writes JSON.
//
// Usage: bulletgpu-bench-narrow [data dir] [repeats] [json file]
#include "bench/sample_statistics.h"
#include "kernels/common/stopwatch.h"
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

/// One scene of ccd-frames and its two frame files.
struct Scene {
    const char* name;
    const char* frames[2];
};

/// Counts the leaf pairs btDbvt::collideTT reports, skipping a leaf with itself.
struct PairCounter : btDbvt::ICollide {
    std::uint64_t pairs = 0;
    void Process(const btDbvtNode* a, const btDbvtNode* b) override { pairs += a != b; }
};

/// Timings of one engine on one scene (medians over the repeats, in milliseconds).
struct Timings {
    double buildMs = 0, refitMs = 0, queryMs = 0;
    std::uint64_t pairs = 0;
    std::uint64_t boxTests = 0;      ///< Node pairs compared in one query.
    std::uint64_t triangleTests = 0; ///< Exact triangle tests in one query.
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

/// TriangleMeshSet on `threads`: build on frame 0, then alternate frames (refit + query).
Timings timeEngine(const PlyMesh (&frames)[2], int threads, int repeats) {
    std::vector<double> build, refit, query;
    Timings result;
    for (int r = 0; r < repeats; ++r) {
        TriangleMeshSet set(threads);
        const PlyMesh& f0 = frames[0];
        const std::uint32_t mesh = set.addMesh(f0.positions.data(), static_cast<std::uint32_t>(f0.positions.size() / 3),
                                               f0.indices.data(), static_cast<std::uint32_t>(f0.indices.size() / 3));
        std::vector<TriangleContact> contacts;
        set.findSelfContacts(mesh, contacts);
        build.push_back(set.stats().buildMs);
        for (int step = 1; step <= 4; ++step) {
            set.setPositions(mesh, frames[step % 2].positions.data());
            set.findSelfContacts(mesh, contacts);
            refit.push_back(set.stats().refitMs);
            query.push_back(set.stats().traverseMs);
            result.pairs = set.stats().contacts;
            result.boxTests = set.stats().boxTests;
            result.triangleTests = set.stats().triangleTests;
        }
    }
    result.buildMs = bench::median(build);
    result.refitMs = bench::median(refit);
    result.queryMs = bench::median(query);
    return result;
}

/// btDbvt on the same boxes: insertion build, leaf updates as refit, collideTT self query.
Timings timeDbvt(const PlyMesh (&frames)[2], int repeats) {
    const std::vector<NarrowBox> boxes[2] = {boxesOf(frames[0]), boxesOf(frames[1])};
    std::vector<double> build, refit, query;
    Timings result;
    for (int r = 0; r < repeats; ++r) {
        btDbvt tree;
        std::vector<btDbvtNode*> leaves(boxes[0].size());
        Clock::time_point start = Clock::now();
        for (std::size_t t = 0; t < leaves.size(); ++t) leaves[t] = tree.insert(volumeOf(boxes[0][t]), nullptr);
        build.push_back(millisecondsSince(start));
        for (int step = 1; step <= 4; ++step) {
            start = Clock::now();
            for (std::size_t t = 0; t < leaves.size(); ++t) {
                btDbvtVolume volume = volumeOf(boxes[step % 2][t]);
                tree.update(leaves[t], volume);
            }
            refit.push_back(millisecondsSince(start));
            PairCounter counter;
            start = Clock::now();
            tree.collideTT(tree.m_root, tree.m_root, counter);
            query.push_back(millisecondsSince(start));
            result.pairs = counter.pairs;
        }
    }
    result.buildMs = bench::median(build);
    result.refitMs = bench::median(refit);
    result.queryMs = bench::median(query);
    return result;
}

} // namespace

int main(int argc, char** argv) {
    const char* fromEnv = std::getenv("BULLETGPU_DATA_DIR");
    const std::string dataDir = argc > 1 ? argv[1] : (fromEnv != nullptr ? fromEnv : "../shared/data");
    const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
    const std::string jsonPath = argc > 3 ? argv[3] : "narrow_phase_bench.json";
    const Scene scenes[] = {{"cloth-funnel", {"227", "228"}},
                            {"cloth-ball", {"cloth_ball92", "cloth_ball93"}},
                            {"rod-twist", {"3036", "3037"}}};
    nlohmann::json report = nlohmann::json::array();
    std::printf("%-13s %8s %-14s %9s %9s %9s %10s %11s %11s\n", "scene", "tris", "engine", "build ms", "refit ms",
                "query ms", "pairs", "box tests", "tri tests");
    for (const Scene& scene : scenes) {
        PlyMesh frames[2];
        try {
            for (int f = 0; f < 2; ++f) {
                frames[f] = readPlyMesh(dataDir + "/ccd-frames/" + scene.name + "/frames/" + scene.frames[f] + ".ply");
            }
        } catch (const std::exception& error) {
            std::printf("%-13s skipped: %s\n", scene.name, error.what());
            continue;
        }
        const std::size_t triangles = frames[0].indices.size() / 3;
        const std::pair<std::string, Timings> runs[] = {{"lbvh 1 thread", timeEngine(frames, 1, repeats)},
                                                        {"lbvh 2 threads", timeEngine(frames, 2, repeats)},
                                                        {"btDbvt", timeDbvt(frames, repeats)}};
        for (const auto& [engine, t] : runs) {
            std::printf("%-13s %8zu %-14s %9.2f %9.2f %9.2f %10llu %11llu %11llu\n", scene.name, triangles,
                        engine.c_str(), t.buildMs, t.refitMs, t.queryMs, static_cast<unsigned long long>(t.pairs),
                        static_cast<unsigned long long>(t.boxTests), static_cast<unsigned long long>(t.triangleTests));
            report.push_back({{"scene", scene.name},
                              {"triangles", triangles},
                              {"engine", engine},
                              {"build_ms", t.buildMs},
                              {"refit_ms", t.refitMs},
                              {"query_ms", t.queryMs},
                              {"pairs", t.pairs},
                              {"box_tests", t.boxTests},
                              {"triangle_tests", t.triangleTests},
                              {"pairs_meaning", engine == "btDbvt" ? "overlapping boxes" : "intersecting triangles"}});
        }
    }
    std::ofstream(jsonPath) << report.dump(2) << "\n";
    std::printf("JSON written to %s\n", jsonPath.c_str());
    return 0;
}
