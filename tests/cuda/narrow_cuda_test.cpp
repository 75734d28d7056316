// SPDX-License-Identifier: Zlib
// The CUDA narrow phase against the CPU: byte-identical trees (the same Morton codes, stable
// sorts and layout), and byte-identical contacts and fronts over animations, batches with
// rigid transforms, edge cases and the real ccd-frames meshes. Every case skips with a warning
// when no CUDA device is usable.
#include "kernels/common/cuda_device.h"
#include "kernels/narrow/engine/triangle_mesh_set.h"
#include "kernels/reference/brute_force_triangles.h"
#include "support/mesh_transforms.h"
#include "support/cuda_skip.h"
#include "support/test_skip.h"
#include "tests/support/ccd_frame_scenes.h"
#include "tests/support/mesh_generators.h"
#include "tests/support/ply_mesh.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
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

/// Identical arrays, byte for byte.
template <typename T>
bool sameBytes(const std::vector<T>& x, const std::vector<T>& y) {
    return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0);
}

/// A CPU set and a CUDA set over the same meshes, with the same traversal.
struct TwinSets {
    TriangleMeshSet cpu{Backend::Cpu, 2};
    TriangleMeshSet cuda{Backend::Cuda, 0};

    explicit TwinSets(NarrowTraversal traversal) {
        cpu.setTraversal(traversal);
        cuda.setTraversal(traversal);
    }
    std::uint32_t add(const PlyMesh& mesh) {
        const auto vertices = static_cast<std::uint32_t>(mesh.positions.size() / 3);
        const auto triangles = static_cast<std::uint32_t>(mesh.indices.size() / 3);
        cpu.addMesh(mesh.positions.data(), vertices, mesh.indices.data(), triangles);
        return cuda.addMesh(mesh.positions.data(), vertices, mesh.indices.data(), triangles);
    }
    void setBoundingVolume(std::uint32_t index, BoundingVolume volume) {
        cpu.setBoundingVolume(index, volume);
        cuda.setBoundingVolume(index, volume);
    }
    void setPositions(std::uint32_t index, const PlyMesh& mesh) {
        cpu.setPositions(index, mesh.positions.data());
        cuda.setPositions(index, mesh.positions.data());
    }
    void setTransform(std::uint32_t index, const std::vector<double>& transform) {
        cpu.setTransform(index, transform.data());
        cuda.setTransform(index, transform.data());
    }
    /// Runs the batch on both; requires identical contacts, counters and trees; returns them.
    std::vector<TriangleContact> run(const std::vector<MeshPairQuery>& queries) {
        std::vector<TriangleContact> onCpu, onCuda;
        const auto count = static_cast<std::uint32_t>(queries.size());
        cpu.findContacts(queries.data(), count, onCpu);
        cuda.findContacts(queries.data(), count, onCuda);
        REQUIRE(onCpu.size() == onCuda.size());
        REQUIRE(sameBytes(onCpu, onCuda));
        REQUIRE(cpu.stats().frontEntries == cuda.stats().frontEntries);
        REQUIRE(cpu.stats().triangleTests == cuda.stats().triangleTests);
        REQUIRE(cpu.stats().frontsGenerated == cuda.stats().frontsGenerated);
        REQUIRE(cpu.stats().rebuilt == cuda.stats().rebuilt);
        REQUIRE(cpu.stats().rebuildsScheduled == cuda.stats().rebuildsScheduled);
        REQUIRE(cpu.stats().restructuresScheduled == cuda.stats().restructuresScheduled);
        REQUIRE(cpu.stats().subtreesRestructured == cuda.stats().subtreesRestructured);
        REQUIRE(cpu.stats().leavesRestructured == cuda.stats().leavesRestructured);
        for (const MeshPairQuery& q : queries) {
            for (std::uint32_t mesh : {q.meshA, q.meshB}) {
                const TreeSnapshot x = detail::implOf(cpu).treeSnapshot(mesh),
                                   y = detail::implOf(cuda).treeSnapshot(mesh);
                REQUIRE(sameBytes(x.nodes, y.nodes));
                REQUIRE(sameBytes(x.escape, y.escape));
                REQUIRE(sameBytes(x.leaves, y.leaves));
                REQUIRE(sameBytes(x.obbs, y.obbs));
            }
        }
        return onCuda;
    }
};

} // namespace

