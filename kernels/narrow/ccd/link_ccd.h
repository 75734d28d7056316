// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/radix_sort_cpu.h"

#include <cstdint>
#include <vector>

/// Continuous collision of chains of links (ropes) over a step, on the CPU: every pair of links
/// that comes within `eta` while each node moves linearly from its start to its end position.
///
/// The nodes of all chains are concatenated; chain c holds nodes [first[c], first[c] + count[c])
/// and its links join consecutive nodes, a link named by its first node. Links that share a node
/// are never paired. Culling: each link's swept box (the box of its two ends at both times, which
/// holds the moving segment at every time of the step) grown by eta and a relative 2^-40 of the
/// scene's size, the boxes entered into a uniform grid (cells of twice the mean box extent; boxes
/// over more than four cells on an axis are tested against every box), the pairs that share a
/// cell and whose boxes overlap tested with edgeEdgeCcd (ccd_queries.h). So no pair the per-pair
/// test would report is culled: two segments within eta at some time have grown boxes that
/// overlap. A link with a non-finite coordinate gets an infinite box, so edgeEdgeCcd reports it
/// against every link it is tested with (an undecided hit at t = 0). Impacts are sorted by
/// (linkA, linkB), linkA < linkB, whatever the threads.

namespace bulletgpu {

/// A pair of links that comes within eta during the step.
struct LinkImpact {
    std::uint32_t linkA; ///< First node of the lower link.
    std::uint32_t linkB; ///< First node of the higher link.
    double toi;          ///< Lower bound on the time of impact in [0, 1] (edgeEdgeCcd).
};

/// Chains of links, as LinkCcd::find reads them.
struct LinkChains {
    const double* start;        ///< x, y, z of every node at the start of the step.
    const double* end;          ///< x, y, z of every node at the end of the step.
    const std::uint32_t* first; ///< First node of each chain.
    const std::uint32_t* count; ///< Nodes of each chain.
    std::uint32_t chainCount;   ///< Chains.
};

/// The link CCD query, its buffers kept from call to call (no allocation once sizes settle).
class LinkCcd {
public:
    /// Fills `impacts` with every pair of links of `chains` that comes within `eta` (>= 0),
    /// sorted; the exact tests run on up to `threads` OpenMP threads.
    void find(const LinkChains& chains, double eta, int threads, std::vector<LinkImpact>& impacts);

    /// Link pairs whose grown swept boxes overlapped in the last find (each once).
    std::uint64_t candidates() const { return m_candidates.size(); }

private:
    /// Swept boxes of the links, grown; `m_links` lists the links.
    void sweptBoxes(const LinkChains& chains, double eta);
    /// Candidate pairs (lower link << 32 | higher link), sorted and unique.
    void gridPairs();

    std::vector<std::uint32_t> m_links;      ///< First node of each link.
    std::vector<double> m_lo, m_hi;          ///< Grown swept box of each link, 3 per link.
    std::vector<std::uint64_t> m_cells;      ///< Cell hash << 32 | link position, for each cell a box covers.
    std::vector<std::uint32_t> m_big;        ///< Positions of the links whose boxes span too many cells.
    std::vector<std::uint64_t> m_candidates; ///< Candidate pairs of link positions.
    std::vector<double> m_toi;               ///< Each candidate's time of impact (HUGE_VAL: none).
    RadixSorterCpu m_sort;                   ///< Sorts the cells and the candidates.
};

} // namespace bulletgpu
