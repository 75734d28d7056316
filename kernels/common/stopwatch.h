// SPDX-License-Identifier: Zlib
#pragma once

#include <chrono>

namespace bulletgpu {

/// The clock every host-side phase timing uses.
using Clock = std::chrono::steady_clock;

/// Milliseconds from start until now.
inline double millisecondsSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

} // namespace bulletgpu
