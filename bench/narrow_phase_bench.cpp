// SPDX-License-Identifier: Zlib
// Narrow-phase benchmark: self-collision of the real ccd-frames meshes (two frames, alternated),
// of a procedural folded cloth falling over a ball (120 frames) and of drifting triangle soup
// (60 frames, where a tree only refitted degrades: everywhere, or only over one corner, where
// restructuring the degraded subtrees is set against rebuilding the whole tree); rigid bodies in
// contact, two frames alternated, merged into one mesh or as pair queries between bodies whose
// world boxes overlap (a pile of 330 small closed bodies, 150,480 triangles; four large ones,
// 23,868); and a deforming cube sphere whose faces keep their own vertices along the seams
// (30 frames). The first query (addMesh, build and all it does) is timed apart. For each
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
#include "bench/scene_filter.h"
#include "kernels/common/cuda_device.h"
#include "kernels/common/stopwatch.h"
#include "kernels/narrow/traversal/bvtt_front_ops.h"
#include "tests/support/mesh_generators.h"
#include "tests/support/ply_mesh.h"
#include "tests/support/shared_data.h"
#include <bulletgpu/TriangleMeshSet.h>

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
/// Bodies of the pile (330 bodies of 300 to 588 triangles: 150,480 triangles).
constexpr std::uint32_t cPileBodies = 330;
/// Frames and grid side of the seam sphere (12 * 64^2 = 49,152 triangles).
constexpr int cSeamFrames = 30;
constexpr std::uint32_t cSeamSide = 64;

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
    double firstMs = 0; ///< The first query: addMesh, build and everything else it does (median).
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
    const TriangleSource source{nullptr, mesh.positions.data(), mesh.indices.data(), nullptr, nullptr, nullptr};
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
    std::vector<double> first, build, refit, query, test, frame;
    Timings result;
    for (int r = 0; r < repeats; ++r) {
        TriangleMeshSet set(engine.backend, engine.backend == Backend::Cuda ? 0 : engine.threads);
        set.setTraversal(engine.traversal);
        set.setRebuildRatio(engine.rebuildRatio);
        set.setRestructuring(engine.restructure);
        const PlyMesh& f0 = frames[0];
        const Clock::time_point firstStart = Clock::now();
        const std::uint32_t mesh = set.addMesh(f0.positions.data(), static_cast<std::uint32_t>(f0.positions.size() / 3),
                                               f0.indices.data(), static_cast<std::uint32_t>(f0.indices.size() / 3));
        set.setBoundingVolume(mesh, engine.volume);
        std::vector<TriangleContact> contacts;
        set.findSelfContacts(mesh, contacts);
        first.push_back(millisecondsSince(firstStart));
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
    result.firstMs = bench::median(first);
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
    std::vector<double> first, firstExact, build, refit, query, frame, exact, exactFrame;
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
        // The first query: the build above and a query of frames[0].
        pairs.clear();
        PairCollector firstCollector(pairs);
        start = Clock::now();
        tree.collideTT(tree.m_root, tree.m_root, firstCollector);
        first.push_back(build.back() + millisecondsSince(start));
        start = Clock::now();
        exactTests(frames[0], pairs, withExact.triangleTests, contacts);
        firstExact.push_back(first.back() + millisecondsSince(start));
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
    boxesOnly.firstMs = bench::median(first);
    withExact.firstMs = bench::median(firstExact);
    boxesOnly.buildMs = withExact.buildMs = bench::median(build);
    boxesOnly.refitMs = withExact.refitMs = bench::median(refit);
    boxesOnly.queryMs = bench::median(query);
    boxesOnly.frameMs = bench::median(frame);
    withExact.queryMs = bench::median(exact);
    withExact.testMs = withExact.queryMs - boxesOnly.queryMs;
    withExact.frameMs = bench::median(exactFrame);
    return {boxesOnly, withExact};
}

/// Frames of rigid bodies: each frame, every body's own-frame mesh and its transform.
using BodyFrames = std::vector<std::vector<PlacedMesh>>;

/// The pairs of bodies whose world boxes overlap: what a broad phase gives the narrow phase.
std::vector<MeshPairQuery> overlappingBodies(const std::vector<PlacedMesh>& bodies) {
    std::vector<FloatBox> boxes;
    for (const PlacedMesh& body : bodies) {
        FloatBox box = emptyBox();
        const std::uint32_t triangles = static_cast<std::uint32_t>(body.mesh.indices.size() / 3);
        for (std::uint32_t t = 0; t < triangles; ++t) {
            box = mergeBoxes(box, triangleBox(loadTriangle(body.mesh.positions.data(), body.mesh.indices.data(), t,
                                                           body.transform.data())));
        }
        boxes.push_back(box);
    }
    std::vector<MeshPairQuery> pairs;
    for (std::uint32_t a = 0; a < boxes.size(); ++a) {
        for (std::uint32_t b = a + 1; b < boxes.size(); ++b) {
            if (boxesOverlap(boxes[a], boxes[b])) pairs.push_back(MeshPairQuery{a, b});
        }
    }
    return pairs;
}

