// SPDX-License-Identifier: Zlib
// Contact-query benchmark (issue 33): TriangleMeshSet::findSelfProximity at d = 1% of the mean
// edge length on the real ccd-frames meshes (two frames alternated as deforming positions) and on
// a generated draped cloth (no data needed), against the query a Bullet user would write:
// btDbvt over the triangles' boxes grown by the same bound (proximity_bounds.h; insertion build
// on the first frame, btDbvt::update of every leaf as the refit on later frames),
// btDbvt::collideTT of the root with itself collecting leaf pairs, then the same exact per-candidate
// feature tests (candidate_proximity.h) and the same sort. Every frame of every contender must give
// the identical sorted contact list (a scene stops with a message otherwise).
//
// With a usable CUDA device, a "cuda" row runs the same queries on Backend::Cuda (device 0).
//
// The first query of a fresh set (addMesh, features, build, grown tree, query) is timed apart from
// the steady frames (setPositions and query). Contenders alternate within each repeat, so a load
// that comes and goes falls on all of them. Prints a table and writes JSON with the machine.
//
// Usage: bulletgpu-bench-contact [data dir] [repeats] [json file] [scenes, comma-separated]
#include "bench/machine_info.h"
#include "bench/sample_statistics.h"
#include "bench/scene_filter.h"
#include "kernels/common/cuda_device.h"
#include "kernels/common/stopwatch.h"
#include "kernels/narrow/engine/proximity_sort_cpu.h"
#include <bulletgpu/TriangleMeshSet.h>
#include "kernels/narrow/geometry/candidate_proximity.h"
#include "kernels/narrow/geometry/proximity_bounds.h"
#include "tests/support/mesh_generators.h"
#include "tests/support/ply_mesh.h"
#include "tests/support/shared_data.h"

#include <BulletCollision/BroadphaseCollision/btDbvt.h>
#include <LinearMath/btScalar.h>

#include <nlohmann/json.hpp>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace bulletgpu;
using json = nlohmann::json;

namespace {

/// Steady frames timed after each first query.
constexpr int cSteadyFrames = 6;
/// The query distance as a fraction of the mean edge length.
constexpr double cDistanceFraction = 0.01;
/// Grid side of the generated cloth (2 * 199^2 = 79,202 triangles).
constexpr std::uint32_t cClothSide = 200;

/// One BulletGpu engine under test.
struct Engine {
    const char* name;          ///< Row label.
    Backend backend;           ///< Cpu, or Cuda (device 0).
    int threads;               ///< OpenMP threads of the set (Cpu).
    NarrowTraversal traversal; ///< LeafWalk (the CPU default) or Fronts (the CUDA path always walks).
};

/// The samples of one contender on one scene.
struct Samples {
    std::vector<double> firstMs;      ///< First query of a fresh set, build included (one per repeat).
    std::vector<double> firstBuildMs; ///< Of each first query: what a steady frame does not do
                                      ///< (mesh copy, features, tree build; btDbvt: features, inserts).
    std::vector<double> steadyMs;     ///< Steady frames (setPositions and query).
    std::vector<double> refitMs;      ///< Of each steady frame: boxes, grown boxes and tree refits.
    std::vector<double> candMs;       ///< Of each steady frame: traversal collecting candidates.
    std::vector<double> testMs;       ///< Of each steady frame: exact feature tests and sort.
    std::uint64_t contacts = 0;       ///< Contacts of the last steady frame.
    std::uint64_t candidates = 0;     ///< Candidate triangle pairs of the last steady frame.
    std::uint64_t neighbours = 0;     ///< Of them, pairs sharing a vertex index (btDbvt rows only).
};

/// The sorted contacts of each distinct frame that every contender must reproduce.
struct Reference {
    std::vector<std::vector<ProximityContact>> contacts; ///< Of each frame.
    std::vector<bool> known;                             ///< Whether a frame's contacts are set.
};

/// True when two sorted contact lists are identical, record for record, bit for bit.
bool sameContacts(const std::vector<ProximityContact>& x, const std::vector<ProximityContact>& y) {
    return x.size() == y.size() &&
           (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(ProximityContact)) == 0);
}

