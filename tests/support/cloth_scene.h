// SPDX-License-Identifier: Zlib
#pragma once

#include "support/soft_world.h"

#include "kernels/narrow/geometry/triangle_intersection.h"

#include <bulletgpu/TriangleMeshSet.h>

#include <BulletSoftBody/btSoftBodyHelpers.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#include <btBulletDynamicsCommon.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace bulletgpu::test {

/// A soft-rigid world with a static ground box (top at y = 0) and cloths and ropes, owning
/// everything.
class ClothWorld {
public:
    /// A world whose soft bodies use `softSolver` (Bullet's default when null).
    explicit ClothWorld(std::unique_ptr<btSoftBodySolver> softSolver)
        : m_dispatcher(&m_configuration), m_softSolver(std::move(softSolver)),
          m_world(&m_dispatcher, &m_broadphase, &m_solver, &m_configuration, m_softSolver.get()),
          m_groundShape(btVector3(5, 0.5, 5)) {
        setUpSoftWorld(m_world, &m_broadphase, &m_dispatcher, btVector3(0, -10, 0));
        btTransform at;
        at.setIdentity();
        at.setOrigin(btVector3(0, -0.5, 0));
        m_ground.setCollisionShape(&m_groundShape);
        m_ground.setWorldTransform(at);
        m_world.addCollisionObject(&m_ground);
    }
    ~ClothWorld() {
        for (auto& cloth : m_cloths) m_world.removeSoftBody(cloth.get());
        m_world.removeCollisionObject(&m_ground);
    }
    ClothWorld(const ClothWorld&) = delete;
    ClothWorld& operator=(const ClothWorld&) = delete;

    /// Adds a `nodes` x `across` patch (`nodes` x `nodes` when `across` is 0) with corners c00,
    /// c10, c01, c11 (CreatePatch, pinned corners by `fixeds`), collision margin `margin`, bending
    /// links of distance 2.
    btSoftBody* addPatch(const btVector3& c00, const btVector3& c10, const btVector3& c01, const btVector3& c11,
                         int nodes, int fixeds, btScalar margin, int across = 0) {
        btSoftBody* body = btSoftBodyHelpers::CreatePatch(m_world.getWorldInfo(), c00, c10, c01, c11, nodes,
                                                          across > 0 ? across : nodes, fixeds, true);
        body->getCollisionShape()->setMargin(margin);
        body->generateBendingConstraints(2);
        body->m_cfg.piterations = 4;
        body->setTotalMass(1);
        m_cloths.emplace_back(body);
        m_world.addSoftBody(body);
        return body;
    }

    /// Adds a rope of `nodes` nodes from `from` to `to` (CreateRope, ends pinned by `fixeds`),
    /// collision margin `margin`.
    btSoftBody* addRope(const btVector3& from, const btVector3& to, int nodes, int fixeds, btScalar margin) {
        btSoftBody* body = btSoftBodyHelpers::CreateRope(m_world.getWorldInfo(), from, to, nodes - 2, fixeds);
        body->getCollisionShape()->setMargin(margin);
        body->m_cfg.piterations = 4;
        body->setTotalMass(1);
        m_cloths.emplace_back(body);
        m_world.addSoftBody(body);
        return body;
    }

    /// Removes and deletes `body`.
    void removeCloth(btSoftBody* body) {
        m_world.removeSoftBody(body);
        for (auto it = m_cloths.begin(); it != m_cloths.end(); ++it)
            if (it->get() == body) {
                m_cloths.erase(it);
                break;
            }
    }

    /// The world.
    btSoftRigidDynamicsWorld& world() { return m_world; }

private:
    btSoftBodyRigidBodyCollisionConfiguration m_configuration;
    btCollisionDispatcher m_dispatcher;
    btDbvtBroadphase m_broadphase;
    btSequentialImpulseConstraintSolver m_solver;
    std::unique_ptr<btSoftBodySolver> m_softSolver;
    btSoftRigidDynamicsWorld m_world;
    btBoxShape m_groundShape;
    btCollisionObject m_ground;
    std::vector<std::unique_ptr<btSoftBody>> m_cloths;
};

/// Three node indices per face of `body`.
inline std::vector<std::uint32_t> faceIndices(const btSoftBody& body) {
    std::vector<std::uint32_t> indices;
    for (int f = 0; f < body.m_faces.size(); ++f)
        for (int k = 0; k < 3; ++k)
            indices.push_back(static_cast<std::uint32_t>(body.m_faces[f].m_n[k] - &body.m_nodes[0]));
    return indices;
}

/// Node positions of `body` as floats.
inline std::vector<float> nodePositions(const btSoftBody& body) {
    std::vector<float> positions;
    for (int n = 0; n < body.m_nodes.size(); ++n)
        for (int k = 0; k < 3; ++k) positions.push_back(static_cast<float>(body.m_nodes[n].m_x[k]));
    return positions;
}

/// Counts the pairs of triangles sharing no vertex that meet, with the engine's discrete query.
class IntersectionCounter {
public:
    /// A counter for `body`'s faces.
    explicit IntersectionCounter(const btSoftBody& body) : m_set(Backend::Cpu, 1), m_indices(faceIndices(body)) {
        const std::vector<float> positions = nodePositions(body);
        m_mesh = m_set.addMesh(positions.data(), static_cast<std::uint32_t>(body.m_nodes.size()), m_indices.data(),
                               static_cast<std::uint32_t>(m_indices.size() / 3));
    }
    /// Intersecting pairs at the body's current positions.
    std::size_t count(const btSoftBody& body) {
        const std::vector<float> positions = nodePositions(body);
        m_set.setPositions(m_mesh, positions.data());
        m_set.findSelfContacts(m_mesh, m_contacts);
        return m_contacts.size();
    }

private:
    TriangleMeshSet m_set;
    std::vector<std::uint32_t> m_indices;
    std::uint32_t m_mesh = 0;
    std::vector<TriangleContact> m_contacts;
};

/// The same count by brute force over every triangle pair (exact test, float positions).
inline std::size_t bruteForceIntersections(const btSoftBody& body) {
    const std::vector<std::uint32_t> indices = faceIndices(body);
    const std::vector<float> positions = nodePositions(body);
    const std::size_t faces = indices.size() / 3;
    const auto triangle = [&](std::size_t f) {
        Triangle3d t;
        for (int k = 0; k < 3; ++k)
            for (int a = 0; a < 3; ++a) t.p[k].v[a] = positions[3 * indices[3 * f + k] + a];
        return t;
    };
    std::size_t hits = 0;
    for (std::size_t i = 0; i < faces; ++i)
        for (std::size_t j = i + 1; j < faces; ++j) {
            bool shared = false;
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b) shared = shared || indices[3 * i + a] == indices[3 * j + b];
            if (!shared && trianglesIntersect(triangle(i), triangle(j))) ++hits;
        }
    return hits;
}

} // namespace bulletgpu::test
