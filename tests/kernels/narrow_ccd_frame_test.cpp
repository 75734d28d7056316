// SPDX-License-Identifier: Zlib
// The whole-frame CCD query (kernels/narrow/ccd/ccd_frame_query.h) against the per-pair tests
// run on every feature pair of small seeded random scenes, self and pair: the culled impacts
// must be exactly the same set, with the same times. Plus named edge cases and the plane filter.
#include "kernels/narrow/ccd/ccd_frame_query.h"
#include "kernels/narrow/ccd/ccd_plane_filter.h"
#include "tests/support/moving_mesh.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace bulletgpu;
using bulletgpu::test::MovingMesh;
using bulletgpu::test::randomGrid;
using bulletgpu::test::transform;
using bulletgpu::test::triangle;

namespace {

/// Point i of `x`.
Vec3d pointOf(const std::vector<double>& x, std::uint32_t i) { return Vec3d{{x[3 * i], x[3 * i + 1], x[3 * i + 2]}}; }

/// The per-pair test on every feature pair of the meshes (one mesh twice when `self`: unordered
/// pairs sharing no vertex), written out here apart from ccd_candidate_ops.h; hits sorted.
std::vector<CcdImpact> allPairsImpacts(const MovingMesh& a, const MovingMesh& b, bool self, double eta,
                                       const CcdOptions& options) {
    MeshFeatures fa, fb;
    buildMeshFeatures(a.indices.data(), static_cast<std::uint32_t>(a.indices.size() / 3),
                      static_cast<std::uint32_t>(a.x0.size() / 3), fa);
    buildMeshFeatures(b.indices.data(), static_cast<std::uint32_t>(b.indices.size() / 3),
                      static_cast<std::uint32_t>(b.x0.size() / 3), fb);
    std::vector<CcdImpact> impacts;
    const auto test = [&](CcdFeatureKind kind, std::uint32_t fa0, std::uint32_t fb0, const MovingMesh* meshes[4],
                          const std::uint32_t vertices[4]) {
        Vec3d x0[4], x1[4];
        for (int i = 0; i < 4; ++i) {
            x0[i] = pointOf(meshes[i]->x0, vertices[i]);
            x1[i] = pointOf(meshes[i]->x1, vertices[i]);
        }
        CcdResult result;
        if (kind == CcdFeatureKind::EdgeEdge) {
            edgeEdgeCcd(x0, x1, eta, options, result);
        } else {
            vertexFaceCcd(x0, x1, eta, options, result);
        }
        if (result.hit) impacts.push_back(CcdImpact{CcdFeaturePair{fa0, fb0, kind}, result.toi, result.undecided});
    };
    // A vertex in no triangle takes no part.
    const auto used = [](const MovingMesh& m) {
        std::vector<bool> u(m.x0.size() / 3, false);
        for (std::uint32_t v : m.indices) u[v] = true;
        return u;
    };
    const std::vector<bool> usedA = used(a), usedB = used(b);
    const auto vertexFace = [&](const MovingMesh& vm, const std::vector<bool>& usedV, const MovingMesh& fm,
                                bool faceFirst) {
        for (std::uint32_t v = 0; v < usedV.size(); ++v) {
            if (!usedV[v]) continue;
            for (std::uint32_t f = 0; f < fm.indices.size() / 3; ++f) {
                const std::uint32_t* c = &fm.indices[3 * f];
                if (self && (c[0] == v || c[1] == v || c[2] == v)) continue;
                const MovingMesh* meshes[4] = {&vm, &fm, &fm, &fm};
                const std::uint32_t vertices[4] = {v, c[0], c[1], c[2]};
                if (faceFirst) {
                    test(CcdFeatureKind::FaceVertex, f, v, meshes, vertices);
                } else {
                    test(CcdFeatureKind::VertexFace, v, f, meshes, vertices);
                }
            }
        }
    };
    vertexFace(a, usedA, b, false);
    if (!self) vertexFace(b, usedB, a, true);
    for (std::uint32_t i = 0; i < fa.edges.size() / 2; ++i) {
        for (std::uint32_t j = self ? i + 1 : 0; j < fb.edges.size() / 2; ++j) {
            const std::uint32_t vertices[4] = {fa.edges[2 * i], fa.edges[2 * i + 1], fb.edges[2 * j],
                                               fb.edges[2 * j + 1]};
            if (self && (vertices[0] == vertices[2] || vertices[0] == vertices[3] || vertices[1] == vertices[2] ||
                         vertices[1] == vertices[3])) {
                continue;
            }
            const MovingMesh* meshes[4] = {&a, &a, &b, &b};
            test(CcdFeatureKind::EdgeEdge, i, j, meshes, vertices);
        }
    }
    std::sort(impacts.begin(), impacts.end(),
              [](const CcdImpact& x, const CcdImpact& y) { return featurePairBefore(x.pair, y.pair); });
    return impacts;
}

/// Runs the frame query (self when b is null) on `threads`, with or without the prefilters.
CcdFrameResult runQuery(const MovingMesh& a, const MovingMesh* b, double eta, int threads,
                        std::vector<CcdFeaturePair>* candidates = nullptr, bool prefilter = true) {
    CcdFrameQuery query;
    CcdFrameOptions options;
    options.eta = eta;
    options.threads = threads;
    options.prefilter = prefilter;
    CcdFrameResult result;
    if (b == nullptr) {
        query.runSelf(a.view(), options, result);
    } else {
        query.runPair(a.view(), b->view(), options, result);
    }
    if (candidates != nullptr) *candidates = query.candidates();
    return result;
}

/// Requires the frame query to give exactly the impacts of all pairs (same pairs, same times),
/// on 1 and 2 threads and without the prefilters, with no feature pair tested twice; returns the
/// one-thread result.
CcdFrameResult requireEqualToAllPairs(const MovingMesh& a, const MovingMesh* b, double eta) {
    const bool self = b == nullptr;
    const std::vector<CcdImpact> expected = allPairsImpacts(a, self ? a : *b, self, eta, CcdOptions{});
    std::vector<CcdFeaturePair> candidates;
    const CcdFrameResult one = runQuery(a, b, eta, 1, &candidates);
    const CcdFrameResult two = runQuery(a, b, eta, 2);
    const CcdFrameResult unfiltered = runQuery(a, b, eta, 2, nullptr, false);
    REQUIRE(unfiltered.counts.exactTests >= one.counts.exactTests);
    std::sort(candidates.begin(), candidates.end(), featurePairBefore);
    const auto same = [](const CcdFeaturePair& x, const CcdFeaturePair& y) {
        return x.kind == y.kind && x.a == y.a && x.b == y.b;
    };
    REQUIRE(std::adjacent_find(candidates.begin(), candidates.end(), same) == candidates.end());
    for (const CcdFrameResult* result : {&one, &two, &unfiltered}) {
        INFO("expected " << expected.size() << " impacts, got " << result->impacts.size() << " from "
                         << result->counts.exactTests << " tests of " << result->counts.featurePairs
                         << " feature pairs in " << result->counts.trianglePairs << " triangle pairs");
        REQUIRE(result->impacts.size() == expected.size());
        double earliest = HUGE_VAL;
        for (std::size_t i = 0; i < expected.size(); ++i) {
            REQUIRE(same(result->impacts[i].pair, expected[i].pair));
            REQUIRE(result->impacts[i].toi == expected[i].toi);
            REQUIRE(result->impacts[i].undecided == expected[i].undecided);
            earliest = std::min(earliest, expected[i].toi);
        }
        REQUIRE(result->earliestToi == earliest);
        REQUIRE(result->counts.impacts == expected.size());
        REQUIRE(result->counts.exactTests <= result->counts.featurePairs);
    }
    return one;
}

} // namespace

