// SPDX-License-Identifier: Zlib
// The CUDA contact query (TriangleMeshSet::findProximity) against the CPU: the same sorted
// contacts, byte for byte, over a folding cloth's frames, rigid pairs far from the origin,
// welded seams, degenerate, empty and one-triangle meshes, batches, and the real ccd-frames
// meshes, at several distances including 0. A difference is reported with the counts and the
// first differing contact. Every case skips when no CUDA device is usable.
#include "kernels/common/cuda_device.h"
#include "kernels/narrow/geometry/proximity_contact.h"
#include "support/mesh_transforms.h"
#include "support/cuda_skip.h"
#include "support/test_skip.h"
#include "tests/support/ccd_frame_scenes.h"
#include "tests/support/mesh_generators.h"
#include "tests/support/ply_mesh.h"

#include <bulletgpu/TriangleMeshSet.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace bulletgpu;
using bulletgpu::test::cCcdFrameSceneCount;
using bulletgpu::test::cCcdFrameScenes;
using bulletgpu::test::CcdFrameScene;
using bulletgpu::test::cudaDeviceOrSkip;
using bulletgpu::test::loadCcdFramesOrSkip;
using test::rigidTransform;
using test::uprightTransform;

namespace {

/// One contact in full, floats as hexadecimal (exact) and decimal.
std::string describe(const ProximityContact& c) {
    std::ostringstream out;
    out << "meshA " << c.meshA << " meshB " << c.meshB << " kind " << c.kind << " featureA " << c.featureA
        << " featureB " << c.featureB;
    const auto triple = [&out](const char* name, const float* v) {
        out << ' ' << name << " (" << std::hexfloat << v[0] << ", " << v[1] << ", " << v[2] << std::defaultfloat
            << " = " << v[0] << ", " << v[1] << ", " << v[2] << ")";
    };
    triple("pointA", c.pointA);
    triple("pointB", c.pointB);
    triple("normal", c.normal);
    out << " distance " << std::hexfloat << c.distance << std::defaultfloat << " = " << c.distance << " reserved "
        << c.reserved;
    return out.str();
}

/// The first contact of `x` whose key (meshA, meshB, kind, featureA, featureB) is not in `y`
/// (both sorted by proximityBefore), or "none".
std::string firstMissing(const std::vector<ProximityContact>& x, const std::vector<ProximityContact>& y) {
    for (const ProximityContact& c : x) {
        if (!std::binary_search(y.begin(), y.end(), c, proximityBefore)) return describe(c);
    }
    return "none";
}

/// Requires identical contact arrays, byte for byte; on a difference, says where and how.
void requireSameContacts(const std::vector<ProximityContact>& cpu, const std::vector<ProximityContact>& cuda) {
    const bool same = cpu.size() == cuda.size() &&
                      (cpu.empty() || std::memcmp(cpu.data(), cuda.data(), cpu.size() * sizeof(ProximityContact)) == 0);
    if (same) {
        SUCCEED("identical: " << cpu.size() << " contacts");
        return;
    }
    std::ostringstream report;
    report << "CPU " << cpu.size() << " contacts, CUDA " << cuda.size() << "\n";
    const std::size_t common = std::min(cpu.size(), cuda.size());
    for (std::size_t i = 0; i < common; ++i) {
        if (std::memcmp(&cpu[i], &cuda[i], sizeof(ProximityContact)) != 0) {
            report << "first difference at " << i << ":\n  CPU  " << describe(cpu[i]) << "\n  CUDA "
                   << describe(cuda[i]) << "\n";
            break;
        }
    }
    report << "first CPU contact missing on CUDA: " << firstMissing(cpu, cuda) << "\n";
    report << "first CUDA contact missing on CPU: " << firstMissing(cuda, cpu) << "\n";
    report << "CUDA sorted: " << (std::is_sorted(cuda.begin(), cuda.end(), proximityBefore) ? "yes" : "no");
    FAIL(report.str());
}

/// One point contact in full, floats as hexadecimal (exact).
std::string describe(const PointContact& c) {
    std::ostringstream out;
    out << std::hexfloat << "point " << c.point << " triangle " << c.triangle << " onMesh (" << c.onMesh[0] << ", "
        << c.onMesh[1] << ", " << c.onMesh[2] << ") normal (" << c.normal[0] << ", " << c.normal[1] << ", "
        << c.normal[2] << ") distance " << c.distance << " reserved " << c.reserved;
    return out.str();
}

/// Requires identical point-contact arrays, byte for byte; on a difference, says where and how.
void requireSamePointContacts(const std::vector<PointContact>& cpu, const std::vector<PointContact>& cuda) {
    const bool same = cpu.size() == cuda.size() &&
                      (cpu.empty() || std::memcmp(cpu.data(), cuda.data(), cpu.size() * sizeof(PointContact)) == 0);
    if (same) {
        SUCCEED("identical: " << cpu.size() << " point contacts");
        return;
    }
    std::ostringstream report;
    report << "CPU " << cpu.size() << " point contacts, CUDA " << cuda.size() << "\n";
    for (std::size_t i = 0; i < std::min(cpu.size(), cuda.size()); ++i) {
        if (std::memcmp(&cpu[i], &cuda[i], sizeof(PointContact)) != 0) {
            report << "first difference at " << i << ":\n  CPU  " << describe(cpu[i]) << "\n  CUDA "
                   << describe(cuda[i]);
            break;
        }
    }
    FAIL(report.str());
}

/// A CPU set and a CUDA set over the same meshes, with the same traversal.
struct TwinSets {
    TriangleMeshSet cpu{Backend::Cpu, 2};
    TriangleMeshSet cuda{Backend::Cuda, 0};

