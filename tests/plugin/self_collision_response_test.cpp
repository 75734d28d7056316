// SPDX-License-Identifier: Zlib
// The self-collision response on flat buffers (bullet_adapter/self_collision_response.h): the
// projection restores the thickness on the side of the step's start, by inverse mass, and the
// continuous stage catches what crossed, projecting it or putting it back at the start.
#include "bullet_adapter/self_collision_response.h"

#include "bullet_adapter/pair_colouring.h"
#include "kernels/narrow/geometry/mesh_features.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <vector>

namespace {

using namespace bulletgpu;

/// A vertex (0) over the centroid of a triangle (1, 2, 3) in the plane y = 0, plus a triangle (0, 4, 5) standing
/// on the vertex (the CCD query takes only vertices of triangles); start and end editable.
struct VertexOverTriangle {
    std::vector<std::uint32_t> indices{1, 2, 3, 0, 4, 5};
    std::vector<double> start{1.0 / 3, 0.1, 1.0 / 3, 0,       0,   0,       1,   0,   0,
                              0,       0,   1,       1.0 / 3, 1.1, 1.0 / 3, 0.4, 1.1, 1.0 / 3};
    std::vector<double> end = start;
    std::vector<double> inverseMass{1, 1, 1, 1, 1, 1};
    MeshFeatures features;

    VertexOverTriangle() { buildMeshFeatures(indices.data(), 2, 6, features); }
    SelfCollisionMesh view() {
        return SelfCollisionMesh{6,          indices.data(),    2, features.edges.data(), start.data(),
                                 end.data(), inverseMass.data()};
    }
    /// The vertex's height over the triangle's plane, which the triangle keeps (it moves along y).
    double gap() const { return end[1] - (end[4] + end[7] + end[10]) / 3; }
    /// Moves the vertex and the triangle standing on it down by `drop` at the end.
    void dropStanding(double drop) {
        for (int v : {0, 4, 5}) end[3 * v + 1] -= drop;
    }
};

const CcdFeaturePair cVertexFace{0, 0, CcdFeatureKind::VertexFace};

/// An n x n grid cloth crumpled at random into half its width at the end of a step, a
/// tenth of its vertices pinned, with every vertex-face and edge-edge pair that shares no vertex
/// and is closer than `reach` at the end (a dense list: most vertices are in many pairs).
struct CrumpledCloth {
    std::uint32_t n;
    std::vector<std::uint32_t> indices;
    std::vector<double> start, end, inverseMass;
    MeshFeatures features;
    std::vector<CcdFeaturePair> pairs;

    CrumpledCloth(std::uint32_t side, double reach, unsigned seed) : n(side) {
        std::mt19937 random(seed);
        std::uniform_real_distribution<double> height(0, 0.01), unit(0, 1);
        for (std::uint32_t y = 0; y < n; ++y)
            for (std::uint32_t x = 0; x < n; ++x) {
                const double u = double(x) / (n - 1), v = double(y) / (n - 1);
                start.insert(start.end(), {u, v, height(random)});
                end.insert(end.end(), {0.5 * u, 0.5 * v, height(random)});
                inverseMass.push_back(unit(random) < 0.1 ? 0.0 : 1.0);
            }
        for (std::uint32_t y = 0; y + 1 < n; ++y)
            for (std::uint32_t x = 0; x + 1 < n; ++x) {
                const std::uint32_t a = y * n + x;
                indices.insert(indices.end(), {a, a + 1, a + n, a + 1, a + n + 1, a + n});
            }
        buildMeshFeatures(indices.data(), triangles(), n * n, features);
        listPairs(reach);
    }
    std::uint32_t triangles() const { return static_cast<std::uint32_t>(indices.size() / 3); }
    SelfCollisionMesh view() {
        return SelfCollisionMesh{n * n,        indices.data(), triangles(),       features.edges.data(),
                                 start.data(), end.data(),     inverseMass.data()};
    }
    void listPairs(double reach) {
        const SelfCollisionMesh m = view();
        const auto edgeCount = static_cast<std::uint32_t>(features.edges.size() / 2);
        for (std::uint32_t v = 0; v < n * n; ++v)
            for (std::uint32_t t = 0; t < triangles(); ++t) {
                const CcdFeaturePair p{v, t, CcdFeatureKind::VertexFace};
                const std::uint32_t* c = &indices[3 * t];
                if (v != c[0] && v != c[1] && v != c[2] && featurePairDistance(m, p, end.data()) < reach)
                    pairs.push_back(p);
            }
        for (std::uint32_t e = 0; e < edgeCount; ++e)
            for (std::uint32_t f = e + 1; f < edgeCount; ++f) {
                const CcdFeaturePair p{e, f, CcdFeatureKind::EdgeEdge};
                const std::uint32_t *a = &features.edges[2 * e], *b = &features.edges[2 * f];
                if (a[0] != b[0] && a[0] != b[1] && a[1] != b[0] && a[1] != b[1] &&
                    featurePairDistance(m, p, end.data()) < reach)
                    pairs.push_back(p);
            }
    }
};

} // namespace

TEST_CASE("The projection restores the thickness, moving vertices by inverse mass", "[soft][response]") {
    VertexOverTriangle m;
    PairColouring colouring;
    m.end[1] = 0.01;
    projectSelfPairs(m.view(), &cVertexFace, 1, 0.05, 1, 1, colouring);
    CHECK(m.gap() == Approx(0.05));
    // Equal masses: the vertex takes 3/4 of the move, the triangle's corners 1/4 between them.
    CHECK(m.end[1] == Approx(0.01 + 0.04 * 0.75));
    double momentum = 0;
    for (int v = 0; v < 4; ++v) momentum += m.end[3 * v + 1] - m.start[3 * v + 1];
    CHECK(momentum == Approx(0.01 - 0.1).margin(1e-12));
}

