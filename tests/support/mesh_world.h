// SPDX-License-Identifier: Zlib
#pragma once

#include "tests/support/mesh_arrays.h"

#include <bulletgpu/CollisionDispatcher.h>

#include <BulletCollision/BroadphaseCollision/btDbvtBroadphase.h>
#include <BulletCollision/CollisionDispatch/btDefaultCollisionConfiguration.h>
#include <BulletCollision/CollisionShapes/btBvhTriangleMeshShape.h>
#include <BulletCollision/CollisionShapes/btTriangleIndexVertexArray.h>
#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <BulletDynamics/ConstraintSolver/btSequentialImpulseConstraintSolver.h>
#include <BulletDynamics/Dynamics/btDiscreteDynamicsWorld.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <LinearMath/btDefaultMotionState.h>

#include <cmath>
#include <memory>
#include <vector>

namespace bulletgpu::test {

/// Which narrow phase a MeshWorld runs its mesh pairs on.
enum class MeshNarrowPhase {
    Bullet,   ///< btCollisionDispatcher with btGImpactCollisionAlgorithm registered.
    BulletGpu ///< bulletgpu::CollisionDispatcher on the CPU backend.
};

/// A dynamics world (dbvt broad phase) whose mesh pairs run on the chosen narrow phase, and
/// the shapes and bodies added to it.
class MeshWorld {
public:
    /// An empty world with gravity -10 y.
    explicit MeshWorld(MeshNarrowPhase narrow, const NarrowConfig& config = quietConfig()) {
        if (narrow == MeshNarrowPhase::BulletGpu) {
            dispatcher = std::make_unique<CollisionDispatcher>(&configuration, config);
        } else {
            dispatcher = std::make_unique<btCollisionDispatcher>(&configuration);
            btGImpactCollisionAlgorithm::registerAlgorithm(dispatcher.get());
        }
        world = std::make_unique<btDiscreteDynamicsWorld>(dispatcher.get(), &broadphase, &solver, &configuration);
        world->setGravity(btVector3(0, -10, 0));
    }
    ~MeshWorld() {
        for (int i = world->getNumCollisionObjects() - 1; i >= 0; --i) {
            btCollisionObject* object = world->getCollisionObjectArray()[i];
            world->removeCollisionObject(object);
            delete btRigidBody::upcast(object)->getMotionState();
            delete object;
        }
    }
    MeshWorld(const MeshWorld&) = delete;
    MeshWorld& operator=(const MeshWorld&) = delete;

    /// A config for the CPU backend that does not log.
    static NarrowConfig quietConfig() {
        NarrowConfig config;
        config.backend = Backend::Cpu;
        config.logBackendChoice = false;
        return config;
    }

    /// Keeps a shape alive with the world and returns it.
    template <typename Shape>
    Shape* keep(std::unique_ptr<Shape> shape) {
        Shape* raw = shape.get();
        shapes.push_back(std::move(shape));
        return raw;
    }

    /// Adds a body of `mass` (0: static) at `origin` turned by `rotation`.
    btRigidBody* addBody(btCollisionShape* shape, btScalar mass, const btVector3& origin,
                         const btQuaternion& rotation = btQuaternion::getIdentity()) {
        btVector3 inertia(0, 0, 0);
        if (mass > 0) shape->calculateLocalInertia(mass, inertia);
        auto* motion = new btDefaultMotionState(btTransform(rotation, origin));
        auto* body = new btRigidBody(btRigidBody::btRigidBodyConstructionInfo(mass, motion, shape, inertia));
        world->addRigidBody(body);
        return body;
    }

    /// A static BVH mesh of `arrays` (kept alive with the world).
    btRigidBody* addStaticMesh(std::unique_ptr<MeshArrays> arrays) {
        auto* shape = keep(std::make_unique<btBvhTriangleMeshShape>(arrays->array.get(), true));
        meshes.push_back(std::move(arrays));
        return addBody(shape, 0, btVector3(0, 0, 0));
    }

    /// A GImpact shape over `arrays` (updated, kept alive with the world).
    btGImpactMeshShape* gimpactShape(std::unique_ptr<MeshArrays> arrays, btScalar margin = btScalar(0.01)) {
        auto* shape = keep(std::make_unique<btGImpactMeshShape>(arrays->array.get()));
        shape->setMargin(margin);
        shape->updateBound();
        meshes.push_back(std::move(arrays));
        return shape;
    }

    /// Steps `steps` times at 60 Hz.
    void step(int steps) {
        for (int i = 0; i < steps; ++i) world->stepSimulation(btScalar(1) / 60, 0);
    }

    btDefaultCollisionConfiguration configuration;
    std::unique_ptr<btCollisionDispatcher> dispatcher;
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    std::unique_ptr<btDiscreteDynamicsWorld> world;
    std::vector<std::unique_ptr<btCollisionShape>> shapes;
    std::vector<std::unique_ptr<MeshArrays>> meshes;
};

} // namespace bulletgpu::test