TEST_CASE("CUDA narrow phase equals the CPU over 100 frames of a folding cloth", "[cuda][narrow]") {
    if (!cudaDeviceOrSkip("narrow-phase CUDA test: ")) return;
    const NarrowTraversal traversal = GENERATE(NarrowTraversal::Fronts, NarrowTraversal::LeafWalk);
    const BoundingVolume volume = GENERATE(BoundingVolume::Aabb, BoundingVolume::Obb);
    TwinSets sets(traversal);
    REQUIRE(sets.cuda.backend() == Backend::Cuda);
    PlyMesh cloth = foldedCloth(40, 0.02, 0.06, 0.0);
    const std::uint32_t mesh = sets.add(cloth);
    sets.setBoundingVolume(mesh, volume);
    std::size_t total = 0;
    for (int frame = 0; frame < 100; ++frame) {
        cloth = foldedCloth(40, 0.02, 0.06 * (1 + 0.5 * std::sin(0.05 * frame)), 0.08 * frame);
        sets.setPositions(mesh, cloth);
        if (frame == 50) {
            sets.cpu.requestRebuild(mesh);
            sets.cuda.requestRebuild(mesh);
        }
        total += sets.run({{mesh, mesh}}).size();
    }
    CHECK(total > 1000);
}

TEST_CASE("CUDA narrow phase rebuilds degraded trees on the same queries as the CPU", "[cuda][narrow]") {
    if (!cudaDeviceOrSkip("narrow-phase CUDA test: ")) return;
    const NarrowTraversal traversal = GENERATE(NarrowTraversal::Fronts, NarrowTraversal::LeafWalk);
    TwinSets sets(traversal);
    const std::uint32_t count = 20000;
    PlyMesh soup = driftingSoup(count, 0.04, 3, 0.02, 0);
    const std::uint32_t mesh = sets.add(soup);
    std::uint32_t rebuilds = 0;
    for (int frame = 0; frame < 60; ++frame) {
        soup = driftingSoup(count, 0.04, 3, 0.02, frame);
        sets.setPositions(mesh, soup);
        sets.run({{mesh, mesh}});
        if (frame > 0) rebuilds += sets.cuda.stats().rebuilt;
    }
    CHECK(rebuilds >= 2);
}

TEST_CASE("CUDA narrow phase restructures the same subtrees as the CPU", "[cuda][narrow]") {
    if (!cudaDeviceOrSkip("narrow-phase CUDA test: ")) return;
    const NarrowTraversal traversal = GENERATE(NarrowTraversal::Fronts, NarrowTraversal::LeafWalk);
    const BoundingVolume volume = GENERATE(BoundingVolume::Aabb, BoundingVolume::Obb);
    TwinSets sets(traversal);
    // Only the corner [-1, 0]^3 drifts: its subtrees degrade and are rebuilt in place.
    const std::uint32_t count = 20000;
    PlyMesh soup = driftingSoup(count, 0.04, 5, 0.03, 0, 0.0);
    const std::uint32_t mesh = sets.add(soup);
    sets.setBoundingVolume(mesh, volume);
    std::uint32_t restructured = 0;
    for (int frame = 0; frame < 60; ++frame) {
        soup = driftingSoup(count, 0.04, 5, 0.03, frame, 0.0);
        sets.setPositions(mesh, soup);
        sets.run({{mesh, mesh}});
        restructured += sets.cuda.stats().subtreesRestructured;
    }
    CHECK(restructured >= 2);
}

