// SPDX-License-Identifier: Zlib
// Node-face contacts between two soft bodies (VF_SS) from the engine's pair query
// (bullet_adapter/soft_soft_contacts.h) against Bullet's own CollideVF_SS on frozen states: two
// cloths lying over each other, the upper one waved so that some of its nodes are within the
// margins of the lower one's faces and some are not; a rope waved over a cloth (its nodes against
// the cloth's faces, the points-against-mesh query).
#include "bullet_adapter/soft_soft_contacts.h"
#include "support/cloth_scene.h"

#include <bulletgpu/SoftBodySolver.h>

#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyHelpers.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <vector>

namespace {

/// A contact as a comparable record: node and face indices, then every field Bullet fills.
using Record = std::tuple<int, int, btScalar, btScalar, btScalar, btScalar, btScalar, btScalar, btScalar, btScalar,
                          btScalar, btScalar>;

/// The contacts in `body`'s m_scontacts, keyed by (node, face) of `faces`' faces.
std::map<std::pair<int, int>, Record> recordsOf(const btSoftBody& body, const btSoftBody& faces) {
    std::map<std::pair<int, int>, Record> out;
    for (int i = 0; i < body.m_scontacts.size(); ++i) {
        const btSoftBody::SContact& c = body.m_scontacts[i];
        const int node = static_cast<int>(c.m_node - &body.m_nodes[0]);
        const int face = static_cast<int>(c.m_face - &faces.m_faces[0]);
        out[{node, face}] = Record{node,
                                   face,
                                   c.m_normal.x(),
                                   c.m_normal.y(),
                                   c.m_normal.z(),
                                   c.m_weights.x(),
                                   c.m_weights.y(),
                                   c.m_weights.z(),
                                   c.m_margin,
                                   c.m_friction,
                                   c.m_cfm[0],
                                   c.m_cfm[1]};
    }
    return out;
}

/// A cloth of `n` x `n` nodes, `size` wide, at height `y`, shifted by (dx, dz), with margin
/// `margin`, its heights waved by `wave`, and VF_SS collisions.
btSoftBody* makeCloth(btSoftBodyWorldInfo& info, int n, btScalar size, btScalar y, btScalar dx, btScalar dz,
                      btScalar margin, btScalar wave) {
    const btScalar h = size / 2;
    btSoftBody* body =
        btSoftBodyHelpers::CreatePatch(info, btVector3(dx - h, y, dz - h), btVector3(dx + h, y, dz - h),
                                       btVector3(dx - h, y, dz + h), btVector3(dx + h, y, dz + h), n, n, 0, true);
    body->getCollisionShape()->setMargin(margin);
    body->m_cfg.collisions |= btSoftBody::fCollision::VF_SS;
    body->setTotalMass(1);
    for (int i = 0; i < body->m_nodes.size(); ++i) {
        btVector3& x = body->m_nodes[i].m_x;
        x.setY(x.y() + wave * std::sin(7 * x.x()) * std::cos(5 * x.z() + 0.3f));
    }
    // Frozen: m_q = m_x, trees and bounds at the positions (no gravity, no velocity).
    body->predictMotion(btScalar(1e-4));
    return body;
}

} // namespace

TEST_CASE("Soft-soft node-face contacts equal Bullet's CollideVF_SS on frozen cloths", "[soft][vfss]") {
    const btScalar waves[] = {0.01f, 0.02f, 0.04f};
    for (const btScalar wave : waves) {
        btSoftBodyWorldInfo info;
        info.m_gravity.setZero();
        info.m_sparsesdf.Initialize();
        std::unique_ptr<btSoftBody> lower(makeCloth(info, 20, 1.0f, 0, 0, 0, 0.02f, 0));
        std::unique_ptr<btSoftBody> upper(makeCloth(info, 17, 0.8f, 0.03f, 0.031f, 0.017f, 0.015f, wave));
        lower->setMass(0, 0); // A pinned node: contacts with its faces put all the move on the other side.
        lower->setMass(21, 0);
        REQUIRE(bulletgpu::isVertexFacePair(lower.get(), upper.get()));

        lower->defaultCollisionHandler(upper.get());
        const auto bulletLower = recordsOf(*lower, *upper), bulletUpper = recordsOf(*upper, *lower);
        lower->m_scontacts.resize(0);
        upper->m_scontacts.resize(0);

        bulletgpu::SoftSoftContacts contacts(bulletgpu::Backend::Cpu, 1);
        contacts.gather(upper.get(), lower.get());
        contacts.generate();
        const auto oursLower = recordsOf(*lower, *upper), oursUpper = recordsOf(*upper, *lower);

        INFO("wave " << wave << ": Bullet " << bulletLower.size() << " + " << bulletUpper.size() << " contacts, ours "
                     << oursLower.size() << " + " << oursUpper.size());
        CHECK(bulletLower.size() + bulletUpper.size() > 0);
        std::set<int> touching; // Some of the upper cloth's nodes are in contact, some are not.
        for (const auto& entry : bulletUpper) touching.insert(entry.first.first);
        CHECK(touching.size() > 0);
        CHECK(touching.size() < static_cast<std::size_t>(upper->m_nodes.size()));
        CHECK(oursLower == bulletLower);
        CHECK(oursUpper == bulletUpper);
        CHECK(contacts.contactCount() == bulletLower.size() + bulletUpper.size());
    }
}