    explicit TwinSets(NarrowTraversal traversal = NarrowTraversal::LeafWalk) {
        cpu.setTraversal(traversal);
        cuda.setTraversal(traversal);
    }
    std::uint32_t add(const PlyMesh& mesh) {
        const auto vertices = static_cast<std::uint32_t>(mesh.positions.size() / 3);
        const auto triangles = static_cast<std::uint32_t>(mesh.indices.size() / 3);
        cpu.addMesh(mesh.positions.data(), vertices, mesh.indices.data(), triangles);
        return cuda.addMesh(mesh.positions.data(), vertices, mesh.indices.data(), triangles);
    }
    void setPositions(std::uint32_t index, const PlyMesh& mesh) {
        cpu.setPositions(index, mesh.positions.data());
        cuda.setPositions(index, mesh.positions.data());
    }
    void setTransform(std::uint32_t index, const std::vector<double>& transform) {
        cpu.setTransform(index, transform.data());
        cuda.setTransform(index, transform.data());
    }
    /// The points-against-mesh query on both; requires identical contacts.
    std::vector<PointContact> runPoints(const std::vector<float>& points, std::uint32_t mesh, double distance) {
        std::vector<PointContact> onCpu, onCuda;
        const auto count = static_cast<std::uint32_t>(points.size() / 3);
        cpu.findPointContacts(points.data(), count, mesh, distance, onCpu);
        cuda.findPointContacts(points.data(), count, mesh, distance, onCuda);
        INFO(count << " points against mesh " << mesh << ", distance " << distance);
        requireSamePointContacts(onCpu, onCuda);
        REQUIRE(cuda.stats().contacts == onCuda.size());
        return onCuda;
    }
    /// Runs the batch on both; requires identical contacts; returns them.
    std::vector<ProximityContact> run(const std::vector<MeshPairQuery>& queries, const ProximityOptions& options) {
        std::vector<ProximityContact> onCpu, onCuda;
        const auto count = static_cast<std::uint32_t>(queries.size());
        cpu.findProximity(queries.data(), count, options, onCpu);
        cuda.findProximity(queries.data(), count, options, onCuda);
        INFO("distance " << options.distance << ", excludeWelded " << options.excludeWelded << ", " << count
                         << " queries");
        requireSameContacts(onCpu, onCuda);
        REQUIRE(cuda.stats().contacts == onCuda.size());
        return onCuda;
    }
    /// The self query of `mesh` on both, through findSelfProximity; requires identical contacts.
    std::vector<ProximityContact> runSelf(std::uint32_t mesh, const ProximityOptions& options) {
        std::vector<ProximityContact> onCpu, onCuda;
        cpu.findSelfProximity(mesh, options, onCpu);
        cuda.findSelfProximity(mesh, options, onCuda);
        INFO("self query of mesh " << mesh << ", distance " << options.distance << ", excludeWelded "
                                   << options.excludeWelded);
        requireSameContacts(onCpu, onCuda);
        return onCuda;
    }
    /// The pair query of two meshes on both, through findPairProximity; requires identical contacts.
    std::vector<ProximityContact> runPair(std::uint32_t a, std::uint32_t b, const ProximityOptions& options) {
        std::vector<ProximityContact> onCpu, onCuda;
        cpu.findPairProximity(a, b, options, onCpu);
        cuda.findPairProximity(a, b, options, onCuda);
        INFO("pair query of meshes " << a << ", " << b << ", distance " << options.distance);
        requireSameContacts(onCpu, onCuda);
        return onCuda;
    }
};

/// A mesh of the given positions and indices.
PlyMesh meshOf(std::vector<float> positions, std::vector<std::uint32_t> indices) {
    PlyMesh mesh;
    mesh.positions = std::move(positions);
    mesh.indices = std::move(indices);
    return mesh;
}

} // namespace

