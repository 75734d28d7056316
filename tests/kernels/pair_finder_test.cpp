// SPDX-License-Identifier: Zlib
#include "kernels/reference/brute_force.h"
#include "kernels/sap/pair_finder_cpu.h"
#include "support/pair_deltas.h"
#include "support/random_scenes.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <thread>

using namespace bulletgpu;
using namespace bulletgpu::test;

namespace {

constexpr double cInf = std::numeric_limits<double>::infinity();
constexpr double cNaN = std::numeric_limits<double>::quiet_NaN();

/// Runs one update and checks the finder's set and deltas against brute force, and, with a
/// sink, that an update which handed its lost pairs over did so once, on this thread, with
/// the lost pairs of the deltas.
void updateAndCheck(PairFinderCpu& finder, BoxStore& store, bool filterGroups, std::vector<std::uint64_t>& previous,
                    RecordingSink* sink = nullptr) {
    if (sink != nullptr) {
        sink->calls = 0;
        sink->caller = std::this_thread::get_id();
    }
    PairDeltas deltas;
    finder.update(store, filterGroups, deltas);
    REQUIRE(finder.validate());
    const std::vector<std::uint64_t> expected = bruteForcePairs(store, filterGroups);
    REQUIRE(finder.pairs() == expected);
    const PairDeltas wanted = deltasBetween(previous, expected);
    REQUIRE(deltas.found == wanted.found);
    REQUIRE(deltas.lost == wanted.lost);
    if (sink == nullptr) {
        REQUIRE_FALSE(deltas.lostTaken);
    } else if (deltas.lostTaken) {
        REQUIRE(sink->calls == 1);
        REQUIRE(sink->lost == deltas.lost);
        REQUIRE(sink->onCallingThread);
        ++sink->takenUpdates;
    } else {
        REQUIRE(sink->calls == 0);
    }
    previous = expected;
}

void insert(BoxStore& store, std::uint32_t slot, const TestBox& b, std::uint32_t group = 1, std::uint32_t mask = ~0u) {
    store.insert(slot, b.min, b.max, group, mask);
}

/// Inserts every box into slot = its index.
void insertAll(BoxStore& store, const std::vector<TestBox>& boxes) {
    for (std::uint32_t i = 0; i < boxes.size(); ++i) insert(store, i, boxes[i]);
}

/// Moves every box by up to `step` per axis, in the scene and in the store.
void jitterAll(SceneGenerator& generator, std::vector<TestBox>& boxes, BoxStore& store, double step) {
    for (std::uint32_t i = 0; i < boxes.size(); ++i) {
        generator.jitter(boxes[i], step);
        store.update(i, boxes[i].min, boxes[i].max);
    }
}

TestBox makeBox(double x0, double y0, double z0, double x1, double y1, double z1) {
    return TestBox{{x0, y0, z0}, {x1, y1, z1}};
}

} // namespace

TEST_CASE("PairFinderCpu: random scenes equal brute force under churn", "[sap]") {
    const SceneKind kind =
        GENERATE(SceneKind::Uniform, SceneKind::Clustered, SceneKind::OneAxis, SceneKind::MixedSizes);
    const std::size_t n = GENERATE(0, 1, 2, 100, 1000, 5000);
    const bool exact = GENERATE(false, true);
    const bool withSink = GENERATE(false, true);
    CAPTURE(sceneName(kind), n, exact, withSink);
    SceneGenerator generator(static_cast<std::uint32_t>(n * 31 + static_cast<int>(kind)));
    std::vector<TestBox> boxes = generator.scene(kind, n);
    BoxStore store(exact);
    for (std::uint32_t i = 0; i < n; ++i) insert(store, i, boxes[i]);
    PairFinderCpu finder(2);
    RecordingSink recording;
    RecordingSink* sink = withSink ? &recording : nullptr;
    finder.setLostPairSink(sink);
    std::vector<std::uint64_t> previous;
    updateAndCheck(finder, store, true, previous, sink);

    for (int frame = 0; frame < 6; ++frame) {
        for (std::uint32_t i = 0; i < n; ++i) {
            if (!store.isLive(i)) continue;
            generator.jitter(boxes[i], 0.05);
            store.update(i, boxes[i].min, boxes[i].max);
        }
        if (n > 2) {
            // Churn: destroy a few, create a few (reusing slots), teleport a few.
            for (int k = 0; k < 3; ++k) {
                const std::uint32_t slot = generator.below(static_cast<std::uint32_t>(n));
                if (store.isLive(slot)) {
                    store.erase(slot);
                } else {
                    boxes[slot] = generator.box(kind, n);
                    insert(store, slot, boxes[slot]);
                }
                const std::uint32_t teleported = generator.below(static_cast<std::uint32_t>(n));
                if (store.isLive(teleported)) {
                    boxes[teleported] = generator.box(kind, n);
                    store.update(teleported, boxes[teleported].min, boxes[teleported].max);
                }
            }
        }
        updateAndCheck(finder, store, true, previous, sink);
    }
}

