// SPDX-License-Identifier: Zlib
#include "kernels/common/radix_sort_cpu.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

using namespace bulletgpu;

TEST_CASE("RadixSorterCpu: pairs sort stably by key", "[radix]") {
    const std::size_t n = GENERATE(0, 1, 2, 1000, 100000);
    std::mt19937 random(7);
    std::vector<std::uint32_t> keys(n), values(n);
    for (std::size_t i = 0; i < n; ++i) {
        keys[i] = random() % (n < 10 ? 3 : 5000); // many ties
        values[i] = static_cast<std::uint32_t>(i);
    }
    std::vector<std::pair<std::uint32_t, std::uint32_t>> expected(n);
    for (std::size_t i = 0; i < n; ++i) expected[i] = {keys[i], values[i]};
    std::stable_sort(expected.begin(), expected.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    RadixSorterCpu sorter;
    sorter.sortPairs(keys, values, n, GENERATE(1, 2, 3));
    for (std::size_t i = 0; i < n; ++i) {
        REQUIRE(keys[i] == expected[i].first);
        REQUIRE(values[i] == expected[i].second);
    }
}

TEST_CASE("RadixSorterCpu: 64-bit pair keys sort on their used bits", "[radix]") {
    const int bits = GENERATE(1, 11, 17, 32);
    std::mt19937_64 random(11);
    const std::uint64_t mask = bits == 32 ? 0xffffffffull : ((1ull << bits) - 1);
    std::vector<std::uint64_t> keys(50000);
    for (auto& k : keys) k = ((random() & mask) << 32) | (random() & mask);
    auto expected = keys;
    std::sort(expected.begin(), expected.end());
    RadixSorterCpu sorter;
    sorter.sortKeys64(keys, keys.size(), bits, bits, GENERATE(1, 2));
    REQUIRE(keys == expected);
}

TEST_CASE("RadixSorterCpu: a nested call that gets fewer threads than it asks for still sorts", "[radix]") {
    // Inside an active parallel region OpenMP runs a nested region on one thread.
    std::vector<std::uint64_t> keys[2];
    std::vector<std::uint64_t> expected[2];
    for (int t = 0; t < 2; ++t) {
        std::mt19937_64 random(static_cast<std::uint64_t>(t) + 3);
        keys[t].resize(70000);
        for (auto& k : keys[t]) k = ((random() & 0xffff) << 32) | (random() & 0xffff);
        expected[t] = keys[t];
        std::sort(expected[t].begin(), expected[t].end());
    }
#pragma omp parallel for num_threads(2)
    for (int t = 0; t < 2; ++t) {
        RadixSorterCpu sorter;
        sorter.sortKeys64(keys[t], keys[t].size(), 16, 16, 8);
    }
    CHECK(keys[0] == expected[0]);
    CHECK(keys[1] == expected[1]);
}

TEST_CASE("bitWidth counts the bits of the largest value", "[radix]") {
    CHECK(bitWidth(0) == 0);
    CHECK(bitWidth(1) == 1);
    CHECK(bitWidth(2) == 2);
    CHECK(bitWidth(255) == 8);
    CHECK(bitWidth(0xffffffffu) == 32);
}
