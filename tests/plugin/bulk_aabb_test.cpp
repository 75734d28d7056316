// SPDX-License-Identifier: Zlib
// BulkAabbUpdater and the worlds that use it against Bullet's own updateAabbs: the same scene is
// built twice, in a Bullet world and in a BulletGpu world, and stepped side by side; every
// proxy's box and every activation state must agree bit for bit after every step, and so must
// the final transforms (same broadphase type, same solver, same order: the same simulation).
#include <bulletgpu/Broadphase.h>
#include <bulletgpu/BulkAabbUpdater.h>
#include <bulletgpu/DiscreteDynamicsWorld.h>
#include <bulletgpu/SoftRigidDynamicsWorld.h>

#include <BulletCollision/CollisionDispatch/btGhostObject.h>
#include <BulletCollision/CollisionShapes/btScaledBvhTriangleMeshShape.h>
#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <BulletSoftBody/btSoftBodyHelpers.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <btBulletDynamicsCommon.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <vector>

namespace {

/// Which world a scene runs in.
enum class WorldKind { Bullet, Bulk };
/// Which broadphase a scene runs on.
enum class BroadphaseKind { BulletGpu, Dbvt };

constexpr btScalar cTimeStep = btScalar(1) / btScalar(60);

/// Counts Bullet's "Overflow in AABB" warnings (the first of the four lines Bullet reports); draws nothing.
struct WarningCounter : btIDebugDraw {
    int warnings = 0;
    void drawLine(const btVector3&, const btVector3&, const btVector3&) override {}
    void drawContactPoint(const btVector3&, const btVector3&, btScalar, int, const btVector3&) override {}
    void reportErrorWarning(const char* text) override {
        if (std::strstr(text, "Overflow in AABB") != nullptr) ++warnings;
    }
    void draw3dText(const btVector3&, const char*) override {}
    void setDebugMode(int) override {}
    int getDebugMode() const override { return 0; }
};

std::unique_ptr<btBroadphaseInterface> makeBroadphase(BroadphaseKind kind) {
    if (kind == BroadphaseKind::Dbvt) return std::make_unique<btDbvtBroadphase>();
    bulletgpu::BroadphaseConfig config;
    config.backend = bulletgpu::Backend::Cpu;
    config.logBackendChoice = false;
    return std::make_unique<bulletgpu::Broadphase>(config);
}

/// A world (Bullet's or BulletGpu's, rigid or soft-rigid) with the objects and shapes it owns.
class Scene {
public:
    Scene(WorldKind world, BroadphaseKind broadphase, bool soft = false)
        : m_dispatcher(&m_configuration), m_broadphase(makeBroadphase(broadphase)) {
        btGImpactCollisionAlgorithm::registerAlgorithm(&m_dispatcher);
        if (soft) {
            m_world = world == WorldKind::Bulk
                          ? std::make_unique<bulletgpu::SoftRigidDynamicsWorld>(&m_dispatcher, m_broadphase.get(),
                                                                                &m_solver, &m_configuration)
                          : std::make_unique<btSoftRigidDynamicsWorld>(&m_dispatcher, m_broadphase.get(), &m_solver,
                                                                       &m_configuration);
            btSoftBodyWorldInfo& info = softWorld().getWorldInfo();
            info.m_dispatcher = &m_dispatcher;
            info.m_gravity = btVector3(0, -10, 0);
            info.m_sparsesdf.Initialize();
        } else if (world == WorldKind::Bulk) {
            m_world = std::make_unique<bulletgpu::DiscreteDynamicsWorld>(&m_dispatcher, m_broadphase.get(), &m_solver,
                                                                         &m_configuration);
        } else {
            m_world = std::make_unique<btDiscreteDynamicsWorld>(&m_dispatcher, m_broadphase.get(), &m_solver,
                                                                &m_configuration);
        }
        m_world->setGravity(btVector3(0, -10, 0));
        m_world->setDebugDrawer(&m_warnings);
        m_world->getPairCache()->setInternalGhostPairCallback(&m_ghostCallback);
    }

    ~Scene() {
        btCollisionObjectArray& objects = m_world->getCollisionObjectArray();
        while (objects.size() > 0) {
            btCollisionObject* object = objects[objects.size() - 1];
            if (auto* body = btRigidBody::upcast(object)) {
                m_world->removeRigidBody(body);
            } else if (auto* softBody = btSoftBody::upcast(object)) {
                softWorld().removeSoftBody(softBody);
            } else {
                m_world->removeCollisionObject(object);
            }
        }
    }

