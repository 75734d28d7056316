// SPDX-License-Identifier: Zlib
#include "kernels/common/radix_sort_cpu.h"

#include <omp.h>

#include <algorithm>
#include <utility>

namespace bulletgpu {
namespace {

constexpr int cDigitBits = 11;
constexpr std::uint32_t cBuckets = 1u << cDigitBits;
constexpr std::uint32_t cDigitMask = cBuckets - 1;
/// Below this many keys a sort runs on one thread.
constexpr std::size_t cParallelThreshold = 1 << 15;

/// One stable counting pass on contiguous runs, one per thread of the team (at most `threads`).
/// Returns false, moving nothing, when every key has the same digit.
template <typename Key, typename Move>
bool radixPass(const Key* keys, std::size_t count, int shift, int threads, std::vector<std::uint32_t>& histograms,
               Move&& move) {
    histograms.assign(static_cast<std::size_t>(threads) * cBuckets, 0);
    bool skip = false;
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num();
        const int team = omp_get_num_threads();
        const std::size_t begin = count * static_cast<std::size_t>(t) / static_cast<std::size_t>(team);
        const std::size_t end = count * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(team);
        std::uint32_t* histogram = histograms.data() + static_cast<std::size_t>(t) * cBuckets;
        for (std::size_t i = begin; i < end; ++i) ++histogram[(keys[i] >> shift) & cDigitMask];
#pragma omp barrier
#pragma omp single
        {
            // Exclusive offsets, digit-major then thread, so each run keeps its order.
            std::uint32_t sum = 0;
            for (std::uint32_t digit = 0; digit < cBuckets; ++digit) {
                const std::uint32_t first = sum;
                for (int k = 0; k < team; ++k) {
                    std::uint32_t& bucket = histograms[static_cast<std::size_t>(k) * cBuckets + digit];
                    const std::uint32_t n = bucket;
                    bucket = sum;
                    sum += n;
                }
                if (sum - first == count) skip = true;
            }
        }
        if (!skip) {
            for (std::size_t i = begin; i < end; ++i) move(i, histogram[(keys[i] >> shift) & cDigitMask]++);
        }
    }
    return !skip;
}

int threadsFor(std::size_t count, int threads) { return count >= cParallelThreshold ? std::max(1, threads) : 1; }

} // namespace

int bitWidth(std::uint32_t maxValue) {
    int bits = 0;
    while (bits < 32 && (maxValue >> bits) != 0) ++bits;
    return bits;
}

void RadixSorterCpu::sortPairs(std::vector<std::uint32_t>& keys, std::vector<std::uint32_t>& values, std::size_t count,
                               int threads) {
    if (m_keyScratch.size() < count) {
        m_keyScratch.resize(count);
        m_valueScratch.resize(count);
    }
    threads = threadsFor(count, threads);
    std::uint32_t* srcKeys = keys.data();
    std::uint32_t* srcValues = values.data();
    std::uint32_t* dstKeys = m_keyScratch.data();
    std::uint32_t* dstValues = m_valueScratch.data();
    for (int shift = 0; shift < 32; shift += cDigitBits) {
        const bool moved = radixPass(srcKeys, count, shift, threads, m_histograms, [&](std::size_t from, std::uint32_t to) {
            dstKeys[to] = srcKeys[from];
            dstValues[to] = srcValues[from];
        });
        if (!moved) continue;
        std::swap(srcKeys, dstKeys);
        std::swap(srcValues, dstValues);
    }
    if (srcKeys != keys.data()) {
        std::copy(srcKeys, srcKeys + count, keys.data());
        std::copy(srcValues, srcValues + count, values.data());
    }
}

void RadixSorterCpu::sortKeys64(std::vector<std::uint64_t>& keys, std::size_t count, int lowBits, int highBits,
                                int threads) {
    if (m_key64Scratch.size() < count) m_key64Scratch.resize(count);
    threads = threadsFor(count, threads);
    std::uint64_t* src = keys.data();
    std::uint64_t* dst = m_key64Scratch.data();
    auto pass = [&](int shift) {
        const bool moved = radixPass(src, count, shift, threads, m_histograms,
                                     [&](std::size_t from, std::uint32_t to) { dst[to] = src[from]; });
        if (moved) std::swap(src, dst);
    };
    for (int shift = 0; shift < lowBits; shift += cDigitBits) pass(shift);
    for (int shift = 32; shift < 32 + highBits; shift += cDigitBits) pass(shift);
    if (src != keys.data()) std::copy(src, src + count, keys.data());
}

} // namespace bulletgpu
