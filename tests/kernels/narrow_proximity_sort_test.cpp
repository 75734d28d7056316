// SPDX-License-Identifier: Zlib
// Sorting a query's contacts (kernels/narrow/engine/proximity_sort_cpu.h): the counting sort and
// its std::sort fallback give proximityBefore's order, record for record, on seeded random
// contact lists that take either path.
#include "kernels/narrow/engine/proximity_sort_cpu.h"
#include "kernels/narrow/geometry/proximity_contact.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <tuple>
#include <vector>

using namespace bulletgpu;

namespace {

/// `count` contacts of meshes (meshA, meshB) with distinct (kind, featureA, featureB) keys,
/// featureA below `span`, in random order; the payload (distance, points) tells records apart.
std::vector<ProximityContact> randomContacts(std::size_t count, std::uint32_t span, std::uint32_t meshA,
                                             std::uint32_t meshB, std::mt19937& random) {
    std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> keys;
    std::vector<ProximityContact> contacts;
    while (contacts.size() < count) {
        ProximityContact c{};
        c.meshA = meshA;
        c.meshB = meshB;
        c.kind = static_cast<std::uint32_t>(random() % 4);
        c.featureA = static_cast<std::uint32_t>(random() % span);
        c.featureB = static_cast<std::uint32_t>(random() % (4 * span + 7));
        if (!keys.insert({c.kind, c.featureA, c.featureB}).second) continue;
        c.distance = static_cast<float>(contacts.size());
        c.pointA[0] = static_cast<float>(random() % 1000);
        contacts.push_back(c);
    }
    return contacts;
}

/// Whether two lists are the same bytes.
bool sameRecords(const std::vector<ProximityContact>& a, const std::vector<ProximityContact>& b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(ProximityContact)) == 0);
}

/// contacts[first, end) sorted by std::sort with proximityBefore, the rest untouched.
std::vector<ProximityContact> expected(std::vector<ProximityContact> contacts, std::size_t first) {
    std::sort(contacts.begin() + static_cast<std::ptrdiff_t>(first), contacts.end(), proximityBefore);
    return contacts;
}

} // namespace

TEST_CASE("Contact sort: counting sort and fallback give proximityBefore's order", "[narrow][proximity]") {
    std::mt19937 random(20261127);
    ProximitySortScratch scratch;
    // Counts below and above the counting sort's threshold; spans dense (counting sort) and
    // sparse (std::sort); a prefix left alone.
    for (const std::size_t count : {0u, 1u, 2u, 500u, 1024u, 5000u, 40000u}) {
        for (const std::uint32_t span : {16u, 1000u, 100000u, 4000000000u}) {
            if (span < 64 && count > 1000) continue; // not enough distinct keys at the sizes tried
            for (const std::size_t first : {std::size_t{0}, std::size_t{3}}) {
                CAPTURE(count, span, first);
                std::vector<ProximityContact> contacts = randomContacts(count + first, span, 2, 5, random);
                const std::vector<ProximityContact> want = expected(contacts, first);
                sortProximityContacts(contacts, first, scratch);
                REQUIRE(sameRecords(contacts, want));
            }
        }
    }
}

TEST_CASE("Contact sort: contacts of several mesh pairs, already sorted ones and reversed ones",
          "[narrow][proximity]") {
    std::mt19937 random(7);
    ProximitySortScratch scratch;
    SECTION("two mesh pairs mixed: the fallback") {
        std::vector<ProximityContact> contacts = randomContacts(3000, 500, 0, 1, random);
        const std::vector<ProximityContact> other = randomContacts(3000, 500, 1, 1, random);
        contacts.insert(contacts.end(), other.begin(), other.end());
        std::shuffle(contacts.begin(), contacts.end(), random);
        const std::vector<ProximityContact> want = expected(contacts, 0);
        sortProximityContacts(contacts, 0, scratch);
        REQUIRE(sameRecords(contacts, want));
    }
    SECTION("sorted, then reversed") {
        std::vector<ProximityContact> contacts = expected(randomContacts(20000, 3000, 4, 4, random), 0);
        const std::vector<ProximityContact> want = contacts;
        sortProximityContacts(contacts, 0, scratch);
        REQUIRE(sameRecords(contacts, want));
        std::reverse(contacts.begin(), contacts.end());
        sortProximityContacts(contacts, 0, scratch);
        REQUIRE(sameRecords(contacts, want));
    }
    SECTION("one kind, one featureA: a single bucket") {
        std::vector<ProximityContact> contacts;
        for (std::uint32_t b = 0; b < 2000; ++b) {
            ProximityContact c{};
            c.kind = 2;
            c.featureA = 77;
            c.featureB = (b * 7919u) % 2000u;
            contacts.push_back(c);
        }
        const std::vector<ProximityContact> want = expected(contacts, 0);
        sortProximityContacts(contacts, 0, scratch);
        REQUIRE(sameRecords(contacts, want));
    }
}
