// SPDX-License-Identifier: Zlib
// Whole Bullet worlds on bulletgpu::PairCache, each run in lockstep with the same world on
// Bullet's own cache: boxes tumbling onto a plane through a ghost object (with and without a
// kinematic character walking into them), BenchmarkDemo's 3000 boxes, and a cloth and a rope
// falling on boxes. On the same broadphase the pair array, the ghost events and every body's
// place are identical each step; on bulletgpu::Broadphase the cache holds exactly the
// overlapping boxes and the pile settles as it does on btDbvtBroadphase.
#include "bench/benchmark_demo_scene.h"
#include "support/soft_world.h"

#include <bulletgpu/Broadphase.h>
#include <bulletgpu/PairCache.h>

#include <BulletCollision/CollisionDispatch/btGhostObject.h>
#include <BulletDynamics/Character/btKinematicCharacterController.h>
#include <BulletSoftBody/btSoftBodyHelpers.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#include <btBulletDynamicsCommon.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <tuple>
#include <vector>

namespace {

/// The world indices of a pair's objects (in the pair's order) and whether it has an algorithm.
using PairEntry = std::tuple<int, int, bool>;

/// A ghost event: added or removed, and the world indices of the pair's objects, lower first.
using GhostEvent = std::tuple<bool, int, int>;

/// World index of a proxy's collision object.
int indexOf(const btBroadphaseProxy* proxy) {
    return static_cast<const btCollisionObject*>(proxy->m_clientObject)->getWorldArrayIndex();
}

/// Bullet's ghost callback, recording every event it forwards to the ghost objects.
class RecordingGhostCallback final : public btGhostPairCallback {
public:
    btBroadphasePair* addOverlappingPair(btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1) override {
        events.emplace_back(true, std::min(indexOf(proxy0), indexOf(proxy1)),
                            std::max(indexOf(proxy0), indexOf(proxy1)));
        return btGhostPairCallback::addOverlappingPair(proxy0, proxy1);
    }
    void* removeOverlappingPair(btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1,
                                btDispatcher* dispatcher) override {
        events.emplace_back(false, std::min(indexOf(proxy0), indexOf(proxy1)),
                            std::max(indexOf(proxy0), indexOf(proxy1)));
        return btGhostPairCallback::removeOverlappingPair(proxy0, proxy1, dispatcher);
    }