/// The engine on pair queries between bodies whose world boxes overlap (computed outside the
/// timings), each body its own rigid mesh with a transform; frame s is frames[s % size].
Timings timeBodyPairs(const BodyFrames& frames, int steps, const Engine& engine, int repeats) {
    std::vector<std::vector<MeshPairQuery>> queries;
    for (const auto& bodies : frames) queries.push_back(overlappingBodies(bodies));
    std::vector<double> first, build, refit, query, frame;
    Timings result;
    std::vector<TriangleContact> contacts;
    for (int r = 0; r < repeats; ++r) {
        TriangleMeshSet set(engine.backend, engine.backend == Backend::Cuda ? 0 : engine.threads);
        set.setTraversal(engine.traversal);
        const Clock::time_point firstStart = Clock::now();
        for (const PlacedMesh& body : frames[0]) {
            const std::uint32_t mesh =
                set.addMesh(body.mesh.positions.data(), static_cast<std::uint32_t>(body.mesh.positions.size() / 3),
                            body.mesh.indices.data(), static_cast<std::uint32_t>(body.mesh.indices.size() / 3));
            set.setBoundingVolume(mesh, engine.volume);
            set.setTransform(mesh, body.transform.data());
        }
        set.findContacts(queries[0].data(), static_cast<std::uint32_t>(queries[0].size()), contacts);
        first.push_back(millisecondsSince(firstStart));
        build.push_back(set.stats().buildMs);
        for (int step = 1; step <= steps; ++step) {
            const std::size_t f = step % frames.size();
            const Clock::time_point start = Clock::now();
            for (std::uint32_t b = 0; b < frames[f].size(); ++b) set.setTransform(b, frames[f][b].transform.data());
            set.findContacts(queries[f].data(), static_cast<std::uint32_t>(queries[f].size()), contacts);
            frame.push_back(millisecondsSince(start));
            refit.push_back(set.stats().refitMs);
            query.push_back(set.stats().traverseMs);
            result.pairs = set.stats().contacts;
            result.boxTests = set.stats().boxTests;
            result.triangleTests = set.stats().triangleTests;
        }
    }
    result.firstMs = bench::median(first);
    result.buildMs = bench::median(build);
    result.refitMs = bench::median(refit);
    result.queryMs = bench::median(query);
    result.frameMs = bench::median(frame);
    result.meanFrameMs = bench::mean(frame);
    return result;
}

