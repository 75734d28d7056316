// SPDX-License-Identifier: Zlib
#include "demos/app/scene_run.h"

#include "demos/app/rope_proximity.h"
#include "demos/app/self_intersections.h"

#include "demos/common/broadphase_factory.h"
#include "kernels/common/stopwatch.h"

#include <BulletSoftBody/btSoftBody.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>

#include <unistd.h>

namespace bulletgpu::demo {
namespace {

int contactCount(btDispatcher& dispatcher) {
    int contacts = 0;
    for (int i = 0; i < dispatcher.getNumManifolds(); ++i) {
        contacts += dispatcher.getManifoldByIndexInternal(i)->getNumContacts();
    }
    return contacts;
}

std::string backendName(btBroadphaseInterface& broadphase) {
    const auto* gpu = dynamic_cast<const Broadphase*>(&broadphase);
    if (gpu == nullptr) return {};
    return gpu->backend() == Backend::Cuda ? "cuda" : "cpu";
}

/// Progress on stderr for runs that last: redrawn every second on a terminal, a line every ten
/// seconds otherwise; nothing for runs shorter than two seconds.
class ProgressLine {
public:
    ProgressLine(std::string label, int steps)
        : m_label(std::move(label)), m_steps(steps), m_terminal(isatty(fileno(stderr)) != 0), m_start(Clock::now()),
          m_lastShown(m_start) {}

    void update(int step) {
        const double sinceShown = millisecondsSince(m_lastShown);
        const double elapsed = millisecondsSince(m_start);
        if (elapsed < 2000 || sinceShown < (m_terminal ? 1000 : 10000)) return;
        m_lastShown = Clock::now();
        m_shown = true;
        std::fprintf(stderr, m_terminal ? "\r%s: step %d/%d, %.1f ms/step   " : "%s: step %d/%d, %.1f ms/step\n",
                     m_label.c_str(), step, m_steps, elapsed / step);
        std::fflush(stderr);
    }

    void finish() {
        if (m_shown && m_terminal) std::fprintf(stderr, "\r%70s\r", "");
    }

private:
    std::string m_label;
    int m_steps;
    bool m_terminal;
    Clock::time_point m_start;
    Clock::time_point m_lastShown;
    bool m_shown = false;
};

} // namespace

std::string runName(const SceneRun& run) {
    std::string name = run.narrowChosen ? run.broadphase + "/" + run.narrowPhase : run.broadphase;
    return run.softSolverChosen ? name + "/" + run.softSolver : name;
}

HeightSummary summarizeHeights(const btCollisionWorld& world) {
    HeightSummary summary;
    summary.lowest = std::numeric_limits<double>::infinity();
    summary.highest = -std::numeric_limits<double>::infinity();
    auto add = [&summary](double y) {
        summary.mean += y;
        summary.lowest = std::min(summary.lowest, y);
        summary.highest = std::max(summary.highest, y);
        ++summary.count;
    };
    const btCollisionObjectArray& objects = world.getCollisionObjectArray();
    for (int i = 0; i < objects.size(); ++i) {
        const btCollisionObject* object = objects[i];
        if (const btSoftBody* soft = btSoftBody::upcast(object)) {
            for (int n = 0; n < soft->m_nodes.size(); ++n) add(soft->m_nodes[n].m_x.y());
        } else if (const btRigidBody* body = btRigidBody::upcast(object)) {
            if (body->getInvMass() > 0) add(body->getCenterOfMassPosition().y());
        }
    }
    if (summary.count == 0) return HeightSummary{};
    summary.mean /= summary.count;
    return summary;
}

SceneRun runScene(const std::string& scenePath, const std::string& broadphase, int steps,
                  const SceneLoadOptions& options, const StepObserver& observer, bool countSelfIntersections) {
    const auto buildStart = Clock::now();
    auto factory = [&broadphase](const btVector3& worldMin, const btVector3& worldMax, int maxProxies) {
        return makeBroadphase(broadphase, worldMin, worldMax, maxProxies);
    };
    std::unique_ptr<SceneWorld> scene = loadSceneFile(scenePath, factory, options);
    SceneRun run;
    run.buildMs = millisecondsSince(buildStart);
    run.broadphase = broadphase;
    run.backend = backendName(scene->broadphase().inner());
    run.narrowPhase = scene->narrowPhase();
    run.narrowChosen = !options.narrow.empty();
    run.softSolver = scene->softSolver();
    run.softSolverChosen = !options.softSolver.empty();
    run.sceneName = scene->name();
    run.sceneDescription = scene->description();
    run.objects = scene->objectCount();
    if (steps <= 0) steps = scene->defaultSteps();
    run.steps.reserve(static_cast<std::size_t>(steps));

    TimedBroadphase& timedBroadphase = scene->broadphase();
    btCollisionDispatcher& dispatcher = scene->dispatcher();
    PhaseClock& narrowphaseClock = scene->narrowphaseClock();
    PhaseClock& solverClock = scene->solverClock();
    timedBroadphase.takeMilliseconds();
    narrowphaseClock.take();
    solverClock.take();

    std::unique_ptr<SelfIntersectionCounter> intersections;
    if (countSelfIntersections && scene->softBodies() != nullptr)
        intersections = std::make_unique<SelfIntersectionCounter>();

    ProgressLine progress(run.sceneName + " on " + runName(run), steps);
    for (int step = 1; step <= steps; ++step) {
        const auto start = Clock::now();
        scene->step();
        StepRecord record;
        record.totalMs = millisecondsSince(start);
        record.broadphaseMs = timedBroadphase.takeMilliseconds();
        record.narrowphaseMs = narrowphaseClock.take();
        record.solverMs = solverClock.take();
        record.pairs = timedBroadphase.getOverlappingPairCache()->getNumOverlappingPairs();
        record.contacts = contactCount(dispatcher);
        if (intersections) {
            record.selfIntersections = intersections->count(*scene->softBodies());
            record.closestRopeNodes = closestRopeNodes(*scene->softBodies());
        }
        run.steps.push_back(record);
        if (observer) observer(step, *scene);
        progress.update(step);
    }
    progress.finish();
    run.heights = summarizeHeights(scene->world());
    run.lastRayHits = scene->lastRayHits();
    return run;
}

} // namespace bulletgpu::demo