    std::vector<GhostEvent> events; ///< Events since the last clear, in order.
};

/// The broadphase and cache a scene runs on.
enum class Setup {
    DbvtBulletCache,  ///< btDbvtBroadphase with a btHashedOverlappingPairCache.
    DbvtPairCache,    ///< btDbvtBroadphase with a bulletgpu::PairCache.
    GpuBulletCache,   ///< bulletgpu::Broadphase (CPU backend) given a btHashedOverlappingPairCache.
    GpuMadePairCache, ///< bulletgpu::Broadphase (CPU backend) making a PairCache (flatPairCache; absorb).
    GpuMadeHashed,    ///< bulletgpu::Broadphase (CPU backend) making Bullet's hashed cache (flatPairCache false).
    GpuDefaultCache,  ///< bulletgpu::Broadphase (CPU backend) making its default cache.
    GpuPairCache,     ///< bulletgpu::Broadphase (CPU backend) given a bulletgpu::PairCache.
};

/// 400 randomly turned boxes in a loose column over a static plane, and a ghost box they fall
/// through on the way down; optionally a kinematic character that walks into the pile.
class TumblingBoxes {
public:
    explicit TumblingBoxes(Setup setup, bool withCharacter = false)
        : m_dispatcher(&m_configuration), m_plane(btVector3(0, 1, 0), 0), m_box(btVector3(0.5, 0.5, 0.5)),
          m_ghostShape(btVector3(3, 1, 3)), m_capsule(btScalar(0.4), 1) {
        if (setup == Setup::DbvtBulletCache || setup == Setup::GpuBulletCache)
            m_cache = std::make_unique<btHashedOverlappingPairCache>();
        if (setup == Setup::DbvtPairCache || setup == Setup::GpuPairCache) {
            m_cache = std::make_unique<bulletgpu::PairCache>();
        }
        if (setup == Setup::DbvtBulletCache || setup == Setup::DbvtPairCache) {
            m_broadphase = std::make_unique<btDbvtBroadphase>(m_cache.get());
        } else {
            bulletgpu::BroadphaseConfig config;
            config.backend = bulletgpu::Backend::Cpu;
            config.logBackendChoice = false;
            config.pairCache = m_cache.get();
            if (setup == Setup::GpuMadePairCache) config.flatPairCache = true;
            if (setup == Setup::GpuMadeHashed) config.flatPairCache = false;
            m_broadphase = std::make_unique<bulletgpu::Broadphase>(config);
        }
        m_world =
            std::make_unique<btDiscreteDynamicsWorld>(&m_dispatcher, m_broadphase.get(), &m_solver, &m_configuration);
        m_world->setGravity(btVector3(0, -10, 0));
        m_world->getPairCache()->setInternalGhostPairCallback(&m_ghostCallback);

        m_ground = std::make_unique<btRigidBody>(btRigidBody::btRigidBodyConstructionInfo(0, nullptr, &m_plane));
        m_world->addRigidBody(m_ground.get());
        std::mt19937 random(17);
        std::uniform_real_distribution<float> jitter(-0.3f, 0.3f), angle(0, 3.14f);
        btVector3 inertia;
        m_box.calculateLocalInertia(1, inertia);
        for (int i = 0; i < 400; ++i) {
            btTransform start;
            start.setIdentity();
            start.setOrigin(btVector3(btScalar(1.2 * (i % 8) - 4.2) + jitter(random), btScalar(3 + 1.3 * (i / 64)),
                                      btScalar(1.2 * ((i / 8) % 8) - 4.2) + jitter(random)));
            start.setRotation(btQuaternion(angle(random), angle(random), angle(random)));
            btRigidBody::btRigidBodyConstructionInfo info(1, nullptr, &m_box, inertia);
            info.m_startWorldTransform = start;
            m_bodies.push_back(std::make_unique<btRigidBody>(info));
            m_world->addRigidBody(m_bodies.back().get());
        }
        btTransform ghostPlace;
        ghostPlace.setIdentity();
        ghostPlace.setOrigin(btVector3(0, 1.5, 0));
        m_ghost.setWorldTransform(ghostPlace);
        m_ghost.setCollisionShape(&m_ghostShape);
        m_ghost.setCollisionFlags(btCollisionObject::CF_NO_CONTACT_RESPONSE);
        m_world->addCollisionObject(&m_ghost, btBroadphaseProxy::SensorTrigger,
                                    btBroadphaseProxy::AllFilter ^ btBroadphaseProxy::SensorTrigger);
        if (withCharacter) addCharacter();
    }

    ~TumblingBoxes() {
        if (m_character) {
            m_world->removeAction(m_character.get());
            m_world->removeCollisionObject(&m_characterGhost);
        }
        m_world->removeCollisionObject(&m_ghost);
        for (const auto& body : m_bodies) m_world->removeRigidBody(body.get());
        m_world->removeRigidBody(m_ground.get());
        m_world->getPairCache()->setInternalGhostPairCallback(nullptr);
    }

    TumblingBoxes(const TumblingBoxes&) = delete;
    TumblingBoxes& operator=(const TumblingBoxes&) = delete;

    /// Advances one 1/60 s step.
    void step() { m_world->stepSimulation(btScalar(1) / btScalar(60), 0); }

    /// The world's pair array in its order.
    std::vector<PairEntry> pairArray() const {
        const btBroadphasePairArray& pairs = m_world->getPairCache()->getOverlappingPairArray();
        std::vector<PairEntry> entries;
        for (int i = 0; i < pairs.size(); ++i) {
            entries.emplace_back(indexOf(pairs[i].m_pProxy0), indexOf(pairs[i].m_pProxy1),
                                 pairs[i].m_algorithm != nullptr);
        }
        return entries;
    }

    /// The world's pairs as sorted (lower index, higher index) keys.
    std::vector<std::pair<int, int>> pairSet() const {
        std::vector<std::pair<int, int>> keys;
        for (const auto& [a, b, algorithm] : pairArray()) keys.emplace_back(std::min(a, b), std::max(a, b));
        std::sort(keys.begin(), keys.end());
        return keys;
    }

