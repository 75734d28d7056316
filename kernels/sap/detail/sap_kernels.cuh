// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/aabb_ops.h"
#include "kernels/common/launch.h"
#include "kernels/common/box_store.h"
#include "kernels/sap/sap_grid.h"
#include "kernels/sap/sap_ops.h"
#include "kernels/sap/slot_staging.h"

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>

#include <cstdint>

/// The kernels of the CUDA pair finder, one thread per item each. The per-element math is the
/// BULLETGPU_HD code the CPU finder runs, so both backends decide every test identically.

namespace bulletgpu::detail {

/// Writable device copy of a box store's arrays (exact arrays null when not kept).
struct SapDeviceBoxes {
    float* min[3];        ///< Float lower bounds per axis.
    float* max[3];        ///< Float upper bounds per axis.
    double* exactMin[3];  ///< Exact lower bounds per axis, or null.
    double* exactMax[3];  ///< Exact upper bounds per axis, or null.
    std::uint32_t* group; ///< Collision filter groups.
    std::uint32_t* mask;  ///< Collision filter masks.
    std::uint8_t* state;  ///< Slot states.
};

/// The float bounds on the sweep axis and the two grid axes, picked on the host so that kernels
/// never index a parameter's pointer arrays by a run-time axis.
struct SapAxisBounds {
    const float* minS; ///< Lower bounds on the sweep axis.
    const float* maxS; ///< Upper bounds on the sweep axis.
    const float* minU; ///< Lower bounds on the u axis.
    const float* maxU; ///< Upper bounds on the u axis.
    const float* minV; ///< Lower bounds on the v axis.
    const float* maxV; ///< Upper bounds on the v axis.
};

/// The grid's axes out of a view of the box arrays.
inline SapAxisBounds sapAxisBounds(const BoxArraysView& view, const SapGrid& grid) {
    return SapAxisBounds{view.min[grid.sweepAxis], view.max[grid.sweepAxis], view.min[grid.uAxis],
                         view.max[grid.uAxis],     view.min[grid.vAxis],     view.max[grid.vAxis]};
}

/// Box-in-cell entries grouped by cell, sorted along the sweep axis within each cell.
struct SapEntries {
    float* minS;         ///< Lower bounds on the sweep axis.
    float* maxS;         ///< Upper bounds on the sweep axis.
    float* minU;         ///< Lower bounds on the u axis.
    float* maxU;         ///< Upper bounds on the u axis.
    float* minV;         ///< Lower bounds on the v axis.
    float* maxV;         ///< Upper bounds on the v axis.
    std::uint32_t* slot; ///< Slot of each entry's box.
    std::uint32_t* cell; ///< Cell of each entry (ascending).
};

/// Where the sweeps append pair keys, compacted to (low slot << slotBits | high slot).
struct SapPairSink {
    std::uint64_t* keys;         ///< Key buffer.
    unsigned long long* count;   ///< Keys appended, including those past capacity.
    unsigned long long capacity; ///< Keys the buffer holds.
    int slotBits;                ///< Bits of the largest slot.
};

/// Appends the pair (a, b). Threads that append together take one atomic per warp; a key past
/// the capacity is counted but not written, so the host can grow the buffer and sweep again.
__device__ __forceinline__ void sapAppendPair(const SapPairSink& sink, std::uint32_t a, std::uint32_t b) {
    const std::uint64_t key = (static_cast<std::uint64_t>(a < b ? a : b) << sink.slotBits) | (a < b ? b : a);
    const cooperative_groups::coalesced_group active = cooperative_groups::coalesced_threads();
    unsigned long long base = 0;
    if (active.thread_rank() == 0) base = atomicAdd(sink.count, static_cast<unsigned long long>(active.size()));
    base = active.shfl(base, 0) + active.thread_rank();
    if (base < sink.capacity) sink.keys[base] = key;
}

/// Index of the first element of sorted[0, count) not less than (or, when `upper`, greater
/// than) `key`.
__device__ __forceinline__ std::uint64_t sapSearch(const std::uint64_t* sorted, std::uint64_t count, std::uint64_t key,
                                                   bool upper) {
    std::uint64_t low = 0, high = count;
    while (low < high) {
        const std::uint64_t middle = low + (high - low) / 2;
        const bool before = upper ? sorted[middle] <= key : sorted[middle] < key;
        if (before) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    return low;
}

/// Writes the staged records (and their exact bounds, when the boxes keep them) into the device
/// box arrays.
static __global__ void __launch_bounds__(cBlockSize)
    sap_scatter_kernel(const SapSlotRecord* records, const SapExactRecord* exact, std::uint64_t count,
                       SapDeviceBoxes boxes) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= count) return;
    const SapSlotRecord& record = records[i];
    const std::uint32_t slot = record.slot;
    for (int axis = 0; axis < 3; ++axis) {
        boxes.min[axis][slot] = record.min[axis];
        boxes.max[axis][slot] = record.max[axis];
        if (boxes.exactMin[0] != nullptr) {
            boxes.exactMin[axis][slot] = exact[i].min[axis];
            boxes.exactMax[axis][slot] = exact[i].max[axis];
        }
    }
    boxes.group[slot] = record.group;
    boxes.mask[slot] = record.mask;
    boxes.state[slot] = static_cast<std::uint8_t>(record.state);
}

