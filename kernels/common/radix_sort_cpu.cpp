// SPDX-License-Identifier: Zlib
#include "kernels/common/radix_sort_cpu.h"

#include <array>
#include <utility>

namespace bulletgpu {
namespace {

constexpr int cDigitBits = 11;
constexpr std::uint32_t cBuckets = 1u << cDigitBits;
constexpr std::uint32_t cDigitMask = cBuckets - 1;

/// Counts digits; returns false when every key has the same digit (the pass can be skipped).
template <typename Key>
bool countDigits(const Key* keys, std::size_t count, int shift, std::array<std::uint32_t, cBuckets>& offsets) {
    offsets.fill(0);
    for (std::size_t i = 0; i < count; ++i) ++offsets[(keys[i] >> shift) & cDigitMask];
    std::uint32_t sum = 0;
    for (std::uint32_t& bucket : offsets) {
        if (bucket == count) return false;
        const std::uint32_t n = bucket;
        bucket = sum;
        sum += n;
    }
    return true;
}

} // namespace

int bitWidth(std::uint32_t maxValue) {
    int bits = 0;
    while (bits < 32 && (maxValue >> bits) != 0) ++bits;
    return bits;
}

void RadixSorterCpu::sortPairs(std::vector<std::uint32_t>& keys, std::vector<std::uint32_t>& values, std::size_t count) {
    if (m_keyScratch.size() < count) {
        m_keyScratch.resize(count);
        m_valueScratch.resize(count);
    }
    std::uint32_t* srcKeys = keys.data();
    std::uint32_t* srcValues = values.data();
    std::uint32_t* dstKeys = m_keyScratch.data();
    std::uint32_t* dstValues = m_valueScratch.data();
    std::array<std::uint32_t, cBuckets> offsets;
    for (int shift = 0; shift < 32; shift += cDigitBits) {
        if (!countDigits(srcKeys, count, shift, offsets)) continue;
        for (std::size_t i = 0; i < count; ++i) {
            const std::uint32_t at = offsets[(srcKeys[i] >> shift) & cDigitMask]++;
            dstKeys[at] = srcKeys[i];
            dstValues[at] = srcValues[i];
        }
        std::swap(srcKeys, dstKeys);
        std::swap(srcValues, dstValues);
    }
    if (srcKeys != keys.data()) {
        std::copy(srcKeys, srcKeys + count, keys.data());
        std::copy(srcValues, srcValues + count, values.data());
    }
}

void RadixSorterCpu::sortKeys64(std::vector<std::uint64_t>& keys, std::size_t count, int lowBits, int highBits) {
    if (m_key64Scratch.size() < count) m_key64Scratch.resize(count);
    std::uint64_t* src = keys.data();
    std::uint64_t* dst = m_key64Scratch.data();
    std::array<std::uint32_t, cBuckets> offsets;
    auto pass = [&](int shift) {
        if (!countDigits(src, count, shift, offsets)) return;
        for (std::size_t i = 0; i < count; ++i) dst[offsets[(src[i] >> shift) & cDigitMask]++] = src[i];
        std::swap(src, dst);
    };
    for (int shift = 0; shift < lowBits; shift += cDigitBits) pass(shift);
    for (int shift = 32; shift < 32 + highBits; shift += cDigitBits) pass(shift);
    if (src != keys.data()) std::copy(src, src + count, keys.data());
}

} // namespace bulletgpu
