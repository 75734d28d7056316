// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/common/soft_solver_factory.h"

#include <bulletgpu/DeformableMultiBodyDynamicsWorld.h>

#include <BulletSoftBody/btDeformableBodySolver.h>
#include <BulletSoftBody/btDeformableMultiBodyConstraintSolver.h>
#include <BulletSoftBody/btDeformableMultiBodyDynamicsWorld.h>

#include <memory>
#include <string>

namespace bulletgpu::demo {

/// Makes the deformable world of a soft-body solver name (softSolverNames()): Bullet's
/// btDeformableMultiBodyDynamicsWorld for bullet, bulletgpu::DeformableMultiBodyDynamicsWorld
/// with softCollisionConfig(name) otherwise (the engine's cloth self-collision). The arguments
/// are btDeformableMultiBodyDynamicsWorld's, not owned. Throws std::invalid_argument for an
/// unknown name (and the world's std::runtime_error when bulletgpu-cuda finds no device).
inline std::unique_ptr<btDeformableMultiBodyDynamicsWorld>
makeDeformableWorld(const std::string& name, btDispatcher* dispatcher, btBroadphaseInterface* broadphase,
                    btDeformableMultiBodyConstraintSolver* solver, btCollisionConfiguration* configuration,
                    btDeformableBodySolver* deformableSolver) {
    if (name == "bullet") {
        return std::make_unique<btDeformableMultiBodyDynamicsWorld>(dispatcher, broadphase, solver, configuration,
                                                                    deformableSolver);
    }
    return std::make_unique<DeformableMultiBodyDynamicsWorld>(dispatcher, broadphase, solver, configuration,
                                                              deformableSolver, softCollisionConfig(name));
}

} // namespace bulletgpu::demo