/// A rope of `links` links from x = -0.4 to 0.4 at height `y`, with margin `margin`, its heights
/// waved by `wave`, VF_SS collisions, frozen as makeCloth's.
btSoftBody* makeRope(btSoftBodyWorldInfo& info, int links, btScalar y, btScalar margin, btScalar wave) {
    btSoftBody* rope =
        btSoftBodyHelpers::CreateRope(info, btVector3(-0.4f, y, 0.013f), btVector3(0.4f, y, -0.021f), links - 1, 0);
    rope->getCollisionShape()->setMargin(margin);
    rope->m_cfg.collisions |= btSoftBody::fCollision::VF_SS;
    rope->setTotalMass(1);
    for (int i = 0; i < rope->m_nodes.size(); ++i) {
        btVector3& x = rope->m_nodes[i].m_x;
        x.setY(x.y() + wave * std::sin(11 * x.x() + 0.2f));
    }
    rope->predictMotion(btScalar(1e-4));
    return rope;
}

TEST_CASE("A rope's nodes against a cloth's faces equal Bullet's CollideVF_SS", "[soft][vfss]") {
    const btScalar waves[] = {0.015f, 0.03f};
    for (const btScalar wave : waves) {
        btSoftBodyWorldInfo info;
        info.m_gravity.setZero();
        info.m_sparsesdf.Initialize();
        std::unique_ptr<btSoftBody> cloth(makeCloth(info, 20, 1.0f, 0, 0, 0, 0.02f, 0));
        std::unique_ptr<btSoftBody> rope(makeRope(info, 60, 0.025f, 0.01f, wave));
        cloth->setMass(0, 0);
        REQUIRE(bulletgpu::isVertexFacePair(cloth.get(), rope.get()));
        REQUIRE(bulletgpu::isVertexFacePair(rope.get(), cloth.get()));

        cloth->defaultCollisionHandler(rope.get());
        const auto bulletRope = recordsOf(*rope, *cloth);
        CHECK(cloth->m_scontacts.size() == 0); // A rope has no faces for the cloth's nodes.
        rope->m_scontacts.resize(0);

        bulletgpu::SoftSoftContacts contacts(bulletgpu::Backend::Cpu, 1);
        contacts.gather(rope.get(), cloth.get());
        contacts.generate();
        const auto oursRope = recordsOf(*rope, *cloth);

        INFO("wave " << wave << ": Bullet " << bulletRope.size() << " contacts, ours " << oursRope.size());
        std::set<int> touching; // Some of the rope's nodes are in contact, some are not.
        for (const auto& entry : bulletRope) touching.insert(entry.first.first);
        CHECK(touching.size() > 0);
        CHECK(touching.size() < static_cast<std::size_t>(rope->m_nodes.size()));
        CHECK(oursRope == bulletRope);
        CHECK(cloth->m_scontacts.size() == 0);
        CHECK(contacts.contactCount() == bulletRope.size());
    }
}

TEST_CASE("A rope node with a non-finite position meets no face", "[soft][vfss]") {
    btSoftBodyWorldInfo info;
    info.m_gravity.setZero();
    info.m_sparsesdf.Initialize();
    std::unique_ptr<btSoftBody> cloth(makeCloth(info, 8, 1.0f, 0, 0, 0, 0.02f, 0));
    std::unique_ptr<btSoftBody> rope(makeRope(info, 20, 0.01f, 0.01f, 0));
    rope->m_nodes[3].m_x.setX(std::numeric_limits<btScalar>::quiet_NaN());
    rope->m_nodes[4].m_x.setY(std::numeric_limits<btScalar>::infinity());
    bulletgpu::SoftSoftContacts contacts(bulletgpu::Backend::Cpu, 1);
    contacts.gather(cloth.get(), rope.get());
    REQUIRE_NOTHROW(contacts.generate());
    const auto ours = recordsOf(*rope, *cloth);
    CHECK(ours.size() > 0);
    for (const auto& entry : ours) {
        CHECK(entry.first.first != 3);
        CHECK(entry.first.first != 4);
    }
}

