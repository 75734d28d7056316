// SPDX-License-Identifier: Zlib
// Frames of settled size allocate nothing: every operator new of this executable, and every
// allocation Bullet makes through btAlignedAlloc, is counted while a test repeats frames whose
// work has the same sizes as the frames before (the broadphase on the CPU, with one shared
// sweep and with slabs; the narrow phase with each traversal, AABBs and OBBs, refits and
// rebuilds; sphere chains). Sizes settle after a few warm-up frames, and then the count must
// stay at zero. Bulk AABB updates of a collision world are counted the same way.
#include "support/bullet_harness.h"
#include "support/counting_allocator.h"

#include <bulletgpu/BulkAabbUpdater.h>

#include "kernels/chain/sphere_chain.h"
#include "tests/support/mesh_generators.h"
#include <bulletgpu/TriangleMeshSet.h>

#include <BulletCollision/CollisionDispatch/btCollisionWorld.h>
#include <BulletCollision/CollisionShapes/btBoxShape.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <LinearMath/btAlignedAllocator.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

namespace {

using bulletgpu::test::countedMalloc;

void* bulletAlloc(std::size_t size) { return countedMalloc(size); }

/// Bullet's allocations go through the counter too, from the first test on.
struct BulletAllocatorHook {
    BulletAllocatorHook() { btAlignedAllocSetCustom(bulletAlloc, std::free); }
} const gBulletAllocatorHook;

} // namespace

using namespace bulletgpu;
using namespace bulletgpu::test;

namespace {

/// Frames before the sizes have settled.
constexpr int cWarmUpFrames = 6;
/// Frames counted afterwards.
constexpr int cCountedFrames = 8;

} // namespace

TEST_CASE("Settled broadphase frames allocate nothing on the CPU", "[steady]") {
    // partitions 1: one shared sweep on two threads; 2 and 3: slabs on the threads.
    const int partitions = GENERATE(1, 2, 3);
    // Every box moves (full sweeps), or one in 64 (incremental updates of the moved boxes' pairs).
    const std::size_t movingEvery = GENERATE(1, 64);
    // Without margin boxes every moved box is swept again; with them the moves stay inside.
    const MarginBoxes margins = GENERATE(MarginBoxes::Off, MarginBoxes::On);
    CAPTURE(partitions, movingEvery, toString(margins));
    constexpr std::size_t cBoxes = 4000;
    BroadphaseConfig config = cpuConfig(margins);
    config.threads = 2;
    config.partitions = partitions;
    BroadphaseHarness harness(std::make_unique<Broadphase>(config), cBoxes);
    SceneGenerator generator(7);
    std::vector<TestBox> boxes;
    for (std::size_t i = 0; i < cBoxes; ++i) {
        boxes.push_back(generator.box(SceneKind::Uniform, cBoxes));
        harness.create(i, boxes.back());
    }
    // The moving boxes go back and forth by 0.3 along x: pairs are found and lost every frame.
    // Every box gets its box every frame, as Bullet's updateAabbs gives it.
    const auto frame = [&](int f) {
        const double shift = f % 2 == 0 ? 0.3 : 0.0;
        for (std::size_t i = 0; i < cBoxes; ++i) {
            TestBox moved = boxes[i];
            const double dx = i % movingEvery != 0 ? 0.0 : (i / movingEvery) % 2 == 0 ? shift : -shift;
            moved.min[0] += dx;
            moved.max[0] += dx;
            harness.move(i, moved);
        }
        harness.step();
    };
    allocationsDuring(cWarmUpFrames, frame);
    const std::size_t pairsBefore = harness.cachePairs().size();
    REQUIRE(allocationsDuring(cCountedFrames, frame) == 0);
    REQUIRE(harness.cachePairs().size() == pairsBefore);
    REQUIRE(harness.cachePairs() == harness.bruteForce());
}

TEST_CASE("Settled bulk AABB updates allocate nothing on the CPU", "[steady][bulk]") {
    // Enough objects for the parallel paths of BulkAabbUpdater and Broadphase::setAabbs, whose
    // thread tuners try one thread and the team during the warm-up.
    constexpr int cObjects = 40000;
    btBoxShape box(btVector3(btScalar(0.4), btScalar(0.4), btScalar(0.4)));
    std::vector<std::unique_ptr<btRigidBody>> bodies; // outlive the world
    btDefaultCollisionConfiguration configuration;
    btCollisionDispatcher dispatcher(&configuration);
    BroadphaseConfig config = cpuConfig(MarginBoxes::Off);
    config.threads = 2;
    Broadphase broadphase(config);
    btCollisionWorld world(&dispatcher, &broadphase, &configuration);
    BulkAabbUpdater updater(2);
    for (int i = 0; i < cObjects; ++i) {
        bodies.push_back(std::make_unique<btRigidBody>(btScalar(1), nullptr, &box));
        const btTransform pose(btQuaternion::getIdentity(), btVector3(btScalar(i % 200), btScalar(i / 200), 0));
        bodies.back()->setWorldTransform(pose);
        bodies.back()->setInterpolationWorldTransform(pose);
        world.addCollisionObject(bodies.back().get());
    }
    // Every other object goes back and forth by 0.3 along x: pairs are found and lost every frame.
    const auto frame = [&](int f) {
        const btScalar shift = f % 2 == 0 ? btScalar(0.3) : btScalar(-0.3);
        for (int i = 0; i < cObjects; i += 2) {
            btRigidBody& body = *bodies[static_cast<std::size_t>(i)];
            body.setInterpolationWorldTransform(body.getWorldTransform());
            body.getWorldTransform().getOrigin() += btVector3(shift, 0, 0);
        }
        updater.update(world);
        world.computeOverlappingPairs();
    };
    allocationsDuring(cWarmUpFrames, frame);
    REQUIRE(allocationsDuring(cCountedFrames, frame) == 0);
    for (const std::unique_ptr<btRigidBody>& body : bodies) { // without the world's O(pairs) scan per object
        broadphase.destroyProxy(body->getBroadphaseHandle(), &dispatcher);
        body->setBroadphaseHandle(nullptr);
        world.removeCollisionObject(body.get());
    }
}

