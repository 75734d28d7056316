// SPDX-License-Identifier: Zlib
#pragma once

#include <cstddef>

namespace bulletgpu {

/// Bytes in a cache line on the CPUs we run on (x86-64 and most AArch64).
constexpr std::size_t cCacheLineBytes = 64;

/// A value alone on its own cache lines. Use it for per-thread vectors and counters kept side by
/// side in one array: a vector's end pointer changes on every push, and if two threads' values
/// shared a line the cores would pass that line back and forth on every write.
template <typename T>
struct alignas(cCacheLineBytes) CacheLinePadded {
    T value; ///< The thread's own value.
};

} // namespace bulletgpu
