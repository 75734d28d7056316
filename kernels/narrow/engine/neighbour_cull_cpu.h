// SPDX-License-Identifier: Zlib
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

/// The self contact query's cull of mesh neighbours on the host. A self query's candidates that
/// share a vertex (mesh neighbours: about half of a cloth's, nearly all of a flat one's) test only
/// their feature pairs that share no corner, and on a smooth surface those lie an edge's height
/// apart, far beyond any contact distance. Each neighbour pair belongs to the lowest vertex the
/// two triangles share; the pairs of vertex v (its patch) involve only v and its ring (the other
/// vertices of its triangles). When the patch is measured, its clearance C(v) (the least distance
/// over its feature pairs, neighbour_clearance.h) and the positions of v and its ring are kept.
/// Distances between features change by at most twice the largest move of their vertices
/// relative to one another, so while every ring vertex has moved by at most R(v) relative to v
/// since then, C(v) - 2 R(v) bounds every feature distance of the patch from below; when that
/// exceeds the query's feature filter margin (proximity_bounds.h: beyond it no pair is reported)
/// plus an allowance of 2^-20 (M + C) for the rounding of C, R and M (the coordinates' magnitude),
/// the patch's candidates are skipped with no contact lost. Patches not proven apart are tested
/// as before. Measuring a patch costs about ten queries' worth of testing its candidates (some
/// 30 feature distances against a dozen candidates, most of them stopped early), so it pays only
/// for a patch that then stays apart for many queries, and only settled patches are measured: a patch's positions are
/// first kept (cheap), and it is measured on a later query if its ring has moved, relative to v, by less than a third
/// of its shortest spoke since; a patch whose new clearance would not outlast one more query's move at that rate (near
/// contact, or deforming fast) waits 15 queries before it is measured again. NaN or infinite positions prove nothing.

namespace bulletgpu {

/// Per-vertex neighbour clearances of one mesh and the last query's verdicts.
class NeighbourCull {
public:
    /// Whether build has taken a topology (a mesh's indices never change, so once is enough).
    bool built() const { return !m_triangleStart.empty(); }

    /// Takes the topology of `triangles` triangles (three vertex indices each, below `vertices`)
    /// and forgets every clearance.
    void build(const std::uint32_t* indices, std::uint32_t triangles, std::uint32_t vertices);

    /// Decides which patches are proven apart at query distance `distance` for the current
    /// `positions` (x, y, z floats per vertex), on up to `threads` threads.
    void prepare(const float* positions, double distance, int threads);

    /// True when candidate (ta, tb) shares a vertex and the patch of the lowest one it shares was
    /// proven apart by the last prepare: none of its feature pairs is within the distance.
    bool skips(const std::uint32_t* indices, std::uint32_t ta, std::uint32_t tb) const {
        const std::uint32_t* ca = indices + 3 * static_cast<std::size_t>(ta);
        const std::uint32_t* cb = indices + 3 * static_cast<std::size_t>(tb);
        std::uint32_t lowest = ~0u;
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) lowest = ca[i] == cb[j] && ca[i] < lowest ? ca[i] : lowest;
        }
        return lowest != ~0u && m_apart[lowest] != 0;
    }

    /// Measures again, at the current `positions`, the patches the last prepare did not prove
    /// apart, and keeps their positions, on up to `threads` threads.
    void refresh(const std::uint32_t* indices, const float* positions, int threads);

    /// Patches proven apart by the last prepare.
    std::uint64_t apartCount() const { return m_apartCount; }

private:
    /// Measures vertex v's patch at `positions` and keeps its positions.
    void measure(std::uint32_t v, const std::uint32_t* indices, const float* positions);
    /// Keeps the positions of v and its ring.
    void keep(std::uint32_t v, const float* positions);
    /// Whether v's ring moved slowly, next to its size, since its positions were kept.
    bool settled(std::uint32_t v, const float* positions) const;

    std::uint32_t m_vertexCount = 0;            ///< Vertices of the mesh.
    std::vector<std::uint32_t> m_triangleStart; ///< Where each vertex's triangles start in m_triangles.
    std::vector<std::uint32_t> m_triangles;     ///< Triangles of each vertex.
    std::vector<std::uint32_t> m_ringStart;     ///< Where each vertex's ring starts in m_ring.
    std::vector<std::uint32_t> m_ring;          ///< The other vertices of each vertex's triangles.
    std::vector<float> m_ringKept;              ///< Each ring entry's position when its patch was kept.
    std::vector<float> m_kept;                  ///< Each vertex's position when its patch was kept; NaN before.
    std::vector<double> m_reach;                ///< R(v) at the last prepare; NaN when nothing was kept.
    std::vector<double> m_clearance;            ///< C(v); NaN until measured, infinite for an empty patch.
    std::vector<std::uint8_t> m_wait;           ///< Queries a patch waits before it is measured again.
    std::vector<std::uint8_t> m_age;            ///< Queries since its positions were kept (at most 255).
    std::vector<std::uint8_t> m_apart;          ///< The last prepare's verdict per vertex.
    double m_distance = 0;                      ///< The last prepare's distance.
    std::uint64_t m_apartCount = 0;             ///< apartCount().
};

} // namespace bulletgpu
