// SPDX-License-Identifier: Zlib
#include "support/environment_override.h"
#include "support/bullet_harness.h"

#include <bulletgpu/Broadphase.h>

#include <BulletCollision/BroadphaseCollision/btSimpleBroadphase.h>

#include "kernels/partition/slab_cost_model.h"
#include "plugin/backend_choice.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

using namespace bulletgpu;
using namespace bulletgpu::test;


TEST_CASE("Broadphase: equals brute force and btSimpleBroadphase under churn", "[broadphase]") {
    const MarginBoxes margins = GENERATE(MarginBoxes::Off, MarginBoxes::On);
    CAPTURE(toString(margins));
    const SceneKind kind =
        GENERATE(SceneKind::Uniform, SceneKind::Clustered, SceneKind::OneAxis, SceneKind::MixedSizes);
    const std::size_t n = GENERATE(0, 1, 2, 100, 2000);
    CAPTURE(sceneName(kind), n);
    SceneGenerator generator(static_cast<std::uint32_t>(97 * n + static_cast<int>(kind)));
    BroadphaseHarness ours(std::make_unique<Broadphase>(cpuConfig(margins)), 4000);
    BroadphaseHarness simple(std::make_unique<btSimpleBroadphase>(4000), 4000);
    std::vector<TestBox> boxes = generator.scene(kind, n);
    for (std::size_t i = 0; i < n; ++i) {
        ours.create(i, boxes[i]);
        simple.create(i, boxes[i]);
    }
    for (int frame = 0; frame < 8; ++frame) {
        ours.step();
        simple.step();
        REQUIRE(ours.cachePairs() == ours.bruteForce());
        REQUIRE(ours.cachePairs() == simple.cachePairs());
        REQUIRE(ours.cacheHasNoDuplicates());
        for (std::size_t i = 0; i < n; ++i) {
            if (!ours.isLive(i)) continue;
            generator.jitter(boxes[i], frame % 3 == 2 ? 2.0 : 0.05);
            ours.move(i, boxes[i]);
            simple.move(i, boxes[i]);
        }
        for (int k = 0; k < (n > 2 ? 5 : 0); ++k) {
            const std::size_t i = generator.below(static_cast<std::uint32_t>(n));
            if (ours.isLive(i)) {
                ours.destroy(i);
                simple.destroy(i);
            } else {
                boxes[i] = generator.box(kind, n);
                ours.create(i, boxes[i]);
                simple.create(i, boxes[i]);
            }
        }
    }
}

TEST_CASE("Broadphase: group/mask filtering, and a filter callback alone decides", "[broadphase]") {
    const MarginBoxes margins = GENERATE(MarginBoxes::Off, MarginBoxes::On);
    CAPTURE(toString(margins));
    SceneGenerator generator(21);
    const auto boxes = generator.scene(SceneKind::Uniform, 1500);
    BroadphaseHarness ours(std::make_unique<Broadphase>(cpuConfig(margins)), boxes.size());
    for (std::size_t i = 0; i < boxes.size(); ++i) ours.create(i, boxes[i], 1 << (i % 3), (i % 2) ? -1 : 3);
    ours.step();
    REQUIRE(ours.cachePairs() == ours.bruteForce());

    // A callback that accepts only pairs of even objects, whatever group/mask say.
    struct EvenPairs : btOverlapFilterCallback {
        bool needBroadphaseCollision(btBroadphaseProxy* a, btBroadphaseProxy* b) const override {
            return objectIndex(a) % 2 == 0 && objectIndex(b) % 2 == 0;
        }
    } evenPairs;
    // With 2 threads the cache takes the changes while a second thread keeps the partner lists,
    // and unlinks the pairs the callback refused afterwards.
    BroadphaseConfig config = cpuConfig(margins);
    config.threads = GENERATE(1, 2);
    CAPTURE(config.threads);
    BroadphaseHarness filtered(std::make_unique<Broadphase>(config), boxes.size());
    filtered.broadphase().getOverlappingPairCache()->setOverlapFilterCallback(&evenPairs);
    for (std::size_t i = 0; i < boxes.size(); ++i) filtered.create(i, boxes[i], 1 << (i % 3), (i % 2) ? -1 : 3);
    auto isEven = [](const ObjectPair& p) { return p.first % 2 == 0 && p.second % 2 == 0; };
    for (int frame = 0; frame < 3; ++frame) {
        filtered.step();
        REQUIRE(filtered.cachePairs() == filtered.bruteForce(isEven));
        for (std::size_t i = 0; i < boxes.size(); ++i) filtered.move(i, boxes[(i + frame + 1) % boxes.size()]);
    }
    filtered.broadphase().getOverlappingPairCache()->setOverlapFilterCallback(nullptr);
}

