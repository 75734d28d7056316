// SPDX-License-Identifier: Zlib
// Soft bodies against a thin closed triangle mesh (bulletgpu::SoftBodySolver's contacts with rigid
// meshes): a node over a part thinner than the contact reach lies straight behind the far side's
// faces too, and must not be taken for a node inside the mesh.
#include "support/cloth_scene.h"
#include "support/mesh_arrays.h"

#include <bulletgpu/SoftBodySolver.h>

#include <BulletCollision/CollisionShapes/btBvhTriangleMeshShape.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>

namespace {

using bulletgpu::SoftBodySolver;
using bulletgpu::SoftCollisionConfig;
using bulletgpu::test::ClothWorld;
using bulletgpu::test::MeshArrays;

/// Half extents and height of the plate (m): 1 m square, 4 cm thick (thinner than the reach of a
/// node's contacts: the cloth's margin, the mesh's and the node's move over a step).
constexpr btScalar cHalfWidth = 0.5f, cHalfThickness = 0.02f, cPlateHeight = 0.5f;

/// A closed box of the plate's half extents centred at the origin, wound outward.
std::unique_ptr<MeshArrays> plateArrays() {
    auto m = std::make_unique<MeshArrays>();
    for (int i = 0; i < 8; ++i)
        m->addVertex(i & 1 ? cHalfWidth : -cHalfWidth, i & 2 ? cHalfThickness : -cHalfThickness,
                     i & 4 ? cHalfWidth : -cHalfWidth);
    // Two triangles per face, counter-clockwise seen from outside.
    m->indices = {0, 1, 5, 0, 5, 4, 2, 6, 7, 2, 7, 3, 0, 4, 6, 0, 6, 2,
                  1, 3, 7, 1, 7, 5, 0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6};
    m->wrap();
    return m;
}

/// What a drop saw.
struct Drop {
    double worstStretch = 0; ///< Largest link length over its rest length, any step.
    int stepsInside = 0;     ///< Steps after which some node was inside the plate.
    double meanHeight = 0;   ///< Mean node height at the end.
};

/// Drops a 12 x 12 cloth (1.6 m square, margin 0.03) from 1 m onto the plate, 200 steps.
Drop dropOnPlate(std::unique_ptr<SoftBodySolver> solver) {
    const std::unique_ptr<MeshArrays> arrays = plateArrays();
    btBvhTriangleMeshShape shape(arrays->array.get(), true);
    ClothWorld world(std::move(solver));
    btCollisionObject plate;
    plate.setCollisionShape(&shape);
    btTransform at;
    at.setIdentity();
    at.setOrigin(btVector3(0, cPlateHeight, 0));
    plate.setWorldTransform(at);
    world.world().addCollisionObject(&plate);
    btSoftBody* cloth = world.addPatch(btVector3(-0.8f, 1, -0.8f), btVector3(0.8f, 1, -0.8f), btVector3(-0.8f, 1, 0.8f),
                                       btVector3(0.8f, 1, 0.8f), 12, 0, 0.03f);
    Drop out;
    for (int step = 1; step <= 200; ++step) {
        world.world().stepSimulation(btScalar(1) / 60, 0);
        bool inside = false;
        for (int n = 0; n < cloth->m_nodes.size(); ++n) {
            const btVector3 x = cloth->m_nodes[n].m_x - at.getOrigin();
            inside = inside || (std::fabs(x.x()) < cHalfWidth && std::fabs(x.y()) < cHalfThickness &&
                                std::fabs(x.z()) < cHalfWidth);
        }
        out.stepsInside += inside ? 1 : 0;
        for (int l = 0; l < cloth->m_links.size(); ++l) {
            const btSoftBody::Link& link = cloth->m_links[l];
            out.worstStretch =
                std::max(out.worstStretch, double((link.m_n[0]->m_x - link.m_n[1]->m_x).length() / link.m_rl));
        }
    }
    for (int n = 0; n < cloth->m_nodes.size(); ++n) out.meanHeight += cloth->m_nodes[n].m_x.y() / cloth->m_nodes.size();
    world.world().removeCollisionObject(&plate);
    return out;
}

} // namespace

TEST_CASE("A cloth dropped on a thin closed plate drapes over it, unstretched and never inside", "[soft][mesh]") {
    SoftCollisionConfig config;
    config.threads = 1;
    config.logBackendChoice = false;
    const Drop ours = dropOnPlate(std::make_unique<SoftBodySolver>(config));
    INFO("ours: worst stretch " << ours.worstStretch << ", steps with a node inside " << ours.stepsInside
                                << ", mean height " << ours.meanHeight);
    CHECK(ours.stepsInside == 0);
    CHECK(ours.worstStretch < 1.5);
    CHECK(ours.meanHeight > 0.3); // on the plate, its edges hanging (the ground is at 0)
}
