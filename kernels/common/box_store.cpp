// SPDX-License-Identifier: Zlib
#include "kernels/common/box_store.h"

#include "kernels/common/aabb_ops.h"

#include <cassert>
#include <cstring>

namespace bulletgpu {
namespace {

/// Bitwise equality, so that a NaN bound sent again unchanged counts as unchanged.
template <typename Real>
bool sameBits(Real a, Real b) {
    return std::memcmp(&a, &b, sizeof(Real)) == 0;
}

} // namespace

BoxStore::BoxStore(bool keepExact) : m_keepExact(keepExact) {}

void BoxStore::reserve(std::uint32_t slots) {
    for (int axis = 0; axis < 3; ++axis) {
        m_min[axis].reserve(slots);
        m_max[axis].reserve(slots);
        if (m_keepExact) {
            m_exactMin[axis].reserve(slots);
            m_exactMax[axis].reserve(slots);
        }
    }
    m_group.reserve(slots);
    m_mask.reserve(slots);
    m_state.reserve(slots);
    m_isDirty.reserve(slots);
}

void BoxStore::grow(std::uint32_t slots) {
    if (slots <= size()) return;
    for (int axis = 0; axis < 3; ++axis) {
        m_min[axis].resize(slots, 0.0f);
        m_max[axis].resize(slots, 0.0f);
        if (m_keepExact) {
            m_exactMin[axis].resize(slots, 0.0);
            m_exactMax[axis].resize(slots, 0.0);
        }
    }
    m_group.resize(slots, 0);
    m_mask.resize(slots, 0);
    m_state.resize(slots, Free);
    m_isDirty.resize(slots, 0);
}

void BoxStore::store(std::uint32_t slot, const double min[3], const double max[3]) {
    for (int axis = 0; axis < 3; ++axis) {
        m_min[axis][slot] = floatBelow(min[axis]);
        m_max[axis][slot] = floatAbove(max[axis]);
        if (m_keepExact) {
            m_exactMin[axis][slot] = min[axis];
            m_exactMax[axis][slot] = max[axis];
        }
    }
}

void BoxStore::insert(std::uint32_t slot, const double min[3], const double max[3], std::uint32_t group,
                      std::uint32_t mask) {
    grow(slot + 1);
    assert(m_state[slot] == Free && "slot already live");
    store(slot, min, max);
    m_group[slot] = group;
    m_mask[slot] = mask;
    m_state[slot] = Live;
    ++m_liveCount;
    markDirty(slot);
}

bool BoxStore::update(std::uint32_t slot, const double min[3], const double max[3]) {
    assert(isLive(slot));
    if (!m_keepExact) {
        float lo[3], hi[3];
        for (int axis = 0; axis < 3; ++axis) {
            lo[axis] = floatBelow(min[axis]);
            hi[axis] = floatAbove(max[axis]);
        }
        return updateFloat(slot, lo, hi);
    }
    bool same = true;
    for (int axis = 0; axis < 3; ++axis) {
        same = same && sameBits(m_exactMin[axis][slot], min[axis]) && sameBits(m_exactMax[axis][slot], max[axis]);
    }
    if (same) return false;
    store(slot, min, max);
    markDirty(slot);
    return true;
}

bool BoxStore::copyFrom(std::uint32_t slot, const BoxStore& source, std::uint32_t sourceSlot) {
    assert(source.isLive(sourceSlot) && source.m_keepExact == m_keepExact);
    grow(slot + 1);
    bool same = m_state[slot] == Live && m_group[slot] == source.m_group[sourceSlot] &&
                m_mask[slot] == source.m_mask[sourceSlot];
    for (int axis = 0; axis < 3 && same; ++axis) {
        same = sameBits(m_min[axis][slot], source.m_min[axis][sourceSlot]) &&
               sameBits(m_max[axis][slot], source.m_max[axis][sourceSlot]) &&
               (!m_keepExact || (sameBits(m_exactMin[axis][slot], source.m_exactMin[axis][sourceSlot]) &&
                                 sameBits(m_exactMax[axis][slot], source.m_exactMax[axis][sourceSlot])));
    }
    if (same) return false;
    for (int axis = 0; axis < 3; ++axis) {
        m_min[axis][slot] = source.m_min[axis][sourceSlot];
        m_max[axis][slot] = source.m_max[axis][sourceSlot];
        if (m_keepExact) {
            m_exactMin[axis][slot] = source.m_exactMin[axis][sourceSlot];
            m_exactMax[axis][slot] = source.m_exactMax[axis][sourceSlot];
        }
    }
    m_group[slot] = source.m_group[sourceSlot];
    m_mask[slot] = source.m_mask[sourceSlot];
    if (m_state[slot] != Live) {
        m_state[slot] = Live;
        ++m_liveCount;
    }
    markDirty(slot);
    return true;
}

void BoxStore::erase(std::uint32_t slot) {
    assert(isLive(slot));
    m_state[slot] = Free;
    --m_liveCount;
    markDirty(slot);
}

void BoxStore::clear() {
    for (std::uint32_t slot = 0; slot < size(); ++slot) {
        if (m_state[slot] == Live) erase(slot);
    }
}

void BoxStore::clearDirty() {
    for (std::uint32_t slot : m_dirty) m_isDirty[slot] = 0;
    m_dirty.clear();
}

bool BoxStore::overlapExact(std::uint32_t a, std::uint32_t b) const {
    for (int axis = 0; axis < 3; ++axis) {
        const bool overlap =
            m_keepExact ? m_exactMin[axis][a] <= m_exactMax[axis][a] && m_exactMin[axis][b] <= m_exactMax[axis][b] &&
                              intervalsOverlap(m_exactMin[axis][a], m_exactMax[axis][a], m_exactMin[axis][b],
                                               m_exactMax[axis][b])
                        : intervalsOverlap(m_min[axis][a], m_max[axis][a], m_min[axis][b], m_max[axis][b]);
        if (!overlap) return false;
    }
    return true;
}

bool BoxStore::overlapExact(std::uint32_t slot, const double min[3], const double max[3]) const {
    for (int axis = 0; axis < 3; ++axis) {
        const bool overlap =
            m_keepExact ? m_exactMin[axis][slot] <= m_exactMax[axis][slot] &&
                              intervalsOverlap(m_exactMin[axis][slot], m_exactMax[axis][slot], min[axis], max[axis])
                        : intervalsOverlap(static_cast<double>(m_min[axis][slot]),
                                           static_cast<double>(m_max[axis][slot]), min[axis], max[axis]);
        if (!overlap) return false;
    }
    return true;
}

} // namespace bulletgpu
