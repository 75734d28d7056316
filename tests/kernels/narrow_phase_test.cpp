// SPDX-License-Identifier: Zlib
// TriangleMeshSet on the CPU against the all-pairs oracle: exact sorted contact sets for self
// and pair queries on folded cloth, interlocked tori, a ball pressed into cloth and triangle
// soup; tree validators after builds and refits; 24 animation frames of refits.
#include "kernels/narrow/geometry/contact_sort.h"
#include "tests/support/mesh_generators.h"
#include "kernels/narrow/engine/triangle_mesh_set.h"
#include "kernels/reference/brute_force_triangles.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

using namespace bulletgpu;

namespace {

/// Identical contact lists: same pairs in the same order, same segments and flags.
void requireSameContacts(const std::vector<TriangleContact>& found, const std::vector<TriangleContact>& expected) {
    REQUIRE(found.size() == expected.size());
    std::size_t mismatches = 0;
    for (std::size_t c = 0; c < found.size(); ++c) {
        if (std::memcmp(&found[c], &expected[c], sizeof(TriangleContact)) != 0) ++mismatches;
    }
    REQUIRE(mismatches == 0);
}

/// The oracle's view of a mesh.
OracleMesh oracleOf(const PlyMesh& mesh, std::uint32_t index, const double* transform = nullptr) {
    return OracleMesh{mesh.positions.data(), mesh.indices.data(), static_cast<std::uint32_t>(mesh.indices.size() / 3),
                      transform, index};
}

/// Adds a generated mesh to the set.
std::uint32_t add(TriangleMeshSet& set, const PlyMesh& mesh) {
    return set.addMesh(mesh.positions.data(), static_cast<std::uint32_t>(mesh.positions.size() / 3),
                       mesh.indices.data(), static_cast<std::uint32_t>(mesh.indices.size() / 3));
}

/// Self contacts of `mesh` equal the all-pairs oracle's, and the tree is valid; returns the count.
std::size_t requireSelfMatches(const PlyMesh& mesh, int threads) {
    TriangleMeshSet set(threads);
    const std::uint32_t index = add(set, mesh);
    std::vector<TriangleContact> contacts;
    set.findSelfContacts(index, contacts);
    REQUIRE(set.validate().empty());
    requireSameContacts(contacts, bruteForceContacts(oracleOf(mesh, index), nullptr));
    return contacts.size();
}

/// A rotation by `angle` about z followed by a translation, row-major 3x4.
std::vector<double> rigidTransform(double angle, double tx, double ty, double tz) {
    const double c = std::cos(angle), s = std::sin(angle);
    return {c, -s, 0, tx, s, c, 0, ty, 0, 0, 1, tz};
}

/// A rotation taking the xy plane to the xz plane (x kept), then a translation along x.
std::vector<double> uprightTransform(double tx) { return {1, 0, 0, tx, 0, 0, -1, 0, 0, 1, 0, 0}; }

/// A square cloth of side 2 on a grid of n x n vertices, turned by `turn` about z and then x.
PlyMesh tiltedSquare(std::uint32_t n, double turn) {
    const double c = std::cos(turn), s = std::sin(turn);
    return gridMesh(n, n, false, false, [&](double u, double v, double* p) {
        const double x = 2 * u - 1, z = 2 * v - 1;
        p[0] = c * x;
        p[1] = c * s * x - s * z;
        p[2] = s * s * x + c * z;
    });
}

/// Sum of the surface areas of a tree's internal OBBs (what a traversal pays for).
double internalObbArea(const std::vector<LbvhNode>& nodes, const std::vector<NarrowObb>& obbs) {
    double area = 0;
    for (std::size_t n = 0; n < nodes.size(); ++n) {
        if (isLeaf(nodes[n])) continue;
        const double* e = obbs[n].extent;
        area += 8 * (e[0] * e[1] + e[1] * e[2] + e[2] * e[0]);
    }
    return area;
}

} // namespace

