// SPDX-License-Identifier: Zlib
#pragma once

#include <BulletCollision/BroadphaseCollision/btCollisionAlgorithm.h>

#include <cstdint>

class btPersistentManifold;
struct btCollisionObjectWrapper;

namespace bulletgpu {

namespace detail {
class MeshBatch;
} // namespace detail

/// The engine mesh of a sphere's side: none (a sphere is its centre and radius).
constexpr std::uint32_t cNoMesh = 0xffffffffu;

/// The collision algorithm bulletgpu::CollisionDispatcher creates for a pair of mesh shapes (see
/// CollisionDispatcher.h for which). processCollision only hands the pair to the dispatcher's
/// batch; the batch runs the engine's contact query once for every such pair of the step and
/// writes each pair's at most four contacts into its manifold, which persists with its points
/// and impulses while the pair lives. Called outside a dispatch (by user code), it runs a batch
/// of its own pair at once.
class MeshCollisionAlgorithm : public btCollisionAlgorithm {
public:
    /// An algorithm for the wrappers' pair whose engine meshes are meshA and meshB (already
    /// acquired from the batch's instances, released by the destructor). Uses ci.m_manifold when
    /// given, else makes its own manifold.
    MeshCollisionAlgorithm(const btCollisionAlgorithmConstructionInfo& ci, const btCollisionObjectWrapper* body0,
                           const btCollisionObjectWrapper* body1, detail::MeshBatch& batch, std::uint32_t meshA,
                           std::uint32_t meshB);
    /// Cancels a pending request, releases the engine meshes and its own manifold.
    ~MeshCollisionAlgorithm() override;
    MeshCollisionAlgorithm(const MeshCollisionAlgorithm&) = delete;
    MeshCollisionAlgorithm& operator=(const MeshCollisionAlgorithm&) = delete;

    /// Queues the pair for the batch (the contacts are written when the dispatch ends).
    void processCollision(const btCollisionObjectWrapper* body0, const btCollisionObjectWrapper* body1,
                          const btDispatcherInfo& info, btManifoldResult* result) override;
    /// 1: no time of impact (Bullet's worlds never ask; use the CCD query for sweeps).
    btScalar calculateTimeOfImpact(btCollisionObject*, btCollisionObject*, const btDispatcherInfo&,
                                   btManifoldResult*) override {
        return 1;
    }
    /// Appends its manifold when it owns one.
    void getAllContactManifolds(btManifoldArray& manifolds) override;

    /// The manifold its contacts go to.
    btPersistentManifold* manifold() const { return m_manifold; }
    /// Whether it made (and releases) its manifold.
    bool ownsManifold() const { return m_ownsManifold; }
    /// The engine mesh of the object it was made with as body0 (cNoMesh for a sphere).
    std::uint32_t meshOfBody0() const { return m_mesh[0]; }
    /// The engine mesh of the object it was made with as body1 (cNoMesh for a sphere).
    std::uint32_t meshOfBody1() const { return m_mesh[1]; }
    /// The collision object it was made with as body0.
    const btCollisionObject* body0() const { return m_body0; }

private:
    detail::MeshBatch* m_batch;
    btPersistentManifold* m_manifold;
    const btCollisionObject* m_body0;
    std::uint32_t m_mesh[2];
    bool m_ownsManifold;
};

} // namespace bulletgpu
