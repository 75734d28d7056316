// SPDX-License-Identifier: Zlib
// bulletgpu::CollisionDispatcher: which pairs it takes, contacts against a brute-force oracle on
// frozen configurations, physics against Bullet's own algorithms, persistent manifolds, shared
// and scaled shapes, objects added and removed, bad input.
#include "support/environment_override.h"
#include "support/mesh_world.h"
#include "support/test_skip.h"

#include "bullet_adapter/mesh_instances.h"
#include "kernels/common/cuda_device.h"
#include "kernels/narrow/engine/triangle_mesh_set.h"
#include "kernels/reference/brute_force_ccd.h"

#include <catch2/catch.hpp>

#include <BulletCollision/CollisionDispatch/btCollisionObjectWrapper.h>
#include <BulletCollision/CollisionDispatch/btCollisionWorld.h>
#include <BulletCollision/CollisionShapes/btBoxShape.h>
#include <BulletCollision/CollisionShapes/btCompoundShape.h>
#include <BulletCollision/CollisionShapes/btConvexHullShape.h>
#include <BulletCollision/CollisionShapes/btConvexTriangleMeshShape.h>
#include <BulletCollision/CollisionShapes/btScaledBvhTriangleMeshShape.h>
#include <BulletCollision/CollisionShapes/btSphereShape.h>
#include <BulletCollision/CollisionShapes/btTriangleMesh.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <limits>
#include <string>
#include <vector>

using namespace bulletgpu;
using namespace bulletgpu::test;

namespace {

/// Whether the dispatcher gives the mesh algorithm for a pair of shapes (in that order).
bool takesPair(btCollisionDispatcher& dispatcher, btCollisionShape* shape0, btCollisionShape* shape1) {
    btCollisionObject object0, object1;
    object0.setCollisionShape(shape0);
    object1.setCollisionShape(shape1);
    const btCollisionObjectWrapper wrap0(nullptr, shape0, &object0, object0.getWorldTransform(), -1, -1);
    const btCollisionObjectWrapper wrap1(nullptr, shape1, &object1, object1.getWorldTransform(), -1, -1);
    btCollisionAlgorithm* algorithm = dispatcher.findAlgorithm(&wrap0, &wrap1, nullptr, BT_CONTACT_POINT_ALGORITHMS);
    const bool ours = dynamic_cast<MeshCollisionAlgorithm*>(algorithm) != nullptr;
    if (algorithm != nullptr) {
        algorithm->~btCollisionAlgorithm();
        dispatcher.freeCollisionAlgorithm(algorithm);
    }
    return ours;
}

/// A convex hull of a box's corners (half extents h).
std::unique_ptr<btConvexHullShape> boxHull(const btVector3& h) {
    auto hull = std::make_unique<btConvexHullShape>();
    for (int c = 0; c < 8; ++c) {
        hull->addPoint(btVector3(c & 1 ? h.x() : -h.x(), c & 2 ? h.y() : -h.y(), c & 4 ? h.z() : -h.z()), false);
    }
    hull->recalcLocalAabb();
    return hull;
}

/// A closed box-shaped mesh (12 triangles) of half extents h, for GImpact.
std::unique_ptr<MeshArrays> boxArrays(const btVector3& h) {
    auto m = std::make_unique<MeshArrays>();
    for (int c = 0; c < 8; ++c) {
        m->vertices.insert(m->vertices.end(), {c & 1 ? h.x() : -h.x(), c & 2 ? h.y() : -h.y(), c & 4 ? h.z() : -h.z()});
    }
    const int faces[6][4] = {{0, 2, 6, 4}, {1, 5, 7, 3}, {0, 4, 5, 1}, {2, 3, 7, 6}, {0, 1, 3, 2}, {4, 6, 7, 5}};
    for (const auto& f : faces) m->indices.insert(m->indices.end(), {f[0], f[1], f[2], f[0], f[2], f[3]});
    m->wrap();
    return m;
}

/// A collision world (no dynamics, dbvt broad phase) whose mesh pairs run on a CollisionDispatcher.
struct DispatchWorld {
    /// An empty world with `config`.
    explicit DispatchWorld(const NarrowConfig& config = MeshWorld::quietConfig())
        : dispatcher(&configuration, config), world(&dispatcher, &broadphase, &configuration) {}
    btDefaultCollisionConfiguration configuration; ///< Bullet's default algorithms.
    CollisionDispatcher dispatcher;                ///< Ours.
    btDbvtBroadphase broadphase;                   ///< Bullet's.
    btCollisionWorld world;                        ///< Over the three.
};

/// The manifolds of a world's dispatcher that hold `body` (every manifold when it is null).
std::vector<btPersistentManifold*> manifoldsOf(btDispatcher& dispatcher, const btCollisionObject* body) {
    std::vector<btPersistentManifold*> out;
    for (int i = 0; i < dispatcher.getNumManifolds(); ++i) {
        btPersistentManifold* m = dispatcher.getManifoldByIndexInternal(i);
        if (body == nullptr || m->getBody0() == body || m->getBody1() == body) out.push_back(m);
    }
    return out;
}

/// The deepest (smallest) distance among the manifold points of `body` (of all, when null).
double deepestPoint(btDispatcher& dispatcher, const btCollisionObject* body) {
    double deepest = std::numeric_limits<double>::infinity();
    for (btPersistentManifold* m : manifoldsOf(dispatcher, body)) {
        for (int p = 0; p < m->getNumContacts(); ++p)
            deepest = std::min(deepest, double(m->getContactPoint(p).getDistance()));
    }
    return deepest;
}

/// A shape's triangles in the world, in double: what the oracle measures against.
std::vector<std::array<Vec3d, 3>> worldTriangles(const btCollisionObject& object) {
    const MeshShapeGeometry g = meshGeometryOf(object.getCollisionShape());
    const btTransform& t = object.getWorldTransform();
    std::vector<std::array<Vec3d, 3>> out;
    for (std::size_t i = 0; i < g.indices.size(); i += 3) {
        std::array<Vec3d, 3> tri;
        for (int c = 0; c < 3; ++c) {
            const float* p = &g.positions[3 * g.indices[i + c]];
            const btVector3 w = t * btVector3(p[0], p[1], p[2]);
            tri[c] = Vec3d{{w.x(), w.y(), w.z()}};
        }
        out.push_back(tri);
    }
    return out;
}

/// Distance from p to the nearest of `triangles` (brute force, double).
double surfaceDistance(const btVector3& p, const std::vector<std::array<Vec3d, 3>>& triangles) {
    const Vec3d q{{p.x(), p.y(), p.z()}};
    double best = std::numeric_limits<double>::infinity();
    for (const auto& t : triangles) best = std::min(best, sampling::pointTriangleDistance(q, t[0], t[1], t[2]));
    return best;
}

} // namespace

