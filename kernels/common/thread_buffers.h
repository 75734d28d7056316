// SPDX-License-Identifier: Zlib
#pragma once

#include <algorithm>
#include <cstddef>

namespace bulletgpu {

/// Gives each of the first `count` per-thread vectors, get(perThread[t]), the capacity of the
/// largest of them, or `atLeast` when that is more. Under dynamic scheduling any thread may take
/// the largest share of the next frame's work (or all of it, for lists that gather results), so
/// once every thread has that room, frames of settled size allocate nothing.
template <typename PerThread, typename Get>
void shareCapacity(PerThread& perThread, std::size_t count, Get get, std::size_t atLeast = 0) {
    std::size_t largest = atLeast;
    for (std::size_t t = 0; t < count; ++t) largest = std::max(largest, get(perThread[t]).capacity());
    for (std::size_t t = 0; t < count; ++t) get(perThread[t]).reserve(largest);
}

} // namespace bulletgpu