/// Checks a frame's contacts against the reference (the first contender sets it); false with a
/// message on a difference.
bool checkFrame(Reference& reference, std::size_t frame, const std::vector<ProximityContact>& contacts,
                const char* scene, const char* contender) {
    if (!reference.known[frame]) {
        reference.contacts[frame] = contacts;
        reference.known[frame] = true;
    }
    if (sameContacts(reference.contacts[frame], contacts)) return true;
    std::printf("%-13s ABORTED: %s gives %zu contacts on frame %zu, the reference %zu (or they differ)\n", scene,
                contender, contacts.size(), frame, reference.contacts[frame].size());
    return false;
}

/// The engine on one repeat: a fresh set, its first query, then cSteadyFrames frames alternating
/// the scene's frames. False when a frame's contacts differ from the reference.
bool timeEngine(const std::vector<PlyMesh>& frames, double distance, const Engine& engine, Samples& out,
                Reference& reference, const char* scene) {
    const ProximityOptions options{distance, false};
    std::vector<ProximityContact> contacts;
    const PlyMesh& f0 = frames[0];
    Clock::time_point start = Clock::now();
    TriangleMeshSet set(engine.backend, engine.backend == Backend::Cuda ? 0 : engine.threads);
    set.setTraversal(engine.traversal);
    const std::uint32_t mesh = set.addMesh(f0.positions.data(), static_cast<std::uint32_t>(f0.positions.size() / 3),
                                           f0.indices.data(), static_cast<std::uint32_t>(f0.indices.size() / 3));
    set.findSelfProximity(mesh, options, contacts);
    out.firstMs.push_back(millisecondsSince(start));
    out.firstBuildMs.push_back(out.firstMs.back() - set.stats().refitMs - set.stats().traverseMs);
    if (!checkFrame(reference, 0, contacts, scene, engine.name)) return false;
    for (int step = 1; step <= cSteadyFrames; ++step) {
        const std::size_t f = step % frames.size();
        start = Clock::now();
        set.setPositions(mesh, frames[f].positions.data());
        set.findSelfProximity(mesh, options, contacts);
        out.steadyMs.push_back(millisecondsSince(start));
        const NarrowStats& stats = set.stats();
        out.refitMs.push_back(stats.buildMs + stats.refitMs);
        out.candMs.push_back(stats.traverseMs - stats.testMs);
        out.testMs.push_back(stats.testMs);
        out.contacts = stats.contacts;
        out.candidates = stats.triangleTests;
        if (!checkFrame(reference, f, contacts, scene, engine.name)) return false;
    }
    return true;
}

/// Collects the leaf pairs btDbvt::collideTT(root, root) reports: a leaf with itself skipped,
/// each unordered pair once (collideTT of a tree with itself visits each once).
struct LeafPairs : btDbvt::ICollide {
    std::vector<std::pair<std::uint32_t, std::uint32_t>>* pairs; ///< Where the pairs go.
    explicit LeafPairs(std::vector<std::pair<std::uint32_t, std::uint32_t>>& out) : pairs(&out) {}
    void Process(const btDbvtNode* a, const btDbvtNode* b) override {
        if (a != b)
            pairs->emplace_back(static_cast<std::uint32_t>(a->dataAsInt), static_cast<std::uint32_t>(b->dataAsInt));
    }
};

/// One frame as the comparator reads it: each triangle's corners in double, plane minors and
/// box grown for the query (what the engine computes each frame too).
struct PreparedFrame {
    std::vector<Triangle3d> corners; ///< Corners of each triangle.
    std::vector<PlaneMinors> planes; ///< Plane minors of each triangle (for trianglesIntersect).
    std::vector<FloatBox> grown;     ///< grownTriangleBox of each triangle at the distance.
};

/// Fills `out` from a frame on `threads` threads.
void prepareFrame(const PlyMesh& mesh, double distance, int threads, PreparedFrame& out) {
    const auto count = static_cast<std::int64_t>(mesh.indices.size() / 3);
    out.corners.resize(static_cast<std::size_t>(count));
    out.planes.resize(static_cast<std::size_t>(count));
    out.grown.resize(static_cast<std::size_t>(count));
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t t = 0; t < count; ++t) {
        const Triangle3d tri =
            loadTriangle(mesh.positions.data(), mesh.indices.data(), static_cast<std::uint32_t>(t), nullptr);
        out.corners[t] = tri;
        out.planes[t] = planeMinors(tri.p[0], tri.p[1], tri.p[2]);
        out.grown[t] = grownTriangleBox(tri, distance);
    }
}

