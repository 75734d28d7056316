// SPDX-License-Identifier: Zlib
#include "kernels/common/cuda_device.h"
#include "kernels/partition/partitioned_pair_finder.h"
#include "kernels/reference/brute_force.h"
#include "kernels/sap/pair_finder_cpu.h"
#include "support/pair_deltas.h"
#include "support/random_scenes.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <iterator>
#include <limits>
#include <numeric>
#include <stdexcept>

using namespace bulletgpu;
using namespace bulletgpu::test;

namespace {

constexpr double cInf = std::numeric_limits<double>::infinity();
constexpr double cNaN = std::numeric_limits<double>::quiet_NaN();

PartitionedPairFinder& asPartitioned(PairFinder& finder) { return static_cast<PartitionedPairFinder&>(finder); }

/// A K-slab finder and a single finder fed the same store, checked against brute force.
class Harness {
public:
    Harness(int slabs, bool exact, int threads = 2)
        : store(exact), m_split(createPartitionedCpuPairFinder(slabs, threads)), m_single(1) {}

    /// Runs one update of both finders and checks sets, deltas and the stats' bookkeeping.
    void updateAndCheck(bool filterGroups = true) {
        PairDeltas deltas, singleDeltas;
        // The single finder consumes the dirty list too: give it a copy of the store.
        BoxStore copy = store;
        m_single.update(copy, filterGroups, singleDeltas);
        split().update(store, filterGroups, deltas);
        REQUIRE(split().validate(store));
        const std::vector<std::uint64_t> expected = bruteForcePairs(store, filterGroups);
        REQUIRE(split().pairs() == expected);
        REQUIRE(m_single.pairs() == expected);
        const PairDeltas wanted = deltasBetween(m_previous, expected);
        REQUIRE(deltas.found == wanted.found);
        REQUIRE(deltas.lost == wanted.lost);
        m_previous = expected;

        const PairFinderStats& s = split().stats();
        if (!s.skipped) {
            const auto& loads = split().loads();
            const std::uint64_t total = std::accumulate(loads.begin(), loads.end(), std::uint64_t{0});
            CHECK(total == std::uint64_t{s.objects} + s.straddlers);
            CHECK(s.partitions == static_cast<int>(loads.size()));
        }
    }

    PartitionedPairFinder& split() { return asPartitioned(*m_split); }

    BoxStore store;

private:
    std::unique_ptr<PairFinder> m_split;
    PairFinderCpu m_single;
    std::vector<std::uint64_t> m_previous;
};

void insert(BoxStore& store, std::uint32_t slot, const TestBox& b, std::uint32_t group = 1, std::uint32_t mask = ~0u) {
    store.insert(slot, b.min, b.max, group, mask);
}

TestBox makeBox(double x0, double y0, double z0, double x1, double y1, double z1) {
    return TestBox{{x0, y0, z0}, {x1, y1, z1}};
}

void shift(TestBox& b, int axis, double by) {
    b.min[axis] += by;
    b.max[axis] += by;
}

} // namespace

TEST_CASE("PartitionedPairFinder: every K equals K = 1 and brute force under churn", "[partition]") {
    const int slabs = GENERATE(1, 2, 3, 4, 7);
    const SceneKind kind =
        GENERATE(SceneKind::Uniform, SceneKind::Clustered, SceneKind::OneAxis, SceneKind::MixedSizes);
    const std::size_t n = GENERATE(0, 1, 5, 400, 1200);
    const bool exact = GENERATE(false, true);
    CAPTURE(slabs, sceneName(kind), n, exact);
    SceneGenerator generator(static_cast<std::uint32_t>(n * 17 + static_cast<int>(kind) * 3 + slabs));
    std::vector<TestBox> boxes = generator.scene(kind, n);
    Harness h(slabs, exact);
    for (std::uint32_t i = 0; i < n; ++i) insert(h.store, i, boxes[i]);
    h.updateAndCheck();
    for (int frame = 0; frame < 12; ++frame) {
        for (std::uint32_t i = 0; i < n; ++i) {
            if (!h.store.isLive(i)) continue;
            generator.jitter(boxes[i], 0.2);
            h.store.update(i, boxes[i].min, boxes[i].max);
        }
        for (int k = 0; n > 2 && k < 4; ++k) {
            const std::uint32_t slot = generator.below(static_cast<std::uint32_t>(n));
            if (h.store.isLive(slot)) {
                h.store.erase(slot);
            } else {
                boxes[slot] = generator.box(kind, n);
                insert(h.store, slot, boxes[slot]);
            }
            const std::uint32_t teleported = generator.below(static_cast<std::uint32_t>(n));
            if (h.store.isLive(teleported)) {
                boxes[teleported] = generator.box(kind, n);
                h.store.update(teleported, boxes[teleported].min, boxes[teleported].max);
            }
        }
        h.updateAndCheck();
    }
}