TEST_CASE("CCD frame query equals the per-pair tests on every feature pair of random scenes", "[narrow][ccd]") {
    const double eta = GENERATE(0.0, 1e-3, 0.05);
    const bool self = GENERATE(true, false);
    std::mt19937_64 random(2929);
    std::size_t impacts = 0, firstBoxCulled = 0, planeCulled = 0, exactTests = 0;
    for (int scene = 0; scene < 12; ++scene) {
        // Jittered grids that crumple through themselves and each other during the step.
        MovingMesh a = randomGrid(5, 0.0, 0.15, 0.4, random);
        const MovingMesh b = randomGrid(4, 0.2, 0.15, 0.4, random);
        INFO("scene " << scene << ", eta " << eta << (self ? ", self" : ", pair"));
        const CcdFrameResult result = requireEqualToAllPairs(a, self ? nullptr : &b, eta);
        impacts += result.impacts.size();
        firstBoxCulled += result.counts.firstBoxCulled;
        planeCulled += result.counts.planeCulled;
        exactTests += result.counts.exactTests;
    }
    // Both filters and the exact tests had work to do.
    CHECK(impacts > 0);
    CHECK(firstBoxCulled > 0);
    CHECK(planeCulled > 0);
    CHECK(exactTests > impacts);
}

TEST_CASE("CCD frame query named cases", "[narrow][ccd]") {
    std::mt19937_64 random(29);
    SECTION("zero motion: only features already within eta") {
        MovingMesh a = randomGrid(5, 0.0, 0.15, 0.0, random);
        MovingMesh b = randomGrid(4, 0.1, 0.15, 0.0, random);
        requireEqualToAllPairs(a, nullptr, 0.01);
        requireEqualToAllPairs(a, &b, 0.01);
        // A vertex resting on the other's face: an impact at t = 0.
        const MovingMesh face = triangle({0, 0, 0, 1, 0, 0, 0, 1, 0}, {});
        const MovingMesh resting = triangle({0.25, 0.25, 0, 1, 1, 1, 0, 1, 1}, {});
        const std::vector<CcdImpact> hits = requireEqualToAllPairs(face, &resting, 0.0).impacts;
        REQUIRE_FALSE(hits.empty());
        CHECK(hits.front().toi == 0.0);
    }
    SECTION("huge and tiny coordinates") {
        const MovingMesh baseA = randomGrid(5, 0.0, 0.15, 0.4, random);
        const MovingMesh baseB = randomGrid(4, 0.2, 0.15, 0.4, random);
        struct Scale {
            double scale, offset;
        };
        for (const Scale s :
             {Scale{1e30, 1e31}, Scale{0x1p900, 0x1p900}, Scale{1e-30, 0.0}, Scale{1e-300, 0.0}, Scale{1.0, 1e6}}) {
            MovingMesh a = baseA, b = baseB;
            transform(a, s.scale, s.offset);
            transform(b, s.scale, s.offset);
            INFO("scale " << s.scale << " offset " << s.offset);
            const double eta = 1e-3 * s.scale;
            requireEqualToAllPairs(a, nullptr, eta);
            requireEqualToAllPairs(a, &b, eta);
        }
    }
    SECTION("eta = 0 and touching features") {
        // Edge against edge meeting exactly at t = 1/2, eta = 0.
        const MovingMesh a = triangle({0, 0, 0, 1, 0, 0, 0, -1, 0}, {});
        const MovingMesh b =
            triangle({0.5, -0.5, 1, 0.5, 0.5, 1, 0.5, 0.5, 3}, {0.5, -0.5, -1, 0.5, 0.5, -1, 0.5, 0.5, 1});
        const std::vector<CcdImpact> hits = requireEqualToAllPairs(a, &b, 0.0).impacts;
        REQUIRE_FALSE(hits.empty());
        CHECK(std::any_of(hits.begin(), hits.end(),
                          [](const CcdImpact& h) { return h.pair.kind == CcdFeatureKind::EdgeEdge && h.toi <= 0.5; }));
    }
    SECTION("a vertex passes exactly through an edge") {
        // B's vertex 0 falls through the midpoint of A's edge (0, 1) at t = 1/2.
        const MovingMesh a = triangle({0, 0, 0, 1, 0, 0, 0, 1, 0}, {});
        const MovingMesh b = triangle({0.5, 0, 1, 0.5, -1, 2, 1.5, 0, 2}, {0.5, 0, -1, 0.5, -1, 0, 1.5, 0, 0});
        const std::vector<CcdImpact> hits = requireEqualToAllPairs(a, &b, 0.0).impacts;
        const auto vertexHit = std::find_if(hits.begin(), hits.end(), [](const CcdImpact& h) {
            return h.pair.kind == CcdFeatureKind::FaceVertex && h.pair.a == 0 && h.pair.b == 0;
        });
        REQUIRE(vertexHit != hits.end());
        CHECK(vertexHit->toi <= 0.5);
        // The same within one mesh: the two triangles joined as one mesh's self query.
        MovingMesh joined = a;
        joined.x0.insert(joined.x0.end(), b.x0.begin(), b.x0.end());
        joined.x1.insert(joined.x1.end(), b.x1.begin(), b.x1.end());
        joined.indices.insert(joined.indices.end(), {3, 4, 5});
        CHECK_FALSE(requireEqualToAllPairs(joined, nullptr, 0.0).impacts.empty());
    }
    SECTION("empty meshes and invalid input") {
        const MovingMesh empty;
        const MovingMesh one = triangle({0, 0, 0, 1, 0, 0, 0, 1, 0}, {});
        CHECK(runQuery(empty, nullptr, 0.0, 2).impacts.empty());
        CHECK(runQuery(one, nullptr, 0.0, 2).impacts.empty());
        CHECK(runQuery(one, &empty, 0.0, 2).impacts.empty());
        MovingMesh bad = one;
        bad.x1[4] = std::nan("");
        CHECK_THROWS_AS(runQuery(bad, nullptr, 0.0, 1), std::invalid_argument);
        CHECK_THROWS_AS(runQuery(one, nullptr, -1.0, 1), std::invalid_argument);
    }
}

