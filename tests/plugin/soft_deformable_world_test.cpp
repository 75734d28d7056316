// SPDX-License-Identifier: Zlib
// bulletgpu::DeformableMultiBodyDynamicsWorld: Bullet's deformable world with the cloths'
// self-collision on the engine (contacts into m_faceNodeContacts, the vertex-face and edge-edge
// continuous stage handed back as velocities), against Bullet's own world on the same scenes.
#include "support/cloth_scene.h"
#include "support/deformable_cloth_world.h"
#include "support/twisted_strip.h"

#include "kernels/narrow/geometry/feature_distance.h"
#include "kernels/narrow/geometry/triangle_intersection.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using bulletgpu::DeformableMultiBodyDynamicsWorld;
using bulletgpu::SoftCollisionConfig;
using bulletgpu::test::DeformableClothWorld;
using bulletgpu::test::IntersectionCounter;
using bulletgpu::test::TwistedStrip;

/// Node mass of the cloths (kg) and the step (s): those of Bullet's DeformableSelfCollision example
/// (0.5 kg on 450 nodes, 240 Hz), at which its explicit mass-spring integration is stable (at
/// 60 Hz it blows up when the cloth lands).
constexpr double cNodeMass = 0.5 / 450;
constexpr double cStep = 1.0 / 240;

/// A `nodes` x `nodes` curtain, 2 m square, standing 0.3 m above the ground and leaning over by
/// 0.3 m, so that it folds onto itself as it falls; margin (and thickness) 0.03.
btSoftBody* addCurtain(DeformableClothWorld& world, int nodes, btScalar x = 0) {
    return world.addPatch(btVector3(x - 1, 0.3f, 0), btVector3(x + 1, 0.3f, 0), btVector3(x - 1, 2.3f, 0.3f),
                          btVector3(x + 1, 2.3f, 0.3f), nodes, nodes, 0.03f, btScalar(cNodeMass * nodes * nodes));
}

/// What a run saw.
struct RunCounts {
    int stepsWithIntersections = 0; ///< Steps after which some pair met (engine query).
    int bruteForceSteps = 0;        ///< Steps checked by brute force too.
    int bruteForceMismatches = 0;   ///< Of them, steps where brute force disagreed with the engine.
    bool finite = true;             ///< Every node position stayed finite.
};

/// Steps `world` `steps` times and counts the curtain's intersecting pairs after each
/// step, by brute force too every `bruteEvery` steps (0: never).
RunCounts run(DeformableClothWorld& world, btSoftBody* curtain, int steps, int bruteEvery) {
    RunCounts counts;
    IntersectionCounter counter(*curtain);
    for (int step = 1; step <= steps; ++step) {
        world.world().stepSimulation(btScalar(cStep), 0);
        const std::size_t found = counter.count(*curtain);
        if (found > 0) ++counts.stepsWithIntersections;
        if (bruteEvery > 0 && step % bruteEvery == 0) {
            ++counts.bruteForceSteps;
            if (bulletgpu::test::bruteForceIntersections(*curtain) != found) ++counts.bruteForceMismatches;
        }
        for (int n = 0; n < curtain->m_nodes.size(); ++n)
            counts.finite = counts.finite && std::isfinite(curtain->m_nodes[n].m_x.length2());
    }
    return counts;
}

/// The ours-only world's counters, for a world made with `ours`.
const DeformableMultiBodyDynamicsWorld& oursOf(DeformableClothWorld& world) {
    return dynamic_cast<const DeformableMultiBodyDynamicsWorld&>(world.world());
}

/// A config on one CPU thread, silent.
SoftCollisionConfig oneThread() {
    SoftCollisionConfig config;
    config.threads = 1;
    config.logBackendChoice = false;
    return config;
}

/// Steps the strip of `shape` (margin 0.02) in Bullet's deformable world, or ours when `ours`,
/// for `steps` steps; returns the steps after which some pair of triangles sharing no
/// vertex met, counted by the engine's discrete query (and by brute force every `bruteEvery`
/// steps, which must agree).
int twistedStrip(bool ours, int steps, const TwistedStrip& shape, int bruteEvery, int& mismatches) {
    DeformableClothWorld world(ours, oneThread());
    btSoftBody* strip = world.addPatch(shape.corner(0), shape.corner(1), shape.corner(2), shape.corner(3), shape.along,
                                       shape.across, 0.02f, btScalar(cNodeMass * shape.along * shape.across));
    return bulletgpu::test::stepTwistedStrip(world.world(), *strip, shape, steps, cStep, bruteEvery, mismatches);
}

} // namespace

