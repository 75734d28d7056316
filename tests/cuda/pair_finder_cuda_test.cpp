// SPDX-License-Identifier: Zlib
// The CUDA pair finder against the CPU finder: identical deltas, counts and counters, frame by
// frame. Every case skips with a warning when no CUDA device is usable.
#include "kernels/common/aabb_ops.h"
#include "kernels/common/cuda_device.h"
#include "kernels/sap/pair_finder.h"
#include "kernels/sap/pair_finder_cpu.h"
#include "support/random_scenes.h"
#include "support/cuda_skip.h"
#include "support/test_skip.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace bulletgpu;
using namespace bulletgpu::test;

namespace {

constexpr double cInf = std::numeric_limits<double>::infinity();
constexpr double cNaN = std::numeric_limits<double>::quiet_NaN();

TestBox makeBox(double x0, double y0, double z0, double x1, double y1, double z1) {
    return TestBox{{x0, y0, z0}, {x1, y1, z1}};
}

/// Two stores given the same edits: each finder consumes the dirty list of its own store.
class TwinStores {
public:
    explicit TwinStores(bool exact) : m_cpu(exact), m_cuda(exact) {}

    void insert(std::uint32_t slot, const TestBox& b, std::uint32_t group = 1, std::uint32_t mask = ~0u) {
        for (BoxStore* store : {&m_cpu, &m_cuda}) store->insert(slot, b.min, b.max, group, mask);
    }
    void update(std::uint32_t slot, const TestBox& b) {
        for (BoxStore* store : {&m_cpu, &m_cuda}) store->update(slot, b.min, b.max);
    }
    void setFilter(std::uint32_t slot, std::uint32_t group, std::uint32_t mask) {
        for (BoxStore* store : {&m_cpu, &m_cuda}) store->setFilter(slot, group, mask);
    }
    void erase(std::uint32_t slot) {
        for (BoxStore* store : {&m_cpu, &m_cuda}) store->erase(slot);
    }
    void eraseAll() {
        for (std::uint32_t slot = 0; slot < size(); ++slot) {
            if (isLive(slot)) erase(slot);
        }
    }
    bool isLive(std::uint32_t slot) const { return m_cpu.isLive(slot); }
    std::uint32_t size() const { return m_cpu.size(); }
    BoxStore& cpu() { return m_cpu; }
    BoxStore& cuda() { return m_cuda; }

private:
    BoxStore m_cpu;
    BoxStore m_cuda;
};

/// The CPU finder and the CUDA finder under test.
struct Finders {
    PairFinderCpu cpu{2};
    std::unique_ptr<PairFinder> cuda = createCudaPairFinder(0);

    /// Updates both finders and requires the same deltas, pair count and counters.
    void updateAndCompare(TwinStores& stores, bool filterGroups) {
        PairDeltas expected, actual;
        cpu.update(stores.cpu(), filterGroups, expected);
        cuda->update(stores.cuda(), filterGroups, actual);
        REQUIRE(actual.found == expected.found);
        REQUIRE(actual.lost == expected.lost);
        REQUIRE(cuda->pairCount() == cpu.pairCount());
        const PairFinderStats& want = cpu.stats();
        const PairFinderStats& got = cuda->stats();
        CHECK(got.skipped == want.skipped);
        CHECK(got.objects == want.objects);
        CHECK(got.hugeObjects == want.hugeObjects);
        CHECK(got.cells == want.cells);
        CHECK(got.entries == want.entries);
        CHECK(got.sweepAxis == want.sweepAxis);
        CHECK(got.candidates == want.candidates);
        CHECK(got.pairs == want.pairs);
    }
};

/// Kinds of special boxes mixed into a random scene.
enum class Extras { None, Huge, NaN, Mixed };

const char* extrasName(Extras extras) {
    switch (extras) {
        case Extras::None:
            return "none";
        case Extras::Huge:
            return "huge";
        case Extras::NaN:
            return "nan";
        default:
            return "mixed";
    }
}

/// A random scene with churn: boxes move, appear (also past the end of the store, leaving free
/// slots that were never sent), disappear, teleport and change filters.
class ChurningScene {
public:
    ChurningScene(SceneKind kind, std::size_t n, Extras extras, std::uint32_t seed)
        : m_kind(kind), m_n(n), m_extras(extras), m_random(seed) {}

