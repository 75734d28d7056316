// SPDX-License-Identifier: Zlib
#pragma once

/// Compute backends shared by every BulletGpu engine (broad phase and, later, narrow phase).

namespace bulletgpu {

/// Which processor runs an engine.
enum class Backend {
    Auto, ///< CUDA when built with it and a device is usable, otherwise the CPU.
    Cpu,  ///< OpenMP threads on the host.
    Cuda, ///< A CUDA device; throws std::runtime_error when none is usable.
};

/// Lower-case name of a backend ("auto", "cpu", "cuda").
inline const char* toString(Backend backend) {
    switch (backend) {
        case Backend::Cpu: return "cpu";
        case Backend::Cuda: return "cuda";
        default: return "auto";
    }
}

} // namespace bulletgpu
