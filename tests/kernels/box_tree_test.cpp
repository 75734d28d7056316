// SPDX-License-Identifier: Zlib
#include "kernels/query/box_tree.h"
#include "kernels/common/box_store.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using namespace bulletgpu;

namespace {

__extension__ typedef __int128 Int128;

const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kGrid = 4.0; // Grid scenes put every coordinate on a multiple of 1 / kGrid.

struct Box {
    double lo[3];
    double hi[3];
};

struct Ray {
    double from[3];
    double to[3];
    double castMin[3] = {0, 0, 0};
    double castMax[3] = {0, 0, 0};
};

/// A store and a tree kept in step the way the broadphase keeps them.
struct Scene {
    explicit Scene(bool keepExact = true, bool rebuildLazily = false) : store(keepExact), tree(rebuildLazily) {}

    void insert(std::uint32_t slot, const Box& box) {
        store.insert(slot, box.lo, box.hi, 1, 1);
        tree.onInserted(store, slot);
        if (placeAtOnce) tree.placePending(store);
    }
    void move(std::uint32_t slot, const Box& box) {
        if (store.update(slot, box.lo, box.hi)) tree.onChanged(store, slot);
        if (placeAtOnce) tree.placePending(store);
    }
    void erase(std::uint32_t slot) {
        store.erase(slot);
        tree.onErased(slot);
    }
    /// The box as the store knows it best: exact doubles when kept, else the float box.
    Box box(std::uint32_t slot) const {
        Box b;
        for (int axis = 0; axis < 3; ++axis) {
            b.lo[axis] = store.keepsExact() ? store.exactMinData(axis)[slot] : store.minData(axis)[slot];
            b.hi[axis] = store.keepsExact() ? store.exactMaxData(axis)[slot] : store.maxData(axis)[slot];
        }
        return b;
    }

