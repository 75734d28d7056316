// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/partition/slab_cost_model.h"
#include "kernels/sap/pair_finder.h"

#include <bulletgpu/Broadphase.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace bulletgpu {

/// What a config allows: which backends, which devices, how many CPU threads.
struct BackendChoice {
    bool allowGpu = false;            ///< A CUDA device is usable and the config lets the broad phase use it.
    bool forceGpu = false;            ///< Backend::Cuda was asked for.
    bool autoSlabs = true;            ///< partitions == 0: the cost model picks the plan as the scene grows.
    int fixedSlabs = 1;               ///< The slabs asked for when not automatic.
    int cpuThreads = 1;               ///< Host threads of the CPU backend.
    std::uint32_t cpuSlabObjects = 0; ///< Objects from which the CPU splits into slabs (0: never).
    std::uint32_t gpuSlabObjects = 0; ///< Objects from which several GPUs split the scene (0: never).
    std::vector<int> devices;         ///< Usable CUDA devices, in slab order.
    MarginBoxes marginBoxes = MarginBoxes::Auto; ///< Whether the CPU backend sweeps margin boxes.
    std::string reason;                          ///< The one log line: the backend, and why.

    /// The plan for this many objects, given the plan in use.
    SlabPlan plan(std::uint32_t objects, const SlabPlan& current) const;
};

/// The backend a config asks for after BULLETGPU_BACKEND (cpu|cuda|auto, in any case, surrounding
/// whitespace ignored; blank is unset) has overridden Auto. Throws std::runtime_error for any
/// other value of the variable.
Backend requestedBackend(const BroadphaseConfig& config);

/// The CPU threads a `threads` setting gives: OpenMP's default for 0 or less, clamped to
/// 1..max(BroadphaseConfig::cMinThreadCap, 4 x omp_get_num_procs()).
int cpuThreads(int requested);

/// Checks a config and finds what it allows. Throws std::invalid_argument for partitions
/// outside [0, 64] or a negative device (in `devices` or `cudaDevice`), and std::runtime_error
/// saying why when Backend::Cuda is asked for and a device cannot be used, or a listed device
/// does not exist.
BackendChoice chooseBackend(const BroadphaseConfig& config);

/// Creates the finder of a plan. Throws std::runtime_error when a CUDA device fails.
std::unique_ptr<PairFinder> createFinder(const BackendChoice& choice, const SlabPlan& plan);

/// Writes one line, prefixed "bulletgpu: ", to `sink` (standard error when it is empty).
void logLine(const std::function<void(const char* line)>& sink, const std::string& line);

/// Writes one line, prefixed "bulletgpu: ", to the config's log sink (standard error when it has none).
void logLine(const BroadphaseConfig& config, const std::string& line);

} // namespace bulletgpu
