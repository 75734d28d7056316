// SPDX-License-Identifier: Zlib
#include "plugin/backend_choice.h"

#include "kernels/common/cuda_device.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace bulletgpu {

void logLine(const std::string& line) { std::fprintf(stderr, "bulletgpu: %s\n", line.c_str()); }

Backend requestedBackend(const BroadphaseConfig& config) {
    if (config.backend != Backend::Auto) return config.backend;
    const char* variable = std::getenv("BULLETGPU_BACKEND");
    if (variable == nullptr || *variable == '\0') return Backend::Auto;
    const std::string value = variable;
    if (value == "cpu") return Backend::Cpu;
    if (value == "cuda") return Backend::Cuda;
    if (value == "auto") return Backend::Auto;
    throw std::runtime_error("bulletgpu: BULLETGPU_BACKEND must be cpu, cuda or auto, not '" + value + "'");
}

BackendChoice chooseBackend(const BroadphaseConfig& config) {
    BackendChoice choice;
    const Backend requested = requestedBackend(config);
    if (requested == Backend::Cpu) {
        choice.finder = createCpuPairFinder(config.threads);
        choice.reason = choice.finder->description() + ", as requested";
        return choice;
    }
    const CudaDeviceProbe probe = probeCudaDevice(config.cudaDevice);
    if (requested == Backend::Cuda) {
        if (!probe.usable) {
            throw std::runtime_error("bulletgpu: Backend::Cuda requested, but " + probe.reason);
        }
        choice.finder = createCudaPairFinder(config.cudaDevice);
        choice.reason = choice.finder->description() + ", as requested";
        return choice;
    }
    if (probe.usable) {
        try {
            choice.finder = createCudaPairFinder(config.cudaDevice);
            choice.reason = choice.finder->description() + ": a CUDA device is usable";
            return choice;
        } catch (const std::exception& error) {
            choice.finder = createCpuPairFinder(config.threads);
            choice.reason = choice.finder->description() + ": the CUDA device failed (" + error.what() + ")";
            return choice;
        }
    }
    choice.finder = createCpuPairFinder(config.threads);
    choice.reason = choice.finder->description() + ": " + probe.reason;
    return choice;
}

} // namespace bulletgpu