TEST_CASE("Deformable world: a twisted strip, 1,000 steps: Bullet's self-collision lets it pass through, ours never",
          "[soft][deformable]") {
    // A 16 x 5 strip, one end turning at 8 rad/s (1.3 turns) and closing in at 36 cm/s.
    int mismatches = 0;
    const TwistedStrip shape{16, 5, 8.0, 0.36};
    const int bullet = twistedStrip(false, 1000, shape, 50, mismatches);
    INFO("Bullet's deformable world: " << bullet << " of 1,000 steps with intersections");
    CHECK(bullet > 100);
    CHECK(mismatches == 0);
    const int ours = twistedStrip(true, 1000, shape, 50, mismatches);
    CHECK(ours == 0);
    CHECK(mismatches == 0);
}

TEST_CASE("Deformable world: a 20x20 curtain folds onto itself and lands without intersections", "[soft][deformable]") {
    DeformableClothWorld world(true, oneThread());
    btSoftBody* curtain = addCurtain(world, 20);
    const RunCounts counts = run(world, curtain, 1600, 32);
    CHECK(counts.finite);
    CHECK(counts.stepsWithIntersections == 0);
    CHECK(counts.bruteForceSteps == 50);
    CHECK(counts.bruteForceMismatches == 0);
    CHECK(oursOf(world).stats().cloths == 1);
    // It came down and lies folded within a few thicknesses of the ground.
    CHECK(curtain->m_bounds[1].y() < 0.3);
    // Bullet's own flag is back on after every step.
    CHECK(curtain->useSelfCollision());
}

TEST_CASE("Deformable world: with the engine's self-collision off for a body, it steps as Bullet's world, bit for bit",
          "[soft][deformable]") {
    DeformableClothWorld control(false);
    btSoftBody* expected = addCurtain(control, 12);
    DeformableClothWorld world(true, oneThread());
    btSoftBody* curtain = addCurtain(world, 12);
    auto& ours = dynamic_cast<DeformableMultiBodyDynamicsWorld&>(world.world());
    ours.setSelfCollision(curtain, false);
    CHECK_FALSE(ours.selfCollision(curtain));
    for (int step = 0; step < 800; ++step) {
        control.world().stepSimulation(btScalar(cStep), 0);
        world.world().stepSimulation(btScalar(cStep), 0);
    }
    CHECK(ours.stats().cloths == 0);
    int different = 0;
    for (int n = 0; n < curtain->m_nodes.size(); ++n)
        if (curtain->m_nodes[n].m_x != expected->m_nodes[n].m_x) ++different;
    CHECK(different == 0);
    CHECK(curtain->useSelfCollision());
}

TEST_CASE("Deformable world: pinned nodes stay, and cloths come and go", "[soft][deformable]") {
    DeformableClothWorld world(true, oneThread());
    const auto& ours = oursOf(world);
    // Pinned at two upper corners: it swings down and folds against itself.
    btSoftBody* hanging = addCurtain(world, 16);
    hanging->setMass(16 * 16 - 1, 0);
    hanging->setMass(16 * 16 - 16, 0);
    const btVector3 pinned = hanging->m_nodes[16 * 16 - 1].m_x;
    IntersectionCounter hangingCounter(*hanging);
    btSoftBody* second = nullptr;
    for (int step = 1; step <= 1200; ++step) {
        if (step == 240) second = addCurtain(world, 12, 3);
        if (step == 800) {
            world.removeCloth(hanging);
            hanging = nullptr;
        }
        world.world().stepSimulation(btScalar(cStep), 0);
        if (hanging) {
            REQUIRE(hangingCounter.count(*hanging) == 0);
            REQUIRE(hanging->m_nodes[16 * 16 - 1].m_x == pinned);
            REQUIRE(ours.stats().cloths == (second ? 2u : 1u));
        }
        if (second && step % 40 == 0) REQUIRE(bulletgpu::test::bruteForceIntersections(*second) == 0);
    }
    CHECK(ours.stats().cloths == 1);
}

