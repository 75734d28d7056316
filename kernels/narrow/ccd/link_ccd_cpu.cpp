// SPDX-License-Identifier: Zlib
#include "kernels/narrow/ccd/link_ccd.h"

#include "kernels/narrow/ccd/ccd_queries.h"

#include <algorithm>
#include <cmath>

namespace bulletgpu {
namespace {

/// A box spanning more cells than this on an axis is tested against every box instead.
constexpr std::int64_t cMostCellsPerAxis = 4;

/// A 32-bit hash of a grid cell. Cells that collide only add candidates.
std::uint32_t cellHash(std::int64_t x, std::int64_t y, std::int64_t z) {
    const auto h = static_cast<std::uint64_t>(x) * 73856093u ^ static_cast<std::uint64_t>(y) * 19349663u ^
                   static_cast<std::uint64_t>(z) * 83492791u;
    return static_cast<std::uint32_t>(h ^ (h >> 32));
}

/// Whether the boxes at positions i and j of lo/hi overlap (touching included).
bool boxesOverlap(const std::vector<double>& lo, const std::vector<double>& hi, std::uint32_t i, std::uint32_t j) {
    for (int k = 0; k < 3; ++k)
        if (lo[3 * i + k] > hi[3 * j + k] || lo[3 * j + k] > hi[3 * i + k]) return false;
    return true;
}

} // namespace

void LinkCcd::sweptBoxes(const LinkChains& chains, double eta) {
    m_links.clear();
    double largest = eta;
    for (std::uint32_t c = 0; c < chains.chainCount; ++c) {
        for (std::uint32_t n = 0; n + 1 < chains.count[c]; ++n) m_links.push_back(chains.first[c] + n);
        for (std::uint32_t n = 0; n < chains.count[c]; ++n) {
            const std::uint32_t g = chains.first[c] + n;
            for (int k = 0; k < 3; ++k) {
                for (const double x : {chains.start[3 * g + k], chains.end[3 * g + k]})
                    if (std::isfinite(x)) largest = std::max(largest, std::fabs(x));
            }
        }
    }
    // Covers eta and the rounding of the grown bounds (the minima and maxima themselves are exact).
    const double grow = eta + 0x1p-40 * largest;
    m_lo.resize(3 * m_links.size());
    m_hi.resize(3 * m_links.size());
    for (std::size_t i = 0; i < m_links.size(); ++i) {
        const std::uint32_t a = m_links[i], b = a + 1;
        bool finite = true;
        for (const double* x : {chains.start, chains.end})
            for (int k = 0; k < 3; ++k) finite = finite && std::isfinite(x[3 * a + k]) && std::isfinite(x[3 * b + k]);
        for (int k = 0; k < 3; ++k) {
            // A link with a non-finite end may meet anything: edgeEdgeCcd reports it undecided.
            if (!finite) {
                m_lo[3 * i + k] = -HUGE_VAL;
                m_hi[3 * i + k] = HUGE_VAL;
                continue;
            }
            const double v[4] = {chains.start[3 * a + k], chains.start[3 * b + k], chains.end[3 * a + k],
                                 chains.end[3 * b + k]};
            m_lo[3 * i + k] = std::min({v[0], v[1], v[2], v[3]}) - grow;
            m_hi[3 * i + k] = std::max({v[0], v[1], v[2], v[3]}) + grow;
        }
    }
}

void LinkCcd::gridPairs() {
    const auto links = static_cast<std::uint32_t>(m_links.size());
    // Cells of twice the mean extent of the finite boxes, from the corner of their union.
    double extent = 0, origin[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL};
    std::uint32_t finite = 0;
    for (std::uint32_t i = 0; i < links; ++i) {
        if (m_lo[3 * i] == -HUGE_VAL) continue;
        ++finite;
        for (int k = 0; k < 3; ++k) {
            extent += m_hi[3 * i + k] - m_lo[3 * i + k];
            origin[k] = std::min(origin[k], m_lo[3 * i + k]);
        }
    }
    const double cell = finite == 0 ? 1 : std::max(2 * extent / (3.0 * finite), 1e-300);
    m_cells.clear();
    m_big.clear();
    for (std::uint32_t i = 0; i < links; ++i) {
        std::int64_t from[3], to[3];
        bool big = false;
        for (int k = 0; k < 3; ++k) {
            const double lo = (m_lo[3 * i + k] - origin[k]) / cell, hi = (m_hi[3 * i + k] - origin[k]) / cell;
            // Also far boxes (cell numbers past 2^62) and NaN bounds, which the casts cannot take.
            big = big || !(hi - lo < double(cMostCellsPerAxis - 1)) || !(hi < 0x1p62);
            if (big) break;
            from[k] = static_cast<std::int64_t>(std::floor(lo));
            to[k] = static_cast<std::int64_t>(std::floor(hi));
        }
        if (big) {
            m_big.push_back(i);
            continue;
        }
        for (std::int64_t x = from[0]; x <= to[0]; ++x)
            for (std::int64_t y = from[1]; y <= to[1]; ++y)
                for (std::int64_t z = from[2]; z <= to[2]; ++z)
                    m_cells.push_back(static_cast<std::uint64_t>(cellHash(x, y, z)) << 32 | i);
    }
    m_sort.sortKeys64(m_cells, m_cells.size(), 32, 32);
    m_candidates.clear();
    const auto add = [&](std::uint32_t i, std::uint32_t j) {
        if (i == j) return;
        const std::uint32_t a = std::min(i, j), b = std::max(i, j);
        if (m_links[a] + 1 == m_links[b] || m_links[b] + 1 == m_links[a]) return; // they share a node
        if (boxesOverlap(m_lo, m_hi, a, b)) m_candidates.push_back(static_cast<std::uint64_t>(a) << 32 | b);
    };
    for (std::size_t run = 0; run < m_cells.size();) {
        std::size_t next = run + 1;
        while (next < m_cells.size() && (m_cells[next] >> 32) == (m_cells[run] >> 32)) ++next;
        for (std::size_t p = run; p < next; ++p)
            for (std::size_t q = p + 1; q < next; ++q)
                add(static_cast<std::uint32_t>(m_cells[p]), static_cast<std::uint32_t>(m_cells[q]));
        run = next;
    }
    for (const std::uint32_t i : m_big)
        for (std::uint32_t j = 0; j < links; ++j) add(i, j);
    m_sort.sortKeys64(m_candidates, m_candidates.size(), 32, 32);
    m_candidates.erase(std::unique(m_candidates.begin(), m_candidates.end()), m_candidates.end());
}

void LinkCcd::find(const LinkChains& chains, double eta, int threads, std::vector<LinkImpact>& impacts) {
    impacts.clear();
    sweptBoxes(chains, eta);
    gridPairs();
    const auto count = static_cast<std::int64_t>(m_candidates.size());
    m_toi.resize(m_candidates.size());
#pragma omp parallel for num_threads(std::max(threads, 1)) schedule(dynamic, 64) if (count >= 256)
    for (std::int64_t c = 0; c < count; ++c) {
        const std::uint32_t a = m_links[m_candidates[c] >> 32], b = m_links[m_candidates[c] & 0xffffffffu];
        Vec3d x0[4], x1[4];
        const std::uint32_t nodes[4] = {a, a + 1, b, b + 1};
        for (int p = 0; p < 4; ++p) {
            for (int k = 0; k < 3; ++k) {
                x0[p].v[k] = chains.start[3 * nodes[p] + k];
                x1[p].v[k] = chains.end[3 * nodes[p] + k];
            }
        }
        CcdResult result;
        edgeEdgeCcd(x0, x1, eta, CcdOptions{}, result);
        m_toi[c] = result.hit ? result.toi : HUGE_VAL;
    }
    for (std::int64_t c = 0; c < count; ++c) {
        if (m_toi[c] == HUGE_VAL) continue;
        const std::uint32_t a = m_links[m_candidates[c] >> 32], b = m_links[m_candidates[c] & 0xffffffffu];
        impacts.push_back({std::min(a, b), std::max(a, b), m_toi[c]});
    }
    std::sort(impacts.begin(), impacts.end(), [](const LinkImpact& x, const LinkImpact& y) {
        return x.linkA != y.linkA ? x.linkA < y.linkA : x.linkB < y.linkB;
    });
}

} // namespace bulletgpu