    Scene(const Scene&) = delete;
    Scene& operator=(const Scene&) = delete;

    /// Keeps a shape alive as long as the scene.
    template <class Shape>
    Shape* own(Shape* shape) {
        m_shapes.emplace_back(shape);
        return shape;
    }

    /// Adds a rigid body (static when mass is 0) at a position, with a small rotation.
    btRigidBody* addBody(btCollisionShape* shape, btScalar mass, const btVector3& origin) {
        btTransform transform(btQuaternion(btVector3(1, 2, 3).normalized(), btScalar(0.3)), origin);
        btVector3 inertia(0, 0, 0);
        if (mass != 0) shape->calculateLocalInertia(mass, inertia);
        m_motionStates.push_back(std::make_unique<btDefaultMotionState>(transform));
        m_bodies.push_back(std::make_unique<btRigidBody>(
            btRigidBody::btRigidBodyConstructionInfo(mass, m_motionStates.back().get(), shape, inertia)));
        m_world->addRigidBody(m_bodies.back().get());
        return m_bodies.back().get();
    }

    /// Adds a kinematic body moved through its motion state.
    btRigidBody* addKinematic(btCollisionShape* shape, const btVector3& origin) {
        btRigidBody* body = addBody(shape, 0, origin);
        body->setCollisionFlags(body->getCollisionFlags() | btCollisionObject::CF_KINEMATIC_OBJECT);
        body->setActivationState(DISABLE_DEACTIVATION);
        return body;
    }

    /// Adds a pair-caching ghost object.
    btPairCachingGhostObject* addGhost(btCollisionShape* shape, const btVector3& origin) {
        m_ghosts.push_back(std::make_unique<btPairCachingGhostObject>());
        btPairCachingGhostObject* ghost = m_ghosts.back().get();
        ghost->setCollisionShape(shape);
        ghost->setWorldTransform(btTransform(btQuaternion::getIdentity(), origin));
        ghost->setCollisionFlags(btCollisionObject::CF_NO_CONTACT_RESPONSE);
        m_world->addCollisionObject(ghost, btBroadphaseProxy::SensorTrigger,
                                    btBroadphaseProxy::AllFilter & ~btBroadphaseProxy::SensorTrigger);
        return ghost;
    }

    /// Adds a soft cloth patch (soft scenes only).
    btSoftBody* addCloth(const btVector3& centre) {
        btSoftBodyWorldInfo& info = softWorld().getWorldInfo();
        const btVector3 x(2, 0, 0), z(0, 0, 2);
        m_softBodies.emplace_back(btSoftBodyHelpers::CreatePatch(info, centre - x - z, centre + x - z, centre - x + z,
                                                                 centre + x + z, 8, 8, 0, true));
        m_softBodies.back()->setTotalMass(1);
        softWorld().addSoftBody(m_softBodies.back().get());
        return m_softBodies.back().get();
    }

    /// Keeps a triangle mesh alive as long as the scene.
    btTriangleMesh* ownMesh(btTriangleMesh* mesh) {
        m_meshes.emplace_back(mesh);
        return mesh;
    }

    void step() {
        m_world->stepSimulation(cTimeStep, 0);
        if (auto* soft = dynamic_cast<btSoftRigidDynamicsWorld*>(m_world.get())) {
            soft->getWorldInfo().m_sparsesdf.GarbageCollect();
        }
    }

