// SPDX-License-Identifier: Zlib
// Rope self-collision and rope against rope in Bullet's classic soft-rigid world
// (bulletgpu::SoftBodySolver, ropes as sphere chains): a rope dropped into a heap keeps its
// non-neighbour nodes the thickness apart, where Bullet's default solver lets them meet.
#include "bullet_adapter/soft_rope_chains.h"
#include "kernels/narrow/ccd/ccd_queries.h"
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

/// The node positions of `rope`.
std::vector<bulletgpu::Vec3d> positionsOf(const btSoftBody& rope) {
    std::vector<bulletgpu::Vec3d> x;
    for (int i = 0; i < rope.m_nodes.size(); ++i) {
        const btVector3& p = rope.m_nodes[i].m_x;
        x.push_back(bulletgpu::Vec3d{{double(p.x()), double(p.y()), double(p.z())}});
    }
    return x;
}

/// Pairs of links (i, i + 1) and (j, j + 1), j > i + 1, that touch at some time of the step from
/// `start` to `end`, every node moving linearly: the edge-edge CCD query at eta = 0, on the pairs
/// whose swept boxes overlap. A link passing through another has to touch it.
int touchingLinks(const std::vector<bulletgpu::Vec3d>& start, const std::vector<bulletgpu::Vec3d>& end) {
    const std::size_t links = start.size() - 1;
    std::vector<bulletgpu::Vec3d> lo(links), hi(links);
    for (std::size_t i = 0; i < links; ++i) {
        for (int k = 0; k < 3; ++k) {
            const double c[4] = {start[i].v[k], start[i + 1].v[k], end[i].v[k], end[i + 1].v[k]};
            lo[i].v[k] = *std::min_element(c, c + 4);
            hi[i].v[k] = *std::max_element(c, c + 4);
        }
    }
    int touching = 0;
    for (std::size_t i = 0; i < links; ++i) {
        for (std::size_t j = i + 2; j < links; ++j) {
            bool apart = false;
            for (int k = 0; k < 3; ++k) apart = apart || lo[i].v[k] > hi[j].v[k] || lo[j].v[k] > hi[i].v[k];
            if (apart) continue;
            const bulletgpu::Vec3d x0[4] = {start[i], start[i + 1], start[j], start[j + 1]};
            const bulletgpu::Vec3d x1[4] = {end[i], end[i + 1], end[j], end[j + 1]};
            bulletgpu::CcdResult result;
            bulletgpu::edgeEdgeCcd(x0, x1, 0.0, bulletgpu::CcdOptions{}, result);
            touching += result.hit ? 1 : 0;
        }
    }
    return touching;
}

