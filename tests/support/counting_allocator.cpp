// SPDX-License-Identifier: Zlib
// The counting global operator new and delete of tests/support/counting_allocator.h.
#include "support/counting_allocator.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

/// Whether allocations are being counted, and how many were made while they were.
std::atomic<bool> gCounting{false};
std::atomic<std::uint64_t> gAllocations{0};

void countAllocation() {
    if (gCounting.load(std::memory_order_relaxed)) gAllocations.fetch_add(1, std::memory_order_relaxed);
}

void* countedAlignedAlloc(std::size_t size, std::size_t alignment) {
    countAllocation();
    const std::size_t rounded = (size + alignment - 1) / alignment * alignment;
    return std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
}

} // namespace

namespace bulletgpu::test {

void startCountingAllocations() {
    gAllocations.store(0);
    gCounting.store(true);
}

std::uint64_t stopCountingAllocations() {
    gCounting.store(false);
    return gAllocations.load();
}

void* countedMalloc(std::size_t size) {
    countAllocation();
    return std::malloc(size == 0 ? 1 : size);
}

} // namespace bulletgpu::test

using bulletgpu::test::countedMalloc;

void* operator new(std::size_t size) {
    if (void* p = countedMalloc(size)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
    if (void* p = countedMalloc(size)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t size, std::align_val_t alignment) {
    if (void* p = countedAlignedAlloc(size, static_cast<std::size_t>(alignment))) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
    if (void* p = countedAlignedAlloc(size, static_cast<std::size_t>(alignment))) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return countedMalloc(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return countedMalloc(size); }
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
    return countedAlignedAlloc(size, static_cast<std::size_t>(alignment));
}
void* operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
    return countedAlignedAlloc(size, static_cast<std::size_t>(alignment));
}
// Every operator new above allocates with malloc, so freeing with free matches. GCC 12 cannot
// see that through the replaced operators and warns where it inlines a new with its delete.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
