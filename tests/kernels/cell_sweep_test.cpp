// SPDX-License-Identifier: Zlib
#include "kernels/common/aabb_ops.h"
#include "kernels/common/lane_mask.h"
#include "kernels/sap/cell_sweep_cpu.h"
#include "kernels/sap/sap_grid.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

using namespace bulletgpu;

namespace {

/// Pairs of one cell by the definition: every two entries overlapping on all axes, with both
/// corner bits between them and colliding groups.
std::vector<std::uint64_t> cellPairsByDefinition(const std::vector<CellEntry>& cell, bool filterGroups) {
    std::vector<std::uint64_t> pairs;
    for (std::size_t i = 0; i < cell.size(); ++i) {
        for (std::size_t j = i + 1; j < cell.size(); ++j) {
            const CellEntry& a = cell[i];
            const CellEntry& b = cell[j];
            if (!intervalsOverlap(a.minS, a.maxS, b.minS, b.maxS) ||
                !intervalsOverlap(a.minU, a.maxU, b.minU, b.maxU) ||
                !intervalsOverlap(a.minV, a.maxV, b.minV, b.maxV) || (a.corner | b.corner) != cBothCorners) {
                continue;
            }
            if (filterGroups && !groupsCollide(a.group, a.mask, b.group, b.mask)) continue;
            pairs.push_back(pairKey(a.slot, b.slot));
        }
    }
    std::sort(pairs.begin(), pairs.end());
    return pairs;
}

std::vector<std::uint64_t> sweptPairs(const std::vector<CellEntry>& cell, bool filterGroups, CellLanes& lanes) {
    SweepOutput out;
    CellSweepRules rules;
    rules.filterGroups = filterGroups;
    sweepCell(cell.data(), static_cast<std::uint32_t>(cell.size()), rules, lanes, out);
    std::vector<std::uint64_t> pairs(out.keys.begin(), out.keys.begin() + static_cast<std::ptrdiff_t>(out.count));
    std::sort(pairs.begin(), pairs.end());
    return pairs;
}

} // namespace

TEST_CASE("Cell sweep: lane groups find exactly the cell's pairs", "[sap]") {
    std::mt19937 random(7);
    std::uniform_real_distribution<float> position(0.0f, 10.0f);
    std::uniform_real_distribution<float> extent(0.0f, 3.0f);
    std::uniform_int_distribution<std::uint32_t> bits(0, 3);
    CellLanes lanes; // reused across cells of every size, as a thread's scratch is
    for (std::uint32_t count = 0; count <= 13; ++count) {
        for (int scene = 0; scene < 40; ++scene) {
            std::vector<CellEntry> cell(count);
            for (std::uint32_t i = 0; i < count; ++i) {
                CellEntry& e = cell[i];
                e.minS = position(random);
                e.maxS = e.minS + (scene % 4 == 0 ? 20.0f : extent(random)); // some cells: all in range
                e.minU = position(random);
                e.maxU = e.minU + extent(random);
                e.minV = position(random);
                e.maxV = e.minV + extent(random);
                e.slot = 1000 - 7 * i;
                e.corner = scene % 3 == 0 ? cBothCorners : bits(random);
                e.group = 1u << bits(random);
                e.mask = scene % 2 == 0 ? ~0u : (1u << bits(random)) | (1u << bits(random));
            }
            if (scene % 5 == 1 && count > 2) cell[1].minS = cell[1].maxS = cell[0].maxS; // touching, zero-size
            std::sort(cell.begin(), cell.end(), [](const CellEntry& a, const CellEntry& b) { return a.minS < b.minS; });
            for (bool filterGroups : {false, true}) {
                CAPTURE(count, scene, filterGroups);
                REQUIRE(sweptPairs(cell, filterGroups, lanes) == cellPairsByDefinition(cell, filterGroups));
            }
        }
    }
}

TEST_CASE("Cell sweep: corner bits pick the reference cell", "[sap]") {
    SapGrid grid;
    grid.originU = -4.0f;
    grid.originV = 2.0f;
    grid.inverseCellU = 0.5f;
    grid.inverseCellV = 0.25f;
    grid.cellsU = 6;
    grid.cellsV = 5;
    std::mt19937 random(11);
    std::uniform_real_distribution<float> position(-12.0f, 30.0f);
    std::uniform_real_distribution<float> extent(0.0f, 9.0f);
    for (int trial = 0; trial < 2000; ++trial) {
        float lo[2][2], hi[2][2];
        for (auto& box : lo) {
            for (float& x : box) x = position(random);
        }
        for (int b = 0; b < 2; ++b) {
            for (int k = 0; k < 2; ++k) hi[b][k] = lo[b][k] + extent(random);
        }
        if (!intervalsOverlap(lo[0][0], hi[0][0], lo[1][0], hi[1][0]) ||
            !intervalsOverlap(lo[0][1], hi[0][1], lo[1][1], hi[1][1])) {
            continue;
        }
        const SapCellRange a = sapCellRange(grid, lo[0][0], hi[0][0], lo[0][1], hi[0][1]);
        const SapCellRange b = sapCellRange(grid, lo[1][0], hi[1][0], lo[1][1], hi[1][1]);
        const std::uint32_t reference = sapReferenceCell(grid, lo[0][0], lo[0][1], lo[1][0], lo[1][1]);
        int reporting = 0;
        for (std::int32_t v = std::max(a.v0, b.v0); v <= std::min(a.v1, b.v1); ++v) {
            for (std::int32_t u = std::max(a.u0, b.u0); u <= std::min(a.u1, b.u1); ++u) {
                if ((sapCornerBits(a, u, v) | sapCornerBits(b, u, v)) != cBothCorners) continue;
                ++reporting;
                REQUIRE(sapCellIndex(grid, u, v) == reference);
            }
        }
        REQUIRE(reporting == 1);
    }
}

TEST_CASE("Lane masks: laneCount and lowestLane match a bit-by-bit count", "[sap]") {
    std::mt19937 random(3);
    std::vector<std::uint32_t> masks{0u, 1u, 0x8000u, 0xffffu, 0x80000000u, 0xffffffffu};
    for (int i = 0; i < 1000; ++i) masks.push_back(static_cast<std::uint32_t>(random()));
    for (const std::uint32_t mask : masks) {
        std::uint32_t count = 0, lowest = 32;
        for (std::uint32_t bit = 0; bit < 32; ++bit) {
            if ((mask >> bit & 1u) == 0) continue;
            ++count;
            lowest = std::min(lowest, bit);
        }
        CAPTURE(mask);
        REQUIRE(laneCount(mask) == count);
        if (mask != 0) REQUIRE(lowestLane(mask) == lowest);
    }
}