TEST_CASE("Broadphase: stays exact when stepped from inside the caller's own parallel region", "[broadphase]") {
    // Regions opened inside an active one get the calling thread alone (no nesting): the pair
    // finder and the cache sync, which asks for a second thread, must do all of it on one.
    SceneGenerator generator(57);
    std::vector<TestBox> boxes = generator.scene(SceneKind::Uniform, 3000);
    BroadphaseConfig config = cpuConfig(MarginBoxes::Off);
    config.threads = 2;
    BroadphaseHarness ours(std::make_unique<Broadphase>(config), boxes.size());
    for (std::size_t i = 0; i < boxes.size(); ++i) ours.create(i, boxes[i]);
    for (int frame = 0; frame < 6; ++frame) {
#pragma omp parallel num_threads(2)
        {
#pragma omp single
            ours.step();
        }
        REQUIRE(ours.cachePairs() == ours.bruteForce());
        REQUIRE(ours.cacheHasNoDuplicates());
        for (std::size_t i = 0; i < boxes.size(); ++i) {
            generator.jitter(boxes[i], frame % 2 == 1 ? 2.0 : 0.05);
            ours.move(i, boxes[i]);
        }
    }
}

TEST_CASE("Broadphase: named edge cases", "[broadphase]") {
    const MarginBoxes margins = GENERATE(MarginBoxes::Off, MarginBoxes::On);
    CAPTURE(toString(margins));
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double big = sizeof(btScalar) == sizeof(double) ? 1e30 : 1e18;
    BroadphaseHarness ours(std::make_unique<Broadphase>(cpuConfig(margins)), 64);
    std::vector<TestBox> boxes = {
        {{0, 0, 0}, {1, 1, 1}},
        {{1, 0, 0}, {2, 1, 1}}, // touching faces
        {{2, 1, 1}, {3, 2, 2}}, // touching a corner
        {{5, 5, 5}, {5, 5, 5}},
        {{5, 5, 5}, {5, 5, 5}},                // zero-size, identical
        {{-big, -big, -big}, {big, 0, big}},   // a static plane's AABB
        {{-big, -big, -big}, {big, big, big}}, // huge with huge
        {{-inf, 3, -inf}, {inf, 4, inf}},      // infinite slab
        {{nan, 0, 0}, {1, 1, 1}},              // NaN: overlaps nothing
        {{0, 0, 0}, {nan, nan, nan}},
        {{9, 9, 9}, {8, 10, 10}}, // inverted: overlaps nothing
    };
    for (std::size_t i = 0; i < boxes.size(); ++i) ours.create(i, boxes[i]);
    ours.step();
    REQUIRE(ours.cachePairs() == ours.bruteForce());
    CHECK(ours.cachePairs().count({0, 1}) == 1);
    CHECK(ours.cachePairs().count({1, 2}) == 1);
    CHECK(ours.cachePairs().count({3, 4}) == 1);
    CHECK(ours.cachePairs().count({5, 6}) == 1);
    for (std::size_t i : {8, 9, 10}) {
        for (const auto& pair : ours.cachePairs()) CHECK((pair.first != i && pair.second != i));
    }
    // Paired boxes turn NaN, inverted or huge, and a huge one shrinks far away; then all mend.
    const std::vector<TestBox> mended = boxes;
    boxes[0] = {{nan, 0, 0}, {1, 1, 1}};
    boxes[1] = {{1, 1, 0}, {2, 0, 1}};
    boxes[3] = {{-big, -big, -big}, {big, big, big}};
    boxes[6] = {{50, 50, 50}, {51, 51, 51}};
    for (std::size_t i : {0, 1, 3, 6}) ours.move(i, boxes[i]);
    ours.step();
    REQUIRE(ours.cachePairs() == ours.bruteForce());
    for (const auto& pair : ours.cachePairs()) {
        CHECK(pair.first > 1);
        if (pair.second == 6) CHECK(pair.first == 3); // only the box that turned huge reaches it
    }
    CHECK(ours.cachePairs().count({2, 3}) == 1);
    boxes = mended;
    for (std::size_t i : {0, 1, 3, 6}) ours.move(i, boxes[i]);
    ours.step();
    REQUIRE(ours.cachePairs() == ours.bruteForce());
    CHECK(ours.cachePairs().count({0, 1}) == 1);
    // One object, then none.
    for (std::size_t i = 1; i < boxes.size(); ++i) ours.destroy(i);
    ours.step();
    CHECK(ours.cachePairs().empty());
    ours.destroy(0);
    ours.step();
    CHECK(ours.broadphase().getOverlappingPairCache()->getNumOverlappingPairs() == 0);
}