/// btDbvt volume of a (float) box: exact, so btDbvt culls with the engine's boxes.
btDbvtVolume volumeOf(const FloatBox& b) {
    return btDbvtVolume::FromMM(btVector3(b.lo[0], b.lo[1], b.lo[2]), btVector3(b.hi[0], b.hi[1], b.hi[2]));
}

/// One thread's contacts, on cache lines of its own (as the engine keeps them).
struct alignas(64) ThreadContacts {
    std::vector<ProximityContact> contacts; ///< Contacts the thread found.
    ProximitySortScratch sort;              ///< Scratch of the sort (the first part's is used).
};

/// An emit functor appending to a vector.
struct AppendContact {
    std::vector<ProximityContact>& out; ///< Where the contacts go.
    void operator()(const ProximityContact& c) { out.push_back(c); }
};

/// The exact tests of the leaf pairs on `threads` threads (the pairs split in equal runs, as the
/// engine splits its candidates), the parts joined and sorted with the engine's sort.
void exactTests(const PlyMesh& mesh, const PreparedFrame& frame, const MeshFeatures& features,
                const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pairs, double distance, int threads,
                std::vector<ThreadContacts>& parts, std::vector<ProximityContact>& contacts) {
    const ProximityMeshView view{TriangleSource{frame.corners.data(), mesh.positions.data(), mesh.indices.data(),
                                                nullptr, frame.planes.data(), nullptr},
                                 mesh.indices.data(),
                                 features.triangleEdges.data(),
                                 features.owned.data(),
                                 nullptr,
                                 0};
    const auto count = static_cast<std::int64_t>(pairs.size());
    parts.resize(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num(), size = omp_get_num_threads();
        std::vector<ProximityContact>& out = parts[t].contacts;
        out.clear();
        AppendContact emit{out};
        const std::int64_t lo = count * t / size, hi = count * (t + 1) / size;
        for (std::int64_t i = lo; i < hi; ++i)
            candidateProximity(view, pairs[i].first, view, pairs[i].second, true, distance, false, emit);
    }
    contacts.clear();
    for (int t = 0; t < threads; ++t)
        contacts.insert(contacts.end(), parts[t].contacts.begin(), parts[t].contacts.end());
    sortProximityContacts(contacts, 0, parts[0].sort);
}