TEST_CASE("CollisionDispatcher takes mesh pairs and leaves the others to Bullet", "[mesh_dispatcher]") {
    btDefaultCollisionConfiguration configuration;
    CollisionDispatcher dispatcher(&configuration, MeshWorld::quietConfig());
    auto ground = groundGrid(4, 1);
    btBvhTriangleMeshShape bvh(ground->array.get(), true);
    btScaledBvhTriangleMeshShape scaled(&bvh, btVector3(2, 1, 2));
    auto torus = torusArrays(12, 6, 1, 0.3);
    btGImpactMeshShape gimpact(torus->array.get());
    gimpact.updateBound();
    btBoxShape box(btVector3(0.5, 0.5, 0.5));
    const auto hull = boxHull(btVector3(0.5, 0.5, 0.5));
    btSphereShape sphere(0.5);
    for (btCollisionShape* mesh : {static_cast<btCollisionShape*>(&bvh), static_cast<btCollisionShape*>(&scaled)}) {
        CHECK(takesPair(dispatcher, &box, mesh));
        CHECK(takesPair(dispatcher, mesh, &box));
        CHECK(takesPair(dispatcher, hull.get(), mesh));
        CHECK(takesPair(dispatcher, &gimpact, mesh));
        CHECK(takesPair(dispatcher, mesh, &gimpact));
        CHECK(takesPair(dispatcher, &sphere, mesh));
        CHECK(takesPair(dispatcher, mesh, &sphere));
    }
    CHECK(takesPair(dispatcher, &gimpact, &gimpact));
    CHECK(takesPair(dispatcher, &gimpact, &box));
    CHECK(takesPair(dispatcher, hull.get(), &gimpact));
    CHECK(takesPair(dispatcher, &sphere, &gimpact));
    CHECK_FALSE(takesPair(dispatcher, &sphere, &box));
    CHECK_FALSE(takesPair(dispatcher, &box, &box));
    CHECK_FALSE(takesPair(dispatcher, &bvh, &bvh));

    // An app that still registers Bullet's GImpact algorithm gets the mesh algorithm back at the
    // next dispatch (GImpact's stays the fallback for what the engine does not read).
    btGImpactCollisionAlgorithm::registerAlgorithm(&dispatcher);
    CHECK_FALSE(takesPair(dispatcher, &gimpact, &box));
    btDbvtBroadphase broadphase;
    dispatcher.dispatchAllCollisionPairs(broadphase.getOverlappingPairCache(), btDispatcherInfo(), &dispatcher);
    CHECK(takesPair(dispatcher, &gimpact, &box));
}