TEST_CASE("CUDA contact query equals the CPU over frames of a folding cloth", "[cuda][proximity]") {
    if (!cudaDeviceOrSkip("contact-query CUDA test: ")) return;
    const NarrowTraversal traversal = GENERATE(NarrowTraversal::LeafWalk, NarrowTraversal::Fronts);
    const double distance = GENERATE(0.0, 0.004, 0.03);
    TwinSets sets(traversal);
    PlyMesh cloth = foldedCloth(32, 0.02, 0.06, 0.0);
    const std::uint32_t mesh = sets.add(cloth);
    std::size_t total = 0;
    for (int frame = 0; frame < 12; ++frame) {
        if (frame > 0) {
            cloth = foldedCloth(32, 0.02, 0.06 * (1 + 0.5 * std::sin(0.3 * frame)), 0.4 * frame);
            sets.setPositions(mesh, cloth);
        }
        if (frame == 6) {
            sets.cpu.requestRebuild(mesh);
            sets.cuda.requestRebuild(mesh);
        }
        INFO("frame " << frame);
        total += sets.runSelf(mesh, ProximityOptions{distance, false}).size();
        // The intersection query between contact queries (it may restructure the shared trees).
        if (frame % 4 == 3) {
            std::vector<TriangleContact> cpu, cuda;
            sets.cpu.findSelfContacts(mesh, cpu);
            sets.cuda.findSelfContacts(mesh, cuda);
            REQUIRE(cpu.size() == cuda.size());
        }
    }
    CHECK(total > 100);
}

TEST_CASE("CUDA contact query equals the CPU on rigid pairs far from the origin", "[cuda][proximity]") {
    if (!cudaDeviceOrSkip("contact-query CUDA test: ")) return;
    const double distance = GENERATE(0.0, 0.01, 0.08);
    TwinSets sets;
    const PlyMesh torus = torusMesh(32, 12, 1.0, 0.45);
    const double centre[3] = {0, 0, 0};
    const PlyMesh ball = sphereMesh(24, 12, centre, 0.3);
    const PlyMesh cloth = dentedCloth(24, 0.35, 0.05);
    const std::uint32_t a = sets.add(torus), b = sets.add(torus), ballIndex = sets.add(ball),
                        clothIndex = sets.add(cloth);
    std::size_t total = 0;
    for (int frame = 0; frame < 8; ++frame) {
        // Far from the origin (1000 and more): the grown boxes' allowance and the float rounding
        // of the transformed corners matter there.
        sets.setTransform(a, rigidTransform(0.05 * frame, 1000, -2000, 500));
        sets.setTransform(b, rigidTransform(1.5707963 + 0.1 * frame, 1001.2 + 0.01 * frame, -2000, 500.1));
        sets.setTransform(ballIndex, uprightTransform(0.2 * frame, -0.6 + 0.05 * frame));
        INFO("frame " << frame);
        total += sets.runPair(a, b, ProximityOptions{distance, false}).size();
        total += sets.runPair(ballIndex, clothIndex, ProximityOptions{distance, false}).size();
        total += sets.runPair(clothIndex, ballIndex, ProximityOptions{distance, false}).size();
        // A self query of a mesh with a transform runs in its own frame.
        total += sets.runSelf(a, ProximityOptions{distance, false}).size();
    }
    CHECK(total > 0);
}

