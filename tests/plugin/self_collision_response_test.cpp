// SPDX-License-Identifier: Zlib
// The self-collision response on flat buffers (bullet_adapter/self_collision_response.h): the
// projection restores the thickness on the side of the step's start, by inverse mass, and the
// continuous stage catches what crossed, projecting it or putting it back at the start.
#include "bullet_adapter/self_collision_response.h"

#include "kernels/narrow/geometry/mesh_features.h"

#include <catch2/catch.hpp>

#include <cmath>
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

} // namespace

TEST_CASE("The projection restores the thickness, moving vertices by inverse mass", "[soft][response]") {
    VertexOverTriangle m;
    m.end[1] = 0.01;
    projectSelfPairs(m.view(), &cVertexFace, 1, 0.05, 1);
    CHECK(m.gap() == Approx(0.05));
    // Equal masses: the vertex takes 3/4 of the move, the triangle's corners 1/4 between them.
    CHECK(m.end[1] == Approx(0.01 + 0.04 * 0.75));
    double momentum = 0;
    for (int v = 0; v < 4; ++v) momentum += m.end[3 * v + 1] - m.start[3 * v + 1];
    CHECK(momentum == Approx(0.01 - 0.1).margin(1e-12));
}

TEST_CASE("A pinned triangle leaves the whole move to the vertex", "[soft][response]") {
    VertexOverTriangle m;
    m.inverseMass = {1, 0, 0, 0, 1, 1};
    m.end[1] = 0.02;
    projectSelfPairs(m.view(), &cVertexFace, 1, 0.05, 1);
    CHECK(m.end[1] == Approx(0.05));
    CHECK(m.end[4] == 0);
}

TEST_CASE("A vertex that crossed the triangle goes back to the side it started on", "[soft][response]") {
    VertexOverTriangle m;
    m.inverseMass = {1, 0, 0, 0, 1, 1};
    m.end[1] = -0.02;
    projectSelfPairs(m.view(), &cVertexFace, 1, 0.05, 1);
    CHECK(m.end[1] == Approx(0.05));
}

TEST_CASE("The continuous stage projects what it finds crossing, then freezes", "[soft][response]") {
    CcdFrameQuery query;
    CcdFrameResult result;
    std::vector<std::uint8_t> frozen;
    ContinuousOptions options;
    options.eta = 1e-4;
    options.thickness = 0.05;

    SECTION("projected") {
        VertexOverTriangle m;
        m.dropStanding(0.6);
        std::vector<CcdFeaturePair> pairs;
        const ContinuousResult r = runContinuousResponse(m.view(), pairs, options, query, result, frozen);
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
        const ContinuousResult r = runContinuousResponse(m.view(), pairs, options, query, result, frozen);
        CHECK(r.rounds == 2);
        CHECK(r.frozenVertices == 4);
        CHECK_FALSE(r.wholeMeshReverted);
        for (int k = 0; k < 12; ++k) CHECK(m.end[k] == m.start[k]);
    }
}
