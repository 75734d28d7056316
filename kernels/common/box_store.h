// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/aabb_ops.h"

#include <cassert>
#include <cstdint>
#include <vector>

namespace bulletgpu {

/// Host-side structure-of-arrays store of axis-aligned boxes, indexed by dense slots.
///
/// Boxes arrive in double precision and are kept as floats rounded outward (min down,
/// max up), so a float overlap test never loses a pair that exact arithmetic finds
/// (the reliable-culling idea of FAR, Govindaraju et al. 2004). When the store keeps
/// exact copies, the doubles themselves are kept too, and finders confirm float
/// candidates against them. The store records which slots changed since the backends
/// last consumed them, so unchanged boxes cost nothing to re-send.
class BoxStore {
public:
    /// Slot states.
    enum SlotState : std::uint8_t { Free = 0, Live = 1 };

    /// keepExact: also keep the double-precision boxes (for double-precision callers).
    explicit BoxStore(bool keepExact = false);

    /// Number of slots (live or free) that the arrays hold.
    std::uint32_t size() const { return static_cast<std::uint32_t>(m_state.size()); }

    /// Reserves room for this many slots.
    void reserve(std::uint32_t slots);

    /// Puts a box into a free slot (growing the arrays up to it) and makes it live.
    void insert(std::uint32_t slot, const double min[3], const double max[3], std::uint32_t group, std::uint32_t mask);

    /// Replaces a live slot's box; returns false and changes nothing when the box is the same.
    bool update(std::uint32_t slot, const double min[3], const double max[3]);

    /// Replaces a live slot's box by float bounds, kept as they are (for stores that keep no exact
    /// boxes); returns false and changes nothing when the box is the same, bit for bit.
    bool updateFloat(std::uint32_t slot, const float min[3], const float max[3]) {
        assert(isLive(slot) && !m_keepExact);
        bool same = true;
        for (int axis = 0; axis < 3; ++axis) {
            same = same && floatBits(m_min[axis][slot]) == floatBits(min[axis]) &&
                   floatBits(m_max[axis][slot]) == floatBits(max[axis]);
        }
        if (same) return false;
        storeFloat(slot, min, max);
        return true;
    }

    /// Replaces a live slot's box by float bounds, kept as they are, for a caller that already
    /// knows the box changed. Inline: float Bullet's setAabb calls it for every moving object
    /// every step, after comparing the box with the one its proxy keeps.
    void storeFloat(std::uint32_t slot, const float min[3], const float max[3]) {
        assert(isLive(slot) && !m_keepExact);
        for (int axis = 0; axis < 3; ++axis) {
            m_min[axis][slot] = min[axis];
            m_max[axis][slot] = max[axis];
        }
        markDirty(slot);
    }

    /// Replaces a live slot's collision filter; returns whether it changed.
    bool setFilter(std::uint32_t slot, std::uint32_t group, std::uint32_t mask) {
        assert(isLive(slot));
        if (m_group[slot] == group && m_mask[slot] == mask) return false;
        m_group[slot] = group;
        m_mask[slot] = mask;
        markDirty(slot);
        return true;
    }

    /// Makes a slot live (growing the arrays up to it) with the box and filter of a live slot of
    /// another store that keeps the same precision, copied bit for bit; returns whether
    /// anything changed. The partitioned finder fills its slab stores this way.
    bool copyFrom(std::uint32_t slot, const BoxStore& source, std::uint32_t sourceSlot);

    /// Frees a live slot: its box overlaps nothing from now on.
    void erase(std::uint32_t slot);

    /// Frees every slot.
    void clear();

    /// Number of live slots.
    std::uint32_t liveCount() const { return m_liveCount; }

    /// Whether the slot holds a live box.
    bool isLive(std::uint32_t slot) const { return slot < size() && m_state[slot] == Live; }

    /// Whether exact double-precision boxes are kept.
    bool keepsExact() const { return m_keepExact; }

    /// Increases whenever anything that affects pairs changes (boxes, filters, slots).
    std::uint64_t revision() const { return m_revision; }

    /// Slots whose box, filter or state changed since clearDirty(), each listed once.
    const std::vector<std::uint32_t>& dirtySlots() const { return m_dirty; }

    /// Forgets the dirty list (called by the backend that consumed it).
    void clearDirty();

    /// Float box bounds per axis (rounded outward), indexed by slot.
    const float* minData(int axis) const { return m_min[axis].data(); }
    /// Float box upper bounds per axis (rounded outward), indexed by slot.
    const float* maxData(int axis) const { return m_max[axis].data(); }
    /// Exact lower bounds per axis, or null when exact boxes are not kept.
    const double* exactMinData(int axis) const { return m_keepExact ? m_exactMin[axis].data() : nullptr; }
    /// Exact upper bounds per axis, or null when exact boxes are not kept.
    const double* exactMaxData(int axis) const { return m_keepExact ? m_exactMax[axis].data() : nullptr; }
    /// Collision filter groups, indexed by slot.
    const std::uint32_t* groupData() const { return m_group.data(); }
    /// Collision filter masks, indexed by slot.
    const std::uint32_t* maskData() const { return m_mask.data(); }
    /// Slot states (SlotState), indexed by slot.
    const std::uint8_t* stateData() const { return m_state.data(); }

    /// True when the slot is live and its box can overlap anything (no NaN, min <= max).
    bool isUsable(std::uint32_t slot) const {
        return isLive(slot) && m_min[0][slot] <= m_max[0][slot] && m_min[1][slot] <= m_max[1][slot] &&
               m_min[2][slot] <= m_max[2][slot];
    }

    /// Exact (or float, when exact boxes are not kept) overlap test of two slots' boxes.
    bool overlapExact(std::uint32_t a, std::uint32_t b) const;

    /// Exact (or float) overlap test of a slot's box against a query box.
    bool overlapExact(std::uint32_t slot, const double min[3], const double max[3]) const;

private:
    void grow(std::uint32_t slots);
    void markDirty(std::uint32_t slot) {
        ++m_revision;
        if (!m_isDirty[slot]) {
            m_isDirty[slot] = 1;
            m_dirty.push_back(slot);
        }
    }
    void store(std::uint32_t slot, const double min[3], const double max[3]);

    bool m_keepExact;
    std::uint64_t m_revision = 0;
    std::uint32_t m_liveCount = 0;
    std::vector<float> m_min[3];
    std::vector<float> m_max[3];
    std::vector<double> m_exactMin[3];
    std::vector<double> m_exactMax[3];
    std::vector<std::uint32_t> m_group;
    std::vector<std::uint32_t> m_mask;
    std::vector<std::uint8_t> m_state;
    std::vector<std::uint8_t> m_isDirty;
    std::vector<std::uint32_t> m_dirty;
};

} // namespace bulletgpu