TEST_CASE("Mesh contacts on frozen configurations match a brute-force oracle", "[mesh_dispatcher]") {
    // A box (as a box and as a hull with margin) over a flat static mesh: touching, a small gap,
    // penetrating, tilted and sliding across a triangle edge. Every manifold point lies on both
    // surfaces (margins taken off), within the pair's contact distance, and the deepest true
    // penetration (the lowest corner against the plane y = 0) is represented.
    struct Pose {
        const char* name;
        btScalar height; ///< Of the box's centre over the plane (half extent 0.5).
        btScalar tilt;   ///< About the z axis.
        btScalar x;      ///< Offset along x (0.5 puts corners over triangle edges).
    };
    const Pose poses[] = {{"touching", 0.5f, 0, 0.25f},        {"gap", 0.505f, 0, 0.25f},
                          {"penetrating", 0.49f, 0, 0.25f},    {"tilted", 0.52f, 0.05f, 0.3f},
                          {"deep tilted", 0.45f, 0.08f, 0.5f}, {"on edges", 0.498f, 0, 0.5f}};
    for (const bool asHull : {false, true}) {
        for (const Pose& pose : poses) {
            DYNAMIC_SECTION((asHull ? "hull " : "box ") << pose.name) {
                DispatchWorld scene;
                CollisionDispatcher& dispatcher = scene.dispatcher;
                btCollisionWorld& world = scene.world;
                auto groundArrays = groundGrid(6, 1);
                btBvhTriangleMeshShape groundShape(groundArrays->array.get(), true);
                btCollisionObject ground;
                ground.setCollisionShape(&groundShape);
                btBoxShape box(btVector3(0.5, 0.5, 0.5));
                const btScalar hullMargin = 0.02f;
                auto hull = boxHull(btVector3(0.5f - hullMargin, 0.5f - hullMargin, 0.5f - hullMargin));
                hull->setMargin(hullMargin);
                btCollisionObject body;
                body.setCollisionShape(asHull ? static_cast<btCollisionShape*>(hull.get()) : &box);
                body.setWorldTransform(
                    btTransform(btQuaternion(btVector3(0, 0, 1), pose.tilt), btVector3(pose.x, pose.height, 0.1f)));
                world.addCollisionObject(&ground);
                world.addCollisionObject(&body);
                world.performDiscreteCollisionDetection();
                REQUIRE(dispatcher.getNumManifolds() == 1);
                const btPersistentManifold& m = *dispatcher.getManifoldByIndexInternal(0);
                const double margin = asHull ? hullMargin : 0.0;
                const double reach = margin + m.getContactBreakingThreshold();
                const auto bodyTriangles = worldTriangles(body);
                const auto groundTriangles = worldTriangles(ground);
                // The lowest corner of the box (margins included) against the plane y = 0.
                double lowest = std::numeric_limits<double>::infinity();
                for (const auto& t : bodyTriangles) {
                    for (const Vec3d& p : t) lowest = std::min(lowest, p[1]);
                }
                lowest -= margin;
                INFO("lowest corner " << lowest << ", points " << m.getNumContacts());
                REQUIRE(m.getNumContacts() > 0);
                REQUIRE(m.getNumContacts() <= 4);
                double deepest = std::numeric_limits<double>::infinity();
                for (int p = 0; p < m.getNumContacts(); ++p) {
                    const btManifoldPoint& point = m.getContactPoint(p);
                    const bool bodyIsA = m.getBody0() == &body;
                    const btVector3 onBody = bodyIsA ? point.getPositionWorldOnA() : point.getPositionWorldOnB();
                    const btVector3 onGround = bodyIsA ? point.getPositionWorldOnB() : point.getPositionWorldOnA();
                    const btVector3 towardsBody = bodyIsA ? point.m_normalWorldOnB : -point.m_normalWorldOnB;
                    // Margins off: the raw point on the body's triangles.
                    const btVector3 rawBody = onBody + towardsBody * btScalar(margin);
                    CHECK(surfaceDistance(rawBody, bodyTriangles) < 1e-4);
                    CHECK(surfaceDistance(onGround, groundTriangles) < 1e-4);
                    CHECK(point.getDistance() <= reach);
                    CHECK(towardsBody.y() > 0.99);
                    deepest = std::min(deepest, double(point.getDistance()));
                }
                if (lowest <= m.getContactBreakingThreshold()) CHECK(deepest == Approx(lowest).margin(1e-4));
            }
        }
    }
}

TEST_CASE("A box and a convex hull rest on a static mesh as with Bullet's algorithms", "[mesh_dispatcher]") {
    std::vector<double> rest[2];
    for (const MeshNarrowPhase narrow : {MeshNarrowPhase::Bullet, MeshNarrowPhase::BulletGpu}) {
        MeshWorld w(narrow);
        w.addStaticMesh(groundGrid(20, 1, 0, 0.2f));
        auto* box = w.keep(std::make_unique<btBoxShape>(btVector3(0.5, 0.5, 0.5)));
        auto* hull = w.keep(boxHull(btVector3(0.3f, 0.3f, 0.3f)));
        std::vector<btRigidBody*> bodies;
        for (int i = 0; i < 6; ++i) {
            bodies.push_back(w.addBody(i % 2 ? static_cast<btCollisionShape*>(hull) : box, 1,
                                       btVector3(-5 + 2 * i, 2, 0.5f * i),
                                       btQuaternion(btVector3(1, 1, 0).normalized(), 0.3f * i)));
        }
        w.step(400);
        for (btRigidBody* body : bodies) {
            CHECK(body->getLinearVelocity().length() < 0.05);
            CHECK(deepestPoint(*w.dispatcher, body) > -0.01);
            rest[narrow == MeshNarrowPhase::BulletGpu].push_back(body->getWorldTransform().getOrigin().y());
        }
    }
    // Same scene, same start: the bodies tumble differently, but each rests on the same bumpy
    // ground, so their heights agree within the bumps' variation near them.
    for (std::size_t i = 0; i < rest[0].size(); ++i) {
        INFO("body " << i << ": Bullet " << rest[0][i] << ", ours " << rest[1][i]);
        CHECK(rest[1][i] == Approx(rest[0][i]).margin(0.15));
        CHECK(rest[1][i] > 0);
    }
}

TEST_CASE("A GImpact torus rests on a static mesh at its true height", "[mesh_dispatcher]") {
    // Resting flat, the torus's centre is its tube radius plus its margin over the plane. Bullet's
    // GImpact path lets it sink (measured: 0.15 of the 0.31), which this test records, not checks.
    double height[2];
    for (const MeshNarrowPhase narrow : {MeshNarrowPhase::Bullet, MeshNarrowPhase::BulletGpu}) {
        MeshWorld w(narrow);
        w.addStaticMesh(groundGrid(20, 1));
        btGImpactMeshShape* torus = w.gimpactShape(torusArrays(24, 12, 1, 0.3f), 0.01f);
        btRigidBody* body = w.addBody(torus, 1, btVector3(4, 3, 0), btQuaternion(btVector3(1, 0, 0), 0.4f));
        w.step(300);
        height[narrow == MeshNarrowPhase::BulletGpu] = body->getWorldTransform().getOrigin().y();
        if (narrow == MeshNarrowPhase::BulletGpu) {
            CHECK(body->getLinearVelocity().length() < 0.01);
            CHECK(deepestPoint(*w.dispatcher, body) > -0.005);
        }
    }
    INFO("Bullet's GImpact: " << height[0]);
    CHECK(height[1] == Approx(0.31).margin(0.005));
}

