// SPDX-License-Identifier: Zlib
// Cloth self-collision in Bullet's classic soft-rigid world (bulletgpu::SoftBodySolver): a curtain
// that falls over and folds onto itself never has two triangles sharing no vertex that meet, where
// Bullet's default solver lets it pass through itself; everything else stays Bullet's.
#include "support/cloth_scene.h"
#include "support/environment_override.h"
#include "support/test_skip.h"
#include "kernels/common/cuda_device.h"

#include <bulletgpu/SoftBodySolver.h>

#include <catch2/catch.hpp>

#include <cmath>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using bulletgpu::SoftBodySolver;
using bulletgpu::SoftCollisionConfig;
using bulletgpu::test::ClothWorld;
using bulletgpu::test::IntersectionCounter;

/// A solver on one CPU thread, with `iterations` projection passes.
std::unique_ptr<SoftBodySolver> makeSolver(int iterations = SoftCollisionConfig{}.iterations) {
    SoftCollisionConfig config;
    config.threads = 1;
    config.iterations = iterations;
    return std::make_unique<SoftBodySolver>(config);
}

/// A `nodes` x `nodes` curtain, 2 m square, standing 0.3 m above the ground and leaning over by
/// 0.3 m, so that it folds onto itself as it falls; margin (and thickness) 0.03.
btSoftBody* addCurtain(ClothWorld& world, int nodes, int fixeds = 0, btScalar x = 0) {
    return world.addPatch(btVector3(x - 1, 0.3, 0), btVector3(x + 1, 0.3, 0), btVector3(x - 1, 2.3, 0.3),
                          btVector3(x + 1, 2.3, 0.3), nodes, fixeds, 0.03f);
}

/// What a run saw.
struct RunCounts {
    int stepsWithIntersections = 0; ///< Steps after which some pair met (engine query).
    std::size_t most = 0;           ///< Most pairs after one step.
    int bruteForceSteps = 0;        ///< Steps checked by brute force too.
    int bruteForceMismatches = 0;   ///< Of them, steps where brute force disagreed with the engine.
};

/// Steps `world` `steps` times at 60 Hz and counts the curtain's intersecting pairs after each
/// step, by brute force too every `bruteEvery` steps (0: never).
RunCounts run(ClothWorld& world, btSoftBody* curtain, int steps, int bruteEvery) {
    RunCounts counts;
    IntersectionCounter counter(*curtain);
    for (int step = 1; step <= steps; ++step) {
        world.world().stepSimulation(btScalar(1) / 60, 0);
        const std::size_t found = counter.count(*curtain);
        if (found > 0) ++counts.stepsWithIntersections;
        counts.most = std::max(counts.most, found);
        if (bruteEvery > 0 && step % bruteEvery == 0) {
            ++counts.bruteForceSteps;
            if (bulletgpu::test::bruteForceIntersections(*curtain) != found) ++counts.bruteForceMismatches;
        }
    }
    return counts;
}

} // namespace

TEST_CASE("A 20x20 curtain folding onto itself: Bullet's default solver lets it pass through, ours never",
          "[soft][self]") {
    ClothWorld control(nullptr);
    const RunCounts bullet = run(control, addCurtain(control, 20), 400, 8);
    INFO("Bullet's default solver: " << bullet.stepsWithIntersections << " of 400 steps with intersections, at most "
                                     << bullet.most << " pairs");
    CHECK(bullet.stepsWithIntersections > 20);
    CHECK(bullet.bruteForceMismatches == 0);

    auto solver = makeSolver();
    SoftBodySolver& ours = *solver;
    ClothWorld world(std::move(solver));
    btSoftBody* curtain = addCurtain(world, 20);
    const RunCounts counts = run(world, curtain, 400, 8);
    CHECK(counts.stepsWithIntersections == 0);
    CHECK(counts.bruteForceSteps == 50);
    CHECK(counts.bruteForceMismatches == 0);
    CHECK(ours.stats().cloths == 1);
    // It came to rest folded: its nodes lie within a few thicknesses of the ground.
    CHECK(curtain->m_bounds[1].y() < 0.2);
}