    btDiscreteDynamicsWorld& world() { return *m_world; }
    btSoftRigidDynamicsWorld& softWorld() { return static_cast<btSoftRigidDynamicsWorld&>(*m_world); }
    int warnings() const { return m_warnings.warnings; }
    btRigidBody& body(std::size_t i) { return *m_bodies[i]; }

private:
    btSoftBodyRigidBodyCollisionConfiguration m_configuration;
    btCollisionDispatcher m_dispatcher;
    std::unique_ptr<btBroadphaseInterface> m_broadphase;
    btSequentialImpulseConstraintSolver m_solver;
    btGhostPairCallback m_ghostCallback;
    WarningCounter m_warnings;
    std::vector<std::unique_ptr<btTriangleMesh>> m_meshes;
    std::vector<std::unique_ptr<btCollisionShape>> m_shapes;
    std::vector<std::unique_ptr<btDefaultMotionState>> m_motionStates;
    std::vector<std::unique_ptr<btRigidBody>> m_bodies;
    std::vector<std::unique_ptr<btPairCachingGhostObject>> m_ghosts;
    std::vector<std::unique_ptr<btSoftBody>> m_softBodies;
    std::unique_ptr<btDiscreteDynamicsWorld> m_world;
};

bool sameBits(const btVector3& a, const btVector3& b) {
    return std::memcmp(a.m_floats, b.m_floats, 3 * sizeof(btScalar)) == 0;
}

bool sameBits(const btTransform& a, const btTransform& b) {
    return sameBits(a.getOrigin(), b.getOrigin()) && sameBits(a.getBasis()[0], b.getBasis()[0]) &&
           sameBits(a.getBasis()[1], b.getBasis()[1]) && sameBits(a.getBasis()[2], b.getBasis()[2]);
}

/// Every object's broadphase box and activation state agree bit for bit.
void requireSameAabbs(Scene& bullet, Scene& bulk) {
    const btCollisionObjectArray& expected = bullet.world().getCollisionObjectArray();
    const btCollisionObjectArray& actual = bulk.world().getCollisionObjectArray();
    REQUIRE(expected.size() == actual.size());
    for (int i = 0; i < expected.size(); ++i) {
        const btBroadphaseProxy& e = *expected[i]->getBroadphaseHandle();
        const btBroadphaseProxy& a = *actual[i]->getBroadphaseHandle();
        CAPTURE(i, expected[i]->getCollisionShape()->getName(), e.m_aabbMin.x(), a.m_aabbMin.x(), e.m_aabbMax.x(),
                a.m_aabbMax.x());
        REQUIRE(sameBits(e.m_aabbMin, a.m_aabbMin));
        REQUIRE(sameBits(e.m_aabbMax, a.m_aabbMax));
        REQUIRE(expected[i]->getActivationState() == actual[i]->getActivationState());
    }
}

/// Every object's world transform agrees bit for bit.
void requireSameTransforms(Scene& bullet, Scene& bulk) {
    const btCollisionObjectArray& expected = bullet.world().getCollisionObjectArray();
    const btCollisionObjectArray& actual = bulk.world().getCollisionObjectArray();
    for (int i = 0; i < expected.size(); ++i) {
        CAPTURE(i, expected[i]->getCollisionShape()->getName());
        REQUIRE(sameBits(expected[i]->getWorldTransform(), actual[i]->getWorldTransform()));
    }
}

/// A bumpy grid of triangles, n x n quads of side 2 centred on the origin.
btTriangleMesh* makeTerrainMesh(int n) {
    auto* mesh = new btTriangleMesh();
    auto vertex = [n](int i, int j) {
        const btScalar x = btScalar(2 * i - n), z = btScalar(2 * j - n);
        return btVector3(x, btScalar(0.3) * btSin(x) * btCos(z), z);
    };
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            mesh->addTriangle(vertex(i, j), vertex(i + 1, j), vertex(i + 1, j + 1));
            mesh->addTriangle(vertex(i, j), vertex(i + 1, j + 1), vertex(i, j + 1));
        }
    }
    return mesh;
}

/// The twelve triangles of a box of half-extent h.
btTriangleMesh* makeBoxMesh(btScalar h) {
    auto* mesh = new btTriangleMesh();
    const btVector3 c[8] = {{-h, -h, -h}, {h, -h, -h}, {h, h, -h}, {-h, h, -h},
                            {-h, -h, h},  {h, -h, h},  {h, h, h},  {-h, h, h}};
    const int faces[12][3] = {{0, 1, 2}, {0, 2, 3}, {4, 6, 5}, {4, 7, 6}, {0, 4, 5}, {0, 5, 1},
                              {1, 5, 6}, {1, 6, 2}, {2, 6, 7}, {2, 7, 3}, {3, 7, 4}, {3, 4, 0}};
    for (const auto& f : faces) mesh->addTriangle(c[f[0]], c[f[1]], c[f[2]]);
    return mesh;
}

/// Every shape type Bullet's demos use, static, kinematic and dynamic, and a ghost.
struct ShapeZoo {
    btRigidBody* sleeper = nullptr; ///< A box put to sleep and moved while asleep.
    btRigidBody* still = nullptr;   ///< A static box moved by hand.
    btRigidBody* kinematic = nullptr;
    btPairCachingGhostObject* ghost = nullptr;
    btRigidBody* sphere = nullptr;
    btRigidBody* capsule = nullptr;

