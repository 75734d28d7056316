// SPDX-License-Identifier: Zlib
#pragma once

#include <cstdint>
#include <vector>

namespace bulletgpu {

/// Stable least-significant-digit radix sorts on the host, with 11-bit digits, on up to
/// `threads` OpenMP threads (each counts and scatters one contiguous run). Passes whose
/// digit is the same for every key are skipped. Scratch vectors grow once and are reused,
/// so sorting every frame allocates nothing after the first frames.
class RadixSorterCpu {
public:
    /// Sorts keys[0, count) ascending and applies the same permutation to values.
    void sortPairs(std::vector<std::uint32_t>& keys, std::vector<std::uint32_t>& values, std::size_t count,
                   int threads = 1);

    /// Sorts keys[0, count) stably by their bits [0, lowBits) and [32, 32 + highBits), ignoring
    /// the others: keys that agree on those bits keep their order (ascending when the other bits
    /// are zero, or already ascending among such keys).
    void sortKeys64(std::vector<std::uint64_t>& keys, std::size_t count, int lowBits, int highBits, int threads = 1);

private:
    std::vector<std::uint32_t> m_keyScratch;
    std::vector<std::uint32_t> m_valueScratch;
    std::vector<std::uint64_t> m_key64Scratch;
    std::vector<std::uint32_t> m_histograms; // threads x buckets
};

/// Number of bits needed to write values up to and including maxValue.
int bitWidth(std::uint32_t maxValue);

} // namespace bulletgpu
