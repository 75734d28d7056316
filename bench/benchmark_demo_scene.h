// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/DiscreteDynamicsWorld.h>

#include <btBulletDynamicsCommon.h>

#include <memory>
#include <utility>
#include <vector>

namespace bulletgpu::bench {

/// Bullet's BenchmarkDemo test 1, "3000 boxes" (examples/Benchmarks/BenchmarkDemo.cpp,
/// createEmptyDynamicsWorld + initPhysics + createTest1), re-created headlessly on a
/// caller-chosen broadphase: a static box ground of half-extents (250, 50, 250) at
/// (0, -50, 0) and 47 layers of 8 x 8 unit boxes (half-extent 1, mass 2), spaced 3 apart,
/// each layer shifted by -0.35 in x and z and raised by 3. Gravity (0, -10, 0), 5 solver
/// iterations, SIMD + warm starting + friction direction caching, steps of 1/60.
class BenchmarkDemo1 {
public:
    /// Layers of boxes.
    static constexpr int cLayers = 47;
    /// Boxes along x and along z in each layer.
    static constexpr int cBoxesPerRow = 8;
    /// Fixed step the demo passes to stepSimulation.
    static constexpr btScalar cTimeStep = btScalar(1) / btScalar(60);

    /// Builds the world on the given broadphase; the scene takes ownership of it. bulkAabbs: a
    /// bulletgpu::DiscreteDynamicsWorld (boxes updated in one call) instead of Bullet's world.
    explicit BenchmarkDemo1(std::unique_ptr<btBroadphaseInterface> broadphase, bool bulkAabbs = false)
        : m_dispatcher(&m_configuration), m_broadphase(std::move(broadphase)), m_groundShape(btVector3(250, 50, 250)),
          m_boxShape(btVector3(1, 1, 1)),
          m_world(bulkAabbs ? std::make_unique<bulletgpu::DiscreteDynamicsWorld>(&m_dispatcher, m_broadphase.get(),
                                                                                 &m_solver, &m_configuration)
                            : std::make_unique<btDiscreteDynamicsWorld>(&m_dispatcher, m_broadphase.get(), &m_solver,
                                                                        &m_configuration)) {
        m_world->setGravity(btVector3(0, -10, 0));
        btContactSolverInfo& solverInfo = m_world->getSolverInfo();
        solverInfo.m_solverMode = SOLVER_SIMD | SOLVER_USE_WARMSTARTING | SOLVER_ENABLE_FRICTION_DIRECTION_CACHING;
        solverInfo.m_numIterations = 5;

        m_ground = addBody(0, btVector3(0, -50, 0), &m_groundShape);
        const btScalar spacing = 3;
        btScalar offset = -12;
        for (int layer = 0; layer < cLayers; ++layer) {
            const btScalar y = 2 + spacing * btScalar(layer);
            for (int j = 0; j < cBoxesPerRow; ++j) {
                for (int i = 0; i < cBoxesPerRow; ++i) {
                    const btVector3 origin(offset + spacing * btScalar(i), y, offset + spacing * btScalar(j));
                    m_boxes.push_back(addBody(2, origin, &m_boxShape));
                }
            }
            offset -= btScalar(0.35);
        }
    }

    ~BenchmarkDemo1() {
        for (const std::unique_ptr<btRigidBody>& body : m_bodies) m_world->removeRigidBody(body.get());
    }

    BenchmarkDemo1(const BenchmarkDemo1&) = delete;
    BenchmarkDemo1& operator=(const BenchmarkDemo1&) = delete;

    /// Advances the world by one 1/60 step, as the demo's main loop does.
    void step() { m_world->stepSimulation(cTimeStep); }

    /// The dynamics world.
    btDiscreteDynamicsWorld& world() { return *m_world; }
    /// The broadphase the world runs on.
    btBroadphaseInterface& broadphase() { return *m_broadphase; }
    /// The world's collision dispatcher.
    btCollisionDispatcher& dispatcher() { return m_dispatcher; }
    /// The 3,008 falling boxes, in creation order.
    const std::vector<btRigidBody*>& boxes() const { return m_boxes; }
    /// The static ground box.
    const btRigidBody& ground() const { return *m_ground; }

    /// A box that contains the scene for its whole run (the world box of an axis-sweep broadphase).
    static std::pair<btVector3, btVector3> worldBounds() {
        return {btVector3(-300, -150, -300), btVector3(300, 300, 300)};
    }

private:
    btRigidBody* addBody(btScalar mass, const btVector3& origin, btCollisionShape* shape) {
        btVector3 localInertia(0, 0, 0);
        if (mass != 0) shape->calculateLocalInertia(mass, localInertia);
        btTransform transform;
        transform.setIdentity();
        transform.setOrigin(origin);
        m_motionStates.push_back(std::make_unique<btDefaultMotionState>(transform));
        const btRigidBody::btRigidBodyConstructionInfo info(mass, m_motionStates.back().get(), shape, localInertia);
        m_bodies.push_back(std::make_unique<btRigidBody>(info));
        btRigidBody* body = m_bodies.back().get();
        body->setUserIndex(-1);
        m_world->addRigidBody(body);
        return body;
    }

    // Declaration order is destruction order reversed: the world goes first, the configuration last.
    btDefaultCollisionConfiguration m_configuration;
    btCollisionDispatcher m_dispatcher;
    std::unique_ptr<btBroadphaseInterface> m_broadphase;
    btSequentialImpulseConstraintSolver m_solver;
    btBoxShape m_groundShape;
    btBoxShape m_boxShape;
    std::vector<std::unique_ptr<btDefaultMotionState>> m_motionStates;
    std::vector<std::unique_ptr<btRigidBody>> m_bodies;
    std::unique_ptr<btDiscreteDynamicsWorld> m_world;
    btRigidBody* m_ground = nullptr;
    std::vector<btRigidBody*> m_boxes;
};

} // namespace bulletgpu::bench
