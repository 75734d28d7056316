// SPDX-License-Identifier: Zlib
#include "kernels/partition/partitioned_pair_finder.h"
#include "kernels/reference/brute_force.h"
#include "kernels/sap/margin_pair_finder.h"
#include "kernels/sap/pair_finder_cpu.h"
#include "support/pair_deltas.h"
#include "support/random_scenes.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <stdexcept>

using namespace bulletgpu;
using namespace bulletgpu::test;

namespace {

constexpr double cInf = std::numeric_limits<double>::infinity();
constexpr double cNaN = std::numeric_limits<double>::quiet_NaN();

/// Checks a finder's deltas and pair set against brute force (pairs the window owns) after one update.
void checkUpdate(const MarginPairFinder& finder, const PairDeltas& deltas, const BoxStore& store,
                 std::vector<std::uint64_t>& previous, const PairOwnership& window = {}) {
    std::vector<std::uint64_t> expected = bruteForcePairs(store, true);
    if (window.axis >= 0) {
        const float* min = store.minData(window.axis);
        expected.erase(std::remove_if(expected.begin(), expected.end(),
                                      [&](std::uint64_t key) {
                                          return !pairOwned(window, min[pairLow(key)], min[pairHigh(key)]);
                                      }),
                       expected.end());
    }
    REQUIRE(finder.validate(store));
    REQUIRE(finder.pairs() == expected);
    REQUIRE(finder.pairCount() == expected.size());
    const PairDeltas wanted = deltasBetween(previous, expected);
    REQUIRE(deltas.found == wanted.found);
    REQUIRE(deltas.lost == wanted.lost);
    previous = expected;
}

/// A scene in which every box drifts at its own velocity (up to `speed` per axis and frame),
/// and now and then one is teleported, destroyed, created, refiltered, or given a NaN, an
/// infinite or a scene-wide box.
class DriftingScene {
public:
    DriftingScene(SceneKind kind, std::size_t count, bool exact, double speed, std::uint32_t seed)
        : store(exact), m_kind(kind), m_generator(seed), m_boxes(m_generator.scene(kind, count)), m_velocity(count) {
        for (std::uint32_t i = 0; i < m_boxes.size(); ++i) {
            store.insert(i, m_boxes[i].min, m_boxes[i].max, 1, ~0u);
            for (double& v : m_velocity[i].v) v = m_generator.uniform(-speed, speed);
        }
    }

    /// Moves every live box, then makes `events` random changes of other kinds.
    void step(int events) {
        const auto n = static_cast<std::uint32_t>(m_boxes.size());
        for (std::uint32_t i = 0; i < n; ++i) {
            if (!store.isLive(i)) continue;
            for (int axis = 0; axis < 3; ++axis) {
                m_boxes[i].min[axis] += m_velocity[i].v[axis];
                m_boxes[i].max[axis] += m_velocity[i].v[axis];
            }
            store.update(i, m_boxes[i].min, m_boxes[i].max);
        }
        for (int k = 0; k < events; ++k) {
            const std::uint32_t slot = m_generator.below(n);
            if (!store.isLive(slot)) {
                m_boxes[slot] = m_generator.box(m_kind, n);
                store.insert(slot, m_boxes[slot].min, m_boxes[slot].max, 1, ~0u);
                continue;
            }
            switch (m_generator.below(7)) {
                case 0:
                    m_boxes[slot] = m_generator.box(m_kind, n);
                    break;
                case 1:
                    m_boxes[slot] = TestBox{{-1e18, -1e18, -1e18}, {1e18, 1e18, 1e18}};
                    break;
                case 2:
                    m_boxes[slot].max[0] = cInf;
                    break;
                case 3:
                    m_boxes[slot].min[1] = cNaN;
                    break;
                case 4:
                    store.setFilter(slot, 1u << m_generator.below(3), m_generator.below(2) ? ~0u : 3u);
                    continue;
                case 5:
                    m_boxes[slot] = m_generator.box(m_kind, n);
                    break; // back to a usable box
                default:
                    store.erase(slot);
                    continue;
            }
            store.update(slot, m_boxes[slot].min, m_boxes[slot].max);
        }
    }

    BoxStore store;

private:
    struct Velocity {
        double v[3];
    };
    SceneKind m_kind;
    SceneGenerator m_generator;
    std::vector<TestBox> m_boxes;
    std::vector<Velocity> m_velocity;
};

/// Runs `frames` updates of the finder, the scene stepping with `events` extra changes before
/// every update but the first, and checks each against brute force.
void runChecked(MarginPairFinder& finder, DriftingScene& scene, int frames, int events) {
    std::vector<std::uint64_t> previous;
    for (int frame = 0; frame < frames; ++frame) {
        CAPTURE(frame);
        if (frame > 0) scene.step(events);
        PairDeltas deltas;
        finder.update(scene.store, true, deltas);
        checkUpdate(finder, deltas, scene.store, previous);
    }
}

} // namespace

