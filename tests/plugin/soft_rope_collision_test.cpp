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
#include <cmath>
#include <memory>
#include <random>
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
    CHECK(bulletgpu::RopePairProjection{}.project(nodes, pair, 1, 1, 1) == Approx(0.03));
    CHECK(end[3] - end[0] == Approx(0.05));
    CHECK(end[0] == Approx(-0.0075));
    // Node 1 passed through node 0: it goes back to the side it started on.
    end[0] = 0;
    end[3] = -0.01;
    inverseMass[0] = 0;
    inverseMass[1] = 1;
    bulletgpu::RopePairProjection{}.project(nodes, pair, 1, 1, 1);
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
        r.push = bulletgpu::RopePairProjection{}.project(nodes, pair, 1, 1, 1);
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

/// A crowd of `count` nodes of radius 0.01 at seeded random places in a 1 x 0.5 x 0.3 box, all
/// moving by the same offset over the step, and every pair within 0.03 of each other at the end
/// (the projection's list), found by brute force on a grid-free double loop.
struct NodeCrowd {
    std::vector<double> start, end, inverseMass, radius, friction;
    std::vector<std::uint32_t> pairs;

    explicit NodeCrowd(std::uint32_t count, std::uint32_t seed) {
        std::mt19937 random(seed);
        std::uniform_real_distribution<double> unit(0, 1);
        for (std::uint32_t i = 0; i < count; ++i) {
            const double x[3] = {unit(random), 0.5 * unit(random), 0.3 * unit(random)};
            for (int k = 0; k < 3; ++k) {
                end.push_back(x[k]);
                start.push_back(x[k] + (k == 1 ? 0.01 : 0.0));
            }
            inverseMass.push_back(i % 17 == 0 ? 0.0 : 1.0 + (i % 3));
            radius.push_back(0.01);
            friction.push_back(0.2);
        }
        for (std::uint32_t i = 0; i < count; ++i)
            for (std::uint32_t j = i + 1; j < count; ++j) {
                double d2 = 0;
                for (int k = 0; k < 3; ++k) d2 += (end[3 * i + k] - end[3 * j + k]) * (end[3 * i + k] - end[3 * j + k]);
                if (d2 < 0.03 * 0.03) pairs.insert(pairs.end(), {j, i});
            }
    }
    bulletgpu::RopeNodes nodes() {
        return bulletgpu::RopeNodes{static_cast<std::uint32_t>(radius.size()),
                                    start.data(),
                                    end.data(),
                                    inverseMass.data(),
                                    radius.data(),
                                    friction.data()};
    }
};

TEST_CASE("The rope projection gives the same positions on any number of threads", "[soft][rope]") {
    const NodeCrowd crowd(6000, 11);
    REQUIRE(crowd.pairs.size() / 2 >= bulletgpu::RopePairProjection::cGroupedFrom);
    double firstShortfall = -1;
    std::vector<double> firstEnd;
    for (const int threads : {1, 2, 3, 4}) {
        NodeCrowd run = crowd;
        bulletgpu::RopePairProjection projection;
        const double shortfall = projection.project(run.nodes(), run.pairs.data(), run.pairs.size() / 2, 4, threads);
        const double again = projection.project(run.nodes(), run.pairs.data(), run.pairs.size() / 2, 1, threads);
        CHECK(shortfall > 0);
        CHECK(again < shortfall);
        if (firstShortfall < 0) {
            firstShortfall = shortfall;
            firstEnd = run.end;
            continue;
        }
        CHECK(shortfall == firstShortfall);
        CHECK(run.end == firstEnd);
    }
    // Pinned nodes stay where they were.
    for (std::size_t i = 0; i < crowd.radius.size(); i += 17)
        for (int k = 0; k < 3; ++k) CHECK(firstEnd[3 * i + k] == crowd.end[3 * i + k]);
}

