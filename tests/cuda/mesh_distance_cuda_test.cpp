// SPDX-License-Identifier: Zlib
// The CUDA separation distance against the CPU one (and the all-pairs oracle on small meshes):
// when apart, the same distance, pair and points to the bit; when meeting, both say so with
// distance 0 and a pair that meets. Seeded random placements from overlapping to far, stacked
// parallel sheets (many equal distances), huge and tiny scales with large translations, a tiny
// frontier that forces the retry path, empty and one-triangle meshes, and two 100,000-triangle
// meshes in close proximity ([large], left out of sanitizer runs). Every case skips with a
// warning when no CUDA device is usable.
#include "kernels/common/cuda_device.h"
#include "kernels/narrow/distance/mesh_distance.h"
#include "kernels/reference/brute_force_distance.h"
#include "support/cuda_skip.h"
#include "support/test_skip.h"
#include "tests/support/mesh_generators.h"
#include "tests/support/mesh_measures.h"
#include "tests/support/rigid_transform.h"

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

using namespace bulletgpu;
using bulletgpu::test::cudaDeviceOrSkip;
using bulletgpu::test::radiusOf;
using bulletgpu::test::randomRigid;
using bulletgpu::test::rigid;
using bulletgpu::test::Transform;
using bulletgpu::test::triangles;
using bulletgpu::test::vertices;

namespace {

/// A result in full precision, for failure messages.
std::string describe(const DistanceResult& r) {
    char text[512];
    std::snprintf(text, sizeof text,
                  "distance %.17g, pair (%u, %u), intersecting %d, A (%.17g, %.17g, %.17g), B (%.17g, %.17g, %.17g), "
                  "%llu RSS tests, %llu triangle tests",
                  r.distance, r.triangleA, r.triangleB, r.intersecting ? 1 : 0, r.pointA[0], r.pointA[1], r.pointA[2],
                  r.pointB[0], r.pointB[1], r.pointB[2], static_cast<unsigned long long>(r.volumeTests),
                  static_cast<unsigned long long>(r.triangleTests));
    return text;
}

/// A CPU and a CUDA MeshDistance over the same two meshes (mesh 0 and mesh 1).
struct TwinDistance {
    MeshDistance cpu{Backend::Cpu};
    MeshDistance cuda{Backend::Cuda, 0};
    const PlyMesh& a;
    const PlyMesh& b;

    TwinDistance(const PlyMesh& meshA, const PlyMesh& meshB) : a(meshA), b(meshB) {
        for (const PlyMesh* mesh : {&a, &b}) {
            cpu.addMesh(mesh->positions.data(), vertices(*mesh), mesh->indices.data(), triangles(*mesh));
            cuda.addMesh(mesh->positions.data(), vertices(*mesh), mesh->indices.data(), triangles(*mesh));
        }
    }

    /// Runs the query on both (the CUDA one with `options`) and requires the same answer;
    /// returns the CUDA one.
    DistanceResult check(const Transform& ta, const Transform& tb, const DistanceOptions& options = {}) {
        const DistanceResult onCpu = cpu.distance(0, ta.data(), 1, tb.data(), DistanceOptions{4});
        const DistanceResult onCuda = cuda.distance(0, ta.data(), 1, tb.data(), options);
        INFO("cpu:  " << describe(onCpu) << "\ncuda: " << describe(onCuda));
        REQUIRE(onCuda.intersecting == onCpu.intersecting);
        if (onCuda.intersecting) {
            REQUIRE(onCuda.distance == 0);
            REQUIRE(onCuda.triangleA < triangles(a));
            REQUIRE(onCuda.triangleB < triangles(b));
            const Triangle3d t1 = loadTriangle(a.positions.data(), a.indices.data(), onCuda.triangleA, ta.data());
            const Triangle3d t2 = loadTriangle(b.positions.data(), b.indices.data(), onCuda.triangleB, tb.data());
            REQUIRE(trianglesIntersect(t1, t2));
            return onCuda;
        }
        REQUIRE(onCuda.distance == onCpu.distance);
        REQUIRE(onCuda.triangleA == onCpu.triangleA);
        REQUIRE(onCuda.triangleB == onCpu.triangleB);
        for (int k = 0; k < 3; ++k) {
            REQUIRE(onCuda.pointA[k] == onCpu.pointA[k]);
            REQUIRE(onCuda.pointB[k] == onCpu.pointB[k]);
        }
        REQUIRE(onCuda.volumeTests > 0);
        return onCuda;
    }