    explicit ShapeZoo(Scene& scene) {
        btTriangleMesh* terrain = scene.ownMesh(makeTerrainMesh(8));
        auto* bvh = scene.own(new btBvhTriangleMeshShape(terrain, true));
        scene.addBody(scene.own(new btStaticPlaneShape(btVector3(0, 1, 0), -2)), 0, btVector3(0, 0, 0));
        scene.addBody(bvh, 0, btVector3(0, 0, 0));
        scene.addBody(scene.own(new btScaledBvhTriangleMeshShape(bvh, btVector3(2, 1, btScalar(0.5)))), 0,
                      btVector3(40, 0, 0));
        still = scene.addBody(scene.own(new btBoxShape(btVector3(1, 1, 1))), 0, btVector3(-10, 1, -10));

        sphere = scene.addBody(scene.own(new btSphereShape(btScalar(0.7))), 1, btVector3(-4, 4, 0));
        capsule = scene.addBody(scene.own(new btCapsuleShape(btScalar(0.4), btScalar(1.2))), 1, btVector3(-2, 5, 1));
        scene.addBody(scene.own(new btCylinderShape(btVector3(btScalar(0.5), btScalar(0.8), btScalar(0.5)))), 1,
                      btVector3(0, 4, -2));
        scene.addBody(scene.own(new btConeShape(btScalar(0.6), btScalar(1.4))), 1, btVector3(2, 6, 0));
        sleeper =
            scene.addBody(scene.own(new btBoxShape(btVector3(btScalar(0.5), btScalar(0.3), 1))), 1, btVector3(4, 3, 2));

        auto* hull = scene.own(new btConvexHullShape());
        for (int k = 0; k < 12; ++k) {
            hull->addPoint(btVector3(btSin(btScalar(k)), btCos(btScalar(1.7) * btScalar(k)), btSin(btScalar(k * k))),
                           false);
        }
        hull->recalcLocalAabb();
        scene.addBody(hull, 1, btVector3(-6, 7, 3));

        const btVector3 centres[3] = {{0, 0, 0}, {btScalar(0.6), 0, 0}, {0, btScalar(0.7), 0}};
        const btScalar radii[3] = {btScalar(0.4), btScalar(0.3), btScalar(0.35)};
        scene.addBody(scene.own(new btMultiSphereShape(centres, radii, 3)), 1, btVector3(6, 5, -3));

        auto* inner = scene.own(new btCompoundShape());
        inner->addChildShape(btTransform(btQuaternion::getIdentity(), btVector3(0, 1, 0)),
                             scene.own(new btSphereShape(btScalar(0.5))));
        auto* outer = scene.own(new btCompoundShape());
        outer->addChildShape(btTransform(btQuaternion(btVector3(0, 0, 1), btScalar(0.4)), btVector3(1, 0, 0)),
                             scene.own(new btBoxShape(btVector3(btScalar(0.5), btScalar(0.2), btScalar(0.4)))));
        outer->addChildShape(btTransform(btQuaternion::getIdentity(), btVector3(-1, 0, 0)), inner);
        scene.addBody(outer, 2, btVector3(0, 9, 4));

        auto* gimpact = scene.own(new btGImpactMeshShape(scene.ownMesh(makeBoxMesh(btScalar(0.6)))));
        gimpact->updateBound();
        scene.addBody(gimpact, 1, btVector3(-3, 8, -3));

        kinematic = scene.addKinematic(scene.own(new btBoxShape(btVector3(2, btScalar(0.2), 2))), btVector3(8, 1, 8));
        ghost = scene.addGhost(scene.own(new btSphereShape(2)), btVector3(0, 2, 0));
    }

