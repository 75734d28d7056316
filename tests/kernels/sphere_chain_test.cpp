// SPDX-License-Identifier: Zlib
// SphereChainSet on the CPU against the all-pairs oracle: exact sorted contact sets on the
// paper's paths, knots, coils, degenerate spheres, neighbour exclusion, many chains and motion.
#include "kernels/chain/sphere_chain.h"
#include "kernels/reference/brute_force_chains.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

using namespace bulletgpu;

namespace {

/// A set on the CPU backend holding `chains`.
void fill(SphereChainSet& set, const std::vector<ChainSpheres>& chains) {
    for (const ChainSpheres& chain : chains) {
        set.addChain(chain.centres.data(), chain.radii.data(), static_cast<std::uint32_t>(chain.radii.size()));
    }
}

/// Contacts of `chains` found by a fresh CPU set.
std::vector<ChainContact> cpuContacts(const std::vector<ChainSpheres>& chains, const ChainQuery& query) {
    SphereChainSet set(Backend::Cpu, 2);
    fill(set, chains);
    std::vector<ChainContact> contacts;
    set.findContacts(query, contacts);
    return contacts;
}

/// Identical contact lists: same pairs in the same order, same depths and normals.
void requireSameContacts(const std::vector<ChainContact>& found, const std::vector<ChainContact>& expected) {
    REQUIRE(found.size() == expected.size());
    std::size_t mismatches = 0;
    for (std::size_t c = 0; c < found.size(); ++c) {
        if (std::memcmp(&found[c], &expected[c], sizeof(ChainContact)) != 0) ++mismatches;
    }
    REQUIRE(mismatches == 0);
}

/// The set's contacts equal the oracle's for `query`.
void requireMatchesOracle(const std::vector<ChainSpheres>& chains, const ChainQuery& query = ChainQuery{}) {
    requireSameContacts(cpuContacts(chains, query), bruteForceChainContacts(chains, query));
}

/// A chain through `points` (x, y, z triples) with radius `radius` each.
ChainSpheres chainOf(std::vector<float> points, float radius) {
    ChainSpheres chain;
    chain.radii.assign(points.size() / 3, radius);
    chain.centres = std::move(points);
    return chain;
}

/// A trefoil knot of `count` spheres, scaled by 4, with radii cycling through 0.3 to 1.1.
ChainSpheres trefoil(std::uint32_t count) {
    ChainSpheres chain;
    for (std::uint32_t i = 0; i < count; ++i) {
        const double t = 6.283185307179586 * i / count;
        chain.centres.push_back(static_cast<float>(4 * (std::sin(t) + 2 * std::sin(2 * t))));
        chain.centres.push_back(static_cast<float>(4 * (std::cos(t) - 2 * std::cos(2 * t))));
        chain.centres.push_back(static_cast<float>(-4 * std::sin(3 * t)));
        chain.radii.push_back(0.3f + 0.8f * static_cast<float>(i % 5) / 4);
    }
    return chain;
}

/// A random walk of `count` spheres with steps up to `step` and radii in [minRadius, maxRadius].
ChainSpheres randomWalk(std::mt19937& rng, std::uint32_t count, float step, float minRadius, float maxRadius) {
    std::uniform_real_distribution<float> offset(-step, step), radius(minRadius, maxRadius);
    ChainSpheres chain;
    float p[3] = {offset(rng) * 20, offset(rng) * 20, offset(rng) * 20};
    for (std::uint32_t i = 0; i < count; ++i) {
        for (float& coordinate : p) {
            coordinate += offset(rng);
            chain.centres.push_back(coordinate);
        }
        chain.radii.push_back(radius(rng));
    }
    return chain;
}

/// Contacts that are not between neighbours within `k` links of one chain.
std::size_t distantContacts(const std::vector<ChainContact>& contacts, std::uint32_t k) {
    std::size_t count = 0;
    for (const ChainContact& c : contacts) count += c.chainA != c.chainB || c.sphereB - c.sphereA > k;
    return count;
}

} // namespace

TEST_CASE("SphereChain: the paper's two paths at 10,000 spheres match brute force", "[chain]") {
    for (const std::uint32_t count : {10000u}) {
        for (const bool circles : {false, true}) {
            CAPTURE(count, circles);
            const std::vector<ChainSpheres> chains{circles ? paperCirclesChain(count, 3)
                                                           : paperSinusoidChain(count, 3)};
            const std::vector<ChainContact> expected = bruteForceChainContacts(chains, ChainQuery{});
            requireSameContacts(cpuContacts(chains, ChainQuery{}), expected);
            if (circles) REQUIRE(distantContacts(expected, 2) > count);
        }
    }
}

