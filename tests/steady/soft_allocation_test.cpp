// SPDX-License-Identifier: Zlib
// Steps of a settled cloth allocate nothing in bulletgpu::SoftBodySolver: every operator new of
// this executable is counted while a curtain that folded onto itself lies on the ground (the
// engine's proximity query and the CCD query still run every step), after the warm-up steps of
// the fold in which the buffers reached their sizes; the same for a cloth draped on a mesh
// spike (node and face contacts) under another cloth (soft-soft contacts), beside a rope heap. (Bullet's own
// btAlignedAlloc calls are not counted: the soft-body step of Bullet is not ours to change.)
#include "support/cloth_scene.h"
#include "support/counting_allocator.h"
#include "support/mesh_arrays.h"

#include <bulletgpu/SoftBodySolver.h>

#include <BulletCollision/CollisionShapes/btBvhTriangleMeshShape.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>

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

TEST_CASE("Cloth on a mesh spike, cloth on cloth and a rope heap allocate nothing once settled",
          "[soft][mesh][rope][allocation]") {
    bulletgpu::SoftCollisionConfig config;
    config.threads = 1;
    auto solver = std::make_unique<bulletgpu::SoftBodySolver>(config);
    bulletgpu::SoftBodySolver& ours = *solver;
    bulletgpu::test::ClothWorld world(std::move(solver));
    // A spike's apex under the lower cloth (face contacts and node contacts with a static mesh),
    // a smaller cloth resting on it (VF_SS), and a rope falling into a heap beside them.
    const std::unique_ptr<bulletgpu::test::MeshArrays> arrays =
        bulletgpu::test::pyramidArrays(0.025f, 0.4f, -0.012f, 0.03f);
    btBvhTriangleMeshShape shape(arrays->array.get(), true);
    btRigidBody spike(btRigidBody::btRigidBodyConstructionInfo(0, nullptr, &shape));
    world.world().addRigidBody(&spike);
    btSoftBody* lower = world.addPatch(btVector3(-0.55f, 0.45f, -0.55f), btVector3(0.55f, 0.45f, -0.55f),
                                       btVector3(-0.55f, 0.45f, 0.55f), btVector3(0.55f, 0.45f, 0.55f), 12, 0, 0.02f);
    btSoftBody* upper = world.addPatch(btVector3(-0.3f, 0.6f, -0.3f), btVector3(0.3f, 0.6f, -0.3f),
                                       btVector3(-0.3f, 0.6f, 0.3f), btVector3(0.3f, 0.6f, 0.3f), 7, 0, 0.02f);
    lower->m_cfg.collisions |= btSoftBody::fCollision::VF_SS;
    upper->m_cfg.collisions |= btSoftBody::fCollision::VF_SS;
    world.addRope(btVector3(2, 0.3, 0), btVector3(2.2, 3.3, 0.1), 61, 0, 0.05f);
    for (int step = 0; step < 400; ++step) world.world().stepSimulation(btScalar(1) / 60, 0);
    bulletgpu::test::startCountingAllocations();
    std::uint64_t faceContacts = 0, softContacts = 0, ropeRounds = 0;
    for (int step = 0; step < 100; ++step) {
        world.world().stepSimulation(btScalar(1) / 60, 0);
        faceContacts += ours.meshStats().faceContacts;
        softContacts += ours.meshStats().softContacts;
        ropeRounds += ours.stats().ropeRounds;
    }
    const std::uint64_t allocations = bulletgpu::test::stopCountingAllocations();
    world.world().removeRigidBody(&spike);
    CHECK(faceContacts > 0);
    CHECK(softContacts > 0);
    CHECK(ropeRounds > 0);
    CHECK(allocations == 0);
}
