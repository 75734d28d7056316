// SPDX-License-Identifier: Zlib
#pragma once

#include "bullet_adapter/proxy_table.h"
#include "kernels/sap/pair_finder.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

class btDispatcher;
class btOverlappingPairCache;

namespace bulletgpu {

class PairCache;
class PrefetchingPairCache;

/// Keeps Bullet's pair cache, the proxies' partner lists and the pair finder's set in step.
///
/// The cache only changes through addOverlappingPair / removeOverlappingPair, removals
/// first, so persisting pairs keep their algorithm and manifold and ghost callbacks fire
/// once per real change. Changes made between updates (destroyed proxies, immediate ghost
/// queries, pairs the cache refused) are remembered as edits and handed to the finder
/// before its next update, so its next difference starts from what the cache holds.
///
/// An update's Bullet work overlaps the finder's: the lost pairs leave the cache while the
/// finder's other threads sweep (takeLost), and the partner lists follow on a second thread
/// while the found pairs enter the cache (applyDeltas).
class PairCacheSync final : public LostPairSink {
public:
    /// Works on this table's proxies and this cache, with up to `threads` threads (at least 1,
    /// as cpuThreads gives them); the cache itself is only ever changed by the calling thread.
    /// `prefetching` or `flat` is the cache itself when the broadphase made it, as the one or
    /// the other kind (null otherwise): changes to a PrefetchingPairCache load their hash
    /// buckets and chains ahead; a PairCache takes each update's changes in one absorb().
    PairCacheSync(ProxyTable& table, btOverlappingPairCache& cache, PrefetchingPairCache* prefetching, PairCache* flat,
                  int threads);

    /// Names the dispatcher the next update's lost pairs are removed with (see takeLost).
    void beginUpdate(btDispatcher* dispatcher) { m_dispatcher = dispatcher; }

    /// Removes lost pairs from the cache during the finder's update, on the calling thread, with
    /// the dispatcher given to beginUpdate; applyDeltas then only unlinks them.
    void takeLost(const std::vector<std::uint64_t>& lost) override;

    /// Applies an update's lost pairs (unless takeLost removed them), then its found pairs, to
    /// the cache. With two threads or more, a second thread keeps the partner lists meanwhile.
    void applyDeltas(const PairDeltas& deltas, btDispatcher* dispatcher);

    /// Removes every pair of a proxy from the cache (time proportional to its pairs).
    void removePairsOf(SlotProxy& proxy, btDispatcher* dispatcher);

    /// Makes a proxy's pairs exactly the given partner slots (sorted, without the proxy itself).
    void setPairsOf(SlotProxy& proxy, const std::vector<std::uint32_t>& partners, btDispatcher* dispatcher);

    /// Hands the edits made since the last call to the finder.
    void flushEdits(PairFinder& finder);

    /// Every pair the cache holds from this broadphase, sorted (to seed a new finder).
    std::vector<std::uint64_t> currentPairs() const;

    /// Forgets pending edits (after the finder was reset).
    void clearEdits() { m_edits.clear(); }

    /// Number of pairs this broadphase holds in the cache.
    std::uint64_t pairCount() const { return m_pairCount; }

private:
    /// Fewer changes than this are applied by the calling thread alone.
    static constexpr std::size_t cParallelChanges = 512;

    /// Removes pairs from the cache alone.
    void removeFromCache(const std::vector<std::uint64_t>& keys, btDispatcher* dispatcher);
    /// The cache's side of applyDeltas: removals unless taken, then additions; refusals go to
    /// m_refused.
    void applyDeltasToCache(const PairDeltas& deltas, btDispatcher* dispatcher);
    /// The partner lists' side of applyDeltas; returns how many lost pairs were not linked.
    std::size_t applyDeltasToPartners(const PairDeltas& deltas);
    /// Pairs between the stages of loading ahead what a pair change reads in scattered places:
    /// the proxies 4 strides ahead, their hash bucket 3, the bucket's first pair 2, that pair's
    /// proxies and the chain's next pair 1.
    static constexpr std::size_t cPrefetchStride = 6;
    /// Loads ahead, for the change of keys[i], what later changes read.
    void prefetchAhead(const std::vector<std::uint64_t>& keys, std::size_t i);
    /// Fills `proxies` with the two proxies of each key, in order (for PairCache::absorb).
    void proxiesOf(const std::vector<std::uint64_t>& keys, std::vector<btBroadphaseProxy*>& proxies) const;
    /// Adds a pair outside an update, as an edit for the finder.
    void addPair(std::uint32_t a, std::uint32_t b);
    /// Removes a pair outside an update, as an edit for the finder.
    void removePair(std::uint32_t a, std::uint32_t b, btDispatcher* dispatcher);

    ProxyTable& m_table;
    btOverlappingPairCache& m_cache;
    PrefetchingPairCache* m_prefetching;
    PairCache* m_flat;
    std::vector<btBroadphaseProxy*> m_lostProxies, m_foundProxies; // absorb's arguments
    std::vector<std::size_t> m_refusedFound;                       // absorb's refusals
    std::unordered_map<std::uint64_t, bool> m_edits;               // pair key -> in the cache now
    std::vector<std::uint64_t> m_editAdded, m_editRemoved;
    std::vector<std::uint64_t> m_refused; // found pairs the cache's filter refused
    std::vector<std::uint32_t> m_scratch;
    std::uint64_t m_pairCount = 0;
    int m_threads;
    btDispatcher* m_dispatcher = nullptr; // for takeLost
};

} // namespace bulletgpu
