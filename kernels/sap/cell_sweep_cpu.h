// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/sap/sap_ops.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bulletgpu {

/// A box in one sweep cell, in sweep coordinates (sweep axis S, grid axes U and V): the boxes
/// are bucketed into cells as these, one array of structures, because scattering one 40-byte
/// record per entry costs far fewer cache misses than scattering ten separate fields.
struct CellEntry {
    float minS, maxS;     ///< Bounds on the sweep axis.
    float minU, maxU;     ///< Bounds on the grid's u axis.
    float minV, maxV;     ///< Bounds on the grid's v axis.
    std::uint32_t slot;   ///< The box's slot in the box store.
    std::uint32_t corner; ///< sapCornerBits of the box's cells, seen from this entry's cell.
    std::uint32_t group;  ///< Collision filter group.
    std::uint32_t mask;   ///< Collision filter mask.
};
static_assert(sizeof(CellEntry) == 40, "CellEntry is packed");

/// One cell's entries as a structure of arrays, the layout the lane tests read: a thread's
/// scratch, filled cell by cell. The arrays hold cLanes - 1 entries of padding past the
/// last one, so that a group of lanes may read beyond the cell's end (those lanes are masked).
struct CellLanes {
    static constexpr std::uint32_t cLanes = 4; ///< Entries one step of a sweep tests at once.

    std::vector<float> minS, maxS, minU, maxU, minV, maxV; ///< As in CellEntry.
    std::vector<std::uint32_t> slot, corner, group, mask;  ///< As in CellEntry.

    /// Copies entries [0, count) into the arrays, growing them when needed.
    void load(const CellEntry* entries, std::uint32_t count);
    /// Grows the arrays to hold at least `padded` entries, padding included.
    void makeRoom(std::size_t padded);
    /// Entries (padding included) the arrays hold now.
    std::size_t room() const { return minS.size(); }
};

/// One thread's pairs: keys[0, count). keys only grows, so a sweep may write a group's
/// lanes unconditionally and count only the hits.
struct SweepOutput {
    std::vector<std::uint64_t> keys; ///< Pair keys (pairKey), the first count of them valid.
    std::size_t count = 0;           ///< Pairs written.

    /// Makes room for `more` keys past count.
    void reserveFor(std::size_t more) {
        if (keys.size() < count + more) keys.resize(2 * keys.size() + more + 1024);
    }
    /// Appends one key.
    void push(std::uint64_t key) {
        reserveFor(1);
        keys[count++] = key;
    }
};

/// What a pair must pass besides overlapping in the cell that is its reference cell.
struct CellSweepRules {
    bool filterGroups = true;   ///< Apply group/mask (false when a filter callback decides).
    bool confirmBySlot = false; ///< Also require sapAcceptPair and sapOwnsPair on the slots.
    BoxArraysView view{};       ///< The store's arrays, read when confirmBySlot.
    PairOwnership ownership;    ///< Which pairs this finder keeps, when confirmBySlot.
};

/// Sweeps the `count` entries of one cell (in sweep order), loaded into the thread's scratch
/// `lanes`, and appends to out every pair that overlaps inclusively on all three axes, has
/// this cell as its reference cell (both corner bits set between the two boxes) and passes
/// the rules. Tests cLanes later entries at a time (SSE where the compiler has it, the same
/// comparisons otherwise). Returns the number of pairs that overlapped on the sweep axis (the
/// candidates).
std::uint64_t sweepCell(const CellEntry* entries, std::uint32_t count, const CellSweepRules& rules, CellLanes& lanes,
                        SweepOutput& out);

} // namespace bulletgpu
