// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/app/scene_run.h"

#include <string>
#include <vector>

namespace bulletgpu::demo {

/// Per-phase statistics of one run, over its steps.
struct RunSummary {
    double meanTotalMs = 0;       ///< Mean whole step.
    double medianTotalMs = 0;     ///< Median whole step.
    double meanBroadphaseMs = 0;  ///< Mean broad phase.
    double meanNarrowphaseMs = 0; ///< Mean narrow phase.
    double meanSolverMs = 0;      ///< Mean constraint solver.
    double meanOtherMs = 0;       ///< Mean of the rest (integration, soft bodies, rays, scripted motion).
    int peakPairs = 0;            ///< Most pairs after any step.
    int finalPairs = 0;           ///< Pairs after the last step.
    int finalContacts = 0;        ///< Contact points after the last step.
    /// Steps after which some soft body had intersecting triangle pairs; -1 when not counted.
    int stepsWithSelfIntersections = -1;
    long long peakSelfIntersections = -1; ///< Most intersecting pairs after one step; -1 when not counted.
    double closestRopeNodes = -1;         ///< Least StepRecord::closestRopeNodes of the run; -1 when none.
};

/// How a run's physics and speed compare with the reference run (the first one).
struct RunComparison {
    std::string broadphase;        ///< The compared run (its runName).
    std::string reference;         ///< The reference run (its runName).
    double stepSpeedup = 0;        ///< Reference mean step time over this run's.
    double broadphaseSpeedup = 0;  ///< Reference mean broad-phase time over this run's.
    double narrowphaseSpeedup = 0; ///< Reference mean narrow-phase time over this run's.
    double heightDifference = 0;   ///< This run's mean height minus the reference's.
    double heightTolerance = 0;    ///< Allowed |heightDifference|: 10% of the reference's height spread + 0.05.
    int contactDifference = 0;     ///< This run's final contacts minus the reference's.
    int contactTolerance = 0;      ///< Allowed |contactDifference|: 20% of the reference's, at least 10.
    bool agrees = false;           ///< Both differences within their tolerances.
};

/// Summarizes a run's steps.
RunSummary summarizeRun(const SceneRun& run);

/// Compares each run after the first with the first.
std::vector<RunComparison> compareRuns(const std::vector<SceneRun>& runs);

/// Prints the per-phase table and, for several runs, the comparisons.
void printReport(const std::vector<SceneRun>& runs, const std::vector<RunComparison>& comparisons);

/// Writes the runs (summaries, comparisons, machine, every step) as JSON; throws on I/O errors.
void writeJsonReport(const std::string& path, const std::vector<SceneRun>& runs,
                     const std::vector<RunComparison>& comparisons);

/// Writes one CSV row per step and run; throws on I/O errors.
void writeCsvReport(const std::string& path, const std::vector<SceneRun>& runs);

/// The CPU model and core count of this machine, for reports.
std::string machineDescription();

} // namespace bulletgpu::demo
