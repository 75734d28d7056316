// SPDX-License-Identifier: Zlib
#include "kernels/common/cuda_device.h"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace bulletgpu {

bool builtWithCuda() { return true; }

CudaDeviceProbe probeCudaDevice(int device) {
    CudaDeviceProbe probe;
    int count = 0;
    const cudaError_t countStatus = cudaGetDeviceCount(&count);
    if (countStatus != cudaSuccess) {
        probe.reason = std::string("the CUDA runtime found no usable driver or device (") +
                       cudaGetErrorName(countStatus) + ": " + cudaGetErrorString(countStatus) + ")";
        cudaGetLastError(); // clear the sticky-free error so later calls start clean
        return probe;
    }
    if (device < 0 || device >= count) {
        probe.reason = "CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(count) +
                       " device(s) present)";
        return probe;
    }
    cudaDeviceProp properties{};
    const cudaError_t propStatus = cudaGetDeviceProperties(&properties, device);
    if (propStatus != cudaSuccess) {
        probe.reason = std::string("cannot query CUDA device ") + std::to_string(device) + " (" +
                       cudaGetErrorName(propStatus) + ")";
        cudaGetLastError();
        return probe;
    }
    probe.usable = true;
    probe.name = properties.name;
    return probe;
}

int cudaDeviceCount() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return count;
}

std::string usableCudaDeviceName(int device) {
    const CudaDeviceProbe probe = probeCudaDevice(device);
    if (!probe.usable) {
        throw std::runtime_error("bulletgpu: cannot use CUDA device " + std::to_string(device) + ": " + probe.reason);
    }
    return probe.name;
}

} // namespace bulletgpu