TEST_CASE("PairFinderCpu: refilled cells equal brute force as boxes move, cross cells, turn huge or NaN, come and go",
          "[sap]") {
    const int threads = GENERATE(1, 2);
    const bool exact = GENERATE(false, true);
    // With a sink, each full update finds the lost pairs before its sweep, by testing the last
    // pair set on the new boxes, and hands them over while the sweep runs.
    const bool withSink = GENERATE(false, true);
    CAPTURE(threads, exact, withSink);
    constexpr std::uint32_t n = 3000;
    SceneGenerator generator(77 + static_cast<std::uint32_t>(threads));
    std::vector<TestBox> boxes = generator.scene(SceneKind::Uniform, n);
    BoxStore store(exact);
    for (std::uint32_t i = 0; i < n; ++i) insert(store, i, boxes[i]);
    PairFinderCpu finder(threads);
    RecordingSink recording;
    RecordingSink* sink = withSink ? &recording : nullptr;
    finder.setLostPairSink(sink);
    std::vector<std::uint64_t> previous;
    updateAndCheck(finder, store, true, previous, sink);

    int refilled = 0;
    for (int frame = 1; frame <= 40; ++frame) {
        CAPTURE(frame);
        // Every box moves a little, as in a simulation, so every update is a full one.
        for (std::uint32_t i = 0; i < store.size(); ++i) {
            if (!store.isLive(i) || std::isnan(boxes[i].min[0])) continue;
            generator.jitter(boxes[i], 0.05);
            store.update(i, boxes[i].min, boxes[i].max);
        }
        const std::uint32_t a = generator.below(n), b = generator.below(n);
        switch (frame % 8) {
            case 1: // a box turns huge, another stretches across a few cells
                boxes[a].min[1] = -1e18;
                boxes[a].max[1] = 1e18;
                boxes[b].max[2] += 6;
                break;
            case 2: // one turns NaN, another inverted
                boxes[a].min[0] = cNaN;
                boxes[b].min[1] = boxes[b].max[1] + 1;
                break;
            case 3: // destroy one, create one in a new slot
                if (store.isLive(a)) store.erase(a);
                boxes.push_back(generator.box(SceneKind::Uniform, n));
                insert(store, store.size(), boxes.back());
                break;
            case 4: // filters change
                if (store.isLive(a)) store.setFilter(a, 2, 2);
                break;
            case 5: // everything that went wrong is mended
                for (std::uint32_t i = 0; i < store.size(); ++i) {
                    if (!store.isLive(i)) continue;
                    TestBox& box = boxes[i];
                    if (std::isnan(box.min[0]) || box.max[1] - box.min[1] > 3 || box.max[1] < box.min[1] ||
                        box.max[2] - box.min[2] > 3) {
                        box = generator.box(SceneKind::Uniform, n);
                    }
                }
                break;
            default:
                break;
        }
        for (std::uint32_t slot : {a, b}) {
            if (store.isLive(slot)) store.update(slot, boxes[slot].min, boxes[slot].max);
        }
        if (frame % 8 == 5) {
            for (std::uint32_t i = 0; i < store.size(); ++i) {
                if (store.isLive(i)) store.update(i, boxes[i].min, boxes[i].max);
            }
        }
        if (frame == 30) {
            // A quarter of the boxes jump elsewhere: too many changed cells, so the cells are sorted again.
            for (std::uint32_t i = 0; i < n; i += 4) {
                if (!store.isLive(i)) continue;
                boxes[i] = generator.box(SceneKind::Uniform, n);
                store.update(i, boxes[i].min, boxes[i].max);
            }
        }
        updateAndCheck(finder, store, true, previous, sink);
        if (frame == 30) CHECK_FALSE(finder.stats().cellsRefilled);
        refilled += finder.stats().cellsRefilled ? 1 : 0;
    }
    CHECK(refilled >= 30);
    if (withSink) CHECK(recording.takenUpdates == 41);
}

