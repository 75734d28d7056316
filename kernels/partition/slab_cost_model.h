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
/// cores can set a threshold. The GPU thresholds are first estimates that no GPU run has
/// confirmed yet.
struct SlabCostModel {
    /// Objects from which Auto moves the broad phase to a GPU.
    static constexpr std::uint32_t cGpuObjects = 20000;
    /// Objects from which the scene is split across several GPUs, one slab each.
    static constexpr std::uint32_t cMultiGpuObjects = 500000;
    /// A step is taken back when the count falls below this fraction of its threshold.
    static constexpr double cHysteresis = 0.75;

    /// The plan for this many objects. allowGpu: Auto or Cuda found a device; forceGpu: Cuda
    /// was asked for. cpuThreads and gpuDevices bound the slabs; current is the plan in use.
    /// cpuSlabObjects: objects from which CPU threads each take a slab (0: never).
    static SlabPlan plan(std::uint32_t objects, bool allowGpu, bool forceGpu, int cpuThreads, int gpuDevices,
                         std::uint32_t cpuSlabObjects, const SlabPlan& current) {
        const auto above = [&](std::uint32_t threshold, bool inUse) {
            return inUse ? objects >= threshold * cHysteresis : objects >= threshold;
        };
        SlabPlan next;
        const bool onGpu = current.backend == Backend::Cuda;
        if (forceGpu || (allowGpu && above(cGpuObjects, onGpu))) {
            next.backend = Backend::Cuda;
            next.slabs = gpuDevices > 1 && above(cMultiGpuObjects, onGpu && current.slabs > 1) ? gpuDevices : 1;
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
