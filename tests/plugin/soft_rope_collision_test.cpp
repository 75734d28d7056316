// SPDX-License-Identifier: Zlib
// Rope self-collision and rope against rope in Bullet's classic soft-rigid world
// (bulletgpu::SoftBodySolver, ropes as sphere chains): a rope dropped into a heap keeps its
// non-neighbour nodes the thickness apart, where Bullet's default solver lets them meet.
#include "bullet_adapter/soft_rope_chains.h"
#include "support/cloth_scene.h"

#include <bulletgpu/SoftBodySolver.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <vector>

namespace {

using bulletgpu::SoftBodySolver;
using bulletgpu::SoftCollisionConfig;
using bulletgpu::test::ClothWorld;

/// A solver on one CPU thread.
std::unique_ptr<SoftBodySolver> makeSolver() {
    SoftCollisionConfig config;
    config.threads = 1;
    return std::make_unique<SoftBodySolver>(config);
}

/// The least distance between nodes i and j of `rope` with j > i + 1 (non-neighbours).
double closestNonNeighbours(const btSoftBody& rope) {
    double closest = HUGE_VAL;
    for (int i = 0; i < rope.m_nodes.size(); ++i)
        for (int j = i + 2; j < rope.m_nodes.size(); ++j)
            closest = std::min(closest, double((rope.m_nodes[i].m_x - rope.m_nodes[j].m_x).length()));
    return closest;
}

/// The least distance between a node of `a` and a node of `b`.
double closestBetween(const btSoftBody& a, const btSoftBody& b) {
    double closest = HUGE_VAL;
    for (int i = 0; i < a.m_nodes.size(); ++i)
        for (int j = 0; j < b.m_nodes.size(); ++j)
            closest = std::min(closest, double((a.m_nodes[i].m_x - b.m_nodes[j].m_x).length()));
    return closest;
}

/// A 6 m rope of 121 nodes (0.05 m apart), standing 0.5 m above the ground and leaning a little,
/// so that it piles into a heap as it falls; margin (and thickness) 0.05.
btSoftBody* addStandingRope(ClothWorld& world) {
    return world.addRope(btVector3(0, 0.5, 0), btVector3(0.3, 6.5, 0.1), 121, 0, 0.05f);
}

/// Steps `world` `steps` times at 60 Hz and returns the least closestNonNeighbours after a step.
double closestOverRun(ClothWorld& world, const btSoftBody& rope, int steps) {
    double closest = HUGE_VAL;
    for (int step = 0; step < steps; ++step) {
        world.world().stepSimulation(btScalar(1) / 60, 0);
        closest = std::min(closest, closestNonNeighbours(rope));
    }
    return closest;
}

} // namespace

TEST_CASE("A rope falling into a heap keeps its non-neighbour nodes the thickness apart", "[soft][rope]") {
    const double thickness = 0.05;
    ClothWorld control(nullptr);
    const double bullet = closestOverRun(control, *addStandingRope(control), 600);
    INFO("Bullet's default solver: closest non-neighbour nodes " << bullet);
    CHECK(bullet < 0.1 * thickness);

    auto solver = makeSolver();
    SoftBodySolver& ours = *solver;
    ClothWorld world(std::move(solver));
    btSoftBody* rope = addStandingRope(world);
    // Stated tolerance: 1% of the thickness (the rounds stop at 0.1%).
    CHECK(closestOverRun(world, *rope, 600) >= 0.99 * thickness);
    CHECK(ours.stats().ropes == 1);
    CHECK(ours.stats().ropePairs > 0);
    // It lies on the ground in a heap a few thicknesses high.
    CHECK(rope->m_bounds[1].y() < 0.5);
}

TEST_CASE("A rope falling across another keeps the thickness from it", "[soft][rope]") {
    const double thickness = 0.05;
    const auto run = [&](ClothWorld& world) {
        btSoftBody* lower = world.addRope(btVector3(-1, 0.2, 0), btVector3(1, 0.2, 0), 41, 0, 0.05f);
        btSoftBody* upper = world.addRope(btVector3(0, 0.6, -1), btVector3(0, 0.6, 1), 41, 0, 0.05f);
        double closest = HUGE_VAL;
        for (int step = 0; step < 200; ++step) {
            world.world().stepSimulation(btScalar(1) / 60, 0);
            closest = std::min(closest, closestBetween(*lower, *upper));
        }
        return closest;
    };
    ClothWorld control(nullptr);
    const double bullet = run(control);
    INFO("Bullet's default solver: closest nodes of the two ropes " << bullet);
    CHECK(bullet < 0.5 * thickness);

    ClothWorld world(makeSolver());
    CHECK(run(world) >= 0.99 * thickness);
}

TEST_CASE("Only chains of consecutive nodes are ropes", "[soft][rope]") {
    ClothWorld world(nullptr);
    btSoftBody* rope = world.addRope(btVector3(0, 1, 0), btVector3(1, 1, 0), 10, 0, 0.05f);
    CHECK(bulletgpu::SoftRopeChains::isRope(*rope));
    rope->generateBendingConstraints(2);
    CHECK(bulletgpu::SoftRopeChains::isRope(*rope));
    rope->appendLink(0, 5);
    CHECK_FALSE(bulletgpu::SoftRopeChains::isRope(*rope));
    btSoftBody* patch =
        world.addPatch(btVector3(0, 1, 0), btVector3(1, 1, 0), btVector3(0, 1, 1), btVector3(1, 1, 1), 4, 0, 0.05f);
    CHECK_FALSE(bulletgpu::SoftRopeChains::isRope(*patch));
}

TEST_CASE("The rope projection restores the sum of the radii, by inverse mass and on the start side", "[soft][rope]") {
    std::vector<double> start{0, 0, 0, 0.1, 0, 0};
    std::vector<double> end{0, 0, 0, 0.02, 0, 0};
    std::vector<double> inverseMass{1, 3};
    std::vector<double> radius{0.025, 0.025};
    const std::uint32_t pair[2] = {1, 0};
    const bulletgpu::RopeNodes nodes{2, start.data(), end.data(), inverseMass.data(), radius.data()};
    CHECK(bulletgpu::projectRopePairs(nodes, pair, 1, 1) == Approx(0.03));
    CHECK(end[3] - end[0] == Approx(0.05));
    CHECK(end[0] == Approx(-0.0075));
    // Node 1 passed through node 0: it goes back to the side it started on.
    end[0] = 0;
    end[3] = -0.01;
    inverseMass[0] = 0;
    inverseMass[1] = 1;
    bulletgpu::projectRopePairs(nodes, pair, 1, 1);
    CHECK(end[3] == Approx(0.05));
    CHECK(end[0] == 0);
}
