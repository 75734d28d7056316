// SPDX-License-Identifier: Zlib
// A twisted cloth in Bullet's classic soft-rigid world (bulletgpu::SoftBodySolver): a strip held
// at both short edges, one edge turning about the strip's axis and moving towards the other so
// that the strip coils onto itself, never has two triangles sharing no vertex that meet, where
// Bullet's default solver lets it pass through itself.
#include "support/cloth_scene.h"

#include <bulletgpu/SoftBodySolver.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <vector>

namespace {

using bulletgpu::SoftBodySolver;
using bulletgpu::SoftCollisionConfig;
using bulletgpu::test::ClothWorld;
using bulletgpu::test::IntersectionCounter;

/// Steps a strip 2 m long and 0.5 m wide (`along` x `across` nodes, margin 0.02) held 1.5 m above
/// the ground at its two short edges, the edge at x = +1 turning about the x axis at `turnRate`
/// radians a second and moving towards the other at `closing` metres a second (both given to the
/// held nodes as velocities, so that the move happens inside each step), for `steps` steps of
/// 1/60 s; returns the steps after which some pair of triangles sharing no vertex met, counted
/// by the engine's discrete query (and by brute force every `bruteEvery` steps, which must agree).
int twistedStrip(bool ours, int steps, int along, int across, double turnRate, double closing, int bruteEvery,
                 int& mismatches) {
    SoftCollisionConfig config;
    config.threads = 1;
    ClothWorld world(ours ? std::make_unique<SoftBodySolver>(config) : nullptr);
    btSoftBody* strip = world.addPatch(btVector3(-1, 1.5f, -0.25f), btVector3(1, 1.5f, -0.25f),
                                       btVector3(-1, 1.5f, 0.25f), btVector3(1, 1.5f, 0.25f), along, 0, 0.02f);
    // CreatePatch numbers nodes row by row: node (i along, j across) is j * along + i.
    std::vector<int> turning;
    for (int j = 0; j < across; ++j) {
        strip->setMass(j * along, 0);
        strip->setMass(j * along + along - 1, 0);
        turning.push_back(j * along + along - 1);
    }
    IntersectionCounter counter(*strip);
    int stepsWithIntersections = 0;
    mismatches = 0;
    const double dt = 1.0 / 60;
    for (int step = 1; step <= steps; ++step) {
        const double angle = turnRate * dt * step;
        const double x = 1 - closing * dt * step;
        for (const int n : turning) {
            // Where the node will be at the end of this step, reached at constant velocity.
            const double z0 = -0.25 + 0.5 * ((n / along) / double(across - 1));
            const btVector3 target(btScalar(x), btScalar(1.5 - z0 * std::sin(angle)), btScalar(z0 * std::cos(angle)));
            strip->m_nodes[n].m_v = (target - strip->m_nodes[n].m_x) / btScalar(dt);
        }
        world.world().stepSimulation(btScalar(dt), 0);
        const std::size_t found = counter.count(*strip);
        if (found > 0) ++stepsWithIntersections;
        if (bruteEvery > 0 && step % bruteEvery == 0 && bulletgpu::test::bruteForceIntersections(*strip) != found)
            ++mismatches;
    }
    return stepsWithIntersections;
}

} // namespace

TEST_CASE("A twisted strip coiling onto itself, 1,000 steps: Bullet's default solver lets it pass through, ours never",
          "[soft][self]") {
    // A 16 x 5 strip, one end turning at 2 rad/s (5.3 turns) and closing in at 9 cm/s.
    int mismatches = 0;
    const int bullet = twistedStrip(false, 1000, 16, 5, 2.0, 0.09, 50, mismatches);
    INFO("Bullet's default solver: " << bullet << " of 1,000 steps with intersections");
    CHECK(bullet > 100);
    CHECK(mismatches == 0);
    const int ours = twistedStrip(true, 1000, 16, 5, 2.0, 0.09, 50, mismatches);
    CHECK(ours == 0);
    CHECK(mismatches == 0);
}
