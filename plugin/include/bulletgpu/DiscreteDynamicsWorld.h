// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/BulkAabbUpdater.h>

#include <BulletDynamics/Dynamics/btDiscreteDynamicsWorld.h>

namespace bulletgpu {

/// A btDiscreteDynamicsWorld whose updateAabbs() computes every box on several threads and
/// hands them to a bulletgpu::Broadphase in one call (BulkAabbUpdater): replace
/// `new btDiscreteDynamicsWorld(...)` with `new bulletgpu::DiscreteDynamicsWorld(...)`, same
/// arguments. The boxes, and so the simulation, are those of btDiscreteDynamicsWorld.
class DiscreteDynamicsWorld : public btDiscreteDynamicsWorld {
public:
    /// The arguments of btDiscreteDynamicsWorld's constructor, with the same ownership.
    DiscreteDynamicsWorld(btDispatcher* dispatcher, btBroadphaseInterface* broadphase,
                          btConstraintSolver* constraintSolver, btCollisionConfiguration* collisionConfiguration);

    /// Bullet's updateAabbs(), for every object at once.
    void updateAabbs() override;

    /// The updater, e.g. to set its threads.
    BulkAabbUpdater& aabbUpdater() { return m_aabbUpdater; }

private:
    BulkAabbUpdater m_aabbUpdater;
};

} // namespace bulletgpu
