// SPDX-License-Identifier: Zlib
#include <bulletgpu/PairCache.h>

#include <BulletCollision/BroadphaseCollision/btCollisionAlgorithm.h>
#include <BulletCollision/BroadphaseCollision/btDispatcher.h>

#include <algorithm>
#include <utility>

namespace bulletgpu {

namespace {

/// Puts the proxy with the lower unique id first, as btBroadphasePair stores them.
void orderByUid(btBroadphaseProxy*& proxy0, btBroadphaseProxy*& proxy1) {
    if (proxy0->m_uniqueId > proxy1->m_uniqueId) std::swap(proxy0, proxy1);
}

} // namespace

PairCache::PairCache() {
    // As Bullet's cache: the array is allocated from the start, so its pointer is never null.
    m_pairs.reserve(2);
}

bool PairCache::needsBroadphaseCollision(btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1) const {
    if (m_filter != nullptr) return m_filter->needBroadphaseCollision(proxy0, proxy1);
    return (proxy0->m_collisionFilterGroup & proxy1->m_collisionFilterMask) != 0 &&
           (proxy1->m_collisionFilterGroup & proxy0->m_collisionFilterMask) != 0;
}

btBroadphasePair* PairCache::addOverlappingPair(btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1) {
    if (!needsBroadphaseCollision(proxy0, proxy1)) return nullptr;
    return insertPair(proxy0, proxy1);
}

btBroadphasePair* PairCache::insertPair(btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1) {
    orderByUid(proxy0, proxy1);
    const std::uint64_t key = PairIndex::keyOf(proxy0->getUid(), proxy1->getUid());
    const int position = m_pairs.size();
    const int present = m_index.findOrInsert(key, position);
    if (present >= 0) return &m_pairs[present];
    btBroadphasePair* pair = new (&m_pairs.expandNonInitializing()) btBroadphasePair(*proxy0, *proxy1);
    pair->m_internalTmpValue = 0;
    m_keys.push_back(key);
    if (m_ghost != nullptr) m_ghost->addOverlappingPair(proxy0, proxy1);
    return pair;
}

void* PairCache::removeOverlappingPair(btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1, btDispatcher* dispatcher) {
    orderByUid(proxy0, proxy1);
    const std::uint64_t key = PairIndex::keyOf(proxy0->getUid(), proxy1->getUid());
    const int position = m_index.take(key);
    if (position < 0) return nullptr;
    return removeAt(position, proxy0, proxy1, dispatcher);
}

void* PairCache::removeAt(int position, btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1,
                          btDispatcher* dispatcher) {
    cleanOverlappingPair(m_pairs[position], dispatcher);
    void* const userData = m_pairs[position].m_internalInfo1;
    // Bullet's order: the ghost callback hears of the pair after its algorithm is freed and
    // before the last pair moves into its slot.
    if (m_ghost != nullptr) m_ghost->removeOverlappingPair(proxy0, proxy1, dispatcher);
    const int last = m_pairs.size() - 1;
    if (position != last) {
        m_pairs[position] = m_pairs[last];
        m_keys[position] = m_keys[last];
        m_index.reposition(m_keys[position], position);
    }
    m_pairs.pop_back();
    m_keys.pop_back();
    return userData;
}

void PairCache::removeOverlappingPairsContainingProxy(btBroadphaseProxy* proxy, btDispatcher* dispatcher) {
    for (int i = 0; i < m_pairs.size();) {
        const btBroadphasePair& pair = m_pairs[i];
        if (pair.m_pProxy0 == proxy || pair.m_pProxy1 == proxy) {
            removeOverlappingPair(pair.m_pProxy0, pair.m_pProxy1, dispatcher);
        } else {
            ++i;
        }
    }
}

btBroadphasePair* PairCache::getOverlappingPairArrayPtr() { return m_pairs.size() > 0 ? &m_pairs[0] : nullptr; }

const btBroadphasePair* PairCache::getOverlappingPairArrayPtr() const {
    return m_pairs.size() > 0 ? &m_pairs[0] : nullptr;
}

void PairCache::cleanOverlappingPair(btBroadphasePair& pair, btDispatcher* dispatcher) {
    if (pair.m_algorithm == nullptr || dispatcher == nullptr) return;
    pair.m_algorithm->~btCollisionAlgorithm();
    dispatcher->freeCollisionAlgorithm(pair.m_algorithm);
    pair.m_algorithm = nullptr;
}

void PairCache::cleanProxyFromPairs(btBroadphaseProxy* proxy, btDispatcher* dispatcher) {
    for (int i = 0; i < m_pairs.size(); ++i) {
        btBroadphasePair& pair = m_pairs[i];
        if (pair.m_pProxy0 == proxy || pair.m_pProxy1 == proxy) cleanOverlappingPair(pair, dispatcher);
    }
}

void PairCache::processAllOverlappingPairs(btOverlapCallback* callback, btDispatcher* dispatcher) {
    for (int i = 0; i < m_pairs.size();) {
        btBroadphasePair& pair = m_pairs[i];
        if (callback->processOverlap(pair)) {
            removeOverlappingPair(pair.m_pProxy0, pair.m_pProxy1, dispatcher);
        } else {
            ++i;
        }
    }
}

void PairCache::processAllOverlappingPairs(btOverlapCallback* callback, btDispatcher* dispatcher,
                                           const btDispatcherInfo& dispatchInfo) {
    if (!dispatchInfo.m_deterministicOverlappingPairs) {
        processAllOverlappingPairs(callback, dispatcher);
        return;
    }
    // Bullet's deterministic order: descending (uid0, uid1). Each pair is found again by its
    // key before its visit, so a removal cannot make a later visit read a moved or stale slot.
    std::vector<std::uint64_t> keys(m_keys);
    std::sort(keys.begin(), keys.end(), [](std::uint64_t a, std::uint64_t b) { return a > b; });
    for (const std::uint64_t key : keys) {
        const int position = m_index.find(key);
        if (position < 0) continue;
        btBroadphasePair& pair = m_pairs[position];
        if (!callback->processOverlap(pair)) continue;
        m_index.erase(key);
        removeAt(position, pair.m_pProxy0, pair.m_pProxy1, dispatcher);
    }
}

btBroadphasePair* PairCache::findPair(btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1) {
    const int position = m_index.find(PairIndex::keyOf(proxy0->getUid(), proxy1->getUid()));
    return position < 0 ? nullptr : &m_pairs[position];
}

void PairCache::sortOverlappingPairs(btDispatcher* dispatcher) {
    btBroadphasePairArray pairs;
    pairs.copyFromArray(m_pairs);
    for (int i = 0; i < pairs.size(); ++i) removeOverlappingPair(pairs[i].m_pProxy0, pairs[i].m_pProxy1, dispatcher);
    pairs.quickSort(btBroadphasePairSortPredicate());
    for (int i = 0; i < pairs.size(); ++i) addOverlappingPair(pairs[i].m_pProxy0, pairs[i].m_pProxy1);
}

bool PairCache::isConsistent() const {
    if (m_index.size() != static_cast<std::size_t>(m_pairs.size()) || m_keys.size() != m_index.size()) return false;
    for (int i = 0; i < m_pairs.size(); ++i) {
        const btBroadphasePair& pair = m_pairs[i];
        if (pair.m_pProxy0->m_uniqueId > pair.m_pProxy1->m_uniqueId) return false;
        const std::uint64_t key = PairIndex::keyOf(pair.m_pProxy0->getUid(), pair.m_pProxy1->getUid());
        if (m_keys[static_cast<std::size_t>(i)] != key || m_index.find(key) != i) return false;
    }
    return true;
}

} // namespace bulletgpu
