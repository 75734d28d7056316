// SPDX-License-Identifier: Zlib
// The CUDA distance engine of a build without the CUDA toolkit.
#include "kernels/common/cuda_device.h"
#include "kernels/narrow/distance/mesh_distance.h"

#include <stdexcept>
#include <string>

namespace bulletgpu::detail {

std::unique_ptr<DistanceDeviceEngine> createCudaDistanceEngine(int device) {
    throw std::runtime_error("bulletgpu: CUDA mesh distance requested on device " + std::to_string(device) + ", but " +
                             probeCudaDevice(device).reason);
}

} // namespace bulletgpu::detail
