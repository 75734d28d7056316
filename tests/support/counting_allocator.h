// SPDX-License-Identifier: Zlib
#pragma once

#include <cstddef>
#include <cstdint>

/// Allocation counting for the tests that check that settled frames allocate nothing. Linking
/// counting_allocator.cpp into an executable replaces its global operator new and delete (every
/// form) with ones that count while counting is on; such a test is an executable of its own.

namespace bulletgpu::test {

/// Resets the count and starts counting.
void startCountingAllocations();
/// Stops counting; returns the allocations made since startCountingAllocations.
std::uint64_t stopCountingAllocations();
/// malloc that counts (for hooks such as Bullet's btAlignedAllocSetCustom).
void* countedMalloc(std::size_t size);

/// The allocations `frames` calls of `frame(f)` make.
template <typename Frame>
std::uint64_t allocationsDuring(int frames, Frame frame) {
    startCountingAllocations();
    for (int f = 0; f < frames; ++f) frame(f);
    return stopCountingAllocations();
}

} // namespace bulletgpu::test
