// SPDX-License-Identifier: Zlib
// The contact query (issue 33, part 2): closest points of features, the engine's contacts
// against the all-pairs oracle as exact sets (generated meshes, named edge cases, welded seams,
// scales and transforms, frames with kept fronts, a real data mesh), points against a mesh, and
// the reduction to a few points per mesh pair.
#include "kernels/narrow/engine/triangle_mesh_set.h"
#include "kernels/narrow/geometry/contact_reduction.h"
#include "kernels/narrow/geometry/feature_distance.h"
#include "kernels/reference/brute_force_proximity.h"
#include "tests/kernels/proximity_test_support.h"
#include "tests/support/mesh_generators.h"
#include "tests/support/ply_mesh.h"
#include "tests/support/shared_data.h"

#include "support/test_skip.h"
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace bulletgpu;

namespace {

/// A point.
Vec3d point(double x, double y, double z) { return Vec3d{{x, y, z}}; }

/// Identical kept and walked fronts.
bool sameFront(const BvttFront* kept, const std::vector<FrontEntry>& walked) {
    if (kept == nullptr) return walked.empty();
    return kept->entries.size() == walked.size() &&
           (walked.empty() ||
            std::memcmp(kept->entries.data(), walked.data(), walked.size() * sizeof(FrontEntry)) == 0);
}

/// Counts contacts of one kind.
std::size_t countKind(const std::vector<ProximityContact>& contacts, ProximityKind kind) {
    std::size_t n = 0;
    for (const ProximityContact& c : contacts) n += c.kind == static_cast<std::uint32_t>(kind) ? 1 : 0;
    return n;
}

/// A mesh of explicit triangles.
PlyMesh meshOf(std::initializer_list<float> positions, std::initializer_list<std::uint32_t> indices) {
    return PlyMesh{positions, indices, {}};
}

/// The mesh scaled by s.
PlyMesh scaled(PlyMesh m, float s) {
    for (float& x : m.positions) x *= s;
    return m;
}

/// A rigid transform: rotation by `angle` about the axis (1, 1, 1)/sqrt(3), then translation t.
std::vector<double> rotationAbout111(double angle, double tx, double ty, double tz) {
    const double c = std::cos(angle), s = std::sin(angle), k = 1 / std::sqrt(3.0), o = (1 - c) * k * k;
    return {c + o, o - s * k, o + s * k, tx, o + s * k, c + o, o - s * k, ty, o - s * k, o + s * k, c + o, tz};
}

/// Runs the self or pair query on every traversal and requires each to equal the oracle.
void requireOracle(const PlyMesh& a, const PlyMesh* b, const double* transformA, const double* transformB,
                   double distance, bool excludeWelded, bool allPairs = true) {
    const ProximityOracleMesh oa = oracleOf(a, 0, transformA);
    const ProximityOracleMesh ob = b != nullptr ? oracleOf(*b, 1, transformB) : oa;
    const std::vector<ProximityContact> expected =
        oracleProximity(oa, b != nullptr ? &ob : nullptr, distance, excludeWelded, allPairs);
    for (NarrowTraversal traversal : {NarrowTraversal::LeafWalk, NarrowTraversal::Fronts, NarrowTraversal::Descent}) {
        TriangleMeshSet set(2);
        set.setTraversal(traversal);
        addTo(set, a);
        if (b != nullptr) addTo(set, *b);
        set.setTransform(0, transformA);
        if (b != nullptr) set.setTransform(1, transformB);
        std::vector<ProximityContact> contacts;
        const ProximityOptions options{distance, excludeWelded};
        if (b != nullptr) {
            set.findPairProximity(0, 1, options, contacts);
        } else {
            set.findSelfProximity(0, options, contacts);
        }
        INFO("traversal " << static_cast<int>(traversal) << ", distance " << distance);
        REQUIRE(sameContacts(contacts, expected));
    }
}

/// Two flat n x n grids side by side, x in [-1, 0] and [0, 1], z in [-1, 1], whose vertices on
/// x = 0 are duplicated at equal positions (a seam).
PlyMesh seamedCloth(std::uint32_t n) {
    PlyMesh left = gridMesh(n, n, false, false, [](double u, double v, double* p) {
        p[0] = u - 1;
        p[1] = 0;
        p[2] = 2 * v - 1;
    });
    const PlyMesh right = gridMesh(n, n, false, false, [](double u, double v, double* p) {
        p[0] = u;
        p[1] = 0;
        p[2] = 2 * v - 1;
    });
    const auto offset = static_cast<std::uint32_t>(left.positions.size() / 3);
    left.positions.insert(left.positions.end(), right.positions.begin(), right.positions.end());
    for (std::uint32_t i : right.indices) left.indices.push_back(i + offset);
    return left;
}

} // namespace

