// SPDX-License-Identifier: Zlib
// The cloths' pair list (SoftCollisionConfig::pairListReach, SoftClothMeshes::findPairs): kept
// pairs measured again give the same contact pairs as an engine query every step.
#include "support/cloth_scene.h"

#include "bullet_adapter/soft_cloth_meshes.h"

#include <bulletgpu/SoftBodySolver.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <vector>

namespace {

using bulletgpu::CcdFeaturePair;
using bulletgpu::SoftClothMeshes;
using bulletgpu::test::ClothWorld;

/// The pairs of the first cloth of `meshes`, sorted.
std::vector<CcdFeaturePair> sortedPairs(SoftClothMeshes& meshes) {
    std::vector<CcdFeaturePair> pairs = meshes.cloths().front().pairs;
    std::sort(pairs.begin(), pairs.end(), bulletgpu::featurePairBefore);
    return pairs;
}

bool samePair(const CcdFeaturePair& x, const CcdFeaturePair& y) { return x.a == y.a && x.b == y.b && x.kind == y.kind; }

} // namespace

TEST_CASE("Kept pairs measured again are the pairs a query every step finds, with fewer queries", "[soft][self]") {
    // Our solver folds a 20x20 curtain onto itself and it comes to rest; both meshes below read
    // it, with a thickness of 0.1 (more than its margin) for many pairs.
    bulletgpu::SoftCollisionConfig config;
    config.threads = 1;
    config.logBackendChoice = false;
    ClothWorld world(std::make_unique<bulletgpu::SoftBodySolver>(config));
    btSoftBody* curtain = world.addPatch(btVector3(-1, 0.3f, 0), btVector3(1, 0.3f, 0), btVector3(-1, 2.3f, 0.3f),
                                         btVector3(1, 2.3f, 0.3f), 20, 0, 0.03f);
    curtain->setActivationState(DISABLE_DEACTIVATION);
    btAlignedObjectArray<btSoftBody*> bodies;
    bodies.push_back(curtain);
    const std::vector<char> selected{1};
    const std::vector<double> thickness{0.1};
    SoftClothMeshes listed(bulletgpu::Backend::Cpu, 1), fresh(bulletgpu::Backend::Cpu, 1);
    listed.sync(bodies, selected, thickness);
    fresh.sync(bodies, selected, thickness);
    int queries = 0, stepsWithPairs = 0, mismatches = 0;
    for (int step = 1; step <= 400; ++step) {
        world.world().stepSimulation(btScalar(1) / 60, 0);
        for (SoftClothMeshes* meshes : {&listed, &fresh}) {
            meshes->recordStart();
            meshes->readEnds();
        }
        listed.findPairs(0.5);
        fresh.findPairs(0);
        queries += static_cast<int>(listed.queriedCloths());
        REQUIRE(fresh.queriedCloths() == 1);
        const std::vector<CcdFeaturePair> a = sortedPairs(listed), b = sortedPairs(fresh);
        if (!b.empty()) ++stepsWithPairs;
        if (a.size() != b.size() || !std::equal(a.begin(), a.end(), b.begin(), samePair)) ++mismatches;
        // The nearest distance stays a lower bound of every pair's.
        CHECK(listed.cloths().front().nearest <= fresh.cloths().front().nearest + 1e-6);
    }
    INFO(queries << " queries in 400 steps, " << stepsWithPairs << " steps with pairs");
    CHECK(mismatches == 0);
    CHECK(stepsWithPairs > 50);
    CHECK(queries < 300);
    CHECK(queries > 1);
}
