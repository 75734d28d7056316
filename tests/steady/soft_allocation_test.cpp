// SPDX-License-Identifier: Zlib
// Steps of a settled cloth allocate nothing in bulletgpu::SoftBodySolver: every operator new of
// this executable is counted while a curtain that folded onto itself lies on the ground (the
// engine's proximity query and the CCD query still run every step), after the warm-up steps of
// the fold in which the buffers reached their sizes. (Bullet's own btAlignedAlloc calls are not counted:
// the soft-body step of Bullet is not ours to change.)
#include "support/cloth_scene.h"

#include <bulletgpu/SoftBodySolver.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

/// Whether allocations are being counted, and how many were made while they were.
std::atomic<bool> gCounting{false};
std::atomic<std::uint64_t> gAllocations{0};

void* countedMalloc(std::size_t size) {
    if (gCounting.load(std::memory_order_relaxed)) gAllocations.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(size == 0 ? 1 : size);
}

void* countedAlignedAlloc(std::size_t size, std::size_t alignment) {
    if (gCounting.load(std::memory_order_relaxed)) gAllocations.fetch_add(1, std::memory_order_relaxed);
    const std::size_t rounded = (size + alignment - 1) / alignment * alignment;
    return std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
}

} // namespace

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
// Every operator new above allocates with malloc or aligned_alloc, so freeing with free matches.
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

TEST_CASE("A folded cloth's steps allocate nothing once sizes settle", "[soft][self][allocation]") {
    bulletgpu::SoftCollisionConfig config;
    config.threads = 1;
    config.skipClearSteps = false; // so that every step runs the CCD query (a settled cloth's steps are clear)
    auto solver = std::make_unique<bulletgpu::SoftBodySolver>(config);
    bulletgpu::SoftBodySolver& ours = *solver;
    bulletgpu::test::ClothWorld world(std::move(solver));
    world.addPatch(btVector3(-1, 0.3, 0), btVector3(1, 0.3, 0), btVector3(-1, 2.3, 0.3), btVector3(1, 2.3, 0.3), 20, 0,
                   0.03f);
    for (int step = 0; step < 400; ++step) world.world().stepSimulation(btScalar(1) / 60, 0);
    gAllocations.store(0);
    gCounting.store(true);
    std::uint64_t queries = 0;
    for (int step = 0; step < 100; ++step) {
        world.world().stepSimulation(btScalar(1) / 60, 0);
        queries += ours.stats().ccdQueries;
    }
    gCounting.store(false);
    CHECK(ours.stats().cloths == 1);
    CHECK(queries >= 100);
    CHECK(gAllocations.load() == 0);
}