TEST_CASE("SapGridChooser: a scene as wide on every axis keeps its sweep axis and its grid as the boxes drift",
          "[sap]") {
    // Resamples of a cube-shaped scene see about the same spread on all three axes; the kept
    // axis stays unless another is wider by more than the tolerance, so the cells can be refilled.
    SceneGenerator generator(31);
    std::vector<TestBox> boxes = generator.scene(SceneKind::Uniform, 20000);
    BoxStore store;
    insertAll(store, boxes);
    SapGridChooser chooser;
    const SapGrid first = chooser.choose(store, store.liveCount());
    int changes = 0;
    for (int update = 0; update < 400; ++update) {
        jitterAll(generator, boxes, store, 0.05);
        changes += chooser.choose(store, store.liveCount()) == first ? 0 : 1;
    }
    CHECK(changes == 0);
}

TEST_CASE("PairFinderCpu: 20,000 boxes equal brute force", "[sap][large]") {
    SceneGenerator generator(20000);
    const auto boxes = generator.scene(SceneKind::Uniform, 20000);
    BoxStore store;
    for (std::uint32_t i = 0; i < boxes.size(); ++i) insert(store, i, boxes[i]);
    PairFinderCpu finder(2);
    std::vector<std::uint64_t> previous;
    updateAndCheck(finder, store, true, previous);
    CHECK(finder.stats().cells > 1);
}

/// Inserts the named edge cases' boxes after the scene's: touching, zero-size, identical, huge,
/// infinite, NaN, inverted, far out and finer than float.
void insertEdgeBoxes(BoxStore& store, std::uint32_t& slot) {
    for (const TestBox& b :
         {makeBox(100, 100, 100, 101, 101, 101), makeBox(101, 100, 100, 102, 101, 101),
          makeBox(101, 101, 101, 102, 102, 102), makeBox(5, 5, 5, 5, 5, 5), makeBox(5, 5, 5, 5, 5, 5),
          makeBox(7, 7, 7, 8, 8, 8), makeBox(7, 7, 7, 8, 8, 8), makeBox(-1e18, -1e18, -1e18, 1e18, 0, 1e18),
          makeBox(-1e30, 3, -1e30, 1e30, 4, 1e30), makeBox(-cInf, -cInf, -cInf, cInf, cInf, cInf),
          makeBox(-cInf, 0, 0, 0, 1, 1), makeBox(cNaN, 0, 0, 1, 1, 1), makeBox(3, 3, 3, 2, 4, 4),
          makeBox(1e12, 1e12, 1e12, 1e12 + 1, 1e12 + 1, 1e12 + 1),
          makeBox(1e12, 1e12, 1e12, 1e12 + 1, 1e12 + 1, 1e12 + 1), makeBox(1, 1, 1, 1.0000000001, 2, 2),
          makeBox(1.0000000001, 1, 1, 3, 2, 2)}) {
        insert(store, slot++, b);
    }
}

TEST_CASE("gridOraclePairs: equals brute force on every scene kind with the edge cases", "[sap]") {
    const SceneKind kind =
        GENERATE(SceneKind::Uniform, SceneKind::Clustered, SceneKind::OneAxis, SceneKind::MixedSizes);
    const double width = GENERATE(0.3, 1.0, 4.0);
    BoxStore store(GENERATE(false, true));
    CAPTURE(sceneName(kind), width);
    SceneGenerator generator(31 + static_cast<std::uint32_t>(kind));
    std::uint32_t slot = 0;
    for (const TestBox& b : generator.scene(kind, 1500)) {
        insert(store, slot, b, 1 + slot % 3, slot % 5 == 0 ? 1u : ~0u);
        ++slot;
    }
    insertEdgeBoxes(store, slot);
    store.erase(17);
    for (const bool filterGroups : {false, true}) {
        const std::vector<std::uint64_t> expected = bruteForcePairs(store, filterGroups);
        CHECK(expected.size() > 100);
        REQUIRE(gridOraclePairs(store, filterGroups, width) == expected);
    }
}