TEST_CASE("A 30x30 curtain, 1,000 steps: no intersection at any step", "[soft][self][slow]") {
    ClothWorld control(nullptr);
    const RunCounts bullet = run(control, addCurtain(control, 30), 1000, 0);
    CHECK(bullet.stepsWithIntersections > 20);

    ClothWorld world(makeSolver());
    const RunCounts counts = run(world, addCurtain(world, 30), 1000, 0);
    CHECK(counts.stepsWithIntersections == 0);
}

TEST_CASE("The continuous stage alone keeps the guarantee: no projection, impacting nodes frozen", "[soft][self]") {
    auto solver = makeSolver(0);
    SoftBodySolver& ours = *solver;
    ClothWorld world(std::move(solver));
    btSoftBody* curtain = addCurtain(world, 16);
    IntersectionCounter counter(*curtain);
    int stepsWithIntersections = 0;
    std::uint64_t frozen = 0;
    for (int step = 0; step < 300; ++step) {
        world.world().stepSimulation(btScalar(1) / 60, 0);
        if (counter.count(*curtain) > 0) ++stepsWithIntersections;
        frozen += ours.stats().frozenNodes;
    }
    CHECK(stepsWithIntersections == 0);
    CHECK(frozen > 0);
}

TEST_CASE("Pinned nodes stay, and cloths come and go", "[soft][self]") {
    auto solver = makeSolver();
    SoftBodySolver& ours = *solver;
    ClothWorld world(std::move(solver));
    // Pinned at both upper corners: it swings down and folds against itself.
    btSoftBody* hanging = addCurtain(world, 16, 4 | 8);
    const btVector3 pinned = hanging->m_nodes[16 * 16 - 1].m_x;
    IntersectionCounter hangingCounter(*hanging);
    btSoftBody* second = nullptr;
    for (int step = 1; step <= 300; ++step) {
        if (step == 60) second = addCurtain(world, 12, 0, 3);
        if (step == 200) {
            world.removeCloth(hanging);
            hanging = nullptr;
        }
        world.world().stepSimulation(btScalar(1) / 60, 0);
        if (hanging) {
            REQUIRE(hangingCounter.count(*hanging) == 0);
            REQUIRE(hanging->m_nodes[16 * 16 - 1].m_x == pinned);
            REQUIRE(ours.stats().cloths == (second ? 2u : 1u));
        }
        if (second) REQUIRE(bulletgpu::test::bruteForceIntersections(*second) == 0);
    }
    CHECK(ours.stats().cloths == 1);
}

TEST_CASE("With self-collision off for a body, the solver steps it as Bullet's does, bit for bit", "[soft][self]") {
    ClothWorld control(nullptr);
    btSoftBody* expected = addCurtain(control, 12);
    auto solver = makeSolver();
    SoftBodySolver& ours = *solver;
    ClothWorld world(std::move(solver));
    btSoftBody* curtain = addCurtain(world, 12);
    ours.setSelfCollision(curtain, false);
    CHECK_FALSE(ours.selfCollision(curtain));
    for (int step = 0; step < 200; ++step) {
        control.world().stepSimulation(btScalar(1) / 60, 0);
        world.world().stepSimulation(btScalar(1) / 60, 0);
    }
    CHECK(ours.stats().cloths == 0);
    int different = 0;
    for (int n = 0; n < curtain->m_nodes.size(); ++n)
        if (curtain->m_nodes[n].m_x != expected->m_nodes[n].m_x) ++different;
    CHECK(different == 0);
}

TEST_CASE("SoftCollisionConfig is checked", "[soft][self]") {
    SoftCollisionConfig config;
    config.cudaDevice = -1;
    CHECK_THROWS_AS(SoftBodySolver(config), std::invalid_argument);
    config = SoftCollisionConfig{};
    config.iterations = -1;
    CHECK_THROWS_AS(SoftBodySolver(config), std::invalid_argument);
    config = SoftCollisionConfig{};
    config.pairListReach = -0.5;
    CHECK_THROWS_AS(SoftBodySolver(config), std::invalid_argument);
    config.pairListReach = HUGE_VAL;
    CHECK_THROWS_AS(SoftBodySolver(config), std::invalid_argument);
}

