// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/box_store.h"

#include <cstdint>

namespace bulletgpu {

/// One changed slot as the host stages it for upload to a device copy of a BoxStore: the float
/// box, the filter and the state (40 bytes).
struct SapSlotRecord {
    float min[3];        ///< Float lower bounds (rounded down).
    float max[3];        ///< Float upper bounds (rounded up).
    std::uint32_t slot;  ///< Slot the record belongs to.
    std::uint32_t group; ///< Collision filter group.
    std::uint32_t mask;  ///< Collision filter mask.
    std::uint32_t state; ///< BoxStore::SlotState.
};

/// The exact bounds of a changed slot, staged beside its SapSlotRecord only for stores that keep
/// exact boxes (double-precision Bullet), so float builds send 40 bytes a slot instead of 88.
struct SapExactRecord {
    double min[3]; ///< Exact lower bounds.
    double max[3]; ///< Exact upper bounds.
};

/// Fills records[i], and exact[i] when exact is not null, from slots[i] of the store, for
/// i < count, on up to `threads` OpenMP threads (large uploads only: below a few thousand slots
/// one thread is faster). The buffers are the pinned staging memory of a CUDA upload.
void stageSlotRecords(const BoxStore& boxes, const std::uint32_t* slots, std::uint64_t count, SapSlotRecord* records,
                      SapExactRecord* exact, int threads);

} // namespace bulletgpu
