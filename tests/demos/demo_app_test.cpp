// SPDX-License-Identifier: Zlib
#include "demos/app/demo_options.h"
#include "demos/app/run_report.h"
#include "demos/app/scene_run.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

using namespace bulletgpu::demo;

const std::string cScenes = BULLETGPU_SCENES_DIR;

DemoOptions parse(std::vector<std::string> args) {
    args.insert(args.begin(), "bulletgpu-demo");
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    return parseDemoOptions(static_cast<int>(argv.size()), argv.data(), "default.json");
}

SceneRun syntheticRun(const std::string& name, std::vector<double> totals, double meanHeight, int contacts) {
    SceneRun run;
    run.broadphase = name;
    run.sceneName = "synthetic";
    for (double total : totals) {
        StepRecord step;
        step.totalMs = total;
        step.broadphaseMs = total / 4;
        step.narrowphaseMs = total / 4;
        step.solverMs = total / 4;
        step.pairs = static_cast<int>(total);
        step.contacts = contacts;
        run.steps.push_back(step);
    }
    run.heights = {meanHeight, 0.0, 10.0, 100};
    return run;
}

std::filesystem::path scratchFolder() {
    const std::filesystem::path folder = std::filesystem::temp_directory_path() / "bulletgpu_demo_app_test";
    std::filesystem::create_directories(folder);
    return folder;
}

} // namespace

TEST_CASE("Demo options: defaults, lists and errors", "[demo]") {
    const DemoOptions defaults = parse({});
    CHECK(defaults.scenePath == "default.json");
    CHECK(defaults.broadphases == std::vector<std::string>{"bulletgpu"});
    CHECK(defaults.steps == 0);

    CHECK(parse({"--compare"}).broadphases == std::vector<std::string>{"dbvt", "bulletgpu"});
    CHECK(parse({"--compare", "--steps", "3"}).steps == 3);
    CHECK(parse({"--compare", "sap,simple,bulletgpu-cpu"}).broadphases ==
          std::vector<std::string>{"sap", "simple", "bulletgpu-cpu"});
    const DemoOptions sized = parse({"--size", "640x360", "--render", "out", "--scale", "0.5"});
    CHECK(sized.renderWidth == 640);
    CHECK(sized.renderHeight == 360);
    CHECK(sized.scale == 0.5);

    CHECK_THROWS_WITH(parse({"--steps", "0"}), Catch::Contains("--steps needs a positive integer"));
    CHECK_THROWS_WITH(parse({"--steps", "12x"}), Catch::Contains("got '12x'"));
    CHECK_THROWS_WITH(parse({"--broadphase", "octree"}), Catch::Contains("unknown broadphase 'octree'"));
    CHECK_NOTHROW(parse({"--broadphase", "bulletgpu-cpu-k4"}));
    CHECK_NOTHROW(parse({"--compare", "bulletgpu-cpu-k1,bulletgpu-cpu-k2,bulletgpu-k7"}));
    CHECK_THROWS_WITH(parse({"--broadphase", "bulletgpu-cpu-k0"}), Catch::Contains("unknown broadphase"));
    CHECK_THROWS_WITH(parse({"--broadphase", "bulletgpu-cpu-k65"}), Catch::Contains("unknown broadphase"));
    CHECK_THROWS_WITH(parse({"--broadphase", "dbvt-k2"}), Catch::Contains("unknown broadphase"));
    CHECK_THROWS_WITH(parse({"--frobnicate"}), Catch::Contains("unknown option '--frobnicate'"));
    CHECK_THROWS_WITH(parse({"--scene"}), Catch::Contains("--scene needs a value"));
    CHECK_THROWS_WITH(parse({"--size", "640"}), Catch::Contains("--size needs WxH"));
    CHECK_THROWS_WITH(parse({"--scale", "-1"}), Catch::Contains("--scale needs a positive number"));
}

