// SPDX-License-Identifier: Zlib
#pragma once

#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>

namespace bulletgpu::test {

/// Gives a soft-rigid world and its soft-body info the same gravity, broadphase and dispatcher,
/// and initializes the info's sparse SDF, as Bullet's soft-body demos do.
inline void setUpSoftWorld(btSoftRigidDynamicsWorld& world, btBroadphaseInterface* broadphase, btDispatcher* dispatcher,
                           const btVector3& gravity) {
    world.setGravity(gravity);
    btSoftBodyWorldInfo& info = world.getWorldInfo();
    info.m_broadphase = broadphase;
    info.m_dispatcher = dispatcher;
    info.m_gravity = gravity;
    info.m_sparsesdf.Initialize();
}

} // namespace bulletgpu::test
