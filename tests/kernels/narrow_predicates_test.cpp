// SPDX-License-Identifier: Zlib
// The exact predicates and the triangle test against independent evaluations: orientation signs
// against 128-bit integers and long double, and trianglesIntersect against a linear-program
// oracle on integer grids (full of coplanar, touching and degenerate triangles).
#include "kernels/narrow/geometry/plane_filter.h"
#include "kernels/narrow/geometry/triangle_contact.h"
#include "kernels/reference/brute_force_triangles.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

using namespace bulletgpu;

namespace {

__extension__ typedef __int128 Int128;

/// Sign of det(a - d, b - d, c - d) in 128-bit integers.
int orient3dInteger(const long long p[4][3]) {
    Int128 m[3][3];
    for (int r = 0; r < 3; ++r) {
        for (int k = 0; k < 3; ++k) m[r][k] = p[r][k] - p[3][k];
    }
    const Int128 det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                       m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                       m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    return det > 0 ? 1 : (det < 0 ? -1 : 0);
}

/// A point from integer coordinates scaled by `scale` and moved by `offset` (exact in float
/// for the grids used).
Vec3d point(const long long* c, double scale = 1, double offset = 0) {
    return Vec3d{{c[0] * scale + offset, c[1] * scale + offset, c[2] * scale + offset}};
}

/// A triangle from integer corners, scaled and moved.
Triangle3d triangle(const long long t[3][3], double scale = 1, double offset = 0) {
    return Triangle3d{{point(t[0], scale, offset), point(t[1], scale, offset), point(t[2], scale, offset)}};
}

/// Random integer corners in [-range, range], with a chance of repeating or lining up corners.
void randomTriangle(std::mt19937& rng, int range, long long t[3][3]) {
    std::uniform_int_distribution<int> coordinate(-range, range), pick(0, 9);
    for (int c = 0; c < 3; ++c) {
        for (int k = 0; k < 3; ++k) t[c][k] = coordinate(rng);
    }
    const int shape = pick(rng);
    if (shape == 0) {
        for (int k = 0; k < 3; ++k) t[2][k] = t[0][k]; // a segment
    } else if (shape == 1) {
        for (int k = 0; k < 3; ++k) t[1][k] = t[2][k] = t[0][k]; // a point
    } else if (shape == 2) {
        for (int k = 0; k < 3; ++k) t[2][k] = 2 * t[1][k] - t[0][k]; // collinear
    } else if (shape == 3) {
        for (int c = 0; c < 3; ++c) t[c][2] = 0; // in the plane z = 0
    }
}

} // namespace

