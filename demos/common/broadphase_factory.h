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

/// The broadphases that run without a GPU (what CI runs every scene with).
inline const std::vector<std::string>& cpuBroadphaseNames() {
    static const std::vector<std::string> names{"dbvt", "sap", "simple", "bulletgpu-cpu"};
    return names;
}

/// Makes a broadphase by name: dbvt (btDbvtBroadphase), sap (bt32BitAxisSweep3 over the given
/// bounds), simple (btSimpleBroadphase), bulletgpu (Backend::Auto), bulletgpu-cpu, bulletgpu-cuda.
/// Throws std::invalid_argument for an unknown name.
inline std::unique_ptr<btBroadphaseInterface> makeBroadphase(const std::string& name, const btVector3& worldMin,
                                                             const btVector3& worldMax, int maxProxies) {
    const int capacity = std::max(16, maxProxies + 16);
    if (name == "dbvt") return std::make_unique<btDbvtBroadphase>();
    if (name == "sap") return std::make_unique<bt32BitAxisSweep3>(worldMin, worldMax, static_cast<unsigned>(capacity));
    if (name == "simple") return std::make_unique<btSimpleBroadphase>(capacity);
    BroadphaseConfig config;
    config.initialCapacity = static_cast<std::uint32_t>(capacity);
    if (name == "bulletgpu-cpu") {
        config.backend = Backend::Cpu;
    } else if (name == "bulletgpu-cuda") {
        config.backend = Backend::Cuda;
    } else if (name != "bulletgpu") {
        throw std::invalid_argument("unknown broadphase '" + name +
                                    "' (dbvt, sap, simple, bulletgpu, bulletgpu-cpu or bulletgpu-cuda)");
    }
    return std::make_unique<Broadphase>(config);
}

} // namespace bulletgpu::demo