TEST_CASE("CCD plane filter separates only features that stay apart", "[narrow][ccd]") {
    const auto v = [](double x, double y, double z) { return Vec3d{{x, y, z}}; };
    // P, E1, E2 of a vertex-face pair: the face a = 0, b = x axis, c = y axis at rest, the vertex
    // at P(0) and P(1); distance D.
    const auto vertexOverFace = [&](const Vec3d& p0, const Vec3d& p1, double scale, double distance) {
        const auto s = [&](const Vec3d& a) { return v(a[0] * scale, a[1] * scale, a[2] * scale); };
        return planeSeparated(s(p0), s(p1), s(v(1, 0, 0)), s(v(1, 0, 0)), s(v(0, 1, 0)), s(v(0, 1, 0)),
                              distance * scale);
    };
    for (const double scale : {1.0, 1e-30, 1e-300, 0x1p900, 1e30}) {
        INFO("scale " << scale);
        // Gliding above the plane at height 1, below it at -1: separated by 0.5, not by 1.
        CHECK(vertexOverFace(v(0.2, 0.2, 1), v(5, -3, 1), scale, 0.5) == (scale > 1e-200 && scale < 1e200));
        CHECK(vertexOverFace(v(0.2, 0.2, -1), v(5, -3, -1), scale, 0.5) == (scale > 1e-200 && scale < 1e200));
        CHECK_FALSE(vertexOverFace(v(0.2, 0.2, 1), v(5, -3, 1), scale, 1.0));
        // Crossing the plane (even far outside the face), touching it at the end: never separated.
        CHECK_FALSE(vertexOverFace(v(5, 5, 1), v(5, 5, -1), scale, 0.0));
        CHECK_FALSE(vertexOverFace(v(0.2, 0.2, 1), v(0.2, 0.2, 0), scale, 0.0));
    }
    // Edge-edge: a0 = 0, a1 = x axis; b0 = (0.5, -1, h), b1 = (0.5, 1, h) moving from h = 1 to
    // h = 0.6: the lines stay 0.6 apart at least.
    const Vec3d e1 = v(1, 0, 0), e2 = v(0, 2, 0);
    CHECK(planeSeparated(v(0.5, -1, 1), v(0.5, -1, 0.6), e1, e1, e2, e2, 0.5));
    CHECK_FALSE(planeSeparated(v(0.5, -1, 1), v(0.5, -1, 0.6), e1, e1, e2, e2, 0.7));
    // Parallel edges give a zero normal: never separated, however far apart.
    CHECK_FALSE(planeSeparated(v(0, 5, 5), v(0, 5, 5), e1, e1, e1, e1, 0.0));
}
