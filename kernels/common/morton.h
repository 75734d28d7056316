// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"

#include <cstdint>

/// 30-bit Morton codes (10 bits an axis), shared by every hierarchy built over sorted codes:
/// the narrow phase's LBVH and the broad phase's ray/box query tree, on the CPU and CUDA.

namespace bulletgpu {

/// Cells of the Morton grid along each axis.
constexpr std::uint32_t cMortonCells = 1024;

/// Spreads the low 10 bits of v to every third bit.
BULLETGPU_HD std::uint32_t spreadBits10(std::uint32_t v) {
    v &= cMortonCells - 1;
    v = (v | (v << 16)) & 0x030000ffu;
    v = (v | (v << 8)) & 0x0300f00fu;
    v = (v | (v << 4)) & 0x030c30c3u;
    v = (v | (v << 2)) & 0x09249249u;
    return v;
}

/// Morton code of the grid cell (x, y, z), each below cMortonCells; x takes the highest bit.
BULLETGPU_HD std::uint32_t mortonCodeOfCell(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
    return (spreadBits10(x) << 2) | (spreadBits10(y) << 1) | spreadBits10(z);
}

/// The grid cell of a coordinate already scaled to cells: floor, clamped to [0, cMortonCells - 1]
/// (NaN goes to 0).
BULLETGPU_HD std::uint32_t mortonCell(float scaled) {
    const float last = static_cast<float>(cMortonCells - 1);
    return scaled >= last ? cMortonCells - 1 : (scaled > 0.0f ? static_cast<std::uint32_t>(scaled) : 0u);
}

/// 30-bit Morton code of a point with coordinates in [0, 1] (clamped).
BULLETGPU_HD std::uint32_t mortonCode30(float x, float y, float z) {
    const float cells = static_cast<float>(cMortonCells);
    return mortonCodeOfCell(mortonCell(x * cells), mortonCell(y * cells), mortonCell(z * cells));
}

} // namespace bulletgpu
