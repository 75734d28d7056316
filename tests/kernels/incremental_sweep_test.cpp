// SPDX-License-Identifier: Zlib
#include "kernels/partition/partitioned_pair_finder.h"
#include "kernels/reference/brute_force.h"
#include "kernels/sap/pair_finder_cpu.h"
#include "support/pair_deltas.h"
#include "support/random_scenes.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>

using namespace bulletgpu;
using namespace bulletgpu::test;

namespace {

constexpr double cInf = std::numeric_limits<double>::infinity();
constexpr double cNaN = std::numeric_limits<double>::quiet_NaN();

/// Checks a finder's deltas and pair set against brute force after one update.
void checkUpdate(const std::vector<std::uint64_t>& pairs, const PairDeltas& deltas, const BoxStore& store,
                 bool filterGroups, std::vector<std::uint64_t>& previous) {
    const std::vector<std::uint64_t> expected = bruteForcePairs(store, filterGroups);
    REQUIRE(pairs == expected);
    const PairDeltas wanted = deltasBetween(previous, expected);
    REQUIRE(deltas.found == wanted.found);
    REQUIRE(deltas.lost == wanted.lost);
    previous = expected;
}

/// Counts the updates of each kind a finder made.
struct UpdateKinds {
    int incremental = 0;
    int full = 0;

    void record(const PairFinderStats& stats) {
        if (stats.skipped) return;
        (stats.movingObjects > 0 ? incremental : full) += 1;
    }
};

/// A scene in which only some boxes change per frame: most rest, as in a game level.
class RestingScene {
public:
    RestingScene(SceneKind kind, std::size_t count, bool exact, std::uint32_t seed)
        : store(exact), m_kind(kind), m_generator(seed), m_boxes(m_generator.scene(kind, count)) {
        for (std::uint32_t i = 0; i < m_boxes.size(); ++i) store.insert(i, m_boxes[i].min, m_boxes[i].max, 1, ~0u);
    }

    /// Changes about `share` of the boxes: small moves mostly, plus teleports, a destroyed and a
    /// created box, a filter change, and now and then a NaN, an infinite or a scene-wide box.
    void step(double share) {
        const auto n = static_cast<std::uint32_t>(m_boxes.size());
        const auto changes = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(share * n));
        for (std::uint32_t k = 0; k < changes; ++k) {
            const std::uint32_t slot = m_generator.below(n);
            if (!store.isLive(slot)) continue;
            const std::uint32_t what = m_generator.below(40);
            if (what < 30) {
                m_generator.jitter(m_boxes[slot], 0.05);
            } else if (what < 35) {
                m_boxes[slot] = m_generator.box(m_kind, n);
            } else if (what == 35) {
                m_boxes[slot] = TestBox{{-1e18, -1e18, -1e18}, {1e18, 1e18, 1e18}};
            } else if (what == 36) {
                m_boxes[slot].max[0] = cInf;
            } else if (what == 37) {
                m_boxes[slot].min[1] = cNaN;
            } else if (what == 38) {
                store.setFilter(slot, 1u << m_generator.below(3), m_generator.below(2) ? ~0u : 3u);
                continue;
            } else {
                store.erase(slot);
                continue;
            }
            store.update(slot, m_boxes[slot].min, m_boxes[slot].max);
        }
        const std::uint32_t revived = m_generator.below(n);
        if (!store.isLive(revived)) {
            m_boxes[revived] = m_generator.box(m_kind, n);
            store.insert(revived, m_boxes[revived].min, m_boxes[revived].max, 1, ~0u);
        }
    }

    BoxStore store;

private:
    SceneKind m_kind;
    SceneGenerator m_generator;
    std::vector<TestBox> m_boxes;
};

} // namespace

TEST_CASE("PairFinderCpu: frames that change few boxes update incrementally and equal brute force", "[sap]") {
    const SceneKind kind =
        GENERATE(SceneKind::Uniform, SceneKind::Clustered, SceneKind::OneAxis, SceneKind::MixedSizes);
    const bool exact = GENERATE(false, true);
    CAPTURE(sceneName(kind), exact);
    RestingScene scene(kind, 2000, exact, 17 + static_cast<std::uint32_t>(kind));
    PairFinderCpu finder(2);
    std::vector<std::uint64_t> previous;
    UpdateKinds kinds;
    for (int frame = 0; frame < 40; ++frame) {
        CAPTURE(frame);
        // Mostly a few changes (incremental), now and then many (the moving set overflows).
        if (frame > 0) scene.step(frame % 13 == 0 ? 0.2 : frame % 3 == 0 ? 0.01 : 0.002);
        PairDeltas deltas;
        finder.update(scene.store, true, deltas);
        REQUIRE(finder.validate());
        checkUpdate(finder.pairs(), deltas, scene.store, true, previous);
        kinds.record(finder.stats());
    }
    CHECK(kinds.incremental > 20);
    CHECK(kinds.full > 2);
}