    /// check(), and the all-pairs oracle's verdict, distance and pair.
    void checkWithOracle(const Transform& ta, const Transform& tb, const DistanceOptions& options = {}) {
        const DistanceResult r = check(ta, tb, options);
        const OracleDistance expected =
            oracleDistance(OracleMesh{a.positions.data(), a.indices.data(), triangles(a), ta.data(), 0},
                           OracleMesh{b.positions.data(), b.indices.data(), triangles(b), tb.data(), 1});
        INFO("oracle: distance " << expected.distance << ", pair (" << expected.triangleA << ", " << expected.triangleB
                                 << "), intersecting " << expected.intersecting);
        REQUIRE(r.intersecting == expected.intersecting);
        if (r.intersecting) return;
        REQUIRE(r.distance == expected.distance);
        REQUIRE(r.triangleA == expected.triangleA);
        REQUIRE(r.triangleB == expected.triangleB);
    }
};

/// A flat square sheet of n x n quads (2 n^2 triangles) in the xz plane, side 2.
PlyMesh flatSheet(std::uint32_t n) {
    return gridMesh(n, n, false, false, [](double u, double v, double* p) {
        p[0] = 2 * u - 1;
        p[1] = 0;
        p[2] = 2 * v - 1;
    });
}

/// The benchmark's wavy sheet of about 100,000 triangles in the xz plane.
PlyMesh wavySheet(std::uint32_t n) {
    return gridMesh(n, n, false, false, [](double u, double v, double* p) {
        const double x = 2 * u - 1, z = 2 * v - 1;
        p[0] = x;
        p[1] = 0.1 * std::sin(3 * x) * std::cos(2 * z) + 0.05 * std::sin(7 * x + 5 * z);
        p[2] = z;
    });
}

} // namespace

TEST_CASE("CUDA mesh distance equals the CPU and the oracle from overlapping to far", "[cuda][distance]") {
    if (!cudaDeviceOrSkip("CUDA mesh distance test: ")) return;
    const double origin[3] = {0, 0, 0};
    struct Kind {
        const char* name;
        PlyMesh mesh;
    };
    const Kind kind = GENERATE_COPY(
        Kind{"torus", torusMesh(20, 10, 0.7, 0.25)}, Kind{"sphere", sphereMesh(20, 10, origin, 0.8)},
        Kind{"folded cloth", foldedCloth(12, 0.05, 0.05, 0.3)}, Kind{"triangle soup", triangleSoup(300, 0.15, 5)});
    TwinDistance twin(kind.mesh, kind.mesh);
    const double radius = radiusOf(kind.mesh);
    std::mt19937 rng(4321);
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
        twin.checkWithOracle(ta, tb);
    }
}

TEST_CASE("CUDA mesh distance on stacked parallel sheets with many equal pairs", "[cuda][distance]") {
    if (!cudaDeviceOrSkip("CUDA mesh distance test: ")) return;
    // Identical flat sheets stacked along y: every pair of overlapping triangles is at the same
    // distance, so the smallest (triangleA, triangleB) among thousands of equals decides.
    const PlyMesh sheet = flatSheet(24);
    TwinDistance twin(sheet, sheet);
    const double zero[3] = {0, 0, 0};
    const Transform ta = rigid(1, 0, 0, 0, zero);
    for (double gap : {1e-6, 1e-3, 0.25}) {
        for (double slide : {0.0, 0.01}) {
            const double t[3] = {slide, gap, 0.5 * slide};
            INFO("gap " << gap << ", slide " << slide);
            twin.checkWithOracle(ta, rigid(1, 0, 0, 0, t));
        }
    }
    // Crossing each other (the second turned about x, through the first): meeting.
    const double through[3] = {0, 0, 0};
    twin.checkWithOracle(ta, rigid(0.9, 0.3, 0, 0, through));
    // A larger pair of sheets: more equal pairs than the CUDA engine lists (its second pass).
    const PlyMesh large = flatSheet(96);
    TwinDistance larger(large, large);
    const double up[3] = {0, 1e-3, 0};
    larger.check(ta, rigid(1, 0, 0, 0, up));
}

TEST_CASE("CUDA mesh distance retries when a round outgrows its frontier", "[cuda][distance]") {
    if (!cudaDeviceOrSkip("CUDA mesh distance test: ")) return;
    const PlyMesh sheet = flatSheet(32);
    const PlyMesh torus = torusMesh(24, 12, 0.7, 0.25);
    TwinDistance sheets(sheet, sheet), tori(torus, torus);
    const double zero[3] = {0, 0, 0}, up[3] = {0.003, 0.01, 0}, beside[3] = {1.905, 0.1, 0.05};
    const Transform ta = rigid(1, 0, 0, 0, zero);
    for (std::uint64_t limit : {1, 16, 256}) {
        DistanceOptions options;
        options.cudaFrontierLimit = limit;
        INFO("frontier limit " << limit);
        sheets.checkWithOracle(ta, rigid(1, 0, 0, 0, up), options);
        tori.checkWithOracle(ta, rigid(0.95, 0.1, 0.2, 0.1, beside), options);
    }
}