TEST_CASE("SphereChain: the paper's two paths at 50,000 and 150,000 spheres match brute force", "[chain][large]") {
    requireMatchesOracle({paperSinusoidChain(50000, 1)});
    requireMatchesOracle({paperCirclesChain(50000, 1)});
    requireMatchesOracle({paperSinusoidChain(150000, 1)});
    requireMatchesOracle({paperCirclesChain(150000, 1)});
}

TEST_CASE("SphereChain: the descent and the per-sphere walks report the same contacts", "[chain]") {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> step(-0.5f, 0.5f), radius(0.0f, 0.8f);
    std::vector<ChainSpheres> walks(5);
    for (std::size_t c = 0; c < walks.size(); ++c) {
        float position[3] = {0, 0, 0};
        for (int s = 0; s < 301 + 97 * static_cast<int>(c); ++s) {
            for (float& coordinate : position) coordinate += step(rng);
            walks[c].centres.insert(walks[c].centres.end(), position, position + 3);
            walks[c].radii.push_back(radius(rng));
        }
    }
    const std::vector<std::vector<ChainSpheres>> scenes{
        {paperCirclesChain(10000, 4)}, {paperSinusoidChain(3001, 1)}, walks};
    for (const std::vector<ChainSpheres>& chains : scenes) {
        for (const ChainQuery base :
             {ChainQuery{1, true, true}, ChainQuery{0, true, false}, ChainQuery{2, false, true}}) {
            const std::vector<ChainContact> descent = cpuContacts(chains, base);
            for (const ChainTraversal traversal : {ChainTraversal::PerSphere, ChainTraversal::HalvesPerSphere}) {
                ChainQuery query = base;
                query.traversal = traversal;
                requireSameContacts(cpuContacts(chains, query), descent);
            }
            requireSameContacts(descent, bruteForceChainContacts(chains, base));
        }
    }
}

TEST_CASE("SphereChain: knots and a chain coiled on itself", "[chain]") {
    const std::vector<ChainSpheres> knot{trefoil(600)};
    REQUIRE(distantContacts(bruteForceChainContacts(knot, ChainQuery{}), 8) > 0);
    requireMatchesOracle(knot);
    ChainSpheres coil;
    for (std::uint32_t i = 0; i < 3000; ++i) {
        const double angle = 0.05 * i;
        coil.centres.insert(coil.centres.end(),
                            {static_cast<float>(5 * std::cos(angle)), static_cast<float>(5 * std::sin(angle)), 0.0f});
        coil.radii.push_back(0.4f);
    }
    requireMatchesOracle({coil});
    requireMatchesOracle({coil}, ChainQuery{3, true, true});
}

TEST_CASE("SphereChain: equal and varying radii on random walks", "[chain]") {
    std::mt19937 rng(7);
    requireMatchesOracle({randomWalk(rng, 4000, 0.6f, 0.5f, 0.5f)});
    requireMatchesOracle({randomWalk(rng, 4000, 0.6f, 0.05f, 2.0f)});
    requireMatchesOracle({randomWalk(rng, 3000, 2.0f, 0.0f, 6.0f)});
}

TEST_CASE("SphereChain: zero-radius, coincident and exactly touching spheres", "[chain]") {
    // All at one point with radius zero: every pair beyond the neighbours touches, depth 0.
    const ChainSpheres points = chainOf(std::vector<float>(3 * 40, 1.25f), 0.0f);
    const std::vector<ChainContact> contacts = cpuContacts({points}, ChainQuery{});
    REQUIRE(contacts.size() == 39 * 38 / 2);
    REQUIRE(contacts.front().depth == 0);
    REQUIRE(contacts.front().normal[2] == 1);
    requireMatchesOracle({points});
    // Coincident spheres of different radii, one inside another, and zero-radius points on surfaces.
    ChainSpheres mixed = chainOf({0, 0, 0, 0, 0, 0, 0.25f, 0, 0, 0, 0, 0, 3, 0, 0, 1, 0, 0, 5, 0, 0}, 1.0f);
    mixed.radii = {1.0f, 2.0f, 0.1f, 0.0f, 1.0f, 0.0f, 1.0f};
    for (const std::uint32_t k : {0u, 1u}) requireMatchesOracle({mixed}, ChainQuery{k, true, true});
    // Spheres exactly touching (distance == r1 + r2 in float and in double) count.
    const ChainSpheres touching = chainOf({0, 0, 0, 1, 0, 0, 2, 0, 0, 0.5f, 0.75f, 0}, 0.5f);
    REQUIRE(cpuContacts({touching}, ChainQuery{0, true, true}).size() == 4);
    requireMatchesOracle({touching}, ChainQuery{0, true, true});
}

