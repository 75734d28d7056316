// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/aabb_ops.h"
#include "kernels/sap/box_store.h"

#include <cstdint>
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
            if (filterGroups && !groupsCollide(boxes.groupData()[a], boxes.maskData()[a], boxes.groupData()[b],
                                               boxes.maskData()[b])) {
                continue;
            }
            pairs.push_back(pairKey(a, b));
        }
    }
    return pairs;
}

} // namespace bulletgpu