    /// The same changes in both scenes: moves by hand, activation changes, forced updates on and off.
    void script(Scene& scene, int step) {
        btTransform kinematicPose;
        kinematic->getMotionState()->getWorldTransform(kinematicPose);
        kinematicPose.getOrigin() += btVector3(0, 0, btScalar(-0.1));
        kinematic->getMotionState()->setWorldTransform(kinematicPose);
        ghost->getWorldTransform().getOrigin() += btVector3(btScalar(0.15), 0, 0);

        btDiscreteDynamicsWorld& world = scene.world();
        const btVector3 shift(btScalar(0.5), 0, 0);
        switch (step) {
            case 10:
                sleeper->forceActivationState(ISLAND_SLEEPING);
                sleeper->getWorldTransform().getOrigin() += shift; // seen: all boxes are updated
                break;
            case 15:
                world.setForceUpdateAllAabbs(false);
                still->getWorldTransform().getOrigin() += shift; // a static object: not seen
                break;
            case 20:
                sleeper->getWorldTransform().getOrigin() += shift; // asleep: not seen
                break;
            case 25:
                sleeper->activate(true);
                sphere->forceActivationState(DISABLE_DEACTIVATION);
                capsule->forceActivationState(WANTS_DEACTIVATION);
                break;
            case 30:
                world.getDispatchInfo().m_useContinuous = false;
                break;
            case 35:
                world.getDispatchInfo().m_useContinuous = true;
                world.setForceUpdateAllAabbs(true);
                break;
            case 40:
                capsule->forceActivationState(DISABLE_SIMULATION);
                world.setForceUpdateAllAabbs(false);
                break;
            default:
                break;
        }
    }
};

/// Steps the zoo in a Bullet world and a bulk world on the same broadphase type.
void runShapeZoo(BroadphaseKind broadphase) {
    Scene bullet(WorldKind::Bullet, broadphase);
    Scene bulk(WorldKind::Bulk, broadphase);
    ShapeZoo bulletZoo(bullet);
    ShapeZoo bulkZoo(bulk);
    for (int step = 0; step < 60; ++step) {
        CAPTURE(step);
        bulletZoo.script(bullet, step);
        bulkZoo.script(bulk, step);
        bullet.step();
        bulk.step();
        requireSameAabbs(bullet, bulk);
        REQUIRE(bulletZoo.ghost->getNumOverlappingObjects() == bulkZoo.ghost->getNumOverlappingObjects());
    }
    requireSameTransforms(bullet, bulk);
    CHECK(bulletZoo.ghost->getNumOverlappingObjects() > 0);
}

} // namespace

TEST_CASE("Bulk AABBs: every shape type, kinematic, static and ghost objects and activation changes equal Bullet's",
          "[bulk]") {
    SECTION("on bulletgpu::Broadphase (one setAabbs call)") { runShapeZoo(BroadphaseKind::BulletGpu); }
    SECTION("on btDbvtBroadphase (setAabb per object)") { runShapeZoo(BroadphaseKind::Dbvt); }
}

TEST_CASE("Bulk AABBs: 40,000 objects, boxes computed and stored on threads, equal Bullet's", "[bulk]") {
    // Collision worlds, not dynamics worlds: enough objects for the parallel paths of
    // BulkAabbUpdater and Broadphase::setAabbs, at little cost. Objects sleep, rest and move.
    constexpr int cObjects = 40000;
    btBoxShape box(btVector3(btScalar(0.4), btScalar(0.3), btScalar(0.2)));
    btSphereShape sphere(btScalar(0.4));
    btCapsuleShape capsule(btScalar(0.2), btScalar(0.5));
    btCollisionShape* shapes[3] = {&box, &sphere, &capsule};
    std::vector<std::unique_ptr<btRigidBody>> bodies; // outlive the worlds, also when a check fails
    btDefaultCollisionConfiguration configuration;
    btCollisionDispatcher dispatcher(&configuration);
    const std::unique_ptr<btBroadphaseInterface> bulletBroadphase = makeBroadphase(BroadphaseKind::BulletGpu);
    const std::unique_ptr<btBroadphaseInterface> bulkBroadphase = makeBroadphase(BroadphaseKind::BulletGpu);
    btCollisionWorld bullet(&dispatcher, bulletBroadphase.get(), &configuration);
    btCollisionWorld bulk(&dispatcher, bulkBroadphase.get(), &configuration);
    bulletgpu::BulkAabbUpdater updater(2);
    for (int i = 0; i < 2 * cObjects; ++i) {
        const int k = i % cObjects;
        const btScalar mass = k % 11 == 0 ? 0 : 1; // every 11th static
        bodies.push_back(std::make_unique<btRigidBody>(mass, nullptr, shapes[k % 3]));
        btTransform pose(btQuaternion(btVector3(1, 1, 0).normalized(), btScalar(k) * btScalar(0.01)),
                         btVector3(btScalar(k % 200), btScalar(k / 200), 0));
        bodies.back()->setWorldTransform(pose);
        bodies.back()->setInterpolationWorldTransform(pose);
        if (k % 13 == 0) bodies.back()->setActivationState(ISLAND_SLEEPING);
        (i < cObjects ? bullet : bulk).addCollisionObject(bodies.back().get());
    }
    for (int round = 0; round < 4; ++round) {
        CAPTURE(round);
        for (btCollisionWorld* world : {&bullet, &bulk}) world->setForceUpdateAllAabbs(round % 2 == 0);
        for (int i = 0; i < 2 * cObjects; ++i) {
            btRigidBody& body = *bodies[static_cast<std::size_t>(i)];
            const int k = i % cObjects;       // the same object in both worlds
            if (k % 3 == round % 3) continue; // some keep their box
            body.setInterpolationWorldTransform(body.getWorldTransform());
            body.getWorldTransform().getOrigin() += btVector3(btScalar(0.01) * btScalar(k % 7), 0, btScalar(0.3));
        }
        bullet.updateAabbs();
        updater.update(bulk);
        for (int i = 0; i < cObjects; ++i) {
            const btBroadphaseProxy& e = *bullet.getCollisionObjectArray()[i]->getBroadphaseHandle();
            const btBroadphaseProxy& a = *bulk.getCollisionObjectArray()[i]->getBroadphaseHandle();
            CAPTURE(i, e.m_aabbMin.x(), a.m_aabbMin.x(), e.m_aabbMin.z(), a.m_aabbMin.z());
            REQUIRE(sameBits(e.m_aabbMin, a.m_aabbMin));
            REQUIRE(sameBits(e.m_aabbMax, a.m_aabbMax));
        }
        bullet.computeOverlappingPairs();
        bulk.computeOverlappingPairs();
        REQUIRE(bullet.getPairCache()->getNumOverlappingPairs() == bulk.getPairCache()->getNumOverlappingPairs());
    }
    // The world's own removal scans every pair per object: destroy the proxies first (their pairs go with them).
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        btCollisionWorld& world = i < cObjects ? bullet : bulk;
        world.getBroadphase()->destroyProxy(bodies[i]->getBroadphaseHandle(), &dispatcher);
        bodies[i]->setBroadphaseHandle(nullptr);
        world.removeCollisionObject(bodies[i].get());
    }
}