TEST_CASE("PairFinderCpu: many changed boxes are looked up on several threads", "[sap]") {
    // 300 changes of 10,000 boxes: within the moving set's share, and enough to split the lookups.
    RestingScene scene(SceneKind::Clustered, 10000, false, 31);
    PairFinderCpu finder(2);
    std::vector<std::uint64_t> previous;
    UpdateKinds kinds;
    int parallel = 0;
    for (int frame = 0; frame < 5; ++frame) {
        CAPTURE(frame);
        if (frame > 0) scene.step(0.03);
        PairDeltas deltas;
        finder.update(scene.store, true, deltas);
        checkUpdate(finder.pairs(), deltas, scene.store, true, previous);
        kinds.record(finder.stats());
        parallel += finder.stats().movingObjects > 0 && finder.stats().threads > 1 ? 1 : 0;
    }
    CHECK(kinds.incremental >= 2);
    CHECK(parallel >= 1);
}

TEST_CASE("PairFinderCpu: incremental updates after edits offer refused pairs again", "[sap]") {
    RestingScene scene(SceneKind::Uniform, 2000, false, 5);
    PairFinderCpu finder(2);
    PairDeltas deltas;
    finder.update(scene.store, true, deltas);
    REQUIRE(finder.pairs().size() > 2);
    const std::uint64_t refused = finder.pairs()[0];
    const std::uint64_t foreign = pairKey(pairLow(finder.pairs()[1]), pairLow(finder.pairs()[1]) == 0 ? 1 : 0);
    std::vector<std::uint64_t> added{foreign};
    if (std::binary_search(finder.pairs().begin(), finder.pairs().end(), foreign)) added.clear();
    finder.applyEdits(added, {refused});
    scene.step(0.001);
    finder.update(scene.store, true, deltas);
    CHECK(finder.stats().movingObjects > 0);
    CHECK(finder.pairs() == bruteForcePairs(scene.store, true));
    CHECK(std::find(deltas.found.begin(), deltas.found.end(), refused) != deltas.found.end());
    for (std::uint64_t key : added) CHECK(std::find(deltas.lost.begin(), deltas.lost.end(), key) != deltas.lost.end());
}

TEST_CASE("PairFinderCpu: a static level with a few movers, huge boxes included", "[sap]") {
    // A ground box and a wall wider than the grid rest; a huge box and a few small ones move.
    BoxStore store;
    SceneGenerator generator(11);
    std::vector<TestBox> boxes = generator.scene(SceneKind::Uniform, 4000);
    boxes[0] = TestBox{{-1e18, -1e18, -1}, {1e18, 1e18, 0}};
    boxes[1] = TestBox{{-1e18, 0, -1e18}, {1e18, 0.5, 1e18}};
    boxes[2] = TestBox{{-cInf, -cInf, -cInf}, {cInf, cInf, cInf}};
    for (std::uint32_t i = 0; i < boxes.size(); ++i) store.insert(i, boxes[i].min, boxes[i].max, 1, ~0u);
    PairFinderCpu finder(2);
    std::vector<std::uint64_t> previous;
    UpdateKinds kinds;
    for (int frame = 0; frame < 30; ++frame) {
        CAPTURE(frame);
        if (frame > 0) {
            // The huge box 3 grows and shrinks; boxes 4-40 drift; box 41 becomes huge, then not.
            boxes[3] = frame % 2 ? TestBox{{-1e18, -5, -5}, {1e18, 5, 5}} : generator.box(SceneKind::Uniform, 4000);
            store.update(3, boxes[3].min, boxes[3].max);
            for (std::uint32_t i = 4; i <= 40; ++i) {
                generator.jitter(boxes[i], 0.1);
                store.update(i, boxes[i].min, boxes[i].max);
            }
            const TestBox wide{{-1e6, -1e6, -1e6}, {1e6, 1e6, 1e6}};
            store.update(41, (frame % 4 == 1 ? wide : boxes[41]).min, (frame % 4 == 1 ? wide : boxes[41]).max);
        }
        PairDeltas deltas;
        finder.update(store, true, deltas);
        REQUIRE(finder.validate());
        checkUpdate(finder.pairs(), deltas, store, true, previous);
        kinds.record(finder.stats());
    }
    CHECK(kinds.incremental == 29);
}

TEST_CASE("PartitionedPairFinder: slabs update incrementally when few boxes change", "[sap]") {
    const int slabs = GENERATE(2, 3);
    CAPTURE(slabs);
    RestingScene scene(SceneKind::Uniform, 6000, false, 23);
    const auto finder = createPartitionedCpuPairFinder(slabs, 2);
    auto& split = static_cast<PartitionedPairFinder&>(*finder);
    std::vector<std::uint64_t> previous;
    UpdateKinds kinds;
    for (int frame = 0; frame < 25; ++frame) {
        CAPTURE(frame);
        if (frame > 0) scene.step(0.002);
        PairDeltas deltas;
        split.update(scene.store, true, deltas);
        REQUIRE(split.validate(scene.store));
        checkUpdate(split.pairs(), deltas, scene.store, true, previous);
        kinds.record(split.stats());
    }
    CHECK(kinds.incremental > 10);
}