TEST_CASE("CUDA narrow phase equals the CPU on a batch of moving rigid and deforming meshes", "[cuda][narrow]") {
    if (!cudaDeviceOrSkip("narrow-phase CUDA test: ")) return;
    TwinSets sets(NarrowTraversal::Fronts);
    const PlyMesh torus = torusMesh(48, 16, 1.0, 0.55);
    const double centre[3] = {0, 0, 0};
    const PlyMesh ball = sphereMesh(32, 16, centre, 0.3);
    PlyMesh cloth = dentedCloth(40, 0.35, 0.05);
    const PlyMesh empty;
    const PlyMesh one = triangleSoup(1, 0.1, 1);
    const std::uint32_t a = sets.add(torus), b = sets.add(torus), ballIndex = sets.add(ball),
                        clothIndex = sets.add(cloth), e = sets.add(empty), o = sets.add(one);
    // OBBs on the tori, the cloth and the lone triangle: pairs of OBB meshes and mixed pairs.
    if (GENERATE(false, true)) {
        for (const std::uint32_t mesh : {a, b, clothIndex, o}) sets.setBoundingVolume(mesh, BoundingVolume::Obb);
    }
    const std::vector<MeshPairQuery> queries = {
        {a, b}, {ballIndex, clothIndex}, {clothIndex, clothIndex}, {a, a}, {e, e},
        {o, o}, {e, clothIndex},         {o, clothIndex}};
    std::size_t total = 0;
    for (int frame = 0; frame < 60; ++frame) {
        sets.setTransform(a, rigidTransform(0.03 * frame, 0, 0, 0));
        sets.setTransform(b, uprightTransform(1.5707963 + 0.2 * std::sin(0.1 * frame), 1.0 + 0.003 * frame));
        sets.setTransform(ballIndex, rigidTransform(0.0, -0.6 + 0.02 * frame, 0.28 - 0.002 * frame, 0.1));
        cloth = dentedCloth(40, 0.35, 0.05 + 0.001 * frame);
        sets.setPositions(clothIndex, cloth);
        total += sets.run(queries).size();
    }
    CHECK(total > 1000);
}

TEST_CASE("CUDA narrow phase equals the CPU on triangle soup of many sizes", "[cuda][narrow]") {
    if (!cudaDeviceOrSkip("narrow-phase CUDA test: ")) return;
    const std::uint32_t count = GENERATE(2u, 3u, 17u, 1000u, 70000u);
    TwinSets sets(NarrowTraversal::Fronts);
    const PlyMesh soup = triangleSoup(count, 0.6 / std::cbrt(static_cast<double>(count)), count);
    const std::uint32_t mesh = sets.add(soup);
    const std::vector<TriangleContact> contacts = sets.run({{mesh, mesh}});
    if (count <= 1000) {
        const OracleMesh oracle{soup.positions.data(), soup.indices.data(), count, nullptr, mesh};
        REQUIRE(sameBytes(contacts, bruteForceContacts(oracle, nullptr)));
    }
}

TEST_CASE("CUDA narrow phase equals the CPU on the ccd-frames meshes", "[cuda][narrow][data]") {
    if (!cudaDeviceOrSkip("narrow-phase CUDA test: ")) return;
    const CcdFrameScene& scene = cCcdFrameScenes[GENERATE(range(std::size_t{0}, cCcdFrameSceneCount))];
    PlyMesh frames[2];
    if (!loadCcdFramesOrSkip(scene, frames)) return;
    TwinSets sets(NarrowTraversal::Fronts);
    const std::uint32_t mesh = sets.add(frames[0]);
    for (int step = 0; step < 4; ++step) {
        sets.setPositions(mesh, frames[step % 2]);
        const std::vector<TriangleContact> contacts = sets.run({{mesh, mesh}});
        INFO(scene.name << " step " << step << ": " << contacts.size() << " contacts");
        if (step < 2) {
            const PlyMesh& frame = frames[step % 2];
            const OracleMesh oracle{frame.positions.data(), frame.indices.data(),
                                    static_cast<std::uint32_t>(frame.indices.size() / 3), nullptr, mesh};
            REQUIRE(sameBytes(contacts, sweptContacts(oracle, nullptr)));
        }
    }
}

TEST_CASE("CUDA narrow phase without a device", "[cuda][narrow]") {
    if (probeCudaDevice(0).usable) {
        REQUIRE(TriangleMeshSet(Backend::Auto, 0).backend() == Backend::Cuda);
        return;
    }
    REQUIRE(TriangleMeshSet(Backend::Auto, 0).backend() == Backend::Cpu);
    REQUIRE_THROWS_AS(TriangleMeshSet(Backend::Cuda, 0), std::runtime_error);
}