    BoxStore store;
    BoxTree tree;
    bool placeAtOnce = true; ///< Place each change at once (to inspect the bookkeeping); else queries do it.
};

bool isUsable(const Box& b) { return b.lo[0] <= b.hi[0] && b.lo[1] <= b.hi[1] && b.lo[2] <= b.hi[2]; }

std::vector<std::uint32_t> bruteForceBoxQuery(const Scene& scene, const double lo[3], const double hi[3]) {
    std::vector<std::uint32_t> hits;
    for (std::uint32_t slot = 0; slot < scene.store.size(); ++slot) {
        if (!scene.store.isLive(slot)) continue;
        const Box b = scene.box(slot);
        bool overlap = isUsable(b);
        for (int axis = 0; axis < 3; ++axis) overlap = overlap && b.lo[axis] <= hi[axis] && lo[axis] <= b.hi[axis];
        if (overlap) hits.push_back(slot);
    }
    return hits;
}

/// Exact segment test for coordinates on the grid, box bounds possibly infinite, in 128-bit
/// integers; clears onGrid when a coordinate is not on the grid.
bool exactGridHit(const Ray& ray, const Box& box, bool& onGrid) {
    const auto grid = [&onGrid](double x) {
        onGrid = onGrid && x * kGrid == std::floor(x * kGrid);
        return static_cast<Int128>(static_cast<long long>(x * kGrid));
    };
    Int128 enterNum = 0, enterDen = 1, exitNum = 1, exitDen = 1; // Parameter interval, positive denominators.
    for (int axis = 0; axis < 3; ++axis) {
        if (box.lo[axis] == kInf || box.hi[axis] == -kInf) return false;
        const bool hasLow = box.lo[axis] != -kInf, hasHigh = box.hi[axis] != kInf;
        const Int128 from = grid(ray.from[axis]), direction = grid(ray.to[axis]) - from;
        const Int128 low = hasLow ? grid(box.lo[axis]) - grid(ray.castMax[axis]) : 0;
        const Int128 high = hasHigh ? grid(box.hi[axis]) - grid(ray.castMin[axis]) : 0;
        if (direction == 0) {
            if ((hasLow && from < low) || (hasHigh && from > high)) return false;
            continue;
        }
        const Int128 sign = direction > 0 ? 1 : -1, den = direction * sign;
        const auto raiseEnter = [&](Int128 num) {
            if (num * enterDen > enterNum * den) enterNum = num, enterDen = den;
        };
        const auto lowerExit = [&](Int128 num) {
            if (num * exitDen < exitNum * den) exitNum = num, exitDen = den;
        };
        if (hasLow && sign > 0) raiseEnter(low - from);
        if (hasLow && sign < 0) lowerExit(from - low);
        if (hasHigh && sign > 0) lowerExit(high - from);
        if (hasHigh && sign < 0) raiseEnter(from - high);
    }
    return enterNum * exitDen <= exitNum * enterDen;
}

/// Slab test in long double, for coordinates off the grid (its rounding is far inside the tree's slack).
bool longDoubleHit(const Ray& ray, const Box& box) {
    long double enter = 0, exit = 1;
    for (int axis = 0; axis < 3; ++axis) {
        const long double from = ray.from[axis], direction = static_cast<long double>(ray.to[axis]) - from;
        const long double low = static_cast<long double>(box.lo[axis]) - ray.castMax[axis];
        const long double high = static_cast<long double>(box.hi[axis]) - ray.castMin[axis];
        if (direction == 0) {
            if (from < low || from > high) return false;
            continue;
        }
        long double t0 = (low - from) / direction, t1 = (high - from) / direction;
        if (direction < 0) std::swap(t0, t1);
        enter = std::max(enter, t0);
        exit = std::min(exit, t1);
    }
    return enter <= exit;
}

/// Sorts the visited slots after checking that none came twice.
std::vector<std::uint32_t> sortedOnce(std::vector<std::uint32_t> visited) {
    std::sort(visited.begin(), visited.end());
    CHECK(std::adjacent_find(visited.begin(), visited.end()) == visited.end());
    return visited;
}

std::vector<std::uint32_t> treeBoxQuery(Scene& scene, const double lo[3], const double hi[3]) {
    std::vector<std::uint32_t> visited;
    scene.tree.queryBox(scene.store, lo, hi, [&](std::uint32_t slot) { visited.push_back(slot); });
    return sortedOnce(visited);
}

std::vector<std::uint32_t> treeRayQuery(Scene& scene, const Ray& ray) {
    std::vector<std::uint32_t> visited;
    scene.tree.queryRay(scene.store, ray.from, ray.to, ray.castMin, ray.castMax,
                        [&](std::uint32_t slot) { visited.push_back(slot); });
    return sortedOnce(visited);
}

/// Checks a box query against brute force; returns the number of boxes found.
std::size_t checkBoxQuery(Scene& scene, const double lo[3], const double hi[3]) {
    INFO("query " << lo[0] << " " << lo[1] << " " << lo[2] << " to " << hi[0] << " " << hi[1] << " " << hi[2]);
    const std::vector<std::uint32_t> expected = bruteForceBoxQuery(scene, lo, hi);
    CHECK(treeBoxQuery(scene, lo, hi) == expected);
    return expected.size();
}

/// Checks that every box the segment meets is visited, and only usable live boxes are; on the
/// grid, where the tree's slack cannot reach a box that is missed, exactly those. Returns the
/// number of boxes met.
std::size_t checkRayQuery(Scene& scene, const Ray& ray, bool onGrid) {
    const std::vector<std::uint32_t> visited = treeRayQuery(scene, ray);
    std::vector<std::uint32_t> expected, missed;
    bool coordinatesOnGrid = true;
    for (std::uint32_t slot = 0; slot < scene.store.size(); ++slot) {
        const Box box = scene.box(slot);
        if (!scene.store.isLive(slot) || !isUsable(box)) continue;
        if (onGrid ? exactGridHit(ray, box, coordinatesOnGrid) : longDoubleHit(ray, box)) expected.push_back(slot);
    }
    CHECK(coordinatesOnGrid);
    std::set_difference(expected.begin(), expected.end(), visited.begin(), visited.end(), std::back_inserter(missed));
    INFO("ray " << ray.from[0] << " " << ray.from[1] << " " << ray.from[2] << " to " << ray.to[0] << " " << ray.to[1]
                << " " << ray.to[2] << ", cast " << ray.castMin[0] << " " << ray.castMax[0]);
    CHECK(missed.empty());
    const auto moderate = [](double x) { return std::fabs(x) <= 1e6; };
    if (onGrid && std::all_of(ray.from, ray.from + 3, moderate) && std::all_of(ray.to, ray.to + 3, moderate)) {
        CHECK(visited.size() == expected.size());
    }
    CHECK(std::all_of(visited.begin(), visited.end(), [&](std::uint32_t slot) { return scene.store.isUsable(slot); }));
    return expected.size();
}

enum class Layout { Uniform, Clustered, MixedSizes };

/// Random scene boxes; on the grid every coordinate is a multiple of 1 / kGrid.
class BoxMaker {
public:
    BoxMaker(unsigned seed, Layout layout, bool onGrid) : m_rng(seed), m_layout(layout), m_onGrid(onGrid) {
        for (auto& centre : m_clusters) {
            for (double& c : centre) c = uniform(-500, 500);
        }
    }
    double uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(m_rng); }
    double snap(double x) const { return m_onGrid ? std::round(x * kGrid) / kGrid : x; }
    std::mt19937& rng() { return m_rng; }

