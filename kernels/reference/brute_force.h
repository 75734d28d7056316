// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/aabb_ops.h"
#include "kernels/common/box_store.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace bulletgpu {

/// The oracle: every pair of usable live boxes that overlap (exactly, when the store keeps
/// exact boxes) and, when filtering, pass group/mask; sorted pair keys. O(n^2).
inline std::vector<std::uint64_t> bruteForcePairs(const BoxStore& boxes, bool filterGroups) {
    std::vector<std::uint64_t> pairs;
    const std::uint32_t n = boxes.size();
    for (std::uint32_t a = 0; a < n; ++a) {
        if (!boxes.isUsable(a)) continue;
        for (std::uint32_t b = a + 1; b < n; ++b) {
            if (!boxes.isUsable(b) || !boxes.overlapExact(a, b)) continue;
            if (filterGroups &&
                !groupsCollide(boxes.groupData()[a], boxes.maskData()[a], boxes.groupData()[b], boxes.maskData()[b])) {
                continue;
            }
            pairs.push_back(pairKey(a, b));
        }
    }
    return pairs;
}

/// The oracle for scenes too large for bruteForcePairs, with the same result: a box no wider
/// than `width` on any axis goes into the grid cell of its min corner, and two such boxes can
/// only overlap from the same or neighbouring cells; every other usable box (wider, far out or
/// infinite) is tested against all. Cells are a power of two at least twice `width` wide, so
/// that a bound's cell is computed exactly and a rounded width test cannot admit a box wider
/// than a cell. About n log n plus 14 cell lookups per box when most boxes are about `width`
/// wide and not packed much denser than one per cell.
inline std::vector<std::uint64_t> gridOraclePairs(const BoxStore& boxes, bool filterGroups, double width) {
    const double cell = 2.0 * std::exp2(std::ceil(std::log2(width)));
    constexpr std::int64_t cCellLimit = std::int64_t{1} << 20; // cell coordinates in 21 bits
    const auto lower = [&](int axis, std::uint32_t slot) {
        const double* exact = boxes.exactMinData(axis);
        return exact != nullptr ? exact[slot] : static_cast<double>(boxes.minData(axis)[slot]);
    };
    const auto upper = [&](int axis, std::uint32_t slot) {
        const double* exact = boxes.exactMaxData(axis);
        return exact != nullptr ? exact[slot] : static_cast<double>(boxes.maxData(axis)[slot]);
    };
    const auto packed = [](std::int64_t x, std::int64_t y, std::int64_t z) {
        return static_cast<std::uint64_t>(x + cCellLimit) << 42 | static_cast<std::uint64_t>(y + cCellLimit) << 21 |
               static_cast<std::uint64_t>(z + cCellLimit);
    };
    std::vector<std::uint32_t> wide, usable;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> celled; // (cell, slot)
    std::vector<std::array<std::int64_t, 3>> cellOf(boxes.size());
    for (std::uint32_t slot = 0; slot < boxes.size(); ++slot) {
        if (!boxes.isUsable(slot)) continue;
        usable.push_back(slot);
        bool inGrid = true;
        for (int axis = 0; axis < 3 && inGrid; ++axis) {
            const double lo = lower(axis, slot), hi = upper(axis, slot);
            const double c = std::floor(lo / cell);
            inGrid = hi - lo <= width && std::fabs(c) < static_cast<double>(cCellLimit - 2);
            if (inGrid) cellOf[slot][static_cast<std::size_t>(axis)] = static_cast<std::int64_t>(c);
        }
        if (inGrid) {
            celled.emplace_back(packed(cellOf[slot][0], cellOf[slot][1], cellOf[slot][2]), slot);
        } else {
            wide.push_back(slot);
        }
    }
    std::sort(celled.begin(), celled.end());
    std::unordered_map<std::uint64_t, std::pair<std::size_t, std::size_t>> cellRange;
    for (std::size_t i = 0; i < celled.size();) {
        std::size_t j = i;
        while (j < celled.size() && celled[j].first == celled[i].first) ++j;
        cellRange.emplace(celled[i].first, std::make_pair(i, j));
        i = j;
    }
    std::vector<std::uint64_t> pairs;
    const auto consider = [&](std::uint32_t a, std::uint32_t b) {
        if (!boxes.overlapExact(a, b)) return;
        if (filterGroups &&
            !groupsCollide(boxes.groupData()[a], boxes.maskData()[a], boxes.groupData()[b], boxes.maskData()[b])) {
            return;
        }
        pairs.push_back(pairKey(std::min(a, b), std::max(a, b)));
    };
    for (std::size_t i = 0; i < celled.size(); ++i) {
        const std::uint32_t a = celled[i].second;
        const std::array<std::int64_t, 3>& c = cellOf[a];
        // The cell itself (later boxes only), then the 13 neighbours after it in (x, y, z) order.
        for (std::size_t j = i + 1; j < celled.size() && celled[j].first == celled[i].first; ++j) {
            consider(a, celled[j].second);
        }
        for (std::int64_t dx = 0; dx <= 1; ++dx) {
            for (std::int64_t dy = dx == 0 ? 0 : -1; dy <= 1; ++dy) {
                for (std::int64_t dz = dx == 0 && dy == 0 ? 1 : -1; dz <= 1; ++dz) {
                    const auto found = cellRange.find(packed(c[0] + dx, c[1] + dy, c[2] + dz));
                    if (found == cellRange.end()) continue;
                    for (std::size_t j = found->second.first; j < found->second.second; ++j) {
                        consider(a, celled[j].second);
                    }
                }
            }
        }
    }
    for (std::size_t w = 0; w < wide.size(); ++w) {
        for (const std::uint32_t b : usable) {
            // Another wide box is taken from the lower of the two only.
            const bool bWide = std::binary_search(wide.begin(), wide.end(), b);
            if (b == wide[w] || (bWide && b < wide[w])) continue;
            consider(wide[w], b);
        }
    }
    std::sort(pairs.begin(), pairs.end());
    return pairs;
}

} // namespace bulletgpu