TEST_CASE("ContactSorter orders a query's contacts as a comparison sort does", "[narrow]") {
    std::mt19937 rng(5);
    ContactSorter sorter;
    // Few contacts over many triangles (comparison sort), many over few (counting sort), a
    // triangle with many partners, and contacts after others that must stay in place.
    for (const auto& [count, triangles] : {std::pair<int, std::uint32_t>{50, 100000}, {20000, 3000}, {5000, 2}}) {
        std::uniform_int_distribution<std::uint32_t> triangle(0, triangles - 1);
        std::vector<TriangleContact> contacts(7);
        for (std::size_t c = 0; c < contacts.size(); ++c) contacts[c].triangleA = static_cast<std::uint32_t>(99 - c);
        for (int c = 0; c < count; ++c) {
            TriangleContact contact{};
            contact.triangleA = triangle(rng);
            contact.triangleB = static_cast<std::uint32_t>(rng());
            contact.segment[0][0] = static_cast<float>(c);
            contacts.push_back(contact);
        }
        std::vector<TriangleContact> expected = contacts;
        std::sort(expected.begin() + 7, expected.end(), [](const TriangleContact& x, const TriangleContact& y) {
            return x.triangleA != y.triangleA ? x.triangleA < y.triangleA : x.triangleB < y.triangleB;
        });
        sorter.sort(contacts, 7, triangles);
        requireSameContacts(contacts, expected);
    }
}

TEST_CASE("A triangle source reads the same doubles from corners, moved vertices and the transform", "[narrow]") {
    std::mt19937 rng(31);
    std::uniform_real_distribution<float> coordinate(-1.0f, 1.0f);
    std::uniform_real_distribution<double> angle(-3.0, 3.0), offset(-1e4, 1e4);
    for (const float scale : {1e-3f, 1.0f, 1e4f}) {
        const std::uint32_t vertices = 40, triangles = 60;
        std::vector<float> positions(3 * vertices);
        for (float& x : positions) x = scale * coordinate(rng);
        std::vector<std::uint32_t> indices(3 * triangles);
        std::uniform_int_distribution<std::uint32_t> anyVertex(0, vertices - 1);
        for (std::uint32_t& i : indices) i = anyVertex(rng);
        // A rotation about z then x, and a translation.
        const double a = angle(rng), b = angle(rng);
        const double transform[12] = {std::cos(a),
                                      -std::sin(a),
                                      0,
                                      offset(rng),
                                      std::cos(b) * std::sin(a),
                                      std::cos(b) * std::cos(a),
                                      -std::sin(b),
                                      offset(rng),
                                      std::sin(b) * std::sin(a),
                                      std::sin(b) * std::cos(a),
                                      std::cos(b),
                                      offset(rng)};
        std::vector<double> moved(3 * vertices);
        std::vector<Triangle3d> corners(triangles);
        for (std::uint32_t v = 0; v < vertices; ++v) {
            const Vec3d p = transformPoint(transform, &positions[3 * v]);
            for (int k = 0; k < 3; ++k) moved[3 * v + k] = p.v[k];
        }
        for (std::uint32_t t = 0; t < triangles; ++t)
            corners[t] = loadTriangle(positions.data(), indices.data(), t, transform);
        const TriangleSource fromCorners{corners.data(), nullptr, indices.data(), nullptr, nullptr, nullptr};
        const TriangleSource fromMoved{nullptr, positions.data(), indices.data(), nullptr, nullptr, moved.data()};
        const TriangleSource fromTransform{nullptr, positions.data(), indices.data(), transform, nullptr, nullptr};
        for (std::uint32_t t = 0; t < triangles; ++t) {
            Triangle3d s1, s2, s3;
            const Triangle3d& x = fromCorners.triangle(t, s1);
            const Triangle3d& y = fromMoved.triangle(t, s2);
            const Triangle3d& z = fromTransform.triangle(t, s3);
            REQUIRE(std::memcmp(&x, &y, sizeof x) == 0);
            REQUIRE(std::memcmp(&x, &z, sizeof x) == 0);
        }
    }
}