TEST_CASE("Closest points of named feature configurations", "[narrow][proximity]") {
    SECTION("parallel segments: overlapping, apart, collinear") {
        const FeaturePoints p = segmentsClosest(point(0, 0, 0), point(2, 0, 0), point(1, 1, 0), point(3, 1, 0));
        REQUIRE(p.distanceSquared == 1);
        REQUIRE(p.onA.v[1] == 0);
        REQUIRE(p.onB.v[1] == 1);
        REQUIRE(p.onA.v[0] == p.onB.v[0]);
        REQUIRE(segmentsClosest(point(0, 0, 0), point(1, 0, 0), point(3, 0, 1), point(4, 0, 1)).distanceSquared == 5);
        REQUIRE(segmentsClosest(point(0, 0, 0), point(2, 0, 0), point(1, 0, 0), point(3, 0, 0)).distanceSquared == 0);
    }
    SECTION("crossing segments") {
        const FeaturePoints p = segmentsClosest(point(-1, 0, 0), point(1, 0, 0), point(0, -1, 0.5), point(0, 1, 0.5));
        REQUIRE(p.distanceSquared == 0.25);
        REQUIRE(p.onA.v[0] == 0);
        REQUIRE(p.onB.v[2] == 0.5);
        REQUIRE(segmentsClosest(point(-1, 0, 0), point(1, 0, 0), point(0, -1, 0), point(0, 1, 0)).distanceSquared == 0);
    }
    SECTION("zero-length segments") {
        REQUIRE(segmentsClosest(point(0, 0, 1), point(0, 0, 1), point(-1, 0, 0), point(1, 0, 0)).distanceSquared == 1);
        REQUIRE(segmentsClosest(point(0, 0, 1), point(0, 0, 1), point(0, 3, 1), point(0, 3, 1)).distanceSquared == 9);
    }
    SECTION("a vertex on a face, on an edge, at a corner, above and beside") {
        const Vec3d a = point(0, 0, 0), b = point(2, 0, 0), c = point(0, 2, 0);
        REQUIRE(pointTriangleClosest(point(0.5, 0.5, 0), a, b, c).distanceSquared == 0);
        REQUIRE(pointTriangleClosest(point(1, 1, 0), a, b, c).distanceSquared == 0);
        REQUIRE(pointTriangleClosest(point(0, 0, 0), a, b, c).distanceSquared == 0);
        const FeaturePoints above = pointTriangleClosest(point(0.5, 0.5, 3), a, b, c);
        REQUIRE(above.distanceSquared == 9);
        REQUIRE(above.onB.v[2] == 0);
        REQUIRE(pointTriangleClosest(point(-1, -1, 0), a, b, c).distanceSquared == 2);
        REQUIRE(pointTriangleClosest(point(2, 2, 0), a, b, c).distanceSquared == 2);
    }
    SECTION("zero-area triangles are their edges") {
        const FeaturePoints collinear =
            pointTriangleClosest(point(1, 1, 0), point(0, 0, 0), point(2, 0, 0), point(1, 0, 0));
        REQUIRE(collinear.distanceSquared == 1);
        REQUIRE(pointTriangleClosest(point(0, 0, 2), point(1, 0, 0), point(1, 0, 0), point(1, 0, 0)).distanceSquared ==
                5);
    }
    SECTION("touching normals") {
        ProximityContact c;
        const Triangle3d face{{point(0, 0, 0), point(1, 0, 0), point(0, 1, 0)}};
        REQUIRE(vertexFaceContact(0, 0, point(0.25, 0.25, 0), 1, 0, face, 0, c));
        REQUIRE(c.distance == 0);
        REQUIRE(c.normal[2] == 1);
        REQUIRE(faceVertexContact(0, 0, face, 1, 0, point(0.25, 0.25, 0), 0, c));
        REQUIRE(c.normal[2] == -1);
        REQUIRE(
            edgeEdgeContact(0, 0, point(-1, 0, 0.1), point(1, 0, 0.1), 1, 0, point(0, -1, 0), point(0, 1, 0), 0.1, c));
        REQUIRE(c.normal[2] == Approx(1));
        REQUIRE(c.distance == Approx(0.1));
        // Crossing at distance 0: the edges' cross product, pointed from B's midpoint to A's.
        REQUIRE(edgeEdgeContact(0, 0, point(-1, 0, 0), point(1, 0, 0), 1, 0, point(0, -1, 0), point(0, 1, 0), 0, c));
        REQUIRE(std::fabs(c.normal[2]) == 1);
        REQUIRE(!vertexFaceContact(0, 0, point(0.25, 0.25, 0.5), 1, 0, face, 0.25, c));
    }
    SECTION("penetration estimate of crossing triangles") {
        // A's corner (0, 0, -0.1) is 0.1 behind B (plane z = 0, normal +z); B's deepest corner
        // lies 1 behind A's plane x = 0.25.
        const Triangle3d a{{point(0.25, 0.2, -0.1), point(0.25, 0.2, 1), point(0.25, 0.6, 1)}};
        const Triangle3d b{{point(0, 0, 0), point(1, 0, 0), point(0, 1, 0)}};
        REQUIRE(trianglesIntersect(a, b));
        const ProximityContact c = intersectionContact(0, 0, a, 1, 0, b);
        REQUIRE(c.distance == Approx(-0.1));
        REQUIRE(c.normal[2] == 1);
        REQUIRE(c.pointA[2] == Approx(-0.1f));
        REQUIRE(c.pointB[2] == Approx(0).margin(1e-7));
    }
}

