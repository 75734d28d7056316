// SPDX-License-Identifier: Zlib
// Whole Bullet worlds on bulletgpu::Broadphase: the pair cache stays exact, pairs keep their
// algorithms, and the simulation ends where the same world on btDbvtBroadphase ends.
#include "bench/benchmark_demo_scene.h"
#include "support/soft_world.h"

#include <bulletgpu/Broadphase.h>

#include <BulletCollision/CollisionDispatch/btGhostObject.h>
#include <BulletDynamics/Character/btKinematicCharacterController.h>
#include <BulletSoftBody/btSoftBodyHelpers.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#include <btBulletDynamicsCommon.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

namespace {

/// A pair of collision objects, as their indices in the world's object array, lower first.
using PairKey = std::pair<int, int>;

/// The key of the pair of two proxies' collision objects.
PairKey keyOf(const btBroadphaseProxy* a, const btBroadphaseProxy* b) {
    const int ia = static_cast<const btCollisionObject*>(a->m_clientObject)->getWorldArrayIndex();
    const int ib = static_cast<const btCollisionObject*>(b->m_clientObject)->getWorldArrayIndex();
    return {std::min(ia, ib), std::max(ia, ib)};
}

/// The broadphase under test: bulletgpu on the CPU backend, without its log line.
std::unique_ptr<btBroadphaseInterface> makeBulletGpu() {
    bulletgpu::BroadphaseConfig config;
    config.backend = bulletgpu::Backend::Cpu;
    config.logBackendChoice = false;
    return std::make_unique<bulletgpu::Broadphase>(config);
}

/// The cache's pairs with their algorithms, sorted by key (duplicates kept).
using AlgorithmSnapshot = std::vector<std::pair<PairKey, const btCollisionAlgorithm*>>;

/// The world cache's pairs and their algorithms.
AlgorithmSnapshot snapshotPairs(btCollisionWorld& world) {
    const btBroadphasePairArray& pairs = world.getPairCache()->getOverlappingPairArray();
    AlgorithmSnapshot snapshot;
    snapshot.reserve(static_cast<std::size_t>(pairs.size()));
    for (int i = 0; i < pairs.size(); ++i) {
        snapshot.emplace_back(keyOf(pairs[i].m_pProxy0, pairs[i].m_pProxy1), pairs[i].m_algorithm);
    }
    std::sort(snapshot.begin(), snapshot.end());
    return snapshot;
}

/// The keys of a snapshot, in its order.
std::vector<PairKey> keysOf(const AlgorithmSnapshot& snapshot) {
    std::vector<PairKey> keys;
    keys.reserve(snapshot.size());
    for (const auto& entry : snapshot) keys.push_back(entry.first);
    return keys;
}

/// Brute force: every pair of proxies whose stored boxes overlap inclusively on all three
/// axes and whose groups and masks accept each other.
std::vector<PairKey> exactOverlaps(btCollisionWorld& world) {
    const btCollisionObjectArray& objects = world.getCollisionObjectArray();
    const int count = objects.size();
    std::vector<btVector3> lo(static_cast<std::size_t>(count)), hi(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) world.getBroadphase()->getAabb(objects[i]->getBroadphaseHandle(), lo[i], hi[i]);
    std::vector<PairKey> overlaps;
    for (int i = 0; i < count; ++i) {
        const btBroadphaseProxy* a = objects[i]->getBroadphaseHandle();
        for (int j = i + 1; j < count; ++j) {
            const btBroadphaseProxy* b = objects[j]->getBroadphaseHandle();
            const bool accepted = (a->m_collisionFilterGroup & b->m_collisionFilterMask) != 0 &&
                                  (b->m_collisionFilterGroup & a->m_collisionFilterMask) != 0;
            bool overlap = accepted;
            for (int axis = 0; overlap && axis < 3; ++axis) {
                overlap = lo[i][axis] <= hi[j][axis] && lo[j][axis] <= hi[i][axis];
            }
            if (overlap) overlaps.emplace_back(i, j);
        }
    }
    return overlaps;
}

/// How a world's pair cache differs from the exact filtered overlaps of its proxies' boxes.
struct PairSetCheck {
    std::size_t cached = 0;     ///< Pairs in the cache.
    std::size_t exact = 0;      ///< Exact filtered overlaps.
    std::size_t missing = 0;    ///< Exact overlaps absent from the cache.
    std::size_t extra = 0;      ///< Cached pairs that are not exact overlaps.
    std::size_t duplicates = 0; ///< Cached pairs held more than once.
};

/// Compares the world's pair cache with exactOverlaps().
PairSetCheck checkPairCache(btCollisionWorld& world) {
    std::vector<PairKey> cached = keysOf(snapshotPairs(world));
    PairSetCheck check;
    check.cached = cached.size();
    cached.erase(std::unique(cached.begin(), cached.end()), cached.end());
    check.duplicates = check.cached - cached.size();
    const std::vector<PairKey> exact = exactOverlaps(world);
    check.exact = exact.size();
    std::vector<PairKey> difference;
    std::set_difference(exact.begin(), exact.end(), cached.begin(), cached.end(), std::back_inserter(difference));
    check.missing = difference.size();
    difference.clear();
    std::set_difference(cached.begin(), cached.end(), exact.begin(), exact.end(), std::back_inserter(difference));
    check.extra = difference.size();
    return check;
}

/// Fails the test unless the cache held exactly the exact overlaps, once each.
void requireExact(const PairSetCheck& check) {
    CAPTURE(check.cached, check.exact);
    REQUIRE(check.missing == 0);
    REQUIRE(check.extra == 0);
    REQUIRE(check.duplicates == 0);
}

/// Records the pair events a cache reports to its internal ghost callback.
class PairEventRecorder final : public btOverlappingPairCallback {
public:
    btBroadphasePair* addOverlappingPair(btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1) override {
        added.push_back(keyOf(proxy0, proxy1));
        return nullptr;
    }
    void* removeOverlappingPair(btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1, btDispatcher*) override {
        removed.push_back(keyOf(proxy0, proxy1));
        return nullptr;
    }
    void removeOverlappingPairsContainingProxy(btBroadphaseProxy*, btDispatcher*) override { ++bulkRemovals; }