/// btDbvt on the same pair queries: a tree of world-frame triangle boxes per body (btDbvt has no
/// query between two trees under a transform), the world boxes computed and every leaf updated
/// as refit (the engine's refit also moves every triangle), collideTT of each overlapping pair's
/// roots; the second result adds the exact tests of its pairs.
std::pair<Timings, Timings> timeDbvtBodyPairs(const BodyFrames& frames, int steps, int repeats) {
    std::vector<std::vector<MeshPairQuery>> queries;
    for (const auto& bodies : frames) queries.push_back(overlappingBodies(bodies));
    // The btDbvt volume of triangle t of body b in frame f.
    const auto volume = [&](std::size_t f, std::size_t b, std::uint32_t t) {
        const PlacedMesh& body = frames[f][b];
        return volumeOf(
            triangleBox(loadTriangle(body.mesh.positions.data(), body.mesh.indices.data(), t, body.transform.data())));
    };
    std::vector<double> first, firstExact, build, refit, queryMs, exactMs, frame, exactFrame;
    Timings boxesOnly, withExact;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    // The query of frame f; returns its time and, in `exactTime`, that of the exact tests.
    const auto queryFrame = [&](std::vector<btDbvt>& trees, std::size_t f, double& exactTime) {
        const Clock::time_point start = Clock::now();
        std::uint64_t boxPairs = 0;
        double exactSpent = 0;
        withExact.pairs = withExact.triangleTests = 0;
        for (const MeshPairQuery& q : queries[f]) {
            pairs.clear();
            PairCollector collector(pairs);
            trees[q.meshA].collideTT(trees[q.meshA].m_root, trees[q.meshB].m_root, collector);
            boxPairs += pairs.size();
            const Clock::time_point exactStart = Clock::now();
            const PlacedMesh& a = frames[f][q.meshA];
            const PlacedMesh& b = frames[f][q.meshB];
            const TriangleSource sourceA{
                nullptr, a.mesh.positions.data(), a.mesh.indices.data(), a.transform.data(), nullptr, nullptr};
            const TriangleSource sourceB{
                nullptr, b.mesh.positions.data(), b.mesh.indices.data(), b.transform.data(), nullptr, nullptr};
            for (const auto& [ta, tb] : pairs) {
                TriangleContact contact{};
                ++withExact.triangleTests;
                withExact.pairs += testTrianglePair(ta, sourceA, q.meshA, tb, sourceB, q.meshB, false, contact) ? 1 : 0;
            }
            exactSpent += millisecondsSince(exactStart);
        }
        boxesOnly.pairs = boxPairs;
        exactTime = exactSpent;
        return millisecondsSince(start) - exactSpent;
    };
    for (int r = 0; r < repeats; ++r) {
        std::vector<btDbvt> trees(frames[0].size());
        std::vector<std::vector<btDbvtNode*>> leaves(frames[0].size());
        Clock::time_point start = Clock::now();
        for (std::size_t b = 0; b < trees.size(); ++b) {
            const auto triangles = static_cast<std::uint32_t>(frames[0][b].mesh.indices.size() / 3);
            for (std::uint32_t t = 0; t < triangles; ++t) {
                leaves[b].push_back(trees[b].insert(volume(0, b, t), nullptr));
                leaves[b].back()->dataAsInt = static_cast<int>(t);
            }
        }
        build.push_back(millisecondsSince(start));
        double exactTime = 0;
        first.push_back(build.back() + queryFrame(trees, 0, exactTime));
        firstExact.push_back(first.back() + exactTime);
        for (int step = 1; step <= steps; ++step) {
            const std::size_t f = step % frames.size();
            start = Clock::now();
            for (std::size_t b = 0; b < trees.size(); ++b) {
                for (std::size_t t = 0; t < leaves[b].size(); ++t) {
                    btDbvtVolume moved = volume(f, b, static_cast<std::uint32_t>(t));
                    trees[b].update(leaves[b][t], moved);
                }
            }
            refit.push_back(millisecondsSince(start));
            queryMs.push_back(queryFrame(trees, f, exactTime));
            exactMs.push_back(queryMs.back() + exactTime);
            frame.push_back(refit.back() + queryMs.back());
            exactFrame.push_back(refit.back() + exactMs.back());
            boxesOnly.meanFrameMs += frame.back() / (repeats * steps);
            withExact.meanFrameMs += exactFrame.back() / (repeats * steps);
        }
    }
    boxesOnly.firstMs = bench::median(first);
    withExact.firstMs = bench::median(firstExact);
    boxesOnly.buildMs = withExact.buildMs = bench::median(build);
    boxesOnly.refitMs = withExact.refitMs = bench::median(refit);
    boxesOnly.queryMs = bench::median(queryMs);
    boxesOnly.frameMs = bench::median(frame);
    withExact.queryMs = bench::median(exactMs);
    withExact.testMs = withExact.queryMs - boxesOnly.queryMs;
    withExact.frameMs = bench::median(exactFrame);
    return {boxesOnly, withExact};
}

