// SPDX-License-Identifier: Zlib
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#if defined(__CUDACC__)
#include "kernels/common/cuda_check.h"

#include <utility>
#endif

/// Launch geometry of the element-wise CUDA kernels: one thread per item, fixed block size.

namespace bulletgpu {

/// Threads per block of every element-wise kernel (their __launch_bounds__).
constexpr int cBlockSize = 256;

/// Blocks that give each of `items` its own thread; throws when the grid would be too large.
inline unsigned int blocksFor(std::uint64_t items) {
    const std::uint64_t blocks = (items + cBlockSize - 1) / cBlockSize;
    if (blocks > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) {
        throw std::length_error("bulletgpu: " + std::to_string(items) + " items exceed one CUDA grid");
    }
    return static_cast<unsigned int>(blocks);
}

#if defined(__CUDACC__)

/// Index of the calling thread in a one-dimensional grid, in 64 bits.
__device__ __forceinline__ std::uint64_t globalThreadIndex() {
    return static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

/// Launches `kernel` with one thread per item on `stream` and checks the launch; launches
/// nothing when there are no items.
template <typename... Params, typename... Args>
void launchPerItem(cudaStream_t stream, std::uint64_t items, void (*kernel)(Params...), Args&&... args) {
    if (items == 0) return;
    kernel<<<blocksFor(items), cBlockSize, 0, stream>>>(std::forward<Args>(args)...);
    BULLETGPU_CUDA_CHECK_LAUNCH(stream);
}

#endif

} // namespace bulletgpu
