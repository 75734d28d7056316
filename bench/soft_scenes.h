// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/DeformableMultiBodyDynamicsWorld.h>

#include <BulletSoftBody/btDeformableBodySolver.h>
#include <BulletSoftBody/btDeformableMultiBodyConstraintSolver.h>
#include <BulletSoftBody/btDeformableMultiBodyDynamicsWorld.h>
#include <BulletSoftBody/btSoftBodyHelpers.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#include <btBulletDynamicsCommon.h>

#include <cmath>
#include <memory>
#include <vector>

/// The soft-body benchmark's scenes (bulletgpu-bench-soft): a cloth folded in three layers that
/// falls onto the ground and onto itself, in Bullet's classic soft-rigid world (with any
/// btSoftBodySolver) and in the deformable world (btDeformableMultiBodyDynamicsWorld with its
/// own self-collision, set up as Bullet's DeformableSelfCollision example does); and coiled
/// ropes in the classic world.

namespace bulletgpu::bench {

/// Node spacing (m), thickness (= collision margin, m) and node mass (kg) of the cloths: those
/// of Bullet's DeformableSelfCollision example (1.2 x 2.4 m on 15 x 30 nodes, margin 0.02, 0.5 kg).
constexpr btScalar cSpacing = 0.08f;
constexpr btScalar cThickness = 0.02f;
constexpr double cNodeMass = 0.5 / 450;
/// The deformable world's step (s): that of Bullet's DeformableSelfCollision example; at 60 Hz
/// its explicit integration blows up when the cloth lands.
constexpr double cDeformableStep = 1.0 / 240;
/// Node spacing and thickness of the ropes (m).
constexpr btScalar cRopeSpacing = 0.02f;
constexpr btScalar cRopeThickness = 0.02f;

/// Where arc length `s` along a path of three flat layers of length `layer`, joined by half
/// circles of radius `radius` (the layers 2 radius apart, the lowest at height `y0`), lies in
/// the (z, y) plane.
inline void foldPoint(double s, double layer, double radius, double y0, double& z, double& y) {
    const double arc = M_PI * radius;
    for (int k = 0; k < 3; ++k) {
        const double base = y0 + 2 * k * radius;
        const bool forward = k % 2 == 0;
        if (s <= layer || k == 2) {
            z = forward ? s : layer - s;
            y = base;
            return;
        }
        s -= layer;
        if (s <= arc) {
            const double angle = s / radius; // 0 .. pi, from the lower layer's end upwards
            const double centreZ = forward ? layer : 0.0;
            z = centreZ + (forward ? 1 : -1) * radius * std::sin(angle);
            y = base + radius - radius * std::cos(angle);
            return;
        }
        s -= arc;
    }
}

/// Puts the nodes of `cloth` (an n x n CreatePatch, node (ix, iy) at iy * n + ix) on the
/// three-layer fold: x across, the fold along z; layers 6 thicknesses apart, the lowest 5 above
/// the ground.
inline void foldCloth(btSoftBody& cloth, int n) {
    const double length = (n - 1) * double(cSpacing), radius = 3 * double(cThickness);
    const double layer = (length - 2 * M_PI * radius) / 3;
    for (int iy = 0; iy < n; ++iy) {
        double z = 0, y = 0;
        foldPoint(iy * double(cSpacing), layer, radius, 5 * double(cThickness), z, y);
        for (int ix = 0; ix < n; ++ix) {
            btSoftBody::Node& node = cloth.m_nodes[iy * n + ix];
            node.m_x = btVector3(btScalar((ix - 0.5 * (n - 1)) * cSpacing), btScalar(y), btScalar(z));
            node.m_q = node.m_x;
        }
    }
}

/// An n x n patch with the benchmark's spacing (its rest shape is taken when the world first
/// steps it, after foldCloth).
inline btSoftBody* makePatch(btSoftBodyWorldInfo& info, int n) {
    const btScalar half = btScalar(0.5 * (n - 1)) * cSpacing, length = btScalar(n - 1) * cSpacing;
    return btSoftBodyHelpers::CreatePatch(info, btVector3(-half, 0, 0), btVector3(half, 0, 0),
                                          btVector3(-half, 0, length), btVector3(half, 0, length), n, n, 0, true);
}

/// Bending links of distance 2 along the rows and columns of an n x n patch (Bullet's
/// generateBendingConstraints allocates a node-count-squared table: 32 GB at 300x300).
inline void addBendingLinks(btSoftBody& body, int n) {
    for (int iy = 0; iy < n; ++iy)
        for (int ix = 0; ix < n; ++ix) {
            if (ix + 2 < n) body.appendLink(iy * n + ix, iy * n + ix + 2);
            if (iy + 2 < n) body.appendLink(iy * n + ix, (iy + 2) * n + ix);
        }
    for (int i = 0; i < body.m_links.size(); ++i) {
        btSoftBody::Link& link = body.m_links[i];
        const long a = link.m_n[0] - &body.m_nodes[0], b = link.m_n[1] - &body.m_nodes[0];
        const long d = a > b ? a - b : b - a;
        link.m_bbending = (d == 2 || d == 2L * n) ? 1 : 0;
    }
}

/// A static ground box, top at y = 0: a rigid body of mass 0, because the deformable solver's
/// rigid contacts read a plain btCollisionObject as neither a rigid body nor a multibody link,
/// leave their impulse terms unset, and the cloth blows up on landing.
struct Ground {
    btBoxShape shape{btVector3(20, 0.5, 20)};
    btRigidBody object{0, nullptr, &shape};
    Ground() {
        btTransform at;
        at.setIdentity();
        at.setOrigin(btVector3(0, -0.5, 0));
        object.setWorldTransform(at);
        object.setFriction(1);
    }
};

/// Bullet's classic soft-rigid world with `softSolver` (Bullet's default when null), a ground,
/// and soft bodies it owns.
class ClassicSoftWorld {
public:
    explicit ClassicSoftWorld(std::unique_ptr<btSoftBodySolver> softSolver)
        : m_dispatcher(&m_configuration), m_softSolver(std::move(softSolver)),
          m_world(&m_dispatcher, &m_broadphase, &m_solver, &m_configuration, m_softSolver.get()) {
        const btVector3 gravity(0, -9.8f, 0);
        m_world.setGravity(gravity);
        btSoftBodyWorldInfo& info = m_world.getWorldInfo();
        info.m_broadphase = &m_broadphase;
        info.m_dispatcher = &m_dispatcher;
        info.m_gravity = gravity;
        info.m_sparsesdf.Initialize();
        m_world.addRigidBody(&m_ground.object);
    }
    ~ClassicSoftWorld() {
        for (auto& body : m_bodies) m_world.removeSoftBody(body.get());
        m_world.removeRigidBody(&m_ground.object);
    }
    ClassicSoftWorld(const ClassicSoftWorld&) = delete;
    ClassicSoftWorld& operator=(const ClassicSoftWorld&) = delete;