TEST_CASE("Deformable world: two cloths dropped onto each other rest on each other through the engine's contacts",
          "[soft][deformable]") {
    DeformableClothWorld world(true, oneThread());
    const auto& ours = oursOf(world);
    btSoftBody* lower =
        world.addPatch(btVector3(-0.6f, 0.1f, -0.6f), btVector3(0.6f, 0.1f, -0.6f), btVector3(-0.6f, 0.1f, 0.6f),
                       btVector3(0.6f, 0.1f, 0.6f), 12, 12, 0.02f, btScalar(cNodeMass * 144));
    btSoftBody* upper =
        world.addPatch(btVector3(-0.5f, 0.3f, -0.5f), btVector3(0.5f, 0.3f, -0.5f), btVector3(-0.5f, 0.3f, 0.5f),
                       btVector3(0.5f, 0.3f, 0.5f), 12, 12, 0.02f, btScalar(cNodeMass * 144));
    std::size_t crossContacts = 0, bulletMargins = 0;
    for (int step = 1; step <= 600; ++step) {
        world.world().stepSimulation(btScalar(cStep), 0);
        for (btSoftBody* body : {lower, upper})
            for (int c = 0; c < body->m_faceNodeContacts.size(); ++c) {
                const btSoftBody::DeformableFaceNodeContact& contact = body->m_faceNodeContacts[c];
                if (contact.m_colObj == body) continue;
                ++crossContacts;
                // CollideVF_DD's margin is the sum of the two margins; the engine's the thickness.
                if (contact.m_margin != body->getCollisionShape()->getMargin()) ++bulletMargins;
            }
        REQUIRE(ours.stats().cloths == 2);
    }
    CHECK(crossContacts > 0);
    CHECK(bulletMargins == 0);
    CHECK(upper->m_bounds[0].y() > lower->m_bounds[0].y());
    CHECK(bulletgpu::test::bruteForceIntersections(*lower) == 0);
    CHECK(bulletgpu::test::bruteForceIntersections(*upper) == 0);
}

namespace {

/// Pairs of intersecting triangles, one of `a` and one of `b` (brute force, float positions).
std::size_t crossIntersections(const btSoftBody& a, const btSoftBody& b) {
    const auto triangle = [](const btSoftBody& body, int f) {
        bulletgpu::Triangle3d t;
        for (int k = 0; k < 3; ++k)
            for (int c = 0; c < 3; ++c) t.p[k].v[c] = static_cast<float>(body.m_faces[f].m_n[k]->m_x[c]);
        return t;
    };
    std::size_t hits = 0;
    for (int i = 0; i < a.m_faces.size(); ++i)
        for (int j = 0; j < b.m_faces.size(); ++j)
            if (bulletgpu::trianglesIntersect(triangle(a, i), triangle(b, j))) ++hits;
    return hits;
}

/// Throws a 6 x 6 cloth (0.5 m, margin 0.02) at `speed` m/s down onto a 12 x 12 cloth (1.2 m)
/// pinned at its corners, in Bullet's deformable world or ours, for 480 steps; returns the steps
/// after which a triangle of one met a triangle of the other.
int thrownCloth(bool ours, double speed) {
    DeformableClothWorld world(ours, oneThread());
    btSoftBody* held =
        world.addPatch(btVector3(-0.6f, 0.5f, -0.6f), btVector3(0.6f, 0.5f, -0.6f), btVector3(-0.6f, 0.5f, 0.6f),
                       btVector3(0.6f, 0.5f, 0.6f), 12, 12, 0.02f, btScalar(cNodeMass * 144));
    for (const int corner : {0, 11, 132, 143}) held->setMass(corner, 0);
    btSoftBody* thrown =
        world.addPatch(btVector3(-0.25f, 0.7f, -0.25f), btVector3(0.25f, 0.7f, -0.25f), btVector3(-0.25f, 0.7f, 0.25f),
                       btVector3(0.25f, 0.7f, 0.25f), 6, 6, 0.02f, btScalar(4 * cNodeMass * 36));
    for (int n = 0; n < thrown->m_nodes.size(); ++n) thrown->m_nodes[n].m_v = btVector3(0, btScalar(-speed), 0);
    int steps = 0;
    for (int step = 1; step <= 480; ++step) {
        world.world().stepSimulation(btScalar(cStep), 0);
        if (crossIntersections(*held, *thrown) > 0) ++steps;
        if (ours) REQUIRE(oursOf(world).stats().cloths == 2);
    }
    return steps;
}

} // namespace