    std::vector<PairKey> added;   ///< Pairs added since the last clear, in event order.
    std::vector<PairKey> removed; ///< Pairs removed since the last clear, in event order.
    int bulkRemovals = 0;         ///< Calls of the bulk removal a broadphase must never make.
};

/// Checks one broadphase update: the events turn the previous pair set into the current one,
/// each change reported once, and no pair is removed and added again in the same update.
void requireEventsMatch(const std::vector<PairKey>& previous, const std::vector<PairKey>& current,
                        PairEventRecorder& events) {
    std::sort(events.added.begin(), events.added.end());
    std::sort(events.removed.begin(), events.removed.end());
    std::vector<PairKey> churned, kept, expected;
    std::set_intersection(events.added.begin(), events.added.end(), events.removed.begin(), events.removed.end(),
                          std::back_inserter(churned));
    std::set_difference(previous.begin(), previous.end(), events.removed.begin(), events.removed.end(),
                        std::back_inserter(kept));
    std::set_union(kept.begin(), kept.end(), events.added.begin(), events.added.end(), std::back_inserter(expected));
    CAPTURE(previous.size(), current.size(), events.added.size(), events.removed.size());
    REQUIRE(churned.empty());
    REQUIRE(expected == current);
    REQUIRE(current.size() + events.removed.size() == previous.size() + events.added.size());
    REQUIRE(events.bulkRemovals == 0);
    events.added.clear();
    events.removed.clear();
}

/// Counts pairs held in both snapshots that had an algorithm before: those that kept the
/// same algorithm object, and those whose algorithm was replaced.
struct AlgorithmPersistence {
    std::size_t kept = 0;     ///< Pairs that kept their algorithm object.
    std::size_t replaced = 0; ///< Pairs whose algorithm object changed.
};

/// Compares the algorithms of the pairs two consecutive snapshots share.
AlgorithmPersistence compareAlgorithms(const AlgorithmSnapshot& before, const AlgorithmSnapshot& after) {
    AlgorithmPersistence persistence;
    auto next = after.begin();
    for (const auto& [key, algorithm] : before) {
        next =
            std::lower_bound(next, after.end(), std::make_pair(key, static_cast<const btCollisionAlgorithm*>(nullptr)));
        if (next == after.end() || next->first != key || algorithm == nullptr) continue;
        ++(next->second == algorithm ? persistence.kept : persistence.replaced);
    }
    return persistence;
}

/// Mean, lowest and highest centre height of a set of rigid bodies.
struct HeightSummary {
    double mean = 0;
    double lowest = 0;
    double highest = 0;
};

/// Summarizes the centre heights of a non-empty set of bodies.
HeightSummary summarizeHeights(const std::vector<btRigidBody*>& bodies) {
    HeightSummary summary{0, bodies.front()->getWorldTransform().getOrigin().y(),
                          bodies.front()->getWorldTransform().getOrigin().y()};
    for (const btRigidBody* body : bodies) {
        const double y = body->getWorldTransform().getOrigin().y();
        summary.mean += y;
        summary.lowest = std::min(summary.lowest, y);
        summary.highest = std::max(summary.highest, y);
    }
    summary.mean /= static_cast<double>(bodies.size());
    return summary;
}

constexpr int cBenchmarkDemoSteps = 300;

/// BenchmarkDemo test 1 on btDbvtBroadphase: where its boxes are after the same steps.
HeightSummary runBenchmarkDemoOnDbvt() {
    bulletgpu::bench::BenchmarkDemo1 scene(std::make_unique<btDbvtBroadphase>());
    for (int step = 0; step < cBenchmarkDemoSteps; ++step) scene.step();
    return summarizeHeights(scene.boxes());
}

/// A soft-rigid world that compares its pair cache with the exact overlaps right after every
/// broadphase update, before the pairs are dispatched.
class CheckedSoftRigidWorld final : public btSoftRigidDynamicsWorld {
public:
    using btSoftRigidDynamicsWorld::btSoftRigidDynamicsWorld;