/// Flags each slot as bucketed (normal) or huge, as BoxStore::isUsable and sapIsHuge decide,
/// and counts the cells each normal box covers. Boxes outside the ownership window's slab are
/// neither: a slab finder that shares the store searches only the boxes touching its slab.
static __global__ void __launch_bounds__(cBlockSize)
    sap_classify_kernel(BoxArraysView view, SapAxisBounds axes, const std::uint8_t* state, std::uint32_t slots,
                        SapGrid grid, PairOwnership window, std::uint8_t* isNormal, std::uint8_t* isHuge,
                        std::uint32_t* cellCount) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= slots) return;
    const std::uint32_t slot = static_cast<std::uint32_t>(i);
    bool normal = false, huge = false;
    std::uint32_t cells = 0;
    if (state[slot] == BoxStore::Live &&
        isUsableBox(view.min[0][slot], view.min[1][slot], view.min[2][slot], view.max[0][slot], view.max[1][slot],
                    view.max[2][slot]) &&
        (window.axis < 0 || boxTouchesWindow(window, view.min[window.axis][slot], view.max[window.axis][slot]))) {
        const SapCellRange range =
            sapCellRange(grid, axes.minU[slot], axes.maxU[slot], axes.minV[slot], axes.maxV[slot]);
        huge = sapIsHuge(grid, range);
        normal = !huge;
        cells = normal ? range.count() : 0u;
    }
    isNormal[slot] = normal ? 1 : 0;
    isHuge[slot] = huge ? 1 : 0;
    cellCount[slot] = cells;
}

/// Sort key of each normal box: its lower bound on the sweep axis as an ordered integer.
static __global__ void __launch_bounds__(cBlockSize)
    sap_sort_keys_kernel(const float* minS, const std::uint32_t* normalSlots, std::uint32_t count,
                         std::uint32_t* keys) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= count) return;
    keys[i] = orderedFloatKey(minS[normalSlots[i]]);
}

/// Cells covered by each normal box, in sweep order.
static __global__ void __launch_bounds__(cBlockSize)
    sap_rank_counts_kernel(const std::uint32_t* slotCellCount, const std::uint32_t* sortedSlots, std::uint32_t count,
                           std::uint32_t* rankCellCount) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= count) return;
    rankCellCount[i] = slotCellCount[sortedSlots[i]];
}

/// Writes one (cell, sweep rank) entry per cell each normal box covers, at the box's offset.
static __global__ void __launch_bounds__(cBlockSize)
    sap_emit_entries_kernel(SapAxisBounds axes, SapGrid grid, const std::uint32_t* sortedSlots,
                            const std::uint32_t* rankOffset, std::uint32_t count, std::uint32_t* entryCell,
                            std::uint32_t* entryRank) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= count) return;
    const std::uint32_t rank = static_cast<std::uint32_t>(i);
    const std::uint32_t slot = sortedSlots[rank];
    const SapCellRange r = sapCellRange(grid, axes.minU[slot], axes.maxU[slot], axes.minV[slot], axes.maxV[slot]);
    std::uint32_t at = rankOffset[rank];
    for (std::int32_t v = r.v0; v <= r.v1; ++v) {
        for (std::int32_t u = r.u0; u <= r.u1; ++u) {
            entryCell[at] = sapCellIndex(grid, u, v);
            entryRank[at] = rank;
            ++at;
        }
    }
}

/// cellStart[c] = first entry of cell c, for every c in [0, cells]; entries sorted by cell.
static __global__ void __launch_bounds__(cBlockSize)
    sap_cell_starts_kernel(const std::uint32_t* entryCell, std::uint32_t entries, std::uint32_t cells,
                           std::uint32_t* cellStart) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= entries) return;
    const std::uint32_t e = static_cast<std::uint32_t>(i);
    const std::uint32_t cell = entryCell[e];
    const std::uint32_t first = e == 0 ? 0u : entryCell[e - 1] + 1u;
    for (std::uint32_t c = first; c <= cell; ++c) cellStart[c] = e;
    if (e + 1u == entries) {
        for (std::uint32_t c = cell + 1u; c <= cells; ++c) cellStart[c] = entries;
    }
}

/// Copies each entry's box bounds and slot next to it, for coalesced sweeps.
static __global__ void __launch_bounds__(cBlockSize)
    sap_gather_entries_kernel(SapAxisBounds axes, const std::uint32_t* sortedSlots, const std::uint32_t* entryRank,
                              std::uint32_t entries, SapEntries out) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= entries) return;
    const std::uint32_t slot = sortedSlots[entryRank[i]];
    out.minS[i] = axes.minS[slot];
    out.maxS[i] = axes.maxS[slot];
    out.minU[i] = axes.minU[slot];
    out.maxU[i] = axes.maxU[slot];
    out.minV[i] = axes.minV[slot];
    out.maxV[i] = axes.maxV[slot];
    out.slot[i] = slot;
}