TEST_CASE("PartitionedPairFinder: boxes crossing the cuts every frame", "[partition]") {
    const int slabs = GENERATE(2, 3, 4, 7);
    CAPTURE(slabs);
    SceneGenerator generator(41u + static_cast<std::uint32_t>(slabs));
    std::vector<TestBox> boxes = generator.scene(SceneKind::Uniform, 2000);
    Harness h(slabs, false);
    for (std::uint32_t i = 0; i < boxes.size(); ++i) insert(h.store, i, boxes[i]);
    h.updateAndCheck();
    const SlabCuts cuts = h.split().cuts();
    REQUIRE(cuts.slabCount() == slabs);
    for (int frame = 0; frame < 10; ++frame) {
        // Every box whose centre lies within 3 units of a cut jumps 4 units across it and back.
        for (std::uint32_t i = 0; i < boxes.size(); ++i) {
            const double centre = 0.5 * (boxes[i].min[cuts.axis] + boxes[i].max[cuts.axis]);
            for (float cut : cuts.cuts) {
                if (std::abs(centre - cut) < 3.0) {
                    shift(boxes[i], cuts.axis, centre < cut ? 4.0 : -4.0);
                    break;
                }
            }
            h.store.update(i, boxes[i].min, boxes[i].max);
        }
        h.updateAndCheck();
        CHECK(h.split().stats().migrated > 0);
    }
}

TEST_CASE("PartitionedPairFinder: all boxes inside one slab, then re-balanced", "[partition]") {
    const int slabs = GENERATE(2, 4, 7);
    CAPTURE(slabs);
    SceneGenerator generator(77);
    std::vector<TestBox> boxes = generator.scene(SceneKind::Uniform, 3000);
    Harness h(slabs, false);
    for (std::uint32_t i = 0; i < boxes.size(); ++i) insert(h.store, i, boxes[i]);
    h.updateAndCheck();
    const SlabCuts before = h.split().cuts();
    // Squeeze every box below the first cut: one slab holds everything.
    const double lowest = before.cuts.front();
    for (std::uint32_t i = 0; i < boxes.size(); ++i) {
        const double width = boxes[i].max[before.axis] - boxes[i].min[before.axis];
        boxes[i].min[before.axis] = lowest - 50.0 + 0.01 * (i % 4000);
        boxes[i].max[before.axis] = boxes[i].min[before.axis] + width;
        h.store.update(i, boxes[i].min, boxes[i].max);
    }
    h.updateAndCheck();
    CHECK(h.split().stats().maxLoad == 3000);
    bool rebalanced = false;
    for (std::uint32_t frame = 0; frame < SlabSplitter::cSettleUpdates + 4; ++frame) {
        for (std::uint32_t i = 0; i < boxes.size(); ++i) {
            generator.jitter(boxes[i], 0.01);
            h.store.update(i, boxes[i].min, boxes[i].max);
        }
        h.updateAndCheck();
        rebalanced = rebalanced || h.split().stats().rebalanced;
    }
    CHECK(rebalanced);
    CHECK(h.split().stats().maxLoad < 3000);
}

TEST_CASE("PartitionedPairFinder: the split axis follows the scene's shape", "[partition]") {
    Harness h(4, false);
    std::vector<TestBox> boxes;
    for (std::uint32_t i = 0; i < 2000; ++i) {
        const double x = 2.0 * i, y = (i % 7) * 0.5, z = (i % 5) * 0.5;
        boxes.push_back(makeBox(x, y, z, x + 1, y + 1, z + 1));
        insert(h.store, i, boxes.back());
    }
    h.updateAndCheck();
    CHECK(h.split().cuts().axis == 0);
    // The scene turns: spread along z, squeezed on x.
    for (std::uint32_t i = 0; i < boxes.size(); ++i) {
        const double x = (i % 7) * 0.5, y = (i % 5) * 0.5, z = 2.0 * i;
        boxes[i] = makeBox(x, y, z, x + 1, y + 1, z + 1);
        h.store.update(i, boxes[i].min, boxes[i].max);
    }
    h.updateAndCheck();
    for (std::uint32_t frame = 0; frame < SlabSplitter::cAxisCheckPeriod; ++frame) {
        for (std::uint32_t i = 0; i < boxes.size(); i += 97) {
            shift(boxes[i], 1, frame % 2 == 0 ? 0.25 : -0.25);
            h.store.update(i, boxes[i].min, boxes[i].max);
        }
        h.updateAndCheck();
    }
    CHECK(h.split().cuts().axis == 2);
    CHECK(h.split().stats().imbalance < 1.0 + SlabSplitter::cImbalanceTolerance + 0.05);
}