TEST_CASE("Broadphase: persisting pairs keep their btBroadphasePair contents", "[broadphase]") {
    const MarginBoxes margins = GENERATE(MarginBoxes::Off, MarginBoxes::On);
    CAPTURE(toString(margins));
    BroadphaseHarness ours(std::make_unique<Broadphase>(cpuConfig(margins)), 8);
    ours.create(0, {{0, 0, 0}, {1, 1, 1}});
    ours.create(1, {{0.5, 0.5, 0.5}, {2, 2, 2}});
    ours.step();
    btBroadphasePair* pair = ours.findPair(0, 1);
    REQUIRE(pair != nullptr);
    pair->m_internalTmpValue = 4242;
    for (int frame = 0; frame < 5; ++frame) {
        ours.move(1, {{0.5 + 0.01 * frame, 0.5, 0.5}, {2, 2, 2}});
        ours.create(2 + frame, {{10.0 + 3 * frame, 0, 0}, {11.0 + 3 * frame, 1, 1}});
        ours.step();
        REQUIRE(ours.findPair(0, 1) != nullptr);
        CHECK(ours.findPair(0, 1)->m_internalTmpValue == 4242);
    }
}

TEST_CASE("Broadphase: ghost pair callbacks fire once per real change", "[broadphase]") {
    const MarginBoxes margins = GENERATE(MarginBoxes::Off, MarginBoxes::On);
    CAPTURE(toString(margins));
    SceneGenerator generator(33);
    std::vector<TestBox> boxes = generator.scene(SceneKind::Uniform, 800);
    BroadphaseHarness ours(std::make_unique<Broadphase>(cpuConfig(margins)), boxes.size());
    CountingPairCallback events;
    ours.broadphase().getOverlappingPairCache()->setInternalGhostPairCallback(&events);
    for (std::size_t i = 0; i < boxes.size(); ++i) ours.create(i, boxes[i]);
    std::set<ObjectPair> before;
    for (int frame = 0; frame < 6; ++frame) {
        events.added.clear();
        events.removed.clear();
        ours.step();
        const std::set<ObjectPair> after = ours.cachePairs();
        std::set<ObjectPair> added, removed;
        std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                            std::inserter(added, added.end()));
        std::set_difference(before.begin(), before.end(), after.begin(), after.end(),
                            std::inserter(removed, removed.end()));
        REQUIRE(events.added == std::multiset<ObjectPair>(added.begin(), added.end()));
        REQUIRE(events.removed == std::multiset<ObjectPair>(removed.begin(), removed.end()));
        before = after;
        for (std::size_t i = 0; i < boxes.size(); ++i) {
            generator.jitter(boxes[i], 0.3);
            ours.move(i, boxes[i]);
        }
    }
    ours.broadphase().getOverlappingPairCache()->setInternalGhostPairCallback(nullptr);
}

TEST_CASE("Broadphase: a ghost's setAabb updates its pairs at once", "[broadphase]") {
    const MarginBoxes margins = GENERATE(MarginBoxes::Off, MarginBoxes::On);
    CAPTURE(toString(margins));
    BroadphaseHarness ours(std::make_unique<Broadphase>(cpuConfig(margins)), 16);
    for (int i = 0; i < 10; ++i) ours.create(i, {{3.0 * i, 0, 0}, {3.0 * i + 1, 1, 1}});
    ours.makeGhost(10);
    ours.create(10, {{0.5, 0.5, 0.5}, {1.5, 1.5, 1.5}});
    ours.step();
    REQUIRE(ours.cachePairs() == ours.bruteForce());
    // No calculateOverlappingPairs in between: the ghost's pairs follow it at once.
    ours.move(10, {{6.5, 0.5, 0.5}, {7.5, 1.5, 1.5}});
    CHECK(ours.cachePairs() == std::set<ObjectPair>{{2, 10}});
    ours.move(10, {{-5, -5, -5}, {30, 5, 5}});
    CHECK(ours.cachePairs().size() == 10);
    ours.step();
    REQUIRE(ours.cachePairs() == ours.bruteForce());
    ours.move(3, {{100, 100, 100}, {101, 101, 101}}); // a normal proxy leaves the ghost
    ours.step();
    REQUIRE(ours.cachePairs() == ours.bruteForce());
    ours.destroy(10);
    ours.step();
    REQUIRE(ours.cachePairs() == ours.bruteForce());
}

