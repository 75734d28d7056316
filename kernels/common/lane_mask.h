// SPDX-License-Identifier: Zlib
#pragma once

#include <cstdint>

namespace bulletgpu {

/// Number of set bits of a lane mask, computed without the POPCNT instruction (the baseline
/// x86-64 target lacks it, and the compiler would call a library routine instead).
inline std::uint32_t laneCount(std::uint32_t lanes) {
    lanes = lanes - ((lanes >> 1) & 0x55555555u);
    lanes = (lanes & 0x33333333u) + ((lanes >> 2) & 0x33333333u);
    lanes = (lanes + (lanes >> 4)) & 0x0f0f0f0fu;
    return (lanes * 0x01010101u) >> 24;
}

/// Index of the lowest set lane (lanes not zero).
inline std::uint32_t lowestLane(std::uint32_t lanes) { return static_cast<std::uint32_t>(__builtin_ctz(lanes)); }

} // namespace bulletgpu
