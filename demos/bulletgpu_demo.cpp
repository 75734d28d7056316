// SPDX-License-Identifier: Zlib
// bulletgpu-demo: Bullet's demo-browser scenes, read from scene files, stepped headlessly with one
// or several broadphases and narrow phases; a per-phase table, JSON/CSV reports, PNG frames and a
// step-time chart.
#include "demos/app/demo_options.h"
#include "demos/app/run_report.h"
#include "demos/app/scene_run.h"
#include "demos/render/line_chart.h"
#include "demos/render/png_io.h"
#include "demos/render/world_renderer.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace bulletgpu::demo;

void listScenes(const std::filesystem::path& folder) {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) {
        if (entry.path().extension() == ".json") files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) std::printf("%s\n", file.c_str());
}

/// Renders every renderEvery-th step of a run to
/// DIR/<broadphase>[/<narrow>][/<soft solver>]/frame-NNNNN.png.
StepObserver frameWriter(const DemoOptions& options, const std::string& broadphase, const std::string& narrow,
                         const std::string& softSolver, std::shared_ptr<WorldRenderer> renderer) {
    if (options.renderDir.empty()) return {};
    std::filesystem::path folder = std::filesystem::path(options.renderDir) / broadphase;
    for (const std::string& part : {narrow, softSolver}) {
        if (!part.empty()) folder /= part;
    }
    std::filesystem::create_directories(folder);
    return [folder, every = options.renderEvery, renderer](int step, SceneWorld& scene) {
        if (step % every != 0 && step != 1) return;
        char name[32];
        std::snprintf(name, sizeof(name), "frame-%05d.png", step);
        writePng((folder / name).string(), renderer->render(scene.world(), scene.camera()));
    };
}

void writeChart(const std::string& path, const std::vector<SceneRun>& runs) {
    std::vector<ChartSeries> series;
    for (const SceneRun& run : runs) {
        ChartSeries line;
        line.label = run.backend.empty() ? runName(run) : runName(run) + " (" + run.backend + ")";
        for (const StepRecord& step : run.steps) line.values.push_back(step.totalMs);
        series.push_back(std::move(line));
    }
    const std::string title = runs.empty() ? "step time" : runs.front().sceneName + ": step time per frame";
    writePng(path, drawLineChart(title, "step", "milliseconds", series));
}

} // namespace

int main(int argc, char** argv) {
    try {
        const DemoOptions options = parseDemoOptions(argc, argv, BULLETGPU_DEFAULT_SCENE);
        if (options.listScenes) {
            listScenes(std::filesystem::path(options.scenePath).parent_path());
            return 0;
        }
        SceneLoadOptions loadOptions;
        loadOptions.scale = options.scale;
        std::shared_ptr<WorldRenderer> renderer;
        if (!options.renderDir.empty()) {
            renderer = std::make_shared<WorldRenderer>(options.renderWidth, options.renderHeight);
        }

        // Each broadphase with each narrow phase and soft-body solver asked for (or the scene
        // file's, when none is).
        const std::vector<std::string> narrows =
            options.narrows.empty() ? std::vector<std::string>{""} : options.narrows;
        const std::vector<std::string> softSolvers =
            options.softSolvers.empty() ? std::vector<std::string>{""} : options.softSolvers;
        std::vector<SceneRun> runs;
        for (const std::string& broadphase : options.broadphases) {
            for (const std::string& narrow : narrows) {
                for (const std::string& softSolver : softSolvers) {
                    loadOptions.narrow = narrow;
                    loadOptions.softSolver = softSolver;
                    runs.push_back(runScene(options.scenePath, broadphase, options.steps, loadOptions,
                                            frameWriter(options, broadphase, narrow, softSolver, renderer),
                                            options.countSelfIntersections));
                }
            }
        }
        const std::vector<RunComparison> comparisons = compareRuns(runs);
        printReport(runs, comparisons);
        if (!options.jsonPath.empty()) writeJsonReport(options.jsonPath, runs, comparisons);
        if (!options.csvPath.empty()) writeCsvReport(options.csvPath, runs);
        if (!options.plotPath.empty()) writeChart(options.plotPath, runs);
        return 0;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "bulletgpu-demo: %s\n", error.what());
        return 1;
    }
}