TEST_CASE("Deformable world: a cloth thrown at 20 m/s onto a held one passes through it in Bullet's world, not in ours",
          "[soft][deformable]") {
    const int bullet = thrownCloth(false, 20);
    INFO("Bullet's deformable world: " << bullet << " of 480 steps with the cloths intersecting");
    CHECK(bullet > 100);
    CHECK(thrownCloth(true, 20) == 0);
    // Slower, Bullet's own contacts and CCD between the two hold it too.
    CHECK(thrownCloth(false, 8) == 0);
    CHECK(thrownCloth(true, 8) == 0);
}

TEST_CASE("Deformable world: the config is checked and the backend chosen as for the classic solver",
          "[soft][deformable][api]") {
    SoftCollisionConfig bad = oneThread();
    bad.ccdEtaFraction = 1;
    CHECK_THROWS_AS(DeformableClothWorld(true, bad), std::invalid_argument);
    std::vector<std::string> lines;
    SoftCollisionConfig config = oneThread();
    config.logBackendChoice = true;
    config.logSink = [&](const char* line) { lines.emplace_back(line); };
    config.backend = bulletgpu::Backend::Cpu;
    DeformableClothWorld world(true, config);
    CHECK(oursOf(world).backend() == bulletgpu::Backend::Cpu);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find("soft-body collisions on the CPU") != std::string::npos);
}

namespace {

/// A node-face pair: node index, face index.
using NodeFace = std::pair<int, int>;

/// Node spacing (m) and layer gap (m) of the folded patch below.
constexpr btScalar cFoldSpacing = 0.08f;
constexpr btScalar cFoldGap = 0.012f;

/// Adds a 10 x 10 patch (spacing 0.08, margin 0.02) flat at y = 1 and steps it once (it joins
/// the engine flat, with no pair within its thickness), then lays it in two layers `cFoldGap`
/// apart, the rows from 5 on folded back over the first five (and shifted by 0.3 and 0.6 spacings
/// across), at rest (velocities zero, the
/// springs' rest lengths taken anew), and steps it once more without gravity.
btSoftBody* foldedPatchAfterOneStep(DeformableClothWorld& world, std::vector<btVector3>& folded) {
    const btScalar size = 9 * cFoldSpacing;
    btSoftBody* patch = world.addPatch(btVector3(0, 1, 0), btVector3(size, 1, 0), btVector3(0, 1, size),
                                       btVector3(size, 1, size), 10, 10, 0.02f, btScalar(cNodeMass * 100));
    world.world().stepSimulation(btScalar(cStep), 0);
    folded.clear();
    for (int iy = 0; iy < 10; ++iy)
        for (int ix = 0; ix < 10; ++ix) {
            const bool upper = iy >= 5;
            // The upper layer shifted so that its nodes lie over the inside of lower triangles.
            folded.emplace_back((ix + (upper ? 0.3f : 0)) * cFoldSpacing, upper ? 1 + cFoldGap : btScalar(1),
                                (btScalar(upper ? 9 - iy : iy) + (upper ? 0.6f : 0)) * cFoldSpacing);
        }
    for (int n = 0; n < patch->m_nodes.size(); ++n) {
        patch->m_nodes[n].m_x = patch->m_nodes[n].m_q = folded[n];
        patch->m_nodes[n].m_v.setZero();
    }
    patch->m_bUpdateRtCst = true;
    world.world().stepSimulation(btScalar(cStep), 0);
    return patch;
}

/// Every node-face pair of `body` sharing no node whose distance at `positions` is below `reach`.
std::vector<NodeFace> bruteForceNodeFacePairs(const btSoftBody& body, const std::vector<btVector3>& positions,
                                              double reach) {
    const auto at = [&](int n) {
        return bulletgpu::Vec3d{{double(positions[n].x()), double(positions[n].y()), double(positions[n].z())}};
    };
    std::vector<NodeFace> pairs;
    for (int f = 0; f < body.m_faces.size(); ++f) {
        int corner[3];
        for (int k = 0; k < 3; ++k) corner[k] = static_cast<int>(body.m_faces[f].m_n[k] - &body.m_nodes[0]);
        for (int n = 0; n < body.m_nodes.size(); ++n) {
            if (n == corner[0] || n == corner[1] || n == corner[2]) continue;
            const bulletgpu::FeaturePoints p =
                bulletgpu::pointTriangleClosest(at(n), at(corner[0]), at(corner[1]), at(corner[2]));
            if (p.distanceSquared < reach * reach) pairs.emplace_back(n, f);
        }
    }
    std::sort(pairs.begin(), pairs.end());
    return pairs;
}

/// The (node, face) pairs of `a`'s face-node contacts against `b` (`a` itself: its self contacts), sorted.
std::vector<NodeFace> contactPairs(const btSoftBody& a, const btSoftBody& b) {
    std::vector<NodeFace> pairs;
    for (int c = 0; c < a.m_faceNodeContacts.size(); ++c) {
        const btSoftBody::DeformableFaceNodeContact& contact = a.m_faceNodeContacts[c];
        if (contact.m_colObj != &b) continue;
        pairs.emplace_back(static_cast<int>(contact.m_node - &a.m_nodes[0]),
                           static_cast<int>(contact.m_face - &b.m_faces[0]));
    }
    std::sort(pairs.begin(), pairs.end());
    return pairs;
}

} // namespace

