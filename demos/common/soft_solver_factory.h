// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/common/name_list.h"

#include <bulletgpu/SoftBodySolver.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace bulletgpu::demo {

/// Every soft-body solver a soft scene can run on, by its command-line name: bullet (Bullet's
/// btDefaultSoftBodySolver, which the world makes itself) and bulletgpu
/// (bulletgpu::SoftBodySolver, cloth and rope self-collision; -cpu and -cuda fix
/// SoftCollisionConfig::backend).
inline const std::vector<std::string>& softSolverNames() {
    static const std::vector<std::string> names{"bullet", "bulletgpu", "bulletgpu-cpu", "bulletgpu-cuda"};
    return names;
}

/// Whether a demo can make a soft-body solver of this name.
inline bool isSoftSolverName(const std::string& name) { return holdsName(softSolverNames(), name); }

/// The names softSolverNames() holds, comma-separated, for error messages.
inline std::string softSolverNameList() { return joinedNames(softSolverNames()); }

/// The SoftCollisionConfig of a bulletgpu name: the default for bulletgpu, its backend fixed to
/// Cpu or Cuda for bulletgpu-cpu and bulletgpu-cuda. Throws std::invalid_argument for any other
/// name (bullet included: it has no config).
inline SoftCollisionConfig softCollisionConfig(const std::string& name) {
    SoftCollisionConfig config;
    if (name == "bulletgpu-cpu") {
        config.backend = Backend::Cpu;
    } else if (name == "bulletgpu-cuda") {
        config.backend = Backend::Cuda;
    } else if (name != "bulletgpu") {
        throw std::invalid_argument("unknown soft-body solver '" + name + "' (" + softSolverNameList() + ")");
    }
    return config;
}

/// Makes the soft-body solver of a name: null for bullet (btSoftRigidDynamicsWorld then makes
/// its own btDefaultSoftBodySolver, as without a solver argument), a bulletgpu::SoftBodySolver
/// with softCollisionConfig(name) otherwise. Throws std::invalid_argument for an unknown name
/// (and SoftBodySolver's std::runtime_error when bulletgpu-cuda finds no device).
inline std::unique_ptr<btSoftBodySolver> makeSoftSolver(const std::string& name) {
    if (name == "bullet") return nullptr;
    return std::make_unique<SoftBodySolver>(softCollisionConfig(name));
}

} // namespace bulletgpu::demo
