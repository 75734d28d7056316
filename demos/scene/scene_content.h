// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/scene/tri_mesh.h"

#include <BulletSoftBody/btSoftBody.h>
#include <btBulletDynamicsCommon.h>

#include <memory>
#include <vector>

class btDeformableLagrangianForce;
class btDeformableMultiBodyDynamicsWorld;
class btSoftRigidDynamicsWorld;

namespace bulletgpu::demo {

/// Something a scene does every frame besides stepping the world (moving kinematic bodies,
/// casting rays).
class SceneScript {
public:
    virtual ~SceneScript() = default;
    /// Runs before each internal step of the world, which lasts timeStep seconds.
    virtual void beforeStep(btDiscreteDynamicsWorld& /*world*/, btScalar /*timeStep*/) {}
    /// Runs after stepSimulation.
    virtual void afterStep(btDiscreteDynamicsWorld&) {}
    /// Rays that hit something in the last afterStep (0 for scripts that cast none).
    virtual int rayHits() const { return 0; }
};

/// Everything the generators of a scene file create, owned until the scene is destroyed: shapes,
/// triangle meshes, motion states, rigid bodies, plain collision objects, constraints, soft
/// bodies and scripts. Generators fill it before the world exists (so the objects can be counted
/// for the broadphase); then addTo puts everything into the world in creation order.
class SceneContent {
public:
    /// Content for a rigid scene (softInfo null), a soft scene, or a deformable scene (deformable:
    /// Bullet's deformable world, whose soft bodies are moved by btDeformableLagrangianForces).
    explicit SceneContent(btSoftBodyWorldInfo* softInfo, bool deformable = false)
        : m_softInfo(softInfo), m_deformable(deformable) {}
    ~SceneContent();
    SceneContent(const SceneContent&) = delete;
    SceneContent& operator=(const SceneContent&) = delete;

    /// Takes ownership of a shape.
    btCollisionShape* addShape(std::unique_ptr<btCollisionShape> shape);
    /// Takes ownership of a triangle mesh and returns a Bullet view of it.
    btTriangleIndexVertexArray* addMesh(TriMesh mesh);
    /// A rigid body with a btDefaultMotionState (or none) and the shape's inertia for its mass;
    /// mass 0 makes it static. Group and mask -1 use the world's defaults.
    btRigidBody* addRigidBody(btScalar mass, const btTransform& transform, btCollisionShape* shape,
                              bool withMotionState = true, int group = -1, int mask = -1);
    /// A plain (static) btCollisionObject.
    btCollisionObject* addCollisionObject(const btTransform& transform, btCollisionShape* shape);
    /// Takes ownership of a constraint, added to the world with the given flag.
    void addConstraint(std::unique_ptr<btTypedConstraint> constraint, bool disableCollisionsBetweenLinked);
    /// Takes ownership of a soft body.
    btSoftBody* addSoftBody(btSoftBody* body);
    /// Takes ownership of a deformable force that addTo lets act on body (a deformable scene's).
    void addDeformableForce(btSoftBody* body, std::unique_ptr<btDeformableLagrangianForce> force);
    /// Takes ownership of a per-frame script.
    void addScript(std::unique_ptr<SceneScript> script);

    /// The soft-body world info, or nullptr in a rigid scene.
    btSoftBodyWorldInfo* softWorldInfo() const { return m_softInfo; }
    /// Whether the content is for Bullet's deformable world.
    bool deformable() const { return m_deformable; }
    /// Rigid bodies, collision objects and soft bodies created so far.
    int objectCount() const;
    /// The scripts, in creation order.
    const std::vector<std::unique_ptr<SceneScript>>& scripts() const { return m_scripts; }
    /// The rigid bodies, in creation order.
    const std::vector<std::unique_ptr<btRigidBody>>& rigidBodies() const { return m_rigidBodies; }
    /// The soft bodies, in creation order.
    const std::vector<std::unique_ptr<btSoftBody>>& softBodies() const { return m_softBodies; }

    /// Whether any shape is a GImpact shape (the world then registers Bullet's GImpact algorithm).
    bool hasGImpactShapes() const;

    /// Asks the world to skip the narrow phase for pairs of two static or kinematic objects.
    void skipStaticPairs() { m_skipStaticPairs = true; }
    /// Whether a generator asked for skipStaticPairs.
    bool skipsStaticPairs() const { return m_skipStaticPairs; }

    /// Adds everything to the world; softWorld (soft scenes) or deformableWorld (deformable scenes,
    /// which also get their forces) is the same world, the other null (both null in rigid scenes).
    void addTo(btDiscreteDynamicsWorld& world, btSoftRigidDynamicsWorld* softWorld,
               btDeformableMultiBodyDynamicsWorld* deformableWorld);
    /// Removes everything from the world again (before the world or the content is deleted).
    void removeFrom(btDiscreteDynamicsWorld& world, btSoftRigidDynamicsWorld* softWorld,
                    btDeformableMultiBodyDynamicsWorld* deformableWorld);

private:
    struct RigidEntry {
        btRigidBody* body;
        int group;
        int mask;
    };
    struct ConstraintEntry {
        btTypedConstraint* constraint;
        bool disableCollisions;
    };
    struct ForceEntry {
        btSoftBody* body;
        btDeformableLagrangianForce* force;
    };

    btSoftBodyWorldInfo* m_softInfo;
    bool m_deformable;
    bool m_skipStaticPairs = false;
    std::vector<std::unique_ptr<btCollisionShape>> m_shapes;
    std::vector<std::unique_ptr<TriMesh>> m_meshData;
    std::vector<std::unique_ptr<btTriangleIndexVertexArray>> m_meshes;
    std::vector<std::unique_ptr<btMotionState>> m_motionStates;
    std::vector<std::unique_ptr<btRigidBody>> m_rigidBodies;
    std::vector<RigidEntry> m_rigidEntries;
    std::vector<std::unique_ptr<btCollisionObject>> m_collisionObjects;
    std::vector<std::unique_ptr<btTypedConstraint>> m_constraints;
    std::vector<ConstraintEntry> m_constraintEntries;
    std::vector<std::unique_ptr<btSoftBody>> m_softBodies;
    std::vector<std::unique_ptr<btDeformableLagrangianForce>> m_forces;
    std::vector<ForceEntry> m_forceEntries;
    std::vector<std::unique_ptr<SceneScript>> m_scripts;
};

} // namespace bulletgpu::demo
