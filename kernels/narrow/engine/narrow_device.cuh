// SPDX-License-Identifier: Zlib
#pragma once

#include <cstdint>

/// Device-side helpers shared by the CUDA narrow phase's translation units (the intersection
/// query's narrow_kernels.cuh and the contact query's proximity_kernels.cuh): inline only, no
/// kernels, so that every .cu may include it.

namespace bulletgpu::detail {

/// A rigid transform passed by value (row-major 3x4), or none.
struct DeviceTransform {
    double m[12]; ///< [R | t].
    bool present; ///< False: positions are used as they are.
};

/// Adds the warp's sum of `value` to `total` with one atomic, summed in 64 bits. Every lane of
/// the warp must call it.
__device__ __forceinline__ void addWarpSum(unsigned long long* total, unsigned long long value) {
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    if ((threadIdx.x & 31u) == 0 && value != 0) atomicAdd(total, value);
}

/// The entry of a batch that `item` belongs to, where entry i's items start at first(i): the
/// last of `count` entries (count > 0, first(0) == 0, first non-decreasing) whose first item is
/// at most `item`, by binary search.
template <typename First>
__device__ __forceinline__ std::uint32_t batchEntryOf(std::uint32_t count, std::uint64_t item, const First& first) {
    std::uint32_t low = 0, high = count;
    while (high - low > 1) {
        const std::uint32_t middle = low + (high - low) / 2;
        if (first(middle) <= item) {
            low = middle;
        } else {
            high = middle;
        }
    }
    return low;
}

} // namespace bulletgpu::detail
