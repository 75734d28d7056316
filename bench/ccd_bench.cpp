// SPDX-License-Identifier: Zlib
// Whole-frame CCD benchmark (issue 29): CcdFrameQuery::runSelf (swept boxes, tree builds, leaf
// walk, feature expansion and filter, exact vertex-face and edge-edge tests, sort) on the
// ccd-frames scenes, from one frame to the next, eta = 0. A fresh query object is timed first
// (its allocations included), then steady runs reusing its buffers; the medians are printed
// with the stage medians, the counts and the load average before and after each scene.
//
// Usage: bulletgpu-bench-ccd [data dir] [runs] [threads] [scenes, comma-separated]
#include "bench/machine_info.h"
#include "bench/sample_statistics.h"
#include "kernels/common/stopwatch.h"
#include "kernels/narrow/ccd/ccd_frame_query.h"
#include "tests/support/ply_mesh.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace bulletgpu;

namespace {

/// One scene: its folder and its two frames.
struct Scene {
    const char* name;      ///< Folder under ccd-frames.
    const char* frames[2]; ///< PLY names at t = 0 and t = 1.
};

/// True when `name` is in the comma-separated `list` (or the list is empty).
bool selected(const std::string& list, const std::string& name) {
    return list.empty() || ("," + list + ",").find("," + name + ",") != std::string::npos;
}

} // namespace

int main(int argc, char** argv) {
    const std::string data = argc > 1 ? argv[1] : BULLETGPU_DEFAULT_DATA_DIR;
    const int runs = argc > 2 ? std::atoi(argv[2]) : 7;
    const int threads = argc > 3 ? std::atoi(argv[3]) : 2;
    const std::string scenes = argc > 4 ? argv[4] : "";
    std::printf("CPU: %s, %u hardware threads; %d threads, %d steady runs per scene, eta = 0\n", cpuModel().c_str(),
                std::thread::hardware_concurrency(), threads, runs);
    std::printf(
        "| scene | triangles | triangle pairs | feature pairs | exact tests | root rejections | boxes examined | "
        "impacts | undecided | earliest toi "
        "| first ms | median ms | boxes+trees | walk | expand+filter | exact+sort | load before | load after |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const Scene& scene : {Scene{"cloth-ball", {"cloth_ball92", "cloth_ball93"}},
                               Scene{"cloth-funnel", {"227", "228"}}, Scene{"rod-twist", {"3036", "3037"}}}) {
        if (!selected(scenes, scene.name)) continue;
        const std::string folder = data + "/ccd-frames/" + scene.name + "/frames/";
        PlyMesh frames[2];
        try {
            for (int f = 0; f < 2; ++f) frames[f] = readPlyMesh(folder + scene.frames[f] + ".ply");
        } catch (const std::exception& e) {
            std::printf("| %s | skipped: %s |\n", scene.name, e.what());
            continue;
        }
        const CcdMesh mesh{frames[0].exactPositions.data(), frames[1].exactPositions.data(),
                           static_cast<std::uint32_t>(frames[0].exactPositions.size() / 3), frames[0].indices.data(),
                           static_cast<std::uint32_t>(frames[0].indices.size() / 3)};
        CcdFrameOptions options;
        options.threads = threads;
        const std::string loadBefore = loadAverages();
        CcdFrameResult result;
        Clock::time_point start = Clock::now();
        CcdFrameQuery query;
        query.runSelf(mesh, options, result);
        const double firstMs = millisecondsSince(start);
        std::vector<double> total, boxes, walk, expand, exact;
        for (int r = 0; r < runs; ++r) {
            start = Clock::now();
            query.runSelf(mesh, options, result);
            total.push_back(millisecondsSince(start));
            boxes.push_back(result.counts.boxMs);
            walk.push_back(result.counts.traverseMs);
            expand.push_back(result.counts.expandMs);
            exact.push_back(result.counts.exactMs);
        }
        const CcdFrameCounts& c = result.counts;
        std::printf("| %s | %u | %llu | %llu | %llu | %llu | %llu | %llu | %llu | %.3g | %.1f | %.1f | %.1f | %.1f | "
                    "%.1f | %.1f | %s | "
                    "%s |\n",
                    scene.name, mesh.triangleCount, static_cast<unsigned long long>(c.trianglePairs),
                    static_cast<unsigned long long>(c.featurePairs), static_cast<unsigned long long>(c.exactTests),
                    static_cast<unsigned long long>(c.rootRejections), static_cast<unsigned long long>(c.iterations),
                    static_cast<unsigned long long>(c.impacts), static_cast<unsigned long long>(c.undecided),
                    result.earliestToi, firstMs, bench::median(total), bench::median(boxes), bench::median(walk),
                    bench::median(expand), bench::median(exact), loadBefore.c_str(), loadAverages().c_str());
        std::fflush(stdout);
    }
    return 0;
}