/// The btDbvt comparator on one repeat: frame preparation (corners, planes, grown boxes), btDbvt
/// (insertion build, then update of every leaf), collideTT, exact tests and sort. The same tree
/// and leaf pairs feed two timings: `one` with everything on one thread, `two` with the frame
/// preparation and the exact tests on 2 threads (btDbvt itself has no parallel build or
/// query). A first query is features + preparation + build + collideTT + tests; a steady frame
/// preparation + updates + collideTT + tests. False when a frame's contacts differ.
bool timeDbvt(const std::vector<PlyMesh>& frames, double distance, Samples& one, Samples& two, Reference& reference,
              const char* scene) {
    PreparedFrame frame;
    MeshFeatures features;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    std::vector<ThreadContacts> parts;
    std::vector<ProximityContact> contacts;
    const PlyMesh& f0 = frames[0];
    const auto triangles = static_cast<std::uint32_t>(f0.indices.size() / 3);
    btDbvt tree;
    std::vector<btDbvtNode*> leaves(triangles);
    for (int step = 0; step <= cSteadyFrames; ++step) {
        const std::size_t f = step % frames.size();
        const PlyMesh& mesh = frames[f];
        double featuresMs = 0;
        Clock::time_point start = Clock::now();
        if (step == 0) {
            buildMeshFeatures(mesh.indices.data(), triangles, static_cast<std::uint32_t>(mesh.positions.size() / 3),
                              features);
            featuresMs = millisecondsSince(start);
        }
        // The preparation twice, on 2 threads and then on 1 (the results are the same).
        start = Clock::now();
        prepareFrame(mesh, distance, 2, frame);
        const double prepare2Ms = millisecondsSince(start);
        start = Clock::now();
        prepareFrame(mesh, distance, 1, frame);
        const double prepare1Ms = millisecondsSince(start);
        start = Clock::now();
        if (step == 0) {
            for (std::uint32_t t = 0; t < triangles; ++t) {
                leaves[t] = tree.insert(volumeOf(frame.grown[t]), nullptr);
                leaves[t]->dataAsInt = static_cast<int>(t);
            }
        } else {
            for (std::uint32_t t = 0; t < triangles; ++t) {
                btDbvtVolume volume = volumeOf(frame.grown[t]);
                tree.update(leaves[t], volume);
            }
        }
        const double treeMs = millisecondsSince(start);
        pairs.clear();
        LeafPairs collector(pairs);
        start = Clock::now();
        tree.collideTT(tree.m_root, tree.m_root, collector);
        const double collideMs = millisecondsSince(start);
        start = Clock::now();
        exactTests(mesh, frame, features, pairs, distance, 1, parts, contacts);
        const double test1Ms = millisecondsSince(start);
        if (!checkFrame(reference, f, contacts, scene, "btDbvt 1t")) return false;
        start = Clock::now();
        exactTests(mesh, frame, features, pairs, distance, 2, parts, contacts);
        const double test2Ms = millisecondsSince(start);
        if (!checkFrame(reference, f, contacts, scene, "btDbvt 2t tests")) return false;
        const double frame1Ms = featuresMs + prepare1Ms + treeMs + collideMs + test1Ms;
        const double frame2Ms = featuresMs + prepare2Ms + treeMs + collideMs + test2Ms;
        if (step == 0) {
            one.firstMs.push_back(frame1Ms);
            two.firstMs.push_back(frame2Ms);
            one.firstBuildMs.push_back(featuresMs + treeMs);
            two.firstBuildMs.push_back(featuresMs + treeMs);
            continue;
        }
        for (Samples* s : {&one, &two}) {
            const bool single = s == &one;
            s->steadyMs.push_back(single ? frame1Ms : frame2Ms);
            s->refitMs.push_back((single ? prepare1Ms : prepare2Ms) + treeMs);
            s->candMs.push_back(collideMs);
            s->testMs.push_back(single ? test1Ms : test2Ms);
            s->contacts = contacts.size();
            s->candidates = pairs.size();
        }
        // Not timed: how many candidates are mesh neighbours (their grown boxes always overlap).
        one.neighbours = 0;
        for (const auto& [ta, tb] : pairs) one.neighbours += shareVertex(mesh.indices.data(), ta, tb) ? 1 : 0;
        two.neighbours = one.neighbours;
    }
    return true;
}

/// The smallest sample (0 when empty).
double minimum(const std::vector<double>& values) {
    return values.empty() ? 0 : *std::min_element(values.begin(), values.end());
}

