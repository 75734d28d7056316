// SPDX-License-Identifier: Zlib
// Soft scenes on the soft-body solver the load options name, and the self-collision scenes'
// generators: a cloth patch given by its corners and the twisted strip's driven edge.
#include "demos/scene/scene_world.h"
#include "tests/demos/scene_with_solver.h"

#include <bulletgpu/SoftBodySolver.h>

#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <string>

namespace {

using bulletgpu::demo::SceneWorld;

const btSoftBody& onlySoftBody(SceneWorld& scene) {
    REQUIRE(scene.softWorld() != nullptr);
    REQUIRE(scene.softWorld()->getSoftBodyArray().size() == 1);
    return *scene.softWorld()->getSoftBodyArray()[0];
}

} // namespace

TEST_CASE("soft scenes run on Bullet's soft-body solver unless the load options name another", "[scene][soft]") {
    const std::unique_ptr<SceneWorld> bullet = bulletgpu::test::loadSceneWithSoftSolver("soft-cloth-fold.json");
    CHECK(bullet->softSolver() == "bullet");
    CHECK(bullet->bulletgpuSoftSolver() == nullptr);

    const std::unique_ptr<SceneWorld> ours =
        bulletgpu::test::loadSceneWithSoftSolver("soft-cloth-fold.json", "bulletgpu-cpu");
    CHECK(ours->softSolver() == "bulletgpu-cpu");
    const bulletgpu::SoftBodySolver* solver = ours->bulletgpuSoftSolver();
    REQUIRE(solver != nullptr);
    CHECK(solver->backend() == bulletgpu::Backend::Cpu);
    for (int step = 0; step < 5; ++step) ours->step();
    CHECK(solver->stats().cloths == 1);

    CHECK_THROWS_WITH(bulletgpu::test::loadSceneWithSoftSolver("soft-cloth-fold.json", "verlet"),
                      Catch::Contains("unknown soft-body solver 'verlet'"));
}

TEST_CASE("the folding cloth is the tests' curtain: a patch given by its corners", "[scene][soft]") {
    const std::unique_ptr<SceneWorld> scene = bulletgpu::test::loadSceneWithSoftSolver("soft-cloth-fold.json");
    const btSoftBody& cloth = onlySoftBody(*scene);
    REQUIRE(cloth.m_nodes.size() == 30 * 30);
    CHECK(cloth.m_nodes[0].m_x.distance(btVector3(-1, btScalar(0.3), 0)) < 1e-6);
    CHECK(cloth.m_nodes[29].m_x.distance(btVector3(1, btScalar(0.3), 0)) < 1e-6);
    CHECK(cloth.m_nodes[899].m_x.distance(btVector3(1, btScalar(2.3), btScalar(0.3))) < 1e-6);
    CHECK(cloth.m_cfg.piterations == 4);
    CHECK(cloth.getCollisionShape()->getMargin() == Approx(0.03));
    CHECK(cloth.getTotalMass() == Approx(1));
}

TEST_CASE("the twisted strip's edge turns and closes in, the other edge stays", "[scene][soft]") {
    const std::unique_ptr<SceneWorld> scene = bulletgpu::test::loadSceneWithSoftSolver("soft-twisted-strip.json");
    const btSoftBody& strip = onlySoftBody(*scene);
    REQUIRE(strip.m_nodes.size() == 16 * 5);
    for (int step = 0; step < 30; ++step) scene->step();
    // After 0.5 s: turned by 1 rad, moved in by 4.5 cm.
    const double time = 30 * double(btScalar(1) / btScalar(60)), angle = 2 * time, x = 1 - 0.09 * time;
    for (int j = 0; j < 5; ++j) {
        const double z0 = -0.25 + 0.125 * j;
        const btSoftBody::Node& held = strip.m_nodes[j * 16];
        const btSoftBody::Node& moving = strip.m_nodes[j * 16 + 15];
        CHECK(held.m_im == 0);
        CHECK(moving.m_im == 0);
        CHECK(held.m_x.distance(btVector3(-1, btScalar(1.5), btScalar(z0))) < 1e-5);
        const btVector3 target(btScalar(x), btScalar(1.5 - z0 * std::sin(angle)), btScalar(z0 * std::cos(angle)));
        CHECK(moving.m_x.distance(target) < 1e-4);
    }
}
