// SPDX-License-Identifier: Zlib
#include "kernels/narrow/engine/proximity_sort_cpu.h"

#include "kernels/narrow/geometry/proximity_contact.h"

#include <algorithm>

namespace bulletgpu {

namespace {

/// Kinds of ProximityKind.
constexpr std::uint32_t cKinds = 4;

/// Below this many records std::sort is as fast and needs no scratch.
constexpr std::size_t cCountingSortFrom = 1024;

} // namespace

void sortProximityContacts(std::vector<ProximityContact>& contacts, std::size_t first, ProximitySortScratch& scratch) {
    const auto begin = contacts.begin() + static_cast<std::ptrdiff_t>(first);
    const std::size_t count = contacts.size() - first;
    const auto byStdSort = [&] {
        std::sort(begin, contacts.end(),
                  [](const ProximityContact& x, const ProximityContact& y) { return proximityBefore(x, y); });
    };
    if (count < cCountingSortFrom) return byStdSort();
    // Buckets per kind over the featureA it holds: (kind, featureA) -> base[kind] + featureA.
    std::uint32_t lowest[cKinds] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
    std::uint32_t highest[cKinds] = {0, 0, 0, 0};
    const ProximityContact& lead = *begin;
    for (auto c = begin; c != contacts.end(); ++c) {
        if (c->meshA != lead.meshA || c->meshB != lead.meshB || c->kind >= cKinds) return byStdSort();
        lowest[c->kind] = std::min(lowest[c->kind], c->featureA);
        highest[c->kind] = std::max(highest[c->kind], c->featureA);
    }
    std::int64_t base[cKinds];
    std::uint64_t buckets = 0;
    for (std::uint32_t k = 0; k < cKinds; ++k) {
        const bool used = lowest[k] <= highest[k];
        base[k] = static_cast<std::int64_t>(buckets) - (used ? std::int64_t{lowest[k]} : 0);
        buckets += used ? std::uint64_t{highest[k]} - lowest[k] + 1 : 0;
    }
    if (buckets > cCountingSortSpan * count || buckets >= UINT32_MAX) return byStdSort();

    std::vector<std::uint32_t>& starts = scratch.starts;
    starts.assign(buckets + 1, 0);
    const auto bucketOf = [&](const ProximityContact& c) {
        return static_cast<std::uint64_t>(base[c.kind] + std::int64_t{c.featureA});
    };
    for (auto c = begin; c != contacts.end(); ++c) ++starts[bucketOf(*c) + 1];
    for (std::uint64_t b = 0; b < buckets; ++b) starts[b + 1] += starts[b];
    std::vector<ProximityContact>& sorted = scratch.sorted;
    sorted.resize(count);
    // Each bucket's start walks to its end as records land, then the bucket is put in order.
    for (auto c = begin; c != contacts.end(); ++c) sorted[starts[bucketOf(*c)]++] = *c;
    std::uint32_t bucketBegin = 0;
    for (std::uint64_t b = 0; b < buckets; ++b) {
        const std::uint32_t bucketEnd = starts[b];
        for (std::uint32_t i = bucketBegin + 1; i < bucketEnd; ++i) {
            const ProximityContact record = sorted[i];
            std::uint32_t j = i;
            for (; j > bucketBegin && record.featureB < sorted[j - 1].featureB; --j) sorted[j] = sorted[j - 1];
            sorted[j] = record;
        }
        bucketBegin = bucketEnd;
    }
    if (first == 0) {
        contacts.swap(sorted); // the scratch keeps the other buffer: no copy, no allocation
    } else {
        std::copy(sorted.begin(), sorted.end(), begin);
    }
}

} // namespace bulletgpu