TEST_CASE("Broadphase: setAabbs equals setAabb per proxy, and a ghost meets every new box", "[broadphase]") {
    const MarginBoxes margins = GENERATE(MarginBoxes::Off, MarginBoxes::On);
    CAPTURE(toString(margins));
    SceneGenerator generator(71);
    std::vector<TestBox> boxes = generator.scene(SceneKind::Uniform, 3000);
    BroadphaseHarness each(std::make_unique<Broadphase>(cpuConfig(margins)), boxes.size());
    BroadphaseHarness bulk(std::make_unique<Broadphase>(cpuConfig(margins)), boxes.size());
    const std::size_t ghost = 17;
    each.makeGhost(ghost);
    bulk.makeGhost(ghost);
    for (std::size_t i = 0; i < boxes.size(); ++i) {
        each.create(i, boxes[i]);
        bulk.create(i, boxes[i]);
    }
    auto ghostPairs = [&](const std::set<ObjectPair>& pairs) {
        std::set<ObjectPair> ofGhost;
        for (const ObjectPair& pair : pairs) {
            if (pair.first == ghost || pair.second == ghost) ofGhost.insert(pair);
        }
        return ofGhost;
    };
    for (int frame = 0; frame < 6; ++frame) {
        CAPTURE(frame);
        std::vector<long> which;
        std::vector<TestBox> moved;
        for (std::size_t i = 0; i < boxes.size(); ++i) {
            if (i % 5 == 3) { // a null entry, skipped whatever its box
                which.push_back(-1);
                moved.push_back(boxes[0]);
            }
            if ((i + static_cast<std::size_t>(frame)) % 4 == 0) continue; // a quarter keep their box
            generator.jitter(boxes[i], i == ghost ? 4.0 : 0.3);
            which.push_back(static_cast<long>(i));
            moved.push_back(boxes[i]);
            each.move(i, boxes[i]);
        }
        bulk.moveMany(which, moved);
        REQUIRE(ghostPairs(bulk.cachePairs()) == ghostPairs(bulk.bruteForce()));
        each.step();
        bulk.step();
        REQUIRE(bulk.cachePairs() == each.cachePairs());
        REQUIRE(bulk.cachePairs() == bulk.bruteForce());
    }
}

TEST_CASE("Broadphase: destroyProxy removes exactly that proxy's pairs", "[broadphase]") {
    const MarginBoxes margins = GENERATE(MarginBoxes::Off, MarginBoxes::On);
    CAPTURE(toString(margins));
    SceneGenerator generator(44);
    std::vector<TestBox> boxes = generator.scene(SceneKind::Clustered, 1000);
    BroadphaseHarness ours(std::make_unique<Broadphase>(cpuConfig(margins)), boxes.size() + 10);
    CountingPairCallback events;
    ours.broadphase().getOverlappingPairCache()->setInternalGhostPairCallback(&events);
    for (std::size_t i = 0; i < boxes.size(); ++i) ours.create(i, boxes[i]);
    ours.step();
    for (std::size_t victim : {0, 10, 500}) {
        const auto beforeDestroy = ours.cachePairs();
        events.removed.clear();
        ours.destroy(victim);
        std::size_t expected = 0;
        for (const auto& p : beforeDestroy) expected += (p.first == victim || p.second == victim) ? 1 : 0;
        CHECK(events.removed.size() == expected);
        for (const auto& p : ours.cachePairs()) CHECK((p.first != victim && p.second != victim));
        // The slot is reused at once by a new proxy; its pairs must be found next step.
        boxes[victim] = generator.box(SceneKind::Clustered, boxes.size());
        ours.create(victim, boxes[victim]);
        ours.step();
        REQUIRE(ours.cachePairs() == ours.bruteForce());
    }
    ours.broadphase().getOverlappingPairCache()->setInternalGhostPairCallback(nullptr);
}

TEST_CASE("Broadphase: aabbTest and rayTest see new proxies at once and match brute force", "[broadphase]") {
    SceneGenerator generator(55);
    std::vector<TestBox> boxes = generator.scene(SceneKind::Uniform, 3000);
    BroadphaseHarness ours(std::make_unique<Broadphase>(cpuConfig()), boxes.size() + 1);
    for (std::size_t i = 0; i < boxes.size(); ++i) ours.create(i, boxes[i]);
    ours.step();
    ours.create(boxes.size(), {{1, 1, 1}, {2, 2, 2}});
    CHECK(ours.aabbQuery({{1.5, 1.5, 1.5}, {1.6, 1.6, 1.6}}).count(boxes.size()) == 1);
    CHECK(ours.rayQuery(btVector3(0, 0, 0), btVector3(3, 3, 3)).count(boxes.size()) == 1);
    for (int q = 0; q < 50; ++q) {
        TestBox query = generator.box(SceneKind::MixedSizes, boxes.size());
        REQUIRE(ours.aabbQuery(query) == ours.bruteForceAabb(query));
        const btVector3 from(generator.uniform(-5, 30), generator.uniform(-5, 30), generator.uniform(-5, 30));
        const btVector3 to(generator.uniform(-5, 30), generator.uniform(-5, 30), generator.uniform(-5, 30));
        const auto hits = ours.rayQuery(from, to);
        for (std::size_t i : ours.bruteForceRay(from, to)) REQUIRE(hits.count(i) == 1);
    }
}