    Box next() {
        const double size = m_layout == Layout::MixedSizes ? std::pow(10.0, uniform(-2, 1.7)) : uniform(0.5, 5);
        const bool point = m_layout == Layout::MixedSizes && m_rng() % 16 == 0;
        const double* cluster = m_clusters[m_rng() % 8];
        Box b;
        for (int axis = 0; axis < 3; ++axis) {
            const double centre = m_layout == Layout::Clustered
                                      ? cluster[axis] + std::normal_distribution<double>(0, 2)(m_rng)
                                      : uniform(-100, 100);
            const double half = point ? 0.0 : size * uniform(0.2, 1.0);
            b.lo[axis] = snap(centre - half);
            b.hi[axis] = snap(centre + half);
        }
        return b;
    }
    /// A small move, or now and then a teleport.
    Box moved(const Box& b) {
        const bool teleport = m_rng() % 8 == 0;
        Box m;
        for (int axis = 0; axis < 3; ++axis) {
            const double shift = teleport ? uniform(-200, 200) : uniform(-0.3, 0.3);
            m.lo[axis] = snap(b.lo[axis] + shift);
            m.hi[axis] = snap(b.hi[axis] + shift);
        }
        return m;
    }

private:
    std::mt19937 m_rng;
    Layout m_layout;
    bool m_onGrid;
    double m_clusters[8][3];
};

/// A coordinate within a few units of a box's lower corner (or anywhere when there is no box).
double nearBox(BoxMaker& maker, const Box* box, int axis) {
    const bool finite = box && std::isfinite(box->lo[axis]) && std::isfinite(box->hi[axis]);
    return maker.snap(finite ? box->lo[axis] + maker.uniform(-8, 8) : maker.uniform(-120, 120));
}

