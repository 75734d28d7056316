// SPDX-License-Identifier: Zlib
// triangleDistance and the RSS bound on named and random cases, checked against the
// independent searches of brute_force_distance.h and against closed forms.
#include "kernels/narrow/distance/rss_ops.h"
#include "kernels/narrow/distance/triangle_distance.h"
#include "kernels/reference/brute_force_distance.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>

using namespace bulletgpu;

namespace {

/// A named pair of triangles and its distance in closed form (0 when they meet).
struct NamedCase {
    std::string name;
    Triangle3d a;
    Triangle3d b;
    double expected;
};

/// t scaled by s, then moved by (dx, dy, dz).
Triangle3d placed(const Triangle3d& t, double s, double dx, double dy, double dz) {
    Triangle3d out;
    for (int c = 0; c < 3; ++c) out.p[c] = Vec3d{{s * t.p[c][0] + dx, s * t.p[c][1] + dy, s * t.p[c][2] + dz}};
    return out;
}

/// |a - b|.
double length(const Vec3d& a, const Vec3d& b) { return oracleLength(a[0] - b[0], a[1] - b[1], a[2] - b[2]); }

/// The largest |coordinate| of two triangles.
double magnitude(const Triangle3d& a, const Triangle3d& b) {
    double m = 0;
    for (const Triangle3d* t : {&a, &b}) {
        for (const Vec3d& p : t->p) {
            for (int k = 0; k < 3; ++k) m = std::fmax(m, std::fabs(p[k]));
        }
    }
    return m;
}

/// The named cases at unit scale, before scaling and translation.
std::vector<NamedCase> unitCases() {
    const Triangle3d floor{{{{0, 0, 0}}, {{1, 0, 0}}, {{0, 1, 0}}}};
    return {
        {"parallel edges, overlapping",
         {{{{0, 0, 0}}, {{1, 0, 0}}, {{0, -1, 0}}}},
         {{{{0.5, 0, 1}}, {{1.5, 0, 1}}, {{1, 0, 2}}}},
         1.0},
        {"parallel edges, end to end",
         {{{{0, 0, 0}}, {{1, 0, 0}}, {{0, -1, 0}}}},
         {{{{3, 0, 0}}, {{4, 0, 0}}, {{3.5, 0, 1}}}},
         2.0},
        {"nearly parallel edges (1e-7 rad)",
         {{{{0, 0, 0}}, {{1, 0, 0}}, {{0, -1, 0}}}},
         {{{{0, 0.5, 0}}, {{1, 0.5 - 1e-7, 0}}, {{0.5, 1, 0}}}},
         0.5 - 1e-7},
        {"crossing edges",
         {{{{-1, 0, 0}}, {{1, 0, 0}}, {{0, 0, -1}}}},
         {{{{0, -1, 0.5}}, {{0, 1, 0.5}}, {{0, 0, 1.5}}}},
         0.5},
        {"vertex exactly on a face", floor, {{{{0.25, 0.25, 0}}, {{0.25, 0.25, 1}}, {{1, 1, 1}}}}, 0.0},
        {"vertex above a face", floor, {{{{0.25, 0.25, 0.3}}, {{0.25, 0.25, 1}}, {{1, 1, 1}}}}, 0.3},
        {"coplanar, apart", floor, {{{{1, 1, 0}}, {{2, 1, 0}}, {{1, 2, 0}}}}, std::sqrt(0.5)},
        {"coplanar, overlapping", floor, {{{{0.2, 0.2, 0}}, {{2, 0.2, 0}}, {{0.2, 2, 0}}}}, 0.0},
        {"crossing through each other", floor, {{{{0.2, 0.2, -1}}, {{0.3, 0.2, 1}}, {{0.2, 0.3, 1}}}}, 0.0},
        {"collinear (zero-area) triangle over a face", floor, {{{{0, 0, 1}}, {{0.25, 0.25, 1}}, {{0.5, 0.5, 1}}}}, 1.0},
        {"point triangle over a face", floor, {{{{0.2, 0.2, 0.5}}, {{0.2, 0.2, 0.5}}, {{0.2, 0.2, 0.5}}}}, 0.5},
        {"two collinear triangles, skew",
         {{{{0, 0, 0}}, {{1, 0, 0}}, {{2, 0, 0}}}},
         {{{{0.5, -1, 2}}, {{0.5, 0, 2}}, {{0.5, 1, 2}}}},
         2.0},
        {"two point triangles",
         {{{{0, 0, 0}}, {{0, 0, 0}}, {{0, 0, 0}}}},
         {{{{3, 4, 0}}, {{3, 4, 0}}, {{3, 4, 0}}}},
         5.0},
    };
}

} // namespace

