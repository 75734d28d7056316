// SPDX-License-Identifier: Zlib
#include "narrow_backend_choice.h"

#include "backend_choice.h"
#include "kernels/common/cuda_device.h"

#include <stdexcept>

namespace bulletgpu::detail {

NarrowBackendChoice chooseNarrowBackend(Backend asked, int cudaDevice, int threads, const std::string& what) {
    BroadphaseConfig config;
    config.backend = asked;
    const Backend backend = requestedBackend(config);
    if (cudaDevice < 0) throw std::invalid_argument("bulletgpu: the CUDA device for " + what + " must be >= 0");
    const std::string cpu = what + " on the CPU backend, " + std::to_string(threads) + " OpenMP threads";
    if (backend == Backend::Cpu) return {Backend::Cpu, cpu + " (asked for cpu)"};
    const CudaDeviceProbe probe = probeCudaDevice(cudaDevice);
    const std::string device = "CUDA device " + std::to_string(cudaDevice);
    if (backend == Backend::Cuda && !probe.usable) {
        throw std::runtime_error("bulletgpu: Backend::Cuda asked for " + what + ", but " + device +
                                 " is not usable: " + probe.reason);
    }
    if (!probe.usable) return {Backend::Cpu, cpu + " (no GPU: " + probe.reason + ")"};
    return {Backend::Cuda, what + " on " + device + " (" + probe.name +
                               (backend == Backend::Cuda ? ", asked for cuda)" : ", Auto with a usable device)")};
}

} // namespace bulletgpu::detail