    /// Every box pair, box-ghost and box-ground pair whose broadphase boxes overlap.
    std::vector<std::pair<int, int>> exactOverlaps() const {
        const btCollisionObjectArray& objects = m_world->getCollisionObjectArray();
        std::vector<std::pair<int, int>> overlaps;
        for (int i = 0; i < objects.size(); ++i) {
            for (int j = i + 1; j < objects.size(); ++j) {
                const btBroadphaseProxy* a = objects[i]->getBroadphaseHandle();
                const btBroadphaseProxy* b = objects[j]->getBroadphaseHandle();
                if ((a->m_collisionFilterGroup & b->m_collisionFilterMask) == 0 ||
                    (b->m_collisionFilterGroup & a->m_collisionFilterMask) == 0) {
                    continue;
                }
                btVector3 loA, hiA, loB, hiB;
                m_broadphase->getAabb(objects[i]->getBroadphaseHandle(), loA, hiA);
                m_broadphase->getAabb(objects[j]->getBroadphaseHandle(), loB, hiB);
                bool overlap = true;
                for (int axis = 0; axis < 3; ++axis)
                    overlap = overlap && loA[axis] <= hiB[axis] && loB[axis] <= hiA[axis];
                if (overlap) overlaps.emplace_back(i, j);
            }
        }
        return overlaps;
    }

    /// The objects the sensor ghost holds, as world indices, sorted.
    std::vector<int> ghostOverlaps() { return overlapsOf(m_ghost); }

    /// The objects paired with the sensor ghost in the world's cache, sorted.
    std::vector<int> ghostPartnersInCache() const { return partnersInCache(m_ghost); }

    /// Whether the scene has a character.
    bool hasCharacter() const { return m_character != nullptr; }

    /// The objects the character's ghost holds, as world indices, sorted.
    std::vector<int> characterOverlaps() { return overlapsOf(m_characterGhost); }

    /// The objects paired with the character's ghost in the world's cache, sorted.
    std::vector<int> characterPartnersInCache() const { return partnersInCache(m_characterGhost); }

    /// Where the character's capsule is.
    btVector3 characterPosition() const { return m_characterGhost.getWorldTransform().getOrigin(); }

    /// Takes the ghost events recorded since the last call.
    std::vector<GhostEvent> takeGhostEvents() { return std::move(m_ghostCallback.events); }

    /// The boxes.
    const std::vector<std::unique_ptr<btRigidBody>>& bodies() const { return m_bodies; }

private:
    /// A capsule character left of the pile, walking 0.06 per step towards its middle.
    void addCharacter() {
        btTransform start;
        start.setIdentity();
        start.setOrigin(btVector3(-9, 1.5, 0.3));
        m_characterGhost.setWorldTransform(start);
        m_characterGhost.setCollisionShape(&m_capsule);
        m_characterGhost.setCollisionFlags(btCollisionObject::CF_CHARACTER_OBJECT);
        m_character = std::make_unique<btKinematicCharacterController>(&m_characterGhost, &m_capsule, btScalar(0.35),
                                                                       btVector3(0, 1, 0));
        m_world->addCollisionObject(&m_characterGhost, btBroadphaseProxy::CharacterFilter,
                                    btBroadphaseProxy::StaticFilter | btBroadphaseProxy::DefaultFilter);
        m_world->addAction(m_character.get());
        m_character->setWalkDirection(btVector3(btScalar(0.06), 0, 0));
    }

    /// The objects a ghost holds, as world indices, sorted.
    static std::vector<int> overlapsOf(btPairCachingGhostObject& ghost) {
        std::vector<int> overlaps;
        for (int i = 0; i < ghost.getNumOverlappingObjects(); ++i) {
            overlaps.push_back(ghost.getOverlappingObject(i)->getWorldArrayIndex());
        }
        std::sort(overlaps.begin(), overlaps.end());
        return overlaps;
    }