/// Random box queries (a third touching a scene box from outside) and rays (between points
/// near scene boxes, axis-parallel, in the plane of a face, through a corner, zero-length,
/// swept by a cast box), all against brute force. Returns the number of boxes found.
std::size_t checkQueries(Scene& scene, BoxMaker& maker, bool onGrid, int queries) {
    std::vector<Box> usable;
    for (std::uint32_t slot = 0; slot < scene.store.size(); ++slot) {
        if (scene.store.isLive(slot) && isUsable(scene.box(slot))) usable.push_back(scene.box(slot));
    }
    const auto randomBox = [&]() { return usable.empty() ? nullptr : &usable[maker.rng()() % usable.size()]; };
    std::size_t found = 0;
    for (int q = 0; q < queries; ++q) {
        Box query = maker.next();
        const Box* target = randomBox();
        const int axis = q / 3 % 3;
        if (target && q % 3 == 0 && std::isfinite(target->hi[axis])) {
            query = *target;
            query.lo[axis] = target->hi[axis];
            query.hi[axis] = target->hi[axis] + 1;
        }
        found += checkBoxQuery(scene, query.lo, query.hi);

        Ray ray;
        const Box* other = randomBox();
        for (int a = 0; a < 3; ++a) {
            ray.from[a] = nearBox(maker, target, a);
            ray.to[a] = nearBox(maker, other, a);
        }
        const int kind = q % 6;
        if (kind == 1) ray.to[axis] = ray.from[axis], ray.to[(axis + 1) % 3] = ray.from[(axis + 1) % 3];
        if (kind == 2) std::copy(ray.from, ray.from + 3, ray.to);
        if (kind == 3 && target && std::isfinite(target->hi[axis])) ray.from[axis] = ray.to[axis] = target->hi[axis];
        if (kind == 4 && target && std::isfinite(target->lo[0] + target->lo[1] + target->lo[2])) {
            for (int a = 0; a < 3; ++a) {
                const double step = maker.snap(maker.uniform(-30, 30));
                ray.from[a] = target->lo[a] - step;
                ray.to[a] = target->lo[a] + step;
            }
        }
        for (int a = 0; a < 3 && kind == 5; ++a) {
            ray.castMin[a] = -maker.snap(maker.uniform(0, 3));
            ray.castMax[a] = maker.snap(maker.uniform(0, 3));
        }
        found += checkRayQuery(scene, ray, onGrid);
    }
    return found;
}

Scene makeScene(BoxMaker& maker, std::uint32_t count, bool keepExact = true) {
    Scene scene(keepExact);
    for (std::uint32_t slot = 0; slot < count; ++slot) scene.insert(slot, maker.next());
    return scene;
}

} // namespace

TEST_CASE("BoxTree: random scenes match brute force after a build", "[boxtree]") {
    for (std::uint32_t count : {0u, 1u, 2u, 100u, 10000u}) {
        for (Layout layout : {Layout::Uniform, Layout::Clustered, Layout::MixedSizes}) {
            for (bool onGrid : {true, false}) {
                INFO("boxes " << count << " layout " << static_cast<int>(layout) << " grid " << onGrid);
                BoxMaker maker(count * 7 + static_cast<unsigned>(layout) * 3 + onGrid, layout, onGrid);
                Scene scene = makeScene(maker, count);
                CHECK(scene.tree.sideListSize() == count);
                const std::size_t foundBefore = checkQueries(scene, maker, onGrid, 20);
                scene.tree.rebuild(scene.store);
                REQUIRE(scene.tree.validate(scene.store));
                CHECK(scene.tree.sideListSize() == 0);
                const int queries = count >= 10000 ? 150 : 60;
                const std::size_t foundAfter = checkQueries(scene, maker, onGrid, queries);
                CHECK((count == 0 || (foundBefore > 0 && foundAfter > 0))); // the queries do meet boxes
            }
        }
    }
}