TEST_CASE("Bulk AABBs: an object flying off is removed from simulation as Bullet does, with one warning", "[bulk]") {
    // Bullet warns once per process (a static flag in updateSingleAabb), and this is the only test
    // here that overflows: the bulk world, stepped first, must give that warning, Bullet's none.
    Scene bullet(WorldKind::Bullet, BroadphaseKind::BulletGpu);
    Scene bulk(WorldKind::Bulk, BroadphaseKind::BulletGpu);
    for (Scene* scene : {&bulk, &bullet}) {
        scene->addBody(scene->own(new btStaticPlaneShape(btVector3(0, 1, 0), 0)), 0, btVector3(0, 0, 0));
        btCollisionShape* box = scene->own(new btBoxShape(btVector3(btScalar(0.5), btScalar(0.5), btScalar(0.5))));
        scene->addBody(box, 1, btVector3(0, 3, 0));
        scene->addBody(box, 1, btVector3(0, 5, 0))->setLinearVelocity(btVector3(btScalar(1e8), 0, 0));
        scene->addBody(box, 1, btVector3(3, 3, 0));
    }
    for (int step = 0; step < 5; ++step) {
        CAPTURE(step);
        bulk.step();
        bullet.step();
        requireSameAabbs(bullet, bulk);
    }
    CHECK(bulk.body(2).getActivationState() == DISABLE_SIMULATION);
    CHECK(bulk.warnings() == 1);
    CHECK(bullet.warnings() == 0);
    requireSameTransforms(bullet, bulk);
}

TEST_CASE("Bulk AABBs: a soft-rigid world with cloth equals Bullet's", "[bulk][soft]") {
    Scene bullet(WorldKind::Bullet, BroadphaseKind::BulletGpu, true);
    Scene bulk(WorldKind::Bulk, BroadphaseKind::BulletGpu, true);
    for (Scene* scene : {&bullet, &bulk}) {
        scene->addBody(scene->own(new btBoxShape(btVector3(5, 1, 5))), 0, btVector3(0, -1, 0));
        scene->addBody(scene->own(new btSphereShape(btScalar(0.5))), 1, btVector3(0, 1, 0));
        scene->addCloth(btVector3(0, 3, 0));
    }
    for (int step = 0; step < 40; ++step) {
        CAPTURE(step);
        bullet.step();
        bulk.step();
        requireSameAabbs(bullet, bulk);
    }
    requireSameTransforms(bullet, bulk);
}