TEST_CASE("Broadphase: ids, boxes, bounds, reset and stats", "[broadphase]") {
    Broadphase broadphase(cpuConfig());
    CHECK(broadphase.backend() == Backend::Cpu);
    btCollisionObject objects[3];
    btBroadphaseProxy* a =
        broadphase.createProxy(btVector3(0, 0, 0), btVector3(1, 1, 1), 0, &objects[0], 1, -1, nullptr);
    btBroadphaseProxy* b =
        broadphase.createProxy(btVector3(4, 0, 0), btVector3(5, 2, 1), 0, &objects[1], 1, -1, nullptr);
    CHECK(a->m_uniqueId != b->m_uniqueId);
    CHECK(a->m_clientObject == &objects[0]);
    btVector3 lo, hi;
    broadphase.setAabb(b, btVector3(4, 0, 0), btVector3(6, 2, 1), nullptr);
    broadphase.getAabb(b, lo, hi);
    CHECK(hi == btVector3(6, 2, 1));
    broadphase.getBroadphaseAabb(lo, hi);
    CHECK(lo == btVector3(0, 0, 0));
    CHECK(hi == btVector3(6, 2, 1));
    broadphase.calculateOverlappingPairs(nullptr);
    broadphase.printStats();
    broadphase.resetPool(nullptr); // not empty: no effect
    CHECK(broadphase.proxyCount() == 2);
    broadphase.destroyProxy(a, nullptr);
    broadphase.destroyProxy(b, nullptr);
    broadphase.resetPool(nullptr);
    btBroadphaseProxy* c =
        broadphase.createProxy(btVector3(0, 0, 0), btVector3(1, 1, 1), 0, &objects[2], 1, -1, nullptr);
    CHECK(c->m_uniqueId == 1);
    broadphase.destroyProxy(c, nullptr);
}

TEST_CASE("Broadphase: backend selection", "[broadphase]") {
    SECTION("Cuda without a usable device throws and says why") {
        BroadphaseConfig config;
        config.backend = Backend::Cuda;
        bool usable = true;
        try {
            Broadphase broadphase(config);
        } catch (const std::runtime_error& error) {
            usable = false;
            CHECK(std::string(error.what()).find("Backend::Cuda requested") != std::string::npos);
        }
        if (usable) WARN("a CUDA device is present: the no-device error path was not exercised");
    }
    SECTION("Auto falls back to the CPU when no device is usable") {
        BroadphaseConfig config;
        config.logBackendChoice = false;
        Broadphase broadphase(config);
        CHECK((broadphase.backend() == Backend::Cpu || broadphase.backend() == Backend::Cuda));
    }
    SECTION("BULLETGPU_BACKEND overrides Auto, in any case and with spaces around") {
        const EnvironmentOverride variable("BULLETGPU_BACKEND");
        BroadphaseConfig config;
        config.logBackendChoice = false;
        variable.set("cpu");
        CHECK(Broadphase(config).backend() == Backend::Cpu);
        variable.set(" CPU\t");
        CHECK(Broadphase(config).backend() == Backend::Cpu);
        variable.set(" cuda ");
        CHECK(requestedBackend(config) == Backend::Cuda);
        variable.set("\nAuto ");
        CHECK(requestedBackend(config) == Backend::Auto);
        variable.set("   ");
        CHECK(requestedBackend(config) == Backend::Auto);
        config.backend = Backend::Cpu; // only Auto is overridden
        variable.set("cuda");
        CHECK(requestedBackend(config) == Backend::Cpu);
        config.backend = Backend::Auto;
        variable.set("gpu-please");
        CHECK_THROWS_AS(Broadphase(config), std::runtime_error);
        try {
            Broadphase broadphase(config);
        } catch (const std::runtime_error& error) {
            CHECK(std::string(error.what()).find("BULLETGPU_BACKEND must be cpu, cuda or auto") != std::string::npos);
            CHECK(std::string(error.what()).find("'gpu-please'") != std::string::npos);
        }
    }
}

TEST_CASE("Broadphase: log lines go to the config's sink", "[broadphase]") {
    std::vector<std::string> lines;
    BroadphaseConfig config = cpuConfig();
    config.logSink = [&](const char* line) { lines.emplace_back(line); };
    config.logBackendChoice = true;
    {
        Broadphase broadphase(config);
        broadphase.calculateOverlappingPairs(nullptr);
    }
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].rfind("bulletgpu: CPU backend, ", 0) == 0);
    CHECK(lines[0].find('\n') == std::string::npos);
    config.logBackendChoice = false;
    Broadphase quiet(config);
    CHECK(lines.size() == 1);
}