TEST_CASE("Demo options: narrow phases, and --option=value", "[demo]") {
    CHECK(parse({}).narrows.empty());
    CHECK(parse({"--narrow", "compare"}).narrows == std::vector<std::string>{"bullet", "bulletgpu"});
    CHECK(parse({"--narrow=bulletgpu-cpu"}).narrows == std::vector<std::string>{"bulletgpu-cpu"});
    CHECK(parse({"--narrow", "bulletgpu-cpu,bullet"}).narrows == std::vector<std::string>{"bulletgpu-cpu", "bullet"});
    CHECK(parse({"--steps=7", "--compare=sap,dbvt"}).steps == 7);
    CHECK(parse({"--compare=sap,dbvt"}).broadphases == std::vector<std::string>{"sap", "dbvt"});
    CHECK_THROWS_WITH(parse({"--narrow", "gjk"}), Catch::Contains("unknown narrow phase 'gjk'"));
    CHECK_THROWS_WITH(parse({"--narrow="}), Catch::Contains("--narrow needs narrow-phase names"));
    CHECK_THROWS_WITH(parse({"--list=yes"}), Catch::Contains("--list takes no value"));
}

TEST_CASE("Demo options: soft-body solvers and self-intersection counts", "[demo]") {
    CHECK(parse({}).softSolvers.empty());
    CHECK_FALSE(parse({}).countSelfIntersections);
    CHECK(parse({"--soft-solver", "compare"}).softSolvers == std::vector<std::string>{"bullet", "bulletgpu"});
    CHECK(parse({"--soft-solver=bulletgpu-cpu,bullet"}).softSolvers ==
          std::vector<std::string>{"bulletgpu-cpu", "bullet"});
    CHECK(parse({"--self-intersections"}).countSelfIntersections);
    CHECK_THROWS_WITH(parse({"--soft-solver", "verlet"}), Catch::Contains("unknown soft-body solver 'verlet'"));
    CHECK_THROWS_WITH(parse({"--soft-solver="}), Catch::Contains("--soft-solver needs soft-body solver names"));
    CHECK_THROWS_WITH(parse({"--self-intersections=yes"}), Catch::Contains("takes no value"));
}

TEST_CASE("Demo run: a soft scene on both soft-body solvers, self-intersections counted", "[demo][soft]") {
    const std::string scene = cScenes + "/soft-cloth-fold.json";
    SceneLoadOptions bulletOptions;
    bulletOptions.softSolver = "bullet";
    SceneLoadOptions oursOptions;
    oursOptions.softSolver = "bulletgpu-cpu";
    // The curtain passes through itself in Bullet's solver from about step 35 on.
    const SceneRun bullet = runScene(scene, "dbvt", 60, bulletOptions, {}, true);
    const SceneRun ours = runScene(scene, "dbvt", 60, oursOptions, {}, true);
    CHECK(runName(bullet) == "dbvt/bullet");
    CHECK(runName(ours) == "dbvt/bulletgpu-cpu");
    CHECK(summarizeRun(bullet).stepsWithSelfIntersections > 0);
    CHECK(summarizeRun(ours).stepsWithSelfIntersections == 0);
    CHECK(summarizeRun(ours).peakSelfIntersections == 0);
    // Not counted unless asked, nor in scenes without cloth.
    CHECK(summarizeRun(runScene(scene, "dbvt", 2, bulletOptions, {})).stepsWithSelfIntersections == -1);
    const RunSummary rope =
        summarizeRun(runScene(cScenes + "/soft-rope-pile.json", "dbvt", 2, bulletOptions, {}, true));
    CHECK(rope.stepsWithSelfIntersections == -1);
    // Standing, the rope's closest non-neighbours are two links (0.1 m) apart.
    CHECK(rope.closestRopeNodes == Approx(0.1).margin(0.01));
    CHECK(summarizeRun(bullet).closestRopeNodes == -1);
}

TEST_CASE("Demo report: summaries and comparison tolerances", "[demo]") {
    const SceneRun reference = syntheticRun("dbvt", {4, 8, 6}, 5.0, 100);
    const RunSummary summary = summarizeRun(reference);
    CHECK(summary.meanTotalMs == Approx(6));
    CHECK(summary.medianTotalMs == Approx(6));
    CHECK(summary.meanBroadphaseMs == Approx(1.5));
    CHECK(summary.meanOtherMs == Approx(1.5));
    CHECK(summary.peakPairs == 8);
    CHECK(summary.finalPairs == 6);
    CHECK(summarizeRun(SceneRun{}).meanTotalMs == 0);

    const std::vector<SceneRun> runs{reference, syntheticRun("fast", {2, 2, 2}, 5.5, 110),
                                     syntheticRun("sinks", {2, 2, 2}, 3.0, 100),
                                     syntheticRun("few contacts", {2, 2, 2}, 5.0, 50)};
    const std::vector<RunComparison> comparisons = compareRuns(runs);
    REQUIRE(comparisons.size() == 3);
    CHECK(comparisons[0].stepSpeedup == Approx(3));
    CHECK(comparisons[0].heightTolerance == Approx(1.05));
    CHECK(comparisons[0].contactTolerance == 20);
    CHECK(comparisons[0].agrees);
    CHECK_FALSE(comparisons[1].agrees);
    CHECK_FALSE(comparisons[2].agrees);
    CHECK(compareRuns({reference}).empty());
}

