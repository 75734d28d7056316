// SPDX-License-Identifier: Zlib
// The link CCD query (kernels/narrow/ccd/link_ccd.h) against edgeEdgeCcd run on every pair of
// links that share no node, on seeded random chains: the same impacts with the same times. Plus
// named cases: a link passing through another, neighbours, zero-length links, an outlier box,
// large and small coordinates, a non-finite node.
#include "kernels/narrow/ccd/ccd_queries.h"
#include "kernels/narrow/ccd/link_ccd.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

using namespace bulletgpu;

namespace {

/// Chains of links with node positions at t = 0 and t = 1.
struct MovingChains {
    std::vector<double> x0, x1;       ///< x, y, z per node.
    std::vector<std::uint32_t> first; ///< First node of each chain.
    std::vector<std::uint32_t> count; ///< Nodes of each chain.

    /// Appends a chain of the nodes given at both times.
    void add(const std::vector<double>& start, const std::vector<double>& end) {
        first.push_back(static_cast<std::uint32_t>(x0.size() / 3));
        count.push_back(static_cast<std::uint32_t>(start.size() / 3));
        x0.insert(x0.end(), start.begin(), start.end());
        x1.insert(x1.end(), end.begin(), end.end());
    }
    /// The query's view.
    LinkChains view() const {
        return LinkChains{x0.data(), x1.data(), first.data(), count.data(), static_cast<std::uint32_t>(first.size())};
    }
};

/// Every pair of links sharing no node, through edgeEdgeCcd, in (linkA, linkB) order.
std::vector<LinkImpact> bruteForce(const MovingChains& chains, double eta) {
    std::vector<std::uint32_t> links;
    for (std::size_t c = 0; c < chains.first.size(); ++c)
        for (std::uint32_t n = 0; n + 1 < chains.count[c]; ++n) links.push_back(chains.first[c] + n);
    std::vector<LinkImpact> impacts;
    for (std::size_t i = 0; i < links.size(); ++i) {
        for (std::size_t j = i + 1; j < links.size(); ++j) {
            const std::uint32_t a = links[i], b = links[j];
            if (b == a + 1) continue;
            Vec3d x0[4], x1[4];
            const std::uint32_t nodes[4] = {a, a + 1, b, b + 1};
            for (int p = 0; p < 4; ++p) {
                for (int k = 0; k < 3; ++k) {
                    x0[p].v[k] = chains.x0[3 * nodes[p] + k];
                    x1[p].v[k] = chains.x1[3 * nodes[p] + k];
                }
            }
            CcdResult result;
            edgeEdgeCcd(x0, x1, eta, CcdOptions{}, result);
            if (result.hit) impacts.push_back({a, b, result.toi});
        }
    }
    return impacts;
}

/// Whether two impact lists are the same pairs with the same times.
bool sameImpacts(const std::vector<LinkImpact>& a, const std::vector<LinkImpact>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].linkA != b[i].linkA || a[i].linkB != b[i].linkB || a[i].toi != b[i].toi) return false;
    return true;
}

/// `chainCount` random walks of `nodes` nodes with steps of about `step`, in a box of side
/// `side`, every node moved by up to `motion` per axis.
MovingChains randomChains(int chainCount, int nodes, double step, double side, double motion, std::mt19937_64& random) {
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    MovingChains chains;
    for (int c = 0; c < chainCount; ++c) {
        std::vector<double> start, end;
        double p[3] = {side * unit(random), side * unit(random), side * unit(random)};
        for (int n = 0; n < nodes; ++n) {
            for (int k = 0; k < 3; ++k) {
                p[k] += step * unit(random);
                start.push_back(p[k]);
                end.push_back(p[k] + motion * unit(random));
            }
        }
        chains.add(start, end);
    }
    return chains;
}

/// Runs the query and returns its impacts.
std::vector<LinkImpact> query(const MovingChains& chains, double eta, int threads = 2) {
    LinkCcd ccd;
    std::vector<LinkImpact> impacts;
    ccd.find(chains.view(), eta, threads, impacts);
    return impacts;
}

} // namespace

