// SPDX-License-Identifier: Zlib
// Ropes against cloths in bulletgpu::SoftBodySolver's response (bullet_adapter/
// rope_cloth_contacts.h): a rope dropped onto a cloth pinned at its corners stays on the side it
// came from at every step, slowly and fast enough to cross the cloth within one step, where
// Bullet's default solver (with or without VF_SS contacts) lets it through.
#include "kernels/narrow/ccd/ccd_queries.h"
#include "support/cloth_scene.h"

#include <bulletgpu/SoftBodySolver.h>

#include <catch2/catch.hpp>

#include <memory>
#include <vector>

namespace {

using bulletgpu::SoftBodySolver;
using bulletgpu::SoftCollisionConfig;
using bulletgpu::test::ClothWorld;

/// The positions of `body`'s nodes.
std::vector<btVector3> positionsOf(const btSoftBody& body) {
    std::vector<btVector3> out;
    for (int i = 0; i < body.m_nodes.size(); ++i) out.push_back(body.m_nodes[i].m_x);
    return out;
}

bulletgpu::Vec3d toVec(const btVector3& v) { return bulletgpu::Vec3d{{v.x(), v.y(), v.z()}}; }

/// The rope nodes that pass through a face of `cloth` between two steps, each node and face
/// moving linearly from `ropeBefore`, `clothBefore` to their positions now (vertex-face CCD with
/// no separation, after a swept-box filter): the count of such (node, face) pairs.
int crossings(const btSoftBody& rope, const std::vector<btVector3>& ropeBefore, const btSoftBody& cloth,
              const std::vector<btVector3>& clothBefore) {
    int count = 0;
    for (int i = 0; i < rope.m_nodes.size(); ++i) {
        btVector3 lo = ropeBefore[i], hi = ropeBefore[i];
        lo.setMin(rope.m_nodes[i].m_x);
        hi.setMax(rope.m_nodes[i].m_x);
        for (int f = 0; f < cloth.m_faces.size(); ++f) {
            bulletgpu::Vec3d x0[4], x1[4];
            btVector3 faceLo(BT_LARGE_FLOAT, BT_LARGE_FLOAT, BT_LARGE_FLOAT), faceHi = -faceLo;
            for (int k = 0; k < 3; ++k) {
                const int n = static_cast<int>(cloth.m_faces[f].m_n[k] - &cloth.m_nodes[0]);
                for (const btVector3& at : {clothBefore[n], cloth.m_nodes[n].m_x}) {
                    faceLo.setMin(at);
                    faceHi.setMax(at);
                }
                x0[k + 1] = toVec(clothBefore[n]);
                x1[k + 1] = toVec(cloth.m_nodes[n].m_x);
            }
            // The swept boxes of the node and the face must overlap.
            bool apart = false;
            for (int k = 0; k < 3; ++k) apart = apart || lo[k] > faceHi[k] || faceLo[k] > hi[k];
            if (apart) continue;
            x0[0] = toVec(ropeBefore[i]);
            x1[0] = toVec(rope.m_nodes[i].m_x);
            bulletgpu::CcdResult result;
            bulletgpu::vertexFaceCcd(x0, x1, 0.0, bulletgpu::CcdOptions{}, result);
            if (result.hit) ++count;
        }
    }
    return count;
}

/// Result of one drop.
struct Drop {
    int crossed = 0;                  ///< Rope node and cloth face pairs that met between two steps.
    std::uint64_t projectedPairs = 0; ///< Rope node and cloth face pairs our solver projected.
};

/// Drops a 30-node rope (margin 0.01, mass 0.1) from `height` onto a 14 x 14 cloth (margin 0.02) pinned
/// at its corners at 0.5, for `steps` steps of 1/60 s, with our solver or Bullet's default;
/// VF_SS on both bodies when `vfss`.
Drop dropRope(bool ours, btScalar height, int steps, bool vfss, btScalar ropeMass) {
    SoftCollisionConfig config;
    config.threads = 1;
    auto solver = std::make_unique<SoftBodySolver>(config);
    SoftBodySolver* used = ours ? solver.get() : nullptr;
    ClothWorld world(ours ? std::move(solver) : nullptr);
    btSoftBody* cloth =
        world.addPatch(btVector3(-0.5f, 0.5f, -0.5f), btVector3(0.5f, 0.5f, -0.5f), btVector3(-0.5f, 0.5f, 0.5f),
                       btVector3(0.5f, 0.5f, 0.5f), 14, 1 + 2 + 4 + 8, 0.02f);
    btSoftBody* rope = world.addRope(btVector3(-0.3f, height, 0.02f), btVector3(0.3f, height, -0.04f), 30, 0, 0.01f);
    if (vfss) {
        cloth->m_cfg.collisions |= btSoftBody::fCollision::VF_SS;
        rope->m_cfg.collisions |= btSoftBody::fCollision::VF_SS;
    }
    rope->setTotalMass(ropeMass);
    Drop drop;
    for (int step = 0; step < steps; ++step) {
        const std::vector<btVector3> ropeBefore = positionsOf(*rope), clothBefore = positionsOf(*cloth);
        world.world().stepSimulation(btScalar(1) / 60, 0);
        if (used != nullptr) drop.projectedPairs += used->stats().ropeClothPairs;
        drop.crossed += crossings(*rope, ropeBefore, *cloth, clothBefore);
    }
    return drop;
}

} // namespace