TEST_CASE("SphereChain: near-touching pairs are never missed (conservative float tests)", "[chain]") {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> unit(-1, 1), radius(0.0f, 3.0f), jitter(-1e-6f, 1e-6f);
    std::vector<ChainSpheres> chains(2);
    for (int pair = 0; pair < 3000; ++pair) {
        float direction[3] = {unit(rng), unit(rng), unit(rng)};
        const float length =
            std::sqrt(direction[0] * direction[0] + direction[1] * direction[1] + direction[2] * direction[2]);
        const float ra = radius(rng), rb = radius(rng);
        const float centre[3] = {1000.0f * unit(rng), 1000.0f * unit(rng), 1000.0f * unit(rng)};
        for (int axis = 0; axis < 3; ++axis) {
            chains[0].centres.push_back(centre[axis]);
            chains[1].centres.push_back(centre[axis] + direction[axis] / length * (ra + rb) * (1 + jitter(rng)));
        }
        chains[0].radii.push_back(ra);
        chains[1].radii.push_back(rb);
    }
    const std::vector<ChainContact> expected = bruteForceChainContacts(chains, ChainQuery{});
    REQUIRE(expected.size() > 100);
    requireSameContacts(cpuContacts(chains, ChainQuery{}), expected);
}

TEST_CASE("SphereChain: axis-aligned near-touching pairs at huge and tiny scales (boxes are conservative)", "[chain]") {
    // Along an axis the boxes of touching spheres meet in a single value, so only their outward
    // rounding keeps the pair; centres up to 1e17 and radii down to 1e-36.
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> steps(-3, 3);
    std::uniform_real_distribution<float> place(-100.0f, 100.0f), size(0.5f, 3.0f);
    std::vector<ChainSpheres> chains(2);
    const float scales[] = {1e15f, 1e9f, 1.0f, 1e-20f, 1e-36f};
    for (const float scale : scales) {
        for (int pair = 0; pair < 400; ++pair) {
            const int axis = pair % 3;
            const float ra = scale * size(rng);
            const float rb = scale * size(rng);
            float a[3] = {scale * place(rng), scale * place(rng), scale * place(rng)};
            float b[3] = {a[0], a[1], a[2]};
            b[axis] = a[axis] + ra + rb;
            for (int ulps = steps(rng); ulps != 0; ulps += ulps > 0 ? -1 : 1) {
                b[axis] = std::nextafter(b[axis], ulps > 0 ? HUGE_VALF : -HUGE_VALF);
            }
            chains[0].centres.insert(chains[0].centres.end(), a, a + 3);
            chains[1].centres.insert(chains[1].centres.end(), b, b + 3);
            chains[0].radii.push_back(ra);
            chains[1].radii.push_back(rb);
        }
    }
    const ChainQuery between{1, false, true};
    const std::vector<ChainContact> expected = bruteForceChainContacts(chains, between);
    REQUIRE(expected.size() > 300);
    requireSameContacts(cpuContacts(chains, between), expected);
}

TEST_CASE("SphereChain: one- and two-sphere chains, empty sets", "[chain]") {
    const ChainSpheres one = chainOf({0, 0, 0}, 1.0f);
    const ChainSpheres two = chainOf({0.5f, 0, 0, 1.5f, 0, 0}, 0.6f);
    REQUIRE(cpuContacts({one}, ChainQuery{0, true, true}).empty());
    REQUIRE(cpuContacts({two}, ChainQuery{0, true, true}).size() == 1);
    REQUIRE(cpuContacts({two}, ChainQuery{}).empty());
    const std::vector<ChainContact> both = cpuContacts({one, two, one}, ChainQuery{});
    requireMatchesOracle({one, two, one});
    REQUIRE(both.size() == 5);
    SphereChainSet empty(Backend::Cpu, 1);
    std::vector<ChainContact> contacts(3);
    empty.findContacts(ChainQuery{}, contacts);
    REQUIRE(contacts.empty());
    empty.addChain(nullptr, nullptr, 0);
    empty.findContacts(ChainQuery{}, contacts);
    REQUIRE(contacts.empty());
}