TEST_CASE("CUDA contact query excludes welded seams as the CPU", "[cuda][proximity]") {
    if (!cudaDeviceOrSkip("contact-query CUDA test: ")) return;
    const bool excludeWelded = GENERATE(true, false);
    TwinSets sets;
    PlyMesh sphere = seamSphere(10, 0.2, 0.0);
    const std::uint32_t mesh = sets.add(sphere);
    const double edge = meanEdge(sphere);
    for (int frame = 0; frame < 4; ++frame) {
        if (frame > 0) {
            sphere = seamSphere(10, 0.2 + 0.1 * frame, 0.7 * frame);
            sets.setPositions(mesh, sphere);
        }
        INFO("frame " << frame);
        for (const double fraction : {0.0, 0.01, 0.2}) {
            const std::vector<ProximityContact> contacts =
                sets.runSelf(mesh, ProximityOptions{fraction * edge, excludeWelded});
            // The seams' duplicated vertices touch: reported unless excluded.
            if (!excludeWelded) CHECK(!contacts.empty());
        }
    }
}

TEST_CASE("CUDA contact query equals the CPU on degenerate, empty and one-triangle meshes", "[cuda][proximity]") {
    if (!cudaDeviceOrSkip("contact-query CUDA test: ")) return;
    const double distance = GENERATE(0.0, 0.05, 0.5);
    TwinSets sets;
    // Collinear corners, a repeated index, a triangle collapsed to a point, and a sound one
    // crossing them.
    const PlyMesh degenerate =
        meshOf({0.2f,   0.3f, 0.01f, 0.6f,   0.3f, 0.01f, 0.4f,  0.3f, 0.01f, 0.5f, 0.5f, -0.02f, 0.5f, 0.5f,
                -0.02f, 0.5f, 0.5f,  -0.02f, 0.3f, 0.2f,  -0.3f, 0.5f, 0.4f,  0.4f, 0.2f, 0.5f,   0.3f},
               {0, 1, 2, 0, 0, 3, 3, 4, 5, 6, 7, 8, 1, 3, 2});
    const PlyMesh empty;
    const PlyMesh one = triangleSoup(1, 0.3, 5);
    const PlyMesh soup = triangleSoup(300, 0.15, 7);
    const std::uint32_t d = sets.add(degenerate), e = sets.add(empty), o = sets.add(one), s = sets.add(soup);
    const std::uint32_t o2 = sets.add(one);
    for (const std::uint32_t mesh : {d, e, o, s}) sets.runSelf(mesh, ProximityOptions{distance, false});
    sets.runSelf(d, ProximityOptions{distance, true});
    sets.runPair(d, s, ProximityOptions{distance, false});
    sets.runPair(e, s, ProximityOptions{distance, false});
    sets.runPair(s, e, ProximityOptions{distance, false});
    sets.runPair(o, o2, ProximityOptions{distance, false});
    sets.runPair(o, s, ProximityOptions{distance, false});
}