TEST_CASE("triangleDistance on named cases equals closed forms and independent searches", "[narrow][distance]") {
    struct Placement {
        const char* name;
        double scale, dx, dy, dz;
    };
    const Placement placement = GENERATE(
        Placement{"unit", 1, 0, 0, 0}, Placement{"huge (1e6)", 1e6, 0, 0, 0}, Placement{"tiny (1e-6)", 1e-6, 0, 0, 0},
        Placement{"moved by 1e5", 1, 1e5, -1e5, 1e5}, Placement{"tiny at 1e3", 1e-3, 1e3, 1e3, -1e3});
    for (const NamedCase& c : unitCases()) {
        const Triangle3d a = placed(c.a, placement.scale, placement.dx, placement.dy, placement.dz);
        const Triangle3d b = placed(c.b, placement.scale, placement.dx, placement.dy, placement.dz);
        const double scale = magnitude(a, b);
        INFO(c.name << ", " << placement.name);
        for (int swap = 0; swap < 2; ++swap) {
            const Triangle3d& first = swap != 0 ? b : a;
            const Triangle3d& second = swap != 0 ? a : b;
            const TriangleDistance d = triangleDistance(first, second);
            CHECK(d.intersecting == (c.expected == 0));
            // Rounding of the placed coordinates alone moves the distance by ~1e-16 of them.
            CHECK(std::fabs(d.distance - c.expected * placement.scale) <= 1e-12 * scale);
            if (d.intersecting) continue;
            CHECK(std::fabs(length(d.a, d.b) - d.distance) <= 1e-15 * scale);
            CHECK(searchPointTriangle(d.a, first) <= 1e-12 * scale);
            CHECK(searchPointTriangle(d.b, second) <= 1e-12 * scale);
            CHECK(std::fabs(searchTriangleDistance(first, second) - d.distance) <= 1e-12 * scale);
        }
    }
}

TEST_CASE("triangleDistance on random triangles equals independent searches", "[narrow][distance]") {
    std::mt19937 rng(33);
    std::uniform_real_distribution<double> coordinate(-1, 1);
    int disjoint = 0;
    for (int i = 0; i < 60; ++i) {
        Triangle3d a, b;
        for (int c = 0; c < 3; ++c) {
            for (int k = 0; k < 3; ++k) {
                a.p[c].v[k] = coordinate(rng);
                b.p[c].v[k] = coordinate(rng) + (k == 0 ? 0.6 : 0.0);
            }
        }
        // Every fourth pair has an edge of b parallel to one of a.
        if (i % 4 == 0) {
            for (int k = 0; k < 3; ++k) b.p[1].v[k] = b.p[0][k] + 0.7 * (a.p[1][k] - a.p[0][k]);
        }
        const TriangleDistance d = triangleDistance(a, b);
        INFO("pair " << i);
        if (d.intersecting) {
            CHECK(d.distance == 0);
            continue;
        }
        ++disjoint;
        CHECK(std::fabs(searchTriangleDistance(a, b) - d.distance) <= 1e-12);
        CHECK(std::fabs(length(d.a, d.b) - d.distance) <= 1e-15);
        CHECK(searchPointTriangle(d.a, a) <= 1e-12);
        CHECK(searchPointTriangle(d.b, b) <= 1e-12);
    }
    CHECK(disjoint > 20);
}

TEST_CASE("The RSS of a triangle contains it and the RSS bound never exceeds the distance", "[narrow][distance]") {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> coordinate(-1, 1), angle(0, 6.283185307179586);
    for (int i = 0; i < 500; ++i) {
        Triangle3d a, b;
        const double spread = i % 3 == 0 ? 1e-3 : 1.0;
        for (int c = 0; c < 3; ++c) {
            for (int k = 0; k < 3; ++k) {
                a.p[c].v[k] = static_cast<float>(spread * coordinate(rng));
                b.p[c].v[k] = static_cast<float>(spread * coordinate(rng));
            }
        }
        if (i % 5 == 0) b.p[2] = b.p[1]; // degenerate
        const NarrowRss ra = triangleRss(a), rb = triangleRss(b);
        const PlacedRss pa = placeRss(ra, nullptr);
        for (const Vec3d& p : a.p) REQUIRE(rectangleDistance(pa, p.v) <= ra.radius);
        // b's RSS moved by a rotation about z and a translation, b's corners moved the same way.
        const double theta = angle(rng), c = std::cos(theta), s = std::sin(theta);
        const double m[12] = {c, -s, 0, 0.5, s, c, 0, -0.25, 0, 0, 1, 0.125};
        Triangle3d moved;
        for (int k = 0; k < 3; ++k) {
            const float corner[3] = {float(b.p[k][0]), float(b.p[k][1]), float(b.p[k][2])};
            moved.p[k] = transformPoint(m, corner);
        }
        const double bound = rssLowerBound(pa, placeRss(rb, m));
        const TriangleDistance d = triangleDistance(a, moved);
        INFO("pair " << i << ": bound " << bound << ", distance " << d.distance);
        REQUIRE(bound <= d.distance + 1e-12);
    }
}