TEST_CASE("BoxTree: inserts, moves and erases between builds", "[boxtree]") {
    for (bool onGrid : {true, false}) {
        BoxMaker maker(42 + onGrid, Layout::MixedSizes, onGrid);
        Scene scene = makeScene(maker, 10000);
        scene.tree.rebuild(scene.store);
        std::vector<Box> boxes(10000);
        for (std::uint32_t slot = 0; slot < 10000; ++slot) boxes[slot] = scene.box(slot);
        for (int round = 0; round < 3; ++round) {
            for (std::uint32_t slot = 0; slot < 10000; ++slot) {
                const unsigned action = maker.rng()() % 10;
                if (!scene.store.isLive(slot)) {
                    if (action < 5) scene.insert(slot, boxes[slot] = maker.next()); // reuses the slot
                } else if (action < 4) {
                    scene.move(slot, boxes[slot] = maker.moved(boxes[slot]));
                } else if (action == 4) {
                    scene.erase(slot);
                }
            }
            for (std::uint32_t slot = 10000; slot < 10100; ++slot) {
                if (!scene.store.isLive(slot)) scene.insert(slot, maker.next());
            }
            REQUIRE(scene.tree.validate(scene.store));
            CHECK(scene.tree.sideListSize() > 0);
            checkQueries(scene, maker, onGrid, 60);
        }
        scene.tree.rebuild(scene.store);
        REQUIRE(scene.tree.validate(scene.store));
        checkQueries(scene, maker, onGrid, 60);
    }
}

TEST_CASE("BoxTree: a box moved inside its leaf stays in the tree, slots reused once", "[boxtree]") {
    Scene scene;
    for (std::uint32_t slot = 0; slot < 100; ++slot) {
        const double c = slot * 2.0;
        scene.insert(slot, Box{{c, 0, 0}, {c + 1, 1, 1}});
    }
    scene.tree.rebuild(scene.store);
    scene.move(5, Box{{10.25, 0.25, 0.25}, {10.75, 0.75, 0.75}}); // shrinks inside its own box
    CHECK(scene.tree.sideListSize() == 0);
    scene.move(6, Box{{500, 0, 0}, {501, 1, 1}});
    CHECK(scene.tree.sideListSize() == 1);
    scene.move(6, Box{{12, 0, 0}, {13, 1, 1}}); // back home: back in the tree
    CHECK(scene.tree.sideListSize() == 0);
    scene.erase(7);
    scene.insert(7, Box{{14, 0, 0}, {15, 1, 1}});
    scene.erase(8);
    scene.insert(8, Box{{-50, 0, 0}, {-49, 1, 1}});
    CHECK(scene.tree.sideListSize() == 1);
    REQUIRE(scene.tree.validate(scene.store));
    const double lo[3] = {-100, -1, -1}, hi[3] = {300, 2, 2};
    CHECK(treeBoxQuery(scene, lo, hi).size() == 100);
    checkBoxQuery(scene, lo, hi);
}

TEST_CASE("BoxTree: queries rebuild lazily when the side list grows", "[boxtree]") {
    Scene scene(true, true);
    BoxMaker maker(7, Layout::Uniform, false);
    for (std::uint32_t slot = 0; slot < 1000; ++slot) scene.insert(slot, maker.next());
    const double lo[3] = {-10, -10, -10}, hi[3] = {10, 10, 10};
    checkBoxQuery(scene, lo, hi); // 1000 in the side list: builds
    CHECK(scene.tree.buildCount() == 1);
    CHECK(scene.tree.sideListSize() == 0);
    for (std::uint32_t slot = 1000; slot < 1080; ++slot) scene.insert(slot, maker.next());
    checkBoxQuery(scene, lo, hi); // 80 of 1080: scanned, no build
    CHECK(scene.tree.buildCount() == 1);
    CHECK(scene.tree.sideListSize() == 80);
    int queries = 0;
    while (scene.tree.buildCount() == 1 && queries < 1000) {
        checkBoxQuery(scene, lo, hi);
        ++queries;
    }
    CHECK(queries == 1080 * BoxTree::kRebuildScanFactor / 80 + 1); // the scans add up to a build
    REQUIRE(scene.tree.validate(scene.store));
}

