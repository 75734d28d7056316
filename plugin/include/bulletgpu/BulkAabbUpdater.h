// SPDX-License-Identifier: Zlib
#pragma once

#include <LinearMath/btVector3.h>

#include <cstdint>
#include <memory>
#include <vector>

class btBroadphaseProxy;
class btCollisionObject;
class btCollisionWorld;

namespace bulletgpu {

class ThreadTuner;

/// Bullet's btCollisionWorld::updateAabbs() for a whole world at once: every object's box is
/// computed on OpenMP threads and, when the world's broadphase is a bulletgpu::Broadphase,
/// handed over in one Broadphase::setAabbs call instead of one virtual setAabb each. Any
/// btCollisionWorld subclass can call update() from its updateAabbs() override;
/// bulletgpu::DiscreteDynamicsWorld and bulletgpu::SoftRigidDynamicsWorld do.
///
/// The boxes and activation changes equal Bullet 3.24's, bit for bit:
/// - an object is updated when the world's forceUpdateAllAabbs is set (Bullet's default, which
///   includes static and sleeping objects) or when it isActive();
/// - its box is the shape's getAabb at the world transform, grown by gContactBreakingThreshold
///   on every side; for a rigid body that is neither static nor kinematic, and with the world's
///   dispatch info m_useContinuous, united with the same at the interpolation transform;
/// - an object that is not static and whose box has a squared diagonal of 1e12 or more gets no
///   box: it goes through the world's own updateSingleAabb, which sets DISABLE_SIMULATION and
///   reports Bullet's one "Overflow in AABB" warning.
///
/// Shapes are computed in parallel only for Bullet's own shape types, whose getAabb only reads
/// (isParallelShape); other types (custom shapes, soft bodies) are computed on the calling
/// thread. A subclass of a Bullet shape that reports the built-in type must keep its getAabb
/// free of writes. With another broadphase, setAabb is called per
/// object in the world's order, as Bullet does. Buffers are kept between calls. Like the CPU
/// backend, worlds of 32,768 objects or more go parallel and time one thread against the team
/// now and then, keeping the faster (a team that shares its cores with other programs can be
/// slower than one thread).
class BulkAabbUpdater {
public:
    /// `threads`: OpenMP threads for the box computation; 0 or less: OpenMP's default.
    explicit BulkAabbUpdater(int threads = 0);
    ~BulkAabbUpdater();

    BulkAabbUpdater(const BulkAabbUpdater&) = delete;
    BulkAabbUpdater& operator=(const BulkAabbUpdater&) = delete;

    /// Sets the OpenMP threads for the box computation; 0 or less: OpenMP's default.
    void setThreads(int threads);

    /// Computes the boxes of the world's objects that Bullet's updateAabbs() would update and
    /// gives them to the world's broadphase.
    void update(btCollisionWorld& world);

    /// Whether getAabb of this Bullet shape type only reads the shape, so that boxes can be
    /// computed on several threads.
    static bool isParallelShape(int shapeType);

private:
    /// What update() does with an object.
    enum class Action : std::uint8_t { Skip, SetBox, ComputeSerially, Overflow };

    /// Computes an object's box into slot i; returns SetBox, or Overflow when Bullet would refuse it.
    Action computeBox(btCollisionObject& object, std::size_t i, bool continuous);

    std::unique_ptr<ThreadTuner> m_tuner;
    std::vector<btBroadphaseProxy*> m_proxies; // per object: its handle when it gets a box, else null
    std::vector<btVector3> m_mins;
    std::vector<btVector3> m_maxs;
    std::vector<Action> m_actions;
};

} // namespace bulletgpu