TEST_CASE("CUDA contact query equals the CPU on a batch, in mesh-pair order", "[cuda][proximity]") {
    if (!cudaDeviceOrSkip("contact-query CUDA test: ")) return;
    TwinSets sets(NarrowTraversal::Fronts);
    const PlyMesh cloth = foldedCloth(16, 0.02, 0.06, 0.2);
    const PlyMesh torus = torusMesh(16, 8, 0.3, 0.08);
    const PlyMesh empty;
    const std::uint32_t c = sets.add(cloth), t0 = sets.add(torus), t1 = sets.add(torus), t2 = sets.add(torus),
                        e = sets.add(empty);
    // Enough queries for the CPU to run them one per thread; given out of order.
    const std::vector<MeshPairQuery> queries = {{t2, c}, {c, c},   {t0, t1}, {e, c}, {t1, c},
                                                {c, t0}, {t0, t0}, {t1, t2}, {e, e}, {t2, t2}};
    const double distance = GENERATE(0.0, 0.02);
    std::size_t total = 0;
    for (int frame = 0; frame < 4; ++frame) {
        sets.setTransform(t0, rigidTransform(0.1 * frame, 0.2, 0.05, 0));
        sets.setTransform(t1, rigidTransform(0.3, -0.2 + 0.02 * frame, 0.0, 0.1));
        sets.setTransform(t2, uprightTransform(0.2 * frame, 0.3));
        INFO("frame " << frame);
        total += sets.run(queries, ProximityOptions{distance, frame % 2 == 1}).size();
    }
    CHECK(total > 0);
}

TEST_CASE("CUDA contact query equals the CPU on the ccd-frames meshes", "[cuda][proximity][data]") {
    if (!cudaDeviceOrSkip("contact-query CUDA test: ")) return;
    const CcdFrameScene& scene = cCcdFrameScenes[GENERATE(range(std::size_t{0}, cCcdFrameSceneCount))];
    PlyMesh frames[2];
    if (!loadCcdFramesOrSkip(scene, frames)) return;
    const double edge = meanEdge(frames[0]);
    TwinSets sets;
    const std::uint32_t mesh = sets.add(frames[0]);
    // The first query, then a refit to the next frame; welds excluded at the benchmark's 1%.
    for (int step = 0; step < 2; ++step) {
        if (step > 0) sets.setPositions(mesh, frames[1]);
        for (const double fraction : {0.0, 0.01, 0.05}) {
            INFO(scene.name << " step " << step << ", " << fraction << " of the mean edge");
            sets.runSelf(mesh, ProximityOptions{fraction * edge, false});
        }
        INFO(scene.name << " step " << step << ", welds excluded");
        sets.runSelf(mesh, ProximityOptions{0.01 * edge, true});
    }
}

TEST_CASE("CUDA points against a mesh equal the CPU", "[cuda][proximity]") {
    if (!cudaDeviceOrSkip("contact-query CUDA test: ")) return;
    const double distance = GENERATE(0.0, 0.05, 0.3);
    TwinSets sets;
    const double centre[3] = {0, 0, 0};
    PlyMesh ball = sphereMesh(16, 10, centre, 0.5);
    const PlyMesh empty;
    const std::uint32_t b = sets.add(ball), e = sets.add(empty);
    // Points around the ball and on its vertices (contacts at distance 0), placed far from the
    // origin as the transformed ball is.
    const float offset[3] = {1000, -500, 250};
    std::vector<float> local;
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> around(-0.7f, 0.7f);
    for (int i = 0; i < 3 * 1500; ++i) local.push_back(around(rng));
    local.insert(local.end(), ball.positions.begin(), ball.positions.begin() + 3 * 40);
    std::vector<float> far = local;
    for (std::size_t i = 0; i < far.size(); ++i) far[i] += offset[i % 3];
    std::size_t total = 0;
    for (int frame = 0; frame < 4; ++frame) {
        INFO("frame " << frame);
        sets.setTransform(b, rigidTransform(0.3 * frame, offset[0], offset[1] + 0.01 * frame, offset[2]));
        total += sets.runPoints(far, b, distance).size();
        // Deformed and without a transform: the own frame.
        ball = sphereMesh(16, 10, centre, 0.5 + 0.02 * frame);
        sets.setPositions(b, ball);
        sets.cpu.setTransform(b, nullptr);
        sets.cuda.setTransform(b, nullptr);
        total += sets.runPoints(local, b, distance).size();
    }
    CHECK(total > 0);
    sets.runPoints(local, e, distance);
    sets.runPoints({}, b, distance);
}
