// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"

#include <cstdint>
#include <cstring>

/// Per-element box arithmetic shared by the CPU and CUDA paths.

namespace bulletgpu {

/// Maps a float to an unsigned key whose unsigned order is the float order (-0 and +0 adjacent).
BULLETGPU_HD std::uint32_t orderedFloatKey(float value) {
    std::uint32_t bits;
#if defined(__CUDA_ARCH__)
    bits = __float_as_uint(value);
#else
    std::memcpy(&bits, &value, sizeof(bits));
#endif
    return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

/// Inclusive overlap of two intervals: touching counts.
template <typename Real>
BULLETGPU_HD bool intervalsOverlap(Real minA, Real maxA, Real minB, Real maxB) {
    return minA <= maxB && minB <= maxA;
}

/// True when every bound is a number (infinities allowed) and min <= max on every axis.
/// Boxes failing this are empty: they overlap nothing (a NaN box, an inverted box).
template <typename Real>
BULLETGPU_HD bool isUsableBox(Real minX, Real minY, Real minZ, Real maxX, Real maxY, Real maxZ) {
    // Written so that any NaN makes a comparison false.
    return minX <= maxX && minY <= maxY && minZ <= maxZ;
}

/// The float's bits.
BULLETGPU_HD std::uint32_t floatBits(float value) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(value);
#else
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    return bits;
#endif
}

/// The float with these bits.
BULLETGPU_HD float floatFromBits(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
#endif
}

/// The next float below a number (as nextafterf(value, -inf), without the library call): -inf
/// stays, +inf gives the largest float, 0 the smallest negative subnormal; NaN stays.
BULLETGPU_HD float floatStepDown(float value) {
    if (value != value) return value;
    if (value == 0.0f) return -floatFromBits(1u);
    const std::uint32_t bits = floatBits(value);
    if (bits == 0xff800000u) return value;
    return floatFromBits(value > 0.0f ? bits - 1u : bits + 1u);
}

/// The next float above a number (as nextafterf(value, +inf)): +inf stays, -inf gives the
/// lowest float, 0 the smallest positive subnormal; NaN stays.
BULLETGPU_HD float floatStepUp(float value) {
    if (value != value) return value;
    if (value == 0.0f) return floatFromBits(1u);
    const std::uint32_t bits = floatBits(value);
    if (bits == 0x7f800000u) return value;
    return floatFromBits(value > 0.0f ? bits + 1u : bits - 1u);
}

/// Nearest float at or below a double (rounds toward -infinity): as floatStepDown after a
/// conversion that rounded up, in integer arithmetic without branches (whether the conversion
/// rounded up is a coin toss, and box code calls this six times a box).
BULLETGPU_HD float floatBelow(double value) {
    const float f = static_cast<float>(value);
    const std::uint32_t step = static_cast<std::uint32_t>(static_cast<double>(f) > value);
    // A zero that steps down goes to the smallest negative subnormal, one past -0.
    const std::uint32_t bits = floatBits(f) | (static_cast<std::uint32_t>(f == 0.0f) & step) << 31;
    // Negative floats step down by growing their bits, positive ones by shrinking them.
    const std::uint32_t positive = (bits >> 31) - 1u; // all ones when the sign bit is clear
    return floatFromBits(bits + step - ((step << 1) & positive));
}

/// Nearest float at or above a double (rounds toward +infinity), as floatBelow.
BULLETGPU_HD float floatAbove(double value) {
    const float f = static_cast<float>(value);
    const std::uint32_t step = static_cast<std::uint32_t>(static_cast<double>(f) < value);
    // A zero that steps up goes to the smallest positive subnormal, one past +0.
    const std::uint32_t bits = floatBits(f) & ~((static_cast<std::uint32_t>(f == 0.0f) & step) << 31);
    const std::uint32_t positive = (bits >> 31) - 1u;
    return floatFromBits(bits - step + ((step << 1) & positive));
}

/// Canonical key of an unordered pair of slots: lower slot in the high 32 bits.
BULLETGPU_HD std::uint64_t pairKey(std::uint32_t a, std::uint32_t b) {
    const std::uint32_t lo = a < b ? a : b;
    const std::uint32_t hi = a < b ? b : a;
    return (static_cast<std::uint64_t>(lo) << 32) | hi;
}

/// Lower slot of a pair key.
BULLETGPU_HD std::uint32_t pairLow(std::uint64_t key) { return static_cast<std::uint32_t>(key >> 32); }

/// Higher slot of a pair key.
BULLETGPU_HD std::uint32_t pairHigh(std::uint64_t key) { return static_cast<std::uint32_t>(key); }

/// Bullet's group/mask rule: each side's group meets the other's mask.
BULLETGPU_HD bool groupsCollide(std::uint32_t groupA, std::uint32_t maskA, std::uint32_t groupB, std::uint32_t maskB) {
    return (groupA & maskB) != 0 && (groupB & maskA) != 0;
}

} // namespace bulletgpu
