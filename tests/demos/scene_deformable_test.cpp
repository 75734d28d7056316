// SPDX-License-Identifier: Zlib
// Deformable scenes: Bullet's btDeformableMultiBodyDynamicsWorld, or
// bulletgpu::DeformableMultiBodyDynamicsWorld when the load options name a bulletgpu solver, with
// DeformableSelfCollision's cloths.
#include "demos/scene/scene_world.h"
#include "tests/demos/scene_with_solver.h"

#include <bulletgpu/DeformableMultiBodyDynamicsWorld.h>

#include <BulletSoftBody/btDeformableMultiBodyDynamicsWorld.h>
#include <BulletSoftBody/btSoftBody.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <string>

namespace {

using bulletgpu::demo::SceneWorld;

const bulletgpu::DeformableMultiBodyDynamicsWorld* ours(SceneWorld& scene) {
    return dynamic_cast<const bulletgpu::DeformableMultiBodyDynamicsWorld*>(scene.deformableWorld());
}

} // namespace

TEST_CASE("deformable scenes run in Bullet's deformable world unless the load options name ours",
          "[scene][deformable]") {
    const std::unique_ptr<SceneWorld> bullet =
        bulletgpu::test::loadSceneWithSoftSolver("deformable-self-collision.json");
    CHECK(bullet->softSolver() == "bullet");
    REQUIRE(bullet->deformableWorld() != nullptr);
    CHECK(bullet->softWorld() == nullptr);
    CHECK(bullet->bulletgpuSoftSolver() == nullptr);
    CHECK(ours(*bullet) == nullptr);

    const std::unique_ptr<SceneWorld> scene =
        bulletgpu::test::loadSceneWithSoftSolver("deformable-self-collision.json", "bulletgpu-cpu");
    CHECK(scene->softSolver() == "bulletgpu-cpu");
    const bulletgpu::DeformableMultiBodyDynamicsWorld* world = ours(*scene);
    REQUIRE(world != nullptr);
    CHECK(world->backend() == bulletgpu::Backend::Cpu);
    for (int step = 0; step < 5; ++step) scene->step();
    CHECK(world->stats().cloths == 2);

    CHECK_THROWS_WITH(bulletgpu::test::loadSceneWithSoftSolver("deformable-self-collision.json", "verlet"),
                      Catch::Contains("unknown soft-body solver 'verlet'"));
}

TEST_CASE("the deformable scene is DeformableSelfCollision's: two cloths over a static box", "[scene][deformable]") {
    const std::unique_ptr<SceneWorld> scene =
        bulletgpu::test::loadSceneWithSoftSolver("deformable-self-collision.json");
    CHECK(scene->timeStep() == Approx(1.0 / 240));
    const btCollisionObjectArray& objects = scene->world().getCollisionObjectArray();
    REQUIRE(objects.size() == 3);
    const btRigidBody* ground = btRigidBody::upcast(objects[0]);
    REQUIRE(ground != nullptr);
    CHECK(ground->isStaticObject());
    CHECK(ground->getFriction() == Approx(4));
    CHECK(ground->getCollisionShape()->getMargin() == Approx(0.02));
    CHECK(ground->getWorldTransform().getOrigin().distance(btVector3(0, btScalar(-3.5), 0)) < 1e-6);

    REQUIRE(scene->softBodies() != nullptr);
    REQUIRE(scene->softBodies()->size() == 2);
    for (int b = 0; b < 2; ++b) {
        btSoftBody& cloth = *(*scene->softBodies())[b];
        INFO("cloth " << b);
        REQUIRE(cloth.m_nodes.size() == 15 * 30);
        const btScalar y = btScalar(0.1) * btScalar(b);
        CHECK(cloth.m_nodes[0].m_x.distance(btVector3(btScalar(-0.6), y, btScalar(-1.2))) < 1e-6);
        CHECK(cloth.m_nodes[449].m_x.distance(btVector3(btScalar(0.6), y, btScalar(1.2))) < 1e-6);
        CHECK(cloth.getCollisionShape()->getMargin() == Approx(0.02));
        CHECK(cloth.getTotalMass() == Approx(0.5));
        CHECK(cloth.m_cfg.kDF == Approx(0.1));
        CHECK((cloth.m_cfg.collisions & btSoftBody::fCollision::VF_DD) != 0);
        CHECK(cloth.useSelfCollision());
    }
    // The forces act: the cloths fall, and land on the box (top at y = -1) after 1 m.
    for (int step = 0; step < 240; ++step) scene->step();
    for (int b = 0; b < 2; ++b) {
        const btSoftBody& cloth = *(*scene->softBodies())[b];
        for (int n = 0; n < cloth.m_nodes.size(); ++n) {
            REQUIRE(std::isfinite(cloth.m_nodes[n].m_x.y()));
            CHECK(cloth.m_nodes[n].m_x.y() > -1.05);
            CHECK(cloth.m_nodes[n].m_x.y() < -0.8);
        }
    }
}

TEST_CASE("the deformable twisted strip is the deformable-world test's strip", "[scene][deformable]") {
    const std::unique_ptr<SceneWorld> scene = bulletgpu::test::loadSceneWithSoftSolver("deformable-twisted-strip.json");
    REQUIRE(scene->softBodies() != nullptr);
    REQUIRE(scene->softBodies()->size() == 1);
    const btSoftBody& strip = *(*scene->softBodies())[0];
    REQUIRE(strip.m_nodes.size() == 16 * 5);
    // The example's node mass (0.5 kg on 450 nodes); the 10 held nodes weigh nothing.
    CHECK(strip.getTotalMass() == Approx(0.5 / 450 * 70).epsilon(1e-3));
    for (int step = 0; step < 120; ++step) scene->step();
    // After 0.5 s: the held edge stays, the driven edge turned by 4 rad and moved in by 18 cm.
    const double time = 120.0 / 240, angle = 8 * time, x = 1 - 0.36 * time;
    for (int j = 0; j < 5; ++j) {
        const double z0 = -0.25 + 0.125 * j;
        const btSoftBody::Node& held = strip.m_nodes[j * 16];
        const btSoftBody::Node& moving = strip.m_nodes[j * 16 + 15];
        CHECK(held.m_x.distance(btVector3(-1, btScalar(1.5), btScalar(z0))) < 1e-5);
        const btVector3 target(btScalar(x), btScalar(1.5 - z0 * std::sin(angle)), btScalar(z0 * std::cos(angle)));
        CHECK(moving.m_x.distance(target) < 1e-4);
    }
}
