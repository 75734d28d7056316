// SPDX-License-Identifier: Zlib
#pragma once

#include <algorithm>
#include <cstddef>

namespace bulletgpu {

/// Per-thread buffers filled under dynamic scheduling: which thread takes which work changes
/// from frame to frame, so a thread's buffer would grow whenever it first takes the largest
/// share. These helpers, called after each frame, give every thread the room another needed,
/// so that frames of settled size allocate nothing.

/// Scratch that holds one piece of work at a time (a stack, a chunk's candidates): gives each
/// of the first `count` per-thread vectors, get(perThread[t]), the capacity of the largest.
template <typename PerThread, typename Get>
void shareCapacity(PerThread& perThread, std::size_t count, Get get) {
    std::size_t largest = 0;
    for (std::size_t t = 0; t < count; ++t) largest = std::max(largest, get(perThread[t]).capacity());
    for (std::size_t t = 0; t < count; ++t) get(perThread[t]).reserve(largest);
}

/// Room for a list that gathers one thread's results of a frame: twice the largest share, or
/// all `total` results when that is less (always, with two threads), so memory stays
/// proportional to the work while a thread's share may double before its list must grow.
inline std::size_t gatheringRoom(std::size_t largestShare, std::size_t total) {
    return std::min(total, 2 * largestShare);
}

/// Gives each of the first `count` per-thread result lists, get(perThread[t]), the
/// gatheringRoom of this frame's shares (their sizes), of `total` results in all.
template <typename PerThread, typename Get>
void shareGatheringCapacity(PerThread& perThread, std::size_t count, Get get, std::size_t total) {
    std::size_t largest = 0;
    for (std::size_t t = 0; t < count; ++t) largest = std::max(largest, get(perThread[t]).size());
    const std::size_t room = gatheringRoom(largest, total);
    for (std::size_t t = 0; t < count; ++t) get(perThread[t]).reserve(room);
}

} // namespace bulletgpu