TEST_CASE("SphereChain: neighbour exclusion k = 0, 1, 3", "[chain]") {
    const std::vector<ChainSpheres> chains{paperSinusoidChain(2000, 0), paperCirclesChain(2000, 0)};
    std::size_t previous = ~std::size_t{0};
    for (const std::uint32_t k : {0u, 1u, 3u}) {
        CAPTURE(k);
        const std::vector<ChainContact> contacts = cpuContacts(chains, ChainQuery{k, true, true});
        requireSameContacts(contacts, bruteForceChainContacts(chains, ChainQuery{k, true, true}));
        for (const ChainContact& c : contacts) REQUIRE((c.chainA != c.chainB || c.sphereB - c.sphereA > k));
        REQUIRE(contacts.size() < previous);
        previous = contacts.size();
    }
}

TEST_CASE("SphereChain: several chains at once, self and mutual filters", "[chain]") {
    std::mt19937 rng(3);
    std::vector<ChainSpheres> chains;
    for (int c = 0; c < 12; ++c) chains.push_back(randomWalk(rng, 50 + 97 * c, 0.7f, 0.2f, 0.9f));
    for (const ChainQuery query : {ChainQuery{1, true, true}, ChainQuery{2, true, false}, ChainQuery{1, false, true},
                                   ChainQuery{0, false, false}}) {
        const std::vector<ChainContact> expected = bruteForceChainContacts(chains, query);
        requireSameContacts(cpuContacts(chains, query), expected);
        if (query.betweenChains) REQUIRE(distantContacts(expected, ~0u) > 0);
    }
}

TEST_CASE("SphereChain: refit over frames of motion equals a rebuild", "[chain]") {
    std::vector<ChainSpheres> chains{paperCirclesChain(5000, 0), trefoil(700), paperSinusoidChain(3000, 0)};
    SphereChainSet moving(Backend::Cpu, 2);
    fill(moving, chains);
    std::vector<ChainContact> contacts;
    for (int frame = 1; frame <= 5; ++frame) {
        CAPTURE(frame);
        chains[0] = paperCirclesChain(5000, frame);
        chains[2] = paperSinusoidChain(3000, frame);
        for (float& radius : chains[1].radii) radius *= 1.02f;
        for (std::uint32_t c = 0; c < 3; ++c) {
            moving.setPositions(c, chains[c].centres.data(), c == 1 ? chains[1].radii.data() : nullptr);
        }
        moving.findContacts(ChainQuery{}, contacts);
        REQUIRE(moving.stats().refitted);
        requireSameContacts(contacts, cpuContacts(chains, ChainQuery{}));
        moving.findContacts(ChainQuery{}, contacts);
        REQUIRE_FALSE(moving.stats().refitted);
    }
    requireSameContacts(contacts, bruteForceChainContacts(chains, ChainQuery{}));
}

TEST_CASE("SphereChain: contact depth and normal", "[chain]") {
    const ChainSpheres chain = chainOf({0, 0, 0, 3, 4, 0}, 3.0f);
    const std::vector<ChainContact> contacts = cpuContacts({chain}, ChainQuery{0, true, true});
    REQUIRE(contacts.size() == 1);
    REQUIRE(contacts[0].depth == Approx(1.0));
    REQUIRE(contacts[0].normal[0] == Approx(-0.6));
    REQUIRE(contacts[0].normal[1] == Approx(-0.8));
    REQUIRE(contacts[0].normal[2] == 0);
}

TEST_CASE("SphereChain: bad input is refused", "[chain]") {
    SphereChainSet set(Backend::Cpu, 1);
    const float centres[6] = {0, 0, 0, 1, 0, 0};
    const float negative[2] = {1, -1};
    const float nan[6] = {0, 0, 0, NAN, 0, 0};
    const float radii[2] = {1, 1};
    REQUIRE_THROWS_AS(set.addChain(centres, negative, 2), std::invalid_argument);
    REQUIRE_THROWS_AS(set.addChain(nan, radii, 2), std::invalid_argument);
    REQUIRE(set.chainCount() == 0);
    set.addChain(centres, radii, 2);
    REQUIRE_THROWS_AS(set.setPositions(1, centres), std::invalid_argument);
    REQUIRE_THROWS_AS(set.setPositions(0, nan), std::invalid_argument);
    REQUIRE(set.sphereCount() == 2);
}

