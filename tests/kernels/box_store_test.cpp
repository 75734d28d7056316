// SPDX-License-Identifier: Zlib
#include "kernels/common/aabb_ops.h"
#include "kernels/common/box_store.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

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

TEST_CASE("floatBelow and floatAbove round a double outward, bit for bit as the step functions", "[aabb]") {
    // The definition: convert, then step once when the conversion went the wrong way.
    const auto below = [](double v) {
        const float f = static_cast<float>(v);
        return static_cast<double>(f) > v ? floatStepDown(f) : f;
    };
    const auto above = [](double v) {
        const float f = static_cast<float>(v);
        return static_cast<double>(f) < v ? floatStepUp(f) : f;
    };
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> values = {0.0,
                                  -0.0,
                                  1e-300,
                                  -1e-300,
                                  1e-46,
                                  -1e-46,
                                  0.1,
                                  -0.1,
                                  1.0,
                                  -1.0,
                                  3.5e38,
                                  -3.5e38,
                                  1e300,
                                  -1e300,
                                  inf,
                                  -inf,
                                  2.5,
                                  -2.5,
                                  1e-45,
                                  -1e-45,
                                  3.4028234663852886e38,
                                  -3.4028234663852886e38,
                                  1.401298464324817e-45};
    std::uint64_t state = 88172645463325252ull;
    for (int i = 0; i < 100000; ++i) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        double v;
        std::memcpy(&v, &state, sizeof(v));
        if (!std::isnan(v)) values.push_back(v);
        values.push_back(static_cast<double>(static_cast<std::int64_t>(state % 2000001) - 1000000) * 1e-4);
    }
    for (const double v : values) {
        const float lo = floatBelow(v), hi = floatAbove(v);
        INFO("value " << v);
        REQUIRE(floatBits(lo) == floatBits(below(v)));
        REQUIRE(floatBits(hi) == floatBits(above(v)));
        REQUIRE(static_cast<double>(lo) <= v);
        REQUIRE(static_cast<double>(hi) >= v);
    }
    REQUIRE(std::isnan(floatBelow(std::nan(""))));
    REQUIRE(std::isnan(floatAbove(std::nan(""))));
}