TEST_CASE("PartitionedPairFinder: named edge cases", "[partition]") {
    const int slabs = GENERATE(2, 3, 7);
    const bool exact = GENERATE(false, true);
    CAPTURE(slabs, exact);
    Harness h(slabs, exact);
    SceneGenerator generator(3);
    const auto crowd = generator.scene(SceneKind::Uniform, 300);
    std::uint32_t slot = 0;
    for (const auto& b : crowd) insert(h.store, slot++, b);

    SECTION("huge boxes span every slab and pair once with everything") {
        insert(h.store, slot++, makeBox(-1e18, -1e18, -1e18, 1e18, 0, 1e18));
        insert(h.store, slot++, makeBox(-1e18, -1e18, -1e18, 1e18, 1e18, 1e18));
        insert(h.store, slot++, makeBox(-cInf, -cInf, -cInf, cInf, cInf, cInf));
    }
    SECTION("touching, zero-size and identical boxes on a cut") {
        h.updateAndCheck();
        const SlabCuts cuts = h.split().cuts();
        const double c = cuts.cuts.front();
        TestBox left = makeBox(0, 0, 0, 1, 1, 1), right = left, point = left;
        left.min[cuts.axis] = c - 1;
        left.max[cuts.axis] = c;
        right.min[cuts.axis] = c;
        right.max[cuts.axis] = c + 1;
        point.min[cuts.axis] = point.max[cuts.axis] = c;
        for (int i = 0; i < 5; ++i) insert(h.store, slot++, left);
        for (int i = 0; i < 5; ++i) insert(h.store, slot++, right);
        for (int i = 0; i < 3; ++i) insert(h.store, slot++, point);
    }
    SECTION("NaN and inverted boxes overlap nothing, infinities behave as numbers") {
        insert(h.store, slot++, makeBox(cNaN, 0, 0, 1, 1, 1));
        insert(h.store, slot++, makeBox(cNaN, cNaN, cNaN, cNaN, cNaN, cNaN));
        insert(h.store, slot++, makeBox(3, 3, 3, 2, 4, 4));
        insert(h.store, slot++, makeBox(cInf, cInf, cInf, cInf, cInf, cInf));
        insert(h.store, slot++, makeBox(cInf, cInf, cInf, cInf, cInf, cInf));
        insert(h.store, slot++, makeBox(-cInf, -cInf, -cInf, -cInf, -cInf, -cInf));
        insert(h.store, slot++, makeBox(-cInf, 0, 0, 0, 1, 1));
    }
    h.updateAndCheck();
    // A usable box turning NaN leaves its slabs, and comes back.
    insert(h.store, slot, makeBox(1, 1, 1, 2, 2, 2));
    h.updateAndCheck();
    const double bad[3] = {cNaN, 1, 1}, good[3] = {1, 1, 1}, top[3] = {2, 2, 2};
    h.store.update(slot, bad, top);
    h.updateAndCheck();
    h.store.update(slot, good, top);
    h.updateAndCheck();
    // Removing everything leaves no pairs.
    for (std::uint32_t s = 0; s < h.store.size(); ++s) {
        if (h.store.isLive(s)) h.store.erase(s);
    }
    h.updateAndCheck();
    CHECK(h.split().pairs().empty());
}

TEST_CASE("PartitionedPairFinder: more host threads than slabs, each slab over the parallel threshold", "[partition]") {
    // Each slab's finder asks for 8 threads inside the loop over slabs, where OpenMP gives a
    // nested region one thread: the finder must notice and still find every pair.
    constexpr std::size_t n = 20000;
    SceneGenerator generator(91);
    std::vector<TestBox> boxes = generator.scene(SceneKind::Uniform, n);
    Harness h(2, false, 16);
    for (std::uint32_t i = 0; i < n; ++i) insert(h.store, i, boxes[i]);
    h.updateAndCheck();
    for (int frame = 0; frame < 2; ++frame) {
        for (std::uint32_t i = 0; i < n; ++i) {
            generator.jitter(boxes[i], 0.2);
            h.store.update(i, boxes[i].min, boxes[i].max);
        }
        h.updateAndCheck();
    }
}