/// Runs every contender on one scene, alternating them within each repeat; prints and records
/// the rows.
void runScene(const char* scene, const std::vector<PlyMesh>& frames, int repeats, const std::vector<Engine>& engines,
              json& rows) {
    const std::size_t triangles = frames[0].indices.size() / 3;
    const double edge = meanEdge(frames[0]);
    const double distance = cDistanceFraction * edge;
    std::vector<Samples> samples(engines.size() + 2);
    Reference reference{std::vector<std::vector<ProximityContact>>(frames.size()),
                        std::vector<bool>(frames.size(), false)};
    for (int r = 0; r < repeats; ++r) {
        for (std::size_t e = 0; e < engines.size(); ++e) {
            if (!timeEngine(frames, distance, engines[e], samples[e], reference, scene)) return;
        }
        if (!timeDbvt(frames, distance, samples[engines.size()], samples[engines.size() + 1], reference, scene)) return;
    }
    std::vector<std::string> names;
    for (const Engine& e : engines) names.push_back(e.name);
    names.push_back("btDbvt 1t");
    names.push_back("btDbvt 2t tests");
    const Samples& dbvt = samples[engines.size()];
    const Samples& dbvt2 = samples[engines.size() + 1];
    const double dbvtSteady = bench::median(dbvt.steadyMs), dbvtFirst = bench::median(dbvt.firstMs);
    const double dbvt2Steady = bench::median(dbvt2.steadyMs), dbvt2First = bench::median(dbvt2.firstMs);
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const Samples& s = samples[i];
        const double first = bench::median(s.firstMs), steady = bench::median(s.steadyMs);
        const double steadyMin = minimum(s.steadyMs), firstMin = minimum(s.firstMs);
        std::printf("%-13s %6zu %-16s %8.1f %8.1f %7.1f %8.1f %8.1f %7.1f %7.1f %7.1f %8llu %9llu %6.2f %6.2f %6.2f "
                    "%6.2f %5.1f\n",
                    scene, triangles, names[i].c_str(), first, firstMin, bench::median(s.firstBuildMs), steady,
                    steadyMin, bench::median(s.refitMs), bench::median(s.candMs), bench::median(s.testMs),
                    static_cast<unsigned long long>(s.contacts), static_cast<unsigned long long>(s.candidates),
                    dbvtSteady / steady, dbvtFirst / first, dbvt2Steady / steady, dbvt2First / first, first / steady);
        rows.push_back({{"scene", scene},
                        {"triangles", triangles},
                        {"mean_edge", edge},
                        {"distance", distance},
                        {"contender", names[i]},
                        {"repeats", repeats},
                        {"steady_frames_per_repeat", cSteadyFrames},
                        {"first_ms", s.firstMs},
                        {"first_median_ms", first},
                        {"first_min_ms", firstMin},
                        {"first_build_median_ms", bench::median(s.firstBuildMs)},
                        {"steady_ms", s.steadyMs},
                        {"steady_median_ms", steady},
                        {"steady_min_ms", steadyMin},
                        {"steady_refit_median_ms", bench::median(s.refitMs)},
                        {"steady_candidates_median_ms", bench::median(s.candMs)},
                        {"steady_exact_tests_median_ms", bench::median(s.testMs)},
                        {"contacts", s.contacts},
                        {"candidates", s.candidates},
                        {"candidates_sharing_a_vertex", s.neighbours},
                        {"first_over_steady", first / steady},
                        {"steady_speedup_vs_btDbvt_1t", dbvtSteady / steady},
                        {"steady_min_speedup_vs_btDbvt_1t", minimum(dbvt.steadyMs) / steadyMin},
                        {"first_speedup_vs_btDbvt_1t", dbvtFirst / first},
                        {"steady_speedup_vs_btDbvt_2t_tests", dbvt2Steady / steady},
                        {"first_speedup_vs_btDbvt_2t_tests", dbvt2First / first}});
    }
    std::printf("%-13s %llu of %llu candidates (%.0f%%) share a vertex (mesh neighbours)\n", scene,
                static_cast<unsigned long long>(dbvt.neighbours), static_cast<unsigned long long>(dbvt.candidates),
                100.0 * static_cast<double>(dbvt.neighbours) /
                    static_cast<double>(std::max<std::uint64_t>(1, dbvt.candidates)));
    std::fflush(stdout);
}

/// The first line a shell command prints ("unknown" when it fails).
std::string commandLine(const std::string& command) {
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    if (!pipe) return "unknown";
    char buffer[256] = {};
    if (std::fgets(buffer, sizeof buffer, pipe.get()) == nullptr) return "unknown";
    std::string line(buffer);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    return line;
}

/// What the numbers were measured on: processor, threads, OMP_WAIT_POLICY, compiler, Bullet and
/// the source commit (read from the source tree with git at run time; "-dirty" when it has
/// uncommitted changes).
json machineInfo() {
    const std::string git = "git -C '" BULLETGPU_SOURCE_DIR "' ";
    std::string commit = commandLine(git + "rev-parse HEAD 2>/dev/null");
    if (commit != "unknown" && commandLine(git + "status --porcelain --untracked-files=no 2>/dev/null") != "unknown") {
        commit += "-dirty";
    }
    return {{"cpuModel", cpuModel()},
            {"logicalCores", std::thread::hardware_concurrency()},
            {"openmpMaxThreads", omp_get_max_threads()},
            {"loadAverageAtStart", loadAverages()},
            {"compiler", compilerName()},
            {"bulletVersion", btGetVersion()},
            {"btUseDoublePrecision", sizeof(btScalar) == sizeof(double)},
            {"commit", commit},
            {"ompWaitPolicy", std::getenv("OMP_WAIT_POLICY") != nullptr ? std::getenv("OMP_WAIT_POLICY") : "unset"},
            {"date", utcTimestamp()}};
}

} // namespace