TEST_CASE("The soft solver picks its backend like the broad phase, with one log line", "[soft][api]") {
    const bulletgpu::test::EnvironmentOverride variable("BULLETGPU_BACKEND");
    unsetenv("BULLETGPU_BACKEND");
    const bool gpu = bulletgpu::probeCudaDevice(0).usable;
    std::vector<std::string> lines;
    SoftCollisionConfig config;
    config.logSink = [&](const char* line) { lines.emplace_back(line); };
    if (!gpu) {
        config.backend = bulletgpu::Backend::Cuda;
        CHECK_THROWS_AS(SoftBodySolver(config), std::runtime_error);
        config.backend = bulletgpu::Backend::Auto;
    }
    lines.clear();
    CHECK(SoftBodySolver(config).backend() == (gpu ? bulletgpu::Backend::Cuda : bulletgpu::Backend::Cpu));
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find(gpu ? "CUDA" : "no GPU") != std::string::npos);
    variable.set(" Cpu ");
    lines.clear();
    CHECK(SoftBodySolver(config).backend() == bulletgpu::Backend::Cpu);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find("asked for cpu") != std::string::npos);
    variable.set("gpu");
    CHECK_THROWS_AS(SoftBodySolver(config), std::runtime_error);
    config.logBackendChoice = false;
    variable.set("cpu");
    lines.clear();
    const SoftBodySolver quiet(config);
    CHECK(lines.empty());
}

TEST_CASE("The CUDA backend steps cloth and rope as the CPU backend does, bit for bit", "[soft][self][cuda]") {
    SoftCollisionConfig config;
    config.threads = 1;
    config.backend = bulletgpu::Backend::Cuda;
    std::unique_ptr<SoftBodySolver> cuda;
    try {
        cuda = std::make_unique<SoftBodySolver>(config);
    } catch (const std::runtime_error& e) {
        bulletgpu::test::skipTestCase(std::string("no CUDA device: ") + e.what());
        return;
    }
    REQUIRE(cuda->backend() == bulletgpu::Backend::Cuda);
    config.backend = bulletgpu::Backend::Cpu;
    ClothWorld onDevice(std::move(cuda));
    ClothWorld onHost(std::make_unique<SoftBodySolver>(config));
    btSoftBody* deviceCloth = addCurtain(onDevice, 16);
    btSoftBody* hostCloth = addCurtain(onHost, 16);
    btSoftBody* deviceRope = onDevice.addRope(btVector3(3, 0.5, 0), btVector3(3.2, 3.5, 0), 61, 0, 0.05f);
    btSoftBody* hostRope = onHost.addRope(btVector3(3, 0.5, 0), btVector3(3.2, 3.5, 0), 61, 0, 0.05f);
    for (int step = 0; step < 200; ++step) {
        onDevice.world().stepSimulation(btScalar(1) / 60, 0);
        onHost.world().stepSimulation(btScalar(1) / 60, 0);
    }
    int different = 0;
    for (int n = 0; n < hostCloth->m_nodes.size(); ++n)
        if (deviceCloth->m_nodes[n].m_x != hostCloth->m_nodes[n].m_x) ++different;
    for (int n = 0; n < hostRope->m_nodes.size(); ++n)
        if (deviceRope->m_nodes[n].m_x != hostRope->m_nodes[n].m_x) ++different;
    CHECK(different == 0);
}

TEST_CASE("Steps the contact query proves clear skip the CCD query, and stay free of intersections", "[soft][self]") {
    SoftCollisionConfig config;
    config.threads = 1;
    auto solver = std::make_unique<SoftBodySolver>(config);
    SoftBodySolver& ours = *solver;
    ClothWorld world(std::move(solver));
    btSoftBody* curtain = addCurtain(world, 16);
    IntersectionCounter counter(*curtain);
    int stepsWithIntersections = 0, skips = 0, queried = 0;
    for (int step = 0; step < 400; ++step) {
        world.world().stepSimulation(btScalar(1) / 60, 0);
        if (counter.count(*curtain) > 0) ++stepsWithIntersections;
        skips += static_cast<int>(ours.stats().ccdSkips);
        queried += ours.stats().ccdQueries > 0 ? 1 : 0;
    }
    CHECK(stepsWithIntersections == 0);
    CHECK(skips > 100);  // the settled cloth's steps
    CHECK(queried > 10); // the fall and the fold
    CHECK(skips + queried == 400);
}