TEST_CASE("MarginPairFinder: margin boxes give brute force's pairs and deltas on every frame", "[sap]") {
    const SceneKind kind =
        GENERATE(SceneKind::Uniform, SceneKind::Clustered, SceneKind::OneAxis, SceneKind::MixedSizes);
    const bool exact = GENERATE(false, true);
    const double speed = GENERATE(0.002, 0.05);
    CAPTURE(sceneName(kind), exact, speed);
    DriftingScene scene(kind, 2500, exact, speed, 7 + static_cast<std::uint32_t>(kind));
    MarginPairFinder finder(std::make_unique<PairFinderCpu>(2), 2, MarginBoxes::On);
    std::vector<std::uint64_t> previous;
    int quietFrames = 0, waves = 0; // frames in which a few boxes, or every box, got a new margin box
    for (int frame = 0; frame < 30; ++frame) {
        CAPTURE(frame);
        if (frame > 0) scene.step(frame % 7 == 0 ? 12 : 1);
        PairDeltas deltas;
        finder.update(scene.store, true, deltas);
        checkUpdate(finder, deltas, scene.store, previous);
        REQUIRE(finder.stats().margins);
        quietFrames += finder.stats().marginEscapes < 2500 / 32 ? 1 : 0;
        waves += finder.stats().marginEscapes >= 2000 ? 1 : 0;
    }
    CHECK(waves >= 2);
    if (speed < 0.01) CHECK(quietFrames > 20); // slow boxes stay inside their margin boxes
}

TEST_CASE("MarginPairFinder: hands the lost pairs to a sink only while it sweeps the real boxes", "[sap]") {
    const bool margins = GENERATE(false, true);
    CAPTURE(margins);
    DriftingScene scene(SceneKind::Uniform, 3000, false, 0.03, 61);
    MarginPairFinder finder(std::make_unique<PairFinderCpu>(2), 2, margins ? MarginBoxes::On : MarginBoxes::Off);
    RecordingSink sink;
    finder.setLostPairSink(&sink);
    std::vector<std::uint64_t> previous;
    int taken = 0;
    for (int frame = 0; frame < 10; ++frame) {
        CAPTURE(frame);
        if (frame > 0) scene.step(2);
        sink.calls = 0;
        PairDeltas deltas;
        finder.update(scene.store, true, deltas);
        checkUpdate(finder, deltas, scene.store, previous);
        if (margins) {
            REQUIRE(sink.calls == 0);
            REQUIRE_FALSE(deltas.lostTaken);
        } else if (deltas.lostTaken) {
            REQUIRE(sink.calls == 1);
            REQUIRE(sink.lost == deltas.lost);
            ++taken;
        } else {
            REQUIRE(sink.calls == 0);
        }
    }
    if (!margins) CHECK(taken >= 9);
}

TEST_CASE("MarginPairFinder: large scenes re-test and refresh on several threads", "[sap]") {
    // 10,000 boxes, all moving: the refresh, the merge and the re-tests split across two threads.
    const bool exact = GENERATE(false, true);
    CAPTURE(exact);
    DriftingScene scene(SceneKind::Uniform, 10000, exact, 0.03, 41);
    MarginPairFinder finder(std::make_unique<PairFinderCpu>(2), 2, MarginBoxes::On);
    runChecked(finder, scene, 8, 3);
    CHECK(finder.candidates().size() >= 8192);
}

TEST_CASE("MarginPairFinder: margin boxes over slabs", "[sap][partition]") {
    const int slabs = GENERATE(2, 3);
    CAPTURE(slabs);
    DriftingScene scene(SceneKind::Uniform, 3000, false, 0.02, 29);
    MarginPairFinder finder(createPartitionedCpuPairFinder(slabs, 2), 2, MarginBoxes::On);
    runChecked(finder, scene, 20, 2);
    CHECK(finder.stats().partitions == slabs);
}

TEST_CASE("MarginPairFinder: switching ways, edits and resets keep the pairs exact", "[sap]") {
    DriftingScene scene(SceneKind::Clustered, 2000, false, 0.01, 53);
    MarginPairFinder finder(std::make_unique<PairFinderCpu>(2), 2, MarginBoxes::Off);
    std::vector<std::uint64_t> previous;
    for (int frame = 0; frame < 40; ++frame) {
        CAPTURE(frame);
        if (frame % 5 == 0) finder.setPolicy(frame % 10 == 0 ? MarginBoxes::On : MarginBoxes::Off);
        if (frame % 4 == 3 && !previous.empty()) {
            // Refuse one pair (it must be found again) and add one that does not overlap (it must be lost).
            const std::uint64_t refused = previous[previous.size() / 2];
            std::uint64_t foreign = pairKey(0, 1);
            for (std::uint32_t b = 2; std::binary_search(previous.begin(), previous.end(), foreign); ++b) {
                foreign = pairKey(0, b);
            }
            finder.applyEdits({foreign}, {refused});
            PairDeltas deltas;
            finder.update(scene.store, true, deltas);
            std::vector<std::uint64_t> edited = previous;
            edited.erase(std::find(edited.begin(), edited.end(), refused));
            edited.insert(std::lower_bound(edited.begin(), edited.end(), foreign), foreign);
            const PairDeltas wanted = deltasBetween(edited, bruteForcePairs(scene.store, true));
            CHECK(std::binary_search(deltas.found.begin(), deltas.found.end(), refused));
            CHECK(deltas.found == wanted.found);
            CHECK(deltas.lost == wanted.lost);
            previous = bruteForcePairs(scene.store, true);
        }
        if (frame == 23) {
            finder.reset();
            previous.clear();
        }
        scene.step(2);
        PairDeltas deltas;
        finder.update(scene.store, true, deltas);
        checkUpdate(finder, deltas, scene.store, previous);
    }
}

