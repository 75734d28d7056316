// SPDX-License-Identifier: Zlib
// Soft bodies against rigid triangle meshes in Bullet's classic soft-rigid world
// (bulletgpu::SoftBodySolver, nodes against the mesh on the engine) against Bullet's prism path
// (btSoftBodyConcaveCollisionAlgorithm): a cloth draped over a bumpy open mesh
// (btBvhTriangleMeshShape, btScaledBvhTriangleMeshShape) and over a closed ball (btGImpactMeshShape)
// never leaves a node on the wrong side of the surface.
#include "support/cloth_scene.h"

#include <bulletgpu/SoftBodySolver.h>

#include <BulletCollision/CollisionShapes/btScaledBvhTriangleMeshShape.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <vector>

namespace {

using bulletgpu::SoftBodySolver;
using bulletgpu::SoftCollisionConfig;
using bulletgpu::test::ClothWorld;

/// Cells per side of the bumpy mesh, its half-width, its base height and its bumps' amplitude.
constexpr int cCells = 24;
constexpr btScalar cHalf = 1.5f, cBase = 0.5f, cBump = 0.1f;
/// Half-width of the small bumpy mesh, narrower than the cloth, which hangs over its rim.
constexpr btScalar cSmallHalf = 0.5f;
/// Radius and centre height of the ball.
constexpr btScalar cBallRadius = 0.5f, cBallY = 0.6f;

/// Height of the bumpy surface's grid vertex at (x, z).
btScalar bump(btScalar x, btScalar z) { return cBase + cBump * std::sin(5 * x) * std::cos(4 * z + 0.5f); }

/// A vertex array and an index array that Bullet's mesh interface points into.
struct MeshArrays {
    std::vector<btScalar> vertices;
    std::vector<int> indices;
    btTriangleIndexVertexArray* interface() {
        return new btTriangleIndexVertexArray(static_cast<int>(indices.size() / 3), indices.data(), 3 * sizeof(int),
                                              static_cast<int>(vertices.size() / 3), vertices.data(),
                                              3 * sizeof(btScalar));
    }
};

/// The bumpy height field over [-half, half]^2, two triangles per cell, wound upwards, with x
/// and z divided by `shrink` (for a shape that scales them back).
MeshArrays bumpyMesh(btScalar half, btScalar shrink) {
    MeshArrays m;
    for (int i = 0; i <= cCells; ++i)
        for (int j = 0; j <= cCells; ++j) {
            const btScalar x = -half + 2 * half * i / cCells, z = -half + 2 * half * j / cCells;
            m.vertices.insert(m.vertices.end(), {x / shrink, bump(x, z), z / shrink});
        }
    for (int i = 0; i < cCells; ++i)
        for (int j = 0; j < cCells; ++j) {
            const int a = i * (cCells + 1) + j, b = a + cCells + 1;
            m.indices.insert(m.indices.end(), {a, a + 1, b, b, a + 1, b + 1});
        }
    return m;
}

/// A UV ball of cBallRadius at (0, cBallY, 0), wound outwards.
MeshArrays ballMesh(int rings, int segments) {
    MeshArrays m;
    m.vertices.insert(m.vertices.end(), {0, cBallY + cBallRadius, 0});
    for (int r = 1; r < rings; ++r)
        for (int s = 0; s < segments; ++s) {
            const btScalar theta = SIMD_PI * r / rings, phi = SIMD_2_PI * s / segments;
            m.vertices.insert(m.vertices.end(),
                              {cBallRadius * std::sin(theta) * std::cos(phi), cBallY + cBallRadius * std::cos(theta),
                               cBallRadius * std::sin(theta) * std::sin(phi)});
        }
    m.vertices.insert(m.vertices.end(), {0, cBallY - cBallRadius, 0});
    const int last = static_cast<int>(m.vertices.size() / 3) - 1;
    const auto ring = [&](int r, int s) { return 1 + (r - 1) * segments + (s % segments); };
    for (int s = 0; s < segments; ++s) {
        m.indices.insert(m.indices.end(), {0, ring(1, s + 1), ring(1, s)});
        m.indices.insert(m.indices.end(), {last, ring(rings - 1, s), ring(rings - 1, s + 1)});
        for (int r = 1; r + 1 < rings; ++r)
            m.indices.insert(m.indices.end(), {ring(r, s), ring(r, s + 1), ring(r + 1, s), ring(r + 1, s),
                                               ring(r, s + 1), ring(r + 1, s + 1)});
    }
    return m;
}

/// How far below the bumpy surface of half-width `half` (x, y, z) lies (negative above it, 0
/// outside the mesh's footprint, where `inside` is false).
btScalar depthBelowBumps(const btVector3& p, btScalar half, bool& inside) {
    const btScalar u = (p.x() + half) / (2 * half) * cCells, v = (p.z() + half) / (2 * half) * cCells;
    inside = u >= 0 && v >= 0 && u < cCells && v < cCells;
    if (!inside) return 0;
    const int i = static_cast<int>(u), j = static_cast<int>(v);
    const btScalar fu = u - i, fv = v - j;
    const auto h = [&](int di, int dj) {
        return bump(-half + 2 * half * (i + di) / cCells, -half + 2 * half * (j + dj) / cCells);
    };
    // The cell's triangles (a, a + 1, b) and (b, a + 1, b + 1) split it along fu + fv = 1.
    const btScalar surface = fu + fv <= 1 ? h(0, 0) + fu * (h(1, 0) - h(0, 0)) + fv * (h(0, 1) - h(0, 0))
                                          : h(1, 1) + (1 - fu) * (h(0, 1) - h(1, 1)) + (1 - fv) * (h(1, 0) - h(1, 1));
    return surface - p.y();
}

/// How deep inside the ball mesh (a convex polyhedron) `p` lies (0 outside).
btScalar depthInsideBall(const MeshArrays& m, const btVector3& p) {
    btScalar depth = SIMD_INFINITY;
    for (std::size_t t = 0; t < m.indices.size(); t += 3) {
        const auto corner = [&](int k) {
            const btScalar* v = &m.vertices[3 * m.indices[t + k]];
            return btVector3(v[0], v[1], v[2]);
        };
        const btVector3 n = (corner(1) - corner(0)).cross(corner(2) - corner(0)).normalized();
        depth = btMin(depth, -n.dot(p - corner(0)));
    }
    return btMax(btScalar(0), depth);
}

/// Which shape the scene puts the mesh in.
enum class Shape { Bvh, ScaledBvh, GImpact, BvhUnderside, SmallBvh };

/// What a run measured.
struct Outcome {
    int stepsWrong = 0;         ///< Steps after which some node was on the wrong side.
    int nodesWrong = 0;         ///< Most nodes on the wrong side after a step.
    btScalar deepest = 0;       ///< Deepest a node went to the wrong side.
    btScalar meanHeight = 0;    ///< Mean height of the nodes over the last step (rest height).
    std::uint32_t queries = 0;  ///< Most engine queries in a step (ours).
    std::uint64_t contacts = 0; ///< Mesh contacts over the run (ours).
    int crossings = 0;          ///< Node steps through the bumps (both ends over the footprint).
    btScalar lowest = 0;        ///< Lowest node at the end.
};

/// Drops a 16 x 16 cloth (margin 0.02) onto the mesh of `shape` (the bumps, or the ball for
/// GImpact; for BvhUnderside, gravity turned up and the cloth under the bumps) and steps `steps` times at 60 Hz with
/// `solver` (Bullet's default when null), the sparse SDF's voxels `voxel` wide (Bullet's default 0.25).
Outcome drape(std::unique_ptr<btSoftBodySolver> solver, Shape shape, int steps, btScalar voxel = 0.25f) {
    const auto* ours = dynamic_cast<const SoftBodySolver*>(solver.get());
    ClothWorld world(std::move(solver));
    const bool under = shape == Shape::BvhUnderside;
    if (under) {
        world.world().setGravity(btVector3(0, 10, 0));
        world.world().getWorldInfo().m_gravity = btVector3(0, 10, 0);
    }
    world.world().getWorldInfo().m_sparsesdf.setDefaultVoxelsz(voxel);
    world.world().getWorldInfo().m_sparsesdf.Reset();
    const bool ball = shape == Shape::GImpact;
    const btScalar shrink = shape == Shape::ScaledBvh ? 2 : 1;
    const btScalar half = shape == Shape::SmallBvh ? cSmallHalf : cHalf;
    MeshArrays arrays = ball ? ballMesh(12, 24) : bumpyMesh(half, shrink);
    std::unique_ptr<btTriangleIndexVertexArray> interface(arrays.interface());
    std::unique_ptr<btCollisionShape> meshShape, child;
    if (shape == Shape::GImpact) {
        auto* gimpact = new btGImpactMeshShape(interface.get());
        gimpact->updateBound();
        meshShape.reset(gimpact);
    } else {
        meshShape = std::make_unique<btBvhTriangleMeshShape>(interface.get(), true);
        if (shape == Shape::ScaledBvh) {
            child = std::move(meshShape);
            meshShape = std::make_unique<btScaledBvhTriangleMeshShape>(
                static_cast<btBvhTriangleMeshShape*>(child.get()), btVector3(shrink, 1, shrink));
        }
    }
    btCollisionObject object;
    object.setCollisionShape(meshShape.get());
    object.setCollisionFlags(btCollisionObject::CF_STATIC_OBJECT);
    world.world().addCollisionObject(&object);
    const btScalar top = ball ? cBallY + cBallRadius + 0.1f : under ? cBase - cBump - 0.2f : cBase + cBump + 0.2f;
    btSoftBody* cloth = world.addPatch(btVector3(-0.8f, top, -0.8f), btVector3(0.8f, top, -0.8f),
                                       btVector3(-0.8f, top, 0.8f), btVector3(0.8f, top, 0.8f), 16, 0, 0.02f);
    Outcome out;
    std::vector<btVector3> before(static_cast<std::size_t>(cloth->m_nodes.size()));
    for (int step = 0; step < steps; ++step) {
        for (int i = 0; i < cloth->m_nodes.size(); ++i) before[i] = cloth->m_nodes[i].m_x;
        world.world().stepSimulation(btScalar(1) / 60, 0);
        int wrong = 0;
        for (int i = 0; i < cloth->m_nodes.size(); ++i) {
            const btVector3& x = cloth->m_nodes[i].m_x;
            bool inside = false, wasInside = false;
            const btScalar below = ball ? 0 : depthBelowBumps(x, half, inside);
            const btScalar wasBelow = ball ? 0 : depthBelowBumps(before[i], half, wasInside);
            const bool through = under ? wasBelow >= 0 && below < 0 : wasBelow <= 0 && below > 0;
            if (inside && wasInside && through) ++out.crossings;
            const btScalar depth = ball ? depthInsideBall(arrays, x) : btMax(btScalar(0), under ? -below : below);
            out.deepest = btMax(out.deepest, depth);
            wrong += depth > 0 ? 1 : 0;
        }
        out.stepsWrong += wrong > 0 ? 1 : 0;
        out.nodesWrong = std::max(out.nodesWrong, wrong);
        if (ours) {
            out.queries = std::max(out.queries, ours->meshStats().queries);
            out.contacts += ours->meshStats().contacts;
        }
    }
    out.lowest = SIMD_INFINITY;
    for (int i = 0; i < cloth->m_nodes.size(); ++i) {
        out.meanHeight += cloth->m_nodes[i].m_x.y() / cloth->m_nodes.size();
        out.lowest = btMin(out.lowest, cloth->m_nodes[i].m_x.y());
    }
    world.world().removeCollisionObject(&object);
    return out;
}

/// A solver on one CPU thread.
std::unique_ptr<SoftBodySolver> makeSolver() {
    SoftCollisionConfig config;
    config.threads = 1;
    return std::make_unique<SoftBodySolver>(config);
}

/// Runs `shape` with Bullet's prism path (default and fine sparse SDF) and with ours, and checks
/// that ours keeps every node on its side and the cloth on the mesh.
void compare(Shape shape, const char* name) {
    const int steps = 300;
    const Outcome bullet = drape(nullptr, shape, steps);
    const Outcome fine = drape(nullptr, shape, steps, 0.05f);
    const Outcome ours = drape(makeSolver(), shape, steps);
    const auto line = [](const Outcome& o) {
        std::ostringstream out;
        if (o.queries > 0) out << o.contacts << " contacts, ";
        out << o.stepsWrong << " steps with nodes on the wrong side (at most " << o.nodesWrong << ", deepest "
            << o.deepest << "), " << o.crossings << " node steps through the surface, mean node height at the end "
            << o.meanHeight << ", lowest " << o.lowest;
        return out.str();
    };
    INFO(name);
    INFO("Bullet's prism path: " << line(bullet));
    INFO("Bullet's prism path, SDF voxels 0.05: " << line(fine));
    INFO("ours: " << line(ours));
    CHECK(ours.crossings == 0);
    if (shape == Shape::SmallBvh)
        CHECK(ours.lowest < cBase - cBump - 0.2f); // Hangs over the rim (boundary edges let it pass).
    else
        CHECK(ours.stepsWrong == 0);
    if (shape == Shape::BvhUnderside)
        CHECK(ours.meanHeight < cBase); // Held under the mesh.
    else
        CHECK(ours.meanHeight > 0.3f); // Still on the mesh (the ground is at 0).
    CHECK(ours.queries == 1);          // One engine query a step: one mesh object.
    CHECK(ours.contacts > 0);
    if (std::getenv("BULLETGPU_SOFT_MESH_REPORT") != nullptr)
        WARN(name << "\n  prism: " << line(bullet) << "\n  prism, voxels 0.05: " << line(fine)
                  << "\n  ours: " << line(ours));
}

} // namespace

TEST_CASE("A cloth draped on a bumpy triangle mesh keeps every node above it", "[soft][mesh]") {
    compare(Shape::Bvh, "btBvhTriangleMeshShape");
}

TEST_CASE("A cloth draped on a scaled bumpy triangle mesh keeps every node above it", "[soft][mesh]") {
    compare(Shape::ScaledBvh, "btScaledBvhTriangleMeshShape");
}

TEST_CASE("A cloth draped on a GImpact ball keeps every node outside it", "[soft][mesh]") {
    compare(Shape::GImpact, "btGImpactMeshShape");
}

TEST_CASE("A cloth pressed up under an open triangle mesh stays under it", "[soft][mesh]") {
    compare(Shape::BvhUnderside, "btBvhTriangleMeshShape, from below");
}

TEST_CASE("A cloth hanging over the rim of a small open mesh never goes through it", "[soft][mesh]") {
    compare(Shape::SmallBvh, "btBvhTriangleMeshShape, small");
}
