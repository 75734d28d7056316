// SPDX-License-Identifier: Zlib
#pragma once

#include "tests/support/ply_mesh.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_skip.h"

#include <cstddef>
#include <fstream>
#include <string>

/// The real ccd-frames scenes (two consecutive frames each, from the shared data folder) that the
/// CUDA narrow-phase, contact-query and CCD tests compare with the CPU on.

namespace bulletgpu::test {

/// One ccd-frames scene: two consecutive frames of it.
struct CcdFrameScene {
    const char* name;      ///< Folder under ccd-frames.
    const char* frames[2]; ///< PLY names at t = 0 and t = 1.
};

/// The scenes: cloth-funnel 227/228, cloth-ball 92/93 and rod-twist 3036/3037.
constexpr CcdFrameScene cCcdFrameScenes[] = {{"cloth-funnel", {"227", "228"}},
                                             {"cloth-ball", {"cloth_ball92", "cloth_ball93"}},
                                             {"rod-twist", {"3036", "3037"}}};

/// How many scenes cCcdFrameScenes holds.
constexpr std::size_t cCcdFrameSceneCount = sizeof(cCcdFrameScenes) / sizeof(cCcdFrameScenes[0]);

/// Reads both frames of `scene` into `frames`; when the first is not in the data folder, skips the
/// test case, saying `missing` (such as "no real data at "), the folder and how to set it, and
/// returns false.
inline bool loadCcdFramesOrSkip(const CcdFrameScene& scene, PlyMesh frames[2],
                                const std::string& missing = "no real data at ") {
    const std::string folder = sharedDataDir() + "/ccd-frames/" + scene.name + "/frames/";
    if (!std::ifstream(folder + scene.frames[0] + ".ply").good()) {
        skipTestCase(missing + folder + " (set BULLETGPU_DATA_DIR)");
        return false;
    }
    frames[0] = readPlyMesh(folder + scene.frames[0] + ".ply");
    frames[1] = readPlyMesh(folder + scene.frames[1] + ".ply");
    return true;
}

} // namespace bulletgpu::test