TEST_CASE("Broadphase: threads are clamped: absurd counts still give exact pairs", "[broadphase]") {
    const int cap = cpuThreads(std::numeric_limits<int>::max());
    CHECK(cap >= BroadphaseConfig::cMinThreadCap);
    CHECK(cap < 100000);
    CHECK(cpuThreads(100000) == cap);
    CHECK(cpuThreads(3) == 3);
    CHECK(cpuThreads(-7) == cpuThreads(BroadphaseConfig::cOpenMpDefaultThreads));
    CHECK(cpuThreads(0) >= 1);

    const int threads = GENERATE(100000, std::numeric_limits<int>::max());
    CAPTURE(threads);
    std::vector<std::string> lines;
    BroadphaseConfig config = cpuConfig();
    config.threads = threads;
    config.logBackendChoice = true;
    config.logSink = [&](const char* line) { lines.emplace_back(line); };
    SceneGenerator generator(71);
    std::vector<TestBox> boxes = generator.scene(SceneKind::Clustered, 600);
    BroadphaseHarness ours(std::make_unique<Broadphase>(config), boxes.size());
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find(std::to_string(cap) + " threads (BroadphaseConfig::threads " + std::to_string(threads) +
                        " clamped)") != std::string::npos);
    for (std::size_t i = 0; i < boxes.size(); ++i) ours.create(i, boxes[i]);
    for (int frame = 0; frame < 3; ++frame) {
        ours.step();
        REQUIRE(ours.cachePairs() == ours.bruteForce());
        for (std::size_t i = 0; i < boxes.size(); ++i) {
            generator.jitter(boxes[i], 0.3);
            ours.move(i, boxes[i]);
        }
    }
    // From 32,768 proxies the CPU backend times its whole team (100,000 threads crashed libgomp here).
    std::vector<TestBox> many = generator.scene(SceneKind::Uniform, 33000);
    BroadphaseHarness big(std::make_unique<Broadphase>(config), many.size());
    BroadphaseHarness reference(std::make_unique<Broadphase>(cpuConfig()), many.size());
    for (std::size_t i = 0; i < many.size(); ++i) {
        big.create(i, many[i]);
        reference.create(i, many[i]);
    }
    for (int frame = 0; frame < 3; ++frame) {
        big.step();
        reference.step();
        REQUIRE(big.cachePairs() == reference.cachePairs());
        for (std::size_t i = 0; i < many.size(); i += 7) {
            generator.jitter(many[i], 0.3);
            big.move(i, many[i]);
            reference.move(i, many[i]);
        }
    }
}

TEST_CASE("Broadphase: standalone proxies may carry any userPtr", "[broadphase]") {
    // Bytes that would read as a ghost object's type, and null: never read as btCollisionObjects.
    std::vector<int> userData(4096, btCollisionObject::CO_GHOST_OBJECT);
    BroadphaseConfig config = cpuConfig();
    config.proxiesFromCollisionWorld = false;
    Broadphase broadphase(config);
    SceneGenerator generator(72);
    std::vector<TestBox> boxes = generator.scene(SceneKind::Uniform, 400);
    const auto vector = [](const double v[3]) {
        return btVector3(static_cast<btScalar>(v[0]), static_cast<btScalar>(v[1]), static_cast<btScalar>(v[2]));
    };
    std::vector<btBroadphaseProxy*> proxies;
    for (std::size_t i = 0; i < boxes.size(); ++i) {
        void* user = i % 3 == 0 ? nullptr : static_cast<void*>(&userData[i]);
        proxies.push_back(broadphase.createProxy(vector(boxes[i].min), vector(boxes[i].max), BOX_SHAPE_PROXYTYPE, user,
                                                 1, -1, nullptr));
        CHECK(proxies.back()->m_clientObject == user);
    }
    using IdPair = std::pair<int, int>;
    const auto cachePairs = [&] {
        std::set<IdPair> pairs;
        btOverlappingPairCache* cache = broadphase.getOverlappingPairCache();
        const btBroadphasePair* array = cache->getOverlappingPairArrayPtr();
        for (int k = 0; k < cache->getNumOverlappingPairs(); ++k) {
            pairs.insert(std::minmax(array[k].m_pProxy0->m_uniqueId, array[k].m_pProxy1->m_uniqueId));
        }
        return pairs;
    };
    const auto bruteForce = [&] {
        std::set<IdPair> pairs;
        for (std::size_t i = 0; i < proxies.size(); ++i) {
            for (std::size_t j = i + 1; j < proxies.size(); ++j) {
                const btBroadphaseProxy* a = proxies[i];
                const btBroadphaseProxy* b = proxies[j];
                bool touch = true;
                for (int axis = 0; axis < 3; ++axis) {
                    touch =
                        touch && a->m_aabbMin[axis] <= b->m_aabbMax[axis] && b->m_aabbMin[axis] <= a->m_aabbMax[axis];
                }
                if (touch) pairs.insert(std::minmax(a->m_uniqueId, b->m_uniqueId));
            }
        }
        return pairs;
    };
    for (int frame = 0; frame < 3; ++frame) {
        broadphase.calculateOverlappingPairs(nullptr);
        const std::set<IdPair> pairs = cachePairs();
        REQUIRE(pairs == bruteForce());
        for (std::size_t i = 0; i < boxes.size(); ++i) {
            generator.jitter(boxes[i], 0.3);
            broadphase.setAabb(proxies[i], vector(boxes[i].min), vector(boxes[i].max), nullptr);
        }
        // No proxy is taken for a ghost: setAabb alone changes no pair.
        CHECK(cachePairs() == pairs);
    }
    for (btBroadphaseProxy* proxy : proxies) {
        broadphase.getOverlappingPairCache()->cleanProxyFromPairs(proxy, nullptr);
        broadphase.destroyProxy(proxy, nullptr);
    }
    CHECK(broadphase.getOverlappingPairCache()->getNumOverlappingPairs() == 0);
}