TEST_CASE("A pinned triangle leaves the whole move to the vertex", "[soft][response]") {
    VertexOverTriangle m;
    PairColouring colouring;
    m.inverseMass = {1, 0, 0, 0, 1, 1};
    m.end[1] = 0.02;
    projectSelfPairs(m.view(), &cVertexFace, 1, 0.05, 1, 1, colouring);
    CHECK(m.end[1] == Approx(0.05));
    CHECK(m.end[4] == 0);
}

TEST_CASE("A vertex that crossed the triangle goes back to the side it started on", "[soft][response]") {
    VertexOverTriangle m;
    PairColouring colouring;
    m.inverseMass = {1, 0, 0, 0, 1, 1};
    m.end[1] = -0.02;
    projectSelfPairs(m.view(), &cVertexFace, 1, 0.05, 1, 1, colouring);
    CHECK(m.end[1] == Approx(0.05));
}

TEST_CASE("The continuous stage projects what it finds crossing, then freezes", "[soft][response]") {
    CcdFrameQuery query;
    CcdFrameResult result;
    std::vector<std::uint8_t> frozen;
    PairColouring colouring;
    ContinuousOptions options;
    options.eta = 1e-4;
    options.thickness = 0.05;

    SECTION("projected") {
        VertexOverTriangle m;
        m.dropStanding(0.6);
        std::vector<CcdFeaturePair> pairs;
        const ContinuousResult r = runContinuousResponse(m.view(), pairs, options, query, result, frozen, colouring);
        CHECK(r.impacts == 1);
        CHECK(r.frozenVertices == 0);
        CHECK_FALSE(r.wholeMeshReverted);
        CHECK(m.gap() == Approx(0.05));
    }
    SECTION("frozen") {
        VertexOverTriangle m;
        m.dropStanding(0.6);
        std::vector<CcdFeaturePair> pairs;
        options.projectionRounds = 0;
        const ContinuousResult r = runContinuousResponse(m.view(), pairs, options, query, result, frozen, colouring);
        CHECK(r.rounds == 2);
        CHECK(r.frozenVertices == 4);
        CHECK_FALSE(r.wholeMeshReverted);
        for (int k = 0; k < 12; ++k) CHECK(m.end[k] == m.start[k]);
    }
}

TEST_CASE("No two blocks of pairs of one colour share a vertex either may move", "[soft][response]") {
    CrumpledCloth cloth(32, 0.012, 5);
    const SelfCollisionMesh m = cloth.view();
    PairColouring colouring;
    colourPairs(m, cloth.pairs.data(), cloth.pairs.size(), colouring);
    const std::size_t blockCount = (cloth.pairs.size() + cColourBlockPairs - 1) / cColourBlockPairs;
    REQUIRE(colouring.blocks.size() == blockCount);
    CHECK(colouring.colours() > 1);
    CHECK(colouring.colours() < blockCount);
    for (std::size_t c = 0; c < colouring.colours(); ++c) {
        std::set<std::uint32_t> moved;
        std::size_t at = colouring.colourStarts[c];
        for (std::uint32_t b = 0; b < blockCount; ++b) {
            if (colouring.colourOf[b] != c) continue;
            // The colour's blocks in list order.
            REQUIRE(at < colouring.colourStarts[c + 1]);
            CHECK(colouring.blocks[at++] == b);
            std::set<std::uint32_t> inBlock;
            for (std::size_t p = b * cColourBlockPairs; p < std::min(cloth.pairs.size(), (b + 1) * cColourBlockPairs);
                 ++p) {
                std::uint32_t vertices[4];
                const int count = movableVertices(m, cloth.pairs[p], vertices);
                inBlock.insert(vertices, vertices + count);
            }
            for (const std::uint32_t v : inBlock) CHECK(moved.insert(v).second);
        }
        CHECK(at == colouring.colourStarts[c + 1]);
    }
}

TEST_CASE("Blocks sharing one vertex take a colour each, past 64", "[soft][response]") {
    VertexOverTriangle m;
    const std::vector<CcdFeaturePair> pairs(100 * cColourBlockPairs, cVertexFace);
    PairColouring colouring;
    colourPairs(m.view(), pairs.data(), pairs.size(), colouring);
    CHECK(colouring.colours() == 100);
    m.inverseMass = {0, 0, 0, 0, 1, 1};
    colourPairs(m.view(), pairs.data(), pairs.size(), colouring);
    CHECK(colouring.colours() == 1);
}

TEST_CASE("The coloured projection is the same on any number of threads and moves no pinned vertex",
          "[soft][response]") {
    CrumpledCloth cloth(32, 0.012, 9);
    REQUIRE(cloth.pairs.size() >= cParallelProjectionPairs);
    const std::vector<double> before = cloth.end;
    PairColouring colouring;
    projectSelfPairs(cloth.view(), cloth.pairs.data(), cloth.pairs.size(), 0.012, 4, 1, colouring);
    const std::vector<double> alone = cloth.end;
    CHECK(alone != before);
    for (std::uint32_t v = 0; v < cloth.n * cloth.n; ++v)
        if (cloth.inverseMass[v] == 0) CHECK(std::memcmp(&alone[3 * v], &before[3 * v], 3 * sizeof(double)) == 0);
    for (const int threads : {2, 4}) {
        cloth.end = before;
        projectSelfPairs(cloth.view(), cloth.pairs.data(), cloth.pairs.size(), 0.012, 4, threads, colouring);
        CHECK(std::memcmp(cloth.end.data(), alone.data(), alone.size() * sizeof(double)) == 0);
    }
}