TEST_CASE("Link CCD equals the per-pair test on every link pair of random chains", "[narrow][ccd][link]") {
    std::mt19937_64 random(20261125);
    int withImpacts = 0;
    for (int scene = 0; scene < 24; ++scene) {
        const double motion = scene % 3 == 0 ? 0.0 : 0.02 * (scene % 4 + 1);
        const MovingChains chains = randomChains(1 + scene % 4, 20 + 7 * (scene % 5), 0.05, 0.15, motion, random);
        for (const double eta : {0.0, 0.01}) {
            const std::vector<LinkImpact> expected = bruteForce(chains, eta);
            withImpacts += expected.empty() ? 0 : 1;
            INFO("scene " << scene << ", eta " << eta << ": " << expected.size() << " impacts expected");
            CHECK(sameImpacts(query(chains, eta, 1 + scene % 2), expected));
        }
    }
    CHECK(withImpacts > 24); // the scenes are dense enough to test something
}

TEST_CASE("Link CCD: named cases", "[narrow][ccd][link]") {
    SECTION("nothing, one node, one link") {
        MovingChains none;
        CHECK(query(none, 0.0).empty());
        MovingChains single;
        single.add({0, 0, 0}, {1, 0, 0});
        single.add({0, 0, 0, 1, 0, 0}, {0, 0, 0, 1, 0, 0});
        CHECK(query(single, 0.1).empty());
    }
    SECTION("a link passing through another") {
        MovingChains chains;
        chains.add({-1, 0, 0, 1, 0, 0}, {-1, 0, 0, 1, 0, 0});
        chains.add({0, -1, 1, 0, 1, 1}, {0, -1, -1, 0, 1, -1});
        const std::vector<LinkImpact> impacts = query(chains, 0.0);
        REQUIRE(impacts.size() == 1);
        CHECK(impacts[0].linkA == 0);
        CHECK(impacts[0].linkB == 2);
        CHECK(impacts[0].toi <= 0.5);
        CHECK(impacts[0].toi > 0.49);
    }
    SECTION("neighbours along a chain are never paired, the next ones are") {
        MovingChains folded; // four nodes folded onto one line: links 0 and 2 overlap
        folded.add({0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0}, {0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0});
        const std::vector<LinkImpact> impacts = query(folded, 0.0);
        REQUIRE(impacts.size() == 1);
        CHECK(impacts[0].linkA == 0);
        CHECK(impacts[0].linkB == 2);
        CHECK(impacts[0].toi == 0.0);
    }
    SECTION("zero-length links and identical chains") {
        MovingChains chains;
        chains.add({0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0, 0});
        chains.add({0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0, 0});
        CHECK(sameImpacts(query(chains, 0.0), bruteForce(chains, 0.0)));
        CHECK(query(chains, 0.0).size() == 4);
    }
    SECTION("an outlier link that moves across the scene") {
        std::mt19937_64 random(7);
        MovingChains chains = randomChains(3, 30, 0.05, 0.1, 0.01, random);
        chains.add({-5, 0, 0, -4.9, 0, 0}, {5, 0, 0, 5.1, 0, 0});
        const std::vector<LinkImpact> expected = bruteForce(chains, 0.005);
        CHECK(sameImpacts(query(chains, 0.005), expected));
    }
    SECTION("large and small coordinates") {
        for (const double scale : {1e6, 1e-6}) {
            std::mt19937_64 random(11);
            MovingChains chains = randomChains(2, 25, 0.05, 0.1, 0.03, random);
            for (double& x : chains.x0) x = x * scale + (scale > 1 ? 1e9 : 0);
            for (double& x : chains.x1) x = x * scale + (scale > 1 ? 1e9 : 0);
            CHECK(sameImpacts(query(chains, 0.0), bruteForce(chains, 0.0)));
        }
    }
    SECTION("a non-finite node: its links are reported against every link, at t = 0") {
        std::mt19937_64 random(3);
        MovingChains chains = randomChains(2, 10, 0.05, 0.1, 0.0, random);
        chains.x1[3 * 4] = NAN;
        const std::vector<LinkImpact> impacts = query(chains, 0.0);
        CHECK(sameImpacts(impacts, bruteForce(chains, 0.0)));
        CHECK(impacts.size() >= 2 * 15);
    }
}
