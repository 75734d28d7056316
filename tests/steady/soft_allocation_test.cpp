// SPDX-License-Identifier: Zlib
// Steps of a settled cloth allocate nothing in bulletgpu::SoftBodySolver: every operator new of
// this executable is counted while a curtain that folded onto itself lies on the ground (the
// engine's proximity query and the CCD query still run every step), after the warm-up steps of
// the fold in which the buffers reached their sizes. (Bullet's own btAlignedAlloc calls are not counted:
// the soft-body step of Bullet is not ours to change.)
#include "support/cloth_scene.h"
#include "support/counting_allocator.h"

#include <bulletgpu/SoftBodySolver.h>

#include <catch2/catch.hpp>

#include <cstdint>

TEST_CASE("A folded cloth's steps allocate nothing once sizes settle", "[soft][self][allocation]") {
    bulletgpu::SoftCollisionConfig config;
    config.threads = 1;
    config.skipClearSteps = false; // so that every step runs the CCD query (a settled cloth's steps are clear)
    auto solver = std::make_unique<bulletgpu::SoftBodySolver>(config);
    bulletgpu::SoftBodySolver& ours = *solver;
    bulletgpu::test::ClothWorld world(std::move(solver));
    world.addPatch(btVector3(-1, 0.3, 0), btVector3(1, 0.3, 0), btVector3(-1, 2.3, 0.3), btVector3(1, 2.3, 0.3), 20, 0,
                   0.03f);
    for (int step = 0; step < 400; ++step) world.world().stepSimulation(btScalar(1) / 60, 0);
    bulletgpu::test::startCountingAllocations();
    std::uint64_t queries = 0;
    for (int step = 0; step < 100; ++step) {
        world.world().stepSimulation(btScalar(1) / 60, 0);
        queries += ours.stats().ccdQueries;
    }
    const std::uint64_t allocations = bulletgpu::test::stopCountingAllocations();
    CHECK(ours.stats().cloths == 1);
    CHECK(queries >= 100);
    CHECK(allocations == 0);
}