TEST_CASE("PairFinderCpu: a million moving boxes equal the grid oracle", "[sap][large]") {
    // The benchmark's scene: unit cubes at 0.25 per unit^3, with the edge cases' boxes among them.
    constexpr std::uint32_t n = 1000000;
    SceneGenerator generator(1000000);
    std::vector<TestBox> boxes = generator.scene(SceneKind::Uniform, n);
    BoxStore store;
    insertAll(store, boxes);
    std::uint32_t slot = n;
    insertEdgeBoxes(store, slot);
    PairFinderCpu finder(2);
    std::vector<std::uint64_t> previous;
    for (int frame = 0; frame < 3; ++frame) {
        PairDeltas deltas;
        finder.update(store, true, deltas);
        const std::vector<std::uint64_t> expected = gridOraclePairs(store, true, 1.5); // cubes rounded outward
        REQUIRE(expected.size() > n / 2);
        REQUIRE(finder.pairs() == expected);
        const PairDeltas wanted = deltasBetween(previous, expected);
        REQUIRE(deltas.found == wanted.found);
        REQUIRE(deltas.lost == wanted.lost);
        previous = expected;
        jitterAll(generator, boxes, store, 0.05);
    }
}

TEST_CASE("PairFinderCpu: a slab's finder (an ownership window) reports its lost pairs in the deltas alone",
          "[sap][partition]") {
    SceneGenerator generator(5);
    std::vector<TestBox> boxes = generator.scene(SceneKind::Uniform, 2000);
    BoxStore store;
    insertAll(store, boxes);
    PairFinderCpu finder(2);
    finder.setOwnership(PairOwnership{0, 0.0f, HUGE_VALF});
    RecordingSink sink;
    finder.setLostPairSink(&sink);
    std::size_t lost = 0;
    for (int frame = 0; frame < 6; ++frame) {
        jitterAll(generator, boxes, store, 0.2);
        PairDeltas deltas;
        finder.update(store, true, deltas);
        REQUIRE(sink.calls == 0);
        REQUIRE_FALSE(deltas.lostTaken);
        lost += deltas.lost.size();
    }
    CHECK(lost > 0);
}

TEST_CASE("PairFinderCpu: group and mask filtering", "[sap]") {
    SceneGenerator generator(5);
    const auto boxes = generator.scene(SceneKind::Uniform, 2000);
    BoxStore store;
    for (std::uint32_t i = 0; i < boxes.size(); ++i) insert(store, i, boxes[i], 1u << (i % 3), (i % 2) ? ~0u : 3u);
    PairFinderCpu finder(2);
    std::vector<std::uint64_t> previous;
    updateAndCheck(finder, store, true, previous);
    // Turning filtering off must recompute even though no box changed.
    const auto filtered = finder.pairs().size();
    updateAndCheck(finder, store, false, previous);
    CHECK(finder.pairs().size() > filtered);
}

TEST_CASE("PairFinderCpu: named edge cases", "[sap]") {
    BoxStore store(GENERATE(false, true));
    PairFinderCpu finder(2);
    std::vector<std::uint64_t> previous;
    SceneGenerator generator(3);
    auto crowd = generator.scene(SceneKind::Uniform, 300); // enough boxes for a real grid
    std::uint32_t slot = 0;
    for (const auto& b : crowd) insert(store, slot++, b);

    SECTION("1. touching faces, edges and corners pair") {
        insert(store, slot++, makeBox(100, 100, 100, 101, 101, 101));
        insert(store, slot++, makeBox(101, 100, 100, 102, 101, 101));      // face
        insert(store, slot++, makeBox(101, 101, 100, 102, 102, 101));      // edge
        insert(store, slot++, makeBox(101, 101, 101, 102, 102, 102));      // corner
        insert(store, slot++, makeBox(101.0001, 100, 100, 102, 101, 101)); // gap
    }
    SECTION("2. zero-size boxes") {
        insert(store, slot++, makeBox(5, 5, 5, 5, 5, 5));
        insert(store, slot++, makeBox(5, 5, 5, 5, 5, 5));
        insert(store, slot++, makeBox(4, 4, 4, 5, 5, 5));
    }
    SECTION("3. identical boxes") {
        for (int i = 0; i < 50; ++i) insert(store, slot++, makeBox(7, 7, 7, 8, 8, 8));
    }
    SECTION("4. huge boxes: planes at +-1e18 pair with everything they touch and each other") {
        insert(store, slot++, makeBox(-1e18, -1e18, -1e18, 1e18, 0, 1e18));
        insert(store, slot++, makeBox(-1e18, -1e18, -1e18, 1e18, 1e18, 1e18));
        insert(store, slot++, makeBox(-1e30, 3, -1e30, 1e30, 4, 1e30));
    }
    SECTION("5. infinities behave as numbers") {
        insert(store, slot++, makeBox(-cInf, -cInf, -cInf, cInf, cInf, cInf));
        insert(store, slot++, makeBox(-cInf, 0, 0, 0, 1, 1));
        insert(store, slot++, makeBox(cInf, cInf, cInf, cInf, cInf, cInf));
    }
    SECTION("6. NaN and inverted boxes overlap nothing") {
        insert(store, slot++, makeBox(cNaN, 0, 0, 1, 1, 1));
        insert(store, slot++, makeBox(0, 0, 0, 1, cNaN, 1));
        insert(store, slot++, makeBox(cNaN, cNaN, cNaN, cNaN, cNaN, cNaN));
        insert(store, slot++, makeBox(3, 3, 3, 2, 4, 4));
    }
    SECTION("7. far outliers") {
        insert(store, slot++, makeBox(1e12, 1e12, 1e12, 1e12 + 1, 1e12 + 1, 1e12 + 1));
        insert(store, slot++, makeBox(1e12, 1e12, 1e12, 1e12 + 1, 1e12 + 1, 1e12 + 1));
        insert(store, slot++, makeBox(-5e9, 0, 0, -5e9 + 1, 1, 1));
    }
    SECTION("8. gaps below float precision are decided exactly") {
        insert(store, slot++, makeBox(1, 1, 1, 1.0000000001, 2, 2));
        insert(store, slot++, makeBox(1.0000000002, 1, 1, 3, 2, 2)); // separate in double, touching in float
        insert(store, slot++, makeBox(1.0000000001, 1, 1, 3, 2, 2)); // exactly touching in double
    }
    updateAndCheck(finder, store, true, previous);
    // Removing everything leaves no pairs.
    for (std::uint32_t s = 0; s < store.size(); ++s) {
        if (store.isLive(s)) store.erase(s);
    }
    updateAndCheck(finder, store, true, previous);
    CHECK(finder.pairs().empty());
}

