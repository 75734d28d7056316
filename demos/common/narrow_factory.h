// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/common/name_list.h"
#include "demos/common/phase_timers.h"

#include <bulletgpu/CollisionDispatcher.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace bulletgpu::demo {

/// Every narrow phase for mesh pairs a demo can run on, by its command-line and scene-file name:
/// bullet (btCollisionDispatcher, GImpact through btGImpactCollisionAlgorithm) and bulletgpu
/// (bulletgpu::CollisionDispatcher; -cpu and -cuda fix NarrowConfig::backend).
inline const std::vector<std::string>& narrowPhaseNames() {
    static const std::vector<std::string> names{"bullet", "bulletgpu", "bulletgpu-cpu", "bulletgpu-cuda"};
    return names;
}

/// Whether a demo can make a narrow phase of this name.
inline bool isNarrowPhaseName(const std::string& name) { return holdsName(narrowPhaseNames(), name); }

/// The names narrowPhaseNames() holds, comma-separated, for error messages.
inline std::string narrowPhaseNameList() { return joinedNames(narrowPhaseNames()); }

/// Makes the world's dispatcher for a narrow-phase name, timed into clock. Throws
/// std::invalid_argument for an unknown name (and bulletgpu::CollisionDispatcher's
/// std::runtime_error when bulletgpu-cuda finds no device).
inline std::unique_ptr<btCollisionDispatcher>
makeTimedDispatcher(const std::string& name, btCollisionConfiguration* configuration, PhaseClock& clock) {
    if (name == "bullet") return std::make_unique<TimedDispatcher<btCollisionDispatcher>>(clock, configuration);
    NarrowConfig config;
    if (name == "bulletgpu-cpu") {
        config.backend = Backend::Cpu;
    } else if (name == "bulletgpu-cuda") {
        config.backend = Backend::Cuda;
    } else if (name != "bulletgpu") {
        throw std::invalid_argument("unknown narrow phase '" + name + "' (" + narrowPhaseNameList() + ")");
    }
    return std::make_unique<TimedDispatcher<CollisionDispatcher>>(clock, configuration, config);
}

} // namespace bulletgpu::demo
