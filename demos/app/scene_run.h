// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/scene/scene_world.h"

#include <functional>
#include <string>
#include <vector>

namespace bulletgpu::demo {

/// Times and counts of one step.
struct StepRecord {
    double totalMs = 0;       ///< Whole stepSimulation, scripted actions included.
    double broadphaseMs = 0;  ///< setAabb and calculateOverlappingPairs.
    double narrowphaseMs = 0; ///< dispatchAllCollisionPairs.
    double solverMs = 0;      ///< The constraint solver's solveGroup.
    int pairs = 0;            ///< Pairs in the cache after the step.
    int contacts = 0;         ///< Contact points in all manifolds after the step.
    /// Intersecting triangle pairs sharing no vertex within the soft bodies after the step
    /// (SelfIntersectionCounter); -1 when not counted.
    long long selfIntersections = -1;
    /// The least distance between non-neighbour nodes of one rope after the step
    /// (closestRopeNodes); -1 when not measured or the scene has no rope.
    double closestRopeNodes = -1;
};

/// Heights (y) of the dynamic rigid bodies and soft-body nodes: how a scene settled.
struct HeightSummary {
    double mean = 0;    ///< Mean height.
    double lowest = 0;  ///< Lowest height.
    double highest = 0; ///< Highest height.
    int count = 0;      ///< Bodies and nodes measured.
};

/// One scene stepped on one broadphase.
struct SceneRun {
    std::string broadphase;        ///< The broadphase's command-line name.
    std::string backend;           ///< For BulletGpu, the backend it chose (cpu or cuda); else empty.
    std::string narrowPhase;       ///< The narrow phase for mesh pairs it ran on (bullet, bulletgpu, ...).
    bool narrowChosen = false;     ///< Whether the load options chose it (else the scene file did).
    std::string softSolver;        ///< The soft-body solver it ran on (bullet, bulletgpu, ...).
    bool softSolverChosen = false; ///< Whether the load options chose it (else the scene file did).
    std::string sceneName;         ///< The scene's name.
    std::string sceneDescription;  ///< What the scene re-creates.
    int objects = 0;               ///< Collision objects in the world.
    double buildMs = 0;            ///< Reading the file and building the world.
    std::vector<StepRecord> steps; ///< One record per step.
    HeightSummary heights;         ///< Heights after the last step.
    int lastRayHits = 0;           ///< Rays that hit in the last step, for ray-casting scenes.
};

/// Called after each step with its 1-based number, e.g. to render a frame.
using StepObserver = std::function<void(int step, SceneWorld& scene)>;

/// Loads the scene on the named broadphase (and options.narrow and options.softSolver, when set)
/// and steps it; steps <= 0 takes the file's count. With countSelfIntersections, each step of a
/// soft scene records its soft bodies' intersecting triangle pairs (StepRecord::selfIntersections)
/// and its ropes' closest non-neighbour nodes (StepRecord::closestRopeNodes).
/// Shows a progress line on stderr when the run is long.
SceneRun runScene(const std::string& scenePath, const std::string& broadphase, int steps,
                  const SceneLoadOptions& options, const StepObserver& observer, bool countSelfIntersections = false);

/// A run's name in reports: its broadphase, then "/" and its narrow phase, then "/" and its
/// soft-body solver, each when the load options chose it (dbvt, dbvt/bulletgpu, dbvt/bullet/bulletgpu).
std::string runName(const SceneRun& run);

/// Heights of the dynamic rigid bodies and soft-body nodes of a world.
HeightSummary summarizeHeights(const btCollisionWorld& world);

} // namespace bulletgpu::demo