TEST_CASE("Broadphase: ghosts follow setAabb only for a collision world's proxies", "[broadphase]") {
    BroadphaseConfig config = cpuConfig();
    config.proxiesFromCollisionWorld = false;
    BroadphaseHarness ours(std::make_unique<Broadphase>(config), 4);
    ours.create(0, {{0, 0, 0}, {1, 1, 1}});
    ours.create(1, {{5, 0, 0}, {6, 1, 1}});
    ours.makeGhost(2);
    ours.create(2, {{0.5, 0.5, 0.5}, {1.5, 1.5, 1.5}});
    ours.step();
    REQUIRE(ours.cachePairs() == std::set<ObjectPair>{{0, 2}});
    ours.move(2, {{5.5, 0.5, 0.5}, {6.5, 1.5, 1.5}});
    CHECK(ours.cachePairs() == std::set<ObjectPair>{{0, 2}}); // like any proxy: at the next update
    ours.step();
    CHECK(ours.cachePairs() == std::set<ObjectPair>{{1, 2}});
}

TEST_CASE("Broadphase: the user's pair cache is used and outlives it", "[broadphase]") {
    auto cache = std::make_unique<btHashedOverlappingPairCache>();
    BroadphaseConfig config = cpuConfig();
    config.pairCache = cache.get();
    btCollisionObject objects[2];
    {
        Broadphase broadphase(config);
        CHECK(broadphase.getOverlappingPairCache() == cache.get());
        for (int i = 0; i < 2; ++i) {
            objects[i].setBroadphaseHandle(
                broadphase.createProxy(btVector3(i, 0, 0), btVector3(i + 1, 1, 1), 0, &objects[i], 1, -1, nullptr));
        }
        broadphase.calculateOverlappingPairs(nullptr);
        CHECK(cache->getNumOverlappingPairs() == 1);
        for (int i = 0; i < 2; ++i) {
            btBroadphaseProxy* proxy = objects[i].getBroadphaseHandle();
            broadphase.destroyProxy(proxy, nullptr);
        }
    }
    // The broadphase is gone and the cache is not: deleting it is ours (ASan would see a use after free).
    CHECK(cache->getNumOverlappingPairs() == 0);
}

TEST_CASE("Broadphase: K slabs equal brute force and btSimpleBroadphase under churn", "[broadphase][partition]") {
    const MarginBoxes margins = GENERATE(MarginBoxes::Off, MarginBoxes::On);
    CAPTURE(toString(margins));
    const int slabs = GENERATE(1, 2, 3, 4, 7);
    const SceneKind kind = GENERATE(SceneKind::Uniform, SceneKind::Clustered, SceneKind::OneAxis);
    CAPTURE(slabs, sceneName(kind));
    const std::size_t n = 1500;
    SceneGenerator generator(static_cast<std::uint32_t>(31 * slabs + static_cast<int>(kind)));
    BroadphaseConfig config = cpuConfig(margins);
    config.partitions = slabs;
    config.threads = 2;
    auto broadphase = std::make_unique<Broadphase>(config);
    Broadphase& split = *broadphase;
    BroadphaseHarness ours(std::move(broadphase), 4000);
    BroadphaseHarness simple(std::make_unique<btSimpleBroadphase>(4000), 4000);
    std::vector<TestBox> boxes = generator.scene(kind, n);
    for (std::size_t i = 0; i < n; ++i) {
        ours.create(i, boxes[i]);
        simple.create(i, boxes[i]);
    }
    for (int frame = 0; frame < 8; ++frame) {
        ours.step();
        simple.step();
        CHECK(split.partitions() == slabs);
        REQUIRE(ours.cachePairs() == ours.bruteForce());
        REQUIRE(ours.cachePairs() == simple.cachePairs());
        REQUIRE(ours.cacheHasNoDuplicates());
        for (std::size_t i = 0; i < n; ++i) {
            if (!ours.isLive(i)) continue;
            generator.jitter(boxes[i], frame % 3 == 2 ? 3.0 : 0.05);
            ours.move(i, boxes[i]);
            simple.move(i, boxes[i]);
        }
        for (int k = 0; k < 20; ++k) {
            const std::size_t i = generator.below(static_cast<std::uint32_t>(n));
            if (ours.isLive(i)) {
                ours.destroy(i);
                simple.destroy(i);
            } else {
                boxes[i] = generator.box(kind, n);
                ours.create(i, boxes[i]);
                simple.create(i, boxes[i]);
            }
        }
    }
    split.printStats();
}

