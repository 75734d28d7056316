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

/// Keeps Bullet's pair cache, the proxies' partner lists and the pair finder's set in step.
///
/// The cache only changes through addOverlappingPair / removeOverlappingPair, removals
/// first, so persisting pairs keep their algorithm and manifold and ghost callbacks fire
/// once per real change. Changes made between updates (destroyed proxies, immediate ghost
/// queries, pairs the cache refused) are remembered as edits and handed to the finder
/// before its next update, so its next difference starts from what the cache holds.
class PairCacheSync {
public:
    /// Works on this table's proxies and this cache, with up to `threads` threads (0: OpenMP's
    /// default); the cache itself is only ever changed by the calling thread.
    PairCacheSync(ProxyTable& table, btOverlappingPairCache& cache, int threads);

    /// Applies an update's lost pairs, then its found pairs, to the cache. With two threads or
    /// more, a second thread keeps the partner lists meanwhile.
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

    void applyDeltasInOneThread(const PairDeltas& deltas, btDispatcher* dispatcher);
    /// The cache's side of applyDeltas: removals, then additions; refusals go to m_refused.
    void applyDeltasToCache(const PairDeltas& deltas, btDispatcher* dispatcher);
    /// The partner lists' side of applyDeltas; returns how many lost pairs were not linked.
    std::size_t applyDeltasToPartners(const PairDeltas& deltas);
    void prefetchProxies(const std::vector<std::uint64_t>& keys, std::size_t at) const;
    void addPair(std::uint32_t a, std::uint32_t b, bool recordEdit);
    void removePair(std::uint32_t a, std::uint32_t b, btDispatcher* dispatcher, bool recordEdit);

    ProxyTable& m_table;
    btOverlappingPairCache& m_cache;
    std::unordered_map<std::uint64_t, bool> m_edits; // pair key -> in the cache now
    std::vector<std::uint64_t> m_editAdded, m_editRemoved;
    std::vector<std::uint64_t> m_refused; // found pairs the cache's filter refused
    std::vector<std::uint32_t> m_scratch;
    std::uint64_t m_pairCount = 0;
    int m_threads;
};

} // namespace bulletgpu
