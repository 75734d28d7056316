// SPDX-License-Identifier: Zlib
#include "kernels/common/aabb_ops.h"
#include "kernels/common/box_store.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace bulletgpu;

TEST_CASE("BoxStore: float bounds are rounded outward", "[boxstore]") {
    BoxStore store(true);
    const double lo[3] = {0.1, -0.1, 1e-40};
    const double hi[3] = {0.2, 1e300, -1e-40};
    store.insert(0, lo, hi, 1, 1);
    for (int axis = 0; axis < 3; ++axis) {
        CHECK(static_cast<double>(store.minData(axis)[0]) <= lo[axis]);
        CHECK(static_cast<double>(store.maxData(axis)[0]) >= hi[axis]);
    }
    CHECK(std::isinf(store.maxData(1)[0]));
    CHECK(store.exactMinData(0)[0] == 0.1);
}

TEST_CASE("BoxStore: unchanged boxes are not dirty, changed ones once", "[boxstore]") {
    BoxStore store;
    const double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1}, hi2[3] = {2, 1, 1};
    store.insert(3, lo, hi, 1, 1);
    CHECK(store.size() == 4);
    CHECK(store.dirtySlots().size() == 1);
    store.clearDirty();
    const auto revision = store.revision();
    CHECK_FALSE(store.update(3, lo, hi));
    CHECK(store.revision() == revision);
    CHECK(store.dirtySlots().empty());
    CHECK(store.update(3, lo, hi2));
    CHECK(store.update(3, lo, hi));
    CHECK(store.dirtySlots().size() == 1);
    CHECK(store.setFilter(3, 2, 2));
    CHECK_FALSE(store.setFilter(3, 2, 2));
    store.erase(3);
    CHECK_FALSE(store.isLive(3));
}

TEST_CASE("BoxStore: NaN and inverted boxes are unusable", "[boxstore]") {
    BoxStore store;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double ok[3] = {0, 0, 0}, one[3] = {1, 1, 1}, withNan[3] = {0, nan, 0}, inverted[3] = {2, 0, 0};
    store.insert(0, ok, one, 1, 1);
    store.insert(1, withNan, one, 1, 1);
    store.insert(2, inverted, one, 1, 1);
    CHECK(store.isUsable(0));
    CHECK_FALSE(store.isUsable(1));
    CHECK_FALSE(store.isUsable(2));
}

TEST_CASE("orderedFloatKey preserves float order", "[aabb]") {
    const float values[] = {-std::numeric_limits<float>::infinity(), -1e30f, -1.0f, -0.0f, 0.0f, 1e-30f, 1.0f, 3e38f,
                            std::numeric_limits<float>::infinity()};
    for (std::size_t i = 1; i < sizeof(values) / sizeof(values[0]); ++i) {
        CHECK(orderedFloatKey(values[i - 1]) <= orderedFloatKey(values[i]));
    }
}

TEST_CASE("floatStepDown and floatStepUp match nextafterf", "[aabb]") {
    const float inf = std::numeric_limits<float>::infinity();
    const float values[] = {0.0f,  -0.0f,   1.0f,           -1.0f,         1e-45f, -1e-45f, 1.17549435e-38f,
                            -2.5f, 3.0e38f, -3.4028235e38f, 3.4028235e38f, 0.1f,   -inf,    inf};
    for (const float value : values) {
        CHECK(floatStepDown(value) == std::nextafterf(value, -inf));
        CHECK(floatStepUp(value) == std::nextafterf(value, inf));
    }
    CHECK(std::isnan(floatStepDown(std::nanf(""))));
    CHECK(std::isnan(floatStepUp(std::nanf(""))));
}