TEST_CASE("A resting stack on a mesh keeps its manifold points and impulses", "[mesh_dispatcher]") {
    // Three GImpact boxes stacked on a static mesh, never deactivated. Ours keeps each pair's
    // points from step to step with their accumulated impulses (warm starting); Bullet's GImpact
    // algorithm throws its manifold away every step (the control).
    for (const MeshNarrowPhase narrow : {MeshNarrowPhase::Bullet, MeshNarrowPhase::BulletGpu}) {
        MeshWorld w(narrow);
        w.addStaticMesh(groundGrid(8, 1));
        std::vector<btRigidBody*> stack;
        for (int level = 0; level < 3; ++level) {
            btGImpactMeshShape* shape = w.gimpactShape(boxArrays(btVector3(0.5, 0.5, 0.5)), 0.01f);
            stack.push_back(w.addBody(shape, 1, btVector3(0.1f, 0.52f + 1.03f * level, 0.2f)));
            stack.back()->setActivationState(DISABLE_DEACTIVATION);
        }
        w.step(240);
        int oldPoints = 0, points = 0;
        for (int i = 0; i < w.dispatcher->getNumManifolds(); ++i) {
            const btPersistentManifold* m = w.dispatcher->getManifoldByIndexInternal(i);
            for (int p = 0; p < m->getNumContacts(); ++p) {
                ++points;
                const btManifoldPoint& point = m->getContactPoint(p);
                if (point.getLifeTime() > 60 && point.getAppliedImpulse() > 0) ++oldPoints;
            }
        }
        INFO((narrow == MeshNarrowPhase::Bullet ? "Bullet" : "ours")
             << ": " << oldPoints << " of " << points << " points older than 60 steps");
        if (narrow == MeshNarrowPhase::BulletGpu) {
            CHECK(oldPoints >= 9);
            CHECK(stack.back()->getWorldTransform().getOrigin().y() == Approx(2.5 + 3 * 0.02).margin(0.02));
        } else {
            CHECK(oldPoints == 0);
        }
    }
}

TEST_CASE("Shapes shared by many objects, scaled shapes, objects added and removed", "[mesh_dispatcher]") {
    MeshWorld w(MeshNarrowPhase::BulletGpu);
    // A scaled static mesh: the grid at y = 0.5 scaled by 2 in y puts the surface at 1.
    auto arrays = groundGrid(10, 1, 0.5f);
    auto* bvh = w.keep(std::make_unique<btBvhTriangleMeshShape>(arrays->array.get(), true));
    w.meshes.push_back(std::move(arrays));
    auto* scaled = w.keep(std::make_unique<btScaledBvhTriangleMeshShape>(bvh, btVector3(2, 2, 2)));
    w.addBody(scaled, 0, btVector3(0, 0, 0));
    btGImpactMeshShape* shared = w.gimpactShape(boxArrays(btVector3(0.25, 0.25, 0.25)), 0.01f);
    std::vector<btRigidBody*> bodies;
    for (int i = 0; i < 12; ++i) bodies.push_back(w.addBody(shared, 1, btVector3(-6 + i, 1.6f, (i % 3) - 1.0f)));
    w.step(120);
    auto* dispatcher = static_cast<CollisionDispatcher*>(w.dispatcher.get());
    CHECK(dispatcher->meshInstances() == 13);
    for (btRigidBody* body : bodies) CHECK(body->getWorldTransform().getOrigin().y() == Approx(1.26).margin(0.01));
    // Remove half mid-run: their pairs go, and their engine meshes go idle.
    for (int i = 0; i < 6; ++i) {
        w.world->removeRigidBody(bodies[i]);
        delete bodies[i]->getMotionState();
        delete bodies[i];
    }
    bodies.erase(bodies.begin(), bodies.begin() + 6);
    w.step(2);
    CHECK(dispatcher->meshInstances() == 7);
    // Add new ones: they reuse the idle meshes and rest as the others.
    for (int i = 0; i < 4; ++i) bodies.push_back(w.addBody(shared, 1, btVector3(-6 + i, 2, 3)));
    w.step(120);
    CHECK(dispatcher->meshInstances() == 11);
    for (btRigidBody* body : bodies) CHECK(body->getWorldTransform().getOrigin().y() == Approx(1.26).margin(0.01));
}

TEST_CASE("Compound children that are polyhedra go to the mesh algorithm", "[mesh_dispatcher]") {
    MeshWorld w(MeshNarrowPhase::BulletGpu);
    w.addStaticMesh(groundGrid(10, 1));
    auto* box = w.keep(std::make_unique<btBoxShape>(btVector3(0.5, 0.25, 0.5)));
    auto* compound = w.keep(std::make_unique<btCompoundShape>());
    compound->addChildShape(btTransform(btQuaternion::getIdentity(), btVector3(-1, 0, 0)), box);
    compound->addChildShape(btTransform(btQuaternion::getIdentity(), btVector3(1, 0, 0)), box);
    btRigidBody* body = w.addBody(compound, 1, btVector3(0.2f, 1, 0.3f));
    w.step(200);
    CHECK(body->getWorldTransform().getOrigin().y() == Approx(0.25).margin(0.005));
    CHECK(static_cast<CollisionDispatcher*>(w.dispatcher.get())->meshInstances() == 3);
}

