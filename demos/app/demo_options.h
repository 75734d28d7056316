// SPDX-License-Identifier: Zlib
#pragma once

#include <string>
#include <vector>

namespace bulletgpu::demo {

/// What bulletgpu-demo was asked to do.
struct DemoOptions {
    std::string scenePath;                ///< Scene file to run.
    std::vector<std::string> broadphases; ///< Broadphases to run it with, in order; the first is the reference.
    std::vector<std::string> narrows;     ///< Narrow phases to run each broadphase with; empty: the scene file's.
    std::vector<std::string> softSolvers; ///< Soft-body solvers to run each of those with; empty: the scene file's.
    /// After each step, count the cloths' intersecting triangle pairs and measure the ropes'
    /// closest non-neighbour nodes.
    bool countSelfIntersections = false;
    int steps = 0;           ///< Steps per run; 0 takes the scene file's own count.
    double scale = 1.0;      ///< Object-count scale for scalable scenes (see SceneLoadOptions).
    std::string jsonPath;    ///< Where to write the JSON report; empty for none.
    std::string csvPath;     ///< Where to write the per-step CSV; empty for none.
    std::string renderDir;   ///< Folder for PNG frames; empty for none.
    int renderEvery = 10;    ///< Steps between rendered frames.
    int renderWidth = 960;   ///< Rendered frame width in pixels.
    int renderHeight = 540;  ///< Rendered frame height in pixels.
    std::string plotPath;    ///< Where to write the step-time chart (PNG); empty for none.
    bool listScenes = false; ///< Print the scene files beside the default one and exit.
};

/// Parses the command line; throws std::invalid_argument naming the bad option. Prints the usage
/// and exits for --help.
DemoOptions parseDemoOptions(int argc, char** argv, const std::string& defaultScene);

} // namespace bulletgpu::demo