TEST_CASE("BoxTree: huge and infinite boxes", "[boxtree]") {
    BoxMaker maker(11, Layout::Uniform, true);
    Scene scene = makeScene(maker, 2000);
    scene.insert(2000, Box{{-1e18, -1e18, -1}, {1e18, 1e18, 0}}); // ground plane
    scene.insert(2001, Box{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}});
    scene.insert(2002, Box{{-kInf, 5, 5}, {0, 6, 6}}); // half-infinite rod
    scene.insert(2003, Box{{3, -kInf, -2}, {4, kInf, kInf}});
    scene.tree.rebuild(scene.store);
    REQUIRE(scene.tree.validate(scene.store));
    CHECK(scene.tree.hugeListSize() == 4);
    checkQueries(scene, maker, true, 150);
    scene.move(2000, Box{{-1e18, -1e18, -2}, {1e18, 1e18, -1}});
    scene.erase(2001);
    scene.insert(2004, Box{{-kInf, -kInf, 100}, {kInf, kInf, kInf}});
    REQUIRE(scene.tree.validate(scene.store));
    checkQueries(scene, maker, true, 60);
    const double far[3] = {1e17, 1e17, -1.5}, farther[3] = {2e17, 2e17, 1e30};
    CHECK(treeBoxQuery(scene, far, farther) == std::vector<std::uint32_t>{2000, 2004});
}

TEST_CASE("BoxTree: NaN and inverted boxes are never reported, NaN queries report nothing", "[boxtree]") {
    Scene scene;
    BoxMaker maker(3, Layout::Uniform, true);
    for (std::uint32_t slot = 0; slot < 300; ++slot) {
        Box b = maker.next();
        if (slot % 3 == 1) b.lo[slot % 7 % 3] = kNan;
        if (slot % 3 == 2) std::swap(b.lo[0], b.hi[0]);
        if (slot % 3 == 2 && b.lo[0] == b.hi[0]) b.hi[0] -= 1;
        scene.insert(slot, b);
    }
    scene.move(0, Box{{kNan, 0, 0}, {1, 1, 1}});        // a usable box turning NaN leaves the side list
    scene.insert(300, Box{{-50, -1, -1}, {-49, 1, 1}}); // boxes on the x axis, one touching it
    scene.insert(303, Box{{0, -1, -1}, {1, 1, 1}});
    scene.insert(306, Box{{50, -1, -1}, {51, 1, 1}});
    scene.insert(309, Box{{10, 0, -1}, {11, 1, 0}});
    checkQueries(scene, maker, true, 30);
    scene.tree.rebuild(scene.store);
    REQUIRE(scene.tree.validate(scene.store));
    checkQueries(scene, maker, true, 30);
    const double all[3] = {-kInf, -kInf, -kInf}, none[3] = {kInf, kInf, kInf};
    for (std::uint32_t slot : treeBoxQuery(scene, all, none)) CHECK((slot % 3 == 0 && slot != 0));
    const double nanPoint[3] = {kNan, 0, 0};
    CHECK(treeBoxQuery(scene, nanPoint, none).empty());
    const Ray nanRays[] = {{{kNan, 0, 0}, {1, 1, 1}}, {{0, 0, 0}, {1, kNan, 1}}, {{0, 0, 0}, {1, 1, 1}, {0, kNan, 0}}};
    for (const Ray& ray : nanRays) CHECK(treeRayQuery(scene, ray).empty());
    checkRayQuery(scene, Ray{{-1e308, 0, 0}, {1e308, 0, 0}}, false); // the direction overflows
    std::vector<std::uint32_t> onAxis;                               // boxes that the whole x axis meets
    for (std::uint32_t slot = 3; slot < 310; slot += 3) {
        const Box b = scene.box(slot);
        if (b.lo[1] <= 0 && 0 <= b.hi[1] && b.lo[2] <= 0 && 0 <= b.hi[2]) onAxis.push_back(slot);
    }
    CHECK(onAxis.size() >= 4);
    CHECK(treeRayQuery(scene, Ray{{-kInf, 0, 0}, {kInf, 0, 0}}) == onAxis);
    const Ray infiniteCast{{0, 0, 0}, {1, 1, 1}, {-kInf, 0, 0}, {0, 0, 0}};
    CHECK(treeRayQuery(scene, infiniteCast).size() == 99 + 4); // meets everything, conservatively
}