TEST_CASE("Degenerate triangles do no harm", "[mesh_dispatcher]") {
    MeshWorld w(MeshNarrowPhase::BulletGpu);
    auto arrays = groundGrid(6, 1);
    // Collapse the triangles under the box to zero area (a line and a point).
    for (int t = 0; t < 12; ++t) arrays->indices[3 * t + 1] = arrays->indices[3 * t];
    arrays->indices[2] = arrays->indices[0];
    arrays->wrap();
    w.addStaticMesh(std::move(arrays));
    auto* box = w.keep(std::make_unique<btBoxShape>(btVector3(0.5, 0.5, 0.5)));
    btRigidBody* resting = w.addBody(box, 1, btVector3(1.5f, 1, 1.5f));
    btRigidBody* onDegenerate = w.addBody(box, 1, btVector3(-2.5f, 1, -2.5f));
    w.step(120);
    CHECK(resting->getWorldTransform().getOrigin().y() == Approx(0.5).margin(0.005));
    CHECK(std::isfinite(onDegenerate->getWorldTransform().getOrigin().y()));
}

TEST_CASE("A non-finite transform skips its pair with one log line", "[mesh_dispatcher]") {
    std::vector<std::string> lines;
    NarrowConfig config = MeshWorld::quietConfig();
    config.logSink = [&](const char* line) { lines.emplace_back(line); };
    DispatchWorld scene(config);
    CollisionDispatcher& dispatcher = scene.dispatcher;
    btCollisionWorld& world = scene.world;
    auto groundArrays = groundGrid(4, 1);
    btBvhTriangleMeshShape groundShape(groundArrays->array.get(), true);
    btCollisionObject ground, body;
    ground.setCollisionShape(&groundShape);
    btBoxShape box(btVector3(0.5, 0.5, 0.5));
    body.setCollisionShape(&box);
    body.setWorldTransform(btTransform(btQuaternion::getIdentity(), btVector3(0.2f, 0.49f, 0.1f)));
    world.addCollisionObject(&ground);
    world.addCollisionObject(&body);
    world.performDiscreteCollisionDetection();
    REQUIRE(dispatcher.meshStats().pairs == 1);
    REQUIRE(dispatcher.meshStats().points > 0);
    // The pair stays in the cache (no AABB update); the next dispatch sees a NaN transform.
    body.getWorldTransform().setOrigin(btVector3(std::numeric_limits<btScalar>::quiet_NaN(), 0, 0));
    for (int i = 0; i < 2; ++i) {
        dispatcher.dispatchAllCollisionPairs(world.getPairCache(), world.getDispatchInfo(), &dispatcher);
        CHECK(dispatcher.meshStats().skippedPairs == 1);
        CHECK(dispatcher.meshStats().pairs == 0);
    }
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find("not finite") != std::string::npos);
    world.removeCollisionObject(&body);
    world.removeCollisionObject(&ground);
}

TEST_CASE("A deforming GImpact mesh is read again after updateBound", "[mesh_dispatcher]") {
    // A GImpact box 0.7 over a floor box is stretched down by moving its vertices, then
    // postUpdate and updateBound, as Bullet asks: the engine reads the new mesh and the contact
    // with the floor appears at the depth of the stretch.
    DispatchWorld scene;
    CollisionDispatcher& dispatcher = scene.dispatcher;
    btCollisionWorld& world = scene.world;
    auto arrays = boxArrays(btVector3(0.5, 0.5, 0.5));
    btGImpactMeshShape shape(arrays->array.get());
    shape.setMargin(0);
    shape.updateBound();
    btBoxShape floorBox(btVector3(5, 0.5, 5));
    btCollisionObject mesh, floor;
    mesh.setCollisionShape(&shape);
    mesh.setWorldTransform(btTransform(btQuaternion::getIdentity(), btVector3(0, 1.7f, 0)));
    floor.setCollisionShape(&floorBox);
    floor.setWorldTransform(btTransform(btQuaternion::getIdentity(), btVector3(0, 0, 0)));
    world.addCollisionObject(&mesh);
    world.addCollisionObject(&floor);
    // The gap is 0.7: the broad phase may pair them (AABB margins), but there is no contact.
    world.performDiscreteCollisionDetection();
    const auto deepest = [&] { return deepestPoint(dispatcher, nullptr); };
    CHECK(deepest() == std::numeric_limits<double>::infinity());
    // Stretch the bottom face down by 0.75: it now dips 0.05 into the floor.
    for (std::size_t v = 0; v < arrays->vertices.size(); v += 3) {
        if (arrays->vertices[v + 1] < 0) arrays->vertices[v + 1] -= 0.75f;
    }
    shape.postUpdate();
    shape.updateBound();
    world.updateAabbs();
    world.performDiscreteCollisionDetection();
    CHECK(deepest() == Approx(-0.05).margin(1e-4));
    CHECK(dispatcher.refreshMesh(&shape));
    world.removeCollisionObject(&floor);
    world.removeCollisionObject(&mesh);
}

TEST_CASE("The mesh backend: Cuda without a GPU throws, Auto falls back with one line", "[mesh_dispatcher]") {
    const EnvironmentOverride variable("BULLETGPU_BACKEND");
    unsetenv("BULLETGPU_BACKEND");
    btDefaultCollisionConfiguration configuration;
    std::vector<std::string> lines;
    NarrowConfig config;
    config.logSink = [&](const char* line) { lines.emplace_back(line); };
    const bool gpu = probeCudaDevice(0).usable;
    if (!gpu) {
        config.backend = Backend::Cuda;
        CHECK_THROWS_AS(CollisionDispatcher(&configuration, config), std::runtime_error);
    }
    config.backend = Backend::Auto;
    const CollisionDispatcher automatic(&configuration, config);
    CHECK(automatic.backend() == (gpu ? Backend::Cuda : Backend::Cpu));
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find(gpu ? "CUDA" : "CPU") != std::string::npos);
    variable.set(" CPU ");
    lines.clear();
    const CollisionDispatcher overridden(&configuration, config);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find("asked for cpu") != std::string::npos);
    variable.set("gpu");
    CHECK_THROWS_AS(CollisionDispatcher(&configuration, config), std::runtime_error);
}