namespace {

/// The contacts of `all` that hold one of the sorted global spheres `listed` of `set`.
std::vector<ChainContact> contactsHolding(const SphereChainSet& set, const std::vector<ChainContact>& all,
                                          const std::vector<std::uint32_t>& listed,
                                          const std::vector<ChainSpheres>& chains) {
    std::vector<std::uint32_t> first(chains.size(), 0);
    for (std::size_t c = 1; c < chains.size(); ++c)
        first[c] = first[c - 1] + static_cast<std::uint32_t>(chains[c - 1].radii.size());
    std::vector<char> isListed(set.sphereCount(), 0);
    for (const std::uint32_t s : listed) isListed[s] = 1;
    std::vector<ChainContact> out;
    for (const ChainContact& c : all)
        if (isListed[first[c.chainA] + c.sphereA] || isListed[first[c.chainB] + c.sphereB]) out.push_back(c);
    return out;
}

} // namespace

TEST_CASE("SphereChain: the contacts of listed spheres are the whole query's that hold them", "[chain]") {
    std::mt19937 rng(11);
    std::vector<ChainSpheres> chains{paperCirclesChain(1500, 0), trefoil(400)};
    for (int c = 0; c < 6; ++c) chains.push_back(randomWalk(rng, 40 + 61 * c, 0.7f, 0.2f, 0.9f));
    SphereChainSet set(Backend::Cpu, 2);
    fill(set, chains);
    const std::uint32_t spheres = set.sphereCount();
    std::vector<std::vector<std::uint32_t>> lists{{}, {0}, {spheres - 1}, {0, 1, 2, 3}};
    std::vector<std::uint32_t> every(spheres);
    for (std::uint32_t s = 0; s < spheres; ++s) every[s] = s;
    lists.push_back(every);
    for (const double share : {0.01, 0.2, 0.6}) { // Random lists: neighbours listed together and apart.
        std::bernoulli_distribution pick(share);
        std::vector<std::uint32_t> list;
        for (std::uint32_t s = 0; s < spheres; ++s)
            if (pick(rng)) list.push_back(s);
        lists.push_back(list);
    }
    for (const ChainQuery query : {ChainQuery{1, true, true}, ChainQuery{0, true, true}, ChainQuery{3, true, false},
                                   ChainQuery{1, false, true}, ChainQuery{2, false, false}}) {
        std::vector<ChainContact> all, listed;
        set.findContacts(query, all);
        for (const std::vector<std::uint32_t>& list : lists) {
            CAPTURE(query.excludedNeighbours, query.selfCollision, query.betweenChains, list.size());
            set.findContactsOf(list.data(), static_cast<std::uint32_t>(list.size()), query, listed);
            requireSameContacts(listed, contactsHolding(set, all, list, chains));
        }
    }
    // After a move, on the refitted hierarchy.
    for (ChainSpheres& chain : chains)
        for (float& coordinate : chain.centres) coordinate *= 0.97f;
    for (std::uint32_t c = 0; c < chains.size(); ++c) set.setPositions(c, chains[c].centres.data());
    std::vector<ChainContact> all, listed;
    set.findContactsOf(lists.back().data(), static_cast<std::uint32_t>(lists.back().size()), ChainQuery{}, listed);
    set.findContacts(ChainQuery{}, all);
    requireSameContacts(listed, contactsHolding(set, all, lists.back(), chains));
    REQUIRE(listed.size() > 0);
}

TEST_CASE("SphereChain: a list of spheres out of order or out of range is refused", "[chain]") {
    SphereChainSet set(Backend::Cpu, 1);
    const float centres[9] = {0, 0, 0, 1, 0, 0, 2, 0, 0};
    const float radii[3] = {1, 1, 1};
    set.addChain(centres, radii, 3);
    std::vector<ChainContact> contacts;
    const std::uint32_t unsorted[2] = {2, 1}, repeated[2] = {1, 1}, outside[1] = {3};
    REQUIRE_THROWS_AS(set.findContactsOf(unsorted, 2, ChainQuery{}, contacts), std::invalid_argument);
    REQUIRE_THROWS_AS(set.findContactsOf(repeated, 2, ChainQuery{}, contacts), std::invalid_argument);
    REQUIRE_THROWS_AS(set.findContactsOf(outside, 1, ChainQuery{}, contacts), std::invalid_argument);
    SphereChainSet empty(Backend::Cpu, 1);
    REQUIRE_NOTHROW(empty.findContactsOf(nullptr, 0, ChainQuery{}, contacts));
    REQUIRE(contacts.empty());
}

