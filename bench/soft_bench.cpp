// SPDX-License-Identifier: Zlib
// Soft-body self-collision benchmark (issue 28): a cloth folded in three layers falls onto the
// ground and onto itself, at 100x100 and 300x300 nodes
//  - in Bullet's classic soft-rigid world with Bullet's default soft-body solver (no
//    self-collision: the cost of the step without it),
//  - in the same world with bulletgpu::SoftBodySolver (cloth self-collision with the continuous
//    stage), its stage split into the engine's contact query, the CCD queries and the projection,
//  - in Bullet's deformable world (btDeformableMultiBodyDynamicsWorld, btDeformableBodySolver,
//    VF_DD and setSelfCollision, as Bullet's DeformableSelfCollision example, at 240 Hz: four
//    steps for each of the classic world's), its collision work read from Bullet's own profile
//    zones: "Deformable Collision" (the self-contact search, btDbvt::selfCollideT with normal
//    cones), applyRepulsionForce, performGeometricCollisions (its vertex-face CCD and response,
//    5 rounds); then in bulletgpu::DeformableMultiBodyDynamicsWorld, the same zones plus its
//    own counters.
// Then ten coiled ropes of 10,000 nodes each in the classic world with bulletgpu::SoftBodySolver.
// Every step is timed; the tables give medians over the second half of the steps (the cloth has
// landed and lies folded onto itself; the first step, which builds trees and, in the deformable
// world, runs Bullet's O(F^2) face adjacency, apart), counts, the intersecting triangle pairs
// at the end, and the load averages. The deformable world stops after 60 s of steps.
//
// Usage: bulletgpu-bench-soft [threads] [steps below 300x300] [steps 300x300 and up] [scenes, comma-separated:
//        cloth100, cloth300, curtain (the tests' 30x30 curtain, 1,000 steps), ropes, ropes-ccd (the ropes with
//        SoftCollisionConfig::ropeContinuous; not in the default list); or one world of a cloth:
//        classic100, ours100, deformable100, noskip100 (ours with SoftCollisionConfig::skipClearSteps off), classic300,
//        ours300, deformable300 (not in cloth300: its first step alone takes about a minute)] [cloth sizes,
//        comma-separated; 100,300 unless given (the scene names follow them)]
#include "bench/bullet_profile_zones.h"
#include "bench/machine_info.h"
#include "bench/sample_statistics.h"
#include "bench/scene_filter.h"
#include "bench/soft_scenes.h"
#include "demos/scene/soft_tori.h"

#include <bulletgpu/DeformableMultiBodyDynamicsWorld.h>
#include <bulletgpu/SoftBodySolver.h>
#include <bulletgpu/TriangleMeshSet.h>

#include <chrono>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

using namespace bulletgpu;
using bulletgpu::bench::median;