TEST_CASE("Lbvh builds valid trees of every size", "[narrow][lbvh]") {
    const std::uint32_t count = GENERATE(0u, 1u, 2u, 3u, 7u, 100u, 5000u);
    const PlyMesh soup = triangleSoup(count, 0.05, count + 1);
    std::vector<FloatBox> boxes(count);
    for (std::uint32_t t = 0; t < count; ++t) {
        boxes[t] = triangleBox(loadTriangle(soup.positions.data(), soup.indices.data(), t, nullptr));
    }
    Lbvh tree;
    tree.build(boxes.data(), count, 2);
    REQUIRE(tree.validate(tree.nodes(), boxes.data()).empty());
    REQUIRE(tree.nodes().size() == (count == 0 ? 0 : 2 * count - 1));
    // Same Morton codes for every triangle: the index order must still give a valid tree.
    std::vector<FloatBox> same(count, boxes.empty() ? FloatBox{} : boxes[0]);
    tree.build(same.data(), count, 2);
    REQUIRE(tree.validate(tree.nodes(), same.data()).empty());
    // A refit after moving every box keeps the tree valid; a broken box is caught.
    for (FloatBox& box : boxes) box.lo[1] -= 0.5f;
    tree.refit(boxes.data(), 2);
    REQUIRE(tree.validate(tree.nodes(), boxes.data()).empty());
    if (count >= 2) {
        std::vector<LbvhNode> broken = tree.nodes();
        broken[0].box.hi[0] = broken[0].box.lo[0] - 1;
        REQUIRE_FALSE(tree.validate(broken, boxes.data()).empty());
        broken = tree.nodes();
        broken[1].parent = 5;
        REQUIRE_FALSE(tree.validate(broken, nullptr).empty());
    }
}

TEST_CASE("Rigid meshes with OBBs sort in their principal frame", "[narrow][lbvh]") {
    // A square with no preferred axes in its plane keeps the mesh's axes.
    const PlyMesh flat = tiltedSquare(60, 0);
    CHECK(
        !principalFrame(flat.positions.data(), flat.indices.data(), static_cast<std::uint32_t>(flat.indices.size() / 3))
             .present);

    const PlyMesh square = tiltedSquare(120, 0.7);
    const auto triangles = static_cast<std::uint32_t>(square.indices.size() / 3);
    std::vector<FloatBox> boxes;
    std::vector<Triangle3d> corners;
    for (std::uint32_t t = 0; t < triangles; ++t) {
        corners.push_back(loadTriangle(square.positions.data(), square.indices.data(), t, nullptr));
        boxes.push_back(triangleBox(corners.back()));
    }
    // One of the frame's axes is the square's normal, and its OBB tree is several times tighter.
    const MortonFrame frame = principalFrame(square.positions.data(), square.indices.data(), triangles);
    REQUIRE(frame.present);
    const Triangle3d& first = corners[0];
    double normal[3];
    const double e1[3] = {first.p[1][0] - first.p[0][0], first.p[1][1] - first.p[0][1], first.p[1][2] - first.p[0][2]};
    const double e2[3] = {first.p[2][0] - first.p[0][0], first.p[2][1] - first.p[0][1], first.p[2][2] - first.p[0][2]};
    cross3(e1, e2, normal);
    REQUIRE(normalize3(normal));
    double alongNormal = 0;
    for (const double* axis : frame.axis) alongNormal = std::max(alongNormal, std::fabs(dot3(axis, normal)));
    CHECK(alongNormal > 0.999999);
    Lbvh world, principal;
    world.build(boxes.data(), triangles, 2);
    principal.build(boxes.data(), triangles, 2, frame);
    REQUIRE(principal.validate(principal.nodes(), boxes.data()).empty());
    std::vector<NarrowObb> worldObbs, principalObbs;
    world.refitObbs(corners.data(), worldObbs, false, {}, 2);
    principal.refitObbs(corners.data(), principalObbs, false, {}, 2);
    REQUIRE(principal.validateObbs(principalObbs, corners.data()).empty());
    CHECK(internalObbArea(principal.nodes(), principalObbs) < 0.25 * internalObbArea(world.nodes(), worldObbs));

    // The set builds a rigid mesh with OBBs in that frame and one with boxes in its own axes;
    // once deformed, rebuilds use the mesh's own axes.
    TriangleMeshSet set(2);
    const std::uint32_t oriented = add(set, square), boxed = add(set, square);
    set.setBoundingVolume(oriented, BoundingVolume::Obb);
    std::vector<TriangleContact> contacts;
    const std::vector<MeshPairQuery> queries{{oriented, oriented}, {boxed, boxed}};
    set.findContacts(queries.data(), 2, contacts);
    REQUIRE(set.validate().empty());
    const auto sameNodes = [](const Lbvh& x, const Lbvh& y) {
        return x.nodes().size() == y.nodes().size() &&
               std::memcmp(x.nodes().data(), y.nodes().data(), x.nodes().size() * sizeof(LbvhNode)) == 0;
    };
    CHECK(sameNodes(detail::implOf(set).tree(oriented), principal));
    CHECK(sameNodes(detail::implOf(set).tree(boxed), world));
    set.setPositions(oriented, square.positions.data());
    set.requestRebuild(oriented);
    set.findSelfContacts(oriented, contacts);
    CHECK(sameNodes(detail::implOf(set).tree(oriented), world));
}