    /// The objects paired with an object in the world's cache, sorted.
    std::vector<int> partnersInCache(const btCollisionObject& object) const {
        std::vector<int> partners;
        const int index = object.getWorldArrayIndex();
        for (const auto& [a, b] : pairSet()) {
            if (a == index) partners.push_back(b);
            if (b == index) partners.push_back(a);
        }
        std::sort(partners.begin(), partners.end());
        return partners;
    }

    btDefaultCollisionConfiguration m_configuration;
    btCollisionDispatcher m_dispatcher;
    std::unique_ptr<btOverlappingPairCache> m_cache;
    std::unique_ptr<btBroadphaseInterface> m_broadphase;
    btSequentialImpulseConstraintSolver m_solver;
    RecordingGhostCallback m_ghostCallback;
    btStaticPlaneShape m_plane;
    btBoxShape m_box;
    btBoxShape m_ghostShape;
    std::unique_ptr<btRigidBody> m_ground;
    std::vector<std::unique_ptr<btRigidBody>> m_bodies;
    btPairCachingGhostObject m_ghost;
    btCapsuleShape m_capsule;
    btPairCachingGhostObject m_characterGhost;
    std::unique_ptr<btDiscreteDynamicsWorld> m_world;
    std::unique_ptr<btKinematicCharacterController> m_character;
};

constexpr int cSteps = 240;

/// Whether every box of both scenes has bitwise the same transform and velocity.
bool sameBodies(const TumblingBoxes& a, const TumblingBoxes& b) {
    for (std::size_t i = 0; i < a.bodies().size(); ++i) {
        const btRigidBody& x = *a.bodies()[i];
        const btRigidBody& y = *b.bodies()[i];
        if (!(x.getWorldTransform().getOrigin() == y.getWorldTransform().getOrigin()) ||
            !(x.getWorldTransform().getBasis() == y.getWorldTransform().getBasis()) ||
            !(x.getLinearVelocity() == y.getLinearVelocity())) {
            return false;
        }
    }
    return true;
}

/// Runs two setups in lockstep and requires the same pair array, ghost events, ghost lists
/// and bodies (and character) after every step; returns how many ghost events and pairs were seen.
std::pair<std::size_t, std::size_t> requireLockstep(Setup oracleSetup, Setup testedSetup, bool withCharacter = false) {
    TumblingBoxes oracle(oracleSetup, withCharacter), tested(testedSetup, withCharacter);
    REQUIRE(tested.pairArray() == oracle.pairArray());
    REQUIRE(tested.takeGhostEvents() == oracle.takeGhostEvents());
    std::size_t events = 0, peakPairs = 0;
    for (int step = 1; step <= cSteps; ++step) {
        CAPTURE(step);
        oracle.step();
        tested.step();
        const std::vector<PairEntry> pairs = tested.pairArray();
        REQUIRE(pairs == oracle.pairArray());
        const std::vector<GhostEvent> testedEvents = tested.takeGhostEvents();
        REQUIRE(testedEvents == oracle.takeGhostEvents());
        REQUIRE(tested.ghostOverlaps() == oracle.ghostOverlaps());
        REQUIRE(tested.ghostOverlaps() == tested.ghostPartnersInCache());
        REQUIRE(sameBodies(oracle, tested));
        if (withCharacter) {
            REQUIRE(tested.characterOverlaps() == oracle.characterOverlaps());
            REQUIRE(tested.characterOverlaps() == tested.characterPartnersInCache());
            REQUIRE(tested.characterPosition() == oracle.characterPosition());
        }
        events += testedEvents.size();
        peakPairs = std::max(peakPairs, pairs.size());
    }
    return {events, peakPairs};
}

/// A BulletGpu broadphase on the CPU backend that fills the given cache, or makes a PairCache
/// when none is given.
std::unique_ptr<btBroadphaseInterface> makeBulletGpu(btOverlappingPairCache* cache) {
    bulletgpu::BroadphaseConfig config;
    config.backend = bulletgpu::Backend::Cpu;
    config.logBackendChoice = false;
    config.pairCache = cache;
    config.flatPairCache = true;
    return std::make_unique<bulletgpu::Broadphase>(config);
}

/// A world's pair array, as world indices and whether each pair has an algorithm.
std::vector<PairEntry> pairArrayOf(btCollisionWorld& world) {
    const btBroadphasePairArray& pairs = world.getPairCache()->getOverlappingPairArray();
    std::vector<PairEntry> entries;
    for (int i = 0; i < pairs.size(); ++i) {
        entries.emplace_back(indexOf(pairs[i].m_pProxy0), indexOf(pairs[i].m_pProxy1), pairs[i].m_algorithm != nullptr);
    }
    return entries;
}

/// A cloth patch and a rope falling onto a static box and a few dynamic boxes, as SoftDemo
/// steps them.
class SoftScene {
public:
    explicit SoftScene(std::unique_ptr<btBroadphaseInterface> broadphase)
        : m_dispatcher(&m_configuration), m_broadphase(std::move(broadphase)), m_tableShape(btVector3(5, 1, 5)),
          m_boxShape(btVector3(btScalar(0.4), btScalar(0.4), btScalar(0.4))),
          m_world(&m_dispatcher, m_broadphase.get(), &m_solver, &m_configuration) {
        bulletgpu::test::setUpSoftWorld(m_world, m_broadphase.get(), &m_dispatcher, btVector3(0, -10, 0));
        btSoftBodyWorldInfo& info = m_world.getWorldInfo();
        btRigidBody::btRigidBodyConstructionInfo tableInfo(0, nullptr, &m_tableShape);
        tableInfo.m_startWorldTransform.setOrigin(btVector3(0, -1, 0));
        m_bodies.push_back(std::make_unique<btRigidBody>(tableInfo));
        m_world.addRigidBody(m_bodies.back().get());
        btVector3 inertia;
        m_boxShape.calculateLocalInertia(1, inertia);
        for (int i = 0; i < 6; ++i) {
            btRigidBody::btRigidBodyConstructionInfo boxInfo(1, nullptr, &m_boxShape, inertia);
            boxInfo.m_startWorldTransform.setOrigin(btVector3(btScalar(-3 + 1.2 * i), btScalar(1 + 0.5 * (i % 2)), 0));
            m_bodies.push_back(std::make_unique<btRigidBody>(boxInfo));
            m_world.addRigidBody(m_bodies.back().get());
        }
        m_cloth.reset(btSoftBodyHelpers::CreatePatch(info, btVector3(-4, 3, -4), btVector3(4, 3, -4),
                                                     btVector3(-4, 3, 4), btVector3(4, 3, 4), 15, 15, 0, true));
        m_cloth->setTotalMass(2);
        m_world.addSoftBody(m_cloth.get());
        m_rope.reset(btSoftBodyHelpers::CreateRope(info, btVector3(-3, 5, 1), btVector3(3, 5, -1), 14, 0));
        m_rope->setTotalMass(1);
        m_world.addSoftBody(m_rope.get());
    }