TEST_CASE("Soft-soft contacts skip two ropes and the same body", "[soft][vfss]") {
    btSoftBodyWorldInfo info;
    info.m_sparsesdf.Initialize();
    std::unique_ptr<btSoftBody> cloth(makeCloth(info, 4, 1.0f, 0, 0, 0, 0.02f, 0));
    std::unique_ptr<btSoftBody> rope(btSoftBodyHelpers::CreateRope(info, btVector3(0, 0, 0), btVector3(1, 0, 0), 4, 0));
    std::unique_ptr<btSoftBody> other(
        btSoftBodyHelpers::CreateRope(info, btVector3(0, 0, 0), btVector3(0, 0, 1), 4, 0));
    rope->m_cfg.collisions |= btSoftBody::fCollision::VF_SS;
    other->m_cfg.collisions |= btSoftBody::fCollision::VF_SS;
    CHECK_FALSE(bulletgpu::isVertexFacePair(cloth.get(), cloth.get()));
    CHECK_FALSE(bulletgpu::isVertexFacePair(rope.get(), other.get()));
    CHECK(bulletgpu::isVertexFacePair(cloth.get(), rope.get()));
    rope->m_cfg.collisions &= ~btSoftBody::fCollision::VF_SS;
    CHECK_FALSE(bulletgpu::isVertexFacePair(cloth.get(), rope.get()));
}

TEST_CASE("Soft-soft contacts reach each body in world order, whatever the bodies' addresses", "[soft][vfss]") {
    // Three stacked cloths, each within the margins of the next; their world indices run against
    // their addresses (the highest address first), so an order by address would put each body's
    // contacts against a later body before those against an earlier one.
    btSoftBodyWorldInfo info;
    info.m_gravity.setZero();
    info.m_sparsesdf.Initialize();
    std::vector<std::unique_ptr<btSoftBody>> cloths;
    for (int k = 0; k < 3; ++k)
        cloths.emplace_back(makeCloth(info, 12 - k, 1.0f - 0.1f * k, 0.03f * k, 0.01f * k, 0.02f * k, 0.02f, 0));
    std::vector<btSoftBody*> byAddress;
    for (const auto& c : cloths) byAddress.push_back(c.get());
    std::sort(byAddress.begin(), byAddress.end(), std::greater<>());
    for (int i = 0; i < 3; ++i) byAddress[i]->setWorldArrayIndex(i);

    const auto partnersOf = [&](const btSoftBody& body) { // World index of each contact's face body.
        std::vector<int> out;
        for (int i = 0; i < body.m_scontacts.size(); ++i)
            for (const auto& c : cloths)
                if (c->m_faces.size() > 0 && body.m_scontacts[i].m_face >= &c->m_faces[0] &&
                    body.m_scontacts[i].m_face < &c->m_faces[0] + c->m_faces.size())
                    out.push_back(c->getWorldArrayIndex());
        return out;
    };
    bulletgpu::SoftSoftContacts contacts(bulletgpu::Backend::Cpu, 1);
    std::vector<std::vector<int>> first;
    for (int round = 0; round < 2; ++round) { // The gather order does not matter either.
        for (const auto& c : cloths) c->m_scontacts.resize(0);
        for (int a = 0; a < 3; ++a)
            for (int b = a + 1; b < 3; ++b)
                round == 0 ? contacts.gather(cloths[a].get(), cloths[b].get())
                           : contacts.gather(cloths[2 - a].get(), cloths[2 - b].get());
        contacts.generate();
        std::vector<std::vector<int>> partners;
        for (const auto& c : cloths) partners.push_back(partnersOf(*c));
        INFO("round " << round << ", middle cloth's world index " << cloths[1]->getWorldArrayIndex());
        CHECK(partners[1].size() == static_cast<std::size_t>(cloths[1]->m_scontacts.size()));
        CHECK(std::set<int>(partners[1].begin(), partners[1].end()).size() == 2); // Both neighbours.
        for (const auto& p : partners) CHECK(std::is_sorted(p.begin(), p.end()));
        if (round == 0) first = partners;
        CHECK(partners == first);
    }
}