    /// Inserts the first n boxes.
    void populate(TwinStores& stores) {
        for (std::uint32_t slot = 0; slot < m_n; ++slot) create(stores, slot);
    }

    /// One frame of motion and churn.
    void advance(TwinStores& stores) {
        for (std::uint32_t slot = 0; slot < stores.size(); ++slot) {
            if (!stores.isLive(slot) || !isFinite(m_boxes[slot])) continue;
            m_random.jitter(m_boxes[slot], 0.05);
            stores.update(slot, m_boxes[slot]);
        }
        if (m_n < 3) return;
        const auto n = static_cast<std::uint32_t>(m_n);
        for (int k = 0; k < 4; ++k) {
            const std::uint32_t slot = m_random.below(stores.size());
            if (stores.isLive(slot)) {
                stores.erase(slot);
            } else {
                create(stores, slot);
            }
            const std::uint32_t teleported = m_random.below(stores.size());
            if (stores.isLive(teleported)) {
                m_boxes[teleported] = randomBox(teleported);
                stores.update(teleported, m_boxes[teleported]);
            }
            const std::uint32_t refiltered = m_random.below(stores.size());
            if (stores.isLive(refiltered)) stores.setFilter(refiltered, 1u << m_random.below(3), m_random.below(8));
        }
        create(stores, stores.size() + m_random.below(n / 3 + 1)); // a new slot past the end
    }

private:
    static bool isFinite(const TestBox& b) {
        for (int axis = 0; axis < 3; ++axis) {
            if (!(std::abs(b.min[axis]) < 1e15 && std::abs(b.max[axis]) < 1e15)) return false;
        }
        return true;
    }

    void create(TwinStores& stores, std::uint32_t slot) {
        if (m_boxes.size() <= slot) m_boxes.resize(slot + 1);
        m_boxes[slot] = randomBox(slot);
        stores.insert(slot, m_boxes[slot], 1u << (slot % 3), (slot % 2) ? ~0u : 3u);
    }

    TestBox randomBox(std::uint32_t slot) {
        TestBox b = m_random.box(m_kind, m_n);
        if (m_extras == Extras::None || slot % 50 != 7) return b;
        switch (m_extras == Extras::Mixed ? static_cast<Extras>(1 + m_random.below(3)) : m_extras) {
            case Extras::Huge:
                return hugeBox(b);
            case Extras::NaN:
                return nanBox(b);
            default:
                return oddBox(b);
        }
    }

    /// Planes at +-1e18, infinite slabs, and boxes spanning the scene on the grid axes.
    TestBox hugeBox(TestBox b) {
        const int axis = static_cast<int>(m_random.below(3));
        switch (m_random.below(3)) {
            case 0:
                for (int a = 0; a < 3; ++a) {
                    b.min[a] = -1e18;
                    b.max[a] = a == axis ? b.max[a] : 1e18;
                }
                return b;
            case 1:
                for (int a = 0; a < 3; ++a) {
                    if (a != axis) {
                        b.min[a] = -cInf;
                        b.max[a] = cInf;
                    }
                }
                return b;
            default:
                for (int a = 0; a < 3; ++a) {
                    if (a != axis) b.max[a] = b.min[a] + std::cbrt(static_cast<double>(m_n) / 0.25) * 0.7;
                }
                return b;
        }
    }

    /// NaN in one bound, all NaN, or inverted.
    TestBox nanBox(TestBox b) {
        const int axis = static_cast<int>(m_random.below(3));
        switch (m_random.below(3)) {
            case 0:
                b.min[axis] = cNaN;
                return b;
            case 1:
                for (int a = 0; a < 3; ++a) b.min[a] = b.max[a] = cNaN;
                return b;
            default:
                std::swap(b.min[axis], b.max[axis]);
                return b;
        }
    }

