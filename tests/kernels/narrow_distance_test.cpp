// SPDX-License-Identifier: Zlib
// MeshDistance against the all-pairs oracle: generated meshes at several separations and
// orientations, linked tori, huge and tiny scales, large translations, on 1 and 2 threads,
// and a real ccd-frames mesh against a moved copy (skipped without the data).
#include "kernels/common/cuda_device.h"
#include "kernels/narrow/distance/mesh_distance.h"
#include "kernels/reference/brute_force_distance.h"
#include "tests/support/mesh_generators.h"
#include "tests/support/mesh_measures.h"
#include "tests/support/ply_mesh.h"
#include "tests/support/rigid_transform.h"
#include "tests/support/shared_data.h"

#include "support/test_skip.h"
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

using namespace bulletgpu;
using bulletgpu::test::radiusOf;
using bulletgpu::test::randomRigid;
using bulletgpu::test::rigid;
using bulletgpu::test::Transform;
using bulletgpu::test::triangles;

namespace {

/// `mesh` with every coordinate multiplied by s.
PlyMesh scaled(PlyMesh mesh, double s) {
    for (float& x : mesh.positions) x = static_cast<float>(x * s);
    return mesh;
}

/// Runs the query on 1 thread, and on 2 threads from the first pending pairs on (no serial
/// start), and checks it against `expected` (the oracle's answer):
/// the same intersection verdict; when apart, the same distance, pair and points (the same
/// function measured the same doubles), points that realise the distance; when meeting, a
/// reported pair that meets.
void checkAgainst(const OracleDistance& expected, const MeshDistance& engine, const PlyMesh& a, const Transform& ta,
                  const PlyMesh& b, const Transform& tb) {
    for (int threads : {1, 2}) {
        const DistanceResult r = engine.distance(0, ta.data(), 1, tb.data(), DistanceOptions{threads, 0});
        INFO(threads << " threads: distance " << r.distance << " (oracle " << expected.distance << "), pair "
                     << r.triangleA << ", " << r.triangleB << " (oracle " << expected.triangleA << ", "
                     << expected.triangleB << "), " << r.volumeTests << " RSS tests, " << r.triangleTests
                     << " triangle tests");
        REQUIRE(r.intersecting == expected.intersecting);
        if (r.intersecting) {
            REQUIRE(r.distance == 0);
            const Triangle3d t1 = loadTriangle(a.positions.data(), a.indices.data(), r.triangleA, ta.data());
            const Triangle3d t2 = loadTriangle(b.positions.data(), b.indices.data(), r.triangleB, tb.data());
            REQUIRE(trianglesIntersect(t1, t2));
            continue;
        }
        REQUIRE(r.distance == expected.distance);
        REQUIRE(r.triangleA == expected.triangleA);
        REQUIRE(r.triangleB == expected.triangleB);
        const double gap =
            oracleLength(r.pointA[0] - r.pointB[0], r.pointA[1] - r.pointB[1], r.pointA[2] - r.pointB[2]);
        REQUIRE(std::fabs(gap - r.distance) <= 1e-12 * std::fmax(1.0, r.distance));
        for (int k = 0; k < 3; ++k) {
            REQUIRE(r.pointA[k] == expected.closest.a[k]);
            REQUIRE(r.pointB[k] == expected.closest.b[k]);
        }
        REQUIRE(r.volumeTests > 0);
    }
}

/// Builds both meshes, validates their trees, and checks every query against the oracle.
void checkPair(const PlyMesh& a, const Transform& ta, const PlyMesh& b, const Transform& tb) {
    MeshDistance engine;
    engine.addMesh(a.positions.data(), static_cast<std::uint32_t>(a.positions.size() / 3), a.indices.data(),
                   triangles(a));
    engine.addMesh(b.positions.data(), static_cast<std::uint32_t>(b.positions.size() / 3), b.indices.data(),
                   triangles(b));
    REQUIRE(engine.tree(0).validate(a.positions.data(), a.indices.data()).empty());
    REQUIRE(engine.tree(1).validate(b.positions.data(), b.indices.data()).empty());
    const OracleDistance expected =
        oracleDistance(OracleMesh{a.positions.data(), a.indices.data(), triangles(a), ta.data(), 0},
                       OracleMesh{b.positions.data(), b.indices.data(), triangles(b), tb.data(), 1});
    checkAgainst(expected, engine, a, ta, b, tb);
}

} // namespace