    /// The folded n x n cloth: margin cThickness, bending links of distance 2 along rows and
    /// columns, 4 position iterations.
    btSoftBody* addFoldedCloth(int n) {
        btSoftBody* body = makePatch(m_world.getWorldInfo(), n);
        foldCloth(*body, n);
        body->getCollisionShape()->setMargin(cThickness);
        addBendingLinks(*body, n);
        body->m_cfg.piterations = 4;
        body->setTotalMass(btScalar(cNodeMass * n * n));
        return add(body);
    }

    /// The tests' curtain (tests/plugin/soft_self_collision_test.cpp): n x n nodes, 2 m square,
    /// 0.3 m above the ground and leaning over by 0.3 m, margin 0.03, 1 kg; it folds onto itself.
    btSoftBody* addCurtain(int n) {
        btSoftBody* body =
            btSoftBodyHelpers::CreatePatch(m_world.getWorldInfo(), btVector3(-1, 0.3f, 0), btVector3(1, 0.3f, 0),
                                           btVector3(-1, 2.3f, 0.3f), btVector3(1, 2.3f, 0.3f), n, n, 0, true);
        body->getCollisionShape()->setMargin(0.03f);
        body->generateBendingConstraints(2);
        body->m_cfg.piterations = 4;
        body->setTotalMass(1);
        return add(body);
    }

    /// A rope of `nodes` nodes (cRopeSpacing apart along it) coiled as a helix of radius `radius`
    /// around the vertical axis through (x, z), rising 2 thicknesses a turn from y = 0.1,
    /// margin cRopeThickness.
    btSoftBody* addCoiledRope(int nodes, btScalar x, btScalar z, btScalar radius) {
        btSoftBody* body =
            btSoftBodyHelpers::CreateRope(m_world.getWorldInfo(), btVector3(0, 0, 0),
                                          btVector3(btScalar(nodes - 1) * cRopeSpacing, 0, 0), nodes - 2, 0);
        const double turn = 2 * M_PI * radius, rise = 2 * cRopeThickness;
        for (int i = 0; i < nodes; ++i) {
            const double s = i * double(cRopeSpacing), angle = 2 * M_PI * s / turn;
            btSoftBody::Node& node = body->m_nodes[i];
            node.m_x = btVector3(btScalar(x + radius * std::cos(angle)), btScalar(0.1 + rise * s / turn),
                                 btScalar(z + radius * std::sin(angle)));
            node.m_q = node.m_x;
        }
        body->getCollisionShape()->setMargin(cRopeThickness);
        body->m_cfg.piterations = 4;
        body->setTotalMass(btScalar(cNodeMass * nodes));
        return add(body);
    }

