// SPDX-License-Identifier: Zlib
// The whole-frame CCD query on CUDA against the CPU (kernels/narrow/ccd/ccd_frame_query.h): the
// same impacts (pairs, times bit for bit, undecided flags), earliest time and counts, on seeded
// random scenes (self and pair), named edge cases and the real ccd-frames scenes. Every case
// that needs a device skips with a warning when no CUDA device is usable.
#include "kernels/common/cuda_device.h"
#include "kernels/common/stopwatch.h"
#include "kernels/narrow/ccd/ccd_frame_query.h"
#include "tests/support/ccd_frame_scenes.h"
#include "tests/support/cuda_skip.h"
#include "tests/support/moving_mesh.h"
#include "tests/support/ply_mesh.h"
#include "tests/support/test_skip.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace bulletgpu;
using bulletgpu::test::cCcdFrameSceneCount;
using bulletgpu::test::cCcdFrameScenes;
using bulletgpu::test::CcdFrameScene;
using bulletgpu::test::cudaDeviceOrSkip;
using bulletgpu::test::loadCcdFramesOrSkip;
using bulletgpu::test::MovingMesh;
using bulletgpu::test::randomGrid;
using bulletgpu::test::transform;
using bulletgpu::test::triangle;

namespace {

/// The same double, bit for bit.
bool sameBits(double x, double y) { return std::memcmp(&x, &y, sizeof(double)) == 0; }

/// One impact as text.
std::string describe(const CcdImpact& impact) {
    std::ostringstream text;
    text.precision(17);
    text << "(kind " << static_cast<int>(impact.pair.kind) << ", a " << impact.pair.a << ", b " << impact.pair.b
         << ", toi " << impact.toi << (impact.undecided ? ", undecided)" : ")");
    return text.str();
}

/// The counts of a result as text.
std::string describe(const CcdFrameResult& result) {
    const CcdFrameCounts& c = result.counts;
    std::ostringstream text;
    text.precision(17);
    text << c.trianglePairs << " triangle pairs, " << c.featurePairs << " feature pairs, " << c.firstBoxCulled
         << " first-box culled, " << c.planeCulled << " plane culled, " << c.exactTests << " exact tests, " << c.impacts
         << " impacts (" << c.undecided << " undecided), " << c.iterations << " boxes, " << c.rootRejections
         << " root rejections, earliest toi " << result.earliestToi;
    return text.str();
}

/// Where two results first differ (impacts, earliest time or counts), or empty when they are
/// the same bit for bit.
std::string firstDifference(const CcdFrameResult& cpu, const CcdFrameResult& cuda) {
    const std::size_t shared = std::min(cpu.impacts.size(), cuda.impacts.size());
    for (std::size_t i = 0; i < shared; ++i) {
        const CcdImpact& x = cpu.impacts[i];
        const CcdImpact& y = cuda.impacts[i];
        if (x.pair.kind != y.pair.kind || x.pair.a != y.pair.a || x.pair.b != y.pair.b || !sameBits(x.toi, y.toi) ||
            x.undecided != y.undecided) {
            return "impact " + std::to_string(i) + ": cpu " + describe(x) + ", cuda " + describe(y);
        }
    }
    if (cpu.impacts.size() != cuda.impacts.size()) {
        const bool cpuLonger = cpu.impacts.size() > cuda.impacts.size();
        const CcdImpact& extra = cpuLonger ? cpu.impacts[shared] : cuda.impacts[shared];
        return "impact " + std::to_string(shared) + " only on " + (cpuLonger ? "cpu " : "cuda ") + describe(extra);
    }
    if (!sameBits(cpu.earliestToi, cuda.earliestToi)) return "earliest toi";
    const CcdFrameCounts& a = cpu.counts;
    const CcdFrameCounts& b = cuda.counts;
    if (a.trianglePairs != b.trianglePairs || a.featurePairs != b.featurePairs ||
        a.firstBoxCulled != b.firstBoxCulled || a.planeCulled != b.planeCulled || a.exactTests != b.exactTests ||
        a.impacts != b.impacts || a.undecided != b.undecided || a.iterations != b.iterations ||
        a.rootRejections != b.rootRejections) {
        return "counts";
    }
    return std::string();
}

/// A CPU query and a CUDA query, each reused from call to call.
struct TwinQueries {
    CcdFrameQuery cpu{Backend::Cpu};
    CcdFrameQuery cuda{Backend::Cuda, 0};

