// SPDX-License-Identifier: Zlib
#pragma once

#include "support/random_scenes.h"

#include <bulletgpu/Broadphase.h>

#include <catch2/catch.hpp>

#include <BulletCollision/BroadphaseCollision/btOverlappingPairCache.h>
#include <BulletCollision/CollisionDispatch/btCollisionDispatcher.h>
#include <BulletCollision/CollisionDispatch/btDefaultCollisionConfiguration.h>
#include <BulletCollision/CollisionDispatch/btGhostObject.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <memory>
#include <set>
#include <utility>
#include <vector>

namespace bulletgpu::test {

/// An unordered pair of test object indices, lower first.
using ObjectPair = std::pair<std::size_t, std::size_t>;

/// The test object index of a proxy's client (stored as the object's user index).
inline std::size_t objectIndex(const btBroadphaseProxy* proxy) {
    return static_cast<std::size_t>(static_cast<const btCollisionObject*>(proxy->m_clientObject)->getUserIndex());
}

/// A CPU broadphase config that does not log.
inline BroadphaseConfig cpuConfig(MarginBoxes margins = MarginBoxes::Auto) {
    BroadphaseConfig config;
    config.backend = Backend::Cpu;
    config.marginBoxes = margins;
    config.logBackendChoice = false;
    return config;
}

/// Records the ghost pair events a pair cache fires.
struct CountingPairCallback : btOverlappingPairCallback {
    std::multiset<ObjectPair> added;   ///< Pairs reported as added.
    std::multiset<ObjectPair> removed; ///< Pairs reported as removed.

    static ObjectPair key(btBroadphaseProxy* a, btBroadphaseProxy* b) {
        return std::minmax(objectIndex(a), objectIndex(b));
    }
    btBroadphasePair* addOverlappingPair(btBroadphaseProxy* a, btBroadphaseProxy* b) override {
        added.insert(key(a, b));
        return nullptr;
    }
    void* removeOverlappingPair(btBroadphaseProxy* a, btBroadphaseProxy* b, btDispatcher*) override {
        removed.insert(key(a, b));
        return nullptr;
    }
    void removeOverlappingPairsContainingProxy(btBroadphaseProxy*, btDispatcher*) override {
        FAIL("a broadphase must never call removeOverlappingPairsContainingProxy on the ghost callback");
    }
};

/// Drives one broadphase with createProxy / setAabb / destroyProxy / calculateOverlappingPairs
/// on test objects, and reads its pair cache and queries back as sets of object indices.
class BroadphaseHarness {
public:
    /// Owns the broadphase, a real dispatcher and `capacity` collision objects.
    BroadphaseHarness(std::unique_ptr<btBroadphaseInterface> broadphase, std::size_t capacity)
        : m_broadphase(std::move(broadphase)), m_dispatcher(&m_configuration), m_proxies(capacity, nullptr),
          m_boxes(capacity) {
        for (std::size_t i = 0; i < capacity; ++i) {
            m_objects.push_back(std::make_unique<btCollisionObject>());
            m_objects.back()->setUserIndex(static_cast<int>(i));
        }
    }

    ~BroadphaseHarness() {
        for (std::size_t i = 0; i < m_proxies.size(); ++i) {
            if (m_proxies[i] != nullptr) destroy(i);
        }
    }

    /// The broadphase under test.
    btBroadphaseInterface& broadphase() { return *m_broadphase; }

    /// Makes object i a ghost object (before its proxy is created).
    void makeGhost(std::size_t i) {
        m_objects[i] = std::make_unique<btGhostObject>();
        m_objects[i]->setUserIndex(static_cast<int>(i));
    }

    /// Creates object i's proxy and makes it the object's broadphase handle, as
    /// btCollisionWorld::addCollisionObject does.
    void create(std::size_t i, const TestBox& box, int group = 1, int mask = -1) {
        m_boxes[i] = box;
        m_proxies[i] = m_broadphase->createProxy(toVector(box.min), toVector(box.max), BOX_SHAPE_PROXYTYPE,
                                                 m_objects[i].get(), group, mask, &m_dispatcher);
        m_objects[i]->setBroadphaseHandle(m_proxies[i]);
    }

