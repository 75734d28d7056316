// SPDX-License-Identifier: Zlib
#pragma once

#include <BulletCollision/CollisionDispatch/btCollisionDispatcher.h>
#include <BulletDynamics/ConstraintSolver/btSequentialImpulseConstraintSolver.h>
#include <BulletSoftBody/btDeformableMultiBodyConstraintSolver.h>

#include "kernels/common/stopwatch.h"

namespace bulletgpu::demo {

/// Milliseconds spent in one phase since the last take().
class PhaseClock {
public:
    /// Starts timing one call.
    Clock::time_point start() const { return Clock::now(); }
    /// Adds the time since start to the running total.
    void stop(Clock::time_point started) { m_milliseconds += millisecondsSince(started); }
    /// The total since the last take(), in milliseconds; resets it.
    double take() {
        const double ms = m_milliseconds;
        m_milliseconds = 0;
        return ms;
    }

private:
    double m_milliseconds = 0;
};

/// A dispatcher (btCollisionDispatcher or a subclass of it such as bulletgpu::CollisionDispatcher)
/// that times dispatchAllCollisionPairs into a clock: the narrow phase of a step (rigid-rigid,
/// soft-rigid and soft-soft collision algorithms all run in it).
template <class Dispatcher>
class TimedDispatcher final : public Dispatcher {
public:
    /// Constructs Dispatcher(configuration, args...) and times it into clock (not owned).
    template <class... Args>
    TimedDispatcher(PhaseClock& clock, btCollisionConfiguration* configuration, const Args&... args)
        : Dispatcher(configuration, args...), m_clock(clock) {}

    void dispatchAllCollisionPairs(btOverlappingPairCache* pairCache, const btDispatcherInfo& dispatchInfo,
                                   btDispatcher* dispatcher) override {
        const auto started = m_clock.start();
        Dispatcher::dispatchAllCollisionPairs(pairCache, dispatchInfo, dispatcher);
        m_clock.stop(started);
    }

private:
    PhaseClock& m_clock;
};

/// A btSequentialImpulseConstraintSolver that times solveGroup into a clock: the rigid-body solver
/// of a step.
class TimedSolver final : public btSequentialImpulseConstraintSolver {
public:
    /// Times solveGroup into clock (not owned).
    explicit TimedSolver(PhaseClock& clock) : m_clock(clock) {}

    btScalar solveGroup(btCollisionObject** bodies, int numBodies, btPersistentManifold** manifolds, int numManifolds,
                        btTypedConstraint** constraints, int numConstraints, const btContactSolverInfo& info,
                        btIDebugDraw* debugDrawer, btDispatcher* dispatcher) override {
        const auto started = m_clock.start();
        const btScalar residual = btSequentialImpulseConstraintSolver::solveGroup(
            bodies, numBodies, manifolds, numManifolds, constraints, numConstraints, info, debugDrawer, dispatcher);
        m_clock.stop(started);
        return residual;
    }

private:
    PhaseClock& m_clock;
};

/// A btDeformableMultiBodyConstraintSolver that times solveDeformableBodyGroup into a clock: the
/// contact solve of a deformable world's step (rigid and deformable contacts; the deformable
/// bodies' own momentum solve that follows is not in it).
class TimedDeformableSolver final : public btDeformableMultiBodyConstraintSolver {
public:
    /// Times solveDeformableBodyGroup into clock (not owned).
    explicit TimedDeformableSolver(PhaseClock& clock) : m_clock(clock) {}

    void solveDeformableBodyGroup(btCollisionObject** bodies, int numBodies, btCollisionObject** deformableBodies,
                                  int numDeformableBodies, btPersistentManifold** manifolds, int numManifolds,
                                  btTypedConstraint** constraints, int numConstraints,
                                  btMultiBodyConstraint** multiBodyConstraints, int numMultiBodyConstraints,
                                  const btContactSolverInfo& info, btIDebugDraw* debugDrawer,
                                  btDispatcher* dispatcher) override {
        const auto started = m_clock.start();
        btDeformableMultiBodyConstraintSolver::solveDeformableBodyGroup(
            bodies, numBodies, deformableBodies, numDeformableBodies, manifolds, numManifolds, constraints,
            numConstraints, multiBodyConstraints, numMultiBodyConstraints, info, debugDrawer, dispatcher);
        m_clock.stop(started);
    }

private:
    PhaseClock& m_clock;
};

} // namespace bulletgpu::demo
