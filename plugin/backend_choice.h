// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/sap/pair_finder.h"

#include <bulletgpu/Broadphase.h>

#include <memory>
#include <string>

namespace bulletgpu {

/// A pair finder on the chosen backend and the one line that says why it was chosen.
struct BackendChoice {
    std::unique_ptr<PairFinder> finder; ///< The finder to use.
    std::string reason;                 ///< The backend and why, e.g. "CPU backend, 2 OpenMP threads: <why not CUDA>".
};

/// The backend a config asks for after BULLETGPU_BACKEND (cpu|cuda|auto) has overridden Auto.
/// Throws std::runtime_error for any other value of the variable.
Backend requestedBackend(const BroadphaseConfig& config);

/// Creates the finder for a config: Cuda throws std::runtime_error saying why when no device
/// can be used; Auto falls back to the CPU and says why.
BackendChoice chooseBackend(const BroadphaseConfig& config);

/// Writes one line to the BulletGpu log (standard error).
void logLine(const std::string& line);

} // namespace bulletgpu