TEST_CASE("A rope dropped on a cloth stays on the side it came from", "[soft][rope]") {
    // From 0.1 m it arrives at 1.4 m/s (2.3 cm a step); from 0.6 m at 3.4 m/s (5.7 cm a step,
    // more than the 1.5 cm the two keep apart: it would cross the cloth within one step). The rope
    // weighs a tenth of the cloth (a rope as heavy as the cloth drags it 0.4 m down into a pocket
    // and still gets through now and then: docs/soft-self-collision.md).
    const btScalar heights[] = {0.6f, 1.1f};
    for (const btScalar height : heights) {
        for (const bool vfss : {false, true}) {
            INFO("dropped from " << height << (vfss ? ", VF_SS on both" : ""));
            const Drop ours = dropRope(true, height, 150, vfss, 0.1f);
            CHECK(ours.projectedPairs > 0);
            CHECK(ours.crossed == 0);
        }
        // The control: Bullet's default solver (no VF_SS, Bullet's default flags) lets the rope
        // through. (With VF_SS on both, Bullet's SContacts hold this light rope too.)
        INFO("dropped from " << height << " in Bullet's default solver");
        CHECK(dropRope(false, height, 150, false, 0.1f).crossed > 0);
    }
}

TEST_CASE("Switching ropeCloth off leaves a rope to fall through a cloth", "[soft][rope]") {
    SoftCollisionConfig config;
    config.threads = 1;
    config.ropeCloth = false;
    auto solver = std::make_unique<SoftBodySolver>(config);
    SoftBodySolver& ours = *solver;
    ClothWorld world(std::move(solver));
    btSoftBody* cloth =
        world.addPatch(btVector3(-0.5f, 0.5f, -0.5f), btVector3(0.5f, 0.5f, -0.5f), btVector3(-0.5f, 0.5f, 0.5f),
                       btVector3(0.5f, 0.5f, 0.5f), 14, 1 + 2 + 4 + 8, 0.02f);
    btSoftBody* rope = world.addRope(btVector3(-0.3f, 0.6f, 0.02f), btVector3(0.3f, 0.6f, -0.04f), 30, 0, 0.01f);
    btScalar lowest = BT_LARGE_FLOAT;
    for (int step = 0; step < 120; ++step) {
        world.world().stepSimulation(btScalar(1) / 60, 0);
        CHECK(ours.stats().ropeClothPairs == 0);
    }
    for (int i = 0; i < rope->m_nodes.size(); ++i) lowest = btMin(lowest, rope->m_nodes[i].m_x.y());
    btScalar clothLowest = BT_LARGE_FLOAT;
    for (int i = 0; i < cloth->m_nodes.size(); ++i) clothLowest = btMin(clothLowest, cloth->m_nodes[i].m_x.y());
    CHECK(lowest < clothLowest);
}