/// Steps `world` `steps` times at 60 Hz and returns the least closestNonNeighbours after a step;
/// with `solver`, sums its rounds that searched the moved nodes' pairs only into `moverUpdates`.
double closestOverRun(ClothWorld& world, const btSoftBody& rope, int steps, const SoftBodySolver* solver = nullptr,
                      std::uint64_t* moverUpdates = nullptr) {
    double closest = HUGE_VAL;
    for (int step = 0; step < steps; ++step) {
        world.world().stepSimulation(btScalar(1) / 60, 0);
        closest = std::min(closest, closestNonNeighbours(rope));
        if (solver) *moverUpdates += solver->stats().ropeMoverUpdates;
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
    // Stated tolerance: 1% of the thickness (the rounds stop at 0.1%), with the pair list kept
    // over rounds and steps and updated around the nodes that moved.
    std::uint64_t moverUpdates = 0;
    CHECK(closestOverRun(world, *rope, 600, &ours, &moverUpdates) >= 0.99 * thickness);
    CHECK(moverUpdates > 0);
    CHECK(ours.stats().ropes == 1);
    CHECK(ours.stats().ropePairs > 0);
    // It lies on the ground in a heap a few thicknesses high.
    CHECK(rope->m_bounds[1].y() < 0.5);
}

TEST_CASE("No link of a rope falling into a heap passes through another between steps", "[soft][rope]") {
    // Each step's motion of the nodes, taken as linear, is checked with the edge-edge CCD query:
    // no two non-adjacent links may touch during any step.
    std::uint64_t impacts = 0, frozen = 0;
    const auto run = [&](ClothWorld& world, const SoftBodySolver* ours) {
        btSoftBody* rope = addStandingRope(world);
        int touching = 0;
        for (int step = 0; step < 600; ++step) {
            const std::vector<bulletgpu::Vec3d> start = positionsOf(*rope);
            world.world().stepSimulation(btScalar(1) / 60, 0);
            touching += touchingLinks(start, positionsOf(*rope));
            if (ours != nullptr) {
                impacts += ours->stats().impacts;
                frozen += ours->stats().frozenNodes;
            }
        }
        return touching;
    };
    ClothWorld control(nullptr);
    const int bullet = run(control, nullptr);
    INFO("Bullet's default solver: link pairs that touched during a step " << bullet);
    CHECK(bullet > 0);

    SoftCollisionConfig config;
    config.threads = 1;
    config.ropeContinuous = true;
    auto solver = std::make_unique<SoftBodySolver>(config);
    const SoftBodySolver& ours = *solver;
    ClothWorld world(std::move(solver));
    CHECK(run(world, &ours) == 0);
    // The continuous stage did the work: without it, links of this heap touch.
    INFO("link impacts " << impacts << ", nodes put back " << frozen);
    CHECK(impacts > 0);
    CHECK(frozen > 0);
    ClothWorld withoutCcd(makeSolver()); // ropeContinuous off, the default
    CHECK(run(withoutCcd, nullptr) > 0);
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

TEST_CASE("The rope projection's friction holds a slip within mu times the push and cuts a larger one",
          "[soft][rope]") {
    // Node 1 starts 0.05 above node 0 and ends 0.04 above it, moved sideways by `slip`; inverse
    // masses 1 and 3. The push goes along n, the direction between them at the end.
    struct Result {
        double push, n[2], across; ///< The push, n (x, y), |relative move across n| after.
        double centre[2];          ///< Mass-weighted sum of the end positions (x, y) after.
    };
    const auto project = [](double slip, double mu) {
        const std::vector<double> start{0, 0, 0, 0, 0.05, 0};
        std::vector<double> end{0, 0, 0, slip, 0.04, 0};
        const std::vector<double> inverseMass{1, 3}, radius{0.025, 0.025}, friction{mu / 2, mu};
        const std::uint32_t pair[2] = {1, 0};
        const bulletgpu::RopeNodes nodes{
            2, start.data(), end.data(), inverseMass.data(), radius.data(), friction.data()};
        Result r;
        const double length = std::hypot(slip, 0.04);
        r.n[0] = slip / length;
        r.n[1] = 0.04 / length;
        r.push = bulletgpu::projectRopePairs(nodes, pair, 1, 1);
        const double move[2] = {end[3] - end[0], end[4] - end[1] - 0.05}; // Relative move over the step.
        r.across = std::fabs(move[0] * r.n[1] - move[1] * r.n[0]);
        r.centre[0] = end[0] + end[3] / 3;
        r.centre[1] = end[1] + end[4] / 3;
        return r;
    };
    for (const double slip : {0.001, 0.02}) {
        const double length = std::hypot(slip, 0.04), push = 0.05 - length;
        const double across = 0.05 * slip / length; // What the push alone leaves across n.
        INFO("slip " << slip);
        const Result none = project(slip, 0);
        CHECK(none.push == Approx(push));
        CHECK(none.across == Approx(across));
        const Result rough = project(slip, 0.5);
        CHECK(rough.push == Approx(push));
        // Within 0.5 * push it sticks (nothing left across n), beyond it slides 0.5 * push less.
        if (across <= 0.5 * push)
            CHECK(rough.across == Approx(0).margin(1e-12));
        else
            CHECK(rough.across == Approx(across - 0.5 * push));
        // Shared by inverse mass: the mass-weighted centre stays where it was.
        CHECK(rough.centre[0] == Approx(slip / 3));
        CHECK(rough.centre[1] == Approx(0.04 / 3));
    }
    CHECK(0.05 * 0.001 / std::hypot(0.001, 0.04) <= 0.5 * (0.05 - std::hypot(0.001, 0.04))); // Both cases run.
    CHECK(0.05 * 0.02 / std::hypot(0.02, 0.04) > 0.5 * (0.05 - std::hypot(0.02, 0.04)));
}

TEST_CASE("Ropes falling together keep their pairs without searching again", "[soft][rope]") {
    // Two ropes side by side, 1.2 thicknesses apart (within the search reach of 1.5), falling
    // freely: every node moves many thicknesses a step, but all alike, so after the first
    // search no round searches again.
    auto solver = makeSolver();
    SoftBodySolver& ours = *solver;
    ClothWorld world(std::move(solver));
    const btScalar thickness = 0.05f;
    world.addRope(btVector3(-1, 50, 0), btVector3(1, 50, 0), 41, 0, thickness);
    world.addRope(btVector3(-1, 50, 1.2f * thickness), btVector3(1, 50, 1.2f * thickness), 41, 0, thickness);
    std::uint32_t searches = 0;
    std::uint64_t pairs = 0;
    for (int step = 0; step < 60; ++step) {
        world.world().stepSimulation(btScalar(1) / 60, 0);
        if (step == 0) continue;
        searches += ours.stats().ropeQueries + ours.stats().ropeMoverUpdates;
        pairs += ours.stats().ropePairs;
    }
    CHECK(pairs >= 59 * 41); // Each node of one rope listed with its neighbour on the other.
    CHECK(searches == 0);
}

TEST_CASE("A rope node gone non-finite meets nothing and the other ropes go on", "[soft][rope]") {
    auto solver = makeSolver();
    SoftBodySolver& ours = *solver;
    ClothWorld world(std::move(solver));
    btSoftBody* broken = world.addRope(btVector3(3, 0.5, 0), btVector3(3.3, 3.5, 0.1), 61, 0, 0.05f);
    btSoftBody* rope = addStandingRope(world);
    for (int step = 0; step < 120; ++step) world.world().stepSimulation(btScalar(1) / 60, 0);
    broken->m_nodes[30].m_x.setX(std::numeric_limits<btScalar>::quiet_NaN());
    broken->m_nodes[31].m_x.setY(std::numeric_limits<btScalar>::infinity());
    std::uint64_t pairs = 0;
    double closest = HUGE_VAL;
    for (int step = 0; step < 120; ++step) {
        REQUIRE_NOTHROW(world.world().stepSimulation(btScalar(1) / 60, 0));
        pairs += ours.stats().ropePairs;
        closest = std::min(closest, closestNonNeighbours(*rope));
    }
    for (int n = 0; n < rope->m_nodes.size(); ++n) {
        const btVector3& x = rope->m_nodes[n].m_x;
        REQUIRE((std::isfinite(x.x()) && std::isfinite(x.y()) && std::isfinite(x.z())));
    }
    CHECK(pairs > 0);
    CHECK(closest >= 0.99 * 0.05);
}