    /// Moves object i's box.
    void move(std::size_t i, const TestBox& box) {
        m_boxes[i] = box;
        m_broadphase->setAabb(m_proxies[i], toVector(box.min), toVector(box.max), &m_dispatcher);
    }

    /// Moves the objects listed (a negative entry stands for a null proxy, skipped) in one
    /// Broadphase::setAabbs call; the broadphase must be a bulletgpu::Broadphase.
    void moveMany(const std::vector<long>& which, const std::vector<TestBox>& boxes) {
        std::vector<btBroadphaseProxy*> proxies;
        std::vector<btVector3> mins, maxs;
        for (std::size_t k = 0; k < which.size(); ++k) {
            const bool skipped = which[k] < 0;
            const auto i = static_cast<std::size_t>(skipped ? 0 : which[k]);
            if (!skipped) m_boxes[i] = boxes[k];
            proxies.push_back(skipped ? nullptr : m_proxies[i]);
            mins.push_back(toVector(boxes[k].min));
            maxs.push_back(toVector(boxes[k].max));
        }
        dynamic_cast<Broadphase&>(*m_broadphase)
            .setAabbs(proxies.data(), mins.data(), maxs.data(), static_cast<int>(proxies.size()), &m_dispatcher);
    }

    /// Destroys object i's proxy the way btCollisionWorld::removeCollisionObject does.
    void destroy(std::size_t i) {
        m_broadphase->getOverlappingPairCache()->cleanProxyFromPairs(m_proxies[i], &m_dispatcher);
        m_broadphase->destroyProxy(m_proxies[i], &m_dispatcher);
        m_objects[i]->setBroadphaseHandle(nullptr);
        m_proxies[i] = nullptr;
    }

    /// Whether object i has a proxy.
    bool isLive(std::size_t i) const { return m_proxies[i] != nullptr; }

    /// One broadphase update.
    void step() { m_broadphase->calculateOverlappingPairs(&m_dispatcher); }

    /// The cache's pair array as object pairs.
    std::set<ObjectPair> cachePairs() const {
        std::set<ObjectPair> pairs;
        const btOverlappingPairCache* cache = m_broadphase->getOverlappingPairCache();
        const btBroadphasePair* array = const_cast<btOverlappingPairCache*>(cache)->getOverlappingPairArrayPtr();
        for (int k = 0; k < cache->getNumOverlappingPairs(); ++k) {
            pairs.insert(std::minmax(objectIndex(array[k].m_pProxy0), objectIndex(array[k].m_pProxy1)));
        }
        return pairs;
    }

    /// Whether the cache holds each pair once.
    bool cacheHasNoDuplicates() const {
        return cachePairs().size() ==
               static_cast<std::size_t>(m_broadphase->getOverlappingPairCache()->getNumOverlappingPairs());
    }

    /// The cache's pair for objects i and j, or null.
    btBroadphasePair* findPair(std::size_t i, std::size_t j) {
        return m_broadphase->getOverlappingPairCache()->findPair(m_proxies[i], m_proxies[j]);
    }

    /// Exact inclusive overlaps of the live proxies' last boxes that pass group/mask and `accept`.
    std::set<ObjectPair> bruteForce(const std::function<bool(const ObjectPair&)>& accept = nullptr) const {
        std::set<ObjectPair> pairs;
        for (std::size_t i = 0; i < m_proxies.size(); ++i) {
            if (m_proxies[i] == nullptr) continue;
            for (std::size_t j = i + 1; j < m_proxies.size(); ++j) {
                if (m_proxies[j] == nullptr || !overlap(m_proxies[i], m_proxies[j])) continue;
                const btBroadphaseProxy* a = m_proxies[i];
                const btBroadphaseProxy* b = m_proxies[j];
                const bool groups = (a->m_collisionFilterGroup & b->m_collisionFilterMask) != 0 &&
                                    (b->m_collisionFilterGroup & a->m_collisionFilterMask) != 0;
                if (accept ? accept({i, j}) : groups) pairs.insert({i, j});
            }
        }
        return pairs;
    }