TEST_CASE("Settled narrow-phase frames allocate nothing on the CPU", "[steady][narrow]") {
    const NarrowTraversal traversal =
        GENERATE(NarrowTraversal::LeafWalk, NarrowTraversal::Fronts, NarrowTraversal::Descent);
    const BoundingVolume volume = GENERATE(BoundingVolume::Aabb, BoundingVolume::Obb);
    const bool rebuild = GENERATE(false, true);
    CAPTURE(static_cast<int>(traversal), static_cast<int>(volume), rebuild);
    TriangleMeshSet set(2);
    set.setTraversal(traversal);
    // A folded cloth that meets itself, alternating between two phases of its fold, and two
    // tori moving rigidly through each other.
    const PlyMesh foldA = foldedCloth(60, 0.02, 0.06, 0.0), foldB = foldedCloth(60, 0.02, 0.06, 0.4);
    const PlyMesh torus = torusMesh(40, 14, 1.0, 0.55);
    const auto add = [&](const PlyMesh& mesh) {
        const std::uint32_t index =
            set.addMesh(mesh.positions.data(), static_cast<std::uint32_t>(mesh.positions.size() / 3),
                        mesh.indices.data(), static_cast<std::uint32_t>(mesh.indices.size() / 3));
        set.setBoundingVolume(index, volume);
        return index;
    };
    const std::uint32_t cloth = add(foldA), ringA = add(torus), ringB = add(torus);
    const std::vector<MeshPairQuery> queries = {{cloth, cloth}, {ringA, ringB}};
    std::vector<TriangleContact> contacts;
    const auto frame = [&](int f) {
        set.setPositions(cloth, (f % 2 == 0 ? foldB : foldA).positions.data());
        if (rebuild) set.requestRebuild(cloth);
        const double angle = f % 2 == 0 ? 0.3 : 0.0;
        const double turn[12] = {
            std::cos(angle), -std::sin(angle), 0, 0.9, std::sin(angle), std::cos(angle), 0, 0, 0, 0, 1, 0};
        set.setTransform(ringB, turn);
        set.findContacts(queries.data(), static_cast<std::uint32_t>(queries.size()), contacts);
    };
    allocationsDuring(cWarmUpFrames, frame);
    const std::uint64_t allocations = allocationsDuring(cCountedFrames, frame);
#if defined(BULLETGPU_VALIDATE)
    // The tree validators of debug builds check every refitted tree with scratch of their own.
    WARN("debug validators allocate: " << allocations << " allocations in " << cCountedFrames << " frames");
#else
    REQUIRE(allocations == 0);
#endif
    REQUIRE(!contacts.empty());
}

TEST_CASE("Settled sphere-chain frames allocate nothing on the CPU", "[steady][chain]") {
    SphereChainSet set(Backend::Cpu, 2);
    // Two coiled chains of 3,000 spheres that touch themselves and each other, swaying.
    constexpr std::uint32_t cSpheres = 3000;
    const auto coil = [&](float offset, float sway) {
        std::vector<float> centres;
        for (std::uint32_t i = 0; i < cSpheres; ++i) {
            const float t = 0.05f * static_cast<float>(i);
            centres.insert(centres.end(), {std::cos(t) * 2 + offset + sway * std::sin(0.01f * i), std::sin(t) * 2,
                                           0.02f * static_cast<float>(i)});
        }
        return centres;
    };
    const std::vector<float> radii(cSpheres, 0.12f);
    const std::vector<float> restA = coil(0.0f, 0.0f), restB = coil(3.9f, 0.0f);
    const std::vector<float> swayA = coil(0.0f, 0.1f), swayB = coil(3.9f, -0.1f);
    const std::uint32_t a = set.addChain(restA.data(), radii.data(), cSpheres);
    const std::uint32_t b = set.addChain(restB.data(), radii.data(), cSpheres);
    std::vector<ChainContact> contacts;
    const auto frame = [&](int f) {
        set.setPositions(a, (f % 2 == 0 ? swayA : restA).data());
        set.setPositions(b, (f % 2 == 0 ? swayB : restB).data());
        set.findContacts(ChainQuery{}, contacts);
    };
    allocationsDuring(cWarmUpFrames, frame);
    REQUIRE(allocationsDuring(cCountedFrames, frame) == 0);
    REQUIRE(!contacts.empty());
}