int main(int argc, char** argv) {
    const std::string dataDir = argc > 1 ? argv[1] : bulletgpu::test::sharedDataDir();
    const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
    const std::string jsonPath = argc > 3 ? argv[3] : "contact_bench.json";
    const bench::SceneFilter filter(argc > 4 ? argv[4] : "");
    const auto chosen = [&](const char* scene) { return filter.chosen(scene); };
    std::vector<Engine> engines = {{"leafwalk 1t", Backend::Cpu, 1, NarrowTraversal::LeafWalk},
                                   {"leafwalk 2t", Backend::Cpu, 2, NarrowTraversal::LeafWalk},
                                   {"fronts 1t", Backend::Cpu, 1, NarrowTraversal::Fronts},
                                   {"fronts 2t", Backend::Cpu, 2, NarrowTraversal::Fronts}};
    const CudaDeviceProbe probe = probeCudaDevice(0);
    if (probe.usable) {
        engines.push_back({"cuda", Backend::Cuda, 0, NarrowTraversal::LeafWalk});
    } else {
        std::printf("no CUDA rows: %s\n", probe.reason.c_str());
    }
    json report;
    report["machine"] = machineInfo();
    report["command"] = {{"data_dir", dataDir}, {"repeats", repeats}, {"scenes", argc > 4 ? argv[4] : "all"}};
    report["rows"] = json::array();
    const json& machine = report["machine"];
    std::printf("%s, %u logical cores, load %s, %s, commit %s\n", machine["cpuModel"].get<std::string>().c_str(),
                std::thread::hardware_concurrency(), machine["loadAverageAtStart"].get<std::string>().c_str(),
                machine["compiler"].get<std::string>().c_str(), machine["commit"].get<std::string>().c_str());
    std::printf("%-13s %6s %-16s %8s %8s %7s %8s %8s %7s %7s %7s %8s %9s %6s %6s %6s %6s %5s\n", "scene", "tris",
                "contender", "first", "firstmin", "1st bld", "steady", "stdymin", "refit", "cands", "tests", "contacts",
                "cand prs", "x st", "x 1st", "x2 st", "x2 1st", "1st/s");
    struct Scene {
        const char* name;
        const char* frames[2];
    };
    const Scene scenes[] = {{"cloth-ball", {"cloth_ball92", "cloth_ball93"}},
                            {"cloth-funnel", {"227", "228"}},
                            {"rod-twist", {"3036", "3037"}}};
    for (const Scene& scene : scenes) {
        if (!chosen(scene.name)) continue;
        std::vector<PlyMesh> frames(2);
        try {
            for (int f = 0; f < 2; ++f) {
                frames[f] = readPlyMesh(dataDir + "/ccd-frames/" + scene.name + "/frames/" + scene.frames[f] + ".ply");
            }
        } catch (const std::exception& error) {
            std::printf("%-13s skipped: %s\n", scene.name, error.what());
            continue;
        }
        runScene(scene.name, frames, repeats, engines, report["rows"]);
    }
    if (chosen("draped-cloth")) {
        // The folded cloth resting on the ball, its waves moving (two phases alternated).
        const std::vector<PlyMesh> frames = {drapedCloth(cClothSide, 2.0), drapedCloth(cClothSide, 2.05)};
        runScene("draped-cloth", frames, repeats, engines, report["rows"]);
    }
    report["machine"]["loadAverageAtEnd"] = loadAverages();
    std::ofstream(jsonPath) << report.dump(2) << "\n";
    std::printf("load at end %s\n", loadAverages().c_str());
    std::printf(
        "ms; first = first query of a fresh set (addMesh/features, build, grown tree, query), median and min over "
        "repeats; 1st bld: of it, what steady frames do not do (mesh copy, features, tree build; btDbvt: features, "
        "inserts), median; steady = setPositions + query, median and min; refit, cands (traversal), tests (exact tests "
        "and "
        "sort): steady medians; contacts, cand prs: last steady frame; x st / x 1st: btDbvt 1t over this row (steady "
        "median, first median); x2: the same against btDbvt with 2-thread preparation and tests; 1st/s: first over "
        "steady median\n");
    std::printf("JSON written to %s\n", jsonPath.c_str());
    return 0;
}