TEST_CASE("A cloth falling on another in the world gets its soft-soft contacts from the engine", "[soft][vfss]") {
    bulletgpu::SoftCollisionConfig config;
    config.threads = 1;
    auto solver = std::make_unique<bulletgpu::SoftBodySolver>(config);
    bulletgpu::SoftBodySolver& ours = *solver;
    bulletgpu::test::ClothWorld world(std::move(solver));
    btSoftBody* lower = world.addPatch(btVector3(-0.5f, 0.05f, -0.5f), btVector3(0.5f, 0.05f, -0.5f),
                                       btVector3(-0.5f, 0.05f, 0.5f), btVector3(0.5f, 0.05f, 0.5f), 12, 0, 0.02f);
    btSoftBody* upper = world.addPatch(btVector3(-0.4f, 0.3f, -0.4f), btVector3(0.4f, 0.3f, -0.4f),
                                       btVector3(-0.4f, 0.3f, 0.4f), btVector3(0.4f, 0.3f, 0.4f), 10, 0, 0.02f);
    lower->m_cfg.collisions |= btSoftBody::fCollision::VF_SS;
    upper->m_cfg.collisions |= btSoftBody::fCollision::VF_SS;
    std::uint64_t contacts = 0;
    for (int step = 0; step < 120; ++step) {
        world.world().stepSimulation(btScalar(1) / 60, 0);
        contacts += ours.meshStats().softContacts;
    }
    CHECK(contacts > 0);
    for (int i = 0; i < upper->m_nodes.size(); ++i) CHECK(std::isfinite(upper->m_nodes[i].m_x.y()));
}

namespace {

/// A cloth pinned at its corners and a rope above it, in a world with our solver (its own
/// self-collision stages off, so that only the soft-soft contacts differ from Bullet's) or
/// Bullet's default one; the rope collides node against face when `ropeVfss`.
struct RopeOverCloth {
    bulletgpu::SoftBodySolver* ours = nullptr;
    std::unique_ptr<bulletgpu::test::ClothWorld> world;
    btSoftBody* cloth = nullptr;
    btSoftBody* rope = nullptr;

    RopeOverCloth(bool withOurs, bool ropeVfss) {
        bulletgpu::SoftCollisionConfig config;
        config.threads = 1;
        config.selfCollision = false;
        auto solver = std::make_unique<bulletgpu::SoftBodySolver>(config);
        if (withOurs) ours = solver.get();
        world = std::make_unique<bulletgpu::test::ClothWorld>(withOurs ? std::move(solver) : nullptr);
        cloth = world->addPatch(btVector3(-0.5f, 0.5f, -0.5f), btVector3(0.5f, 0.5f, -0.5f),
                                btVector3(-0.5f, 0.5f, 0.5f), btVector3(0.5f, 0.5f, 0.5f), 14, 1 + 2 + 4 + 8, 0.02f);
        rope = world->addRope(btVector3(-0.3f, 0.6f, 0.02f), btVector3(0.3f, 0.6f, -0.04f), 30, 0, 0.01f);
        cloth->m_cfg.collisions |= btSoftBody::fCollision::VF_SS;
        if (ropeVfss) rope->m_cfg.collisions |= btSoftBody::fCollision::VF_SS;
    }
    void step() { world->world().stepSimulation(btScalar(1) / 60, 0); }
};

} // namespace

TEST_CASE("A rope falling on a cloth gets Bullet's node-face contacts from the engine", "[soft][vfss]") {
    RopeOverCloth ours(true, true), bullet(false, true), control(true, false);
    int firstContact = -1;
    std::uint64_t engineContacts = 0, controlContacts = 0;
    for (int step = 0; step < 90; ++step) {
        ours.step();
        bullet.step();
        control.step();
        engineContacts += ours.ours->meshStats().softContacts;
        controlContacts += control.ours->meshStats().softContacts + control.rope->m_scontacts.size();
        // Until the first contacts the two worlds are the same, so the first contacts must be too
        // (Bullet leaves the last step's contacts in m_scontacts): every one of Bullet's, equal;
        // ours may hold more, as Bullet's node and face trees hold the boxes of the start of the
        // step, so that its walk misses nodes that moved into a face's margin (each extra one
        // passed Bullet's own test, CollideVF_SS::Process).
        if (firstContact < 0) {
            const auto oursNow = recordsOf(*ours.rope, *ours.cloth), bulletNow = recordsOf(*bullet.rope, *bullet.cloth);
            INFO("step " << step << ": ours " << oursNow.size() << ", Bullet " << bulletNow.size());
            for (const auto& [key, record] : bulletNow) {
                INFO("rope node " << key.first << ", cloth face " << key.second);
                const auto it = oursNow.find(key);
                REQUIRE(it != oursNow.end());
                CHECK(it->second == record);
            }
            if (!bulletNow.empty()) firstContact = step;
        }
    }
    INFO("first contacts at step " << firstContact << ", " << engineContacts << " engine contacts");
    CHECK(firstContact > 0);
    CHECK(engineContacts > 0);
    // Later the two worlds drift apart (more contacts, in another order). The response stays
    // Bullet's SContact solve, which does not hold this rope: in both worlds it slips through the
    // cloth's faces within a second.
    // The control: a rope without VF_SS gets no contacts.
    CHECK(controlContacts == 0);
}