TEST_CASE("Contact query of named mesh pairs equals the oracle", "[narrow][proximity]") {
    const PlyMesh square = meshOf({0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0}, {0, 1, 2, 0, 2, 3});
    SECTION("a vertex exactly on a face and d = 0") {
        const PlyMesh tip = meshOf({0.5f, 0.25f, 0, 0.5f, 0.25f, 1, 0.75f, 0.25f, 1}, {0, 1, 2});
        requireOracle(square, &tip, nullptr, nullptr, 0, false);
        TriangleMeshSet set(1);
        addTo(set, square);
        addTo(set, tip);
        std::vector<ProximityContact> contacts;
        set.findPairProximity(0, 1, ProximityOptions{0, false}, contacts);
        REQUIRE(countKind(contacts, ProximityKind::FaceVertex) == 1);
        REQUIRE(countKind(contacts, ProximityKind::TrianglesIntersect) == 1);
    }
    SECTION("coplanar overlapping triangles") {
        const PlyMesh shifted = meshOf({0.5f, 0.5f, 0, 1.5f, 0.5f, 0, 1.5f, 1.5f, 0}, {0, 1, 2});
        for (double d : {0.0, 0.05, 0.3}) requireOracle(square, &shifted, nullptr, nullptr, d, false);
    }
    SECTION("zero-area triangles and zero-length edges") {
        const PlyMesh degenerate = meshOf({0.2f, 0.3f, 0.01f, 0.6f, 0.3f, 0.01f, 0.4f, 0.3f, 0.01f, 0.5f, 0.5f, -0.02f},
                                          {0, 1, 2, 3, 3, 3, 0, 0, 1});
        for (double d : {0.0, 0.01, 0.02, 0.5}) requireOracle(square, &degenerate, nullptr, nullptr, d, false);
        requireOracle(degenerate, nullptr, nullptr, nullptr, 0.3, false);
    }
    SECTION("parallel and crossing edges of two strips") {
        const PlyMesh strip = meshOf({0, 0, 0, 1, 0, 0, 0, 0, 1}, {0, 1, 2});
        // 0.125 apart exactly: the decision at d = 0.125 is exact (reported), just below it not.
        const PlyMesh above = meshOf({0, 0.125f, 0, 1, 0.125f, 0, 0, 0.25f, -1}, {0, 1, 2});
        const PlyMesh across = meshOf({0.5f, 0.125f, -0.5f, 0.5f, 0.125f, 0.5f, 0.5f, 1, 0}, {0, 1, 2});
        for (double d : {0.0, std::nextafter(0.125, 0.0), 0.125, 0.2}) {
            requireOracle(strip, &above, nullptr, nullptr, d, false);
            requireOracle(strip, &across, nullptr, nullptr, d, false);
        }
        TriangleMeshSet set(1);
        addTo(set, strip);
        addTo(set, across);
        std::vector<ProximityContact> contacts;
        set.findPairProximity(0, 1, ProximityOptions{std::nextafter(0.125, 0.0), false}, contacts);
        REQUIRE(contacts.empty());
        set.findPairProximity(0, 1, ProximityOptions{0.125, false}, contacts);
        // The crossing edges, and the top vertex over the strip's hypotenuse with its two edges.
        REQUIRE(countKind(contacts, ProximityKind::EdgeEdge) == 3);
        REQUIRE(countKind(contacts, ProximityKind::FaceVertex) == 1);
        for (const ProximityContact& c : contacts) REQUIRE(c.distance == 0.125f);
    }
    SECTION("huge and tiny scales") {
        const PlyMesh cloth = foldedCloth(10, 0.02, 0.06, 0.3);
        const PlyMesh ball = sphereMesh(12, 8, std::vector<double>{0, 0.1, 0}.data(), 0.4);
        for (float s : {1e6f, 1e-6f}) {
            const PlyMesh scaledBall = scaled(ball, s);
            requireOracle(scaled(cloth, s), nullptr, nullptr, nullptr, 0.03 * s, false);
            requireOracle(scaled(cloth, s), &scaledBall, nullptr, nullptr, 0.05 * s, false);
        }
    }
    SECTION("transforms with large translations") {
        const PlyMesh cloth = foldedCloth(10, 0.02, 0.06, 0.3);
        const PlyMesh ball = sphereMesh(12, 8, std::vector<double>{0, 0, 0}.data(), 0.4);
        const std::vector<double> ta = rotationAbout111(0.3, 1e5, -2e5, 1e5);
        const std::vector<double> tb = rotationAbout111(0.3, 1e5, -2e5 + 0.2, 1e5);
        for (double d : {0.0, 0.02, 0.1}) requireOracle(cloth, &ball, ta.data(), tb.data(), d, false);
    }
}