TEST_CASE("Mesh manifolds on CUDA equal the CPU's", "[mesh_dispatcher][cuda]") {
    const CudaDeviceProbe probe = probeCudaDevice(0);
    if (!probe.usable) {
        skipTestCase("mesh manifolds on CUDA: " + probe.reason);
        return;
    }
    NarrowConfig config = MeshWorld::quietConfig();
    config.backend = Backend::Cuda;
    NarrowConfig cpuConfig = MeshWorld::quietConfig();
    cpuConfig.backend = Backend::Cpu;
    MeshWorld cuda(MeshNarrowPhase::BulletGpu, config), cpu(MeshNarrowPhase::BulletGpu, cpuConfig);
    REQUIRE(static_cast<const CollisionDispatcher&>(*cuda.dispatcher).backend() == Backend::Cuda);
    for (MeshWorld* w : {&cuda, &cpu}) {
        w->addStaticMesh(groundGrid(10, 1));
        btGImpactMeshShape* torus = w->gimpactShape(torusArrays(24, 12, 1, 0.3f), 0.01f);
        w->addBody(torus, 1, btVector3(0.3f, 1, 0.1f), btQuaternion(btVector3(1, 0, 0), 0.4f));
        w->step(90);
    }
    REQUIRE(cuda.dispatcher->getNumManifolds() == cpu.dispatcher->getNumManifolds());
    for (int i = 0; i < cpu.dispatcher->getNumManifolds(); ++i) {
        const btPersistentManifold* a = cuda.dispatcher->getManifoldByIndexInternal(i);
        const btPersistentManifold* b = cpu.dispatcher->getManifoldByIndexInternal(i);
        REQUIRE(a->getNumContacts() == b->getNumContacts());
        for (int p = 0; p < a->getNumContacts(); ++p) {
            CHECK(a->getContactPoint(p).getPositionWorldOnB() == b->getContactPoint(p).getPositionWorldOnB());
            CHECK(a->getContactPoint(p).getDistance() == b->getContactPoint(p).getDistance());
        }
    }
}

TEST_CASE("processCollision outside a dispatch writes the contacts at once", "[mesh_dispatcher]") {
    btDefaultCollisionConfiguration configuration;
    CollisionDispatcher dispatcher(&configuration, MeshWorld::quietConfig());
    auto arrays = groundGrid(4, 1);
    btBvhTriangleMeshShape groundShape(arrays->array.get(), true);
    btBoxShape box(btVector3(0.5, 0.5, 0.5));
    btCollisionObject ground, body;
    ground.setCollisionShape(&groundShape);
    body.setCollisionShape(&box);
    body.setWorldTransform(btTransform(btQuaternion::getIdentity(), btVector3(0.2f, 0.49f, 0.1f)));
    const btCollisionObjectWrapper wrapBody(nullptr, &box, &body, body.getWorldTransform(), -1, -1);
    const btCollisionObjectWrapper wrapGround(nullptr, &groundShape, &ground, ground.getWorldTransform(), -1, -1);
    btCollisionAlgorithm* algorithm =
        dispatcher.findAlgorithm(&wrapBody, &wrapGround, nullptr, BT_CONTACT_POINT_ALGORITHMS);
    REQUIRE(dynamic_cast<MeshCollisionAlgorithm*>(algorithm) != nullptr);
    btManifoldResult result(&wrapBody, &wrapGround);
    algorithm->processCollision(&wrapBody, &wrapGround, btDispatcherInfo(), &result);
    const btPersistentManifold* manifold = static_cast<MeshCollisionAlgorithm*>(algorithm)->manifold();
    CHECK(manifold->getNumContacts() == 4);
    for (int p = 0; p < manifold->getNumContacts(); ++p) {
        CHECK(manifold->getContactPoint(p).getDistance() == Approx(-0.01).margin(1e-5));
        // Body0 is the box: the normal on the ground points up to it.
        CHECK(manifold->getContactPoint(p).m_normalWorldOnB.y() == Approx(1));
    }
    algorithm->~btCollisionAlgorithm();
    dispatcher.freeCollisionAlgorithm(algorithm);
    CHECK(dispatcher.meshInstances() == 0);
}

TEST_CASE("An empty mesh is read and gives no contacts", "[mesh_dispatcher]") {
    btTriangleMesh empty;
    btConvexTriangleMeshShape emptyShape(&empty, false);
    const MeshShapeGeometry g = meshGeometryOf(&emptyShape);
    CHECK(g.indices.empty());
    TriangleMeshSet set(Backend::Cpu, 1);
    MeshInstances instances(set);
    btBoxShape box(btVector3(0.5, 0.5, 0.5));
    btCollisionObject a, b;
    const std::uint32_t meshA = instances.acquire(MeshInstanceKey{&a, &emptyShape, -1, -1});
    const std::uint32_t meshB = instances.acquire(MeshInstanceKey{&b, &box, -1, -1});
    CHECK(instances.place(meshA, btTransform::getIdentity()));
    CHECK(instances.place(meshB, btTransform::getIdentity()));
    std::vector<ProximityContact> contacts;
    const MeshPairQuery query{meshA, meshB};
    ProximityOptions options;
    options.distance = 0.1;
    set.findProximity(&query, 1, options, contacts);
    CHECK(contacts.empty());
    instances.release(meshA);
    instances.release(meshB);
    CHECK(instances.liveCount() == 0);
}