TEST_CASE("MeshDistance equals the all-pairs oracle on generated meshes from touching to far", "[narrow][distance]") {
    const double origin[3] = {0, 0, 0};
    struct Kind {
        const char* name;
        PlyMesh mesh;
    };
    const Kind kind = GENERATE_COPY(
        Kind{"torus", torusMesh(20, 10, 0.7, 0.25)}, Kind{"sphere", sphereMesh(20, 10, origin, 0.8)},
        Kind{"folded cloth", foldedCloth(12, 0.05, 0.05, 0.3)}, Kind{"triangle soup", triangleSoup(300, 0.15, 5)});
    const double radius = radiusOf(kind.mesh);
    std::mt19937 rng(1234);
    std::normal_distribution<double> g;
    // Centre distances in units of the sum of the radii: overlapping to far apart.
    for (double factor : {0.3, 0.7, 0.95, 1.0, 1.02, 1.3, 3.0}) {
        double direction[3] = {g(rng), g(rng), g(rng)};
        const double n = oracleLength(direction[0], direction[1], direction[2]);
        double t[3];
        for (int k = 0; k < 3; ++k) t[k] = direction[k] / n * factor * 2 * radius;
        const double zero[3] = {0, 0, 0};
        const Transform ta = randomRigid(rng, zero), tb = randomRigid(rng, t);
        INFO(kind.name << " at " << factor << " times the touching distance of the bounding spheres");
        checkPair(kind.mesh, ta, kind.mesh, tb);
    }
}

TEST_CASE("MeshDistance on linked tori, apart and meeting", "[narrow][distance]") {
    const PlyMesh torus = torusMesh(24, 10, 1.0, 0.2);
    const double zero[3] = {0, 0, 0};
    // The second torus, turned into the xz plane and moved along x by `shift`, passes through the
    // first's hole: linked and apart for shifts near 1, meeting as its tube nears the first's.
    for (double shift : {1.0, 1.3, 0.75, 0.05}) {
        const double t[3] = {shift, 0, 0};
        const double s = std::sqrt(0.5);
        const Transform ta = rigid(1, 0, 0, 0, zero), tb = rigid(s, s, 0, 0, t);
        INFO("linked tori, shift " << shift);
        checkPair(torus, ta, torus, tb);
    }
}

TEST_CASE("MeshDistance at huge and tiny scales and large translations", "[narrow][distance]") {
    const PlyMesh unit = torusMesh(16, 8, 0.7, 0.25);
    struct Scale {
        double scale, translation;
    };
    const Scale scale = GENERATE(Scale{1e6, 0}, Scale{1e-6, 0}, Scale{1, 1e5}, Scale{1e-3, 1e3}, Scale{1e6, 1e7});
    const PlyMesh mesh = scaled(unit, scale.scale);
    std::mt19937 rng(99);
    for (double gap : {0.01, 0.3, 2.0}) {
        const double ta3[3] = {scale.translation, -scale.translation, 0.5 * scale.translation};
        const double tb3[3] = {ta3[0] + (1.9 + gap) * scale.scale, ta3[1], ta3[2]};
        const Transform ta = randomRigid(rng, ta3), tb = randomRigid(rng, tb3);
        INFO("scale " << scale.scale << ", translation " << scale.translation << ", gap " << gap);
        checkPair(mesh, ta, mesh, tb);
    }
}