/// Prints and records the rows of one scene; the last two runs are btDbvt and btDbvt+exact.
void reportScene(const char* scene, std::size_t triangles, int steps,
                 const std::vector<std::pair<std::string, Timings>>& runs, nlohmann::json& report) {
    for (const auto& [engine, t] : runs) {
        std::printf(
            "%-16s %7zu %-22s %8.2f %8.2f %6.1f %8.3f %8.3f %8.3f %8.3f %8.3f %9llu %10llu %9llu %9llu %4u/%u\n", scene,
            triangles, engine.c_str(), t.firstMs, t.buildMs, t.firstMs / t.frameMs, t.refitMs, t.queryMs, t.testMs,
            t.frameMs, t.meanFrameMs, static_cast<unsigned long long>(t.pairs),
            static_cast<unsigned long long>(t.boxTests), static_cast<unsigned long long>(t.triangleTests),
            static_cast<unsigned long long>(t.frontEntries), t.rebuilds, t.restructured);
        report.push_back({{"scene", scene},
                          {"triangles", triangles},
                          {"frames", steps},
                          {"engine", engine},
                          {"first_query_ms", t.firstMs},
                          {"first_over_frame", t.firstMs / t.frameMs},
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

/// Runs every engine and btDbvt on one scene; prints and records the rows.
void runScene(const char* scene, const Frames& frames, int steps, int repeats, const std::vector<Engine>& engines,
              nlohmann::json& report) {
    std::vector<std::pair<std::string, Timings>> runs;
    for (const Engine& engine : engines) runs.emplace_back(engine.name, timeEngine(frames, steps, engine, repeats));
    const auto [boxesOnly, withExact] = timeDbvt(frames, steps, repeats);
    runs.emplace_back("btDbvt", boxesOnly);
    runs.emplace_back("btDbvt+exact", withExact);
    reportScene(scene, frames[0].indices.size() / 3, steps, runs, report);
}

/// Runs the engines and btDbvt on pair queries between rigid bodies; prints and records the rows.
void runBodyPairs(const char* scene, const BodyFrames& frames, int steps, int repeats,
                  const std::vector<Engine>& engines, nlohmann::json& report) {
    std::size_t triangles = 0;
    for (const PlacedMesh& body : frames[0]) triangles += body.mesh.indices.size() / 3;
    std::vector<std::pair<std::string, Timings>> runs;
    for (const Engine& engine : engines) runs.emplace_back(engine.name, timeBodyPairs(frames, steps, engine, repeats));
    const auto [boxesOnly, withExact] = timeDbvtBodyPairs(frames, steps, repeats);
    runs.emplace_back("btDbvt", boxesOnly);
    runs.emplace_back("btDbvt+exact", withExact);
    reportScene(scene, triangles, steps, runs, report);
}

} // namespace

int main(int argc, char** argv) {
    const std::string dataDir = argc > 1 ? argv[1] : bulletgpu::test::sharedDataDir();
    const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
    const std::string jsonPath = argc > 3 ? argv[3] : "narrow_phase_bench.json";
    const bench::SceneFilter filter(argc > 4 ? argv[4] : "");
    const auto chosen = [&](const char* scene) { return filter.chosen(scene); };
    const BoundingVolume obb = BoundingVolume::Obb;
    std::vector<Engine> engines = {{"descent 1t", Backend::Cpu, 1, NarrowTraversal::Descent},
                                   {"descent 2t", Backend::Cpu, 2, NarrowTraversal::Descent},
                                   {"descent 2t obb", Backend::Cpu, 2, NarrowTraversal::Descent, obb},
                                   {"leafwalk 1t", Backend::Cpu, 1, NarrowTraversal::LeafWalk},
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
    std::printf("%-16s %7s %-22s %8s %8s %6s %8s %8s %8s %8s %8s %9s %10s %9s %9s %s\n", "scene", "tris", "engine",
                "first", "build", "first/", "refit", "query", "exact", "frame", "mean", "pairs", "box tests",
                "tri tests", "front", "rebuilt/restr");
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
    // Rigid bodies, two frames alternated: one merged mesh queried against itself, and each body
    // its own mesh with pair queries between bodies whose world boxes overlap.
    const std::vector<Engine> pairEngines = {{"descent 2t", Backend::Cpu, 2, NarrowTraversal::Descent},
                                             {"leafwalk 1t", Backend::Cpu, 1, NarrowTraversal::LeafWalk},
                                             {"leafwalk 2t", Backend::Cpu, 2, NarrowTraversal::LeafWalk},
                                             {"fronts 2t", Backend::Cpu, 2, NarrowTraversal::Fronts}};
    const BodyFrames pile = {bodyPile(cPileBodies, 33, 0), bodyPile(cPileBodies, 33, 1)};
    const BodyFrames large = {largeBodies(0), largeBodies(1)};
    if (chosen("many-bodies"))
        runScene("many-bodies", {mergedMesh(pile[0]), mergedMesh(pile[1])}, 4, repeats, engines, report);
    if (chosen("many-bodies-pairs")) runBodyPairs("many-bodies-pairs", pile, 4, repeats, pairEngines, report);
    if (chosen("few-bodies"))
        runScene("few-bodies", {mergedMesh(large[0]), mergedMesh(large[1])}, 4, repeats, engines, report);
    if (chosen("few-bodies-pairs")) runBodyPairs("few-bodies-pairs", large, 4, repeats, pairEngines, report);
    if (chosen("seams")) {
        Frames seams;
        for (int f = 0; f < cSeamFrames; ++f) seams.push_back(seamSphere(cSeamSide, 0.1, 0.05 * f));
        runScene("seams", seams, cSeamFrames - 1, 1, engines, report);
    }
    std::ofstream(jsonPath) << report.dump(2) << "\n";
    std::printf(
        "times in ms (medians; mean: mean frame); first = the first query, addMesh and build included (btDbvt: "
        "insertion build and the first query); first/ = first over the median frame; exact = exact tests and sort, "
        "part of query; frame = setPositions (pairs: setTransform) + query; rebuilt/restr = trees rebuilt and "
        "subtrees restructured after the first build\n");
    std::printf("JSON written to %s\n", jsonPath.c_str());
    return 0;
}