TEST_CASE("PairFinderCpu: nothing changed skips the work", "[sap]") {
    SceneGenerator generator(9);
    const auto boxes = generator.scene(SceneKind::Uniform, 500);
    BoxStore store;
    for (std::uint32_t i = 0; i < boxes.size(); ++i) insert(store, i, boxes[i]);
    PairFinderCpu finder(1);
    PairDeltas deltas;
    finder.update(store, true, deltas);
    for (std::uint32_t i = 0; i < boxes.size(); ++i) store.update(i, boxes[i].min, boxes[i].max);
    finder.update(store, true, deltas);
    CHECK(finder.stats().skipped);
    CHECK(deltas.found.empty());
    CHECK(deltas.lost.empty());
}

TEST_CASE("PairFinderCpu: edits shift the starting point of the next difference", "[sap]") {
    BoxStore store;
    insert(store, 0, makeBox(0, 0, 0, 1, 1, 1));
    insert(store, 1, makeBox(0.5, 0.5, 0.5, 2, 2, 2));
    insert(store, 2, makeBox(10, 10, 10, 11, 11, 11));
    PairFinderCpu finder(1);
    PairDeltas deltas;
    finder.update(store, true, deltas);
    REQUIRE(deltas.found == std::vector<std::uint64_t>{pairKey(0, 1)});
    // The caller refused pair (0,1) and recorded (1,2) from elsewhere.
    finder.applyEdits({pairKey(1, 2)}, {pairKey(0, 1)});
    finder.update(store, true, deltas);
    CHECK(deltas.found == std::vector<std::uint64_t>{pairKey(0, 1)});
    CHECK(deltas.lost == std::vector<std::uint64_t>{pairKey(1, 2)});
}

TEST_CASE("ThreadTuner: probes one thread against the team and keeps the faster", "[sap]") {
    ThreadTuner tuner(4);
    int updates = 0;
    auto run = [&](double singleMs, double teamMs) {
        const int threads = tuner.threadsForNextUpdate();
        tuner.record(threads == 1 ? singleMs : teamMs);
        ++updates;
        return threads;
    };
    CHECK(run(10, 5) == 4);
    CHECK(run(10, 5) == 4);
    CHECK(run(10, 5) == 1); // probe: one thread
    CHECK(run(10, 5) == 4); // probe: the team, faster
    CHECK(run(10, 5) == 4);
    while (updates % ThreadTuner::cProbePeriod != 2) run(10, 5); // the next probe
    CHECK(run(10, 50) == 1);                                     // probe: one thread
    CHECK(run(10, 50) == 4);                                     // probe: the team, now slower (its cores are busy)
    CHECK(run(10, 50) == 1);
    CHECK(ThreadTuner(1).threadsForNextUpdate() == 1);
}
