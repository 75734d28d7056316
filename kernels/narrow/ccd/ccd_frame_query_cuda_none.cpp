// SPDX-License-Identifier: Zlib
// The CUDA whole-frame CCD engine of a build without the CUDA toolkit.
#include "kernels/common/cuda_device.h"
#include "kernels/narrow/ccd/ccd_frame_engine.h"

#include <stdexcept>
#include <string>

namespace bulletgpu::detail {

std::unique_ptr<CcdDeviceEngine> createCudaCcdEngine(int device) {
    throw std::runtime_error("bulletgpu: CUDA CCD requested on device " + std::to_string(device) + ", but " +
                             probeCudaDevice(device).reason);
}

} // namespace bulletgpu::detail
