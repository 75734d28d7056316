// SPDX-License-Identifier: Zlib
#include <bulletgpu/PairCache.h>

#include <algorithm>
#include <cassert>

namespace bulletgpu {

namespace {

/// How many pairs ahead absorb starts loading a pair's index slot; its proxies are loaded
/// twice as far ahead, since the slot's address needs their ids.
constexpr std::size_t cPrefetchDistance = 8;

/// The index key of the i-th pair of a list of proxy pointer pairs.
std::uint64_t keyAt(btBroadphaseProxy* const* pairs, std::size_t i) {
    return PairIndex::keyOf(pairs[2 * i]->getUid(), pairs[2 * i + 1]->getUid());
}

/// Loads ahead what the change of the i-th of `count` pairs will read.
void prefetchAhead(const PairIndex& index, btBroadphaseProxy* const* pairs, std::size_t i, std::size_t count) {
    if (i + 2 * cPrefetchDistance < count) {
        __builtin_prefetch(pairs[2 * (i + 2 * cPrefetchDistance)]);
        __builtin_prefetch(pairs[2 * (i + 2 * cPrefetchDistance) + 1]);
    }
    if (i + cPrefetchDistance < count) index.prefetch(keyAt(pairs, i + cPrefetchDistance));
}

} // namespace

std::size_t PairCache::absorb(btBroadphaseProxy* const* lost, std::size_t lostCount, btBroadphaseProxy* const* found,
                              std::size_t foundCount, btDispatcher* dispatcher, std::vector<std::size_t>* refused) {
    constexpr std::size_t cSlotAhead = cPrefetchDistance / 2;
    for (std::size_t i = 0; i < lostCount; ++i) {
        prefetchAhead(m_index, lost, i, lostCount);
        // Removals read scattered places the index names: once the pair's slot is loaded, load
        // the pair and its key; and the slot of the pair that will then be last, which moves.
        if (i + cSlotAhead < lostCount) {
            const int position = m_index.find(keyAt(lost, i + cSlotAhead));
            if (position >= 0) {
                __builtin_prefetch(&m_pairs[position]);
                __builtin_prefetch(&m_keys[static_cast<std::size_t>(position)]);
            }
        }
        if (m_keys.size() > cPrefetchDistance) m_index.prefetch(m_keys[m_keys.size() - 1 - cPrefetchDistance]);
        removeOverlappingPair(lost[2 * i], lost[2 * i + 1], dispatcher);
    }
    // Room for every found pair up front: at most one growth of the array and of the index.
    const std::size_t most = static_cast<std::size_t>(m_pairs.size()) + foundCount;
    if (most > static_cast<std::size_t>(m_pairs.capacity())) {
        std::size_t capacity = std::max<std::size_t>(2, static_cast<std::size_t>(m_pairs.capacity()));
        while (capacity < most) capacity *= 2;
        m_pairs.reserve(static_cast<int>(capacity));
        m_keys.reserve(capacity);
    }
    m_index.reserve(most);
    std::size_t refusals = 0;
    for (std::size_t i = 0; i < foundCount; ++i) {
        prefetchAhead(m_index, found, i, foundCount);
        if (addOverlappingPair(found[2 * i], found[2 * i + 1]) != nullptr) continue;
        ++refusals;
        if (refused != nullptr) refused->push_back(i);
    }
    assert(isConsistent());
    return refusals;
}

} // namespace bulletgpu
