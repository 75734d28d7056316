// SPDX-License-Identifier: Zlib
#include "kernels/narrow/geometry/contact_sort.h"

#include <algorithm>

namespace bulletgpu {
namespace {

/// Below one contact per this many triangles a comparison sort is cheaper than the histogram.
constexpr std::size_t cTrianglesPerContact = 8;

bool trianglesBefore(const TriangleContact& x, const TriangleContact& y) {
    return x.triangleA != y.triangleA ? x.triangleA < y.triangleA : x.triangleB < y.triangleB;
}

} // namespace

void ContactSorter::sort(std::vector<TriangleContact>& contacts, std::size_t first, std::uint32_t trianglesA) {
    const auto begin = contacts.begin() + static_cast<std::ptrdiff_t>(first);
    const std::size_t count = contacts.size() - first;
    if (count * cTrianglesPerContact < trianglesA) {
        std::sort(begin, contacts.end(), trianglesBefore);
        return;
    }
    m_starts.assign(static_cast<std::size_t>(trianglesA) + 1, 0);
    for (auto c = begin; c != contacts.end(); ++c) ++m_starts[c->triangleA + 1];
    for (std::uint32_t t = 0; t < trianglesA; ++t) m_starts[t + 1] += m_starts[t];
    m_sorted.resize(count);
    for (auto c = begin; c != contacts.end(); ++c) m_sorted[m_starts[c->triangleA]++] = *c;
    // Each start has moved to its bucket's end.
    std::uint32_t from = 0;
    for (std::uint32_t t = 0; t < trianglesA; ++t) {
        const std::uint32_t to = m_starts[t];
        if (to - from > 1) {
            std::sort(m_sorted.begin() + from, m_sorted.begin() + to, trianglesBefore);
        }
        from = to;
    }
    std::copy(m_sorted.begin(), m_sorted.end(), begin);
}

} // namespace bulletgpu