    void computeOverlappingPairs() override {
        btSoftRigidDynamicsWorld::computeOverlappingPairs();
        if (checkPairs) checks.push_back(checkPairCache(*this));
    }

    bool checkPairs = false;          ///< Whether to check after each update.
    std::vector<PairSetCheck> checks; ///< One entry per checked update.
};

/// Mean position and lowest node height of a soft body.
struct NodeSummary {
    btVector3 mean{0, 0, 0};
    btScalar lowest = 0;
};

/// Summarizes a soft body's node positions.
NodeSummary summarizeNodes(const btSoftBody& body) {
    NodeSummary summary;
    summary.lowest = body.m_nodes[0].m_x.y();
    for (int i = 0; i < body.m_nodes.size(); ++i) {
        summary.mean += body.m_nodes[i].m_x;
        summary.lowest = std::min(summary.lowest, body.m_nodes[i].m_x.y());
    }
    summary.mean /= btScalar(body.m_nodes.size());
    return summary;
}

/// A 15 x 15 cloth patch and a rope dropped onto a static table box whose top is at y = 0.
class ClothAndRopeScene {
public:
    explicit ClothAndRopeScene(std::unique_ptr<btBroadphaseInterface> broadphase, bool checkPairs)
        : m_dispatcher(&m_configuration), m_broadphase(std::move(broadphase)), m_tableShape(btVector3(5, 1, 5)),
          m_world(
              std::make_unique<CheckedSoftRigidWorld>(&m_dispatcher, m_broadphase.get(), &m_solver, &m_configuration)) {
        m_world->checkPairs = checkPairs;
        bulletgpu::test::setUpSoftWorld(*m_world, m_broadphase.get(), &m_dispatcher, btVector3(0, -10, 0));
        btSoftBodyWorldInfo& info = m_world->getWorldInfo();

        btRigidBody::btRigidBodyConstructionInfo tableInfo(0, nullptr, &m_tableShape);
        tableInfo.m_startWorldTransform.setOrigin(btVector3(0, -1, 0));
        m_table = std::make_unique<btRigidBody>(tableInfo);
        m_world->addRigidBody(m_table.get());

        m_cloth.reset(btSoftBodyHelpers::CreatePatch(info, btVector3(-4, 3, -4), btVector3(4, 3, -4),
                                                     btVector3(-4, 3, 4), btVector3(4, 3, 4), 15, 15, 0, true));
        m_cloth->setTotalMass(2);
        m_world->addSoftBody(m_cloth.get());
        m_rope.reset(btSoftBodyHelpers::CreateRope(info, btVector3(-3, 5, 1), btVector3(3, 5, -1), 14, 0));
        m_rope->setTotalMass(1);
        m_world->addSoftBody(m_rope.get());
    }

