// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/PairIndex.h>

#include <BulletCollision/BroadphaseCollision/btOverlappingPairCache.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bulletgpu {

/// A btOverlappingPairCache that behaves as btHashedOverlappingPairCache does, pair for pair:
/// the same filtering on add, the same ghost-callback events, the same order of the pair array
/// (new pairs are appended; a removed pair's slot takes the last pair), so Bullet's
/// dispatcher, ghost objects, character controller and islands see what they would see with
/// Bullet's cache. Pairs are found through an open-addressing index (PairIndex) keyed by the
/// two proxies' unique ids instead of Bullet's chained hash; both grow by doubling, so no pair
/// allocates. absorb() applies a whole update of lost and found pairs at once.
class PairCache final : public btOverlappingPairCache {
public:
    /// An empty cache with no filter callback and no ghost callback.
    PairCache();

    /// Adds the pair unless the filter refuses it; returns it (the existing one if present), or
    /// null when refused. Reports a really new pair to the ghost callback.
    btBroadphasePair* addOverlappingPair(btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1) override;
    /// Removes the pair if present: frees its algorithm through the dispatcher, reports it to
    /// the ghost callback, moves the last pair into its slot. Returns its m_internalInfo1 (null
    /// when absent).
    void* removeOverlappingPair(btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1,
                                btDispatcher* dispatcher) override;
    /// Removes every pair of the proxy, one by one, as removeOverlappingPair does.
    void removeOverlappingPairsContainingProxy(btBroadphaseProxy* proxy, btDispatcher* dispatcher) override;

    /// The first pair (null when there is none).
    btBroadphasePair* getOverlappingPairArrayPtr() override;
    /// The first pair (null when there is none).
    const btBroadphasePair* getOverlappingPairArrayPtr() const override;
    /// The pair array, in Bullet's order.
    btBroadphasePairArray& getOverlappingPairArray() override { return m_pairs; }
    /// The pair array, in Bullet's order.
    const btBroadphasePairArray& getOverlappingPairArray() const { return m_pairs; }
    /// Frees the pair's algorithm through the dispatcher (nothing without either).
    void cleanOverlappingPair(btBroadphasePair& pair, btDispatcher* dispatcher) override;
    /// Number of pairs held.
    int getNumOverlappingPairs() const override { return m_pairs.size(); }
    /// The filter callback's answer if one is set, else the group/mask test both ways.
    bool needsBroadphaseCollision(btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1) const override;
    /// The filter callback (null when none).
    btOverlapFilterCallback* getOverlapFilterCallback() override { return m_filter; }
    /// Frees the algorithms of every pair of the proxy; the pairs stay.
    void cleanProxyFromPairs(btBroadphaseProxy* proxy, btDispatcher* dispatcher) override;
    /// Sets the filter callback asked on every later add (null: group/mask).
    void setOverlapFilterCallback(btOverlapFilterCallback* callback) override { m_filter = callback; }
    /// Calls back on every pair in array order; a pair for which it returns true is removed and
    /// the pair moved into its slot is visited next.
    void processAllOverlappingPairs(btOverlapCallback* callback, btDispatcher* dispatcher) override;
    /// As the two-argument form, or, with dispatchInfo.m_deterministicOverlappingPairs, in
    /// descending unique-id order as btHashedOverlappingPairCache visits them. Each pair present
    /// is visited once even when the callback removes pairs (Bullet's cache then revisits slots
    /// by stale positions and can loop forever; its dispatcher never removes in this walk).
    void processAllOverlappingPairs(btOverlapCallback* callback, btDispatcher* dispatcher,
                                    const btDispatcherInfo& dispatchInfo) override;
    /// The pair of these proxies (either order), or null; does not filter.
    btBroadphasePair* findPair(btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1) override;
    /// False: pairs are removed at once.
    bool hasDeferredRemoval() override { return false; }
    /// Sets the callback told of every really added and removed pair (null: none).
    void setInternalGhostPairCallback(btOverlappingPairCallback* callback) override { m_ghost = callback; }
    /// Removes every pair, then adds them again in btBroadphasePairSortPredicate order (their
    /// algorithms are freed and the ghost callback hears both), as Bullet's cache does.
    void sortOverlappingPairs(btDispatcher* dispatcher) override;

    /// Applies one update at once: removes the `lostCount` lost pairs, then adds the
    /// `foundCount` found pairs, each given as two consecutive proxy pointers. Does what
    /// removeOverlappingPair for each lost pair and then addOverlappingPair for each found pair
    /// would do, callbacks and resulting array included. Returns how many found pairs the filter
    /// refused; their indices in `found` are appended to `refused` when it is given.
    std::size_t absorb(btBroadphaseProxy* const* lost, std::size_t lostCount, btBroadphaseProxy* const* found,
                       std::size_t foundCount, btDispatcher* dispatcher, std::vector<std::size_t>* refused = nullptr);

    /// Whether the index holds exactly the array's pairs at their positions, each pair with its
    /// lower unique id first (or equal, for a proxy paired with itself) and none twice (a
    /// validator; the debug build checks it after bulk changes).
    bool isConsistent() const;

private:
    /// Adds a pair that passed the filter (or returns the one present).
    btBroadphasePair* insertPair(btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1);
    /// Removes the pair at a position whose key already left the index (see
    /// removeOverlappingPair); the proxies are the pair's, lower unique id first.
    void* removeAt(int position, btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1, btDispatcher* dispatcher);

    btBroadphasePairArray m_pairs;
    std::vector<std::uint64_t> m_keys; // the index key of each pair of m_pairs, at its position
    PairIndex m_index;
    btOverlapFilterCallback* m_filter = nullptr;
    btOverlappingPairCallback* m_ghost = nullptr;
};

} // namespace bulletgpu
