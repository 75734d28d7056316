// SPDX-License-Identifier: Zlib
// Soft bodies' faces as engine meshes (bullet_adapter/soft_body_meshes.h): a body made again at
// the address of a removed one, with other faces, gets its own mesh; the meshes of bodies that
// stopped coming are freed, however many come and go.
#include "bullet_adapter/soft_body_meshes.h"

#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyHelpers.h>

#include <catch2/catch.hpp>

#include <memory>
#include <new>
#include <set>
#include <vector>

namespace {

/// A unit square of four nodes at z = 0, (0,0) (1,0) (1,1) (0,1), built in `storage`, split into
/// two faces along the diagonal from node 0 when `fromZero`, else along the one from node 1.
btSoftBody* squareIn(void* storage, btSoftBodyWorldInfo& info, bool fromZero) {
    const btVector3 x[4] = {btVector3(0, 0, 0), btVector3(1, 0, 0), btVector3(1, 1, 0), btVector3(0, 1, 0)};
    const btScalar m[4] = {1, 1, 1, 1};
    btSoftBody* body = new (storage) btSoftBody(&info, 4, x, m);
    if (fromZero) {
        body->appendFace(0, 1, 2);
        body->appendFace(0, 2, 3);
    } else {
        body->appendFace(0, 1, 3);
        body->appendFace(1, 2, 3);
    }
    return body;
}

/// The triangles of `mesh` within 0.01 of (0.9, 0.7, 0.001).
std::set<std::uint32_t> trianglesNearProbe(bulletgpu::SoftBodyMeshes& meshes, std::uint32_t mesh) {
    const float probe[3] = {0.9f, 0.7f, 0.001f};
    std::vector<bulletgpu::PointContact> contacts;
    meshes.set().findPointContacts(probe, 1, mesh, 0.01, contacts);
    std::set<std::uint32_t> out;
    for (const bulletgpu::PointContact& c : contacts) out.insert(c.triangle);
    return out;
}

} // namespace

TEST_CASE("A soft body made at a removed one's address with other faces gets its own engine mesh", "[soft]") {
    btSoftBodyWorldInfo info;
    alignas(16) static unsigned char storage[sizeof(btSoftBody)];
    bulletgpu::SoftBodyMeshes meshes(bulletgpu::Backend::Cpu, 1);

    btSoftBody* first = squareIn(storage, info, true);
    meshes.beginPass();
    const std::uint32_t mesh = meshes.meshOf(*first);
    CHECK(meshes.meshOf(*first) == mesh);
    CHECK(meshes.bodyOf(mesh) == first);
    CHECK(trianglesNearProbe(meshes, mesh) == std::set<std::uint32_t>{0});
    meshes.beginPass();
    first->m_nodes[2].m_x.setZ(btScalar(0.5)); // Moved, same faces: the same mesh, where the nodes are.
    CHECK(meshes.meshOf(*first) == mesh);
    CHECK(meshes.meshCount() == 1);
    CHECK(trianglesNearProbe(meshes, mesh).empty());
    first->~btSoftBody();

    btSoftBody* second = squareIn(storage, info, false); // Same address, same counts, other faces.
    REQUIRE(second == first);
    meshes.beginPass();
    const std::uint32_t remade = meshes.meshOf(*second);
    CHECK(remade != mesh);
    CHECK(meshes.bodyOf(remade) == second);
    CHECK(trianglesNearProbe(meshes, remade) == std::set<std::uint32_t>{1});
    second->~btSoftBody();
}

TEST_CASE("The engine meshes of soft bodies that come and go stay bounded", "[soft]") {
    btSoftBodyWorldInfo info;
    const auto patch = [&](int n) {
        return std::unique_ptr<btSoftBody>(btSoftBodyHelpers::CreatePatch(
            info, btVector3(0, 0, 0), btVector3(1, 0, 0), btVector3(0, 0, 1), btVector3(1, 0, 1), n, n, 0, true));
    };
    bulletgpu::SoftBodyMeshes meshes(bulletgpu::Backend::Cpu, 1);
    const auto kept = patch(4);
    const std::size_t bound =
        2 * (bulletgpu::SoftBodyMeshes::cStalePasses + 2) + bulletgpu::SoftBodyMeshes::cSpareMeshes;
    std::uint32_t most = 0, made = 0;
    std::unique_ptr<btSoftBody> passing;
    for (int i = 0; i < 1000; ++i) { // A new cloth each pass, gone the next (a spawner's).
        meshes.beginPass();
        passing = patch(3 + i % 7); // Made before the last one goes: its own mesh.
        const std::uint32_t mesh = meshes.meshOf(*kept);
        REQUIRE(meshes.bodyOf(mesh) == kept.get());
        const std::uint32_t before = meshes.meshCount();
        meshes.meshOf(*passing);
        made += meshes.meshCount() > before;
        most = std::max(most, meshes.meshCount());
    }
    passing.reset();
    INFO("engine meshes made " << made << ", most held at once " << most << ", bound " << bound);
    CHECK(made > bound);
    CHECK(most <= bound);
    for (std::uint64_t i = 0; i <= bulletgpu::SoftBodyMeshes::cStalePasses + 1; ++i) {
        meshes.beginPass();
        meshes.meshOf(*kept);
    }
    CHECK(meshes.meshCount() <= 1 + bulletgpu::SoftBodyMeshes::cSpareMeshes);
    CHECK(meshes.bodyOf(meshes.meshOf(*kept)) == kept.get());
}
