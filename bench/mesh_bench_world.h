// SPDX-License-Identifier: Zlib
#pragma once

#include "tests/support/mesh_arrays.h"

#include <bulletgpu/CollisionDispatcher.h>

#include <btBulletDynamicsCommon.h>
#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>

#include <chrono>
#include <memory>
#include <vector>

/// The world the mesh dispatcher benchmark steps: one dbvt broad phase and one solver, with
/// Bullet's narrow phase or ours, and the meshes, shapes and bodies of its scene.

namespace bulletgpu::bench {

/// Which dispatcher a MeshBenchWorld runs.
enum class MeshNarrow {
    Bullet,       ///< btCollisionDispatcher with btGImpactCollisionAlgorithm registered.
    BulletGpu,    ///< bulletgpu::CollisionDispatcher (CPU backend), GImpact registered too as an app would.
    BulletGpuCuda ///< bulletgpu::CollisionDispatcher on the CUDA backend (device 0), likewise.
};

/// The name of a narrow phase in the benchmark's rows.
inline const char* narrowName(MeshNarrow narrow) {
    switch (narrow) {
        case MeshNarrow::Bullet:
            return "bullet";
        case MeshNarrow::BulletGpu:
            return "bulletgpu";
        case MeshNarrow::BulletGpuCuda:
            return "cuda";
    }
    return "?";
}

/// A dispatcher that times its dispatchAllCollisionPairs: the narrow phase's own time.
template <typename Base>
class TimedDispatcher : public Base {
public:
    using Base::Base;

    /// Runs the base dispatch and records how long it took.
    void dispatchAllCollisionPairs(btOverlappingPairCache* pairCache, const btDispatcherInfo& info,
                                   btDispatcher* dispatcher) override {
        const auto start = std::chrono::steady_clock::now();
        Base::dispatchAllCollisionPairs(pairCache, info, dispatcher);
        m_lastMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
    /// Milliseconds of the last dispatch.
    double lastMs() const { return m_lastMs; }

private:
    double m_lastMs = 0;
};

/// The bench's meshes are the tests' arrays.
using test::MeshArrays;

/// A dynamics world (gravity -10 y, dbvt) on the chosen narrow phase, owning what is added.
class MeshBenchWorld {
public:
    /// An empty world; `threads` are the CPU backend's OpenMP threads.
    MeshBenchWorld(MeshNarrow narrow, int threads) {
        if (narrow != MeshNarrow::Bullet) {
            NarrowConfig config;
            config.backend = narrow == MeshNarrow::BulletGpuCuda ? Backend::Cuda : Backend::Cpu;
            config.threads = threads;
            config.cudaDevice = 0;
            config.logBackendChoice = false;
            auto ours = std::make_unique<TimedDispatcher<CollisionDispatcher>>(&m_configuration, config);
            m_ours = ours.get();
            m_dispatcher = std::move(ours);
        } else {
            m_dispatcher = std::make_unique<TimedDispatcher<btCollisionDispatcher>>(&m_configuration);
        }
        btGImpactCollisionAlgorithm::registerAlgorithm(m_dispatcher.get());
        m_world =
            std::make_unique<btDiscreteDynamicsWorld>(m_dispatcher.get(), &m_broadphase, &m_solver, &m_configuration);
        m_world->setGravity(btVector3(0, -10, 0));
    }
    ~MeshBenchWorld() {
        for (int i = m_world->getNumCollisionObjects() - 1; i >= 0; --i)
            m_world->removeCollisionObject(m_world->getCollisionObjectArray()[i]);
    }
    MeshBenchWorld(const MeshBenchWorld&) = delete;
    MeshBenchWorld& operator=(const MeshBenchWorld&) = delete;

    /// The dynamics world.
    btDiscreteDynamicsWorld& world() { return *m_world; }
    /// Milliseconds of the last step's dispatchAllCollisionPairs.
    double lastDispatchMs() const {
        return m_ours != nullptr ? m_ours->lastMs()
                                 : static_cast<const TimedDispatcher<btCollisionDispatcher>&>(*m_dispatcher).lastMs();
    }
    /// Our dispatcher, or null on Bullet's.
    const CollisionDispatcher* ours() const { return m_ours; }
    /// The dynamic bodies, in creation order.
    const std::vector<btRigidBody*>& dynamicBodies() const { return m_dynamic; }

    /// Keeps mesh data alive with the world and returns its interface.
    btTriangleIndexVertexArray* keep(std::unique_ptr<MeshArrays> mesh) {
        m_meshes.push_back(std::move(mesh));
        return m_meshes.back()->array.get();
    }
    /// Keeps a shape alive with the world and returns it.
    template <typename Shape>
    Shape* keep(std::unique_ptr<Shape> shape) {
        Shape* raw = shape.get();
        m_shapes.push_back(std::move(shape));
        return raw;
    }
    /// Adds a body of `mass` (0: static) with the transform given.
    btRigidBody* addBody(btCollisionShape* shape, btScalar mass, const btTransform& transform) {
        btVector3 inertia(0, 0, 0);
        if (mass > 0) shape->calculateLocalInertia(mass, inertia);
        m_motionStates.push_back(std::make_unique<btDefaultMotionState>(transform));
        m_bodies.push_back(std::make_unique<btRigidBody>(
            btRigidBody::btRigidBodyConstructionInfo(mass, m_motionStates.back().get(), shape, inertia)));
        btRigidBody* body = m_bodies.back().get();
        m_world->addRigidBody(body);
        if (mass > 0) m_dynamic.push_back(body);
        return body;
    }

private:
    // Declaration order is destruction order reversed: the world goes first.
    btDefaultCollisionConfiguration m_configuration;
    std::unique_ptr<btCollisionDispatcher> m_dispatcher;
    TimedDispatcher<CollisionDispatcher>* m_ours = nullptr;
    btDbvtBroadphase m_broadphase;
    btSequentialImpulseConstraintSolver m_solver;
    std::vector<std::unique_ptr<MeshArrays>> m_meshes;
    std::vector<std::unique_ptr<btCollisionShape>> m_shapes;
    std::vector<std::unique_ptr<btDefaultMotionState>> m_motionStates;
    std::vector<std::unique_ptr<btRigidBody>> m_bodies;
    std::unique_ptr<btDiscreteDynamicsWorld> m_world;
    std::vector<btRigidBody*> m_dynamic;
};

} // namespace bulletgpu::bench