TEST_CASE("orient3d, orient3dOnPlane and orient2d signs are exact", "[narrow][predicates]") {
    std::mt19937 rng(7);
    SECTION("against 128-bit integers on small grids and near-degenerate large coordinates") {
        for (int range : {2, 1 << 20}) {
            std::uniform_int_distribution<long long> coordinate(-range, range);
            int zeros = 0;
            for (int trial = 0; trial < 20000; ++trial) {
                long long p[4][3];
                for (auto& c : p) {
                    for (auto& x : c) x = coordinate(rng);
                }
                if (trial % 3 == 0) {
                    // d on the plane through a, b, c, moved by one unit or not at all.
                    for (int k = 0; k < 3; ++k) p[3][k] = p[0][k] + (p[1][k] - p[0][k]) + (p[2][k] - p[0][k]);
                    p[3][trial % 2] += (trial / 3) % 2;
                }
                const int expected = orient3dInteger(p);
                zeros += expected == 0;
                REQUIRE(orient3d(point(p[0]), point(p[1]), point(p[2]), point(p[3])) == expected);
                REQUIRE(exact::orient3dExact(point(p[0]), point(p[1]), point(p[2]), point(p[3])) == expected);
                const Vec3d a = point(p[0]), b = point(p[1]), c = point(p[2]);
                REQUIRE(orient3dOnPlane(planeMinors(a, b, c), a, b, c, point(p[3])) == expected);
            }
            CHECK(zeros > 1000);
        }
    }
    SECTION("against long double where its error bound decides") {
        std::uniform_real_distribution<float> coordinate(-1, 1);
        for (int trial = 0; trial < 20000; ++trial) {
            float f[4][3];
            for (auto& c : f) {
                for (auto& x : c) x = coordinate(rng);
            }
            // Nearly coplanar: d close to the plane of a, b, c.
            for (int k = 0; k < 3; ++k) f[3][k] = 0.3f * f[0][k] + 0.3f * f[1][k] + 0.4f * f[2][k];
            long double m[3][3];
            for (int r = 0; r < 3; ++r) {
                for (int k = 0; k < 3; ++k) m[r][k] = static_cast<long double>(f[r][k]) - f[3][k];
            }
            const long double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                                    m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                                    m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
            const Vec3d v[4] = {toVec3d(f[0]), toVec3d(f[1]), toVec3d(f[2]), toVec3d(f[3])};
            const int sign = orient3d(v[0], v[1], v[2], v[3]);
            // Float differences are exact in long double; products of three err by < 2^-60 relative.
            if (std::fabs(static_cast<double>(det)) > 1e-16) REQUIRE(sign == (det > 0 ? 1 : -1));
            const long double det2 = m[0][0] * m[1][1] - m[0][1] * m[1][0];
            const int sign2 = orient2d(v[3], v[0], v[1], 0, 1);
            if (std::fabs(static_cast<double>(det2)) > 1e-16) REQUIRE(sign2 == (det2 > 0 ? 1 : -1));
            REQUIRE(sign2 == exact::orient2dExact(v[3], v[0], v[1], 0, 1));
        }
    }
}

TEST_CASE("orient3dOnPlane gives orient3d's exact sign for nearly coplanar points", "[narrow][predicates]") {
    std::mt19937 rng(11);
    SECTION("against the exact expansion on nearly coplanar floats far from the origin") {
        std::uniform_real_distribution<float> coordinate(-1, 1);
        for (int trial = 0; trial < 20000; ++trial) {
            const float offset = trial % 2 == 0 ? 0.0f : 1000.0f;
            float f[4][3];
            for (auto& c : f) {
                for (auto& x : c) x = offset + coordinate(rng);
            }
            for (int k = 0; k < 3; ++k) f[3][k] = 0.3f * f[0][k] + 0.3f * f[1][k] + 0.4f * f[2][k];
            const Vec3d v[4] = {toVec3d(f[0]), toVec3d(f[1]), toVec3d(f[2]), toVec3d(f[3])};
            REQUIRE(orient3dOnPlane(planeMinors(v[0], v[1], v[2]), v[0], v[1], v[2], v[3]) ==
                    exact::orient3dExact(v[0], v[1], v[2], v[3]));
        }
    }
}

TEST_CASE("orient3dExact's stage on exact differences equals the full expansion", "[narrow][predicates]") {
    std::mt19937 rng(13);
    std::uniform_real_distribution<float> coordinate(-1, 1);
    int exactlyCoplanar = 0;
    for (int trial = 0; trial < 20000; ++trial) {
        // Near the origin, far from it (differences still exact), and points of very different
        // magnitudes (differences rounded: the full expansion answers).
        const float offset = trial % 3 == 1 ? 1000.0f : 0.0f;
        const float scale = trial % 3 == 2 ? 1e20f : 1.0f;
        float f[4][3];
        for (auto& c : f) {
            for (auto& x : c) x = offset + coordinate(rng);
        }
        for (int k = 0; k < 3; ++k) {
            f[3][k] = trial % 2 == 0 ? 0.3f * f[0][k] + 0.3f * f[1][k] + 0.4f * f[2][k] : f[0][k] + (f[1][k] - f[0][k]);
            f[2][k] *= scale;
        }
        const Vec3d v[4] = {toVec3d(f[0]), toVec3d(f[1]), toVec3d(f[2]), toVec3d(f[3])};
        const int expansion = exact::orient3dExpansion(v[0], v[1], v[2], v[3]);
        exactlyCoplanar += expansion == 0;
        REQUIRE(exact::orient3dExact(v[0], v[1], v[2], v[3]) == expansion);
    }
    CHECK(exactlyCoplanar > 100);
}