TEST_CASE("Deformable world: the self contacts are every node-face pair within the thickness, as Bullet builds them",
          "[soft][deformable]") {
    SoftCollisionConfig config = oneThread();
    DeformableClothWorld world(true, config, btVector3(0, 0, 0));
    std::vector<btVector3> folded;
    btSoftBody* patch = foldedPatchAfterOneStep(world, folded);
    const std::vector<NodeFace> expected = bruteForceNodeFacePairs(*patch, folded, 0.02);
    REQUIRE(expected.size() > 50);
    CHECK(contactPairs(*patch, *patch) == expected);
    int overLowerFaces = 0;
    for (int c = 0; c < patch->m_faceNodeContacts.size(); ++c) {
        const btSoftBody::DeformableFaceNodeContact& contact = patch->m_faceNodeContacts[c];
        const int node = static_cast<int>(contact.m_node - &patch->m_nodes[0]);
        btVector3 onFace(0, 0, 0);
        for (int k = 0; k < 3; ++k) {
            CHECK(contact.m_bary[k] >= 0);
            onFace += contact.m_bary[k] * folded[contact.m_face->m_n[k] - &patch->m_nodes[0]];
        }
        CHECK(contact.m_bary[0] + contact.m_bary[1] + contact.m_bary[2] == Approx(1).margin(1e-5));
        CHECK(contact.m_normal.length() == Approx(1).margin(1e-5));
        // Turned towards the node, which lies within the thickness of the closest point; a node
        // of the upper layer lies the layer gap above a lower face.
        const btVector3 gap = folded[node] - onFace;
        CHECK(contact.m_normal.dot(gap) >= -1e-6);
        CHECK(gap.length() < 0.02 + 1e-6);
        bool lowerFace = true;
        for (int k = 0; k < 3; ++k)
            lowerFace = lowerFace && folded[contact.m_face->m_n[k] - &patch->m_nodes[0]].y() == folded[0].y();
        if (lowerFace && folded[node].y() > folded[0].y()) {
            ++overLowerFaces;
            CHECK(contact.m_normal.dot(gap) == Approx(double(cFoldGap)).margin(1e-5));
        }
        CHECK(contact.m_margin == patch->getCollisionShape()->getMargin());
        CHECK(contact.m_friction == patch->m_cfg.kDF * patch->m_cfg.kDF);
    }
    CHECK(overLowerFaces > 20);
}

TEST_CASE("Deformable world: Bullet's own self contacts whose closest point lies inside the face are among ours",
          "[soft][deformable]") {
    // Bullet's CollideFF_DD reaches twice the margin; ours reaches the thickness, set to match.
    DeformableClothWorld control(false, oneThread(), btVector3(0, 0, 0));
    std::vector<btVector3> folded;
    btSoftBody* bulletPatch = foldedPatchAfterOneStep(control, folded);
    std::vector<NodeFace> inside;
    for (int c = 0; c < bulletPatch->m_faceNodeContacts.size(); ++c) {
        const btSoftBody::DeformableFaceNodeContact& contact = bulletPatch->m_faceNodeContacts[c];
        bool interior = true;
        for (int k = 0; k < 3; ++k) interior = interior && contact.m_bary[k] > 1e-4 && contact.m_bary[k] < 1 - 1e-4;
        if (interior)
            inside.emplace_back(static_cast<int>(contact.m_node - &bulletPatch->m_nodes[0]),
                                static_cast<int>(contact.m_face - &bulletPatch->m_faces[0]));
    }
    std::sort(inside.begin(), inside.end());
    inside.erase(std::unique(inside.begin(), inside.end()), inside.end());
    REQUIRE(inside.size() > 10);

    SoftCollisionConfig config = oneThread();
    config.thickness = 0.04;
    DeformableClothWorld world(true, config, btVector3(0, 0, 0));
    btSoftBody* patch = foldedPatchAfterOneStep(world, folded);
    const std::vector<NodeFace> ours = contactPairs(*patch, *patch);
    CHECK(ours == bruteForceNodeFacePairs(*patch, folded, 0.04));
    std::vector<NodeFace> missing;
    std::set_difference(inside.begin(), inside.end(), ours.begin(), ours.end(), std::back_inserter(missing));
    CHECK(missing.empty());
}

