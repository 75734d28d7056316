// SPDX-License-Identifier: Zlib
// bulletgpu-demo: Bullet's BenchmarkDemo "3000 boxes" stepped headlessly with one or several
// broadphases, with a per-phase table and a comparison of the physics they produce.
#include "bench/benchmark_demo_scene.h"
#include "demos/timed_broadphase.h"

#include <bulletgpu/Broadphase.h>

#include <BulletCollision/BroadphaseCollision/btAxisSweep3.h>
#include <BulletCollision/BroadphaseCollision/btDbvtBroadphase.h>
#include <BulletCollision/BroadphaseCollision/btSimpleBroadphase.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

using bulletgpu::bench::BenchmarkDemo1;
using bulletgpu::demo::TimedBroadphase;

struct Options {
    std::vector<std::string> broadphases{"dbvt", "bulletgpu"};
    int steps = 300;
};

struct RunResult {
    std::string name;
    double stepMs = 0;       // mean whole step
    double medianStepMs = 0; // median whole step
    double broadphaseMs = 0; // mean setAabb + calculateOverlappingPairs per step
    int peakPairs = 0;
    int finalPairs = 0;
    int finalContacts = 0;
    double meanHeight = 0;
    double minHeight = 0;
};

std::unique_ptr<btBroadphaseInterface> makeBroadphase(const std::string& name) {
    if (name == "dbvt") return std::make_unique<btDbvtBroadphase>();
    if (name == "sap") {
        const auto bounds = BenchmarkDemo1::worldBounds();
        return std::make_unique<bt32BitAxisSweep3>(bounds.first, bounds.second);
    }
    if (name == "simple") return std::make_unique<btSimpleBroadphase>(4096);
    bulletgpu::BroadphaseConfig config;
    if (name == "bulletgpu-cpu") config.backend = bulletgpu::Backend::Cpu;
    else if (name == "bulletgpu-cuda") config.backend = bulletgpu::Backend::Cuda;
    else if (name != "bulletgpu") throw std::invalid_argument("unknown broadphase '" + name + "'");
    return std::make_unique<bulletgpu::Broadphase>(config);
}

int contactCount(btDispatcher& dispatcher) {
    int contacts = 0;
    for (int i = 0; i < dispatcher.getNumManifolds(); ++i) {
        contacts += dispatcher.getManifoldByIndexInternal(i)->getNumContacts();
    }
    return contacts;
}

RunResult run(const std::string& name, int steps) {
    const bool showProgress = isatty(fileno(stderr)) != 0;
    auto timed = std::make_unique<TimedBroadphase>(makeBroadphase(name));
    TimedBroadphase* broadphase = timed.get();
    BenchmarkDemo1 scene(std::move(timed));
    broadphase->takeMilliseconds();
    RunResult result;
    result.name = name;
    std::vector<double> stepTimes;
    double broadphaseTotal = 0;
    for (int step = 0; step < steps; ++step) {
        const auto start = std::chrono::steady_clock::now();
        scene.step();
        stepTimes.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        broadphaseTotal += broadphase->takeMilliseconds();
        result.peakPairs = std::max(result.peakPairs, broadphase->getOverlappingPairCache()->getNumOverlappingPairs());
        if (showProgress && steps >= 100 && (step + 1) % (steps / 10) == 0) {
            std::fprintf(stderr, "\r%-14s step %d/%d", name.c_str(), step + 1, steps);
        }
    }
    if (showProgress) std::fprintf(stderr, "\r%40s\r", "");
    for (double t : stepTimes) result.stepMs += t;
    result.stepMs /= std::max(1, steps);
    result.broadphaseMs = broadphaseTotal / std::max(1, steps);
    std::sort(stepTimes.begin(), stepTimes.end());
    result.medianStepMs = stepTimes.empty() ? 0 : stepTimes[stepTimes.size() / 2];
    result.finalPairs = broadphase->getOverlappingPairCache()->getNumOverlappingPairs();
    result.finalContacts = contactCount(scene.dispatcher());
    result.minHeight = 1e30;
    for (const btRigidBody* box : scene.boxes()) {
        const double y = box->getCenterOfMassPosition().getY();
        result.meanHeight += y;
        result.minHeight = std::min(result.minHeight, y);
    }
    result.meanHeight /= static_cast<double>(scene.boxes().size());
    return result;
}

Options parse(int argc, char** argv) {
    Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
            return argv[++i];
        };
        if (arg == "--steps") {
            options.steps = std::stoi(value());
            if (options.steps <= 0) throw std::invalid_argument("--steps must be positive");
        } else if (arg == "--broadphase") {
            options.broadphases = {value()};
        } else if (arg == "--compare") {
            options.broadphases.clear();
            std::stringstream list(value());
            for (std::string item; std::getline(list, item, ',');) options.broadphases.push_back(item);
        } else if (arg == "--help" || arg == "-h") {
            std::printf("usage: bulletgpu-demo [--steps N] [--broadphase NAME | --compare NAME,NAME,...]\n"
                        "broadphases: dbvt sap simple bulletgpu bulletgpu-cpu bulletgpu-cuda\n");
            std::exit(0);
        } else {
            throw std::invalid_argument("unknown option '" + arg + "' (see --help)");
        }
    }
    return options;
}

} // namespace

int main(int argc, char** argv) {
    try {
        const Options options = parse(argc, argv);
        std::printf("BenchmarkDemo 1, \"3000 boxes\" (3,008 boxes on a static ground), %d steps of 1/60 s\n\n",
                    options.steps);
        std::vector<RunResult> results;
        for (const std::string& name : options.broadphases) results.push_back(run(name, options.steps));

        std::printf("%-14s %10s %10s %12s %8s %9s %9s %9s %9s\n", "broadphase", "step ms", "median", "broadphase",
                    "vs first", "peak prs", "pairs", "contacts", "mean y");
        for (const RunResult& r : results) {
            std::printf("%-14s %10.3f %10.3f %12.3f %7.2fx %9d %9d %9d %9.3f\n", r.name.c_str(), r.stepMs,
                        r.medianStepMs, r.broadphaseMs, results.front().stepMs / r.stepMs, r.peakPairs, r.finalPairs,
                        r.finalContacts, r.meanHeight);
        }
        if (results.size() > 1) {
            const RunResult& a = results.front();
            for (std::size_t i = 1; i < results.size(); ++i) {
                const RunResult& b = results[i];
                std::printf("\n%s vs %s: broad phase %.2fx faster; resting height differs by %.3f units; "
                            "contacts %+.1f%%\n",
                            b.name.c_str(), a.name.c_str(), a.broadphaseMs / b.broadphaseMs,
                            b.meanHeight - a.meanHeight,
                            100.0 * (b.finalContacts - a.finalContacts) / std::max(1, a.finalContacts));
            }
        }
        return 0;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "bulletgpu-demo: %s\n", error.what());
        return 1;
    }
}