namespace {

using Clock = std::chrono::steady_clock;

/// Wall time after which each deformable world stops stepping.
constexpr double cDeformableBudgetMs = 60000;

double millisecondsSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// Intersecting pairs of triangles sharing no vertex in `body` now (the engine's discrete query).
std::size_t intersections(const btSoftBody& body) {
    std::vector<std::uint32_t> indices;
    for (int f = 0; f < body.m_faces.size(); ++f)
        for (int k = 0; k < 3; ++k)
            indices.push_back(static_cast<std::uint32_t>(body.m_faces[f].m_n[k] - &body.m_nodes[0]));
    std::vector<float> positions;
    for (int n = 0; n < body.m_nodes.size(); ++n)
        for (int k = 0; k < 3; ++k) positions.push_back(static_cast<float>(body.m_nodes[n].m_x[k]));
    TriangleMeshSet set(Backend::Cpu, 2);
    const std::uint32_t mesh = set.addMesh(positions.data(), static_cast<std::uint32_t>(body.m_nodes.size()),
                                           indices.data(), static_cast<std::uint32_t>(indices.size() / 3));
    std::vector<TriangleContact> contacts;
    set.findSelfContacts(mesh, contacts);
    return contacts.size();
}

/// Per-step samples of one run (the first step kept apart).
struct Series {
    double firstMs = 0;
    std::vector<double> step, collision, contact, ccd, projection, other;
    std::vector<double> contacts, impacts, queries;
    double frozen = 0, reverted = 0, skips = 0;
    int stepsRun = 0;                    ///< Steps run (fewer than asked when the time budget ran out).
    std::vector<double> detectionByStep; ///< Contact search + CCD ms of every step.
    std::vector<double> stageByStep;     ///< Collision ms (with the response) of every step.
    std::vector<double> contactsByStep;  ///< Contacts of every step.
    std::vector<char> finiteByStep;      ///< Whether the cloth's positions were finite after each step.
};

std::string cell(const std::vector<double>& v, const char* format = "%.2f") {
    if (v.empty()) return "-";
    char text[32];
    std::snprintf(text, sizeof text, format, median(v));
    return text;
}

/// ", CUDA" or ", CPU": the backend a solver runs on (Auto, or BULLETGPU_BACKEND), for the row names.
std::string backendSuffix(const SoftBodySolver& solver) {
    return solver.backend() == Backend::Cuda ? ", CUDA" : ", CPU";
}

void printRow(const char* scene, const char* world, int steps, const Series& s, std::size_t crossing,
              const std::string& loadBefore) {
    std::printf("| %s | %s | %d of %d | %.1f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f | %.0f / %.0f | %zu | "
                "%s | %s |\n",
                scene, world, s.stepsRun, steps, s.firstMs, cell(s.step).c_str(), cell(s.collision).c_str(),
                cell(s.contact).c_str(), cell(s.ccd).c_str(), cell(s.projection).c_str(), cell(s.other).c_str(),
                cell(s.contacts, "%.0f").c_str(), cell(s.impacts, "%.0f").c_str(), cell(s.queries, "%.2f").c_str(),
                s.skips, s.frozen, s.reverted, crossing, loadBefore.c_str(), loadAverages().c_str());
    std::fflush(stdout);
}

/// Steps `world` `steps` times; `sample(series, stepMs, skip)` records what the solver saw, where
/// `skip` is true for the first half of the steps (the cloth falling, not yet folded onto itself).
template <typename World, typename Sample>
void stepAll(World& world, int steps, Series& series, const Sample& sample, double budgetMs = HUGE_VAL,
             double dt = 1.0 / 60) {
    double spent = 0;
    series.stepsRun = 0;
    for (int i = 0; i < steps && spent < budgetMs; ++i) {
        ++series.stepsRun;
        const Clock::time_point start = Clock::now();
        world.stepSimulation(btScalar(dt), 0);
        const double ms = millisecondsSince(start);
        spent += ms;
        std::fprintf(stderr, "step %d: %.1f ms\n", i, ms);
        if (i == 0) series.firstMs = ms;
        const bool kept = i > 0 && i >= steps / 2;
        if (kept) series.step.push_back(ms);
        sample(series, ms, !kept);
    }
}

/// The folded n x n cloth in the three worlds.
void runCloth(int n, int steps, int threads, bool classic, bool ours, bool oursNoSkip, bool deformable) {
    char scene[32];
    std::snprintf(scene, sizeof scene, "cloth %dx%d", n, n);

    if (classic) { // Bullet's classic world, default solver: the step without self-collision.
        const std::string load = loadAverages();
        bench::ClassicSoftWorld world(nullptr);
        btSoftBody* cloth = world.addFoldedCloth(n);
        Series s;
        stepAll(world.world(), steps, s, [](Series&, double, bool) {});
        printRow(scene, "classic, Bullet's default solver (no self-collision)", steps, s, intersections(*cloth), load);
    }
    for (const bool skip : {true, false}) {
        if (!(skip ? ours : oursNoSkip)) continue;
        const std::string load = loadAverages();
        SoftCollisionConfig config;
        config.threads = threads;
        config.skipClearSteps = skip;
        auto owned = std::make_unique<SoftBodySolver>(config);
        SoftBodySolver& solver = *owned;
        bench::ClassicSoftWorld world(std::move(owned));
        btSoftBody* cloth = world.addFoldedCloth(n);
        Series s;
        stepAll(world.world(), steps, s, [&](Series& out, double stepMs, bool first) {
            const SoftCollisionStats& st = solver.stats();
            out.detectionByStep.push_back(st.contactMilliseconds + st.ccdMilliseconds);
            out.stageByStep.push_back(st.milliseconds);
            out.contactsByStep.push_back(double(st.contactPairs));
            out.finiteByStep.push_back(1);
            out.frozen += double(st.frozenNodes);
            out.reverted += st.revertedCloths;
            out.skips += st.ccdSkips;
            if (first) return;
            out.collision.push_back(st.milliseconds);
            out.contact.push_back(st.contactMilliseconds);
            out.ccd.push_back(st.ccdMilliseconds);
            out.projection.push_back(st.projectionMilliseconds);
            out.other.push_back(stepMs - st.milliseconds);
            out.contacts.push_back(double(st.contactPairs));
            out.impacts.push_back(double(st.impacts));
            out.queries.push_back(double(st.ccdQueries));
        });
        const std::string name = std::string(skip ? "classic, bulletgpu::SoftBodySolver"
                                                  : "classic, bulletgpu::SoftBodySolver, skipClearSteps off") +
                                 backendSuffix(solver);
        printRow(scene, name.c_str(), steps, s, intersections(*cloth), load);
    }
    if (!deformable) {
        if (n < 300) return;
        std::printf("| %s | deformable world | not run: its first step's O(F^2) face adjacency (initializeFaceTree) "
                    "grows with the square of the faces, 83 times the 100x100 cloth's; scene deformable%d runs it |\n",
                    scene, n);
        return;
    }
    // The deformable world steps at 240 Hz: four of its steps span one of the classic world's.
    const int deformableSteps = 4 * steps;
    Series deformableSeries[2];
    for (const bool oursDeformable : {false, true}) {
        // Bullet's deformable world with its own self-collision, then ours in its place.
        const std::string load = loadAverages();
        bench::BulletZoneTimer zones;
        SoftCollisionConfig config;
        config.threads = threads;
        bench::DeformableSoftWorld world(n, oursDeformable ? &config : nullptr);
        const auto* oursWorld = dynamic_cast<const DeformableMultiBodyDynamicsWorld*>(&world.world());
        Series& s = deformableSeries[oursDeformable ? 1 : 0];
        stepAll(
            world.world(), deformableSteps, s,
            [&](Series& out, double stepMs, bool first) {
                SoftCollisionStats st;
                if (oursWorld) st = oursWorld->stats();
                const double self = zones.milliseconds("Deformable Collision") + st.contactMilliseconds;
                const double repulsion = zones.milliseconds("btDeformableMultiBodyDynamicsWorld::applyRepulsionForce") +
                                         st.projectionMilliseconds;
                const double ccd =
                    zones.milliseconds("btDeformableMultiBodyDynamicsWorld::performGeometricCollisions") +
                    st.ccdMilliseconds;
                zones.reset();
                bool finite = true;
                for (int k = 0; k < world.cloth().m_nodes.size() && finite; ++k)
                    for (int c = 0; c < 3; ++c) finite = finite && std::isfinite(world.cloth().m_nodes[k].m_x[c]);
                out.detectionByStep.push_back(self + ccd);
                out.stageByStep.push_back(self + repulsion + ccd);
                out.contactsByStep.push_back(double(world.cloth().m_faceNodeContacts.size()));
                out.finiteByStep.push_back(finite ? 1 : 0);
                out.frozen += double(st.frozenNodes);
                out.reverted += st.revertedCloths;
                out.skips += st.ccdSkips;
                if (first) return;
                out.collision.push_back(self + repulsion + ccd);
                out.contact.push_back(self);
                out.ccd.push_back(ccd);
                out.projection.push_back(repulsion);
                out.other.push_back(stepMs - self - repulsion - ccd);
                out.contacts.push_back(double(world.cloth().m_faceNodeContacts.size()));
                out.impacts.push_back(oursWorld ? double(st.impacts)
                                                : double(world.cloth().m_faceNodeContactsCCD.size()));
                if (oursWorld) out.queries.push_back(double(st.ccdQueries));
            },
            cDeformableBudgetMs, bench::cDeformableStep);
        std::string name = oursDeformable ? "deformable, bulletgpu::DeformableMultiBodyDynamicsWorld"
                                          : "deformable, btDeformableBodySolver VF_DD";
        if (oursWorld) name += oursWorld->backend() == Backend::Cuda ? ", CUDA" : ", CPU";
        printRow(scene, name.c_str(), deformableSteps, s, intersections(world.cloth()), load);
    }
    {
        const Series& s = deformableSeries[0];
        const Series& o = deformableSeries[1];
        const std::size_t count = std::min(o.stageByStep.size(), s.stageByStep.size());
        std::printf(
            "\n%s in the deformable world (240 Hz) step by step (ms; detection = contact search + CCD, "
            "stage = with the response):\n| step | Bullet's detection | Bullet's stage | its face-node contacts | "
            "finite | ours detection | ours stage | our face-node contacts | finite | stage ratio |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n",
            scene);
        for (std::size_t i = 1; i < count; ++i)
            std::printf("| %zu | %.2f | %.2f | %.0f | %s | %.2f | %.2f | %.0f | %s | %.1f |\n", i, s.detectionByStep[i],
                        s.stageByStep[i], s.contactsByStep[i], s.finiteByStep[i] ? "yes" : "no", o.detectionByStep[i],
                        o.stageByStep[i], o.contactsByStep[i], o.finiteByStep[i] ? "yes" : "no",
                        s.stageByStep[i] / std::max(1e-9, o.stageByStep[i]));
        std::printf("\n");
    }
}

/// The tests' 30x30 curtain for `steps` steps with Bullet's default solver and ours with the
/// skip on and off: mean ms per step over all steps (what docs/soft-self-collision.md measured).
void runCurtain(int steps, int threads) {
    for (int variant = 0; variant < 3; ++variant) {
        const std::string load = loadAverages();
        SoftCollisionConfig config;
        config.threads = threads;
        config.skipClearSteps = variant == 1;
        std::unique_ptr<SoftBodySolver> owned;
        if (variant > 0) owned = std::make_unique<SoftBodySolver>(config);
        SoftBodySolver* solver = owned.get();
        bench::ClassicSoftWorld world(std::move(owned));
        world.addCurtain(30);
        double total = 0, stage = 0, contact = 0, ccd = 0, queries = 0, skips = 0;
        for (int i = 0; i < steps; ++i) {
            const Clock::time_point start = Clock::now();
            world.world().stepSimulation(btScalar(1) / 60, 0);
            total += millisecondsSince(start);
            if (!solver) continue;
            const SoftCollisionStats& st = solver->stats();
            stage += st.milliseconds;
            contact += st.contactMilliseconds;
            ccd += st.ccdMilliseconds;
            queries += double(st.ccdQueries);
            skips += st.ccdSkips;
        }
        const char* names[] = {"Bullet's default solver", "ours", "ours, skipClearSteps off"};
        std::printf("| curtain 30x30 | %s | %d | %.2f | %.2f | %.2f | %.2f | %.3f | %.0f | %s | %s |\n", names[variant],
                    steps, total / steps, stage / steps, contact / steps, ccd / steps, queries / steps, skips,
                    load.c_str(), loadAverages().c_str());
        std::fflush(stdout);
    }
}

/// Ten coiled ropes of `nodes` nodes in the classic world with our solver, with the ropes'
/// continuous stage (link CCD) when `continuous`.
void runRopes(int nodes, int steps, int threads, bool continuous, bool friction) {
    const std::string load = loadAverages();
    SoftCollisionConfig config;
    config.threads = threads;
    config.ropeContinuous = continuous;
    auto owned = std::make_unique<SoftBodySolver>(config);
    SoftBodySolver& solver = *owned;
    bench::ClassicSoftWorld world(std::move(owned));
    for (int r = 0; r < 10; ++r) {
        btSoftBody* rope = world.addCoiledRope(nodes, btScalar((r % 5 - 2) * 1.05), btScalar((r / 5) * 1.05), 0.5f);
        if (!friction) rope->m_cfg.kDF = 0;
    }
    Series s;
    std::vector<double> rounds, queries, updates, search;
    stepAll(world.world(), steps, s, [&](Series& out, double stepMs, bool first) {
        const SoftCollisionStats& st = solver.stats();
        out.frozen += double(st.frozenNodes);
        out.reverted += st.revertedRopes;
        if (first) return;
        out.impacts.push_back(double(st.impacts));
        out.collision.push_back(st.ropeMilliseconds);
        out.other.push_back(stepMs - st.milliseconds);
        out.contacts.push_back(double(st.ropePairs));
        rounds.push_back(st.ropeRounds);
        queries.push_back(st.ropeQueries);
        search.push_back(st.ropeSearchMilliseconds);
        updates.push_back(st.ropeMoverUpdates);
    });
    char scene[64];
    std::snprintf(scene, sizeof scene, "10 ropes x %d nodes%s", nodes, friction ? "" : ", kDF 0");
    const std::string name = std::string(continuous ? "classic, bulletgpu::SoftBodySolver (rope stage, link CCD)"
                                                    : "classic, bulletgpu::SoftBodySolver (rope stage)") +
                             backendSuffix(solver);
    printRow(scene, name.c_str(), steps, s, 0, load);
    std::printf("| %s | rope rounds a step %s, of them whole searches %s and moved nodes' searches %s; pair search ms "
                "%s (medians) |\n",
                scene, cell(rounds, "%.0f").c_str(), cell(queries, "%.0f").c_str(), cell(updates, "%.0f").c_str(),
                cell(search, "%.2f").c_str());
}

/// Bullet's default solver with its soft-soft handler timed: processCollision(body, body) is
/// btSoftBody::defaultCollisionHandler, whose VF_SS collides each body's node tree with the
/// other's face tree (btDbvt::collideTT) and makes the SContacts (CollideVF_SS).
class TimedBulletSolver : public btDefaultSoftBodySolver {
public:
    using btDefaultSoftBodySolver::processCollision;
    void processCollision(btSoftBody* body, btSoftBody* other) override {
        const Clock::time_point start = Clock::now();
        btDefaultSoftBodySolver::processCollision(body, other);
        milliseconds += millisecondsSince(start);
    }
    double milliseconds = 0; ///< Time in the handler since the bench last zeroed it.
};

/// SContacts the soft bodies of `bodies` hold now.
double softContacts(const std::vector<btSoftBody*>& bodies) {
    std::size_t count = 0;
    for (const btSoftBody* body : bodies) count += static_cast<std::size_t>(body->m_scontacts.size());
    return double(count);
}

/// SoftDemo's colliding tori (scenes/soft-collide-tori.json, raised by the depth of its ground's
/// top below this world's) for `steps` steps, `repeats` times, Bullet's default solver and ours
/// alternating: each step's soft-soft time (Bullet: its VF_SS handler; ours: the meshes updated,
/// the engine query and Bullet's test per record), our tori's self-collision off so that both
/// solvers do the same work. Medians and means over steps 30 and on.
void runTori(int steps, int threads, int repeats) {
    constexpr int cSettle = 30;
    demo::SoftToriSpec spec;
    spec.height += 10.5f;
    for (int repeat = 0; repeat < repeats; ++repeat) {
        for (const bool oursSolver : {false, true}) {
            const std::string load = loadAverages();
            SoftCollisionConfig config;
            config.threads = threads;
            std::unique_ptr<btSoftBodySolver> owned;
            if (oursSolver)
                owned = std::make_unique<SoftBodySolver>(config);
            else
                owned = std::make_unique<TimedBulletSolver>();
            auto* ours = dynamic_cast<SoftBodySolver*>(owned.get());
            auto* bullet = dynamic_cast<TimedBulletSolver*>(owned.get());
            bench::ClassicSoftWorld world(std::move(owned));
            std::vector<btSoftBody*> tori;
            for (int i = 0; i < spec.count; ++i) {
                tori.push_back(world.adopt(demo::makeSoftTorus(world.world().getWorldInfo(), spec, i)));
                if (ours) ours->setSelfCollision(tori.back(), false);
            }
            std::vector<double> stepMs, softMs, contacts;
            for (int i = 0; i < steps; ++i) {
                if (bullet) bullet->milliseconds = 0;
                const Clock::time_point start = Clock::now();
                world.world().stepSimulation(btScalar(1) / 60, 0);
                const double ms = millisecondsSince(start);
                if (i < cSettle) continue;
                stepMs.push_back(ms);
                softMs.push_back(ours ? ours->meshStats().softMilliseconds : bullet->milliseconds);
                contacts.push_back(softContacts(tori));
            }
            const double mean =
                std::accumulate(softMs.begin(), softMs.end(), 0.0) / double(std::max<std::size_t>(1, softMs.size()));
            std::printf("| %d | %s | %d | %s | %s | %.3f | %s | %s | %s |\n", repeat + 1,
                        ours ? ("bulletgpu::SoftBodySolver" + backendSuffix(*ours)).c_str()
                             : "Bullet's default solver (CollideVF_SS)",
                        steps, cell(stepMs, "%.3f").c_str(), cell(softMs, "%.3f").c_str(), mean,
                        cell(contacts, "%.0f").c_str(), load.c_str(), loadAverages().c_str());
            std::fflush(stdout);
        }
    }
}

} // namespace

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
    const int steps100 = argc > 2 ? std::atoi(argv[2]) : 60;
    const int steps300 = argc > 3 ? std::atoi(argv[3]) : 8;
    const bench::SceneFilter scenes(argc > 4 ? argv[4] : "cloth100,cloth300,curtain,ropes");
    std::printf("%s; CPU: %s, %u hardware threads; %s; %d threads; load %s\n", utcTimestamp().c_str(),
                cpuModel().c_str(), std::thread::hardware_concurrency(), compilerName().c_str(), threads,
                loadAverages().c_str());
    std::printf("Folded cloth (3 layers %.2f m apart, spacing %.2f m, thickness %.2f m) falling onto the ground; ropes "
                "coiled (spacing %.2f m, thickness %.2f m); classic world 60 Hz, deformable world 240 Hz. ms and "
                "counts are medians over the second half of "
                "the steps.\n",
                6 * double(bench::cThickness), double(bench::cSpacing), double(bench::cThickness),
                double(bench::cRopeSpacing), double(bench::cRopeThickness));
    std::printf("| scene | world | steps | first step ms | step ms | collision ms | contact search ms | CCD ms | "
                "projection / repulsion ms | rest of step ms | contacts | CCD impacts | CCD queries | CCD skips (all "
                "steps) | frozen / reverted (all steps) | intersecting pairs at end | load before | load after |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    std::vector<int> sizes;
    for (std::string list = argc > 5 ? argv[5] : "100,300"; !list.empty();) {
        const std::size_t comma = list.find(',');
        sizes.push_back(std::atoi(list.substr(0, comma).c_str()));
        list = comma == std::string::npos ? "" : list.substr(comma + 1);
    }
    for (const int n : sizes) {
        const std::string size = std::to_string(n);
        const bool all = scenes.chosen("cloth" + size);
        const bool classic = all || scenes.chosen("classic" + size), ours = all || scenes.chosen("ours" + size);
        const bool oursNoSkip = scenes.chosen("noskip" + size);
        const bool deformable = (all && n < 300) || scenes.chosen("deformable" + size);
        if (classic || ours || oursNoSkip || deformable)
            runCloth(n, n < 300 ? steps100 : steps300, threads, classic, ours, oursNoSkip, deformable);
    }
    if (scenes.chosen("curtain")) {
        std::printf(
            "\nThe tests' curtain, means over all steps:\n| scene | solver | steps | step ms | stage ms | contact "
            "search ms | CCD ms | CCD queries a step | CCD skips | load before | load after |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|\n");
        runCurtain(1000, threads);
    }
    if (scenes.chosen("tori")) {
        std::printf("\nSoftDemo's colliding tori (three of 300 nodes and 600 faces, VF_SS), 60 Hz; soft-soft = "
                    "node-face contacts between the tori; ms medians over steps 30 and on:\n| run | solver | steps | "
                    "step ms | soft-soft ms | soft-soft ms (mean) | SContacts | load before | load after |\n"
                    "|---|---|---|---|---|---|---|---|---|\n");
        runTori(steps100 < 60 ? 300 : 5 * steps100, threads, 3);
    }
    if (scenes.chosen("ropes")) runRopes(10000, steps100, threads, false, true);
    if (scenes.chosen("ropes-frictionless")) runRopes(10000, steps100, threads, false, false);
    if (scenes.chosen("ropes-ccd")) runRopes(10000, steps100, threads, true, true);
    return 0;
}