TEST_CASE("The exact stages on exact differences equal the full expansions on flat grids", "[narrow][predicates]") {
    // Points of a flat mesh: on an axis plane (a coordinate of every difference zero, which
    // orient3dExact decides without products) or on a tilted one, on grid lines (orient2d
    // exactly zero) or off them, near the origin, far from it (differences still exact) or at
    // very different magnitudes (differences rounded: the full expansions answer).
    std::mt19937 rng(17);
    std::uniform_int_distribution<int> cell(-4, 4), axis(0, 2), kind(0, 3);
    int zeros3 = 0, zeros2 = 0, nonzero2 = 0;
    for (int trial = 0; trial < 20000; ++trial) {
        const double spacing = trial % 2 == 0 ? 0.08 : 0.0078125;
        const double offset = trial % 3 == 1 ? 1000.0 : 0.0;
        const int flat = axis(rng), shape = kind(rng);
        const double level = offset + (shape == 3 ? 1e20 : 0.37);
        Vec3d v[4];
        for (Vec3d& p : v) {
            const double s = spacing * cell(rng), t = spacing * cell(rng);
            p.v[flat] = level;
            p.v[(flat + 1) % 3] = offset + s;
            p.v[(flat + 2) % 3] = offset + (shape == 1 ? s + t * 0.5 : t);
        }
        if (shape == 2) v[3].v[flat] = std::nextafter(level, HUGE_VAL); // just off the plane
        const int expansion3 = exact::orient3dExpansion(v[0], v[1], v[2], v[3]);
        zeros3 += expansion3 == 0;
        REQUIRE(exact::orient3dExact(v[0], v[1], v[2], v[3]) == expansion3);
        REQUIRE(orient3d(v[0], v[1], v[2], v[3]) == expansion3);
        for (int k = 0; k < 3; ++k) {
            const int i = (k + 1) % 3, j = (k + 2) % 3;
            const int expansion2 = exact::orient2dExpansion(v[0], v[1], v[2], i, j);
            zeros2 += expansion2 == 0;
            nonzero2 += expansion2 != 0;
            REQUIRE(exact::orient2dExact(v[0], v[1], v[2], i, j) == expansion2);
            REQUIRE(orient2d(v[0], v[1], v[2], i, j) == expansion2);
        }
    }
    CHECK(zeros3 > 5000);
    CHECK(zeros2 > 5000);
    CHECK(nonzero2 > 5000);
}

TEST_CASE("trianglesIntersect equals the linear-program oracle on integer grids", "[narrow][predicates]") {
    std::mt19937 rng(11);
    const int range = GENERATE(1, 2, 4);
    int meeting = 0, coplanarMeeting = 0;
    for (int trial = 0; trial < 6000; ++trial) {
        long long p[3][3], q[3][3];
        randomTriangle(rng, range, p);
        randomTriangle(rng, range, q);
        if (trial % 4 == 0) {
            for (int c = 0; c < 3; ++c) q[c][2] = p[c][2] = 0; // both in z = 0
        }
        const bool expected = integerTrianglesMeet(p, q);
        meeting += expected;
        const Triangle3d t1 = triangle(p), t2 = triangle(q);
        TriangleTestDetail detail;
        const bool found = trianglesIntersect(t1, t2, detail);
        INFO("trial " << trial);
        REQUIRE(found == expected);
        REQUIRE(trianglesIntersect(t2, t1) == expected);
        // Exact scaling by 2^-7 and moving by 3 change nothing.
        REQUIRE(trianglesIntersect(triangle(p, 0.0078125, 3.0), triangle(q, 0.0078125, 3.0)) == expected);
        if (found) {
            float segment[2][3];
            coplanarMeeting += (intersectionSegment(t1, t2, detail, segment) & cContactCoplanar) != 0;
        }
    }
    CHECK(meeting > 500);
    CHECK(coplanarMeeting > 100);
}