namespace {

/// A patch of `resolution` x `resolution` nodes over the same square as the lower one of
/// stackedPatches, 1 m above its place there (shifted so that its nodes lie over the inside of
/// lower triangles).
btSoftBody* addUpperPatch(DeformableClothWorld& world, int resolution) {
    const btScalar size = 9 * cFoldSpacing;
    const btVector3 shift(0.3f * cFoldSpacing, 1, 0.6f * cFoldSpacing);
    return world.addPatch(btVector3(0, 1, 0) + shift, btVector3(size, 1, 0) + shift, btVector3(0, 1, size) + shift,
                          btVector3(size, 1, size) + shift, resolution, resolution, 0.02f,
                          btScalar(cNodeMass * resolution * resolution));
}

/// Moves `upper` (addUpperPatch, a step taken since) down to `cFoldGap` over `lower`, at rest;
/// `before` gets both bodies' node positions when the next step starts (where its contacts are
/// made); then takes that step.
void layDownAndStep(DeformableClothWorld& world, btSoftBody* lower, btSoftBody* upper,
                    std::vector<btVector3> before[2]) {
    const btVector3 down(0, 1 - cFoldGap, 0);
    for (int n = 0; n < upper->m_nodes.size(); ++n) {
        upper->m_nodes[n].m_x = upper->m_nodes[n].m_q = upper->m_nodes[n].m_x - down;
        upper->m_nodes[n].m_v.setZero();
    }
    int i = 0;
    for (btSoftBody* body : {lower, upper}) {
        before[i].clear();
        for (int n = 0; n < body->m_nodes.size(); ++n) before[i].push_back(body->m_nodes[n].m_x);
        ++i;
    }
    world.world().stepSimulation(btScalar(cStep), 0);
}

/// Two 10 x 10 patches `cFoldGap` apart (zero gravity; the upper is laid there after a first
/// step taken 1 m higher, so that the engine starts with them apart); `before` as layDownAndStep.
std::pair<btSoftBody*, btSoftBody*> stackedPatches(DeformableClothWorld& world, std::vector<btVector3> before[2]) {
    const btScalar size = 9 * cFoldSpacing;
    btSoftBody* lower = world.addPatch(btVector3(0, 1, 0), btVector3(size, 1, 0), btVector3(0, 1, size),
                                       btVector3(size, 1, size), 10, 10, 0.02f, btScalar(cNodeMass * 100));
    btSoftBody* upper = addUpperPatch(world, 10);
    world.world().stepSimulation(btScalar(cStep), 0);
    layDownAndStep(world, lower, upper, before);
    return {lower, upper};
}

/// Every (node of `a`, face of `b`) pair whose distance at those positions is below `reach`.
std::vector<NodeFace> bruteForceCrossPairs(const btSoftBody& a, const std::vector<btVector3>& atA, const btSoftBody& b,
                                           const std::vector<btVector3>& atB, double reach) {
    const auto load = [](const btVector3& v) {
        return bulletgpu::Vec3d{{double(v.x()), double(v.y()), double(v.z())}};
    };
    std::vector<NodeFace> pairs;
    for (int f = 0; f < b.m_faces.size(); ++f) {
        bulletgpu::Vec3d corner[3];
        for (int k = 0; k < 3; ++k) corner[k] = load(atB[b.m_faces[f].m_n[k] - &b.m_nodes[0]]);
        for (int n = 0; n < a.m_nodes.size(); ++n) {
            const bulletgpu::FeaturePoints p =
                bulletgpu::pointTriangleClosest(load(atA[n]), corner[0], corner[1], corner[2]);
            if (p.distanceSquared < reach * reach) pairs.emplace_back(n, f);
        }
    }
    std::sort(pairs.begin(), pairs.end());
    return pairs;
}

} // namespace