TEST_CASE("Broadphase: automatic slabs follow the object count and keep the pairs exact", "[broadphase][partition]") {
    BroadphaseConfig config = cpuConfig();
    config.threads = 2;
    config.cpuSlabObjects = 8000;
    auto broadphase = std::make_unique<Broadphase>(config);
    Broadphase& ours = *broadphase;
    BroadphaseHarness harness(std::move(broadphase), 12000);
    const std::size_t small = 1000, large = 10000;
    SceneGenerator generator(11);
    std::vector<TestBox> boxes = generator.scene(SceneKind::Uniform, large);
    const auto grow = [&](std::size_t from, std::size_t to) {
        for (std::size_t i = from; i < to; ++i) {
            harness.create(i, boxes[i]);
        }
    };
    const auto stepAndCompare = [&] {
        harness.step();
        REQUIRE(harness.cachePairs() == harness.bruteForce());
        REQUIRE(harness.cacheHasNoDuplicates());
    };
    grow(0, small);
    stepAndCompare();
    CHECK(ours.partitions() == 1);
    grow(small, large);
    stepAndCompare();
    CHECK(ours.partitions() == 2);
    for (std::size_t i = 0; i < large; i += 2) {
        generator.jitter(boxes[i], 0.5);
        harness.move(i, boxes[i]);
    }
    stepAndCompare();
    ours.printStats();
    for (std::size_t i = small; i < large; ++i) {
        harness.destroy(i);
    }
    stepAndCompare();
    CHECK(ours.partitions() == 1);
}

TEST_CASE("Broadphase: by default the CPU threads share one sweep at any size", "[broadphase][partition]") {
    for (std::uint32_t objects : {0u, 1000u, 100000u, 10000000u}) {
        const SlabPlan plan = SlabCostModel::plan(objects, false, false, 16, 0, 0, 0, SlabPlan{});
        CHECK(plan.backend == Backend::Cpu);
        CHECK(plan.slabs == 1);
    }
    // A GPU takes over from cGpuObjects, and gives back only below cHysteresis of it.
    const SlabPlan gpu = SlabCostModel::plan(SlabCostModel::cGpuObjects, true, false, 2, 1, 0, 0, SlabPlan{});
    CHECK(gpu.backend == Backend::Cuda);
    const auto hovering = static_cast<std::uint32_t>(SlabCostModel::cGpuObjects * 0.9);
    CHECK(SlabCostModel::plan(hovering, true, false, 2, 1, 0, 0, gpu).backend == Backend::Cuda);
    CHECK(SlabCostModel::plan(hovering, true, false, 2, 1, 0, 0, SlabPlan{}).backend == Backend::Cpu);
    // Several GPUs stay one slab unless gpuSlabObjects asks for a split.
    CHECK(SlabCostModel::plan(10000000, true, false, 2, 4, 0, 0, gpu).slabs == 1);
    CHECK(SlabCostModel::plan(500000, true, false, 2, 4, 0, 500000, gpu).slabs == 4);
}

TEST_CASE("Broadphase: bad partition and device settings are clear errors", "[broadphase][partition]") {
    const auto message = [](const BroadphaseConfig& config) -> std::string {
        try {
            Broadphase broadphase(config);
        } catch (const std::exception& error) {
            return error.what();
        }
        return "";
    };
    BroadphaseConfig config = cpuConfig();
    config.partitions = -1;
    CHECK_THROWS_AS(Broadphase(config), std::invalid_argument);
    config.partitions = 65;
    CHECK(message(config).find("partitions") != std::string::npos);
    config.partitions = 2;
    config.cudaDevice = -1;
    CHECK(message(config).find("cudaDevice") != std::string::npos);
    config.cudaDevice = 0;
    config.devices = {-3};
    CHECK_THROWS_AS(Broadphase(config), std::invalid_argument);
    config.backend = Backend::Cuda;
    config.devices = {0, 97};
    const std::string missing = message(config);
    CHECK(missing.find("Backend::Cuda requested") != std::string::npos);
    CHECK(missing.find("device") != std::string::npos);
}
