// SPDX-License-Identifier: Zlib
#include <bulletgpu/BulkAabbUpdater.h>

#include <bulletgpu/Broadphase.h>

#include "kernels/common/stopwatch.h"
#include "kernels/common/thread_tuner.h"

#include <BulletCollision/BroadphaseCollision/btBroadphaseProxy.h>
#include <BulletCollision/CollisionDispatch/btCollisionWorld.h>
#include <BulletCollision/CollisionShapes/btCollisionShape.h>
#include <BulletCollision/NarrowPhaseCollision/btPersistentManifold.h>

#include <omp.h>

namespace bulletgpu {
namespace {

/// Below this many objects the boxes are computed on the calling thread alone, as the CPU
/// backend sweeps them: a few thousand boxes take well under a millisecond, less than a team
/// whose cores are shared with other programs may lose waiting at its barrier.
constexpr int cParallelObjects = 32768;

/// How many objects ahead the box loop loads objects into the cache.
constexpr int cPrefetchDistance = 8;

/// Bullet's limit on a moving object's squared box diagonal (btCollisionWorld::updateSingleAabb).
constexpr btScalar cOverflowDiagonal2 = btScalar(1e12);

} // namespace

BulkAabbUpdater::BulkAabbUpdater(int threads) { setThreads(threads); }

BulkAabbUpdater::~BulkAabbUpdater() = default;

void BulkAabbUpdater::setThreads(int threads) {
    m_tuner = std::make_unique<ThreadTuner>(threads > 0 ? threads : omp_get_max_threads());
}

bool BulkAabbUpdater::isParallelShape(int shapeType) {
    switch (shapeType) {
        // Convex shapes: cached local boxes or const support functions (btConvexInternalShape).
        case BOX_SHAPE_PROXYTYPE:
        case TRIANGLE_SHAPE_PROXYTYPE:
        case TETRAHEDRAL_SHAPE_PROXYTYPE:
        case CONVEX_TRIANGLEMESH_SHAPE_PROXYTYPE:
        case CONVEX_HULL_SHAPE_PROXYTYPE:
        case CONVEX_POINT_CLOUD_SHAPE_PROXYTYPE:
        case SPHERE_SHAPE_PROXYTYPE:
        case MULTI_SPHERE_SHAPE_PROXYTYPE:
        case CAPSULE_SHAPE_PROXYTYPE:
        case CONE_SHAPE_PROXYTYPE:
        case CYLINDER_SHAPE_PROXYTYPE:
        case UNIFORM_SCALING_SHAPE_PROXYTYPE:
        case MINKOWSKI_SUM_SHAPE_PROXYTYPE:
        case MINKOWSKI_DIFFERENCE_SHAPE_PROXYTYPE:
        case BOX_2D_SHAPE_PROXYTYPE:
        case CONVEX_2D_SHAPE_PROXYTYPE:
        // Concave shapes, compounds and the rest: their stored local box, transformed.
        case TRIANGLE_MESH_SHAPE_PROXYTYPE:
        case SCALED_TRIANGLE_MESH_SHAPE_PROXYTYPE:
        case MULTIMATERIAL_TRIANGLE_MESH_PROXYTYPE:
        case TERRAIN_SHAPE_PROXYTYPE:
        case GIMPACT_SHAPE_PROXYTYPE:
        case STATIC_PLANE_PROXYTYPE:
        case COMPOUND_SHAPE_PROXYTYPE:
        case EMPTY_SHAPE_PROXYTYPE:
            return true;
        default:
            return false;
    }
}

BulkAabbUpdater::Action BulkAabbUpdater::computeBox(btCollisionObject& object, std::size_t i, bool continuous) {
    // btCollisionWorld::updateSingleAabb, step for step, so that the bits are the same. The
    // object's flags are read first, so that their cache miss overlaps getAabb's work.
    const bool sweep = continuous && object.getInternalType() == btCollisionObject::CO_RIGID_BODY &&
                       !object.isStaticOrKinematicObject();
    const bool isStatic = object.isStaticObject();
    const btCollisionShape& shape = *object.getCollisionShape();
    btVector3 min, max;
    shape.getAabb(object.getWorldTransform(), min, max);
    const btVector3 threshold(gContactBreakingThreshold, gContactBreakingThreshold, gContactBreakingThreshold);
    min -= threshold;
    max += threshold;
    if (sweep) {
        btVector3 min2, max2;
        shape.getAabb(object.getInterpolationWorldTransform(), min2, max2);
        min2 -= threshold;
        max2 += threshold;
        min.setMin(min2);
        max.setMax(max2);
    }
    m_mins[i] = min;
    m_maxs[i] = max;
    if (isStatic || (max - min).length2() < cOverflowDiagonal2) {
        m_proxies[i] = object.getBroadphaseHandle();
        return Action::SetBox;
    }
    return Action::Overflow;
}

void BulkAabbUpdater::update(btCollisionWorld& world) {
    btCollisionObjectArray& objects = world.getCollisionObjectArray();
    const int count = objects.size();
    const auto size = static_cast<std::size_t>(count);
    m_proxies.resize(size);
    m_mins.resize(size);
    m_maxs.resize(size);
    m_actions.resize(size);
    const bool forceAll = world.getForceUpdateAllAabbs();
    const bool continuous = world.getDispatchInfo().m_useContinuous;
    const bool tuned = count >= cParallelObjects;
    const int threads = tuned ? m_tuner->threadsForNextUpdate() : 1;
    const auto start = Clock::now();
    int unusual = 0; // objects computed serially or overflowing
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static) reduction(+ : unusual)
    for (int i = 0; i < count; ++i) {
        if (i + cPrefetchDistance < count) { // the objects are far apart in memory: load them ahead
            const char* ahead = reinterpret_cast<const char*>(objects[i + cPrefetchDistance]);
            for (std::size_t b = 0; b < sizeof(btCollisionObject); b += 64) __builtin_prefetch(ahead + b);
        }
        btCollisionObject& object = *objects[i];
        const auto slot = static_cast<std::size_t>(i);
        m_proxies[slot] = nullptr;
        Action action = Action::Skip;
        if (forceAll || object.isActive()) {
            action = isParallelShape(object.getCollisionShape()->getShapeType()) ? computeBox(object, slot, continuous)
                                                                                 : Action::ComputeSerially;
        }
        m_actions[slot] = action;
        unusual += action == Action::ComputeSerially || action == Action::Overflow ? 1 : 0;
    }
    for (std::size_t i = 0; i < size && unusual > 0; ++i) {
        if (m_actions[i] == Action::ComputeSerially)
            m_actions[i] = computeBox(*objects[static_cast<int>(i)], i, continuous);
    }
    if (tuned) m_tuner->record(millisecondsSince(start));

    auto* bulk = dynamic_cast<Broadphase*>(world.getBroadphase());
    if (bulk != nullptr) {
        bulk->setAabbs(m_proxies.data(), m_mins.data(), m_maxs.data(), count, world.getDispatcher());
        for (std::size_t i = 0; i < size && unusual > 0; ++i) {
            if (m_actions[i] == Action::Overflow) world.updateSingleAabb(objects[static_cast<int>(i)]);
        }
        return;
    }
    btBroadphaseInterface& broadphase = *world.getBroadphase();
    for (std::size_t i = 0; i < size; ++i) {
        if (m_actions[i] == Action::SetBox) {
            broadphase.setAabb(m_proxies[i], m_mins[i], m_maxs[i], world.getDispatcher());
        } else if (m_actions[i] == Action::Overflow) {
            world.updateSingleAabb(objects[static_cast<int>(i)]);
        }
    }
}

} // namespace bulletgpu
