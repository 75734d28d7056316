// SPDX-License-Identifier: Zlib
// Rigid mesh vertices against soft bodies' faces (SoftCollisionConfig::meshFaceContacts): a cloth
// dropped on the apex of a thin spike, under the middle of a face (between nodes, where no node
// contact reaches it) or right under a node.
#include "support/cloth_scene.h"
#include "support/mesh_arrays.h"

#include <bulletgpu/SoftBodySolver.h>

#include <BulletCollision/CollisionShapes/btBvhTriangleMeshShape.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

namespace {

using bulletgpu::SoftBodySolver;
using bulletgpu::SoftCollisionConfig;
using bulletgpu::test::ClothWorld;
using bulletgpu::test::MeshArrays;

/// A spike's apex 0.4 m over the ground under a cloth face (the cloth's nodes lie on a 0.1 m grid
/// through +-0.05; the nearest node is 0.045 from the apex, the face's diagonals 0.009 and 0.026).
const btVector3 cUnderFace(0.025f, 0.4f, -0.012f);
/// A spike's apex right under a node.
const btVector3 cUnderNode(0.05f, 0.4f, 0.05f);
/// Half width of the spike's square base on the ground.
constexpr btScalar cBaseHalfWidth = 0.03f;

/// The cloth's height over `apex`: along the vertical through it, the face crossing it nearest
/// to the apex, its height there minus the apex's (negative: the apex is through the cloth);
/// false when no face crosses that vertical.
bool clothOverApex(const btSoftBody& cloth, const btVector3& apex, btScalar& gap) {
    bool found = false;
    for (int f = 0; f < cloth.m_faces.size(); ++f) {
        const btVector3 a = cloth.m_faces[f].m_n[0]->m_x, b = cloth.m_faces[f].m_n[1]->m_x,
                        c = cloth.m_faces[f].m_n[2]->m_x;
        // Barycentric weights of the apex's xz in the face's xz projection.
        const btScalar det = (b.x() - a.x()) * (c.z() - a.z()) - (c.x() - a.x()) * (b.z() - a.z());
        if (!(std::fabs(det) > 1e-12f)) continue;
        const btScalar u = ((apex.x() - a.x()) * (c.z() - a.z()) - (c.x() - a.x()) * (apex.z() - a.z())) / det;
        const btScalar v = ((b.x() - a.x()) * (apex.z() - a.z()) - (apex.x() - a.x()) * (b.z() - a.z())) / det;
        if (u < 0 || v < 0 || u + v > 1) continue;
        const btScalar height = a.y() + u * (b.y() - a.y()) + v * (c.y() - a.y()) - apex.y();
        if (!found || std::fabs(height) < std::fabs(gap)) gap = height;
        found = true;
    }
    return found;
}

/// What a drop saw.
struct Drop {
    int stepsThrough = 0;       ///< Steps after which the apex was through the cloth.
    int stepsCovered = 0;       ///< Steps after which a face crossed the vertical through the apex.
    double smallestGap = 1e9;   ///< Smallest cloth height over the apex (negative: through), any step.
    double worstStretch = 0;    ///< Largest link length over its rest length, any step.
    bool finite = true;         ///< Every node position finite after every step.
    std::uint64_t contacts = 0; ///< Face RContacts (SoftMeshStats::faceContacts), summed over the steps.
    std::uint64_t pushes = 0;   ///< Face pushes (SoftMeshStats::facePushes), summed over the steps.
    double meanHeight = 0;      ///< Mean node height at the end.
};

/// Drops a 12 x 12 cloth (1.1 m square, nodes 0.1 apart, margin 0.02) from 5 cm over a spike's
/// `apex`, 200 steps at 60 Hz.
Drop dropOnSpike(const btVector3& apex, bool meshFaceContacts) {
    SoftCollisionConfig config;
    config.threads = 1;
    config.logBackendChoice = false;
    config.meshFaceContacts = meshFaceContacts;
    auto owned = std::make_unique<SoftBodySolver>(config);
    SoftBodySolver* solver = owned.get();
    const std::unique_ptr<MeshArrays> arrays =
        bulletgpu::test::pyramidArrays(apex.x(), apex.y(), apex.z(), cBaseHalfWidth);
    btBvhTriangleMeshShape shape(arrays->array.get(), true);
    ClothWorld world(std::move(owned));
    btRigidBody spike(btRigidBody::btRigidBodyConstructionInfo(0, nullptr, &shape));
    world.world().addRigidBody(&spike);
    const btScalar y = apex.y() + 0.05f, h = 0.55f;
    btSoftBody* cloth = world.addPatch(btVector3(-h, y, -h), btVector3(h, y, -h), btVector3(-h, y, h),
                                       btVector3(h, y, h), 12, 0, 0.02f);
    Drop out;
    for (int step = 1; step <= 200; ++step) {
        world.world().stepSimulation(btScalar(1) / 60, 0);
        out.contacts += solver->meshStats().faceContacts;
        out.pushes += solver->meshStats().facePushes;
        for (int n = 0; n < cloth->m_nodes.size(); ++n) {
            const btVector3& x = cloth->m_nodes[n].m_x;
            out.finite = out.finite && std::isfinite(x.x()) && std::isfinite(x.y()) && std::isfinite(x.z());
        }
        btScalar gap = 0;
        if (clothOverApex(*cloth, apex, gap)) {
            ++out.stepsCovered;
            out.stepsThrough += gap < 0 ? 1 : 0;
            out.smallestGap = std::min(out.smallestGap, double(gap));
        }
        for (int l = 0; l < cloth->m_links.size(); ++l) {
            const btSoftBody::Link& link = cloth->m_links[l];
            out.worstStretch =
                std::max(out.worstStretch, double((link.m_n[0]->m_x - link.m_n[1]->m_x).length() / link.m_rl));
        }
    }
    for (int n = 0; n < cloth->m_nodes.size(); ++n) out.meanHeight += cloth->m_nodes[n].m_x.y() / cloth->m_nodes.size();
    world.world().removeRigidBody(&spike);
    return out;
}

} // namespace

TEST_CASE("A spike's apex stays under a cloth dropped on it, between nodes or under one", "[soft][mesh][face]") {
    const auto [name, apex] =
        GENERATE(std::make_pair("under a face", cUnderFace), std::make_pair("under a node", cUnderNode));
    const Drop ours = dropOnSpike(apex, true);
    const Drop control = dropOnSpike(apex, false);
    INFO("apex " << name);
    INFO("ours: " << ours.stepsThrough << " of " << ours.stepsCovered << " covered steps through, smallest gap "
                  << ours.smallestGap << ", worst stretch " << ours.worstStretch << ", face contacts " << ours.contacts
                  << ", face pushes " << ours.pushes << ", mean height " << ours.meanHeight);
    INFO("node contacts only: " << control.stepsThrough << " of " << control.stepsCovered
                                << " covered steps through, smallest gap " << control.smallestGap << ", worst stretch "
                                << control.worstStretch << ", mean height " << control.meanHeight);
    CHECK(ours.finite);
    CHECK(ours.stepsCovered == 200);
    CHECK(ours.stepsThrough == 0);
    CHECK(ours.contacts > 0);
    CHECK(ours.worstStretch < 2);
    // The control: without the vertex-face contacts the apex comes through the cloth.
    CHECK(control.finite);
    CHECK(control.stepsThrough > 0);
}
