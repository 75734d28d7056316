// SPDX-License-Identifier: Zlib
#include "demos/app/run_report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace bulletgpu::demo {
namespace {

std::string runLabel(const SceneRun& run) {
    return run.backend.empty() ? runName(run) : runName(run) + " (" + run.backend + ")";
}

std::ofstream openForWriting(const std::string& path) {
    std::ofstream file(path);
    if (!file) throw std::runtime_error("cannot write '" + path + "'");
    return file;
}

void finishWriting(std::ofstream& file, const std::string& path) {
    file.flush();
    if (!file) throw std::runtime_error("error while writing '" + path + "'");
}

} // namespace

RunSummary summarizeRun(const SceneRun& run) {
    RunSummary summary;
    if (run.steps.empty()) return summary;
    std::vector<double> totals;
    totals.reserve(run.steps.size());
    for (const StepRecord& step : run.steps) {
        totals.push_back(step.totalMs);
        summary.meanTotalMs += step.totalMs;
        summary.meanBroadphaseMs += step.broadphaseMs;
        summary.meanNarrowphaseMs += step.narrowphaseMs;
        summary.meanSolverMs += step.solverMs;
        summary.peakPairs = std::max(summary.peakPairs, step.pairs);
        if (step.selfIntersections >= 0) {
            summary.stepsWithSelfIntersections =
                std::max(summary.stepsWithSelfIntersections, 0) + (step.selfIntersections > 0 ? 1 : 0);
            summary.peakSelfIntersections = std::max(summary.peakSelfIntersections, step.selfIntersections);
        }
        if (step.closestRopeNodes >= 0) {
            summary.closestRopeNodes = summary.closestRopeNodes < 0
                                           ? step.closestRopeNodes
                                           : std::min(summary.closestRopeNodes, step.closestRopeNodes);
        }
    }
    const double count = static_cast<double>(run.steps.size());
    summary.meanTotalMs /= count;
    summary.meanBroadphaseMs /= count;
    summary.meanNarrowphaseMs /= count;
    summary.meanSolverMs /= count;
    summary.meanOtherMs = std::max(0.0, summary.meanTotalMs - summary.meanBroadphaseMs - summary.meanNarrowphaseMs -
                                            summary.meanSolverMs);
    std::sort(totals.begin(), totals.end());
    summary.medianTotalMs = totals[totals.size() / 2];
    summary.finalPairs = run.steps.back().pairs;
    summary.finalContacts = run.steps.back().contacts;
    return summary;
}

std::vector<RunComparison> compareRuns(const std::vector<SceneRun>& runs) {
    std::vector<RunComparison> comparisons;
    if (runs.size() < 2) return comparisons;
    const SceneRun& reference = runs.front();
    const RunSummary referenceSummary = summarizeRun(reference);
    for (std::size_t i = 1; i < runs.size(); ++i) {
        const RunSummary summary = summarizeRun(runs[i]);
        RunComparison comparison;
        comparison.broadphase = runName(runs[i]);
        comparison.reference = runName(reference);
        comparison.stepSpeedup = referenceSummary.meanTotalMs / std::max(1e-9, summary.meanTotalMs);
        comparison.broadphaseSpeedup = referenceSummary.meanBroadphaseMs / std::max(1e-9, summary.meanBroadphaseMs);
        comparison.narrowphaseSpeedup = referenceSummary.meanNarrowphaseMs / std::max(1e-9, summary.meanNarrowphaseMs);
        comparison.heightDifference = runs[i].heights.mean - reference.heights.mean;
        comparison.heightTolerance = 0.1 * (reference.heights.highest - reference.heights.lowest) + 0.05;
        comparison.contactDifference = summary.finalContacts - referenceSummary.finalContacts;
        comparison.contactTolerance = std::max(10, referenceSummary.finalContacts / 5);
        comparison.agrees = std::abs(comparison.heightDifference) <= comparison.heightTolerance &&
                            std::abs(comparison.contactDifference) <= comparison.contactTolerance;
        comparisons.push_back(comparison);
    }
    return comparisons;
}

void printReport(const std::vector<SceneRun>& runs, const std::vector<RunComparison>& comparisons) {
    if (runs.empty()) return;
    const SceneRun& first = runs.front();
    std::printf("%s: %s\n%d collision objects, %zu steps; times are milliseconds per step (mean; median of the "
                "whole step)\n\n",
                first.sceneName.c_str(), first.sceneDescription.c_str(), first.objects, first.steps.size());
    std::printf("%-22s %9s %9s %10s %11s %9s %9s %9s %9s %9s %9s\n", "broadphase[/narrow]", "step", "median",
                "broadphase", "narrowphase", "solver", "other", "peak prs", "pairs", "contacts", "mean y");
    for (const SceneRun& run : runs) {
        const RunSummary s = summarizeRun(run);
        std::printf("%-22s %9.3f %9.3f %10.3f %11.3f %9.3f %9.3f %9d %9d %9d %9.3f\n", runLabel(run).c_str(),
                    s.meanTotalMs, s.medianTotalMs, s.meanBroadphaseMs, s.meanNarrowphaseMs, s.meanSolverMs,
                    s.meanOtherMs, s.peakPairs, s.finalPairs, s.finalContacts, run.heights.mean);
        if (run.lastRayHits > 0) std::printf("%-22s rays hit in the last step: %d\n", "", run.lastRayHits);
        if (s.stepsWithSelfIntersections >= 0) {
            std::printf("%-22s %s: soft self-intersections after %d of %zu steps, at most %lld triangle pairs\n", "",
                        runName(run).c_str(), s.stepsWithSelfIntersections, run.steps.size(), s.peakSelfIntersections);
        }
        if (s.closestRopeNodes >= 0) {
            std::printf("%-22s %s: closest non-neighbour rope nodes over the run %.5g m\n", "", runName(run).c_str(),
                        s.closestRopeNodes);
        }
    }
    for (const RunComparison& c : comparisons) {
        std::printf("\n%s against %s: step %.2fx, broad phase %.2fx, narrow phase %.2fx faster; mean height %+.3f "
                    "(tolerance %.3f), contacts %+d (tolerance %d): physics %s\n",
                    c.broadphase.c_str(), c.reference.c_str(), c.stepSpeedup, c.broadphaseSpeedup, c.narrowphaseSpeedup,
                    c.heightDifference, c.heightTolerance, c.contactDifference, c.contactTolerance,
                    c.agrees ? "agrees" : "DIFFERS");
    }
}