    btSoftRigidDynamicsWorld& world() { return m_world; }

    /// Adds `body` (made on this world's info) to the world, which owns it from now on.
    btSoftBody* adopt(btSoftBody* body) { return add(body); }

private:
    btSoftBody* add(btSoftBody* body) {
        m_bodies.emplace_back(body);
        m_world.addSoftBody(body);
        return body;
    }

    btSoftBodyRigidBodyCollisionConfiguration m_configuration;
    btCollisionDispatcher m_dispatcher;
    btDbvtBroadphase m_broadphase;
    btSequentialImpulseConstraintSolver m_solver;
    std::unique_ptr<btSoftBodySolver> m_softSolver;
    btSoftRigidDynamicsWorld m_world;
    Ground m_ground;
    std::vector<std::unique_ptr<btSoftBody>> m_bodies;
};

/// Bullet's deformable world as its DeformableSelfCollision example sets it up (explicit
/// integration, no line search, projection; it steps at 240 Hz, cDeformableStep), with a ground
/// and one folded cloth whose self-collision (VF_DD, setSelfCollision) is on; the world is
/// Bullet's own, or bulletgpu::DeformableMultiBodyDynamicsWorld with `*ours` when given.
class DeformableSoftWorld {
public:
    explicit DeformableSoftWorld(int n, const SoftCollisionConfig* ours = nullptr)
        : m_dispatcher(&m_configuration), m_world(makeWorld(ours)), m_gravityForce(btVector3(0, -9.8f, 0)) {
        const btVector3 gravity(0, -9.8f, 0);
        m_world->setGravity(gravity);
        m_world->getWorldInfo().m_gravity = gravity;
        m_world->getWorldInfo().m_sparsesdf.setDefaultVoxelsz(0.25);
        m_world->getWorldInfo().m_sparsesdf.Initialize();
        m_world->addRigidBody(&m_ground.object);
        btSoftBody* body = makePatch(m_world->getWorldInfo(), n);
        foldCloth(*body, n);
        body->getCollisionShape()->setMargin(cThickness);
        addBendingLinks(*body, n);
        body->setTotalMass(btScalar(cNodeMass * n * n));
        body->m_cfg.kKHR = 1;
        body->m_cfg.kCHR = 1;
        body->m_cfg.kDF = 0.1f;
        body->m_cfg.collisions = btSoftBody::fCollision::SDF_RD | btSoftBody::fCollision::SDF_RDN |
                                 btSoftBody::fCollision::SDF_RDF | btSoftBody::fCollision::VF_DD;
        m_cloth.reset(body);
        m_world->addSoftBody(body);
        body->setSelfCollision(true);
        m_springs = std::make_unique<btDeformableMassSpringForce>(2, 0.2, true);
        body->setSpringStiffness(4);
        m_world->addForce(body, m_springs.get());
        m_world->addForce(body, &m_gravityForce);
        m_world->setUseProjection(true);
        m_world->setImplicit(false);
        m_world->setLineSearch(false);
    }
    ~DeformableSoftWorld() {
        m_world->removeSoftBody(m_cloth.get());
        m_world->removeRigidBody(&m_ground.object);
    }
    DeformableSoftWorld(const DeformableSoftWorld&) = delete;
    DeformableSoftWorld& operator=(const DeformableSoftWorld&) = delete;

    btDeformableMultiBodyDynamicsWorld& world() { return *m_world; }
    btSoftBody& cloth() { return *m_cloth; }

private:
    std::unique_ptr<btDeformableMultiBodyDynamicsWorld> makeWorld(const SoftCollisionConfig* ours) {
        m_constraintSolver.setDeformableSolver(&m_deformableSolver);
        if (ours)
            return std::make_unique<DeformableMultiBodyDynamicsWorld>(&m_dispatcher, &m_broadphase, &m_constraintSolver,
                                                                      &m_configuration, &m_deformableSolver, *ours);
        return std::make_unique<btDeformableMultiBodyDynamicsWorld>(&m_dispatcher, &m_broadphase, &m_constraintSolver,
                                                                    &m_configuration, &m_deformableSolver);
    }

    btSoftBodyRigidBodyCollisionConfiguration m_configuration;
    btCollisionDispatcher m_dispatcher;
    btDbvtBroadphase m_broadphase;
    btDeformableBodySolver m_deformableSolver;
    btDeformableMultiBodyConstraintSolver m_constraintSolver;
    std::unique_ptr<btDeformableMultiBodyDynamicsWorld> m_world;
    Ground m_ground;
    btDeformableGravityForce m_gravityForce;
    std::unique_ptr<btDeformableMassSpringForce> m_springs;
    std::unique_ptr<btSoftBody> m_cloth;
};

} // namespace bulletgpu::bench