    ~SoftScene() {
        m_world.removeSoftBody(m_rope.get());
        m_world.removeSoftBody(m_cloth.get());
        for (const auto& body : m_bodies) m_world.removeRigidBody(body.get());
    }

    SoftScene(const SoftScene&) = delete;
    SoftScene& operator=(const SoftScene&) = delete;

    /// Advances by 1/60, then frees unused distance-field cells, as SoftDemo does.
    void step() {
        m_world.stepSimulation(btScalar(1) / btScalar(60));
        m_world.getWorldInfo().m_sparsesdf.GarbageCollect();
    }

    /// The world.
    btSoftRigidDynamicsWorld& world() { return m_world; }

    /// Whether both scenes' nodes and rigid bodies are bitwise at the same places.
    bool samePlaces(const SoftScene& other) const {
        for (const auto* bodies : {&m_cloth, &m_rope}) {
            const btSoftBody& mine = **bodies;
            const btSoftBody& theirs = bodies == &m_cloth ? *other.m_cloth : *other.m_rope;
            for (int i = 0; i < mine.m_nodes.size(); ++i) {
                if (!(mine.m_nodes[i].m_x == theirs.m_nodes[i].m_x)) return false;
            }
        }
        for (std::size_t i = 0; i < m_bodies.size(); ++i) {
            if (!(m_bodies[i]->getWorldTransform().getOrigin() == other.m_bodies[i]->getWorldTransform().getOrigin())) {
                return false;
            }
        }
        return true;
    }

private:
    btSoftBodyRigidBodyCollisionConfiguration m_configuration;
    btCollisionDispatcher m_dispatcher;
    std::unique_ptr<btBroadphaseInterface> m_broadphase;
    btSequentialImpulseConstraintSolver m_solver;
    btBoxShape m_tableShape;
    btBoxShape m_boxShape;
    std::vector<std::unique_ptr<btRigidBody>> m_bodies;
    std::unique_ptr<btSoftBody> m_cloth;
    std::unique_ptr<btSoftBody> m_rope;
    btSoftRigidDynamicsWorld m_world;
};

/// Mean and lowest centre height of the boxes.
std::pair<double, double> heights(const TumblingBoxes& scene) {
    double mean = 0, lowest = 1e9;
    for (const auto& body : scene.bodies()) {
        const double y = body->getWorldTransform().getOrigin().y();
        mean += y;
        lowest = std::min(lowest, y);
    }
    return {mean / static_cast<double>(scene.bodies().size()), lowest};
}

} // namespace

