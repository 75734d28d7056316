// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/Backend.h>
#include <bulletgpu/MeshCollisionAlgorithm.h>
#include <bulletgpu/NarrowConfig.h>

#include <BulletCollision/CollisionDispatch/btCollisionDispatcher.h>

#include <cstdint>
#include <memory>
#include <string>

namespace bulletgpu {

namespace detail {
class MeshCreateFunc;
} // namespace detail

/// Counters and timings of the last dispatch's mesh batch.
struct MeshBatchStats {
    std::uint32_t pairs = 0;           ///< Mesh pairs queried.
    std::uint32_t skippedPairs = 0;    ///< Pairs skipped: a transform, margin or threshold not finite.
    std::uint64_t triangleTests = 0;   ///< Candidate triangle pairs given to the exact tests.
    std::uint64_t featureContacts = 0; ///< Feature pairs the contact query found.
    std::uint64_t solverContacts = 0;  ///< Of those, contacts the solver rules keep (manifold_contact.h).
    std::uint64_t points = 0;          ///< Points handed to the manifolds (at most 4 per pair).
    double queryMs = 0;                ///< The engine's contact query (trees and traversal).
    double totalMs = 0;                ///< The whole batch: placement, query, reduction, manifolds.
};

/// A btCollisionDispatcher whose mesh pairs go to the narrow engine in one batch per step: use it
/// in place of Bullet's (one line), with any broad phase:
///
///     bulletgpu::CollisionDispatcher dispatcher(&configuration);
///
/// Pairs it takes (both orders): btGImpactMeshShape (or a part) against GImpact meshes, static
/// triangle meshes (btBvhTriangleMeshShape, btScaledBvhTriangleMeshShape, btTriangleMeshShape)
/// and convex polyhedra (btBoxShape, btConvexHullShape, btConvexTriangleMeshShape); convex
/// polyhedra against static triangle meshes; spheres (btSphereShape) against GImpact and static
/// meshes, as their centre against the mesh (the points-against-mesh query) within the radius.
/// A compound's children of those types go the same way. Every other pair keeps the algorithm Bullet's configuration gives it; so does a pair whose
/// mesh cannot be read (it is logged). Algorithms registered later for the pairs it takes (for
/// example btGImpactCollisionAlgorithm::registerAlgorithm) become the fallback for GImpact
/// compounds, and the mesh algorithm is put back at the next dispatch.
///
/// Contacts: the engine's contact query within the pair's margins plus its manifold's contact
/// breaking threshold, turned into solver contacts (manifold_contact.h: closed meshes have an
/// inside, open ones are two-sided), then reduced to at most four per pair (deepest first, then
/// the largest area) and added to the pair's persistent manifold with Bullet's
/// btManifoldResult, with setShapeIdentifiersA/B(part, triangle) on mesh sides; then
/// refreshContactPoints. Manifold points keep their impulses across steps as with Bullet's
/// convex algorithms.
class CollisionDispatcher : public btCollisionDispatcher {
public:
    /// A dispatcher over `configuration` (not owned) whose mesh pairs run on the narrow engine.
    /// Throws std::runtime_error when Backend::Cuda is asked for and no device is usable, or
    /// BULLETGPU_BACKEND holds something other than cpu, cuda or auto.
    explicit CollisionDispatcher(btCollisionConfiguration* configuration, const NarrowConfig& config = {});
    /// Frees the engine; the world's algorithms must be gone (remove the objects first).
    ~CollisionDispatcher() override;
    CollisionDispatcher(const CollisionDispatcher&) = delete;
    CollisionDispatcher& operator=(const CollisionDispatcher&) = delete;

    /// Bullet's dispatch with the mesh pairs gathered, then the mesh batch.
    void dispatchAllCollisionPairs(btOverlappingPairCache* pairCache, const btDispatcherInfo& info,
                                   btDispatcher* dispatcher) override;

    /// The backend the mesh contacts run on (Cpu, see NarrowConfig::backend).
    Backend backend() const;
    /// The backend and why, as logged.
    std::string description() const;
    /// Counters of the last dispatch's mesh batch.
    const MeshBatchStats& meshStats() const;
    /// Reads a mesh shape's vertices again after the app moved them and refits the engine meshes
    /// of every object that uses it. GImpact shapes need not be named: one whose local box changed
    /// (postUpdate and updateBound, as Bullet asks) is read again at the next dispatch. Returns
    /// false when no pair uses the shape or its triangles changed (the mesh is then kept as it
    /// was). Throws std::invalid_argument when a vertex is not finite.
    bool refreshMesh(const btCollisionShape* shape);
    /// The engine the mesh pairs run on (its meshes, fronts and counters), for inspection.
    const TriangleMeshSet& engine() const;
    /// Engine meshes in use (one per object and mesh shape of a live mesh pair).
    std::size_t meshInstances() const;

private:
    friend class detail::MeshCreateFunc;
    /// Registers the mesh algorithm for the pairs it takes, keeping what was there as fallback.
    void installMeshAlgorithm();

    std::unique_ptr<detail::MeshBatch> m_batch;
    std::unique_ptr<detail::MeshCreateFunc> m_createFunc;
    btCollisionAlgorithmCreateFunc* m_fallback[MAX_BROADPHASE_COLLISION_TYPES][MAX_BROADPHASE_COLLISION_TYPES] = {};
};

} // namespace bulletgpu