TEST_CASE("With fronts, each mesh pair keeps a front while it lives and frees it after", "[mesh_dispatcher]") {
    NarrowConfig config = MeshWorld::quietConfig();
    config.traversal = NarrowTraversal::Fronts;
    MeshWorld w(MeshNarrowPhase::BulletGpu, config);
    w.addStaticMesh(groundGrid(8, 1));
    btGImpactMeshShape* torus = w.gimpactShape(torusArrays(24, 12, 1, 0.3f), 0.01f);
    btRigidBody* body = w.addBody(torus, 1, btVector3(0.3f, 1, 0.1f), btQuaternion(btVector3(1, 0, 0), 0.4f));
    w.step(120);
    const auto& dispatcher = static_cast<const CollisionDispatcher&>(*w.dispatcher);
    const TriangleMeshSetImpl& engine = detail::implOf(dispatcher.engine());
    // The ground is mesh 0, the torus mesh 1 (their pair's first dispatch made them in that order).
    const bool kept = engine.proximityFront(0, 1) != nullptr || engine.proximityFront(1, 0) != nullptr;
    CHECK(kept);
    CHECK(body->getWorldTransform().getOrigin().y() == Approx(0.31).margin(0.005));
    w.world->removeRigidBody(body);
    CHECK(engine.proximityFront(0, 1) == nullptr);
    CHECK(engine.proximityFront(1, 0) == nullptr);
    w.world->addRigidBody(body);
}

namespace {

/// What gContactAddedCallback saw: the (part, index) identifiers of the static mesh's side.
std::vector<std::pair<int, int>> gMeshSides;

/// Records the identifiers of the side that is not the box (whose wrapper carries them as given).
bool recordContact(btManifoldPoint&, const btCollisionObjectWrapper* wrap0, int part0, int index0,
                   const btCollisionObjectWrapper* wrap1, int part1, int index1) {
    const bool meshIs0 = wrap0->getCollisionShape()->getShapeType() == TRIANGLE_MESH_SHAPE_PROXYTYPE;
    (void)wrap1;
    gMeshSides.emplace_back(meshIs0 ? part0 : part1, meshIs0 ? index0 : index1);
    return false;
}

} // namespace

TEST_CASE("gContactAddedCallback sees the mesh triangle under each point", "[mesh_dispatcher]") {
    // A box over the 4x4 grid at (0.3, 0.1), cells of 1: the triangles under it are those of the
    // four cells around the origin (two per cell, index = 2 * (4 i + j) + k in part 0).
    DispatchWorld scene;
    btCollisionWorld& world = scene.world;
    auto arrays = groundGrid(4, 1);
    btBvhTriangleMeshShape groundShape(arrays->array.get(), true);
    btBoxShape box(btVector3(0.4f, 0.4f, 0.4f));
    btCollisionObject ground, body;
    ground.setCollisionShape(&groundShape);
    body.setCollisionShape(&box);
    body.setCollisionFlags(body.getCollisionFlags() | btCollisionObject::CF_CUSTOM_MATERIAL_CALLBACK);
    body.setWorldTransform(btTransform(btQuaternion::getIdentity(), btVector3(0.3f, 0.39f, 0.1f)));
    world.addCollisionObject(&ground);
    world.addCollisionObject(&body);
    const ContactAddedCallback saved = gContactAddedCallback;
    gContactAddedCallback = recordContact;
    gMeshSides.clear();
    world.performDiscreteCollisionDetection();
    gContactAddedCallback = saved;
    REQUIRE(gMeshSides.size() == 4);
    for (const auto& [part, index] : gMeshSides) {
        CHECK(part == 0);
        const int cell = index / 2, i = cell / 4, j = cell % 4;
        CHECK((i == 1 || i == 2));
        CHECK((j == 1 || j == 2));
    }
    world.removeCollisionObject(&body);
    world.removeCollisionObject(&ground);
}

TEST_CASE("A sphere rests and rolls on a static mesh without bumps at triangle edges", "[mesh_dispatcher]") {
    // A sphere of radius 0.4 on a flat grid of unit cells (its centre's closest points move
    // across triangle edges and vertices as it rolls): it rests at its radius and, pushed at 3 m/s,
    // rolls with its centre within 5e-3 of that height, over a range no wider than on Bullet's
    // algorithms (measured, float Bullet: ours 0.3985 to 0.4020, Bullet's 0.3949 to 0.4046;
    // double Bullet: ours 0.3955 to 0.4020, a range of 0.0066 against Bullet's 0.0078).
    double range[2];
    for (const MeshNarrowPhase narrow : {MeshNarrowPhase::Bullet, MeshNarrowPhase::BulletGpu}) {
        MeshWorld w(narrow);
        w.addStaticMesh(groundGrid(20, 1));
        auto* sphere = w.keep(std::make_unique<btSphereShape>(0.4f));
        btRigidBody* ball = w.addBody(sphere, 1, btVector3(0.3f, 0.6f, 0.2f));
        ball->setActivationState(DISABLE_DEACTIVATION);
        w.step(90);
        INFO((narrow == MeshNarrowPhase::Bullet ? "Bullet" : "ours"));
        CHECK(ball->getWorldTransform().getOrigin().y() == Approx(0.4).margin(1e-3));
        ball->setLinearVelocity(btVector3(3, 0, 1));
        double lowest = 1, highest = 0;
        for (int step = 0; step < 120; ++step) {
            w.step(1);
            const double y = ball->getWorldTransform().getOrigin().y();
            lowest = std::min(lowest, y);
            highest = std::max(highest, y);
        }
        CHECK(ball->getWorldTransform().getOrigin().x() > 3);
        range[narrow == MeshNarrowPhase::BulletGpu] = highest - lowest;
        if (narrow == MeshNarrowPhase::BulletGpu) {
            CHECK(lowest > 0.395);
            CHECK(highest < 0.405);
            CHECK(static_cast<const CollisionDispatcher&>(*w.dispatcher).meshStats().pairs == 1);
        }
    }
    CHECK(range[1] <= range[0]);
}