TEST_CASE("Self-collision equals the all-pairs oracle on generated meshes", "[narrow][self]") {
    const int threads = GENERATE(1, 2);
    SECTION("a cloth folded onto itself") { CHECK(requireSelfMatches(foldedCloth(24, 0.02, 0.06, 0.3), threads) > 20); }
    SECTION("a torus knotted through itself") {
        PlyMesh torus = torusMesh(40, 12, 1.0, 0.55);
        const PlyMesh second = torusMesh(40, 12, 1.0, 0.55);
        // Append the same torus turned upright and shifted: one mesh, two linked rings.
        const std::uint32_t offset = static_cast<std::uint32_t>(torus.positions.size() / 3);
        for (std::size_t v = 0; v < second.positions.size(); v += 3) {
            torus.positions.insert(torus.positions.end(),
                                   {second.positions[v] + 1.0f, second.positions[v + 2], -second.positions[v + 1]});
        }
        for (std::uint32_t i : second.indices) torus.indices.push_back(i + offset);
        CHECK(requireSelfMatches(torus, threads) > 20);
    }
    SECTION("random triangle soup") { CHECK(requireSelfMatches(triangleSoup(1500, 0.08, 3), threads) > 30); }
    SECTION("a grid of coplanar, touching and degenerate triangles") {
        // A flat grid plus the same grid shifted by half a cell in its plane, with every
        // tenth triangle collapsed to a segment or a point.
        PlyMesh flat =
            gridMesh(12, 12, false, false, [](double u, double v, double* p) { p[0] = u, p[1] = v, p[2] = 0; });
        const PlyMesh shifted = gridMesh(12, 12, false, false, [](double u, double v, double* p) {
            p[0] = u + 0.5 / 11, p[1] = v, p[2] = (u > 0.5 ? 0.0 : 1.0 / 11);
        });
        const std::uint32_t offset = static_cast<std::uint32_t>(flat.positions.size() / 3);
        flat.positions.insert(flat.positions.end(), shifted.positions.begin(), shifted.positions.end());
        for (std::size_t i = 0; i < shifted.indices.size(); ++i) {
            const bool collapse = (i / 3) % 10 == 0;
            flat.indices.push_back(offset + (collapse && i % 3 == 2 ? shifted.indices[i - 1] : shifted.indices[i]));
        }
        CHECK(requireSelfMatches(flat, threads) > 50);
    }
}