/// Sweeps each entry forward through its cell while the next lower bound on the sweep axis is
/// within its upper bound; keeps a pair only in its reference cell. Counts candidates.
static __global__ void __launch_bounds__(cBlockSize)
    sap_sweep_kernel(SapEntries entries, const std::uint32_t* cellStart, std::uint32_t count, SapGrid grid,
                     BoxArraysView view, bool filterGroups, PairOwnership window, SapPairSink sink,
                     unsigned long long* candidates) {
    using BlockSum = cub::BlockReduce<unsigned long long, cBlockSize>;
    __shared__ typename BlockSum::TempStorage scratch;
    const std::uint64_t i = globalThreadIndex();
    unsigned long long tested = 0;
    if (i < count) {
        const std::uint32_t cell = entries.cell[i];
        const std::uint32_t end = cellStart[cell + 1];
        const float maxS = entries.maxS[i];
        const float minU = entries.minU[i], maxU = entries.maxU[i];
        const float minV = entries.minV[i], maxV = entries.maxV[i];
        const std::uint32_t a = entries.slot[i];
        for (std::uint32_t j = static_cast<std::uint32_t>(i) + 1u; j < end && entries.minS[j] <= maxS; ++j) {
            ++tested;
            if (!intervalsOverlap(minU, maxU, entries.minU[j], entries.maxU[j]) ||
                !intervalsOverlap(minV, maxV, entries.minV[j], entries.maxV[j])) {
                continue;
            }
            if (sapReferenceCell(grid, minU, minV, entries.minU[j], entries.minV[j]) != cell) continue;
            const std::uint32_t b = entries.slot[j];
            if (sapAcceptPair(view, a, b, filterGroups) && sapOwnsPair(window, view, a, b)) sapAppendPair(sink, a, b);
        }
    }
    const unsigned long long blockTested = BlockSum(scratch).Sum(tested);
    if (threadIdx.x == 0 && blockTested != 0) atomicAdd(candidates, blockTested);
}

/// Tests each normal box against every huge box.
static __global__ void __launch_bounds__(cBlockSize)
    sap_huge_normal_kernel(BoxArraysView view, const std::uint32_t* normalSlots, std::uint32_t normals,
                           const std::uint32_t* hugeSlots, std::uint32_t huge, bool filterGroups, PairOwnership window,
                           SapPairSink sink) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= normals) return;
    const std::uint32_t a = normalSlots[i];
    for (std::uint32_t k = 0; k < huge; ++k) {
        const std::uint32_t b = hugeSlots[k];
        if (sapKeepsPair(view, window, a, b, filterGroups)) sapAppendPair(sink, a, b);
    }
}

/// Tests each huge box against the huge boxes after it in the list.
static __global__ void __launch_bounds__(cBlockSize)
    sap_huge_huge_kernel(BoxArraysView view, const std::uint32_t* hugeSlots, std::uint32_t huge, bool filterGroups,
                         PairOwnership window, SapPairSink sink) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= huge) return;
    const std::uint32_t a = hugeSlots[i];
    for (std::uint32_t k = static_cast<std::uint32_t>(i) + 1u; k < huge; ++k) {
        const std::uint32_t b = hugeSlots[k];
        if (sapKeepsPair(view, window, a, b, filterGroups)) sapAppendPair(sink, a, b);
    }
}

/// Turns compacted keys (low << slotBits | high) back into pairKey() form; in place is allowed.
static __global__ void __launch_bounds__(cBlockSize)
    sap_expand_keys_kernel(const std::uint64_t* compact, std::uint64_t count, int slotBits, std::uint64_t* keys) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= count) return;
    const std::uint64_t key = compact[i];
    const std::uint64_t highMask = (std::uint64_t{1} << slotBits) - 1u;
    keys[i] = ((key >> slotBits) << 32) | (key & highMask);
}

/// flags[i] = 1 when keys[i] is not in sorted[0, sortedCount).
static __global__ void __launch_bounds__(cBlockSize)
    sap_flag_missing_kernel(const std::uint64_t* keys, std::uint64_t count, const std::uint64_t* sorted,
                            std::uint64_t sortedCount, std::uint8_t* flags) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= count) return;
    const std::uint64_t key = keys[i];
    const std::uint64_t at = sapSearch(sorted, sortedCount, key, false);
    flags[i] = (at < sortedCount && sorted[at] == key) ? 0 : 1;
}

/// Merges two sorted lists into out: each element goes to its index plus the number of the
/// other list's elements before it (ties: the first list's element first).
static __global__ void __launch_bounds__(cBlockSize)
    sap_merge_kernel(const std::uint64_t* first, std::uint64_t firstCount, const std::uint64_t* second,
                     std::uint64_t secondCount, std::uint64_t* out) {
    const std::uint64_t i = globalThreadIndex();
    if (i >= firstCount + secondCount) return;
    if (i < firstCount) {
        const std::uint64_t key = first[i];
        out[i + sapSearch(second, secondCount, key, false)] = key;
    } else {
        const std::uint64_t j = i - firstCount;
        const std::uint64_t key = second[j];
        out[j + sapSearch(first, firstCount, key, true)] = key;
    }
}

} // namespace bulletgpu::detail