TEST_CASE("The Devillers-Guigue test equals the oracle where both triangles straddle", "[narrow][predicates]") {
    // Small grids give exact touching (edges crossing, a corner on an edge) with every corner
    // off the other's plane; larger ones give general position.
    std::mt19937 rng(23);
    const int range = GENERATE(2, 3, 8, 100);
    int applicable = 0, meeting = 0;
    for (int trial = 0; trial < 20000; ++trial) {
        long long p[3][3], q[3][3];
        randomTriangle(rng, range, p);
        randomTriangle(rng, range, q);
        const Triangle3d t1 = triangle(p), t2 = triangle(q);
        const PlaneSides sides1 = planeSides(t2, t1), sides2 = planeSides(t1, t2);
        if (sides1.separated() || sides2.separated() || !sides1.offPlane() || !sides2.offPlane()) continue;
        ++applicable;
        const bool expected = integerTrianglesMeet(p, q);
        meeting += expected;
        INFO("range " << range << ", trial " << trial);
        REQUIRE(straddlingTrianglesMeet(t1, sides1, t2, sides2) == expected);
        REQUIRE(straddlingTrianglesMeet(t2, sides2, t1, sides1) == expected);
    }
    CHECK(applicable > 2000);
    CHECK(meeting > 300);
    CHECK(applicable - meeting > 300);
}

TEST_CASE("The planes' filter drops only separated pairs, in blocks as pair by pair", "[narrow][predicates]") {
    // Grid triangles (touching, coplanar and degenerate ones among them) at scales whose
    // products round, and triangles a few units in the last place off another's plane, where
    // the static filter cannot tell.
    std::mt19937 rng(29);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    std::uniform_int_distribution<int> smallRange(1, 3);
    const double scale = GENERATE(1.0, 0.1, 1e-7, 3e5);
    std::vector<Triangle3d> corners;
    for (int t = 0; t < 600; ++t) {
        long long p[3][3];
        randomTriangle(rng, t % 2 == 0 ? smallRange(rng) : 1000, p);
        corners.push_back(triangle(p, scale, 0.5 * scale));
    }
    for (int t = 0; t < 200; ++t) {
        Triangle3d nearby = corners[static_cast<std::size_t>(t)];
        const double ulps = std::ldexp(scale, -45);
        for (Vec3d& c : nearby.p) {
            for (double& x : c.v) x += unit(rng) * ulps;
        }
        corners.push_back(nearby);
    }
    std::vector<PlaneMinors> planes;
    for (const Triangle3d& t : corners) planes.push_back(planeMinors(t.p[0], t.p[1], t.p[2]));
    const TriangleSource source{corners.data(), nullptr, nullptr, nullptr, planes.data(), nullptr};
    std::uniform_int_distribution<std::uint32_t> anyTriangle(0, static_cast<std::uint32_t>(corners.size() - 1));
    int dropped = 0, undecided = 0;
    for (int block = 0; block < 400; ++block) {
        const int count = block % 67; // every tail length of the four-pair steps, and empty blocks
        std::vector<std::uint32_t> a(static_cast<std::size_t>(count)), b(a.size()), keptA, keptB;
        for (int i = 0; i < count; ++i) {
            a[i] = anyTriangle(rng);
            b[i] = i % 3 == 0 && a[i] >= 600 ? a[i] - 600 : anyTriangle(rng);
            const Triangle3d &t1 = corners[a[i]], &t2 = corners[b[i]];
            const bool firstApart = certainlySeparated(t2, planes[b[i]], t1);
            const bool secondApart = certainlySeparated(t1, planes[a[i]], t2);
            // A certain separation is an exact one.
            if (firstApart) REQUIRE(planeSides(t2, t1).separated());
            if (secondApart) REQUIRE(planeSides(t1, t2).separated());
            undecided += !firstApart && planeSides(t2, t1).separated();
            if (firstApart || secondApart) {
                ++dropped;
            } else {
                keptA.push_back(a[i]);
                keptB.push_back(b[i]);
            }
        }
        const int kept = planeFilterKeep(source, source, a.data(), b.data(), count);
        INFO("scale " << scale << ", block " << block);
        REQUIRE(kept == static_cast<int>(keptA.size()));
        a.resize(static_cast<std::size_t>(kept));
        b.resize(a.size());
        REQUIRE(a == keptA);
        REQUIRE(b == keptB);
    }
    CHECK(dropped > 2000);
    CHECK(undecided > 20);
}

