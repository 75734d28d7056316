// SPDX-License-Identifier: Zlib
// The CUDA sphere-chain solver of a build without the CUDA toolkit.
#include "kernels/chain/sphere_chain.h"
#include "kernels/common/cuda_device.h"

#include <stdexcept>
#include <string>

namespace bulletgpu::detail {

std::unique_ptr<ChainSolver> createCudaChainSolver(int device) {
    throw std::runtime_error("bulletgpu: CUDA sphere chains requested on device " + std::to_string(device) + ", but " +
                             probeCudaDevice(device).reason);
}

} // namespace bulletgpu::detail