TEST_CASE("CUDA mesh distance at huge and tiny scales and large translations", "[cuda][distance]") {
    if (!cudaDeviceOrSkip("CUDA mesh distance test: ")) return;
    const PlyMesh unit = torusMesh(16, 8, 0.7, 0.25);
    struct Scale {
        double scale, translation;
    };
    const Scale scale = GENERATE(Scale{1e6, 0}, Scale{1e-6, 0}, Scale{1, 1e5}, Scale{1e-3, 1e3}, Scale{1e6, 1e7});
    PlyMesh mesh = unit;
    for (float& x : mesh.positions) x = static_cast<float>(x * scale.scale);
    TwinDistance twin(mesh, mesh);
    std::mt19937 rng(77);
    for (double gap : {0.01, 0.3, 2.0}) {
        const double ta3[3] = {scale.translation, -scale.translation, 0.5 * scale.translation};
        const double tb3[3] = {ta3[0] + (1.9 + gap) * scale.scale, ta3[1], ta3[2]};
        const Transform ta = randomRigid(rng, ta3), tb = randomRigid(rng, tb3);
        INFO("scale " << scale.scale << ", translation " << scale.translation << ", gap " << gap);
        twin.checkWithOracle(ta, tb);
    }
}

TEST_CASE("CUDA mesh distance with empty and one-triangle meshes", "[cuda][distance]") {
    if (!cudaDeviceOrSkip("CUDA mesh distance test: ")) return;
    const std::vector<float> positions = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    const std::vector<std::uint32_t> indices = {0, 1, 2};
    MeshDistance cuda(Backend::Cuda, 0);
    const std::uint32_t empty = cuda.addMesh(positions.data(), 3, indices.data(), 0);
    const std::uint32_t single = cuda.addMesh(positions.data(), 3, indices.data(), 1);
    REQUIRE(cuda.backend() == Backend::Cuda);
    const DistanceResult none = cuda.distance(empty, nullptr, single, nullptr);
    CHECK(std::isinf(none.distance));
    CHECK(none.triangleA == cNoNode);
    CHECK_FALSE(none.intersecting);
    const double zero[3] = {0, 0, 0}, up[3] = {0, 0, 0.5}, side[3] = {1, 0, 0};
    const Transform ta = rigid(1, 0, 0, 0, zero);
    DistanceResult r = cuda.distance(single, ta.data(), single, rigid(1, 0, 0, 0, up).data());
    INFO(describe(r));
    CHECK(r.distance == 0.5);
    CHECK_FALSE(r.intersecting);
    CHECK(r.triangleA == 0);
    CHECK(r.triangleB == 0);
    CHECK(r.pointB[2] - r.pointA[2] == 0.5);
    // The same triangle turned half a turn about z and moved along x: touching along an edge.
    r = cuda.distance(single, ta.data(), single, rigid(0, 0, 0, 1, side).data());
    INFO(describe(r));
    CHECK(r.intersecting);
    CHECK(r.distance == 0);
    // One triangle against a torus, near and far.
    const PlyMesh torus = torusMesh(20, 10, 0.7, 0.25);
    const PlyMesh triangle{positions, indices, {}};
    TwinDistance twin(triangle, torus);
    for (double x : {0.96, 1.5, 30.0}) {
        const double t[3] = {x, 0, 0};
        twin.checkWithOracle(ta, rigid(1, 0.2, 0.1, 0, t));
    }
}

TEST_CASE("CUDA mesh distance between two 100,000-triangle meshes in close proximity", "[cuda][distance][large]") {
    if (!cudaDeviceOrSkip("CUDA mesh distance test: ")) return;
    // The benchmark's meshes: a torus beside its copy (aligned and turned), a wavy sheet stacked
    // on its copy, and the torus through its copy turned about their common centre (meeting).
    const PlyMesh torus = torusMesh(250, 200, 1.0, 0.35);
    const PlyMesh sheet = wavySheet(225);
    TwinDistance tori(torus, torus), sheets(sheet, sheet);
    const double zero[3] = {0, 0, 0};
    const Transform identity = rigid(1, 0, 0, 0, zero);
    const double beside[3] = {2.7 + 2e-3, 0, 0}, turnedBeside[3] = {2.75, 0.01, 0}, through[3] = {0, 0, 0};
    const double stacked[3] = {0, 0.02, 0};
    tori.check(identity, rigid(1, 0, 0, 0, beside));
    tori.check(identity, rigid(0.9, 0.3, 0.2, 0.1, turnedBeside));
    sheets.check(identity, rigid(1, 0, 0, 0, stacked));
    const DistanceResult meet = tori.check(identity, rigid(0.9, 0.3, 0.2, 0.1, through));
    CHECK(meet.intersecting);
}
