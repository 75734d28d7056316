// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/common/broadphase_factory.h"
#include "demos/scene/scene_world.h"

#include <memory>
#include <string>

namespace bulletgpu::test {

/// The scene file `file` of scenes/ on dbvt, its soft bodies on `softSolver` (a demo
/// --soft-solver name; empty: the scene's default).
inline std::unique_ptr<demo::SceneWorld> loadSceneWithSoftSolver(const std::string& file,
                                                                 const std::string& softSolver = "") {
    demo::SceneLoadOptions options;
    options.softSolver = softSolver;
    return demo::loadSceneFile(
        std::string(BULLETGPU_SCENES_DIR) + "/" + file,
        [](const btVector3& min, const btVector3& max, int maxProxies) {
            return demo::makeBroadphase("dbvt", min, max, maxProxies);
        },
        options);
}

} // namespace bulletgpu::test
