// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/sap/pair_finder.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

namespace bulletgpu::test {

/// The deltas an update must report when the sorted pair set goes from `before` to `after`.
inline PairDeltas deltasBetween(const std::vector<std::uint64_t>& before, const std::vector<std::uint64_t>& after) {
    PairDeltas deltas;
    std::set_difference(after.begin(), after.end(), before.begin(), before.end(), std::back_inserter(deltas.found));
    std::set_difference(before.begin(), before.end(), after.begin(), after.end(), std::back_inserter(deltas.lost));
    return deltas;
}

} // namespace bulletgpu::test
