// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/Backend.h>
#include <bulletgpu/TriangleMeshSet.h>

#include <functional>

namespace bulletgpu {

/// Settings of a bulletgpu::CollisionDispatcher's mesh narrow phase, fixed at construction.
struct NarrowConfig {
    /// Which backend the mesh contacts use. The environment variable BULLETGPU_BACKEND (cpu, cuda
    /// or auto, in any case, surrounding spaces ignored) overrides Auto, as for the broad phase.
    /// Cuda throws std::runtime_error saying why when no device is usable; Auto takes the device
    /// when one is usable and the CPU otherwise, and the log line says which and why.
    Backend backend = Backend::Auto;
    /// OpenMP threads of the engine (0 or less: OpenMP's default), clamped as
    /// BroadphaseConfig::threads is.
    int threads = 0;
    /// How the contact query walks the pairs' trees: LeafWalk (the default, the faster on the
    /// CPU) walks every leaf anew each step; Fronts keeps a front per mesh pair while the pair
    /// lives and updates it (Wang/Tang 2018), freed with the pair.
    NarrowTraversal traversal = NarrowTraversal::LeafWalk;
    /// The CUDA device checked for Backend::Cuda and Auto. Must be >= 0.
    int cudaDevice = 0;
    /// Whether to log the line that says which backend runs the mesh contacts, at construction.
    bool logBackendChoice = true;
    /// Where log lines go (standard error when empty): the backend line and, once per dispatcher,
    /// a line for a mesh pair skipped because an object's transform is not finite.
    std::function<void(const char* line)> logSink;
};

} // namespace bulletgpu
