// SPDX-License-Identifier: Zlib
#include <bulletgpu/MeshCollisionAlgorithm.h>

#include "mesh_batch.h"

#include <BulletCollision/CollisionDispatch/btCollisionObjectWrapper.h>
#include <BulletCollision/CollisionDispatch/btManifoldResult.h>
#include <BulletCollision/BroadphaseCollision/btDispatcher.h>

namespace bulletgpu {

MeshCollisionAlgorithm::MeshCollisionAlgorithm(const btCollisionAlgorithmConstructionInfo& ci,
                                               const btCollisionObjectWrapper* body0,
                                               const btCollisionObjectWrapper* body1, detail::MeshBatch& batch,
                                               std::uint32_t meshA, std::uint32_t meshB)
    : btCollisionAlgorithm(ci), m_batch(&batch), m_manifold(ci.m_manifold),
      m_body0(body0->getCollisionObject()), m_mesh{meshA, meshB}, m_ownsManifold(false) {
    if (m_manifold == nullptr) {
        m_manifold = m_dispatcher->getNewManifold(body0->getCollisionObject(), body1->getCollisionObject());
        m_ownsManifold = true;
    }
}

MeshCollisionAlgorithm::~MeshCollisionAlgorithm() {
    m_batch->cancel(*this);
    for (const std::uint32_t mesh : m_mesh) {
        if (mesh != cNoMesh) m_batch->instances().release(mesh);
    }
    if (m_ownsManifold) m_dispatcher->releaseManifold(m_manifold);
}

void MeshCollisionAlgorithm::processCollision(const btCollisionObjectWrapper* body0,
                                              const btCollisionObjectWrapper* body1, const btDispatcherInfo&,
                                              btManifoldResult*) {
    m_batch->submit(*this, body0, body1);
}

void MeshCollisionAlgorithm::getAllContactManifolds(btManifoldArray& manifolds) {
    if (m_ownsManifold) manifolds.push_back(m_manifold);
}

} // namespace bulletgpu
