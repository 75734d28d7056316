// SPDX-License-Identifier: Zlib
#pragma once

#include "bench/mesh_bench_world.h"

#include <memory>
#include <utility>

/// Scene "benchmark-6": Bullet's BenchmarkDemo test 6, "Convex vs Mesh"
/// (examples/Benchmarks/BenchmarkDemo.cpp, createTest6 + createLargeMeshBody), as
/// scenes/benchmark-6-convex-vs-mesh.json describes it: 1,000 barrel-like convex hulls (mass 1)
/// in 10 layers of 10 x 10 over 8 static BVH landscape tiles of 32,768 triangles at y = -25,
/// friction 0.9; 5 solver iterations, SIMD + warm starting + friction direction caching.
/// Bullet's TaruVtx and Landscape data are not copied: the barrel and the tiles are the
/// procedural stand-ins of demos/scene/procedural_meshes.cpp (same vertex and triangle counts).

namespace bulletgpu::bench {

/// Bullet's TaruVtx stand-in: three rings of 14 points (radius 0.75 at y = -1 and 1, 1.05 at
/// y = 0) and a bung at (0, 1.15, 0): 43 points.
inline std::unique_ptr<btConvexHullShape> taruHull() {
    auto hull = std::make_unique<btConvexHullShape>();
    const btScalar ringY[3] = {-1, 0, 1}, ringRadius[3] = {btScalar(0.75), btScalar(1.05), btScalar(0.75)};
    for (int ring = 0; ring < 3; ++ring) {
        for (int i = 0; i < 14; ++i) {
            const btScalar angle = SIMD_2_PI * btScalar(i) / btScalar(14);
            hull->addPoint(btVector3(ringRadius[ring] * btCos(angle), ringY[ring], ringRadius[ring] * btSin(angle)),
                           false);
        }
    }
    hull->addPoint(btVector3(0, btScalar(1.15), 0), true);
    return hull;
}

/// Height of the procedural landscape at (x, z).
inline btScalar landscapeHeight(btScalar x, btScalar z) {
    return 6 * btSin(x / 23) * btCos(z / 31) + 3 * btSin((x + z) / 11) + 2 * btCos((x - 2 * z) / 17);
}

/// One of the 8 landscape tiles (2 x 4 over a 500 x 500 square), with Landscape0`tile + 1`'s
/// triangle count.
inline std::unique_ptr<MeshArrays> landscapeTile(int tile) {
    static const std::pair<int, int> grids[8] = {{64, 32}, {66, 30}, {64, 32}, {64, 33},
                                                 {66, 34}, {66, 35}, {64, 35}, {66, 33}};
    constexpr btScalar cSide = 500;
    const int columns = grids[tile].first, rows = grids[tile].second;
    const btScalar x0 = -cSide / 2 + cSide / 2 * btScalar(tile % 2), z0 = -cSide / 2 + cSide / 4 * btScalar(tile / 2);
    auto m = std::make_unique<MeshArrays>();
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < columns; ++c) {
            const btScalar x = x0 + cSide / 2 * btScalar(c) / btScalar(columns - 1);
            const btScalar z = z0 + cSide / 4 * btScalar(r) / btScalar(rows - 1);
            m->addVertex(x, landscapeHeight(x, z), z);
        }
    }
    for (int r = 0; r + 1 < rows; ++r) {
        for (int c = 0; c + 1 < columns; ++c) {
            const int v = r * columns + c;
            m->indices.insert(m->indices.end(), {v, v + columns, v + 1, v + 1, v + columns, v + columns + 1});
        }
    }
    m->wrap();
    return m;
}

/// Fills `world` with BenchmarkDemo 6.
inline void buildBenchmarkDemo6(MeshBenchWorld& world) {
    btContactSolverInfo& solverInfo = world.world().getSolverInfo();
    solverInfo.m_solverMode = SOLVER_SIMD | SOLVER_USE_WARMSTARTING | SOLVER_ENABLE_FRICTION_DIRECTION_CACHING;
    solverInfo.m_numIterations = 5;
    for (int tile = 0; tile < 8; ++tile) {
        auto* shape = world.keep(std::make_unique<btBvhTriangleMeshShape>(world.keep(landscapeTile(tile)), true));
        world.addBody(shape, 0, btTransform(btQuaternion::getIdentity(), btVector3(0, -25, 0)))
            ->setFriction(btScalar(0.9));
    }
    btConvexHullShape* hull = world.keep(taruHull());
    constexpr int cSize = 10, cLayers = 10;
    constexpr btScalar cCube = btScalar(1.5);
    btScalar spacing = 2, offset = -cSize * (cCube * 2 + spacing) / 2, y = 20;
    for (int k = 0; k < cLayers; ++k) {
        for (int j = 0; j < cSize; ++j) {
            for (int i = 0; i < cSize; ++i) {
                const btVector3 pos(offset + btScalar(i) * (cCube * 2 + spacing), y,
                                    offset + btScalar(j) * (cCube * 2 + spacing));
                world.addBody(hull, 1,
                              btTransform(btQuaternion::getIdentity(), btVector3(0, 25, 0) + btVector3(5, 1, 5) * pos));
            }
        }
        offset -= btScalar(0.05) * spacing * btScalar(cSize - 1);
        spacing *= btScalar(1.1);
        y += cCube * 2 + spacing;
    }
}

} // namespace bulletgpu::bench
