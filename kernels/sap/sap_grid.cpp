// SPDX-License-Identifier: Zlib
#include "kernels/sap/sap_grid.h"

#include "kernels/common/box_store.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace bulletgpu {
namespace {

constexpr std::uint32_t cSampleSize = 2048;
/// Updates that keep one grid while the number of boxes stays within -20% .. +25%.
constexpr int cUpdatesPerChoice = 8;
/// Boxes with a coordinate beyond this are left out of the statistics (planes, infinities).
constexpr double cStatisticsLimit = 1e15;
/// Cell width as a multiple of the median box extent.
constexpr double cCellsPerExtent = 2.0;
/// At most this many cells per usable box.
constexpr double cCellsPerBox = 1.0;
constexpr std::int32_t cMaxCellsPerAxis = 1 << 15;
/// A resampled grid replaces the kept one only when a cell count or width differs by more than
/// this share, or an origin moved by a cell or more; the kept sweep axis stays until another
/// axis's spread exceeds its own by more than this share.
constexpr double cGridTolerance = 0.125;

double quantile(std::vector<double>& values, double q) {
    const std::size_t k = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1));
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
    return values[k];
}

bool closeRatio(double a, double b) {
    return std::fabs(a - b) <= cGridTolerance * std::max(std::fabs(a), std::fabs(b));
}

/// One axis of two grids: cell counts and widths within the tolerance, origins less than a cell apart.
bool closeAxis(std::int32_t cellsA, float originA, float inverseA, std::int32_t cellsB, float originB, float inverseB) {
    if (!closeRatio(cellsA, cellsB) || !closeRatio(inverseA, inverseB)) return false;
    return inverseA == 0.0f || std::fabs(static_cast<double>(originA) - originB) * inverseA < 1.0;
}

/// Whether a resampled grid would bucket the boxes about as well as the kept one.
bool closeGrids(const SapGrid& kept, const SapGrid& sampled) {
    return kept.sweepAxis == sampled.sweepAxis && kept.hugeSpan == sampled.hugeSpan &&
           closeAxis(kept.cellsU, kept.originU, kept.inverseCellU, sampled.cellsU, sampled.originU,
                     sampled.inverseCellU) &&
           closeAxis(kept.cellsV, kept.originV, kept.inverseCellV, sampled.cellsV, sampled.originV,
                     sampled.inverseCellV);
}

} // namespace

const SapGrid& SapGridChooser::choose(const BoxStore& boxes, std::uint32_t usableCount) {
    const bool similarCount = usableCount <= m_usableCount + m_usableCount / 4 && usableCount * 5 >= m_usableCount * 4;
    if (m_updatesLeft > 0 && similarCount) {
        --m_updatesLeft;
        return m_grid;
    }
    const bool keep = m_usableCount > 0 && similarCount;
    const SapGrid sampled = sample(boxes, usableCount, keep ? m_grid.sweepAxis : -1);
    if (!(keep && closeGrids(m_grid, sampled))) m_grid = sampled;
    m_usableCount = usableCount;
    m_updatesLeft = cUpdatesPerChoice - 1;
    return m_grid;
}

SapGrid SapGridChooser::sample(const BoxStore& boxes, std::uint32_t usableCount, int keptAxis) {
    SapGrid grid;
    if (usableCount < 64) return grid; // one cell: a plain sweep is cheapest

    // Deterministic sample of finite usable boxes.
    const std::uint32_t slots = boxes.size();
    const std::uint32_t stride = std::max<std::uint32_t>(1, usableCount / cSampleSize);
    std::vector<double>* centres = m_centres;
    std::vector<double>* extents = m_extents;
    for (int axis = 0; axis < 3; ++axis) {
        centres[axis].clear();
        extents[axis].clear();
    }
    std::uint32_t seen = 0;
    for (std::uint32_t slot = 0; slot < slots; ++slot) {
        if (!boxes.isUsable(slot)) continue;
        if (seen++ % stride != 0) continue;
        bool finite = true;
        for (int axis = 0; axis < 3 && finite; ++axis) {
            finite = std::fabs(boxes.minData(axis)[slot]) < cStatisticsLimit &&
                     std::fabs(boxes.maxData(axis)[slot]) < cStatisticsLimit;
        }
        if (!finite) continue;
        for (int axis = 0; axis < 3; ++axis) {
            const double lo = boxes.minData(axis)[slot];
            const double hi = boxes.maxData(axis)[slot];
            centres[axis].push_back(0.5 * (lo + hi));
            extents[axis].push_back(hi - lo);
        }
    }
    if (centres[0].size() < 16) return grid;

    double low[3], high[3], medianExtent[3];
    for (int axis = 0; axis < 3; ++axis) {
        low[axis] = quantile(centres[axis], 0.01);
        high[axis] = quantile(centres[axis], 0.99);
        medianExtent[axis] = quantile(extents[axis], 0.5);
    }
    int sweep = 0;
    for (int axis = 1; axis < 3; ++axis) {
        if (high[axis] - low[axis] > high[sweep] - low[sweep]) sweep = axis;
    }
    if (keptAxis >= 0 && high[keptAxis] - low[keptAxis] >= (1.0 - cGridTolerance) * (high[sweep] - low[sweep])) {
        sweep = keptAxis;
    }
    grid.sweepAxis = sweep;
    grid.uAxis = (sweep + 1) % 3;
    grid.vAxis = (sweep + 2) % 3;

    // Cell widths: a couple of median extents, widened evenly until the cell count is bounded.
    const double rangeU = high[grid.uAxis] - low[grid.uAxis];
    const double rangeV = high[grid.vAxis] - low[grid.vAxis];
    const double floorWidth = 1e-6 * std::max({rangeU, rangeV, 1e-30});
    double cellU = std::max(cCellsPerExtent * medianExtent[grid.uAxis], floorWidth);
    double cellV = std::max(cCellsPerExtent * medianExtent[grid.vAxis], floorWidth);
    const double maxCells = std::max(1.0, cCellsPerBox * usableCount);
    const double cells = std::max(1.0, rangeU / cellU) * std::max(1.0, rangeV / cellV);
    if (cells > maxCells) {
        const double scale = std::sqrt(cells / maxCells);
        cellU *= scale;
        cellV *= scale;
    }
    auto countCells = [](double range, double width) {
        const double n = std::floor(range / width) + 1.0;
        return static_cast<std::int32_t>(std::clamp(n, 1.0, static_cast<double>(cMaxCellsPerAxis)));
    };
    grid.cellsU = countCells(rangeU, cellU);
    grid.cellsV = countCells(rangeV, cellV);
    grid.originU = static_cast<float>(low[grid.uAxis]);
    grid.originV = static_cast<float>(low[grid.vAxis]);
    grid.inverseCellU = grid.cellsU > 1 ? static_cast<float>(1.0 / cellU) : 0.0f;
    grid.inverseCellV = grid.cellsV > 1 ? static_cast<float>(1.0 / cellV) : 0.0f;
    return grid;
}

} // namespace bulletgpu
