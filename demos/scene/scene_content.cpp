// SPDX-License-Identifier: Zlib
#include "demos/scene/scene_content.h"

#include <BulletSoftBody/btDeformableLagrangianForce.h>
#include <BulletSoftBody/btDeformableMultiBodyDynamicsWorld.h>
#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>

namespace bulletgpu::demo {

SceneContent::~SceneContent() {
    // Constraints and soft-body anchors point at rigid bodies, and bodies point at shapes and
    // meshes: delete in that order.
    m_scripts.clear();
    m_constraints.clear();
    m_forces.clear();
    m_softBodies.clear();
    m_rigidBodies.clear();
    m_collisionObjects.clear();
    m_motionStates.clear();
    m_shapes.clear();
    m_meshes.clear();
    m_meshData.clear();
}

btCollisionShape* SceneContent::addShape(std::unique_ptr<btCollisionShape> shape) {
    m_shapes.push_back(std::move(shape));
    return m_shapes.back().get();
}

btTriangleIndexVertexArray* SceneContent::addMesh(TriMesh mesh) {
    m_meshData.push_back(std::make_unique<TriMesh>(std::move(mesh)));
    TriMesh& data = *m_meshData.back();
    m_meshes.push_back(std::make_unique<btTriangleIndexVertexArray>(
        data.triangleCount(), data.indices.data(), static_cast<int>(3 * sizeof(int)), data.vertexCount(),
        data.vertices.data(), static_cast<int>(3 * sizeof(btScalar))));
    return m_meshes.back().get();
}

bool SceneContent::hasGImpactShapes() const {
    for (const std::unique_ptr<btCollisionShape>& shape : m_shapes) {
        if (shape->getShapeType() == GIMPACT_SHAPE_PROXYTYPE) return true;
    }
    return false;
}

btRigidBody* SceneContent::addRigidBody(btScalar mass, const btTransform& transform, btCollisionShape* shape,
                                        bool withMotionState, int group, int mask) {
    btVector3 localInertia(0, 0, 0);
    if (mass != 0) shape->calculateLocalInertia(mass, localInertia);
    btMotionState* motionState = nullptr;
    if (withMotionState) {
        m_motionStates.push_back(std::make_unique<btDefaultMotionState>(transform));
        motionState = m_motionStates.back().get();
    }
    btRigidBody::btRigidBodyConstructionInfo info(mass, motionState, shape, localInertia);
    info.m_startWorldTransform = transform;
    m_rigidBodies.push_back(std::make_unique<btRigidBody>(info));
    btRigidBody* body = m_rigidBodies.back().get();
    m_rigidEntries.push_back({body, group, mask});
    return body;
}

btCollisionObject* SceneContent::addCollisionObject(const btTransform& transform, btCollisionShape* shape) {
    m_collisionObjects.push_back(std::make_unique<btCollisionObject>());
    btCollisionObject* object = m_collisionObjects.back().get();
    object->setWorldTransform(transform);
    object->setInterpolationWorldTransform(transform);
    object->setCollisionShape(shape);
    return object;
}

void SceneContent::addConstraint(std::unique_ptr<btTypedConstraint> constraint, bool disableCollisionsBetweenLinked) {
    m_constraints.push_back(std::move(constraint));
    m_constraintEntries.push_back({m_constraints.back().get(), disableCollisionsBetweenLinked});
}

btSoftBody* SceneContent::addSoftBody(btSoftBody* body) {
    m_softBodies.emplace_back(body);
    return body;
}

void SceneContent::addDeformableForce(btSoftBody* body, std::unique_ptr<btDeformableLagrangianForce> force) {
    m_forces.push_back(std::move(force));
    m_forceEntries.push_back({body, m_forces.back().get()});
}

void SceneContent::addScript(std::unique_ptr<SceneScript> script) { m_scripts.push_back(std::move(script)); }

int SceneContent::objectCount() const {
    return static_cast<int>(m_rigidBodies.size() + m_collisionObjects.size() + m_softBodies.size());
}

void SceneContent::addTo(btDiscreteDynamicsWorld& world, btSoftRigidDynamicsWorld* softWorld,
                         btDeformableMultiBodyDynamicsWorld* deformableWorld) {
    for (const std::unique_ptr<btCollisionObject>& object : m_collisionObjects) world.addCollisionObject(object.get());
    for (const RigidEntry& entry : m_rigidEntries) {
        if (entry.group == -1) {
            world.addRigidBody(entry.body);
        } else {
            world.addRigidBody(entry.body, entry.group, entry.mask);
        }
    }
    for (const ConstraintEntry& entry : m_constraintEntries) {
        world.addConstraint(entry.constraint, entry.disableCollisions);
    }
    if (softWorld != nullptr) {
        for (const std::unique_ptr<btSoftBody>& body : m_softBodies) softWorld->addSoftBody(body.get());
    }
    if (deformableWorld != nullptr) {
        // Bullet keeps the first force of each type it is given and lets it act on every body
        // given a force of that type later.
        for (const std::unique_ptr<btSoftBody>& body : m_softBodies) deformableWorld->addSoftBody(body.get());
        for (const ForceEntry& entry : m_forceEntries) deformableWorld->addForce(entry.body, entry.force);
    }
}

void SceneContent::removeFrom(btDiscreteDynamicsWorld& world, btSoftRigidDynamicsWorld* softWorld,
                              btDeformableMultiBodyDynamicsWorld* deformableWorld) {
    for (const ConstraintEntry& entry : m_constraintEntries) world.removeConstraint(entry.constraint);
    if (softWorld != nullptr) {
        for (const std::unique_ptr<btSoftBody>& body : m_softBodies) softWorld->removeSoftBody(body.get());
    }
    if (deformableWorld != nullptr) {
        // removeSoftBody takes the body out of every force too.
        for (const std::unique_ptr<btSoftBody>& body : m_softBodies) deformableWorld->removeSoftBody(body.get());
    }
    // Removing an object makes the pair cache scan every pair (cleanProxyFromPairs), which is
    // quadratic over a large scene: empty the cache first, from the back, in time linear in pairs.
    btOverlappingPairCache* cache = world.getPairCache();
    while (cache->getNumOverlappingPairs() > 0) {
        btBroadphasePair& last = cache->getOverlappingPairArray()[cache->getNumOverlappingPairs() - 1];
        cache->removeOverlappingPair(last.m_pProxy0, last.m_pProxy1, world.getDispatcher());
    }
    // btDiscreteDynamicsWorld finds a non-static body by a linear search from the front of its
    // array and fills the hole with the last one. Removing the first, then the rest from the back,
    // always finds the body at the front, so large scenes are torn down in linear time.
    std::vector<btRigidBody*> nonStatic;
    for (const RigidEntry& entry : m_rigidEntries) {
        if (entry.body->isStaticObject()) {
            world.removeRigidBody(entry.body);
        } else {
            nonStatic.push_back(entry.body);
        }
    }
    if (!nonStatic.empty()) {
        world.removeRigidBody(nonStatic.front());
        for (size_t i = nonStatic.size() - 1; i > 0; --i) world.removeRigidBody(nonStatic[i]);
    }
    for (const std::unique_ptr<btCollisionObject>& object : m_collisionObjects) {
        world.removeCollisionObject(object.get());
    }
}

} // namespace bulletgpu::demo