TEST_CASE("A sphere rests on a GImpact mesh at its true height", "[mesh_dispatcher]") {
    MeshWorld w(MeshNarrowPhase::BulletGpu);
    auto* floor = w.keep(std::make_unique<btBoxShape>(btVector3(5, 0.5f, 5)));
    w.addBody(floor, 0, btVector3(0, -0.5f, 0));
    btGImpactMeshShape* box = w.gimpactShape(boxArrays(btVector3(1, 0.25f, 1)), 0.01f);
    w.addBody(box, 0, btVector3(0, 0.25f, 0));
    auto* sphere = w.keep(std::make_unique<btSphereShape>(0.3f));
    btRigidBody* ball = w.addBody(sphere, 1, btVector3(0.2f, 1.2f, -0.1f));
    w.step(120);
    // The static GImpact box's top is at 0.5, plus its margin 0.01, plus the radius.
    CHECK(ball->getWorldTransform().getOrigin().y() == Approx(0.81).margin(2e-3));
}

TEST_CASE("Many spheres over two static meshes: one query per mesh, each sphere its own contacts", "[mesh_dispatcher]") {
    // 40 spheres of radii 0.1 to 0.49 over two flat grids side by side (x < 0 and x > 0, one
    // sphere row over their seam), each at its own gap from the plane y = 0: penetrating,
    // touching, within the manifold's breaking threshold or beyond it. The spheres of a mesh share one
    // points query at the largest of their reaches; each manifold must still hold exactly the
    // sphere's own contacts: points on the sphere and on the ground, at the sphere's gap, and
    // none beyond the threshold.
    DispatchWorld scene;
    btCollisionWorld& world = scene.world;
    auto gridArrays = groundGrid(6, 1);
    btBvhTriangleMeshShape gridShape(gridArrays->array.get(), true);
    btCollisionObject grounds[2];
    for (int g = 0; g < 2; ++g) {
        grounds[g].setCollisionShape(&gridShape);
        grounds[g].setWorldTransform(btTransform(btQuaternion::getIdentity(), btVector3(g == 0 ? -3 : 3, 0, 0)));
        world.addCollisionObject(&grounds[g]);
    }
    const btScalar gaps[] = {-0.01f, 0.0f, 0.004f, 0.015f, 0.05f};
    std::vector<std::unique_ptr<btSphereShape>> shapes;
    std::vector<std::unique_ptr<btCollisionObject>> spheres;
    std::vector<btScalar> gapOf;
    for (int i = 0; i < 40; ++i) {
        const btScalar radius = 0.1f + 0.01f * i;
        const btScalar gap = gaps[i % 5];
        shapes.push_back(std::make_unique<btSphereShape>(radius));
        spheres.push_back(std::make_unique<btCollisionObject>());
        btCollisionObject& sphere = *spheres.back();
        sphere.setCollisionShape(shapes.back().get());
        // Rows of 8 along z, columns along x from -4.5 to 4.5 (the middle column over the seam).
        const btScalar x = -4.5f + 1.125f * btScalar(i / 5), z = -2.0f + 1.0f * btScalar(i % 5) + 0.013f * i;
        sphere.setWorldTransform(btTransform(btQuaternion::getIdentity(), btVector3(x, radius + gap, z)));
        world.addCollisionObject(&sphere);
        gapOf.push_back(gap);
    }
    world.performDiscreteCollisionDetection();
    const auto groundA = worldTriangles(grounds[0]), groundB = worldTriangles(grounds[1]);
    int touching = 0;
    for (std::size_t i = 0; i < spheres.size(); ++i) {
        const btCollisionObject& sphere = *spheres[i];
        const btScalar radius = shapes[i]->getRadius();
        const btVector3 centre = sphere.getWorldTransform().getOrigin();
        int points = 0;
        double deepest = std::numeric_limits<double>::infinity();
        // Bullet's dispatcher scales the breaking threshold with the shapes' size.
        double threshold = std::numeric_limits<double>::infinity();
        for (btPersistentManifold* m : manifoldsOf(scene.dispatcher, &sphere)) {
            threshold = std::min(threshold, double(m->getContactBreakingThreshold()));
            const bool sphereIsA = m->getBody0() == &sphere;
            const btCollisionObject* ground = sphereIsA ? m->getBody1() : m->getBody0();
            const auto& triangles = ground == &grounds[0] ? groundA : groundB;
            for (int p = 0; p < m->getNumContacts(); ++p) {
                const btManifoldPoint& point = m->getContactPoint(p);
                const btVector3 onSphere = sphereIsA ? point.getPositionWorldOnA() : point.getPositionWorldOnB();
                const btVector3 onGround = sphereIsA ? point.getPositionWorldOnB() : point.getPositionWorldOnA();
                INFO("sphere " << i << " point " << p);
                CHECK((onSphere - centre).length() == Approx(radius).margin(1e-4));
                CHECK(surfaceDistance(onGround, triangles) < 1e-4);
                CHECK(point.getDistance() <= m->getContactBreakingThreshold() + 1e-6);
                deepest = std::min(deepest, double(point.getDistance()));
                ++points;
            }
        }
        INFO("sphere " << i << " gap " << gapOf[i] << ", threshold " << threshold << ", " << points << " points");
        if (gapOf[i] <= threshold) {
            CHECK(points > 0);
            CHECK(deepest == Approx(gapOf[i]).margin(1e-4));
            ++touching;
        } else {
            CHECK(points == 0);
        }
    }
    CHECK(touching >= 24);
    CHECK(touching < 40);
    CHECK(scene.dispatcher.meshStats().pairs >= static_cast<std::uint32_t>(touching));
}