void writeJsonReport(const std::string& path, const std::vector<SceneRun>& runs,
                     const std::vector<RunComparison>& comparisons) {
    nlohmann::json report;
    report["machine"] = machineDescription();
    if (!runs.empty()) {
        report["scene"] = runs.front().sceneName;
        report["description"] = runs.front().sceneDescription;
        report["objects"] = runs.front().objects;
    }
    report["runs"] = nlohmann::json::array();
    for (const SceneRun& run : runs) {
        const RunSummary s = summarizeRun(run);
        nlohmann::json entry{{"name", runName(run)},
                             {"broadphase", run.broadphase},
                             {"backend", run.backend},
                             {"narrowPhase", run.narrowPhase},
                             {"softSolver", run.softSolver},
                             {"buildMs", run.buildMs},
                             {"steps", run.steps.size()},
                             {"meanStepMs", s.meanTotalMs},
                             {"medianStepMs", s.medianTotalMs},
                             {"meanBroadphaseMs", s.meanBroadphaseMs},
                             {"meanNarrowphaseMs", s.meanNarrowphaseMs},
                             {"meanSolverMs", s.meanSolverMs},
                             {"meanOtherMs", s.meanOtherMs},
                             {"peakPairs", s.peakPairs},
                             {"finalPairs", s.finalPairs},
                             {"finalContacts", s.finalContacts},
                             {"lastRayHits", run.lastRayHits},
                             {"stepsWithSelfIntersections", s.stepsWithSelfIntersections},
                             {"peakSelfIntersections", s.peakSelfIntersections},
                             {"closestRopeNodes", s.closestRopeNodes},
                             {"heights",
                              {{"mean", run.heights.mean},
                               {"lowest", run.heights.lowest},
                               {"highest", run.heights.highest},
                               {"count", run.heights.count}}}};
        nlohmann::json perStep = nlohmann::json::array();
        for (const StepRecord& step : run.steps) {
            perStep.push_back({step.totalMs, step.broadphaseMs, step.narrowphaseMs, step.solverMs, step.pairs,
                               step.contacts, step.selfIntersections, step.closestRopeNodes});
        }
        entry["perStepColumns"] = {"totalMs", "broadphaseMs", "narrowphaseMs",     "solverMs",
                                   "pairs",   "contacts",     "selfIntersections", "closestRopeNodes"};
        entry["perStep"] = std::move(perStep);
        report["runs"].push_back(std::move(entry));
    }
    report["comparisons"] = nlohmann::json::array();
    for (const RunComparison& c : comparisons) {
        report["comparisons"].push_back({{"broadphase", c.broadphase},
                                         {"reference", c.reference},
                                         {"stepSpeedup", c.stepSpeedup},
                                         {"broadphaseSpeedup", c.broadphaseSpeedup},
                                         {"narrowphaseSpeedup", c.narrowphaseSpeedup},
                                         {"heightDifference", c.heightDifference},
                                         {"heightTolerance", c.heightTolerance},
                                         {"contactDifference", c.contactDifference},
                                         {"contactTolerance", c.contactTolerance},
                                         {"agrees", c.agrees}});
    }
    std::ofstream file = openForWriting(path);
    file << report.dump(2) << '\n';
    finishWriting(file, path);
}

void writeCsvReport(const std::string& path, const std::vector<SceneRun>& runs) {
    std::ofstream file = openForWriting(path);
    file << "scene,broadphase,backend,narrow_phase,soft_solver,step,total_ms,broadphase_ms,narrowphase_ms,solver_ms,"
            "pairs,contacts,self_intersections,closest_rope_nodes\n";
    for (const SceneRun& run : runs) {
        for (std::size_t i = 0; i < run.steps.size(); ++i) {
            const StepRecord& s = run.steps[i];
            file << run.sceneName << ',' << run.broadphase << ',' << run.backend << ',' << run.narrowPhase << ','
                 << run.softSolver << ',' << i + 1 << ',' << s.totalMs << ',' << s.broadphaseMs << ','
                 << s.narrowphaseMs << ',' << s.solverMs << ',' << s.pairs << ',' << s.contacts << ','
                 << s.selfIntersections << ',' << s.closestRopeNodes << '\n';
        }
    }
    finishWriting(file, path);
}

std::string machineDescription() {
    std::string model = "unknown CPU";
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
        if (line.rfind("model name", 0) == 0) {
            const std::size_t colon = line.find(':');
            if (colon != std::string::npos) model = line.substr(colon + 2);
            break;
        }
    }
    return model + ", " + std::to_string(std::thread::hardware_concurrency()) + " hardware threads";
}

} // namespace bulletgpu::demo