TEST_CASE("SphereChain: moving a few spheres refits their paths to the same contacts as a fresh set", "[chain]") {
    std::mt19937 rng(21);
    std::vector<ChainSpheres> chains{paperCirclesChain(3000, 0)};
    for (int c = 0; c < 5; ++c) chains.push_back(randomWalk(rng, 100 + 157 * c, 0.7f, 0.2f, 0.9f));
    SphereChainSet set(Backend::Cpu, 2);
    fill(set, chains);
    std::vector<std::uint32_t> first{0};
    for (const ChainSpheres& chain : chains)
        first.push_back(first.back() + static_cast<std::uint32_t>(chain.radii.size()));
    const std::uint32_t spheres = first.back();
    std::vector<ChainContact> contacts;
    set.findContacts(ChainQuery{}, contacts);
    std::uniform_real_distribution<float> nudge(-0.3f, 0.3f);
    for (int frame = 0; frame < 12; ++frame) {
        CAPTURE(frame);
        // Few spheres (their paths), many (a whole refit), or a chain moved whole in between.
        const double share = frame % 3 == 0 ? 0.5 : 0.01;
        std::bernoulli_distribution pick(share);
        std::vector<std::uint32_t> moved;
        std::vector<float> centres;
        for (std::uint32_t s = 0; s < spheres; ++s) {
            if (!pick(rng)) continue;
            const std::uint32_t c =
                static_cast<std::uint32_t>(std::upper_bound(first.begin(), first.end(), s) - first.begin()) - 1;
            // Next to another sphere, anywhere: new contacts far from the old place.
            const std::uint32_t to = std::uniform_int_distribution<std::uint32_t>(0, spheres - 1)(rng);
            const std::uint32_t d =
                static_cast<std::uint32_t>(std::upper_bound(first.begin(), first.end(), to) - first.begin()) - 1;
            float* p = &chains[c].centres[3 * (s - first[c])];
            for (int a = 0; a < 3; ++a) {
                p[a] = chains[d].centres[3 * (to - first[d]) + a] + nudge(rng);
                centres.push_back(p[a]);
            }
            moved.push_back(s);
        }
        // And two spheres of different chains to one spot far outside the rest: their contact
        // is there only if every level above them was refitted.
        for (const std::uint32_t c : {0u, 3u}) {
            const std::uint32_t s = first[c] + static_cast<std::uint32_t>(frame);
            if (std::find(moved.begin(), moved.end(), s) != moved.end()) continue;
            float* p = &chains[c].centres[3 * (s - first[c])];
            p[0] = 200.0f + 10.0f * static_cast<float>(frame);
            p[1] = p[2] = 0;
            centres.insert(centres.end(), p, p + 3);
            moved.push_back(s);
        }
        set.moveSpheres(moved.data(), static_cast<std::uint32_t>(moved.size()), centres.data());
        if (frame % 4 == 2) {
            for (float& coordinate : chains[1].centres) coordinate += 0.1f;
            set.setPositions(1, chains[1].centres.data());
        }
        set.findContacts(ChainQuery{}, contacts);
        requireSameContacts(contacts, cpuContacts(chains, ChainQuery{}));
    }
    REQUIRE(contacts.size() > 0);
}

TEST_CASE("SphereChain: moving spheres with bad input is refused and moves nothing", "[chain]") {
    SphereChainSet set(Backend::Cpu, 1);
    const float centres[6] = {0, 0, 0, 1, 0, 0};
    const float radii[2] = {0.6f, 0.6f};
    set.addChain(centres, radii, 2);
    std::vector<ChainContact> contacts;
    const std::uint32_t outside[1] = {2}, both[2] = {0, 1};
    const float far[3] = {10, 0, 0}, nan[6] = {5, 0, 0, NAN, 0, 0};
    REQUIRE_THROWS_AS(set.moveSpheres(outside, 1, far), std::invalid_argument);
    REQUIRE_THROWS_AS(set.moveSpheres(both, 2, nan), std::invalid_argument);
    set.findContacts(ChainQuery{0, true, true}, contacts);
    REQUIRE(contacts.size() == 1); // Still touching: nothing moved.
    set.moveSpheres(both, 1, far);
    set.findContacts(ChainQuery{0, true, true}, contacts);
    REQUIRE(contacts.empty());
}