    /// Zero-size, touching, sub-float gaps, and infinite bounds.
    TestBox oddBox(TestBox b) {
        const int axis = static_cast<int>(m_random.below(3));
        switch (m_random.below(4)) {
            case 0:
                for (int a = 0; a < 3; ++a) b.max[a] = b.min[a];
                return b;
            case 1:
                b.min[axis] = std::floor(b.min[axis]);
                b.max[axis] = b.min[axis] + 1.0;
                return b;
            case 2:
                b.max[axis] = b.min[axis] + 1e-10;
                return b;
            default:
                b.max[axis] = cInf;
                return b;
        }
    }

    SceneKind m_kind;
    std::size_t m_n;
    Extras m_extras;
    SceneGenerator m_random;
    std::vector<TestBox> m_boxes;
};

/// Sorted, unique keys of random pairs among the first `slots` slots.
std::vector<std::uint64_t> randomKeys(SceneGenerator& random, std::uint32_t slots, int count) {
    std::vector<std::uint64_t> keys;
    for (int k = 0; k < count && slots > 1; ++k) {
        const std::uint32_t a = random.below(slots), b = random.below(slots);
        if (a != b) keys.push_back(pairKey(a, b));
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return keys;
}

/// Sorted, unique sample of a sorted key list.
std::vector<std::uint64_t> sampleOf(SceneGenerator& random, const std::vector<std::uint64_t>& keys, int count) {
    std::vector<std::uint64_t> sample;
    for (int k = 0; k < count && !keys.empty(); ++k) {
        sample.push_back(keys[random.below(static_cast<std::uint32_t>(keys.size()))]);
    }
    std::sort(sample.begin(), sample.end());
    sample.erase(std::unique(sample.begin(), sample.end()), sample.end());
    return sample;
}

/// Sorted union of two sorted lists.
std::vector<std::uint64_t> unionOf(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b) {
    std::vector<std::uint64_t> out;
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

} // namespace

TEST_CASE("PairFinderCuda: the factory reports why no device is usable", "[sap][cuda]") {
    const CudaDeviceProbe probe = probeCudaDevice(0);
    if (!probe.usable) {
        REQUIRE_THROWS_WITH(createCudaPairFinder(0), Catch::Contains(probe.reason));
        return;
    }
    const std::unique_ptr<PairFinder> finder = createCudaPairFinder(0);
    CHECK(finder->backend() == Backend::Cuda);
    CHECK(finder->description().find(probe.name) != std::string::npos);
    CHECK_THROWS_AS(createCudaPairFinder(-1), std::runtime_error);
}

TEST_CASE("PairFinderCuda: random scenes match the CPU finder frame by frame", "[sap][cuda]") {
    if (!cudaDeviceOrSkip("PairFinderCuda test: ")) return;
    const SceneKind kind =
        GENERATE(SceneKind::Uniform, SceneKind::Clustered, SceneKind::OneAxis, SceneKind::MixedSizes);
    const std::size_t n = GENERATE(0, 1, 2, 100, 5000);
    const Extras extras = GENERATE(Extras::None, Extras::Huge, Extras::NaN, Extras::Mixed);
    const bool exact = GENERATE(false, true);
    CAPTURE(sceneName(kind), n, extrasName(extras), exact);
    ChurningScene scene(kind, n, extras,
                        static_cast<std::uint32_t>(n * 131 + static_cast<int>(kind) * 7 + static_cast<int>(extras)));
    TwinStores stores(exact);
    Finders finders;
    scene.populate(stores);
    for (int frame = 0; frame < 8; ++frame) {
        CAPTURE(frame);
        finders.updateAndCompare(stores, frame % 3 != 1);
        scene.advance(stores);
    }
}

TEST_CASE("PairFinderCuda: 20,000 boxes with churn match the CPU finder", "[sap][cuda][large]") {
    if (!cudaDeviceOrSkip("PairFinderCuda test: ")) return;
    const SceneKind kind = GENERATE(SceneKind::Uniform, SceneKind::Clustered);
    const Extras extras = GENERATE(Extras::None, Extras::Mixed);
    const bool exact = GENERATE(false, true);
    CAPTURE(sceneName(kind), extrasName(extras), exact);
    ChurningScene scene(kind, 20000, extras, 20000u + static_cast<std::uint32_t>(kind));
    TwinStores stores(exact);
    Finders finders;
    scene.populate(stores);
    for (int frame = 0; frame < 4; ++frame) {
        CAPTURE(frame);
        finders.updateAndCompare(stores, true);
        CHECK(finders.cuda->stats().cells > 1);
        scene.advance(stores);
    }
}

TEST_CASE("PairFinderCuda: millions of pairs grow the pair buffer", "[sap][cuda][large]") {
    if (!cudaDeviceOrSkip("PairFinderCuda test: ")) return;
    SceneGenerator random(77);
    TwinStores stores(false);
    for (std::uint32_t slot = 0; slot < 2500; ++slot) {
        const double x = random.uniform(0, 0.1), y = random.uniform(0, 0.1), z = random.uniform(0, 0.1);
        stores.insert(slot, makeBox(x, y, z, x + 1, y + 1, z + 1));
    }
    Finders finders;
    finders.updateAndCompare(stores, true);
    CHECK(finders.cuda->pairCount() == 2500u * 2499u / 2);
    stores.eraseAll();
    finders.updateAndCompare(stores, true);
    CHECK(finders.cuda->pairCount() == 0);
}

TEST_CASE("PairFinderCuda: named edge cases match the CPU finder", "[sap][cuda]") {
    if (!cudaDeviceOrSkip("PairFinderCuda test: ")) return;
    TwinStores stores(GENERATE(false, true));
    SceneGenerator generator(3);
    std::uint32_t slot = 0;
    for (const TestBox& b : generator.scene(SceneKind::Uniform, 300)) stores.insert(slot++, b);

    SECTION("touching faces, edges and corners pair") {
        stores.insert(slot++, makeBox(100, 100, 100, 101, 101, 101));
        stores.insert(slot++, makeBox(101, 100, 100, 102, 101, 101));
        stores.insert(slot++, makeBox(101, 101, 100, 102, 102, 101));
        stores.insert(slot++, makeBox(101, 101, 101, 102, 102, 102));
        stores.insert(slot++, makeBox(101.0001, 100, 100, 102, 101, 101));
    }
    SECTION("zero-size and identical boxes") {
        for (int i = 0; i < 3; ++i) stores.insert(slot++, makeBox(5, 5, 5, 5, 5, 5));
        for (int i = 0; i < 50; ++i) stores.insert(slot++, makeBox(7, 7, 7, 8, 8, 8));
    }
    SECTION("huge boxes: planes at +-1e18 and beyond") {
        stores.insert(slot++, makeBox(-1e18, -1e18, -1e18, 1e18, 0, 1e18));
        stores.insert(slot++, makeBox(-1e18, -1e18, -1e18, 1e18, 1e18, 1e18));
        stores.insert(slot++, makeBox(-1e30, 3, -1e30, 1e30, 4, 1e30));
    }
    SECTION("infinities behave as numbers") {
        stores.insert(slot++, makeBox(-cInf, -cInf, -cInf, cInf, cInf, cInf));
        stores.insert(slot++, makeBox(-cInf, 0, 0, 0, 1, 1));
        stores.insert(slot++, makeBox(cInf, cInf, cInf, cInf, cInf, cInf));
    }
    SECTION("NaN and inverted boxes overlap nothing") {
        stores.insert(slot++, makeBox(cNaN, 0, 0, 1, 1, 1));
        stores.insert(slot++, makeBox(0, 0, 0, 1, cNaN, 1));
        stores.insert(slot++, makeBox(cNaN, cNaN, cNaN, cNaN, cNaN, cNaN));
        stores.insert(slot++, makeBox(3, 3, 3, 2, 4, 4));
    }
    SECTION("far outliers and sub-float gaps") {
        stores.insert(slot++, makeBox(1e12, 1e12, 1e12, 1e12 + 1, 1e12 + 1, 1e12 + 1));
        stores.insert(slot++, makeBox(1e12, 1e12, 1e12, 1e12 + 1, 1e12 + 1, 1e12 + 1));
        stores.insert(slot++, makeBox(1, 1, 1, 1.0000000001, 2, 2));
        stores.insert(slot++, makeBox(1.0000000002, 1, 1, 3, 2, 2));
        stores.insert(slot++, makeBox(1.0000000001, 1, 1, 3, 2, 2));
    }
    Finders finders;
    finders.updateAndCompare(stores, true);
    finders.updateAndCompare(stores, false);
    stores.eraseAll();
    finders.updateAndCompare(stores, true);
    CHECK(finders.cuda->pairCount() == 0);
}

TEST_CASE("PairFinderCuda: nothing changed skips the work", "[sap][cuda]") {
    if (!cudaDeviceOrSkip("PairFinderCuda test: ")) return;
    SceneGenerator generator(9);
    const std::vector<TestBox> boxes = generator.scene(SceneKind::Uniform, 500);
    TwinStores stores(false);
    for (std::uint32_t i = 0; i < boxes.size(); ++i) stores.insert(i, boxes[i]);
    Finders finders;
    finders.updateAndCompare(stores, true);
    for (std::uint32_t i = 0; i < boxes.size(); ++i) stores.update(i, boxes[i]);
    finders.updateAndCompare(stores, true);
    CHECK(finders.cuda->stats().skipped);
    finders.updateAndCompare(stores, false); // a different filter setting recomputes
    CHECK_FALSE(finders.cuda->stats().skipped);
}

TEST_CASE("PairFinderCuda: edits match the CPU finder", "[sap][cuda]") {
    if (!cudaDeviceOrSkip("PairFinderCuda test: ")) return;
    const bool editFirst = GENERATE(false, true);
    CAPTURE(editFirst);
    ChurningScene scene(SceneKind::Clustered, 2000, Extras::Mixed, 41);
    TwinStores stores(true);
    scene.populate(stores);
    Finders finders;
    SceneGenerator random(43);
    if (editFirst) {
        const std::vector<std::uint64_t> added = randomKeys(random, stores.size(), 20);
        finders.cpu.applyEdits(added, {});
        finders.cuda->applyEdits(added, {});
        REQUIRE(finders.cuda->pairCount() == finders.cpu.pairCount());
    }
    for (int round = 0; round < 6; ++round) {
        CAPTURE(round);
        finders.updateAndCompare(stores, true);
        // Present and absent keys on both sides, and rounds with one side empty.
        const std::vector<std::uint64_t>& held = finders.cpu.pairs();
        const std::vector<std::uint64_t> added =
            round == 2 ? std::vector<std::uint64_t>{}
                       : unionOf(randomKeys(random, stores.size(), 30), sampleOf(random, held, 10));
        const std::vector<std::uint64_t> removed =
            round == 4 ? std::vector<std::uint64_t>{}
                       : unionOf(sampleOf(random, held, 40), randomKeys(random, stores.size(), 10));
        finders.cpu.applyEdits(added, removed);
        finders.cuda->applyEdits(added, removed);
        REQUIRE(finders.cuda->pairCount() == finders.cpu.pairCount());
        finders.updateAndCompare(stores, true); // the edits shift the difference; no box changed
        scene.advance(stores);
    }
}

TEST_CASE("PairFinderCuda: reset reports every pair as found again", "[sap][cuda]") {
    if (!cudaDeviceOrSkip("PairFinderCuda test: ")) return;
    ChurningScene scene(SceneKind::Uniform, 1000, Extras::Huge, 5);
    TwinStores stores(false);
    scene.populate(stores);
    Finders finders;
    finders.updateAndCompare(stores, true);
    finders.cpu.reset();
    finders.cuda->reset();
    CHECK(finders.cuda->pairCount() == 0);
    finders.updateAndCompare(stores, true);
    CHECK(finders.cuda->pairCount() > 0);
}

TEST_CASE("PairFinderCuda: a different store is sent again in full", "[sap][cuda]") {
    if (!cudaDeviceOrSkip("PairFinderCuda test: ")) return;
    PairFinderCpu cpu(2);
    const std::unique_ptr<PairFinder> cuda = createCudaPairFinder(0);
    for (const std::size_t n : {3000u, 700u}) {
        CAPTURE(n);
        ChurningScene scene(SceneKind::MixedSizes, n, Extras::None, static_cast<std::uint32_t>(n));
        TwinStores stores(n == 700u);
        scene.populate(stores);
        PairDeltas expected, actual;
        cpu.update(stores.cpu(), true, expected);
        cuda->update(stores.cuda(), true, actual);
        REQUIRE(actual.found == expected.found);
        REQUIRE(actual.lost == expected.lost);
    }
}
