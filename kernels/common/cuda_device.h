// SPDX-License-Identifier: Zlib
#pragma once

#include <string>

namespace bulletgpu {

/// Outcome of asking the CUDA runtime whether a device can run kernels.
struct CudaDeviceProbe {
    bool usable = false; ///< A device is present and answered.
    std::string name;    ///< Device name when usable.
    std::string reason;  ///< Why not, when not usable (no toolkit at build time, no driver, ...).
};

/// Whether the library was compiled with the CUDA backend.
bool builtWithCuda();

/// Asks the CUDA runtime about a device; never throws. A missing driver
/// (cudaErrorInsufficientDriver) or no device reads as "not usable" with the reason.
CudaDeviceProbe probeCudaDevice(int device);

/// Number of CUDA devices the runtime sees; 0 without a driver, a device or the CUDA backend.
int cudaDeviceCount();

/// The name of a usable device; throws std::runtime_error with the probe's reason otherwise.
std::string usableCudaDeviceName(int device);

} // namespace bulletgpu