    /// Runs the query (self when b is null) on both; requires the same result bit for bit,
    /// printing the first difference, both counts and both earliest times otherwise. Returns the
    /// CUDA result.
    CcdFrameResult run(const CcdMesh& a, const CcdMesh* b, const CcdFrameOptions& options) {
        CcdFrameResult onCpu, onCuda;
        if (b == nullptr) {
            cpu.runSelf(a, options, onCpu);
            cuda.runSelf(a, options, onCuda);
        } else {
            cpu.runPair(a, *b, options, onCpu);
            cuda.runPair(a, *b, options, onCuda);
        }
        const std::string difference = firstDifference(onCpu, onCuda);
        INFO("first difference: " << difference << "\ncpu:  " << describe(onCpu) << "\ncuda: " << describe(onCuda));
        REQUIRE(difference.empty());
        return onCuda;
    }
    /// The same on moving meshes.
    CcdFrameResult run(const MovingMesh& a, const MovingMesh* b, const CcdFrameOptions& options) {
        const CcdMesh viewB = b != nullptr ? b->view() : CcdMesh{};
        return run(a.view(), b != nullptr ? &viewB : nullptr, options);
    }
};

/// Options with `eta` and the prefilters on or off, on 2 CPU threads.
CcdFrameOptions optionsWith(double eta, bool prefilter = true) {
    CcdFrameOptions options;
    options.eta = eta;
    options.prefilter = prefilter;
    options.threads = 2;
    return options;
}

} // namespace

TEST_CASE("CcdFrameQuery backend: Cuda needs a usable device and Auto falls back to the CPU", "[cuda][ccd]") {
    const CudaDeviceProbe probe = probeCudaDevice(0);
    CHECK(CcdFrameQuery(Backend::Cpu).backend() == Backend::Cpu);
    CHECK(CcdFrameQuery(Backend::Auto).backend() == (probe.usable ? Backend::Cuda : Backend::Cpu));
    if (!probe.usable) {
        CHECK_THROWS_AS(CcdFrameQuery(Backend::Cuda), std::runtime_error);
    }
}

TEST_CASE("CUDA CCD frame query equals the CPU on random scenes", "[cuda][ccd]") {
    if (!cudaDeviceOrSkip("CCD CUDA test: ")) return;
    const double eta = GENERATE(0.0, 1e-3, 0.05);
    const bool self = GENERATE(true, false);
    std::mt19937_64 random(2929);
    TwinQueries twins;
    std::uint64_t impacts = 0, exactTests = 0;
    for (int scene = 0; scene < 12; ++scene) {
        // Jittered grids that crumple through themselves and each other; sizes change from scene
        // to scene, so the device buffers grow and the features are uploaded again.
        const MovingMesh a = randomGrid(5 + scene % 3, 0.0, 0.15, 0.4, random);
        const MovingMesh b = randomGrid(4 + scene % 2, 0.2, 0.15, 0.4, random);
        INFO("scene " << scene << ", eta " << eta << (self ? ", self" : ", pair"));
        const CcdFrameResult result = twins.run(a, self ? nullptr : &b, optionsWith(eta, scene % 4 != 3));
        impacts += result.impacts.size();
        exactTests += result.counts.exactTests;
        // The same positions again: the kept features and buffers give the same result.
        if (scene % 4 == 0) twins.run(a, self ? nullptr : &b, optionsWith(eta));
    }
    CHECK(impacts > 0);
    CHECK(exactTests > impacts);
}

