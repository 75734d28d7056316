// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/BulkAabbUpdater.h>

#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>

namespace bulletgpu {

/// A btSoftRigidDynamicsWorld whose updateAabbs() computes every box on several threads and
/// hands them to a bulletgpu::Broadphase in one call (BulkAabbUpdater): replace
/// `new btSoftRigidDynamicsWorld(...)` with `new bulletgpu::SoftRigidDynamicsWorld(...)`, same
/// arguments. Soft bodies keep Bullet's own path: their node bounds reach the broadphase from
/// btSoftBody::updateBounds as before, and their updateAabbs box (the bounds grown by the
/// contact threshold) is computed on the calling thread.
class SoftRigidDynamicsWorld : public btSoftRigidDynamicsWorld {
public:
    /// The arguments of btSoftRigidDynamicsWorld's constructor, with the same ownership.
    SoftRigidDynamicsWorld(btDispatcher* dispatcher, btBroadphaseInterface* broadphase,
                           btConstraintSolver* constraintSolver, btCollisionConfiguration* collisionConfiguration,
                           btSoftBodySolver* softBodySolver = nullptr);

    /// Bullet's updateAabbs(), for every object at once.
    void updateAabbs() override;

    /// The updater, e.g. to set its threads.
    BulkAabbUpdater& aabbUpdater() { return m_aabbUpdater; }

private:
    BulkAabbUpdater m_aabbUpdater;
};

} // namespace bulletgpu
