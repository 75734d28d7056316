// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/common/phase_timers.h"

#include <BulletCollision/BroadphaseCollision/btBroadphaseInterface.h>

#include <memory>

namespace bulletgpu::demo {

/// Forwards every call to another broadphase and adds up the time spent in setAabb and
/// calculateOverlappingPairs, so a demo can report the broad phase apart from the step.
class TimedBroadphase final : public btBroadphaseInterface {
public:
    /// Wraps and owns a broadphase.
    explicit TimedBroadphase(std::unique_ptr<btBroadphaseInterface> inner) : m_inner(std::move(inner)) {}

    /// Broad-phase milliseconds since the last takeMilliseconds().
    double takeMilliseconds() { return m_clock.take(); }

    /// The wrapped broadphase.
    btBroadphaseInterface& inner() { return *m_inner; }

    btBroadphaseProxy* createProxy(const btVector3& aabbMin, const btVector3& aabbMax, int shapeType, void* userPtr,
                                   int group, int mask, btDispatcher* dispatcher) override {
        return m_inner->createProxy(aabbMin, aabbMax, shapeType, userPtr, group, mask, dispatcher);
    }
    void destroyProxy(btBroadphaseProxy* proxy, btDispatcher* dispatcher) override {
        m_inner->destroyProxy(proxy, dispatcher);
    }
    void setAabb(btBroadphaseProxy* proxy, const btVector3& aabbMin, const btVector3& aabbMax,
                 btDispatcher* dispatcher) override {
        const auto started = m_clock.start();
        m_inner->setAabb(proxy, aabbMin, aabbMax, dispatcher);
        m_clock.stop(started);
    }
    void getAabb(btBroadphaseProxy* proxy, btVector3& aabbMin, btVector3& aabbMax) const override {
        m_inner->getAabb(proxy, aabbMin, aabbMax);
    }
    void rayTest(const btVector3& from, const btVector3& to, btBroadphaseRayCallback& callback,
                 const btVector3& aabbMin, const btVector3& aabbMax) override {
        m_inner->rayTest(from, to, callback, aabbMin, aabbMax);
    }
    void aabbTest(const btVector3& aabbMin, const btVector3& aabbMax, btBroadphaseAabbCallback& callback) override {
        m_inner->aabbTest(aabbMin, aabbMax, callback);
    }
    void calculateOverlappingPairs(btDispatcher* dispatcher) override {
        const auto started = m_clock.start();
        m_inner->calculateOverlappingPairs(dispatcher);
        m_clock.stop(started);
    }
    btOverlappingPairCache* getOverlappingPairCache() override { return m_inner->getOverlappingPairCache(); }
    const btOverlappingPairCache* getOverlappingPairCache() const override {
        return m_inner->getOverlappingPairCache();
    }
    void getBroadphaseAabb(btVector3& aabbMin, btVector3& aabbMax) const override {
        m_inner->getBroadphaseAabb(aabbMin, aabbMax);
    }
    void resetPool(btDispatcher* dispatcher) override { m_inner->resetPool(dispatcher); }
    void printStats() override { m_inner->printStats(); }

private:
    std::unique_ptr<btBroadphaseInterface> m_inner;
    PhaseClock m_clock;
};

} // namespace bulletgpu::demo