TEST_CASE("MarginPairFinder: the ownership window applies to the real boxes", "[sap][partition]") {
    const bool margins = GENERATE(false, true);
    CAPTURE(margins);
    DriftingScene scene(SceneKind::Uniform, 2000, false, 0.05, 61);
    MarginPairFinder finder(std::make_unique<PairFinderCpu>(1), 1, margins ? MarginBoxes::On : MarginBoxes::Off);
    const PairOwnership window{0, 4.0f, 12.0f};
    finder.setOwnership(window);
    std::vector<std::uint64_t> previous;
    for (int frame = 0; frame < 12; ++frame) {
        CAPTURE(frame);
        if (frame > 0) scene.step(1);
        if (frame == 6) finder.setPolicy(margins ? MarginBoxes::Off : MarginBoxes::On);
        PairDeltas deltas;
        finder.update(scene.store, true, deltas);
        checkUpdate(finder, deltas, scene.store, previous, window);
    }
}

TEST_CASE("MarginPairFinder: the filter setting and finders without host pairs", "[sap]") {
    DriftingScene scene(SceneKind::Uniform, 1500, false, 0.02, 71);
    MarginPairFinder finder(std::make_unique<PairFinderCpu>(2), 2, MarginBoxes::On);
    std::vector<std::uint64_t> previous;
    for (int frame = 0; frame < 10; ++frame) {
        CAPTURE(frame);
        scene.step(4);
        const bool filterGroups = frame % 3 != 1;
        PairDeltas deltas;
        finder.update(scene.store, filterGroups, deltas);
        const std::vector<std::uint64_t> expected = bruteForcePairs(scene.store, filterGroups);
        REQUIRE(finder.pairs() == expected);
        const PairDeltas wanted = deltasBetween(previous, expected);
        REQUIRE(deltas.found == wanted.found);
        REQUIRE(deltas.lost == wanted.lost);
        previous = expected;
    }
    CHECK_THROWS_AS(MarginPairFinder(nullptr, 1, MarginBoxes::On), std::invalid_argument);
}

TEST_CASE("MarginChooser: trials of both ways, then the faster runs, longer each time it wins", "[sap]") {
    CHECK(MarginChooser(MarginBoxes::On).useMargins());
    CHECK_FALSE(MarginChooser(MarginBoxes::Off).useMargins());
    MarginChooser fixed(MarginBoxes::On);
    for (int k = 0; k < 1000; ++k) CHECK_FALSE(fixed.record(k % 2 ? 1.0 : 50.0));

    MarginChooser chooser(MarginBoxes::Auto);
    double costOff = 10.0, costOn = 2.0;
    std::vector<int> stretches; // updates made each way before each switch
    std::vector<bool> ways;
    int updates = 0;
    for (int k = 0; k < 3000; ++k) {
        if (k == 1500) costOn = 30.0; // the scene speeds up: margins start to lose
        const bool way = chooser.useMargins();
        // The updates just after a switch cost more; the chooser leaves them out.
        const double cost = (way ? costOn : costOff) * (updates < MarginChooser::cSettleUpdates ? 5.0 : 1.0);
        ++updates;
        if (chooser.record(cost)) {
            stretches.push_back(updates);
            ways.push_back(way);
            updates = 0;
        }
    }
    const int trial = MarginChooser::cSettleUpdates + MarginChooser::cTrialUpdates;
    REQUIRE(stretches.size() >= 6);
    // Off is tried, then margins, which win and run; Off is tried again, margins run twice as long.
    CHECK(ways[0] == false);
    CHECK(stretches[0] == trial);
    CHECK(ways[1] == true);
    CHECK(stretches[1] == trial + MarginChooser::cFirstRun);
    CHECK(ways[2] == false);
    CHECK(stretches[2] == trial);
    CHECK(ways[3] == true);
    CHECK(stretches[3] == 2 * MarginChooser::cFirstRun);
    // After the scene sped up, the chooser ends without margins.
    CHECK_FALSE(chooser.useMargins());
}
