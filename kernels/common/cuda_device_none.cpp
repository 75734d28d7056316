// SPDX-License-Identifier: Zlib
// The CUDA entry points of a build without the CUDA toolkit.
#include "kernels/common/cuda_device.h"
#include "kernels/sap/pair_finder.h"

#include <stdexcept>

namespace bulletgpu {

bool builtWithCuda() { return false; }

CudaDeviceProbe probeCudaDevice(int) {
    CudaDeviceProbe probe;
    probe.reason = "BulletGpu was built without the CUDA backend (no CUDA toolkit, or BULLETGPU_CUDA=OFF)";
    return probe;
}

int cudaDeviceCount() { return 0; }

std::string usableCudaDeviceName(int device) {
    throw std::runtime_error("bulletgpu: cannot use CUDA device " + std::to_string(device) + ": " +
                             probeCudaDevice(device).reason);
}

std::unique_ptr<PairFinder> createCudaPairFinder(int device) {
    throw std::runtime_error("bulletgpu: CUDA backend requested for device " + std::to_string(device) + ", but " +
                             probeCudaDevice(device).reason);
}

std::vector<std::unique_ptr<PairFinder>> createCudaSlabFinders(int device, int /*count*/) {
    throw std::runtime_error("bulletgpu: CUDA backend requested for device " + std::to_string(device) + ", but " +
                             probeCudaDevice(device).reason);
}

} // namespace bulletgpu
