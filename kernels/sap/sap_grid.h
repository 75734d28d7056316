// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"

#include <cstdint>
#include <vector>

namespace bulletgpu {

class BoxStore;

/// The subdivision that bounds sweep-and-prune candidates: boxes are sorted along the
/// sweep axis and bucketed into a grid of cells across the two other axes (u, v), as
/// Liu et al. 2010 and Avril et al. 2014 do. Cells at the border extend to infinity, so
/// every box lands in the cells it overlaps, however far out it is.
struct SapGrid {
    int sweepAxis = 0;         ///< Axis boxes are sorted and swept along.
    int uAxis = 1;             ///< First grid axis.
    int vAxis = 2;             ///< Second grid axis.
    float originU = 0;         ///< Lower edge of cell column 0 on the u axis.
    float originV = 0;         ///< Lower edge of cell row 0 on the v axis.
    float inverseCellU = 0;    ///< 1 / cell width on the u axis (0 for one column).
    float inverseCellV = 0;    ///< 1 / cell width on the v axis (0 for one row).
    std::int32_t cellsU = 1;   ///< Number of cell columns.
    std::int32_t cellsV = 1;   ///< Number of cell rows.
    std::int32_t hugeSpan = 8; ///< Boxes spanning more cells than this on u or v go to the huge list.

    /// Total number of cells.
    BULLETGPU_HD std::uint32_t cellCount() const { return static_cast<std::uint32_t>(cellsU) * cellsV; }

    /// Whether two grids bucket every box into the same cells.
    bool operator==(const SapGrid& other) const {
        return sweepAxis == other.sweepAxis && uAxis == other.uAxis && vAxis == other.vAxis &&
               originU == other.originU && originV == other.originV && inverseCellU == other.inverseCellU &&
               inverseCellV == other.inverseCellV && cellsU == other.cellsU && cellsV == other.cellsV &&
               hugeSpan == other.hugeSpan;
    }
    /// Whether two grids differ.
    bool operator!=(const SapGrid& other) const { return !(*this == other); }
};

/// Chooses the sweep axis (largest spread of box centres, with hysteresis) and the cell grid
/// (about twice the median box extent, capped so there are at most about as many cells as
/// boxes) from a deterministic sample of the store's usable boxes. Any grid gives the same
/// pairs; a good one gives few candidates, so the choice is kept for a few updates while the
/// number of boxes stays about the same, and after them as long as a new sample gives nearly
/// the same grid (the CPU backend refills the last update's cells only while the grid stays
/// the same). Backends choose on the host, with the same rule, so that they all sweep the same
/// grid.
class SapGridChooser {
public:
    /// The grid for this update.
    const SapGrid& choose(const BoxStore& boxes, std::uint32_t usableCount);

    /// Forgets the kept grid (the next choose() samples again).
    void reset() {
        m_updatesLeft = 0;
        m_usableCount = 0;
    }

private:
    /// A new grid from a sample; the sweep axis stays keptAxis (when >= 0) unless another axis's
    /// spread is larger by more than the tolerance, so that a scene about as wide on two axes
    /// does not flip between them from sample to sample.
    SapGrid sample(const BoxStore& boxes, std::uint32_t usableCount, int keptAxis);

    SapGrid m_grid;
    std::uint32_t m_usableCount = 0;
    int m_updatesLeft = 0;
    std::vector<double> m_centres[3]; // sampled box centres per axis
    std::vector<double> m_extents[3]; // sampled box extents per axis
};

/// Column or row of a coordinate: floor((x - origin) / cell), clamped to [0, cells - 1].
/// Monotone in x, branch-free (max/min instructions), NaN-safe and safe for infinities.
BULLETGPU_HD std::int32_t sapCellCoordinate(float x, float origin, float inverseCell, std::int32_t cells) {
    float t = (x - origin) * inverseCell;
    t = t > 0.0f ? t : 0.0f; // NaN becomes 0
    const float last = static_cast<float>(cells - 1);
    t = t < last ? t : last;
    return static_cast<std::int32_t>(t);
}

/// Range of cells a box covers on the grid.
struct SapCellRange {
    std::int32_t u0, u1, v0, v1; ///< Inclusive column and row ranges.

    /// Number of cells in the range.
    BULLETGPU_HD std::uint32_t count() const { return static_cast<std::uint32_t>(u1 - u0 + 1) * (v1 - v0 + 1); }
};

/// The cells a box with these u and v bounds covers.
BULLETGPU_HD SapCellRange sapCellRange(const SapGrid& grid, float minU, float maxU, float minV, float maxV) {
    SapCellRange r;
    r.u0 = sapCellCoordinate(minU, grid.originU, grid.inverseCellU, grid.cellsU);
    r.u1 = sapCellCoordinate(maxU, grid.originU, grid.inverseCellU, grid.cellsU);
    r.v0 = sapCellCoordinate(minV, grid.originV, grid.inverseCellV, grid.cellsV);
    r.v1 = sapCellCoordinate(maxV, grid.originV, grid.inverseCellV, grid.cellsV);
    return r;
}

/// Whether a box covering this range is swept against every box instead of bucketed.
BULLETGPU_HD bool sapIsHuge(const SapGrid& grid, const SapCellRange& r) {
    return r.u1 - r.u0 >= grid.hugeSpan || r.v1 - r.v0 >= grid.hugeSpan;
}

/// Cell index of a column and row.
BULLETGPU_HD std::uint32_t sapCellIndex(const SapGrid& grid, std::int32_t u, std::int32_t v) {
    return static_cast<std::uint32_t>(v) * static_cast<std::uint32_t>(grid.cellsU) + static_cast<std::uint32_t>(u);
}

/// Column of a cell index (the inverse of sapCellIndex).
BULLETGPU_HD std::int32_t sapCellColumn(const SapGrid& grid, std::uint32_t cell) {
    return static_cast<std::int32_t>(cell % static_cast<std::uint32_t>(grid.cellsU));
}

/// Row of a cell index (the inverse of sapCellIndex).
BULLETGPU_HD std::int32_t sapCellRow(const SapGrid& grid, std::uint32_t cell) {
    return static_cast<std::int32_t>(cell / static_cast<std::uint32_t>(grid.cellsU));
}

/// Both bits of sapCornerBits.
constexpr std::uint32_t cBothCorners = 3;

/// Where a box covering range r starts, seen from cell (u, v) inside r: bit 0 set when r's
/// first column is u, bit 1 when its first row is v. Two overlapping boxes that both cover the
/// cell have it as their reference cell (sapReferenceCell) exactly when their bits together are
/// cBothCorners: the reference cell's column is the larger of the two first columns, which is u
/// when one of them is u (neither exceeds u), and likewise for rows.
BULLETGPU_HD std::uint32_t sapCornerBits(const SapCellRange& r, std::int32_t u, std::int32_t v) {
    return (r.u0 == u ? 1u : 0u) | (r.v0 == v ? 2u : 0u);
}

/// The one cell that reports a pair of overlapping boxes: the cell holding the larger of the
/// two lower bounds on u and on v. Both boxes cover it, so exactly one cell reports the pair.
BULLETGPU_HD std::uint32_t sapReferenceCell(const SapGrid& grid, float minUA, float minVA, float minUB, float minVB) {
    const float u = minUA > minUB ? minUA : minUB;
    const float v = minVA > minVB ? minVA : minVB;
    return sapCellIndex(grid, sapCellCoordinate(u, grid.originU, grid.inverseCellU, grid.cellsU),
                        sapCellCoordinate(v, grid.originV, grid.inverseCellV, grid.cellsV));
}

} // namespace bulletgpu
