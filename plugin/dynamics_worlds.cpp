// SPDX-License-Identifier: Zlib
#include <bulletgpu/DiscreteDynamicsWorld.h>
#include <bulletgpu/SoftRigidDynamicsWorld.h>

namespace bulletgpu {

DiscreteDynamicsWorld::DiscreteDynamicsWorld(btDispatcher* dispatcher, btBroadphaseInterface* broadphase,
                                             btConstraintSolver* constraintSolver,
                                             btCollisionConfiguration* collisionConfiguration)
    : btDiscreteDynamicsWorld(dispatcher, broadphase, constraintSolver, collisionConfiguration) {}

void DiscreteDynamicsWorld::updateAabbs() { m_aabbUpdater.update(*this); }

SoftRigidDynamicsWorld::SoftRigidDynamicsWorld(btDispatcher* dispatcher, btBroadphaseInterface* broadphase,
                                               btConstraintSolver* constraintSolver,
                                               btCollisionConfiguration* collisionConfiguration,
                                               btSoftBodySolver* softBodySolver)
    : btSoftRigidDynamicsWorld(dispatcher, broadphase, constraintSolver, collisionConfiguration, softBodySolver) {}

void SoftRigidDynamicsWorld::updateAabbs() { m_aabbUpdater.update(*this); }

} // namespace bulletgpu
