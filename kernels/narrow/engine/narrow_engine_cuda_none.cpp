// SPDX-License-Identifier: Zlib
// The CUDA narrow-phase engine of a build without the CUDA toolkit.
#include "kernels/common/cuda_device.h"
#include "kernels/narrow/engine/triangle_mesh_set.h"

#include <stdexcept>
#include <string>

namespace bulletgpu::detail {

std::unique_ptr<NarrowDeviceEngine> createCudaNarrowEngine(int device) {
    throw std::runtime_error("bulletgpu: the CUDA narrow phase was requested on device " + std::to_string(device) +
                             ", but " + probeCudaDevice(device).reason);
}

} // namespace bulletgpu::detail