TEST_CASE("The rope projection's grouped order projects pairs that share no node as each alone", "[soft][rope]") {
    // Nodes in twos, each two 0.015 apart along a random direction, far enough from the others
    // (on a 0.05 grid) that no other pair is listed: every order gives each pair its own push.
    std::mt19937 random(5);
    std::uniform_real_distribution<double> unit(-1, 1);
    const std::uint32_t twos = 6000;
    std::vector<double> start, end, inverseMass, radius;
    std::vector<std::uint32_t> pairs;
    for (std::uint32_t t = 0; t < twos; ++t) {
        const double centre[3] = {0.05 * (t % 40), 0.05 * (t / 40 % 30), 0.05 * (t / 1200)};
        double d[3] = {unit(random), unit(random), unit(random)};
        const double length = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) + 1e-9;
        for (const double side : {0.5, -0.5})
            for (int k = 0; k < 3; ++k) {
                end.push_back(centre[k] + side * 0.015 * d[k] / length);
                start.push_back(centre[k] + side * 0.02 * d[k] / length);
            }
        inverseMass.insert(inverseMass.end(), {1.0, 2.0});
        radius.insert(radius.end(), {0.01, 0.01});
        pairs.insert(pairs.end(), {2 * t, 2 * t + 1});
    }
    // The pairs listed backwards and the nodes' slabs spread over all groups.
    std::reverse(pairs.begin(), pairs.end());
    std::vector<double> alone = end;
    for (std::uint32_t t = 0; t < twos; ++t) {
        const bulletgpu::RopeNodes nodes{2 * twos, start.data(), alone.data(), inverseMass.data(), radius.data()};
        const std::uint32_t pair[2] = {pairs[2 * t], pairs[2 * t + 1]};
        bulletgpu::RopePairProjection{}.project(nodes, pair, 1, 1, 1);
    }
    const bulletgpu::RopeNodes nodes{2 * twos, start.data(), end.data(), inverseMass.data(), radius.data()};
    CHECK(bulletgpu::RopePairProjection{}.project(nodes, pairs.data(), twos, 1, 2) == Approx(0.005));
    CHECK(end == alone);
}

TEST_CASE("The rope projection's grouped order takes non-finite positions without harm", "[soft][rope]") {
    NodeCrowd crowd(6000, 12);
    crowd.end[3 * 5] = NAN;
    crowd.end[3 * 9 + 1] = INFINITY;
    bulletgpu::RopePairProjection projection;
    const double shortfall = projection.project(crowd.nodes(), crowd.pairs.data(), crowd.pairs.size() / 2, 2, 2);
    CHECK(shortfall > 0);
    std::size_t finite = 0;
    for (const double x : crowd.end) finite += std::isfinite(x) ? 1 : 0;
    CHECK(finite == crowd.end.size() - 2);
}

TEST_CASE("A bundle of ropes lands the same on one and two threads and keeps the thickness", "[soft][rope]") {
    // Twelve ropes of 400 nodes (0.05 apart, thickness 0.05) side by side in three layers 0.055
    // apart, falling 0.3 m onto the ground: enough pairs for the projection's grouped order.
    const double thickness = 0.05;
    const auto run = [&](int threads, std::size_t& largestList) {
        SoftCollisionConfig config;
        config.threads = threads;
        auto owned = std::make_unique<SoftBodySolver>(config);
        const SoftBodySolver& solver = *owned;
        ClothWorld world(std::move(owned));
        std::vector<btSoftBody*> ropes;
        for (int r = 0; r < 12; ++r) {
            const btScalar z = btScalar(0.055 * (r % 4)), y = btScalar(0.3 + 0.055 * (r / 4));
            ropes.push_back(world.addRope(btVector3(0, y, z), btVector3(19.95f, y, z), 400, 0, btScalar(thickness)));
        }
        largestList = 0;
        for (int step = 0; step < 60; ++step) {
            world.world().stepSimulation(btScalar(1) / 60, 0);
            largestList = std::max<std::size_t>(largestList, solver.stats().ropePairs);
        }
        double closest = HUGE_VAL;
        for (std::size_t a = 0; a < ropes.size(); ++a)
            for (std::size_t b = a + 1; b < ropes.size(); ++b)
                closest = std::min(closest, closestBetween(*ropes[a], *ropes[b]));
        std::vector<btVector3> x;
        for (const btSoftBody* rope : ropes)
            for (int i = 0; i < rope->m_nodes.size(); ++i) x.push_back(rope->m_nodes[i].m_x);
        return std::make_pair(closest, x);
    };
    std::size_t listOne = 0, listTwo = 0;
    const auto one = run(1, listOne);
    const auto two = run(2, listTwo);
    CHECK(listOne >= bulletgpu::RopePairProjection::cGroupedFrom);
    CHECK(listTwo == listOne);
    // Stated tolerance as for the heap: 1% of the thickness.
    CHECK(one.first >= 0.99 * thickness);
    CHECK(two.second == one.second);
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