TEST_CASE("PartitionedPairFinder: hundreds of thousands of pairs are merged on several threads", "[partition]") {
    // Over 65,536 pairs the pair set is updated in key ranges on parallel threads, and over
    // 16,384 found and lost pairs the slabs' deltas are merged so too.
    constexpr std::size_t n = 30000;
    SceneGenerator generator(123);
    std::vector<TestBox> boxes = generator.scene(SceneKind::Clustered, n);
    BoxStore splitStore, singleStore;
    for (std::uint32_t i = 0; i < n; ++i) {
        insert(splitStore, i, boxes[i]);
        insert(singleStore, i, boxes[i]);
    }
    const std::unique_ptr<PairFinder> split = createPartitionedCpuPairFinder(2, 4);
    PairFinderCpu single(1);
    for (int frame = 0; frame < 4; ++frame) {
        PairDeltas splitDeltas, singleDeltas;
        split->update(splitStore, true, splitDeltas);
        single.update(singleStore, true, singleDeltas);
        REQUIRE(single.pairs().size() > 65536);
        REQUIRE(asPartitioned(*split).pairs() == single.pairs());
        REQUIRE(splitDeltas.found == singleDeltas.found);
        REQUIRE(splitDeltas.lost == singleDeltas.lost);
        if (frame == 1) {
            // Edits: drop every third pair, add pairs of far-apart boxes.
            std::vector<std::uint64_t> removed, added;
            for (std::size_t k = 0; k < single.pairs().size(); k += 3) removed.push_back(single.pairs()[k]);
            for (std::uint32_t a = 0; a + 1 < 200; a += 2) added.push_back(pairKey(a, a + 1));
            std::sort(added.begin(), added.end());
            added.erase(std::unique(added.begin(), added.end()), added.end());
            std::vector<std::uint64_t> fresh;
            std::set_difference(added.begin(), added.end(), single.pairs().begin(), single.pairs().end(),
                                std::back_inserter(fresh));
            split->applyEdits(fresh, removed);
            single.applyEdits(fresh, removed);
            REQUIRE(asPartitioned(*split).pairs() == single.pairs());
        }
        for (std::uint32_t i = 0; i < n; ++i) {
            generator.jitter(boxes[i], 0.3);
            splitStore.update(i, boxes[i].min, boxes[i].max);
            singleStore.update(i, boxes[i].min, boxes[i].max);
        }
    }
    // The whole scene slides along every axis: the pairs stay (up to rounding), but the cuts
    // follow the boxes, so pairs change slab, each lost by one slab and found by another, in
    // every key range.
    bool rebalanced = false;
    std::uint64_t migrated = 0;
    for (int frame = 0; frame < 6; ++frame) {
        PairDeltas splitDeltas, singleDeltas;
        split->update(splitStore, true, splitDeltas);
        single.update(singleStore, true, singleDeltas);
        rebalanced = rebalanced || split->stats().rebalanced;
        migrated += split->stats().migrated;
        REQUIRE(asPartitioned(*split).pairs() == single.pairs());
        REQUIRE(splitDeltas.found == singleDeltas.found);
        REQUIRE(splitDeltas.lost == singleDeltas.lost);
        for (std::uint32_t i = 0; i < n; ++i) {
            for (int axis = 0; axis < 3; ++axis) {
                boxes[i].min[axis] += 7.5;
                boxes[i].max[axis] += 7.5;
            }
            splitStore.update(i, boxes[i].min, boxes[i].max);
            singleStore.update(i, boxes[i].min, boxes[i].max);
        }
    }
    CHECK(rebalanced);
    CHECK(migrated > n / 10);
}

TEST_CASE("PartitionedPairFinder: a million moving boxes in three slabs equal the grid oracle", "[partition][large]") {
    constexpr std::uint32_t n = 1000000;
    SceneGenerator generator(77);
    std::vector<TestBox> boxes = generator.scene(SceneKind::Uniform, n);
    BoxStore store;
    for (std::uint32_t i = 0; i < n; ++i) insert(store, i, boxes[i]);
    insert(store, n, makeBox(-1e18, -1e18, -1e18, 1e18, 0, 1e18)); // a static plane spanning every slab
    insert(store, n + 1, makeBox(std::numeric_limits<double>::quiet_NaN(), 0, 0, 1, 1, 1));
    const std::unique_ptr<PairFinder> split = createPartitionedCpuPairFinder(3, 2);
    std::vector<std::uint64_t> previous;
    for (int frame = 0; frame < 3; ++frame) {
        PairDeltas deltas;
        split->update(store, true, deltas);
        const std::vector<std::uint64_t> expected = gridOraclePairs(store, true, 1.5); // cubes rounded outward
        REQUIRE(expected.size() > n / 2);
        REQUIRE(asPartitioned(*split).pairs() == expected);
        const PairDeltas wanted = deltasBetween(previous, expected);
        REQUIRE(deltas.found == wanted.found);
        REQUIRE(deltas.lost == wanted.lost);
        previous = expected;
        for (std::uint32_t i = 0; i < n; ++i) {
            generator.jitter(boxes[i], 0.05);
            store.update(i, boxes[i].min, boxes[i].max);
        }
    }
    CHECK(split->stats().partitions == 3);
}

