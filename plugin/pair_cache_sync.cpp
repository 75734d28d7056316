// SPDX-License-Identifier: Zlib
#include "plugin/pair_cache_sync.h"

#include "plugin/prefetching_pair_cache.h"

#include <bulletgpu/PairCache.h>

#include "kernels/common/aabb_ops.h"
#include "kernels/common/omp_team.h"

#include <BulletCollision/BroadphaseCollision/btOverlappingPairCache.h>

#include <omp.h>

#include <algorithm>
#include <cassert>

namespace bulletgpu {

PairCacheSync::PairCacheSync(ProxyTable& table, btOverlappingPairCache& cache, PrefetchingPairCache* prefetching,
                             PairCache* flat, int threads)
    : m_table(table), m_cache(cache), m_prefetching(prefetching), m_flat(flat), m_threads(threads) {}

void PairCacheSync::addPair(std::uint32_t a, std::uint32_t b) {
    assert(!m_table.linked(a, b));
    if (m_cache.addOverlappingPair(m_table.proxy(a), m_table.proxy(b)) == nullptr) return;
    m_table.link(a, b);
    ++m_pairCount;
    m_edits[pairKey(a, b)] = true;
}

void PairCacheSync::removePair(std::uint32_t a, std::uint32_t b, btDispatcher* dispatcher) {
    if (!m_table.unlink(a, b)) return;
    m_cache.removeOverlappingPair(m_table.proxy(a), m_table.proxy(b), dispatcher);
    --m_pairCount;
    m_edits[pairKey(a, b)] = false;
}

void PairCacheSync::prefetchAhead(const std::vector<std::uint64_t>& keys, std::size_t i) {
    const auto proxies = [&](std::size_t stage) {
        const std::uint64_t key = keys[i + stage * cPrefetchStride];
        return std::pair<btBroadphaseProxy*, btBroadphaseProxy*>(m_table.proxy(pairLow(key)),
                                                                 m_table.proxy(pairHigh(key)));
    };
    if (i + 4 * cPrefetchStride < keys.size()) {
        const auto [a, b] = proxies(4);
        __builtin_prefetch(a);
        __builtin_prefetch(b);
    }
    if (m_prefetching == nullptr) return;
    if (i + 3 * cPrefetchStride < keys.size()) {
        const auto [a, b] = proxies(3);
        m_prefetching->prefetchBucket(a, b);
    }
    if (i + 2 * cPrefetchStride < keys.size()) {
        const auto [a, b] = proxies(2);
        m_prefetching->prefetchChain(a, b);
    }
    if (i + cPrefetchStride < keys.size()) {
        const auto [a, b] = proxies(1);
        m_prefetching->prefetchChainProxies(a, b);
    }
}

void PairCacheSync::takeLost(const std::vector<std::uint64_t>& lost) { removeFromCache(lost, m_dispatcher); }

void PairCacheSync::applyDeltas(const PairDeltas& deltas, btDispatcher* dispatcher) {
    m_refused.clear();
    std::size_t notLinked = 0;
    if (m_threads < 2 || deltas.lost.size() + deltas.found.size() < cParallelChanges) {
        applyDeltasToCache(deltas, dispatcher);
        notLinked = applyDeltasToPartners(deltas);
    } else {
        // Bullet's cache is changed by the calling thread alone, while a second thread keeps
        // the partner lists, which only this class reads, in step.
#pragma omp parallel num_threads(threadsForRegion(2))
        {
            const bool alone = omp_get_num_threads() == 1;
            if (omp_get_thread_num() == 0) applyDeltasToCache(deltas, dispatcher);
            if (alone || omp_get_thread_num() == 1) notLinked = applyDeltasToPartners(deltas);
        }
    }
    assert(notLinked == 0 && "the finder lost a pair that the cache did not hold");
    // Pairs the cache's filter refused: the finder must forget them, so they are offered again.
    for (const std::uint64_t key : m_refused) {
        m_table.unlink(pairLow(key), pairHigh(key));
        m_edits[key] = false;
    }
    m_pairCount += deltas.found.size() - m_refused.size();
    m_pairCount -= deltas.lost.size() - notLinked;
}

void PairCacheSync::proxiesOf(const std::vector<std::uint64_t>& keys, std::vector<btBroadphaseProxy*>& proxies) const {
    proxies.resize(2 * keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
        proxies[2 * i] = m_table.proxy(pairLow(keys[i]));
        proxies[2 * i + 1] = m_table.proxy(pairHigh(keys[i]));
    }
}

void PairCacheSync::removeFromCache(const std::vector<std::uint64_t>& keys, btDispatcher* dispatcher) {
    if (m_flat != nullptr) {
        proxiesOf(keys, m_lostProxies);
        m_flat->absorb(m_lostProxies.data(), keys.size(), nullptr, 0, dispatcher);
        return;
    }
    for (std::size_t i = 0; i < keys.size(); ++i) {
        prefetchAhead(keys, i);
        m_cache.removeOverlappingPair(m_table.proxy(pairLow(keys[i])), m_table.proxy(pairHigh(keys[i])), dispatcher);
    }
}

void PairCacheSync::applyDeltasToCache(const PairDeltas& deltas, btDispatcher* dispatcher) {
    if (m_flat != nullptr) {
        const std::size_t lostCount = deltas.lostTaken ? 0 : deltas.lost.size();
        if (lostCount > 0) proxiesOf(deltas.lost, m_lostProxies);
        proxiesOf(deltas.found, m_foundProxies);
        m_refusedFound.clear();
        m_flat->absorb(m_lostProxies.data(), lostCount, m_foundProxies.data(), deltas.found.size(), dispatcher,
                       &m_refusedFound);
        for (const std::size_t index : m_refusedFound) m_refused.push_back(deltas.found[index]);
        return;
    }
    if (!deltas.lostTaken) removeFromCache(deltas.lost, dispatcher);
    for (std::size_t i = 0; i < deltas.found.size(); ++i) {
        prefetchAhead(deltas.found, i);
        const std::uint64_t key = deltas.found[i];
        if (m_cache.addOverlappingPair(m_table.proxy(pairLow(key)), m_table.proxy(pairHigh(key))) == nullptr) {
            m_refused.push_back(key);
        }
    }
}

std::size_t PairCacheSync::applyDeltasToPartners(const PairDeltas& deltas) {
    std::size_t notLinked = 0;
    for (const std::uint64_t key : deltas.lost) notLinked += m_table.unlink(pairLow(key), pairHigh(key)) ? 0 : 1;
    for (const std::uint64_t key : deltas.found) m_table.link(pairLow(key), pairHigh(key));
    return notLinked;
}

void PairCacheSync::removePairsOf(SlotProxy& proxy, btDispatcher* dispatcher) {
    m_table.partners(proxy.slot()).copySorted(m_scratch);
    for (std::uint32_t other : m_scratch) removePair(proxy.slot(), other, dispatcher);
}

void PairCacheSync::setPairsOf(SlotProxy& proxy, const std::vector<std::uint32_t>& partners, btDispatcher* dispatcher) {
    m_table.partners(proxy.slot()).copySorted(m_scratch);
    // Removals first, then additions, each in slot order.
    auto next = partners.begin();
    for (std::uint32_t other : m_scratch) {
        next = std::lower_bound(next, partners.end(), other);
        if (next == partners.end() || *next != other) removePair(proxy.slot(), other, dispatcher);
    }
    for (std::uint32_t other : partners) {
        if (!std::binary_search(m_scratch.begin(), m_scratch.end(), other)) addPair(proxy.slot(), other);
    }
}

void PairCacheSync::flushEdits(PairFinder& finder) {
    if (m_edits.empty()) return;
    m_editAdded.clear();
    m_editRemoved.clear();
    for (const auto& [key, present] : m_edits) (present ? m_editAdded : m_editRemoved).push_back(key);
    std::sort(m_editAdded.begin(), m_editAdded.end());
    std::sort(m_editRemoved.begin(), m_editRemoved.end());
    finder.applyEdits(m_editAdded, m_editRemoved);
    m_edits.clear();
}

std::vector<std::uint64_t> PairCacheSync::currentPairs() const {
    std::vector<std::uint64_t> pairs;
    pairs.reserve(m_pairCount);
    for (std::uint32_t slot = 0; slot < m_table.boxes().size(); ++slot) {
        if (!m_table.boxes().isLive(slot)) continue;
        const PartnerList& partners = m_table.partners(slot);
        for (std::uint32_t i = 0; i < partners.size(); ++i) {
            if (slot < partners[i]) pairs.push_back(pairKey(slot, partners[i]));
        }
    }
    std::sort(pairs.begin(), pairs.end());
    return pairs;
}

} // namespace bulletgpu
