// SPDX-License-Identifier: Zlib
// Oriented boxes against exact geometry: every OBB contains what it bounds (triangles, merged
// children, rigidly moved boxes far from the origin), and the separating-axis test never calls
// the OBBs of meeting triangles disjoint, touching and degenerate triangles included.
#include "kernels/narrow/hierarchy/obb_ops.h"
#include "kernels/narrow/geometry/triangle_intersection.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

using namespace bulletgpu;

namespace {

/// A random triangle of float corners around `centre` within `size`, sometimes degenerate; the
/// corners are also written to `floats` (nine floats).
Triangle3d randomTriangle(std::mt19937& rng, double centre, double size, float* floats) {
    std::uniform_real_distribution<double> offset(-size, size);
    std::uniform_int_distribution<int> shape(0, 9);
    for (int i = 0; i < 9; ++i) floats[i] = static_cast<float>(centre + offset(rng));
    const int kind = shape(rng);
    for (int k = 0; k < 3; ++k) {
        if (kind == 0) floats[6 + k] = floats[k];                          // a segment
        if (kind == 1) floats[3 + k] = floats[6 + k] = floats[k];          // a point
        if (kind == 2) floats[6 + k] = 0.5f * (floats[k] + floats[3 + k]); // nearly collinear
    }
    return Triangle3d{{toVec3d(floats), toVec3d(floats + 3), toVec3d(floats + 6)}};
}

/// Whether the OBB holds the triangle's corners.
bool holds(const NarrowObb& obb, const Triangle3d& t) {
    return obbContainsPoint(obb, t.p[0]) && obbContainsPoint(obb, t.p[1]) && obbContainsPoint(obb, t.p[2]);
}

} // namespace

TEST_CASE("OBBs contain their triangles, merged children and moved corners", "[narrow][obb]") {
    std::mt19937 rng(21);
    for (const double centre : {0.0, 1.0, -1000.0, 1.0e5}) {
        for (const double size : {1.0e-3, 1.0, 100.0}) {
            for (int trial = 0; trial < 300; ++trial) {
                float fa[9], fb[9];
                const Triangle3d a = randomTriangle(rng, centre, size, fa), b = randomTriangle(rng, centre, size, fb);
                const NarrowObb oa = triangleObb(a), ob = triangleObb(b);
                REQUIRE(holds(oa, a));
                REQUIRE(holds(ob, b));
                const NarrowObb merged = mergeObbs(oa, ob);
                REQUIRE(holds(merged, a));
                REQUIRE(holds(merged, b));
                Vec3d corners[8];
                for (const NarrowObb* child : {&oa, &ob}) {
                    obbCorners(*child, corners);
                    for (const Vec3d& p : corners) REQUIRE(obbContainsPoint(merged, p));
                }
                // A rotation with a translation that brings the triangle back near the origin.
                const double angle = 0.1 * trial, c = std::cos(angle), s = std::sin(angle);
                const double m[12] = {c, -s, 0, -centre * (c - s), s, c, 0, -centre * (s + c), 0, 0, 1, -centre};
                Triangle3d moved;
                for (int v = 0; v < 3; ++v) moved.p[v] = transformPoint(m, fa + 3 * v);
                REQUIRE(holds(transformObb(m, oa), moved));
                REQUIRE(holds(transformObb(m, merged), moved));
            }
        }
    }
}

TEST_CASE("The OBBs of meeting triangles always overlap", "[narrow][obb]") {
    std::mt19937 rng(22);
    int meeting = 0;
    for (int trial = 0; trial < 40000; ++trial) {
        // Small integer grids make touching, coplanar and degenerate pairs common.
        std::uniform_int_distribution<int> coordinate(-2, 2);
        Triangle3d a, b;
        for (Triangle3d* t : {&a, &b}) {
            for (Vec3d& p : t->p) {
                for (double& x : p.v) x = coordinate(rng) * (trial % 2 == 0 ? 1.0 : 0.37);
            }
        }
        if (!trianglesIntersect(a, b)) continue;
        ++meeting;
        const NarrowObb oa = triangleObb(a), ob = triangleObb(b);
        REQUIRE(obbsOverlap(oa, ob));
        REQUIRE(obbsOverlap(ob, oa));
        REQUIRE(obbsOverlap(mergeObbs(oa, ob), ob));
    }
    CHECK(meeting > 5000);
}

TEST_CASE("OBBs separate what boxes cannot", "[narrow][obb]") {
    // Two parallel diagonal triangles 0.05 apart: their boxes overlap, their OBBs do not.
    const double r = std::sqrt(0.5);
    Triangle3d a, b;
    const double corners[3][3] = {{0, 0, 0}, {1, 1, 0}, {0, 0, 1}};
    for (int v = 0; v < 3; ++v) {
        for (int k = 0; k < 3; ++k) a.p[v].v[k] = corners[v][k];
        b.p[v] = Vec3d{{corners[v][0] + 0.05 * r, corners[v][1] - 0.05 * r, corners[v][2]}};
    }
    REQUIRE(boxesOverlap(triangleBox(a), triangleBox(b)));
    REQUIRE_FALSE(obbsOverlap(triangleObb(a), triangleObb(b)));
    REQUIRE(volumesOverlap(triangleBox(a), nullptr, triangleBox(b), nullptr));
    const NarrowObb oa = triangleObb(a), ob = triangleObb(b);
    REQUIRE_FALSE(volumesOverlap(triangleBox(a), &oa, triangleBox(b), &ob));
}
