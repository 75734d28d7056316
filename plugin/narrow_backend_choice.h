// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/Backend.h>

#include <string>

/// The backend choice of the plugin's narrow-phase engines (the mesh dispatcher's contacts, the
/// soft-body solver's queries), written once for both.

namespace bulletgpu::detail {

/// The backend an engine runs on and the log line that says why.
struct NarrowBackendChoice {
    Backend backend;  ///< Cpu or Cuda.
    std::string line; ///< The one log line, naming `what` the engine does.
};

/// Resolves `asked` after BULLETGPU_BACKEND has overridden Auto: Cpu stays; Cuda takes device
/// `cudaDevice` and throws std::runtime_error saying why when it is not usable; Auto takes that
/// device when it is usable and the CPU otherwise. `what` names the work in the line ("mesh
/// contacts"), `threads` the CPU backend's OpenMP threads. Throws std::invalid_argument for a
/// negative device.
NarrowBackendChoice chooseNarrowBackend(Backend asked, int cudaDevice, int threads, const std::string& what);

} // namespace bulletgpu::detail