    ~ClothAndRopeScene() {
        m_world->removeSoftBody(m_rope.get());
        m_world->removeSoftBody(m_cloth.get());
        m_world->removeRigidBody(m_table.get());
    }

    ClothAndRopeScene(const ClothAndRopeScene&) = delete;
    ClothAndRopeScene& operator=(const ClothAndRopeScene&) = delete;

    /// Advances by 1/60 as SoftDemo does, then frees unused distance-field cells.
    void step() {
        m_world->stepSimulation(btScalar(1) / btScalar(60));
        m_world->getWorldInfo().m_sparsesdf.GarbageCollect();
    }

    /// The world, with the checks it made.
    CheckedSoftRigidWorld& world() { return *m_world; }
    /// The cloth patch.
    const btSoftBody& cloth() const { return *m_cloth; }
    /// The rope.
    const btSoftBody& rope() const { return *m_rope; }

private:
    btSoftBodyRigidBodyCollisionConfiguration m_configuration;
    btCollisionDispatcher m_dispatcher;
    std::unique_ptr<btBroadphaseInterface> m_broadphase;
    btSequentialImpulseConstraintSolver m_solver;
    btBoxShape m_tableShape;
    std::unique_ptr<btRigidBody> m_table;
    std::unique_ptr<btSoftBody> m_cloth;
    std::unique_ptr<btSoftBody> m_rope;
    std::unique_ptr<CheckedSoftRigidWorld> m_world;
};

/// Where the cloth and rope end, and how low any of their nodes went.
struct SoftRun {
    NodeSummary cloth;                ///< The cloth after the last step.
    NodeSummary rope;                 ///< The rope after the last step.
    btScalar lowestNode = 0;          ///< The lowest height any node reached.
    std::vector<PairSetCheck> checks; ///< One per broadphase update, when checked.
};

/// Runs the cloth-and-rope scene for 200 steps, optionally checking the cache after every update.
SoftRun dropClothAndRope(std::unique_ptr<btBroadphaseInterface> broadphase, bool checkPairs) {
    ClothAndRopeScene scene(std::move(broadphase), checkPairs);
    SoftRun run;
    run.lowestNode = summarizeNodes(scene.cloth()).lowest;
    for (int step = 0; step < 200; ++step) {
        scene.step();
        run.lowestNode =
            std::min({run.lowestNode, summarizeNodes(scene.cloth()).lowest, summarizeNodes(scene.rope()).lowest});
    }
    run.cloth = summarizeNodes(scene.cloth());
    run.rope = summarizeNodes(scene.rope());
    run.checks = std::move(scene.world().checks);
    return run;
}

/// Where a kinematic character that walked along a row of static boxes ends.
struct CharacterRun {
    btVector3 end{0, 0, 0};           ///< The capsule's centre after the last step.
    btScalar lowestCentre = 0;        ///< The lowest height its centre reached.
    std::vector<PairSetCheck> checks; ///< One per step, when checked.
    std::size_t ghostMismatches = 0;  ///< Steps where the ghost's own object list differed from its cache pairs.
};

/// The objects paired with the ghost in the world's cache, as world array indices.
std::vector<int> cachePartnersOf(btCollisionWorld& world, const btCollisionObject& ghost) {
    std::vector<int> partners;
    for (const PairKey& key : keysOf(snapshotPairs(world))) {
        if (key.first == ghost.getWorldArrayIndex()) partners.push_back(key.second);
        if (key.second == ghost.getWorldArrayIndex()) partners.push_back(key.first);
    }
    std::sort(partners.begin(), partners.end());
    return partners;
}

/// The ghost's own list of overlapping objects, as world array indices.
std::vector<int> ghostOverlaps(btPairCachingGhostObject& ghost) {
    std::vector<int> overlaps;
    for (int i = 0; i < ghost.getNumOverlappingObjects(); ++i) {
        overlaps.push_back(ghost.getOverlappingObject(i)->getWorldArrayIndex());
    }
    std::sort(overlaps.begin(), overlaps.end());
    return overlaps;
}

/// Walks a kinematic character along a row of static boxes for 200 steps, optionally checking
/// the cache, and the ghost's own pair list against it, after every step.
CharacterRun walkCharacter(std::unique_ptr<btBroadphaseInterface> broadphase, bool checkPairs) {
    btDefaultCollisionConfiguration configuration;
    btCollisionDispatcher dispatcher(&configuration);
    btSequentialImpulseConstraintSolver solver;
    btGhostPairCallback ghostPairCallback;
    btBoxShape stepShape(btVector3(1, btScalar(0.5), btScalar(1.5)));
    std::vector<std::unique_ptr<btRigidBody>> steps;
    btCapsuleShape capsule(btScalar(0.4), 1);
    btPairCachingGhostObject ghost;
    btDiscreteDynamicsWorld world(&dispatcher, broadphase.get(), &solver, &configuration);
    world.setGravity(btVector3(0, -10, 0));
    world.getPairCache()->setInternalGhostPairCallback(&ghostPairCallback);

    // Twelve boxes side by side along x, their tops alternating between 0 and 0.2.
    for (int i = 0; i < 12; ++i) {
        btRigidBody::btRigidBodyConstructionInfo info(0, nullptr, &stepShape);
        info.m_startWorldTransform.setOrigin(btVector3(btScalar(2 * i), btScalar(0.2 * (i % 2)) - btScalar(0.5), 0));
        steps.push_back(std::make_unique<btRigidBody>(info));
        world.addRigidBody(steps.back().get());
    }
    btTransform start;
    start.setIdentity();
    start.setOrigin(btVector3(0, btScalar(1.5), 0));
    ghost.setWorldTransform(start);
    ghost.setCollisionShape(&capsule);
    ghost.setCollisionFlags(btCollisionObject::CF_CHARACTER_OBJECT);
    btKinematicCharacterController character(&ghost, &capsule, btScalar(0.35), btVector3(0, 1, 0));
    world.addCollisionObject(&ghost, btBroadphaseProxy::CharacterFilter,
                             btBroadphaseProxy::StaticFilter | btBroadphaseProxy::DefaultFilter);
    world.addAction(&character);
    character.setWalkDirection(btVector3(btScalar(0.06), 0, 0));

    CharacterRun run;
    run.lowestCentre = start.getOrigin().y();
    for (int step = 0; step < 200; ++step) {
        world.stepSimulation(btScalar(1) / btScalar(60));
        run.lowestCentre = std::min(run.lowestCentre, ghost.getWorldTransform().getOrigin().y());
        if (checkPairs) {
            run.checks.push_back(checkPairCache(world));
            if (cachePartnersOf(world, ghost) != ghostOverlaps(ghost)) ++run.ghostMismatches;
        }
    }
    run.end = ghost.getWorldTransform().getOrigin();

    world.removeAction(&character);
    world.removeCollisionObject(&ghost);
    for (const std::unique_ptr<btRigidBody>& body : steps) world.removeRigidBody(body.get());
    world.getPairCache()->setInternalGhostPairCallback(nullptr);
    return run;
}

} // namespace

