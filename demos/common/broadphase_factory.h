// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/Broadphase.h>

#include <BulletCollision/BroadphaseCollision/btAxisSweep3.h>
#include <BulletCollision/BroadphaseCollision/btDbvtBroadphase.h>
#include <BulletCollision/BroadphaseCollision/btSimpleBroadphase.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace bulletgpu::demo {

/// Every broadphase a demo can run on, by its command-line name.
inline const std::vector<std::string>& broadphaseNames() {
    static const std::vector<std::string> names{"dbvt",      "sap",           "simple",
                                                "bulletgpu", "bulletgpu-cpu", "bulletgpu-cuda"};
    return names;
}

/// The broadphases that run without a GPU (what CI runs every scene with), BulletGpu also split
/// into 3 slabs.
inline const std::vector<std::string>& cpuBroadphaseNames() {
    static const std::vector<std::string> names{"dbvt", "sap", "simple", "bulletgpu-cpu", "bulletgpu-cpu-k3"};
    return names;
}

/// Reads a BulletGpu broadphase name, bulletgpu, bulletgpu-cpu or bulletgpu-cuda, optionally
/// followed by -k<K> for K slabs (1 to 64), e.g. bulletgpu-cpu-k2; returns false for any other name.
inline bool readBulletGpuName(const std::string& name, BroadphaseConfig& config) {
    std::string base = name;
    const std::size_t suffix = name.rfind("-k");
    if (suffix != std::string::npos && suffix + 2 < name.size() &&
        name.find_first_not_of("0123456789", suffix + 2) == std::string::npos) {
        const std::string digits = name.substr(suffix + 2);
        if (digits.size() > 2) return false;
        const int slabs = std::stoi(digits);
        if (slabs < 1 || slabs > 64) return false;
        config.partitions = slabs;
        base = name.substr(0, suffix);
    }
    if (base == "bulletgpu-cpu") {
        config.backend = Backend::Cpu;
    } else if (base == "bulletgpu-cuda") {
        config.backend = Backend::Cuda;
    } else if (base != "bulletgpu") {
        return false;
    }
    return true;
}

/// Whether a demo can make a broadphase of this name.
inline bool isBroadphaseName(const std::string& name) {
    BroadphaseConfig config;
    return name == "dbvt" || name == "sap" || name == "simple" || readBulletGpuName(name, config);
}

/// Makes a broadphase by name: dbvt (btDbvtBroadphase), sap (bt32BitAxisSweep3 over the given
/// bounds), simple (btSimpleBroadphase), bulletgpu (Backend::Auto), bulletgpu-cpu, bulletgpu-cuda,
/// each BulletGpu name with an optional -k<K> for K slabs. Throws std::invalid_argument for an
/// unknown name.
inline std::unique_ptr<btBroadphaseInterface> makeBroadphase(const std::string& name, const btVector3& worldMin,
                                                             const btVector3& worldMax, int maxProxies) {
    const int capacity = std::max(16, maxProxies + 16);
    if (name == "dbvt") return std::make_unique<btDbvtBroadphase>();
    if (name == "sap") return std::make_unique<bt32BitAxisSweep3>(worldMin, worldMax, static_cast<unsigned>(capacity));
    if (name == "simple") return std::make_unique<btSimpleBroadphase>(capacity);
    BroadphaseConfig config;
    config.initialCapacity = static_cast<std::uint32_t>(capacity);
    if (!readBulletGpuName(name, config)) {
        throw std::invalid_argument("unknown broadphase '" + name +
                                    "' (dbvt, sap, simple, bulletgpu, bulletgpu-cpu or bulletgpu-cuda, the last "
                                    "three optionally with -k<slabs>)");
    }
    return std::make_unique<Broadphase>(config);
}

} // namespace bulletgpu::demo