TEST_CASE("PairCache world: on btDbvtBroadphase it gives Bullet's cache's pairs, ghost events and result",
          "[pair_cache][world]") {
    const auto [events, peakPairs] = requireLockstep(Setup::DbvtBulletCache, Setup::DbvtPairCache);
    CHECK(events > 400); // every box passes through the ghost: added, later removed
    CHECK(peakPairs > 1000);
}

TEST_CASE("PairCache world: on bulletgpu::Broadphase it gives Bullet's cache's pairs, ghost events and result",
          "[pair_cache][world]") {
    // A PairCache the broadphase makes (changed through absorb), one given to it (changed pair
    // by pair), the hashed cache it makes on request and the default cache, each against a
    // btHashedOverlappingPairCache given.
    const Setup tested =
        GENERATE(Setup::GpuMadePairCache, Setup::GpuPairCache, Setup::GpuMadeHashed, Setup::GpuDefaultCache);
    CAPTURE(static_cast<int>(tested));
    const auto [events, peakPairs] = requireLockstep(Setup::GpuBulletCache, tested);
    CHECK(events > 400);
    CHECK(peakPairs > 1000);
}

TEST_CASE("PairCache world: on bulletgpu::Broadphase it stays exact and the pile settles as on dbvt",
          "[pair_cache][world]") {
    TumblingBoxes tested(Setup::GpuMadePairCache), dbvt(Setup::DbvtBulletCache);
    for (int step = 1; step <= cSteps; ++step) {
        CAPTURE(step);
        tested.step();
        dbvt.step();
        if (step % 20 == 0) REQUIRE(tested.pairSet() == tested.exactOverlaps());
        REQUIRE(tested.ghostOverlaps() == tested.ghostPartnersInCache());
    }
    // Dbvt holds fattened-leaf pairs too, so the pair sets and the pile's details differ; the
    // pile must still settle on the plane (box centres 0.5 above it, less the contact slop) at
    // about the same mean height (measured: 1.55 against 1.43).
    const auto [testedMean, testedLowest] = heights(tested);
    const auto [dbvtMean, dbvtLowest] = heights(dbvt);
    CAPTURE(testedMean, testedLowest, dbvtMean, dbvtLowest);
    CHECK(testedLowest > 0.35);
    CHECK(dbvtLowest > 0.35);
    CHECK(std::abs(testedMean - dbvtMean) < 0.25);
}