TEST_CASE("Deformable world: the contacts between two cloths are every node-face pair within the thickness, as "
          "CollideVF_DD builds them",
          "[soft][deformable]") {
    DeformableClothWorld world(true, oneThread(), btVector3(0, 0, 0));
    std::vector<btVector3> before[2];
    const auto [lower, upper] = stackedPatches(world, before);
    REQUIRE(oursOf(world).stats().cloths == 2);
    const std::vector<NodeFace> lowerOnUpper = bruteForceCrossPairs(*lower, before[0], *upper, before[1], 0.02);
    const std::vector<NodeFace> upperOnLower = bruteForceCrossPairs(*upper, before[1], *lower, before[0], 0.02);
    REQUIRE(lowerOnUpper.size() > 50);
    REQUIRE(upperOnLower.size() > 50);
    CHECK(contactPairs(*lower, *upper) == lowerOnUpper);
    CHECK(contactPairs(*upper, *lower) == upperOnLower);
    for (btSoftBody* body : {lower, upper}) {
        btSoftBody* other = body == lower ? upper : lower;
        const std::vector<btVector3>& nodes = before[body == lower ? 0 : 1];
        const std::vector<btVector3>& faces = before[body == lower ? 1 : 0];
        for (int c = 0; c < body->m_faceNodeContacts.size(); ++c) {
            const btSoftBody::DeformableFaceNodeContact& contact = body->m_faceNodeContacts[c];
            if (contact.m_colObj != other) continue;
            btVector3 onFace(0, 0, 0);
            for (int k = 0; k < 3; ++k) {
                CHECK(contact.m_bary[k] >= 0);
                onFace += contact.m_bary[k] * faces[contact.m_face->m_n[k] - &other->m_nodes[0]];
            }
            const btVector3 gap = nodes[contact.m_node - &body->m_nodes[0]] - onFace;
            CHECK(contact.m_normal.length() == Approx(1).margin(1e-5));
            CHECK(contact.m_normal.dot(gap) >= -1e-6);
            CHECK(gap.length() < 0.02 + 1e-6);
            CHECK(contact.m_margin == body->getCollisionShape()->getMargin());
            CHECK(contact.m_friction == body->m_cfg.kDF * other->m_cfg.kDF);
        }
    }
}

TEST_CASE("Deformable world: two cloths at rest on each other keep their pairs between steps, as if queried",
          "[soft][deformable]") {
    // Dropped onto the ground, the upper one onto the lower one, in a world that keeps pairs
    // (pairListReach, the default) and in one that queries every step: once at rest the first
    // re-measures its kept pairs between the cloths, and both make the same contacts, step after
    // step, and the same moves.
    struct Stack {
        std::unique_ptr<DeformableClothWorld> world;
        btSoftBody* lower = nullptr;
        btSoftBody* upper = nullptr;
        explicit Stack(double reach) {
            SoftCollisionConfig config = oneThread();
            config.pairListReach = reach;
            world = std::make_unique<DeformableClothWorld>(true, config);
            const btScalar size = 9 * cFoldSpacing;
            lower = world->addPatch(btVector3(0, 0.05f, 0), btVector3(size, 0.05f, 0), btVector3(0, 0.05f, size),
                                    btVector3(size, 0.05f, size), 10, 10, 0.02f, btScalar(cNodeMass * 100));
            upper = addUpperPatch(*world, 9);
            for (int n = 0; n < upper->m_nodes.size(); ++n)
                upper->m_nodes[n].m_x.setY(upper->m_nodes[n].m_x.y() - btScalar(0.9));
        }
    };
    Stack kept(0.5), queried(0);
    std::uint32_t queries = 0, steps = 0;
    std::size_t pairs = 0;
    for (int step = 0; step < 1100; ++step) {
        for (Stack* s : {&kept, &queried}) s->world->world().stepSimulation(btScalar(cStep), 0);
        REQUIRE(oursOf(*queried.world).stats().crossQueries == 1);
        INFO("step " << step);
        REQUIRE(contactPairs(*kept.lower, *kept.upper) == contactPairs(*queried.lower, *queried.upper));
        REQUIRE(contactPairs(*kept.upper, *kept.lower) == contactPairs(*queried.upper, *queried.lower));
        for (int n = 0; n < kept.upper->m_nodes.size(); ++n)
            REQUIRE(kept.upper->m_nodes[n].m_x == queried.upper->m_nodes[n].m_x);
        if (step < 800) continue; // Landing and settling.
        ++steps;
        queries += oursOf(*kept.world).stats().crossQueries;
        pairs += contactPairs(*kept.lower, *kept.upper).size();
    }
    CHECK(pairs > steps * 20);  // They touch all along.
    CHECK(queries < steps / 2); // Mostly kept pairs.
}