TEST_CASE("World: BenchmarkDemo 3000 boxes keeps an exact cache, keeps algorithms and settles like dbvt", "[world]") {
    PairEventRecorder events;
    bulletgpu::bench::BenchmarkDemo1 scene(makeBulletGpu());
    btDiscreteDynamicsWorld& world = scene.world();
    REQUIRE(scene.boxes().size() == 3008);
    world.getPairCache()->setInternalGhostPairCallback(&events);

    AlgorithmSnapshot previous = snapshotPairs(world);
    events.added.clear();
    AlgorithmPersistence persistence;
    std::size_t peakPairs = 0;
    for (int step = 1; step <= cBenchmarkDemoSteps; ++step) {
        scene.step();
        CAPTURE(step);
        AlgorithmSnapshot current = snapshotPairs(world);
        requireEventsMatch(keysOf(previous), keysOf(current), events);
        const AlgorithmPersistence stepPersistence = compareAlgorithms(previous, current);
        REQUIRE(stepPersistence.replaced == 0);
        persistence.kept += stepPersistence.kept;
        if (step % 25 == 0) requireExact(checkPairCache(world));
        peakPairs = std::max(peakPairs, current.size());
        previous = std::move(current);
    }
    world.getPairCache()->setInternalGhostPairCallback(nullptr);
    CHECK(peakPairs > 5000);
    CHECK(persistence.kept > 100000);

    const HeightSummary gpu = summarizeHeights(scene.boxes());
    const HeightSummary dbvt = runBenchmarkDemoOnDbvt();
    CAPTURE(gpu.mean, gpu.lowest, gpu.highest, dbvt.mean, dbvt.lowest, dbvt.highest);
    CHECK(gpu.lowest > -0.1);
    CHECK(dbvt.lowest > -0.1);
    CHECK(std::abs(gpu.lowest - dbvt.lowest) < 0.5);
    CHECK(std::abs(gpu.mean - dbvt.mean) < 0.1 * (dbvt.highest - dbvt.lowest));
}