TEST_CASE("PairCache world: a character walking into the pile moves as on Bullet's cache",
          "[pair_cache][world][character]") {
    // On dbvt against Bullet's cache, and a PairCache made by bulletgpu::Broadphase against a
    // btHashedOverlappingPairCache given to it.
    const bool onDbvt = GENERATE(true, false);
    CAPTURE(onDbvt);
    const auto [events, peakPairs] = onDbvt ? requireLockstep(Setup::DbvtBulletCache, Setup::DbvtPairCache, true)
                                            : requireLockstep(Setup::GpuBulletCache, Setup::GpuMadePairCache, true);
    CHECK(events > 400);
    CHECK(peakPairs > 1000);
    // The character reached the pile: it walked from x = -9 and met boxes (measured: it stops
    // at x = -5.6, touching boxes in 192 of the 240 steps).
    TumblingBoxes scene(Setup::GpuMadePairCache, true);
    std::size_t stepsTouching = 0;
    for (int step = 0; step < cSteps; ++step) {
        scene.step();
        // World index 0 is the plane; 1 to 400 are the boxes.
        const std::vector<int> overlaps = scene.characterOverlaps();
        stepsTouching +=
            std::any_of(overlaps.begin(), overlaps.end(), [](int index) { return index >= 1 && index <= 400; }) ? 1 : 0;
    }
    CAPTURE(scene.characterPosition().x(), stepsTouching);
    CHECK(scene.characterPosition().x() > -6);
    CHECK(stepsTouching > 10);
}

TEST_CASE("PairCache world: BenchmarkDemo's 3000 boxes run as on Bullet's cache", "[pair_cache][world]") {
    // On dbvt, and on bulletgpu::Broadphase (a PairCache it makes against a Bullet cache given).
    const bool onDbvt = GENERATE(true, false);
    CAPTURE(onDbvt);
    btHashedOverlappingPairCache oracleCache;
    bulletgpu::PairCache testedCache;
    bulletgpu::bench::BenchmarkDemo1 oracle(
        onDbvt ? std::unique_ptr<btBroadphaseInterface>(std::make_unique<btDbvtBroadphase>(&oracleCache))
               : makeBulletGpu(&oracleCache));
    bulletgpu::bench::BenchmarkDemo1 tested(
        onDbvt ? std::unique_ptr<btBroadphaseInterface>(std::make_unique<btDbvtBroadphase>(&testedCache))
               : makeBulletGpu(nullptr));
    REQUIRE(tested.boxes().size() == 3008);
    std::size_t peakPairs = 0;
    for (int step = 1; step <= 150; ++step) {
        CAPTURE(step);
        oracle.step();
        tested.step();
        const std::vector<PairEntry> pairs = pairArrayOf(tested.world());
        REQUIRE(pairs == pairArrayOf(oracle.world()));
        for (std::size_t i = 0; i < tested.boxes().size(); ++i) {
            REQUIRE(tested.boxes()[i]->getWorldTransform().getOrigin() ==
                    oracle.boxes()[i]->getWorldTransform().getOrigin());
            REQUIRE(tested.boxes()[i]->getWorldTransform().getBasis() ==
                    oracle.boxes()[i]->getWorldTransform().getBasis());
        }
        peakPairs = std::max(peakPairs, pairs.size());
    }
    CHECK(peakPairs > 3000);
}

TEST_CASE("PairCache world: cloth and rope on boxes end as on Bullet's cache", "[pair_cache][world][soft]") {
    // On dbvt, and on bulletgpu::Broadphase (a PairCache it makes against a Bullet cache given).
    const bool onDbvt = GENERATE(true, false);
    CAPTURE(onDbvt);
    btHashedOverlappingPairCache oracleCache;
    bulletgpu::PairCache testedCache;
    SoftScene oracle(onDbvt ? std::unique_ptr<btBroadphaseInterface>(std::make_unique<btDbvtBroadphase>(&oracleCache))
                            : makeBulletGpu(&oracleCache));
    SoftScene tested(onDbvt ? std::unique_ptr<btBroadphaseInterface>(std::make_unique<btDbvtBroadphase>(&testedCache))
                            : makeBulletGpu(nullptr));
    std::size_t peakPairs = 0;
    for (int step = 1; step <= 200; ++step) {
        CAPTURE(step);
        oracle.step();
        tested.step();
        const std::vector<PairEntry> pairs = pairArrayOf(tested.world());
        REQUIRE(pairs == pairArrayOf(oracle.world()));
        REQUIRE(tested.samePlaces(oracle));
        peakPairs = std::max(peakPairs, pairs.size());
    }
    CHECK(peakPairs >= 8); // cloth and rope on the table and boxes, boxes on the table
}
