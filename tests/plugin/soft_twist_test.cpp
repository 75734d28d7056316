// SPDX-License-Identifier: Zlib
// A twisted cloth in Bullet's classic soft-rigid world (bulletgpu::SoftBodySolver): a strip held
// at both short edges, one edge turning about the strip's axis and moving towards the other so
// that the strip coils onto itself, never has two triangles sharing no vertex that meet, where
// Bullet's default solver lets it pass through itself.
#include "support/cloth_scene.h"
#include "support/twisted_strip.h"

#include <bulletgpu/SoftBodySolver.h>

#include <catch2/catch.hpp>

#include <memory>
#include <vector>

namespace {

using bulletgpu::SoftBodySolver;
using bulletgpu::SoftCollisionConfig;
using bulletgpu::test::ClothWorld;
using bulletgpu::test::TwistedStrip;

/// Steps the strip of `shape` (margin 0.02) for `steps` steps of 1/60 s; returns the steps after
/// which some pair of triangles sharing no vertex met, counted by the engine's discrete query
/// (and by brute force every `bruteEvery` steps, which must agree).
int twistedStrip(bool ours, int steps, const TwistedStrip& shape, int bruteEvery, int& mismatches) {
    SoftCollisionConfig config;
    config.threads = 1;
    ClothWorld world(ours ? std::make_unique<SoftBodySolver>(config) : nullptr);
    btSoftBody* strip = world.addPatch(shape.corner(0), shape.corner(1), shape.corner(2), shape.corner(3), shape.along,
                                       0, 0.02f, shape.across);
    return bulletgpu::test::stepTwistedStrip(world.world(), *strip, shape, steps, 1.0 / 60, bruteEvery, mismatches);
}

} // namespace

TEST_CASE("A twisted strip coiling onto itself, 1,000 steps: Bullet's default solver lets it pass through, ours never",
          "[soft][self]") {
    // A 16 x 5 strip, one end turning at 2 rad/s (5.3 turns) and closing in at 9 cm/s.
    int mismatches = 0;
    const int bullet = twistedStrip(false, 1000, TwistedStrip{16, 5, 2.0, 0.09}, 50, mismatches);
    INFO("Bullet's default solver: " << bullet << " of 1,000 steps with intersections");
    CHECK(bullet > 100);
    CHECK(mismatches == 0);
    const int ours = twistedStrip(true, 1000, TwistedStrip{16, 5, 2.0, 0.09}, 50, mismatches);
    CHECK(ours == 0);
    CHECK(mismatches == 0);
}
