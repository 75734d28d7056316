// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/common/camera_spec.h"
#include "demos/common/phase_timers.h"
#include "demos/common/timed_broadphase.h"

#include <btBulletDynamicsCommon.h>

#include <functional>
#include <memory>
#include <string>

class btDeformableMultiBodyDynamicsWorld;
class btSoftBody;
class btSoftRigidDynamicsWorld;

namespace bulletgpu {
class SoftBodySolver;
} // namespace bulletgpu

namespace bulletgpu::demo {

/// Makes the broadphase a scene runs on. It is given a box that contains the scene for its whole
/// run (axis-sweep broadphases need world bounds) and the number of collision objects the scene
/// will create (fixed-capacity broadphases need it).
using BroadphaseFactory = std::function<std::unique_ptr<btBroadphaseInterface>(
    const btVector3& worldMin, const btVector3& worldMax, int maxProxies)>;

/// How a scene file is turned into a world.
struct SceneLoadOptions {
    /// Multiplies the object counts of the generators a scene file marks as scalable (the large
    /// fields and the Avril et al. scenes), so CI can run them small; 1 builds the file as written.
    double scale = 1.0;
    /// The narrow phase for mesh pairs (a name from narrowPhaseNames(): bullet, bulletgpu,
    /// bulletgpu-cpu, bulletgpu-cuda); empty takes the scene file's "world.narrow".
    std::string narrow;
    /// The soft-body solver of soft scenes (a name from softSolverNames(): bullet, bulletgpu,
    /// bulletgpu-cpu, bulletgpu-cuda), or the world of deformable scenes (bullet: Bullet's
    /// btDeformableMultiBodyDynamicsWorld, the others bulletgpu::DeformableMultiBodyDynamicsWorld);
    /// empty takes the scene file's "world.softSolver".
    std::string softSolver;
};

/// A Bullet world built from a scene file, with everything it owns (shapes, bodies, constraints,
/// soft bodies, the dispatcher, solver and broadphase), ready to be stepped headlessly.
class SceneWorld {
public:
    virtual ~SceneWorld() = default;

    /// The scene's name, from its file.
    virtual const std::string& name() const = 0;
    /// One line saying what the scene re-creates (for example "BenchmarkDemo 1, 3000 boxes").
    virtual const std::string& description() const = 0;
    /// The dynamics world (a btSoftRigidDynamicsWorld for soft scenes, a
    /// btDeformableMultiBodyDynamicsWorld for deformable scenes).
    virtual btDiscreteDynamicsWorld& world() = 0;
    /// The soft-body world of a soft scene, or nullptr.
    virtual btSoftRigidDynamicsWorld* softWorld() = 0;
    /// The deformable world of a deformable scene, or nullptr.
    virtual btDeformableMultiBodyDynamicsWorld* deformableWorld() = 0;
    /// The soft bodies of a soft or deformable scene's world, or nullptr in a rigid scene.
    virtual const btAlignedObjectArray<btSoftBody*>* softBodies() = 0;
    /// The broadphase the world runs on, wrapped so it is timed.
    virtual TimedBroadphase& broadphase() = 0;
    /// The world's dispatcher: Bullet's, or bulletgpu::CollisionDispatcher (see narrowPhase()).
    virtual btCollisionDispatcher& dispatcher() = 0;
    /// Time the dispatcher spent in dispatchAllCollisionPairs: the narrow phase.
    virtual PhaseClock& narrowphaseClock() = 0;
    /// The narrow phase's name (bullet, bulletgpu, bulletgpu-cpu or bulletgpu-cuda).
    virtual const std::string& narrowPhase() const = 0;
    /// The soft-body solver's name (bullet, bulletgpu, bulletgpu-cpu or bulletgpu-cuda; in a
    /// deformable scene, the world's); bullet in rigid scenes.
    virtual const std::string& softSolver() const = 0;
    /// The bulletgpu::SoftBodySolver the soft world runs on, or nullptr when it runs on Bullet's
    /// own btDefaultSoftBodySolver (or the scene is rigid or deformable).
    virtual SoftBodySolver* bulletgpuSoftSolver() = 0;
    /// Time the world's constraint solver spent solving: solveGroup (rigid and soft scenes), or the
    /// deformable world's contact solve (solveDeformableBodyGroup).
    virtual PhaseClock& solverClock() = 0;
    /// The camera the scene file asks for.
    virtual const CameraSpec& camera() const = 0;
    /// Steps the scene file suggests for a run.
    virtual int defaultSteps() const = 0;
    /// Collision objects in the world (rigid and soft).
    virtual int objectCount() const = 0;

    /// One frame: stepSimulation with the scene's time step (one internal step). The scene's
    /// scripted actions run around every internal step: those that come before it (moving
    /// kinematic objects) and those that come after it (casting rays, as BenchmarkDemo does).
    virtual void step() = 0;

    /// Real time: stepSimulation(elapsedSeconds, maxSubSteps, the scene's time step), Bullet's
    /// own fixed substeps (none when less than a step has elapsed, time beyond maxSubSteps
    /// dropped), with the scripted actions around each substep. Returns the substeps taken.
    virtual int advance(double elapsedSeconds, int maxSubSteps) = 0;
    /// The scene's fixed time step, in seconds.
    virtual double timeStep() const = 0;

    /// Mean height (y) of the dynamic rigid bodies and soft-body nodes: how the scene settled.
    virtual double meanHeight() const = 0;
    /// Rays that hit something in the last step, for scenes that cast rays (0 otherwise).
    virtual int lastRayHits() const = 0;
};

/// Reads a scene file and builds its world on the broadphase the factory makes. Throws
/// std::runtime_error naming the file and the offending field (for example
/// "scenes/x.json: objects[2].count: expected a positive integer") on a malformed file.
std::unique_ptr<SceneWorld> loadSceneFile(const std::string& path, const BroadphaseFactory& makeBroadphase,
                                          const SceneLoadOptions& options = {});

/// The objects a scene file's scalable generators create at scale 1 (the sum of their "count"
/// fields), read without building anything: SceneLoadOptions::scale times this is what a scaled
/// load creates of them. 0 for a file without scalable generators. Throws as loadSceneFile does
/// on a file that cannot be read or parsed.
double scalableObjectCount(const std::string& path);

} // namespace bulletgpu::demo