TEST_CASE("BoxTree: zero-size, identical and touching boxes", "[boxtree]") {
    Scene scene;
    std::uint32_t slot = 0;
    for (int x = 0; x < 12; ++x) { // a lattice of unit cubes sharing faces, edges and corners
        for (int y = 0; y < 12; ++y) {
            for (int z = 0; z < 12; ++z)
                scene.insert(slot++, Box{{1.0 * x, 1.0 * y, 1.0 * z}, {x + 1.0, y + 1.0, z + 1.0}});
        }
    }
    for (int i = 0; i < 300; ++i) scene.insert(slot++, Box{{3, 3, 3}, {4, 4, 4}});               // identical
    for (int i = 0; i < 100; ++i) scene.insert(slot++, Box{{i * 0.25, 5, 5}, {i * 0.25, 5, 5}}); // points
    scene.tree.rebuild(scene.store);
    REQUIRE(scene.tree.validate(scene.store));
    BoxMaker maker(5, Layout::Uniform, true);
    const Ray rays[] = {
        {{-1, 0, 0}, {13, 0, 0}},                                  // along an outer edge
        {{-1, 5, 5}, {30, 5, 5}},                                  // along inner edges, through the points
        {{-1, 3, 2.5}, {13, 3, 2.5}},                              // along inner faces
        {{0, 0, 0}, {12, 12, 12}},                                 // through corners only
        {{-1, -1, 0}, {1, 1, 0}},                                  // grazing a corner of the bottom face
        {{2, 2, 2}, {2, 2, 2}},                                    // zero length at a shared corner
        {{3.5, 3.5, 3.5}, {3.5, 3.5, 3.5}},                        // zero length inside
        {{12, 5, 5}, {12, 5, 5}},                                  // zero length on the outer face
        {{-2, 5.5, 5.5}, {-1, 5.5, 5.5}, {-1, -1, -1}, {1, 1, 1}}, // cast box touching at the end
        {{5, 5, 20}, {5, 5, 13}, {-1, -1, -1}, {0, 0, 0}},         // cast box touching the top
    };
    for (const Ray& ray : rays) checkRayQuery(scene, ray, true);
    checkQueries(scene, maker, true, 150);
    const double point[3] = {3, 3, 3};
    CHECK(treeBoxQuery(scene, point, point).size() == 8 + 300);
}

TEST_CASE("BoxTree: float-only store, off-grid rounding", "[boxtree]") {
    BoxMaker maker(23, Layout::Clustered, false);
    Scene scene = makeScene(maker, 3000, false);
    scene.insert(3000, Box{{0.1, 0.1, 0.1}, {0.3, 0.3, 0.3}});
    scene.tree.rebuild(scene.store);
    REQUIRE(scene.tree.validate(scene.store));
    checkQueries(scene, maker, false, 100);
    Scene exact;
    exact.insert(0, Box{{0.1, 0.1, 0.1}, {0.3, 0.3, 0.3}});
    exact.tree.rebuild(exact.store);
    const Ray grazing[] = {
        {{0.3, -1, 0.2}, {0.3, 1, 0.2}}, {{0.1, 0.1, -5}, {0.1, 0.1, 5}}, {{0, 0.4, 0.2}, {0.4, 0, 0.2}}};
    for (const Ray& ray : grazing) CHECK(treeRayQuery(exact, ray) == std::vector<std::uint32_t>{0});
    // A cast box narrower than an ulp of the box bound: rounding the grown bound to nearest
    // would move the entry past the exit on y, which is a miss.
    exact.insert(1, Box{{1, -10, -10}, {2, 0, 10}});
    const double below = 1 - std::ldexp(1.0, -53), above = 1 + std::ldexp(1.0, -52);
    Ray thin{{below, -83, 0}, {above, 167, 0}, {0, 0, 0}, {std::ldexp(1.0, -60), 0, 0}};
    CHECK(longDoubleHit(thin, exact.box(1)));
    checkRayQuery(exact, thin, false);
}

