// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/NarrowContacts.h>

#include <cstddef>
#include <cstdint>
#include <vector>

/// Sorting a query's contacts into proximityBefore order on the host. A query's contacts share
/// their meshes and are keyed by (kind, featureA, featureB), each key once; with as many contacts
/// as feature indices or more (a cloth's self query: tens of thousands of contacts over about as
/// many vertices and edges), a counting sort on (kind, featureA) moves each 64-byte record once,
/// where std::sort swaps records about log n times each.

namespace bulletgpu {

/// Scratch of sortProximityContacts, kept by the caller: sorting allocates nothing once sizes settle.
struct ProximitySortScratch {
    std::vector<std::uint32_t> starts;    ///< Start of each (kind, featureA) bucket, then the end.
    std::vector<ProximityContact> sorted; ///< The records in order, before they are copied back.
};

/// Sorts contacts[first, end) into proximityBefore order: by a counting sort on (kind, featureA)
/// followed by insertion sorts on featureB within each bucket when the records share their meshes
/// and their featureA values, per kind, span at most cCountingSortSpan per record, else by
/// std::sort. The order is the same either way for distinct keys. The counting sort may leave
/// `contacts` in another buffer (swapped with the scratch's): references into it are invalidated.
void sortProximityContacts(std::vector<ProximityContact>& contacts, std::size_t first, ProximitySortScratch& scratch);

/// The most buckets per record that the counting sort takes (beyond, std::sort is cheaper).
constexpr std::size_t cCountingSortSpan = 16;

} // namespace bulletgpu