/// A rotation as Bullet makes one: a float quaternion about `axis` by `angle` turned into a
/// float matrix, then widened to double (orthonormal only to float precision), with translation t.
std::vector<double> floatRotation(const float* axis, float angle, double tx, double ty, double tz) {
    const float length = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    const float s = std::sin(angle / 2) / length;
    const float x = axis[0] * s, y = axis[1] * s, z = axis[2] * s, w = std::cos(angle / 2);
    const float m[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                        2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                        2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    return {m[0], m[1], m[2], tx, m[3], m[4], m[5], ty, m[6], m[7], m[8], tz};
}

/// Height of the test landscape.
double landscapeHeight(double x, double z) { return 0.25 * std::sin(2.1 * x) * std::cos(1.7 * z) + 0.1 * x; }

/// A 4 x 4 landscape of 24 x 24 vertices (1,058 triangles) and two zero-area triangles under its
/// middle (three points on a line, and three equal points).
PlyMesh testLandscape() {
    PlyMesh land = gridMesh(24, 24, false, false, [](double u, double v, double* p) {
        p[0] = 4 * u - 2;
        p[2] = 4 * v - 2;
        p[1] = landscapeHeight(p[0], p[2]);
    });
    const auto first = static_cast<std::uint32_t>(land.positions.size() / 3);
    const float y = static_cast<float>(landscapeHeight(0, 0));
    land.positions.insert(land.positions.end(), {-0.3f, y, 0, 0, y, 0, 0.3f, y, 0, 0.1f, y, 0.1f});
    land.indices.insert(land.indices.end(), {first, first + 1, first + 2, first + 3, first + 3, first + 3});
    return land;
}

TEST_CASE("A small moving mesh against a large one culls in its own frame and equals the oracle",
          "[narrow][proximity]") {
    // A ball of 96 triangles (at most 1/8 of the landscape's) resting on, sunk into and hovering
    // over the landscape, turned by float rotations, near the origin and 1e4 away (the landscape
    // moved there too): the leaf walk culls in the ball's frame, the kept fronts in the world's,
    // and both give the oracle's contacts exactly.
    const double origin[3] = {0, 0, 0};
    const PlyMesh ball = sphereMesh(8, 7, origin, 0.3);
    const PlyMesh land = testLandscape();
    REQUIRE(ball.indices.size() * 8 <= land.indices.size());
    const float axes[3][3] = {{1, 2, 3}, {0, 1, 0}, {-3, 1, 0.5f}};
    const double edge = meanEdge(land);
    int configurations = 0;
    for (double far : {0.0, 1e4}) {
        const std::vector<double> landMove = {1, 0, 0, far, 0, 1, 0, -2 * far, 0, 0, 1, far};
        for (int axis = 0; axis < 3; ++axis) {
            for (double lift : {-0.05, 0.0, 0.004, 0.3}) {
                const double x = 0.4 * axis - 0.4, z = 0.1 - 0.3 * axis;
                const double y = landscapeHeight(x, z) + 0.3 + lift;
                const std::vector<double> move =
                    floatRotation(axes[axis], 0.7f + float(axis), far + x, -2 * far + y, far + z);
                for (double d : {0.0, 0.01 * edge, 0.1 * edge, 0.5 * edge}) {
                    const ProximityOracleMesh oa = oracleOf(ball, 0, move.data()),
                                              ob = oracleOf(land, 1, landMove.data());
                    const std::vector<ProximityContact> expected = oracleProximity(oa, &ob, d, false, true);
                    for (NarrowTraversal traversal : {NarrowTraversal::LeafWalk, NarrowTraversal::Fronts}) {
                        TriangleMeshSet set(2);
                        set.setTraversal(traversal);
                        addTo(set, ball);
                        addTo(set, land);
                        set.setTransform(0, move.data());
                        set.setTransform(1, landMove.data());
                        std::vector<ProximityContact> contacts;
                        set.findPairProximity(0, 1, ProximityOptions{d, false}, contacts);
                        INFO("traversal " << static_cast<int>(traversal) << ", far " << far << ", axis " << axis
                                          << ", lift " << lift << ", distance " << d);
                        REQUIRE(set.stats().ownFrameQueries == (traversal == NarrowTraversal::LeafWalk ? 1u : 0u));
                        REQUIRE(sameContacts(contacts, expected));
                    }
                    configurations += expected.empty() ? 0 : 1;
                }
            }
        }
    }
    // Most placements touch: the test compares contacts, not empty lists.
    REQUIRE(configurations >= 30);

    SECTION("a transform that is no rotation is culled in the world frame") {
        std::vector<double> stretch = floatRotation(axes[0], 0.7f, 0, landscapeHeight(0, 0) + 0.3, 0);
        for (int k = 0; k < 3; ++k) stretch[k] *= 1.01;
        TriangleMeshSet set(2);
        addTo(set, ball);
        addTo(set, land);
        set.setTransform(0, stretch.data());
        std::vector<ProximityContact> contacts;
        set.findPairProximity(0, 1, ProximityOptions{0.1 * edge, false}, contacts);
        REQUIRE(set.stats().ownFrameQueries == 0);
        const ProximityOracleMesh oa = oracleOf(ball, 0, stretch.data()), ob = oracleOf(land, 1);
        const std::vector<ProximityContact> expected = oracleProximity(oa, &ob, 0.1 * edge, false, true);
        REQUIRE(!expected.empty());
        REQUIRE(sameContacts(contacts, expected));
    }
    SECTION("a batch of balls, one query per thread, over frames") {
        TriangleMeshSet set(2);
        addTo(set, land);
        std::vector<MeshPairQuery> queries;
        for (std::uint32_t i = 0; i < 12; ++i) queries.push_back(MeshPairQuery{addTo(set, ball), 0});
        const double d = 0.1 * edge;
        for (int frame = 0; frame < 3; ++frame) {
            std::vector<ProximityContact> expected;
            std::vector<std::vector<double>> moves;
            for (std::uint32_t i = 0; i < 12; ++i) {
                const double x = -1.5 + 0.25 * i, z = 0.2 * frame - 0.7 + 0.1 * i;
                moves.push_back(floatRotation(axes[i % 3], 0.3f * float(i + frame), x,
                                              landscapeHeight(x, z) + 0.3 - 0.01 * frame, z));
                set.setTransform(i + 1, moves.back().data());
                const ProximityOracleMesh oa = oracleOf(ball, i + 1, moves.back().data()), ob = oracleOf(land, 0);
                const std::vector<ProximityContact> part = oracleProximity(oa, &ob, d, false, true);
                expected.insert(expected.end(), part.begin(), part.end());
            }
            std::vector<ProximityContact> contacts;
            set.findProximity(queries.data(), static_cast<std::uint32_t>(queries.size()), ProximityOptions{d, false},
                              contacts);
            INFO("frame " << frame);
            REQUIRE(set.stats().ownFrameQueries == 12);
            REQUIRE(!expected.empty());
            REQUIRE(sameContacts(contacts, expected));
        }
    }
}

TEST_CASE("Contact query of generated meshes equals the oracle at several distances", "[narrow][proximity]") {
    SECTION("folded cloth, self") {
        const PlyMesh cloth = foldedCloth(20, 0.02, 0.06, 0.7);
        const double edge = meanEdge(cloth);
        for (double d : {0.0, 0.01 * edge, 0.1 * edge}) requireOracle(cloth, nullptr, nullptr, nullptr, d, false);
    }
    SECTION("linked tori, pair and self") {
        // Tubes of radius 0.26 whose centre circles stay 0.5 apart: they graze and cross.
        const PlyMesh torus = torusMesh(24, 10, 0.5, 0.26);
        const double edge = meanEdge(torus);
        // The second torus turned upright and moved onto the first's tube: the rings link.
        const double upright[12] = {1, 0, 0, 0.5, 0, 0, -1, 0, 0, 1, 0, 0};
        for (double d : {0.0, 0.01 * edge, 0.1 * edge}) {
            requireOracle(torus, &torus, nullptr, upright, d, false);
        }
        requireOracle(torus, nullptr, nullptr, nullptr, 0.1 * edge, false);
    }
    SECTION("random triangle soup, self") {
        const PlyMesh soup = triangleSoup(300, 0.15, 7);
        const double edge = meanEdge(soup);
        for (double d : {0.0, 0.01 * edge, 0.1 * edge}) requireOracle(soup, nullptr, nullptr, nullptr, d, false);
    }
}

TEST_CASE("Vertex-face only: the contact query's vertex-triangle records and nothing else", "[narrow][proximity]") {
    const PlyMesh cloth = foldedCloth(20, 0.02, 0.06, 0.7);
    const PlyMesh torus = torusMesh(24, 10, 0.5, 0.26);
    const double upright[12] = {1, 0, 0, 0.5, 0, 0, -1, 0, 0, 1, 0, 0};
    for (NarrowTraversal traversal : {NarrowTraversal::LeafWalk, NarrowTraversal::Fronts, NarrowTraversal::Descent}) {
        for (const bool pair : {false, true}) {
            const PlyMesh& mesh = pair ? torus : cloth;
            TriangleMeshSet set(2);
            set.setTraversal(traversal);
            addTo(set, mesh);
            if (pair) {
                addTo(set, torus);
                set.setTransform(1, upright);
            }
            const double d = 0.1 * meanEdge(mesh);
            std::vector<ProximityContact> all, vertexFace;
            ProximityOptions options{d, false};
            const auto run = [&](std::vector<ProximityContact>& out) {
                if (pair)
                    set.findPairProximity(0, 1, options, out);
                else
                    set.findSelfProximity(0, options, out);
            };
            run(all);
            options.vertexFaceOnly = true;
            run(vertexFace);
            INFO("traversal " << static_cast<int>(traversal) << (pair ? ", linked tori" : ", folded cloth"));
            REQUIRE(countKind(all, ProximityKind::EdgeEdge) > 0);
            if (pair) REQUIRE(countKind(all, ProximityKind::TrianglesIntersect) > 0);
            std::vector<ProximityContact> expected;
            for (const ProximityContact& c : all) {
                const auto kind = static_cast<ProximityKind>(c.kind);
                if (kind == ProximityKind::VertexFace || kind == ProximityKind::FaceVertex) expected.push_back(c);
            }
            REQUIRE(!expected.empty());
            REQUIRE(sameContacts(vertexFace, expected));
        }
    }
}

TEST_CASE("Welded seams: excluded with the option, reported without", "[narrow][proximity]") {
    const PlyMesh cloth = seamedCloth(8);
    const double d = 0.01 * meanEdge(cloth);
    requireOracle(cloth, nullptr, nullptr, nullptr, d, true);
    requireOracle(cloth, nullptr, nullptr, nullptr, d, false);
    TriangleMeshSet set(2);
    addTo(set, cloth);
    std::vector<ProximityContact> welded, split;
    set.findSelfProximity(0, ProximityOptions{d, true}, welded);
    set.findSelfProximity(0, ProximityOptions{d, false}, split);
    // A flat cloth has nothing within 1% of an edge but across its seam.
    REQUIRE(welded.empty());
    REQUIRE(countKind(split, ProximityKind::VertexFace) > 0);
    REQUIRE(countKind(split, ProximityKind::EdgeEdge) > 0);
    REQUIRE(countKind(split, ProximityKind::TrianglesIntersect) > 0);
    for (const ProximityContact& c : split) REQUIRE(c.distance <= 0);
}

TEST_CASE("Contact query over frames: kept fronts equal a fresh walk and the oracle", "[narrow][proximity]") {
    TriangleMeshSet fronts(2), walk(2);
    fronts.setTraversal(NarrowTraversal::Fronts);
    PlyMesh cloth = foldedCloth(16, 0.02, 0.06, 0.0);
    const double torusMove[12] = {1, 0, 0, -0.5, 0, 1, 0, 0.05, 0, 0, 1, 0};
    const PlyMesh torus = torusMesh(16, 8, 0.3, 0.08);
    for (TriangleMeshSet* set : {&fronts, &walk}) {
        addTo(*set, cloth);
        addTo(*set, torus);
        set->setTransform(1, torusMove);
    }
    const double edge = meanEdge(cloth);
    const MeshPairQuery queries[] = {{0, 0}, {0, 1}};
    std::vector<ProximityContact> a, b;
    for (int frame = 0; frame < 10; ++frame) {
        cloth = foldedCloth(16, 0.02, 0.06, 0.15 * frame);
        // The distance changes once, at frame 5: the fronts are generated anew.
        const double d = (frame < 5 ? 0.05 : 0.1) * edge;
        for (TriangleMeshSet* set : {&fronts, &walk}) {
            if (frame > 0) set->setPositions(0, cloth.positions.data());
            set->findProximity(queries, 2, ProximityOptions{d, false}, set == &fronts ? a : b);
        }
        INFO("frame " << frame);
        REQUIRE(fronts.stats().frontsGenerated == (frame == 0 || frame == 5 ? 2u : 0u));
        REQUIRE(sameContacts(a, b));
        for (const MeshPairQuery& q : queries)
            REQUIRE(sameFront(detail::implOf(fronts).proximityFront(q.meshA, q.meshB),
                              detail::implOf(walk).walkedProximityFront(q.meshA, q.meshB)));
        std::vector<ProximityContact> expected = oracleProximity(oracleOf(cloth, 0), nullptr, d, false, true);
        const std::vector<ProximityContact> pair = oracleProximity(
            oracleOf(cloth, 0), std::vector<ProximityOracleMesh>{oracleOf(torus, 1, torusMove)}.data(), d, false, true);
        expected.insert(expected.end(), pair.begin(), pair.end());
        REQUIRE(sameContacts(a, expected));
    }
    // The intersection query keeps its own fronts beside the contact query's, and finds the
    // same intersecting pairs of the cloth.
    std::vector<TriangleContact> intersections;
    fronts.findSelfContacts(0, intersections);
    std::size_t selfIntersections = 0;
    for (const ProximityContact& c : a) {
        selfIntersections += c.meshB == 0 && c.kind == static_cast<std::uint32_t>(ProximityKind::TrianglesIntersect);
    }
    REQUIRE(intersections.size() == selfIntersections);
    REQUIRE(selfIntersections > 0);
}

TEST_CASE("A batch of contact queries equals the oracle of each, in mesh-pair order", "[narrow][proximity]") {
    // Mesh 1 has a transform and takes part in a self query (own frame) and a pair query (world
    // frame) of the same batch; mesh 2 has no triangle.
    const PlyMesh cloth = foldedCloth(12, 0.02, 0.06, 0.2);
    const PlyMesh torus = torusMesh(16, 8, 0.3, 0.08);
    const PlyMesh empty;
    const std::vector<double> move = rotationAbout111(0.4, -0.5, 0.05, 0.1);
    for (NarrowTraversal traversal : {NarrowTraversal::LeafWalk, NarrowTraversal::Fronts}) {
        TriangleMeshSet set(2);
        set.setTraversal(traversal);
        addTo(set, cloth);
        addTo(set, torus);
        set.addMesh(nullptr, 0, nullptr, 0);
        set.setTransform(1, move.data());
        const MeshPairQuery queries[] = {{1, 1}, {2, 2}, {0, 1}, {0, 0}, {0, 2}};
        const double d = 0.2 * meanEdge(cloth);
        std::vector<ProximityContact> contacts;
        for (int frame = 0; frame < 2; ++frame) {
            set.findProximity(queries, 5, ProximityOptions{d, false}, contacts);
            const ProximityOracleMesh c = oracleOf(cloth, 0), t = oracleOf(torus, 1, move.data());
            std::vector<ProximityContact> expected = oracleProximity(c, nullptr, d, false, true);
            for (const auto& part : {oracleProximity(c, &t, d, false, true),
                                     oracleProximity(oracleOf(torus, 1), nullptr, d, false, true)}) {
                expected.insert(expected.end(), part.begin(), part.end());
            }
            INFO("traversal " << static_cast<int>(traversal) << ", frame " << frame);
            REQUIRE(countKind(expected, ProximityKind::FaceVertex) > 0);
            REQUIRE(sameContacts(contacts, expected));
        }
    }
    TriangleMeshSet set(1);
    addTo(set, empty);
    std::vector<ProximityContact> contacts(3);
    set.findSelfProximity(0, ProximityOptions{1, true}, contacts);
    REQUIRE(contacts.empty());
    std::vector<PointContact> points(3);
    const float p[3] = {0, 0, 0};
    set.findPointContacts(p, 1, 0, 1, points);
    REQUIRE(points.empty());
    REQUIRE_THROWS_AS(set.findSelfProximity(0, ProximityOptions{-1, false}, contacts), std::invalid_argument);
    REQUIRE_THROWS_AS(set.findSelfProximity(0, ProximityOptions{INFINITY, false}, contacts), std::invalid_argument);
}

TEST_CASE("A large batch, run one query per thread, equals the queries run one by one", "[narrow][proximity]") {
    // Eight tori in a ring, each overlapping its neighbours, plus self queries: 16 queries, so the
    // batch takes the per-thread path on a team (and, at the tuner's probes, the serial one).
    const PlyMesh torus = torusMesh(16, 8, 0.3, 0.08);
    for (NarrowTraversal traversal : {NarrowTraversal::LeafWalk, NarrowTraversal::Fronts}) {
        TriangleMeshSet batch(2), single(1);
        batch.setTraversal(traversal);
        single.setTraversal(traversal);
        std::vector<MeshPairQuery> queries;
        for (std::uint32_t i = 0; i < 8; ++i) {
            for (TriangleMeshSet* set : {&batch, &single}) addTo(*set, torus);
            queries.push_back(MeshPairQuery{i, (i + 1) % 8});
            queries.push_back(MeshPairQuery{i, i});
        }
        const double d = 0.3 * meanEdge(torus);
        for (int frame = 0; frame < 6; ++frame) {
            for (std::uint32_t i = 0; i < 8; ++i) {
                const double angle = 0.785398 * i + 0.05 * frame;
                const std::vector<double> move =
                    rotationAbout111(0.3 * frame + i, 0.5 * std::cos(angle), 0.5 * std::sin(angle), 0.02 * i);
                batch.setTransform(i, move.data());
                single.setTransform(i, move.data());
            }
            std::vector<ProximityContact> together, one, expected;
            batch.findProximity(queries.data(), static_cast<std::uint32_t>(queries.size()), ProximityOptions{d, false},
                                together);
            std::vector<MeshPairQuery> sorted = queries;
            std::sort(sorted.begin(), sorted.end(), [](const MeshPairQuery& x, const MeshPairQuery& y) {
                return x.meshA != y.meshA ? x.meshA < y.meshA : x.meshB < y.meshB;
            });
            for (const MeshPairQuery& query : sorted) {
                single.findProximity(&query, 1, ProximityOptions{d, false}, one);
                expected.insert(expected.end(), one.begin(), one.end());
            }
            INFO("traversal " << static_cast<int>(traversal) << ", frame " << frame);
            REQUIRE(countKind(expected, ProximityKind::EdgeEdge) > 0);
            REQUIRE(together.size() == expected.size());
            REQUIRE(std::memcmp(together.data(), expected.data(), together.size() * sizeof(ProximityContact)) == 0);
            REQUIRE(batch.stats().triangleTests > 0);
        }
    }
}

TEST_CASE("Contact-query fronts follow trees restructured by the intersection query", "[narrow][proximity]") {
    // Only the corner [-1, 0]^3 drifts, so the intersection query's fronts restructure subtrees.
    const std::uint32_t count = 3000;
    TriangleMeshSet fronts(2), walk(2);
    fronts.setTraversal(NarrowTraversal::Fronts);
    PlyMesh soup = driftingSoup(count, 0.05, 5, 0.03, 0, 0.0);
    for (TriangleMeshSet* set : {&fronts, &walk}) addTo(*set, soup);
    const double d = 0.1 * meanEdge(soup);
    std::uint32_t restructured = 0;
    std::vector<ProximityContact> a, b;
    std::vector<TriangleContact> intersections;
    for (int frame = 0; frame < 30; ++frame) {
        soup = driftingSoup(count, 0.05, 5, 0.03, frame, 0.0);
        for (TriangleMeshSet* set : {&fronts, &walk}) set->setPositions(0, soup.positions.data());
        // Either query may be the one that restructures: they alternate in going first.
        if (frame % 2 == 0) fronts.findSelfContacts(0, intersections);
        restructured += fronts.stats().subtreesRestructured;
        fronts.findSelfProximity(0, ProximityOptions{d, false}, a);
        restructured += fronts.stats().subtreesRestructured;
        if (frame % 2 == 1) fronts.findSelfContacts(0, intersections);
        walk.findSelfProximity(0, ProximityOptions{d, false}, b);
        INFO("frame " << frame);
        REQUIRE(fronts.validate().empty());
        REQUIRE(sameContacts(a, b));
        REQUIRE(
            sameFront(detail::implOf(fronts).proximityFront(0, 0), detail::implOf(fronts).walkedProximityFront(0, 0)));
        if (frame % 10 == 0) REQUIRE(sameContacts(a, oracleProximity(oracleOf(soup, 0), nullptr, d, false, false)));
    }
    REQUIRE(restructured > 0);
}

TEST_CASE("Contact query of a real cloth frame equals the swept oracle at several distances",
          "[narrow][proximity][data]") {
    const std::string path = bulletgpu::test::sharedDataDir() + "/ccd-frames/cloth-funnel/frames/227.ply";
    if (!std::ifstream(path).good()) {
        bulletgpu::test::skipTestCase("no real data at " + path + " (set BULLETGPU_DATA_DIR)");
        return;
    }
    const PlyMesh frame = readPlyMesh(path);
    // d = 0 (touching only), the benchmark's 1% of the mean edge, and 5%, with and without welds.
    const double fraction = GENERATE(0.0, 0.01, 0.05);
    const double d = fraction * meanEdge(frame);
    CAPTURE(fraction);
    const std::vector<ProximityContact> expected = oracleProximity(oracleOf(frame, 0), nullptr, d, false, false);
    TriangleMeshSet set(2);
    addTo(set, frame);
    std::vector<ProximityContact> contacts;
    set.findSelfProximity(0, ProximityOptions{d, false}, contacts);
    if (fraction > 0) REQUIRE(!contacts.empty());
    REQUIRE(sameContacts(contacts, expected));
    set.findSelfProximity(0, ProximityOptions{d, true}, contacts);
    REQUIRE(sameContacts(contacts, oracleProximity(oracleOf(frame, 0), nullptr, d, true, false)));
}

TEST_CASE("Points against a transformed mesh equal brute force", "[narrow][proximity]") {
    const PlyMesh ball = sphereMesh(16, 10, std::vector<double>{0, 0, 0}.data(), 0.5);
    const std::vector<double> move = rotationAbout111(0.7, 1e3, 2, -3);
    std::vector<float> points;
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> around(-0.6, 0.6);
    for (int i = 0; i < 2000; ++i) {
        points.push_back(static_cast<float>(1e3 + around(rng)));
        points.push_back(static_cast<float>(2 + around(rng)));
        points.push_back(static_cast<float>(-3 + around(rng)));
    }
    TriangleMeshSet set(2);
    addTo(set, ball);
    set.setTransform(0, move.data());
    std::vector<PointContact> contacts;
    for (double d : {0.0, 0.02, 0.1}) {
        set.findPointContacts(points.data(), 2000, 0, d, contacts);
        const std::vector<PointContact> expected =
            oraclePointContacts(points.data(), 2000, oracleOf(ball, 0, move.data()), d);
        INFO("distance " << d);
        REQUIRE(contacts.size() == expected.size());
        REQUIRE((contacts.empty() ||
                 std::memcmp(contacts.data(), expected.data(), contacts.size() * sizeof(PointContact)) == 0));
        if (d > 0) REQUIRE(!contacts.empty());
    }
    // Points on both sides of the ball's faces: the signs follow the winding.
    bool negative = false, positive = false;
    for (const PointContact& c : contacts) (c.distance < 0 ? negative : positive) = true;
    REQUIRE(negative);
    REQUIRE(positive);
}

TEST_CASE("Reduction keeps the deepest and spreads the rest", "[narrow][proximity]") {
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> coordinate(-1, 1);
    std::uniform_int_distribution<int> size(1, 9);
    for (int trial = 0; trial < 200; ++trial) {
        const int count = size(rng);
        std::vector<ProximityContact> contacts(static_cast<std::size_t>(count));
        for (int i = 0; i < count; ++i) {
            ProximityContact& c = contacts[i];
            std::memset(&c, 0, sizeof c);
            c.featureA = static_cast<std::uint32_t>(i);
            for (float& x : c.pointB) x = static_cast<float>(coordinate(rng));
            c.distance = static_cast<float>(coordinate(rng));
        }
        for (std::uint32_t n = 1; n <= 4; ++n) {
            std::uint32_t chosen[4];
            const std::uint32_t kept = reduceContacts(contacts.data(), static_cast<std::uint32_t>(count), n, chosen);
            REQUIRE(kept == std::min<std::uint32_t>(n, static_cast<std::uint32_t>(count)));
            // The deepest first, then each step's best by brute force over the rest.
            for (const ProximityContact& c : contacts) REQUIRE(contacts[chosen[0]].distance <= c.distance);
            for (std::uint32_t k = 1; k < kept; ++k) {
                const auto score = [&](std::uint32_t i) {
                    const Vec3d p = contactPointB(contacts[i]);
                    const Vec3d p0 = contactPointB(contacts[chosen[0]]);
                    if (k == 1) return distanceSquared(p, p0);
                    const Vec3d p1 = contactPointB(contacts[chosen[1]]);
                    if (k == 2) return triangleArea2(p0, p1, p);
                    return quadArea2(p0, p1, contactPointB(contacts[chosen[2]]), p);
                };
                for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(count); ++i) {
                    bool earlier = false;
                    for (std::uint32_t m = 0; m < k; ++m) earlier |= chosen[m] == i;
                    if (!earlier) REQUIRE(score(chosen[k]) >= score(i));
                }
            }
        }
    }
    SECTION("per mesh pair, deterministic on any thread count") {
        const PlyMesh cloth = foldedCloth(16, 0.02, 0.06, 0.4);
        const PlyMesh torus = torusMesh(16, 8, 0.3, 0.08);
        TriangleMeshSet set(2);
        addTo(set, cloth);
        addTo(set, torus);
        const double move[12] = {1, 0, 0, -0.5, 0, 1, 0, 0.05, 0, 0, 1, 0};
        set.setTransform(1, move);
        const MeshPairQuery queries[] = {{0, 0}, {0, 1}};
        std::vector<ProximityContact> contacts, one, two;
        set.findProximity(queries, 2, ProximityOptions{0.01, false}, contacts);
        ContactReducer reducer;
        reducer.reduce(contacts, 4, one, 1);
        reducer.reduce(contacts, 4, two, 2);
        REQUIRE(one.size() == 8);
        std::vector<ProximityContact> again;
        reducer.reduce(contacts, 4, again, 2); // reused buffers give the same result
        REQUIRE(again.size() == one.size());
        REQUIRE(std::memcmp(again.data(), one.data(), one.size() * sizeof(ProximityContact)) == 0);
        REQUIRE(std::memcmp(one.data(), two.data(), one.size() * sizeof(ProximityContact)) == 0);
        for (std::size_t i = 0; i < one.size(); ++i) REQUIRE(one[i].meshB == (i < 4 ? 0u : 1u));
    }
}