TEST_CASE("BoxTree: visit order is deterministic", "[boxtree]") {
    std::vector<std::uint32_t> orders[2];
    for (auto& order : orders) {
        BoxMaker maker(99, Layout::Clustered, false);
        Scene scene = makeScene(maker, 5000);
        scene.tree.rebuild(scene.store);
        for (std::uint32_t slot = 0; slot < 5000; slot += 3) scene.move(slot, maker.moved(scene.box(slot)));
        const double lo[3] = {-300, -300, -300}, hi[3] = {300, 300, 300};
        scene.tree.queryBox(scene.store, lo, hi, [&](std::uint32_t slot) { order.push_back(slot); });
        const Ray ray{{-500, -500, -500}, {500, 500, 500}, {-20, -20, -20}, {20, 20, 20}};
        scene.tree.queryRay(scene.store, ray.from, ray.to, ray.castMin, ray.castMax,
                            [&](std::uint32_t slot) { order.push_back(slot); });
    }
    CHECK(orders[0].size() > 100);
    CHECK(orders[0] == orders[1]);
}

TEST_CASE("BoxTree: clear forgets everything", "[boxtree]") {
    Scene scene;
    BoxMaker maker(1, Layout::Uniform, true);
    for (std::uint32_t slot = 0; slot < 200; ++slot) scene.insert(slot, maker.next());
    scene.tree.rebuild(scene.store);
    CHECK(scene.tree.nodeCount() >= 2 * 200 / BoxTree::kLeafSize - 1);
    scene.store.clear();
    scene.tree.clear();
    REQUIRE(scene.tree.validate(scene.store));
    CHECK(scene.tree.nodeCount() == 0);
    const double lo[3] = {-kInf, -kInf, -kInf}, hi[3] = {kInf, kInf, kInf};
    CHECK(treeBoxQuery(scene, lo, hi).empty());
    scene.store.insert(3, lo, hi, 1, 1);
    scene.tree.onInserted(scene.store, 3);
    CHECK(treeBoxQuery(scene, lo, hi) == std::vector<std::uint32_t>{3});
}

TEST_CASE("BoxTree: changes wait for the next query, which sees them all", "[boxtree]") {
    BoxMaker maker(77, Layout::Uniform, false);
    Scene scene(true, true);
    for (std::uint32_t slot = 0; slot < 3000; ++slot) scene.insert(slot, maker.next());
    scene.tree.rebuild(scene.store);
    scene.placeAtOnce = false;
    for (std::uint32_t round = 0; round < 3; ++round) {
        for (std::uint32_t slot = round; slot < 3000; slot += 7) scene.move(slot, maker.next());
        scene.erase(3 + round * 7);
        scene.insert(3000 + round, maker.next());
        checkQueries(scene, maker, false, 40);
        REQUIRE(scene.tree.validate(scene.store));
    }
}

TEST_CASE("BoxTree: after most boxes moved, a few queries scan the store, then one rebuilds", "[boxtree]") {
    BoxMaker maker(91, Layout::Uniform, false);
    Scene scene(true, true);
    for (std::uint32_t slot = 0; slot < 2000; ++slot) scene.insert(slot, maker.next());
    scene.tree.rebuild(scene.store);
    scene.placeAtOnce = false;
    for (std::uint32_t slot = 0; slot < 2000; ++slot) scene.move(slot, maker.next());
    const std::uint64_t builds = scene.tree.buildCount();
    for (std::uint32_t query = 0; query <= BoxTree::kScansBeforeRebuild; ++query) {
        const Box box = maker.next();
        checkBoxQuery(scene, box.lo, box.hi);
        CHECK(scene.tree.buildCount() == builds + (query == BoxTree::kScansBeforeRebuild ? 1 : 0));
    }
    checkQueries(scene, maker, false, 10);
    REQUIRE(scene.tree.validate(scene.store));
}