TEST_CASE("Pair queries with rigid transforms equal the oracle", "[narrow][pair]") {
    const PlyMesh torus = torusMesh(48, 16, 1.0, 0.55);
    TriangleMeshSet set(2);
    const std::uint32_t a = add(set, torus), b = add(set, torus);
    std::vector<TriangleContact> contacts;
    for (int frame = 0; frame < 4; ++frame) {
        const std::vector<double> ta = rigidTransform(0.1 * frame, 0, 0, 0);
        const std::vector<double> tb = uprightTransform(1.0 + 0.02 * frame);
        set.setTransform(a, ta.data());
        set.setTransform(b, tb.data());
        set.findPairContacts(a, b, contacts);
        REQUIRE(set.validate().empty());
        const OracleMesh oracleB = oracleOf(torus, b, tb.data());
        const std::vector<TriangleContact> expected = bruteForceContacts(oracleOf(torus, a, ta.data()), &oracleB);
        requireSameContacts(contacts, expected);
        CHECK(expected.size() > 20);
    }
    SECTION("a batch of self and pair queries") {
        const double centre[3] = {0, -0.1, 0};
        const PlyMesh ball = sphereMesh(32, 16, centre, 0.3);
        const PlyMesh cloth = dentedCloth(32, 0.35, 0.05);
        const std::uint32_t ballIndex = add(set, ball), clothIndex = add(set, cloth);
        const MeshPairQuery queries[] = {{clothIndex, clothIndex}, {ballIndex, clothIndex}, {a, b}, {a, a}};
        // Sorted by (meshA, meshB): torus a itself, a against b, ball against cloth, cloth itself.
        const std::vector<double> ta = rigidTransform(0.5, 0, 0, 0), tb = uprightTransform(1.1);
        const OracleMesh oracleB = oracleOf(torus, b, tb.data()), clothOracle = oracleOf(cloth, clothIndex);
        std::vector<TriangleContact> expected = bruteForceContacts(oracleOf(torus, a), nullptr);
        const std::vector<TriangleContact> parts[] = {bruteForceContacts(oracleOf(torus, a, ta.data()), &oracleB),
                                                      bruteForceContacts(oracleOf(ball, ballIndex), &clothOracle),
                                                      bruteForceContacts(clothOracle, nullptr)};
        for (const auto& part : parts) expected.insert(expected.end(), part.begin(), part.end());
        CHECK(parts[0].size() > 20);
        CHECK(parts[1].size() > 20);
        set.setTransform(a, ta.data());
        set.setTransform(b, tb.data());
        set.findContacts(queries, 4, contacts);
        requireSameContacts(contacts, expected);
    }
}

TEST_CASE("Refits over animation frames equal rebuilds and the oracle", "[narrow][refit]") {
    TriangleMeshSet refitted(2), rebuilt(2);
    PlyMesh cloth = foldedCloth(20, 0.02, 0.05, 0.0);
    const std::uint32_t r = add(refitted, cloth), b = add(rebuilt, cloth);
    std::vector<TriangleContact> fromRefit, fromRebuild;
    std::size_t total = 0;
    for (int frame = 0; frame < 24; ++frame) {
        cloth = foldedCloth(20, 0.02, 0.05, 0.25 * frame);
        refitted.setPositions(r, cloth.positions.data());
        rebuilt.setPositions(b, cloth.positions.data());
        rebuilt.requestRebuild(b);
        refitted.findSelfContacts(r, fromRefit);
        rebuilt.findSelfContacts(b, fromRebuild);
        REQUIRE(refitted.stats().refitted == (frame == 0 ? 0u : 1u));
        REQUIRE(refitted.validate().empty());
        requireSameContacts(fromRefit, fromRebuild);
        requireSameContacts(fromRefit, bruteForceContacts(oracleOf(cloth, r), nullptr));
        total += fromRefit.size();
    }
    CHECK(total > 200);
}

TEST_CASE("Bad input is refused", "[narrow][api]") {
    TriangleMeshSet set(1);
    const float positions[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    const std::uint32_t good[3] = {0, 1, 2}, bad[3] = {0, 1, 3};
    REQUIRE_THROWS_AS(set.addMesh(positions, 3, bad, 1), std::invalid_argument);
    const float nan[9] = {0, 0, 0, 1, 0, 0, 0, NAN, 0};
    REQUIRE_THROWS_AS(set.addMesh(nan, 3, good, 1), std::invalid_argument);
    const std::uint32_t mesh = set.addMesh(positions, 3, good, 1);
    std::vector<TriangleContact> contacts;
    REQUIRE_THROWS_AS(set.findPairContacts(mesh, mesh, contacts), std::invalid_argument);
    REQUIRE_THROWS_AS(set.findSelfContacts(mesh + 1, contacts), std::invalid_argument);
    const double infinite[12] = {1, 0, 0, INFINITY, 0, 1, 0, 0, 0, 0, 1, 0};
    REQUIRE_THROWS_AS(set.setTransform(mesh, infinite), std::invalid_argument);
    REQUIRE_THROWS_AS(set.setBoundingVolume(mesh + 1, BoundingVolume::Obb), std::invalid_argument);
    set.findSelfContacts(mesh, contacts);
    REQUIRE(contacts.empty());
}
