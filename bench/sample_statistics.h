// SPDX-License-Identifier: Zlib
#pragma once

#include <algorithm>
#include <vector>

/// Statistics of timing samples shared by the benchmark executables.

namespace bulletgpu::bench {

/// The median of a sample (0 when empty).
inline double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const std::size_t mid = values.size() / 2;
    return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

/// The mean of a sample (0 when empty).
inline double mean(const std::vector<double>& values) {
    double sum = 0;
    for (double v : values) sum += v;
    return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

} // namespace bulletgpu::bench