TEST_CASE("World: cloth and rope on a static box keep an exact cache and end like dbvt", "[world][soft]") {
    const SoftRun gpu = dropClothAndRope(makeBulletGpu(), true);
    const SoftRun dbvt = dropClothAndRope(std::make_unique<btDbvtBroadphase>(), false);

    REQUIRE(gpu.checks.size() == 200);
    for (const PairSetCheck& check : gpu.checks) requireExact(check);
    CHECK(gpu.checks.back().exact > 0);

    // Nodes rest on the table's top (y = 0) at about the soft margin: nothing sinks or falls through.
    CAPTURE(gpu.lowestNode, dbvt.lowestNode, gpu.cloth.mean.y(), gpu.rope.mean.y());
    CHECK(gpu.lowestNode > -0.1);
    CHECK(dbvt.lowestNode > -0.1);
    CHECK(gpu.cloth.mean.y() < 1);
    CHECK(gpu.rope.mean.y() < 1);
    CHECK(gpu.cloth.mean.distance(dbvt.cloth.mean) < 0.05);
    CHECK(gpu.rope.mean.distance(dbvt.rope.mean) < 0.05);
    CHECK(std::abs(gpu.cloth.lowest - dbvt.cloth.lowest) < 0.05);
    CHECK(std::abs(gpu.rope.lowest - dbvt.rope.lowest) < 0.05);
}

TEST_CASE("World: a kinematic character walks over static boxes like it does on dbvt", "[world][character]") {
    const CharacterRun gpu = walkCharacter(makeBulletGpu(), true);
    const CharacterRun dbvt = walkCharacter(std::make_unique<btDbvtBroadphase>(), false);

    REQUIRE(gpu.checks.size() == 200);
    for (const PairSetCheck& check : gpu.checks) requireExact(check);
    CHECK(gpu.ghostMismatches == 0);

    // Bullet's controller rests with the capsule's centre about 0.36 above the surface it stands
    // on (with either broadphase); lower than 0.3 above the lower box tops (y = 0) means it sank.
    // The walk covers about 200 x 0.06.
    CAPTURE(gpu.end.x(), gpu.end.y(), dbvt.end.x(), dbvt.end.y(), gpu.lowestCentre, dbvt.lowestCentre);
    CHECK(gpu.lowestCentre > 0.3);
    CHECK(dbvt.lowestCentre > 0.3);
    CHECK(gpu.end.x() > 10);
    CHECK(gpu.end.distance(dbvt.end) < 0.05);
}
