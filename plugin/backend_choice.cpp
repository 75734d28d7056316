// SPDX-License-Identifier: Zlib
#include "plugin/backend_choice.h"

#include "kernels/common/cuda_device.h"
#include "kernels/partition/partitioned_pair_finder.h"
#include "kernels/sap/margin_pair_finder.h"

#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace bulletgpu {

void logLine(const std::function<void(const char* line)>& sink, const std::string& line) {
    const std::string prefixed = "bulletgpu: " + line;
    if (sink) {
        sink(prefixed.c_str());
    } else {
        std::fprintf(stderr, "%s\n", prefixed.c_str());
    }
}

void logLine(const BroadphaseConfig& config, const std::string& line) { logLine(config.logSink, line); }

Backend requestedBackend(const BroadphaseConfig& config) {
    if (config.backend != Backend::Auto) return config.backend;
    const char* variable = std::getenv("BULLETGPU_BACKEND");
    if (variable == nullptr) return Backend::Auto;
    const std::string raw = variable;
    const auto isSpace = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    const auto first = std::find_if_not(raw.begin(), raw.end(), isSpace);
    const auto last = std::find_if_not(raw.rbegin(), raw.rend(), isSpace).base();
    std::string value(first, first < last ? last : first);
    std::transform(value.begin(), value.end(), value.begin(),
                   [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
    if (value.empty() || value == "auto") return Backend::Auto;
    if (value == "cpu") return Backend::Cpu;
    if (value == "cuda") return Backend::Cuda;
    throw std::runtime_error("bulletgpu: BULLETGPU_BACKEND must be cpu, cuda or auto (any case), not '" + raw + "'");
}

int cpuThreads(int requested) {
    const int wanted = requested > 0 ? requested : omp_get_max_threads();
    const int cap = std::max(BroadphaseConfig::cMinThreadCap, 4 * omp_get_num_procs());
    return std::clamp(wanted, 1, cap);
}

SlabPlan BackendChoice::plan(std::uint32_t objects, const SlabPlan& current) const {
    if (!autoSlabs) return SlabPlan{allowGpu ? Backend::Cuda : Backend::Cpu, fixedSlabs};
    return SlabCostModel::plan(objects, allowGpu, forceGpu, cpuThreads, static_cast<int>(devices.size()),
                               cpuSlabObjects, gpuSlabObjects, current);
}

namespace {

std::string planText(const BackendChoice& choice) {
    if (!choice.autoSlabs) {
        return std::to_string(choice.fixedSlabs) + " slab" + (choice.fixedSlabs == 1 ? "" : "s") + " as configured";
    }
    std::string text =
        "slabs chosen by object count (CPU: " +
        (choice.cpuSlabObjects == 0 ? std::string("threads share one sweep")
                                    : "one slab per thread from " + std::to_string(choice.cpuSlabObjects) + " objects");
    if (choice.allowGpu && !choice.forceGpu) {
        text += "; CUDA from " + std::to_string(SlabCostModel::cGpuObjects) + " objects";
    }
    if (choice.allowGpu && choice.devices.size() > 1) {
        text += choice.gpuSlabObjects == 0
                    ? std::string("; one GPU")
                    : "; one slab per GPU from " + std::to_string(choice.gpuSlabObjects) + " objects";
    }
    return text + ")";
}

/// The devices a config lists (or every device), each probed. Throws when one is unusable
/// and `strict`; otherwise returns no devices and says why in `reason`.
std::vector<int> usableDevices(const BroadphaseConfig& config, bool strict, std::string& reason) {
    std::vector<int> listed = config.devices;
    if (listed.empty()) {
        listed.push_back(config.cudaDevice);
        const int count = cudaDeviceCount();
        for (int device = 0; device < count; ++device) {
            if (device != config.cudaDevice) listed.push_back(device);
        }
    }
    std::vector<int> usable;
    for (int device : listed) {
        const CudaDeviceProbe probe = probeCudaDevice(device);
        if (probe.usable) {
            usable.push_back(device);
            continue;
        }
        // A device the config names that does not exist is a mistake whenever CUDA works.
        if (strict || (!config.devices.empty() && cudaDeviceCount() > 0)) {
            throw std::runtime_error(
                "bulletgpu: " + std::string(strict ? "Backend::Cuda requested, but " : "config.devices lists ") +
                "CUDA device " + std::to_string(device) + ", which cannot be used: " + probe.reason);
        }
        reason = probe.reason;
        return {};
    }
    return usable;
}

} // namespace

BackendChoice chooseBackend(const BroadphaseConfig& config) {
    if (config.partitions < 0 || config.partitions > cMaxSlabs) {
        throw std::invalid_argument("bulletgpu: BroadphaseConfig::partitions must be 0 (automatic) to " +
                                    std::to_string(cMaxSlabs) + ", not " + std::to_string(config.partitions));
    }
    if (config.cudaDevice < 0) {
        throw std::invalid_argument("bulletgpu: BroadphaseConfig::cudaDevice must be >= 0, not " +
                                    std::to_string(config.cudaDevice));
    }
    for (int device : config.devices) {
        if (device < 0) {
            throw std::invalid_argument("bulletgpu: BroadphaseConfig::devices lists a negative device (" +
                                        std::to_string(device) + ")");
        }
    }
    BackendChoice choice;
    choice.autoSlabs = config.partitions == 0;
    choice.fixedSlabs = std::max(1, config.partitions);
    choice.cpuThreads = cpuThreads(config.threads);
    choice.cpuSlabObjects = config.cpuSlabObjects;
    choice.gpuSlabObjects = config.gpuSlabObjects;
    choice.marginBoxes = config.marginBoxes;
    const Backend requested = requestedBackend(config);
    std::string cpu =
        "CPU backend, " + std::to_string(choice.cpuThreads) + " thread" + (choice.cpuThreads == 1 ? "" : "s");
    const int wanted = config.threads > 0 ? config.threads : omp_get_max_threads();
    if (wanted != choice.cpuThreads) {
        cpu += std::string(config.threads > 0 ? " (BroadphaseConfig::threads " : " (OpenMP's default ") +
               std::to_string(wanted) + " clamped)";
    }
    if (requested == Backend::Cpu) {
        choice.reason = cpu + ", as requested; " + planText(choice);
        return choice;
    }
    std::string why;
    choice.devices = usableDevices(config, requested == Backend::Cuda, why);
    if (requested == Backend::Cuda) {
        choice.allowGpu = choice.forceGpu = true;
        choice.reason = "CUDA backend on " + std::to_string(choice.devices.size()) + " device(s), as requested; " +
                        planText(choice);
        return choice;
    }
    if (choice.devices.empty()) {
        choice.reason = cpu + ": " + why + "; " + planText(choice);
        return choice;
    }
    choice.allowGpu = true;
    choice.reason = "Auto: " + cpu + " and " + std::to_string(choice.devices.size()) + " CUDA device(s) usable; " +
                    planText(choice);
    return choice;
}

std::unique_ptr<PairFinder> createFinder(const BackendChoice& choice, const SlabPlan& plan) {
    if (plan.backend == Backend::Cuda) {
        if (plan.slabs == 1) return createCudaPairFinder(choice.devices.front());
        return createPartitionedCudaPairFinder(plan.slabs, choice.devices);
    }
    std::unique_ptr<PairFinder> sweep = plan.slabs == 1 ? createCpuPairFinder(choice.cpuThreads)
                                                        : createPartitionedCpuPairFinder(plan.slabs, choice.cpuThreads);
    return createMarginPairFinder(std::move(sweep), choice.cpuThreads, choice.marginBoxes);
}

} // namespace bulletgpu