TEST_CASE("Deformable world: Bullet's own contacts between two cloths whose closest point lies inside the face are "
          "among ours",
          "[soft][deformable]") {
    // CollideVF_DD reaches the sum of the margins; ours the thickness, set to match.
    DeformableClothWorld control(false, oneThread(), btVector3(0, 0, 0));
    std::vector<btVector3> before[2];
    const auto [bulletLower, bulletUpper] = stackedPatches(control, before);
    std::vector<NodeFace> inside[2];
    int i = 0;
    for (btSoftBody* body : {bulletLower, bulletUpper}) {
        btSoftBody* other = body == bulletLower ? bulletUpper : bulletLower;
        for (int c = 0; c < body->m_faceNodeContacts.size(); ++c) {
            const btSoftBody::DeformableFaceNodeContact& contact = body->m_faceNodeContacts[c];
            if (contact.m_colObj != other) continue;
            bool interior = true;
            for (int k = 0; k < 3; ++k) interior = interior && contact.m_bary[k] > 1e-4 && contact.m_bary[k] < 1 - 1e-4;
            if (interior)
                inside[i].emplace_back(static_cast<int>(contact.m_node - &body->m_nodes[0]),
                                       static_cast<int>(contact.m_face - &other->m_faces[0]));
        }
        std::sort(inside[i].begin(), inside[i].end());
        inside[i].erase(std::unique(inside[i].begin(), inside[i].end()), inside[i].end());
        REQUIRE(inside[i].size() > 10);
        ++i;
    }

    SoftCollisionConfig config = oneThread();
    config.thickness = 0.04;
    DeformableClothWorld world(true, config, btVector3(0, 0, 0));
    const auto [lower, upper] = stackedPatches(world, before);
    const std::vector<NodeFace> ours[2] = {contactPairs(*lower, *upper), contactPairs(*upper, *lower)};
    CHECK(ours[0] == bruteForceCrossPairs(*lower, before[0], *upper, before[1], 0.04));
    CHECK(ours[1] == bruteForceCrossPairs(*upper, before[1], *lower, before[0], 0.04));
    for (int side = 0; side < 2; ++side) {
        std::vector<NodeFace> missing;
        std::set_difference(inside[side].begin(), inside[side].end(), ours[side].begin(), ours[side].end(),
                            std::back_inserter(missing));
        CHECK(missing.empty());
    }
}

TEST_CASE("Deformable world: a cloth replaced by one of another size meets the other through exact contacts",
          "[soft][deformable]") {
    DeformableClothWorld world(true, oneThread(), btVector3(0, 0, 0));
    std::vector<btVector3> before[2];
    auto [lower, upper] = stackedPatches(world, before);
    REQUIRE(contactPairs(*lower, *upper).size() > 50);
    const std::vector<btVector3> flat = before[0];
    // The group is rebuilt for its new member: other node, face and edge counts.
    world.removeCloth(upper);
    for (const int resolution : {7, 13}) {
        // The lower patch back flat and at rest (the contacts pushed it).
        for (int n = 0; n < lower->m_nodes.size(); ++n) {
            lower->m_nodes[n].m_x = lower->m_nodes[n].m_q = flat[n];
            lower->m_nodes[n].m_v.setZero();
        }
        upper = addUpperPatch(world, resolution);
        world.world().stepSimulation(btScalar(cStep), 0);
        layDownAndStep(world, lower, upper, before);
        REQUIRE(oursOf(world).stats().cloths == 2);
        const std::vector<NodeFace> lowerOnUpper = bruteForceCrossPairs(*lower, before[0], *upper, before[1], 0.02);
        const std::vector<NodeFace> upperOnLower = bruteForceCrossPairs(*upper, before[1], *lower, before[0], 0.02);
        REQUIRE(lowerOnUpper.size() > 5);
        REQUIRE(upperOnLower.size() > 5);
        CHECK(contactPairs(*lower, *upper) == lowerOnUpper);
        CHECK(contactPairs(*upper, *lower) == upperOnLower);
        world.removeCloth(upper);
    }
}