TEST_CASE("Demo report: runs with a chosen narrow phase are named broadphase/narrow", "[demo]") {
    SceneRun bullet = syntheticRun("dbvt", {4, 4}, 5.0, 100);
    SceneRun ours = syntheticRun("dbvt", {2, 2}, 5.0, 100);
    bullet.narrowPhase = "bullet";
    ours.narrowPhase = "bulletgpu";
    CHECK(runName(bullet) == "dbvt");
    bullet.narrowChosen = ours.narrowChosen = true;
    const std::vector<RunComparison> comparisons = compareRuns({bullet, ours});
    REQUIRE(comparisons.size() == 1);
    CHECK(comparisons[0].reference == "dbvt/bullet");
    CHECK(comparisons[0].broadphase == "dbvt/bulletgpu");
    CHECK(comparisons[0].narrowphaseSpeedup == Approx(2));
}

TEST_CASE("Demo report: JSON and CSV hold every run and step", "[demo]") {
    const std::vector<SceneRun> runs{syntheticRun("dbvt", {4, 8, 6}, 5.0, 100),
                                     syntheticRun("bulletgpu", {2, 2}, 5.0, 100)};
    const std::filesystem::path folder = scratchFolder();
    writeJsonReport((folder / "report.json").string(), runs, compareRuns(runs));
    writeCsvReport((folder / "steps.csv").string(), runs);

    std::ifstream jsonFile(folder / "report.json");
    const nlohmann::json report = nlohmann::json::parse(jsonFile);
    REQUIRE(report["runs"].size() == 2);
    CHECK(report["runs"][0]["perStep"].size() == 3);
    CHECK(report["runs"][1]["meanStepMs"].get<double>() == Approx(2));
    CHECK(report["comparisons"][0]["stepSpeedup"].get<double>() == Approx(3));
    CHECK(!report["machine"].get<std::string>().empty());

    std::ifstream csvFile(folder / "steps.csv");
    int lines = 0;
    for (std::string line; std::getline(csvFile, line);) ++lines;
    CHECK(lines == 1 + 3 + 2);

    CHECK_THROWS_WITH(writeCsvReport((folder / "missing" / "steps.csv").string(), runs),
                      Catch::Contains("cannot write"));
}

TEST_CASE("Demo compare: the 3000-box scene settles alike on dbvt and BulletGpu", "[demo][world]") {
    const std::string scene = cScenes + "/benchmark-1-3000-boxes.json";
    int observed = 0;
    const SceneRun dbvt = runScene(scene, "dbvt", 300, {}, [&observed](int, SceneWorld&) { ++observed; });
    const SceneRun gpu = runScene(scene, "bulletgpu-cpu", 300, {}, {});
    CHECK(observed == 300);
    REQUIRE(dbvt.steps.size() == 300);
    CHECK(gpu.backend == "cpu");
    CHECK(dbvt.objects == 3009);
    CHECK(dbvt.heights.count == 3008);

    const std::vector<RunComparison> comparisons = compareRuns({dbvt, gpu});
    REQUIRE(comparisons.size() == 1);
    const RunComparison& c = comparisons.front();
    CAPTURE(dbvt.heights.mean, gpu.heights.mean, c.heightDifference, c.heightTolerance, c.contactDifference,
            c.contactTolerance);
    CHECK(c.agrees);
    CHECK(summarizeRun(gpu).peakPairs > 5000);
    CHECK(dbvt.heights.lowest > -0.1);
    CHECK(gpu.heights.lowest > -0.1);
}
