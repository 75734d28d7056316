// SPDX-License-Identifier: Zlib
#pragma once

#include "bench/closed_meshes.h"
#include "bench/mesh_bench_world.h"

#include <BulletCollision/Gimpact/btGImpactShape.h>

#include <random>

/// Scene "gimpact-pile-256": 256 GImpact meshes of 1,000 to 5,000 triangles (tori, spheres and
/// capsules of 16 resolutions, each shape shared by 16 bodies) dropped in a loose 8 x 8 x 4 pile
/// onto a static BVH ground of 48 x 48 cells (4,608 triangles) with bumps of 0.3.

namespace bulletgpu::bench {

/// Bodies in the pile.
constexpr int cPileBodies = 256;
/// Amplitude of the ground's bumps: the ground lies within y = +-cPileBump.
constexpr btScalar cPileBump = btScalar(0.3);

/// The i-th of the 16 pile shapes' meshes (1,000 to 5,000 triangles, at most 2.45 across).
inline std::unique_ptr<MeshArrays> pileMesh(int i) {
    const btScalar grow = btScalar(0.02) * btScalar(i);
    switch (i % 3) {
        case 0:
            return test::torusArrays(26 + 3 * i, 20 + i, btScalar(0.55) + grow, btScalar(0.22) + grow / 2);
        case 1:
            return capsuleMesh(32 + 2 * i, 16 + 2 * (i / 2), btScalar(0.45) + grow, 0);
        default:
            return capsuleMesh(28 + 2 * i, 18 + 2 * (i / 2), btScalar(0.35) + grow, btScalar(0.3));
    }
}

/// Fills `world` with the pile scene; returns the triangles of the 256 bodies together.
inline long long buildMeshPile(MeshBenchWorld& world) {
    world.addBody(
        world.keep(std::make_unique<btBvhTriangleMeshShape>(world.keep(test::groundGrid(48, 1, 0, cPileBump)), true)),
        0, btTransform::getIdentity());
    constexpr int cShapes = 16;
    btGImpactMeshShape* shapes[cShapes];
    int triangles[cShapes];
    for (int i = 0; i < cShapes; ++i) {
        std::unique_ptr<MeshArrays> mesh = pileMesh(i);
        triangles[i] = mesh->triangles();
        shapes[i] = world.keep(std::make_unique<btGImpactMeshShape>(world.keep(std::move(mesh))));
        shapes[i]->setMargin(btScalar(0.01) * btScalar(1 + i % 4));
        shapes[i]->updateBound();
    }
    std::mt19937 random(27);
    std::uniform_real_distribution<btScalar> unit(-1, 1);
    long long total = 0;
    for (int b = 0; b < cPileBodies; ++b) {
        const int layer = b / 64, row = (b / 8) % 8, column = b % 8;
        // 2.8 apart less 0.2 of jitter: more than the largest shape's 2.45 across.
        const btVector3 origin(btScalar(2.8) * (btScalar(column) - btScalar(3.5)) + btScalar(0.1) * unit(random),
                               btScalar(1.8) + btScalar(2.8) * btScalar(layer) + btScalar(0.1) * unit(random),
                               btScalar(2.8) * (btScalar(row) - btScalar(3.5)) + btScalar(0.1) * unit(random));
        const btQuaternion rotation(btVector3(unit(random), unit(random), unit(random)).safeNormalize(),
                                    SIMD_PI * unit(random));
        const int shape = (b * 7) % cShapes;
        world.addBody(shapes[shape], 1, btTransform(rotation, origin));
        total += triangles[shape];
    }
    return total;
}

} // namespace bulletgpu::bench
