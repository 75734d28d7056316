// SPDX-License-Identifier: Zlib
#pragma once

#include <BulletCollision/BroadphaseCollision/btOverlappingPairCache.h>

#include <utility>

namespace bulletgpu {

/// The pair cache a Broadphase makes when the application gives none: Bullet's
/// btHashedOverlappingPairCache, unchanged, that can also start loading ahead of time what
/// adding or removing a pair reads at scattered places: the pair's hash bucket, then the first
/// pair of that bucket's chain. Each step reads what the step before it loaded, so a caller
/// walking a list of pair changes calls them at decreasing distances ahead of the change.
class PrefetchingPairCache final : public btHashedOverlappingPairCache {
public:
    /// Loads the hash bucket of the pair of these proxies (reads their ids).
    void prefetchBucket(const btBroadphaseProxy* proxy0, const btBroadphaseProxy* proxy1) {
        const int bucket = bucketOf(proxy0, proxy1);
        if (bucket < m_hashTable.size()) __builtin_prefetch(&m_hashTable[bucket]);
    }

    /// Loads the first pair of the chain in the pair's bucket and its link (reads the bucket).
    void prefetchChain(const btBroadphaseProxy* proxy0, const btBroadphaseProxy* proxy1) {
        const int head = chainHead(proxy0, proxy1);
        if (head < 0) return;
        __builtin_prefetch(&getOverlappingPairArray()[head]);
        __builtin_prefetch(&m_next[head]);
    }

    /// Loads the proxies of the first pair of the chain (whose ids the search compares) and the
    /// chain's second pair (reads the first pair and its link).
    void prefetchChainProxies(const btBroadphaseProxy* proxy0, const btBroadphaseProxy* proxy1) {
        const int head = chainHead(proxy0, proxy1);
        if (head < 0) return;
        const btBroadphasePairArray& pairs = getOverlappingPairArray();
        __builtin_prefetch(pairs[head].m_pProxy0);
        __builtin_prefetch(pairs[head].m_pProxy1);
        const int next = m_next[head];
        if (next >= 0 && next < pairs.size()) __builtin_prefetch(&pairs[next]);
    }

    /// Whether the chain of the pair's bucket holds the pair (a validator: the prefetches load
    /// the lines that adding or removing the pair reads).
    bool bucketHolds(const btBroadphaseProxy* proxy0, const btBroadphaseProxy* proxy1) const {
        const btBroadphasePairArray& pairs = getOverlappingPairArray();
        for (int index = chainHead(proxy0, proxy1); index >= 0 && index < pairs.size(); index = m_next[index]) {
            const btBroadphasePair& pair = pairs[index];
            if ((pair.m_pProxy0 == proxy0 && pair.m_pProxy1 == proxy1) ||
                (pair.m_pProxy0 == proxy1 && pair.m_pProxy1 == proxy0)) {
                return true;
            }
        }
        return false;
    }

    /// The bucket btHashedOverlappingPairCache puts the pair in: Thomas Wang's integer hash of
    /// the two unique ids (the lower one in the low 16 bits), masked by the pair array's
    /// capacity. A hash that ever differed from Bullet's would only load the wrong lines.
    int bucketOf(const btBroadphaseProxy* proxy0, const btBroadphaseProxy* proxy1) const {
        unsigned int id0 = static_cast<unsigned int>(proxy0->getUid());
        unsigned int id1 = static_cast<unsigned int>(proxy1->getUid());
        if (id0 > id1) std::swap(id0, id1);
        unsigned int key = id0 | (id1 << 16);
        key += ~(key << 15);
        key ^= key >> 10;
        key += key << 3;
        key ^= key >> 6;
        key += ~(key << 11);
        key ^= key >> 16;
        const auto capacity = static_cast<unsigned int>(getOverlappingPairArray().capacity());
        return static_cast<int>(key & (capacity - 1));
    }

private:
    /// Index of the first pair in the chain of the pair's bucket, or -1 for an empty chain.
    int chainHead(const btBroadphaseProxy* proxy0, const btBroadphaseProxy* proxy1) const {
        const int bucket = bucketOf(proxy0, proxy1);
        if (bucket >= m_hashTable.size()) return -1;
        const int head = m_hashTable[bucket];
        return head < getOverlappingPairArray().size() ? head : -1;
    }
};

} // namespace bulletgpu