    /// Objects the broadphase's aabbTest reports for a box.
    std::set<std::size_t> aabbQuery(const TestBox& box) {
        struct Collect : btBroadphaseAabbCallback {
            std::set<std::size_t> hits;
            bool process(const btBroadphaseProxy* proxy) override {
                hits.insert(objectIndex(proxy));
                return true;
            }
        } collect;
        m_broadphase->aabbTest(toVector(box.min), toVector(box.max), collect);
        return collect.hits;
    }

    /// Objects whose box overlaps a query box, by brute force.
    std::set<std::size_t> bruteForceAabb(const TestBox& box) const {
        std::set<std::size_t> hits;
        for (std::size_t i = 0; i < m_proxies.size(); ++i) {
            if (m_proxies[i] != nullptr && overlap(m_proxies[i], toVector(box.min), toVector(box.max))) hits.insert(i);
        }
        return hits;
    }

    /// Objects the broadphase's rayTest reports for a segment.
    std::set<std::size_t> rayQuery(const btVector3& from, const btVector3& to) {
        struct Collect : btBroadphaseRayCallback {
            std::set<std::size_t> hits;
            bool process(const btBroadphaseProxy* proxy) override {
                hits.insert(objectIndex(proxy));
                return true;
            }
        } collect;
        btVector3 direction = (to - from);
        collect.m_lambda_max = direction.length();
        direction.safeNormalize();
        for (int axis = 0; axis < 3; ++axis) {
            collect.m_rayDirectionInverse[axis] = direction[axis] == 0 ? BT_LARGE_FLOAT : 1 / direction[axis];
        }
        collect.m_signs[0] = collect.m_rayDirectionInverse[0] < 0;
        collect.m_signs[1] = collect.m_rayDirectionInverse[1] < 0;
        collect.m_signs[2] = collect.m_rayDirectionInverse[2] < 0;
        m_broadphase->rayTest(from, to, collect);
        return collect.hits;
    }

    /// Objects whose box the segment meets, by a slab test in long double.
    std::set<std::size_t> bruteForceRay(const btVector3& from, const btVector3& to) const {
        std::set<std::size_t> hits;
        for (std::size_t i = 0; i < m_proxies.size(); ++i) {
            if (m_proxies[i] == nullptr) continue;
            long double t0 = 0, t1 = 1;
            for (int axis = 0; axis < 3 && t0 <= t1; ++axis) {
                const long double o = from[axis], d = static_cast<long double>(to[axis]) - from[axis];
                const long double lo = m_proxies[i]->m_aabbMin[axis], hi = m_proxies[i]->m_aabbMax[axis];
                if (d == 0) {
                    if (o < lo || o > hi) t0 = 2;
                    continue;
                }
                long double a = (lo - o) / d, b = (hi - o) / d;
                if (a > b) std::swap(a, b);
                t0 = std::max(t0, a);
                t1 = std::min(t1, b);
            }
            if (t0 <= t1) hits.insert(i);
        }
        return hits;
    }

private:
    static btVector3 toVector(const double v[3]) {
        return btVector3(static_cast<btScalar>(v[0]), static_cast<btScalar>(v[1]), static_cast<btScalar>(v[2]));
    }
    static bool overlap(const btBroadphaseProxy* p, const btVector3& lo, const btVector3& hi) {
        for (int axis = 0; axis < 3; ++axis) {
            const btScalar a0 = p->m_aabbMin[axis], a1 = p->m_aabbMax[axis];
            if (!(a0 <= a1 && lo[axis] <= hi[axis] && a0 <= hi[axis] && lo[axis] <= a1)) return false;
        }
        return true;
    }
    static bool overlap(const btBroadphaseProxy* a, const btBroadphaseProxy* b) {
        return overlap(a, b->m_aabbMin, b->m_aabbMax);
    }

    std::unique_ptr<btBroadphaseInterface> m_broadphase;
    btDefaultCollisionConfiguration m_configuration;
    btCollisionDispatcher m_dispatcher;
    std::vector<std::unique_ptr<btCollisionObject>> m_objects;
    std::vector<btBroadphaseProxy*> m_proxies;
    std::vector<TestBox> m_boxes;
};

} // namespace bulletgpu::test
