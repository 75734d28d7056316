// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/Backend.h>

#include <algorithm>
#include <cstdint>

namespace bulletgpu {

/// Where a broad phase runs and into how many slabs it splits the scene.
struct SlabPlan {
    Backend backend = Backend::Cpu; ///< Cpu or Cuda.
    int slabs = 1;                  ///< Slabs (1: no split).

    /// Whether two plans are the same.
    bool operator==(const SlabPlan& other) const { return backend == other.backend && slabs == other.slabs; }
    /// Whether two plans differ.
    bool operator!=(const SlabPlan& other) const { return !(*this == other); }
};

/// Chooses the backend and the number of slabs from the number of objects, as Avril et al.
/// 2014 ask for after seeing 4 GPUs lose to 1 on a 260-object scene. Each step up happens at
/// its threshold and back down only below cHysteresis times it, so a scene hovering around a
/// threshold does not switch every frame.
///
/// On the CPU, bulletgpu-bench-partition on 2 cores (docs/benchmarks/partition-cpu.md) found
/// the threads sharing one sweep faster than one slab per thread at every size from 10^4 to
/// 10^6 cubes, so by default the CPU never splits (cpuSlabObjects = 0); machines with more
/// cores can set a threshold. On one H100 (docs/benchmarks/partition-h100.md) K = 2 and 4 slabs
/// on streams, sharing one copy of the boxes, cost 2.7x and 3.0x one finder at 10^6 cubes, so by
/// default the GPUs never split either (gpuSlabObjects = 0).
///
/// The GPU threshold comes from bulletgpu-bench-broadphase on the H100 machine (docs/benchmarks/
/// broadphase-h100.md): a whole frame (setAabb on every cube, then calculateOverlappingPairs)
/// took 0.28 ms on the GPU against 0.32 ms on its 16 cores at 1,000 moving cubes (about even,
/// with a launch and copy latency the CPU does not pay), and 0.35 against 0.91 ms at 3,000; a
/// 2-core machine's CPU is slower still. So Auto moves to the GPU from 2,000 objects.
struct SlabCostModel {
    /// Objects from which Auto moves the broad phase to a GPU.
    static constexpr std::uint32_t cGpuObjects = 2000;
    /// A step is taken back when the count falls below this fraction of its threshold.
    static constexpr double cHysteresis = 0.75;

    /// The plan for this many objects. allowGpu: Auto or Cuda found a device; forceGpu: Cuda
    /// was asked for. cpuThreads and gpuDevices bound the slabs; current is the plan in use.
    /// cpuSlabObjects: objects from which CPU threads each take a slab (0: never);
    /// gpuSlabObjects: objects from which each of several GPUs takes a slab (0: never).
    static SlabPlan plan(std::uint32_t objects, bool allowGpu, bool forceGpu, int cpuThreads, int gpuDevices,
                         std::uint32_t cpuSlabObjects, std::uint32_t gpuSlabObjects, const SlabPlan& current) {
        const auto above = [&](std::uint32_t threshold, bool inUse) {
            return inUse ? objects >= threshold * cHysteresis : objects >= threshold;
        };
        SlabPlan next;
        const bool onGpu = current.backend == Backend::Cuda;
        if (forceGpu || (allowGpu && above(cGpuObjects, onGpu))) {
            next.backend = Backend::Cuda;
            next.slabs = gpuDevices > 1 && gpuSlabObjects > 0 && above(gpuSlabObjects, onGpu && current.slabs > 1)
                             ? gpuDevices
                             : 1;
            return next;
        }
        next.backend = Backend::Cpu;
        const bool split = !onGpu && current.slabs > 1;
        next.slabs =
            cpuThreads > 1 && cpuSlabObjects > 0 && above(cpuSlabObjects, split) ? std::min(cpuThreads, 64) : 1;
        return next;
    }
};

} // namespace bulletgpu