TEST_CASE("Touching, coplanar and degenerate triangles", "[narrow][predicates]") {
    const long long base[3][3] = {{0, 0, 0}, {4, 0, 0}, {0, 4, 0}};
    struct Case {
        const char* name;
        long long q[3][3];
        bool meets;
    };
    const Case cases[] = {
        {"shared edge, folded", {{4, 0, 0}, {0, 4, 0}, {4, 4, 3}}, true},
        {"shared vertex only", {{4, 0, 0}, {6, 1, 2}, {6, -1, 2}}, true},
        {"vertex touching the interior", {{1, 1, 0}, {2, 3, 5}, {3, 1, 5}}, true},
        {"edge touching an edge crosswise", {{2, -1, 0}, {2, 1, 0}, {2, 0, 4}}, true},
        {"just above, parallel", {{0, 0, 1}, {4, 0, 1}, {0, 4, 1}}, false},
        {"coplanar overlap", {{1, 1, 0}, {5, 1, 0}, {1, 5, 0}}, true},
        {"coplanar inside", {{1, 1, 0}, {2, 1, 0}, {1, 2, 0}}, true},
        {"coplanar apart across the hypotenuse", {{3, 3, 0}, {5, 3, 0}, {3, 5, 0}}, false},
        {"coplanar touching at the hypotenuse", {{2, 2, 0}, {5, 2, 0}, {2, 5, 0}}, true},
        {"zero-area segment piercing", {{1, 1, -1}, {1, 1, 1}, {1, 1, 1}}, true},
        {"zero-area segment above", {{1, 1, 1}, {1, 1, 2}, {1, 1, 3}}, false},
        {"point on the edge", {{2, 0, 0}, {2, 0, 0}, {2, 0, 0}}, true},
        {"point off the plane", {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}}, false},
        {"coplanar segment crossing", {{-1, 2, 0}, {5, 2, 0}, {5, 2, 0}}, true},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        REQUIRE(integerTrianglesMeet(base, c.q) == c.meets);
        REQUIRE(trianglesIntersect(triangle(base), triangle(c.q)) == c.meets);
        REQUIRE(trianglesIntersect(triangle(c.q), triangle(base)) == c.meets);
    }
}

TEST_CASE("The intersection segment lies on both triangles", "[narrow][predicates]") {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> coordinate(-1, 1);
    int checked = 0;
    for (int trial = 0; trial < 20000 && checked < 500; ++trial) {
        Triangle3d t[2];
        for (auto& tri : t) {
            for (auto& p : tri.p) {
                for (double& x : p.v) x = coordinate(rng);
            }
        }
        TriangleTestDetail detail;
        if (!trianglesIntersect(t[0], t[1], detail)) continue;
        float segment[2][3];
        if (intersectionSegment(t[0], t[1], detail, segment) != 0) continue;
        ++checked;
        for (const Triangle3d& tri : t) {
            const Vec3d n = triangleNormal(tri);
            const double length = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
            for (const float* end : segment) {
                const Vec3d e{{end[0], end[1], end[2]}};
                REQUIRE(std::fabs(dotFrom(n, e, tri.p[0])) / length < 1e-5);
            }
        }
    }
    CHECK(checked == 500);
}
