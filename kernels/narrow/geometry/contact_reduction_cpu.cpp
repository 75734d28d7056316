// SPDX-License-Identifier: Zlib
// Contact reduction per mesh pair on OpenMP threads: the pairs' ranges found in one pass, each
// reduced into its own slots, then the slots compacted in pair order.
#include "kernels/narrow/geometry/contact_reduction.h"

#include <omp.h>

#include <cstddef>

namespace bulletgpu {

void ContactReducer::reduce(const std::vector<ProximityContact>& sorted, std::uint32_t maxPoints,
                            std::vector<ProximityContact>& out, int threads) {
    const std::uint32_t keep = maxPoints < cMaxReducedContacts ? maxPoints : cMaxReducedContacts;
    std::vector<std::size_t>& starts = m_starts;
    starts.clear();
    for (std::size_t i = 0; i < sorted.size(); ++i) {
        if (i == 0 || sorted[i].meshA != sorted[i - 1].meshA || sorted[i].meshB != sorted[i - 1].meshB) {
            starts.push_back(i);
        }
    }
    starts.push_back(sorted.size());
    const auto pairs = static_cast<std::int64_t>(starts.size() - 1);
    std::vector<std::uint32_t>& kept = m_kept;
    std::vector<ProximityContact>& slots = m_slots;
    kept.resize(static_cast<std::size_t>(pairs));
    slots.resize(static_cast<std::size_t>(pairs) * keep);
#pragma omp parallel for num_threads(threads > 0 ? threads : omp_get_max_threads())                                    \
    schedule(dynamic, 16) if (pairs >= 64)
    for (std::int64_t p = 0; p < pairs; ++p) {
        std::uint32_t chosen[cMaxReducedContacts];
        const ProximityContact* first = sorted.data() + starts[p];
        const auto count = static_cast<std::uint32_t>(starts[p + 1] - starts[p]);
        kept[p] = reduceContacts(first, count, keep, chosen);
        for (std::uint32_t n = 0; n < kept[p]; ++n) slots[static_cast<std::size_t>(p) * keep + n] = first[chosen[n]];
    }
    out.clear();
    for (std::int64_t p = 0; p < pairs; ++p) {
        const auto begin = slots.begin() + static_cast<std::ptrdiff_t>(p * keep);
        out.insert(out.end(), begin, begin + kept[p]);
    }
}

} // namespace bulletgpu
