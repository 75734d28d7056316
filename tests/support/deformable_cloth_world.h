// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/DeformableMultiBodyDynamicsWorld.h>

#include <BulletSoftBody/btDeformableBodySolver.h>
#include <BulletSoftBody/btDeformableGravityForce.h>
#include <BulletSoftBody/btDeformableMassSpringForce.h>
#include <BulletSoftBody/btDeformableMultiBodyConstraintSolver.h>
#include <BulletSoftBody/btDeformableMultiBodyDynamicsWorld.h>
#include <BulletSoftBody/btSoftBodyHelpers.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <btBulletDynamicsCommon.h>

#include <memory>
#include <vector>

namespace bulletgpu::test {

/// Bullet's deformable world set up as its DeformableSelfCollision example does (explicit
/// integration, no line search, projection, gravity 9.8 down unless given), with a static ground
/// box (top at y = 0) and cloths it owns, each with Bullet's self-collision on (VF_DD, setSelfCollision): the
/// world is Bullet's own, or bulletgpu::DeformableMultiBodyDynamicsWorld with `config` when `ours`.
class DeformableClothWorld {
public:
    DeformableClothWorld(bool ours, const SoftCollisionConfig& config = {},
                         const btVector3& gravity = btVector3(0, btScalar(-9.8), 0))
        : m_dispatcher(&m_configuration), m_gravityForce(gravity), m_springs(btScalar(2), btScalar(0.2), true) {
        m_constraintSolver.setDeformableSolver(&m_deformableSolver);
        if (ours)
            m_world = std::make_unique<DeformableMultiBodyDynamicsWorld>(
                &m_dispatcher, &m_broadphase, &m_constraintSolver, &m_configuration, &m_deformableSolver, config);
        else
            m_world = std::make_unique<btDeformableMultiBodyDynamicsWorld>(
                &m_dispatcher, &m_broadphase, &m_constraintSolver, &m_configuration, &m_deformableSolver);
        m_world->setGravity(gravity);
        m_world->getWorldInfo().m_gravity = gravity;
        m_world->getWorldInfo().m_sparsesdf.setDefaultVoxelsz(0.25);
        m_world->getWorldInfo().m_sparsesdf.Initialize();
        m_world->setUseProjection(true);
        m_world->setImplicit(false);
        m_world->setLineSearch(false);
        btTransform at;
        at.setIdentity();
        at.setOrigin(btVector3(0, -0.5, 0));
        m_ground.setWorldTransform(at);
        m_ground.setFriction(1);
        m_world->addRigidBody(&m_ground);
    }
    ~DeformableClothWorld() {
        while (!m_cloths.empty()) removeCloth(m_cloths.back().get());
        m_world->removeRigidBody(&m_ground);
    }
    DeformableClothWorld(const DeformableClothWorld&) = delete;
    DeformableClothWorld& operator=(const DeformableClothWorld&) = delete;

    /// Adds an `along` x `across` patch with corners c00, c10, c01, c11 (CreatePatch with
    /// diagonals; node (i along, j across) is j * along + i), collision margin `margin`, `mass`
    /// kg in all, the example's mass-spring force (stiffness 2, damping 0.2, bending) and gravity.
    btSoftBody* addPatch(const btVector3& c00, const btVector3& c10, const btVector3& c01, const btVector3& c11,
                         int along, int across, btScalar margin, btScalar mass) {
        btSoftBody* body =
            btSoftBodyHelpers::CreatePatch(m_world->getWorldInfo(), c00, c10, c01, c11, along, across, 0, true);
        body->getCollisionShape()->setMargin(margin);
        body->generateBendingConstraints(2);
        body->setTotalMass(mass);
        body->m_cfg.kKHR = 1;
        body->m_cfg.kCHR = 1;
        body->m_cfg.kDF = btScalar(0.1);
        body->m_cfg.collisions = btSoftBody::fCollision::SDF_RD | btSoftBody::fCollision::SDF_RDN |
                                 btSoftBody::fCollision::SDF_RDF | btSoftBody::fCollision::VF_DD;
        m_cloths.emplace_back(body);
        m_world->addSoftBody(body);
        body->setSelfCollision(true);
        body->setSpringStiffness(4);
        m_world->addForce(body, &m_springs);
        m_world->addForce(body, &m_gravityForce);
        return body;
    }

    /// Removes and deletes `body`.
    void removeCloth(btSoftBody* body) {
        m_world->removeSoftBodyForce(body);
        m_world->removeSoftBody(body);
        for (auto it = m_cloths.begin(); it != m_cloths.end(); ++it)
            if (it->get() == body) {
                m_cloths.erase(it);
                break;
            }
    }

    /// The world.
    btDeformableMultiBodyDynamicsWorld& world() { return *m_world; }

private:
    btSoftBodyRigidBodyCollisionConfiguration m_configuration;
    btCollisionDispatcher m_dispatcher;
    btDbvtBroadphase m_broadphase;
    btDeformableBodySolver m_deformableSolver;
    btDeformableMultiBodyConstraintSolver m_constraintSolver;
    btDeformableGravityForce m_gravityForce;
    btDeformableMassSpringForce m_springs;
    std::unique_ptr<btDeformableMultiBodyDynamicsWorld> m_world;
    btBoxShape m_groundShape{btVector3(5, 0.5, 5)};
    /// A static rigid body: the deformable solver's rigid contacts read a plain btCollisionObject
    /// as neither a rigid body nor a multibody link, leave their impulse terms unset, and the
    /// cloth blows up on landing.
    btRigidBody m_ground{0, nullptr, &m_groundShape};
    std::vector<std::unique_ptr<btSoftBody>> m_cloths;
};

} // namespace bulletgpu::test