TEST_CASE("PartitionedPairFinder: more slabs than boxes", "[partition]") {
    const std::uint32_t n = GENERATE(1u, 2u, 3u, 6u);
    Harness h(7, false);
    for (std::uint32_t i = 0; i < n; ++i) insert(h.store, i, makeBox(i * 0.5, 0, 0, i * 0.5 + 1, 1, 1));
    h.updateAndCheck();
    for (std::uint32_t i = 0; i < n; ++i) {
        const double lo[3] = {i * 0.75, 0, 0}, hi[3] = {i * 0.75 + 1, 1, 1};
        h.store.update(i, lo, hi);
    }
    h.updateAndCheck();
}

TEST_CASE("PartitionedPairFinder: group filtering and slots reused within an update", "[partition]") {
    SceneGenerator generator(5);
    auto boxes = generator.scene(SceneKind::Uniform, 2000);
    Harness h(3, false);
    for (std::uint32_t i = 0; i < boxes.size(); ++i) insert(h.store, i, boxes[i], 1u << (i % 3), (i % 2) ? ~0u : 3u);
    h.updateAndCheck();
    h.updateAndCheck(false);
    // Destroy and re-create in the same slot, somewhere else: the old pairs go, the new ones come.
    for (std::uint32_t i = 0; i < boxes.size(); i += 3) {
        h.store.erase(i);
        boxes[i] = generator.box(SceneKind::Uniform, 2000);
        insert(h.store, i, boxes[i]);
    }
    h.updateAndCheck(false);
}

TEST_CASE("PartitionedPairFinder: edits shift the starting point of the next difference", "[partition]") {
    BoxStore store;
    const TestBox b0 = makeBox(0, 0, 0, 1, 1, 1), b1 = makeBox(0.5, 0.5, 0.5, 20, 2, 2),
                  b2 = makeBox(30, 0, 0, 31, 1, 1), b3 = makeBox(30.5, 0, 0, 31.5, 1, 1);
    store.insert(0, b0.min, b0.max, 1, ~0u);
    store.insert(1, b1.min, b1.max, 1, ~0u);
    store.insert(2, b2.min, b2.max, 1, ~0u);
    store.insert(3, b3.min, b3.max, 1, ~0u);
    auto finder = createPartitionedCpuPairFinder(2, 2);
    PairDeltas deltas;
    finder->update(store, true, deltas);
    REQUIRE(deltas.found == std::vector<std::uint64_t>{pairKey(0, 1), pairKey(2, 3)});
    // The caller refused (0,1), recorded (1,2) from elsewhere, refused (2,3) then took it back.
    finder->applyEdits({pairKey(1, 2)}, {pairKey(0, 1), pairKey(2, 3)});
    finder->applyEdits({pairKey(2, 3)}, {});
    CHECK(finder->pairCount() == 2);
    finder->update(store, true, deltas);
    CHECK(deltas.found == std::vector<std::uint64_t>{pairKey(0, 1)});
    CHECK(deltas.lost == std::vector<std::uint64_t>{pairKey(1, 2)});
    finder->update(store, true, deltas);
    CHECK(deltas.found.empty());
    CHECK(deltas.lost.empty());
}

TEST_CASE("PartitionedPairFinder: bad arguments are clear errors", "[partition]") {
    CHECK_THROWS_AS(createPartitionedCpuPairFinder(cMaxSlabs + 1, 2), std::invalid_argument);
    CHECK_THROWS_AS(createPartitionedCudaPairFinder(2, {}), std::invalid_argument);
    if (!probeCudaDevice(0).usable) CHECK_THROWS_AS(createPartitionedCudaPairFinder(2, {0}), std::runtime_error);
    CHECK_THROWS_AS(createPartitionedCudaPairFinder(2, {999}), std::runtime_error);
}