TEST_CASE("CUDA CCD frame query equals the CPU on named cases", "[cuda][ccd]") {
    if (!cudaDeviceOrSkip("CCD CUDA test: ")) return;
    std::mt19937_64 random(29);
    TwinQueries twins;
    const MovingMesh one = triangle({0, 0, 0, 1, 0, 0, 0, 1, 0}, {});
    SECTION("zero motion") {
        const MovingMesh a = randomGrid(5, 0.0, 0.15, 0.0, random);
        const MovingMesh b = randomGrid(4, 0.1, 0.15, 0.0, random);
        twins.run(a, nullptr, optionsWith(0.01));
        twins.run(a, &b, optionsWith(0.01));
    }
    SECTION("contact at t = 0") {
        const MovingMesh resting = triangle({0.25, 0.25, 0, 1, 1, 1, 0, 1, 1}, {});
        const CcdFrameResult result = twins.run(one, &resting, optionsWith(0.0));
        REQUIRE_FALSE(result.impacts.empty());
        CHECK(result.earliestToi == 0.0);
    }
    SECTION("contact at t = 1") {
        // B's vertex 0 reaches A's face exactly at the end of the step.
        const MovingMesh falling = triangle({0.25, 0.25, 1, 1, 1, 2, 0, 1, 2}, {0.25, 0.25, 0, 1, 1, 1, 0, 1, 1});
        const CcdFrameResult result = twins.run(one, &falling, optionsWith(0.0));
        REQUIRE_FALSE(result.impacts.empty());
        CHECK(result.earliestToi <= 1.0);
    }
    SECTION("edges crossing at t = 1/2") {
        const MovingMesh a = triangle({0, 0, 0, 1, 0, 0, 0, -1, 0}, {});
        const MovingMesh b =
            triangle({0.5, -0.5, 1, 0.5, 0.5, 1, 0.5, 0.5, 3}, {0.5, -0.5, -1, 0.5, 0.5, -1, 0.5, 0.5, 1});
        CHECK_FALSE(twins.run(a, &b, optionsWith(0.0)).impacts.empty());
    }
    SECTION("empty mesh and one triangle") {
        const MovingMesh empty;
        CHECK(twins.run(empty, nullptr, optionsWith(0.0)).impacts.empty());
        CHECK(twins.run(one, nullptr, optionsWith(0.0)).impacts.empty());
        CHECK(twins.run(one, &empty, optionsWith(0.0)).impacts.empty());
        CHECK(twins.run(empty, &one, optionsWith(0.0)).impacts.empty());
        // And back to a mesh with work to do, on the same queries.
        const MovingMesh a = randomGrid(5, 0.0, 0.15, 0.4, random);
        twins.run(a, nullptr, optionsWith(0.0));
    }
    SECTION("huge and tiny coordinates") {
        const MovingMesh baseA = randomGrid(5, 0.0, 0.15, 0.4, random);
        const MovingMesh baseB = randomGrid(4, 0.2, 0.15, 0.4, random);
        for (const double scale : {1e30, 0x1p900, 1e-30, 1e-300}) {
            MovingMesh a = baseA, b = baseB;
            transform(a, scale, scale);
            transform(b, scale, scale);
            INFO("scale " << scale);
            twins.run(a, nullptr, optionsWith(1e-3 * scale));
            twins.run(a, &b, optionsWith(1e-3 * scale));
        }
    }
    SECTION("an iteration limit that leaves pairs undecided") {
        const MovingMesh a = randomGrid(6, 0.0, 0.15, 0.4, random);
        CcdFrameOptions options = optionsWith(0.0);
        options.exact.maxIterations = 3;
        twins.run(a, nullptr, options);
        options.exact.maxIterations = 0;
        twins.run(a, nullptr, options);
    }
}

TEST_CASE("CUDA CCD frame query equals the CPU on the ccd-frames scenes", "[cuda][ccd][data][large]") {
    if (!cudaDeviceOrSkip("CCD CUDA test: ")) return;
    const CcdFrameScene& scene = cCcdFrameScenes[GENERATE(range(std::size_t{0}, cCcdFrameSceneCount))];
    PlyMesh frames[2];
    if (!loadCcdFramesOrSkip(scene, frames, "no ccd-frames at ")) return;
    const PlyMesh& start = frames[0];
    const PlyMesh& end = frames[1];
    REQUIRE(start.indices == end.indices);
    const CcdMesh mesh{start.exactPositions.data(), end.exactPositions.data(),
                       static_cast<std::uint32_t>(start.exactPositions.size() / 3), start.indices.data(),
                       static_cast<std::uint32_t>(start.indices.size() / 3)};
    TwinQueries twins;
    CcdFrameOptions options = optionsWith(0.0);
    options.threads = 8;
    const CcdFrameResult first = twins.run(mesh, nullptr, options);
    // Once more with settled buffers, timed.
    const Clock::time_point begin = Clock::now();
    CcdFrameResult again;
    twins.cuda.runSelf(mesh, options, again);
    const double ms = millisecondsSince(begin);
    REQUIRE(firstDifference(first, again).empty());
    const CcdFrameCounts& c = again.counts;
    WARN(scene.name << " on CUDA: " << describe(again) << "; " << ms << " ms (boxes and trees " << c.boxMs
                    << ", upload " << c.uploadMs << ", walk " << c.traverseMs << ", expand " << c.expandMs
                    << ", exact and sort " << c.exactMs << ")");
}