TEST_CASE("MeshDistance on a ccd-frames mesh against a moved copy equals the culled oracle",
          "[narrow][distance][data]") {
    const std::string path = bulletgpu::test::sharedDataDir() + "/ccd-frames/cloth-funnel/frames/227.ply";
    if (!std::ifstream(path).good()) {
        bulletgpu::test::skipTestCase("no real data at " + path + " (set BULLETGPU_DATA_DIR)");
        return;
    }
    const PlyMesh mesh = readPlyMesh(path);
    MeshDistance engine;
    for (int copy = 0; copy < 2; ++copy) {
        engine.addMesh(mesh.positions.data(), static_cast<std::uint32_t>(mesh.positions.size() / 3),
                       mesh.indices.data(), triangles(mesh));
    }
    REQUIRE(engine.tree(0).validate(mesh.positions.data(), mesh.indices.data()).empty());
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (std::size_t v = 0; v < mesh.positions.size(); v += 3) {
        for (int k = 0; k < 3; ++k) {
            lo[k] = std::fmin(lo[k], mesh.positions[v + k]);
            hi[k] = std::fmax(hi[k], mesh.positions[v + k]);
        }
    }
    const double size = std::fmax(hi[0] - lo[0], std::fmax(hi[1] - lo[1], hi[2] - lo[2]));
    std::mt19937 rng(2027);
    const double zero[3] = {0, 0, 0};
    for (double offset : {0.02, 0.3, 1.1}) {
        const double t[3] = {offset * size, 0.1 * size, 0};
        const Transform ta = rigid(1, 0, 0, 0, zero), tb = randomRigid(rng, t);
        const OracleDistance expected =
            oracleDistanceCulled(OracleMesh{mesh.positions.data(), mesh.indices.data(), triangles(mesh), ta.data(), 0},
                                 OracleMesh{mesh.positions.data(), mesh.indices.data(), triangles(mesh), tb.data(), 1});
        INFO("cloth-funnel 227, " << triangles(mesh) << " triangles, offset " << offset);
        checkAgainst(expected, engine, mesh, ta, mesh, tb);
    }
}

TEST_CASE("MeshDistance with an empty mesh, single triangles and more threads", "[narrow][distance]") {
    const std::vector<float> positions = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    const std::vector<std::uint32_t> indices = {0, 1, 2};
    MeshDistance engine;
    const std::uint32_t empty = engine.addMesh(positions.data(), 3, indices.data(), 0);
    const std::uint32_t single = engine.addMesh(positions.data(), 3, indices.data(), 1);
    const DistanceResult none = engine.distance(empty, nullptr, single, nullptr);
    CHECK(std::isinf(none.distance));
    CHECK(none.triangleA == cNoNode);
    CHECK_FALSE(none.intersecting);
    // The same triangle 0.5 above itself, then touching it along an edge.
    const double zero[3] = {0, 0, 0}, up[3] = {0, 0, 0.5}, side[3] = {1, 0, 0};
    const Transform ta = rigid(1, 0, 0, 0, zero);
    for (int threads : {1, 4}) {
        DistanceResult r = engine.distance(single, ta.data(), single, rigid(1, 0, 0, 0, up).data(), {threads, 0});
        CHECK(r.distance == 0.5);
        CHECK_FALSE(r.intersecting);
        CHECK(r.pointB[2] - r.pointA[2] == 0.5);
        r = engine.distance(single, ta.data(), single, rigid(0, 0, 0, 1, side).data(), {threads, 0});
        CHECK(r.intersecting);
        CHECK(r.distance == 0);
    }
}

TEST_CASE("MeshDistance picks its backend: Auto falls back to the CPU, Cuda without a device throws",
          "[narrow][distance]") {
    const CudaDeviceProbe probe = probeCudaDevice(0);
    const MeshDistance automatic(Backend::Auto);
    CHECK(automatic.backend() == (probe.usable ? Backend::Cuda : Backend::Cpu));
    CHECK(MeshDistance(Backend::Cpu).backend() == Backend::Cpu);
    if (!probe.usable) CHECK_THROWS_AS(MeshDistance(Backend::Cuda), std::runtime_error);
}
