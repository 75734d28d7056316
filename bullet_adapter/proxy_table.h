// SPDX-License-Identifier: Zlib
#pragma once

#include "bullet_adapter/partner_list.h"
#include "kernels/common/cache_line.h"
#include "kernels/common/box_store.h"

#include <BulletCollision/BroadphaseCollision/btBroadphaseProxy.h>
#include <LinearMath/btVector3.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace bulletgpu {

/// The proxy BulletGpu hands to Bullet: Bullet's fields alone, so that the proxies, which
/// setAabb walks every step, take as little memory as Bullet's own. Its partner list lives in
/// the ProxyTable, where a second thread may keep it while Bullet reads the proxy.
struct SlotProxy : public btBroadphaseProxy {
    /// Index of this proxy's box in the BoxStore: its unique id is slot + 1, so the slot is read
    /// from Bullet's own fields, in the proxy's first cache line.
    std::uint32_t slot() const { return static_cast<std::uint32_t>(m_uniqueId) - 1; }
};

/// Maps Bullet proxies to dense slots of a BoxStore: allocation and reuse of slots,
/// conversion of btVector3 boxes (float or double Bullet) into the store, and the
/// per-proxy partner lists that let a proxy's pairs be found in time proportional to
/// their number. Slot i carries unique id i + 1 while it is live.
class ProxyTable {
public:
    /// Keeps exact double boxes in the store when Bullet is built in double precision.
    ProxyTable();
    ~ProxyTable();

    ProxyTable(const ProxyTable&) = delete;
    ProxyTable& operator=(const ProxyTable&) = delete;

    /// Reserves room for this many proxies.
    void reserve(std::uint32_t proxies);

    /// Makes a live proxy for a new box in the lowest free slot; `ghost` marks a btGhostObject's proxy.
    SlotProxy* create(const btVector3& aabbMin, const btVector3& aabbMax, void* clientObject, int group, int mask,
                      bool ghost);

    /// Frees a proxy's slot; its partner list must already be empty.
    void destroy(SlotProxy* proxy);

    /// Stores a proxy's new box and refreshes its filter from the proxy's fields;
    /// returns whether anything that affects pairs changed. Reads only the proxy's first cache
    /// line (Bullet's fields) when nothing changed. Inline: setAabb calls it for every object
    /// every step.
    bool update(SlotProxy* proxy, const btVector3& aabbMin, const btVector3& aabbMax) {
        const std::uint32_t slot = proxy->slot();
        const bool filterChanged = m_boxes.setFilter(slot, static_cast<std::uint32_t>(proxy->m_collisionFilterGroup),
                                                     static_cast<std::uint32_t>(proxy->m_collisionFilterMask));
        // Bullet's updateAabbs gives every object its box every step, resting ones included: a
        // box with the same bits as the last one, which the proxy keeps, is settled by one comparison.
        if (sameBits(proxy->m_aabbMin, aabbMin) && sameBits(proxy->m_aabbMax, aabbMax)) return filterChanged;
        proxy->m_aabbMin = aabbMin;
        proxy->m_aabbMax = aabbMax;
        return storeBox(slot, aabbMin, aabbMax) || filterChanged;
    }

    /// The first half of update() for many proxies at once, safe to run in parallel on distinct
    /// proxies: gives the proxy its new box when the bits differ and returns whether its box or
    /// its filter differ from the store's, in which case commit() must follow on one thread.
    bool stage(SlotProxy* proxy, const btVector3& aabbMin, const btVector3& aabbMax) const {
        const std::uint32_t slot = proxy->slot();
        const bool filterDiffers =
            m_boxes.groupData()[slot] != static_cast<std::uint32_t>(proxy->m_collisionFilterGroup) ||
            m_boxes.maskData()[slot] != static_cast<std::uint32_t>(proxy->m_collisionFilterMask);
        if (sameBits(proxy->m_aabbMin, aabbMin) && sameBits(proxy->m_aabbMax, aabbMax)) return filterDiffers;
        proxy->m_aabbMin = aabbMin;
        proxy->m_aabbMax = aabbMax;
        return true;
    }

    /// The second half: stores a staged proxy's box (the one it now holds) and its filter;
    /// returns whether anything that affects pairs changed.
    bool commit(SlotProxy* proxy) {
        const std::uint32_t slot = proxy->slot();
        const bool filterChanged = m_boxes.setFilter(slot, static_cast<std::uint32_t>(proxy->m_collisionFilterGroup),
                                                     static_cast<std::uint32_t>(proxy->m_collisionFilterMask));
        return storeBox(slot, proxy->m_aabbMin, proxy->m_aabbMax) || filterChanged;
    }

    /// Whether the live proxy in a slot was created as a btGhostObject's (its pairs update in setAabb).
    bool isGhost(std::uint32_t slot) const { return m_isGhost[slot] != 0; }

    /// The live proxy in a slot.
    SlotProxy* proxy(std::uint32_t slot) const { return &m_chunks[slot >> cChunkBits][slot & (cChunkSize - 1)]; }

    /// Number of live proxies.
    std::uint32_t liveCount() const { return m_liveCount; }

    /// The box store the backends read.
    BoxStore& boxes() { return m_boxes; }
    /// The box store the backends read.
    const BoxStore& boxes() const { return m_boxes; }

    /// Frees every slot (only when no proxy is live) so slots and ids start again from 0 and 1.
    void resetSlots();

    /// Adds b to a's partners and a to b's.
    void link(std::uint32_t a, std::uint32_t b);
    /// Removes b from a's partners and a from b's; returns false if they were not linked.
    bool unlink(std::uint32_t a, std::uint32_t b);
    /// Whether a and b are linked.
    bool linked(std::uint32_t a, std::uint32_t b) const;
    /// The slots the proxy in a slot is paired with in the cache.
    const PartnerList& partners(std::uint32_t slot) const { return m_partners[slot].value; }

private:
    /// Whether two vectors have the same x, y and z bits.
    static bool sameBits(const btVector3& a, const btVector3& b) {
        return std::memcmp(a.m_floats, b.m_floats, 3 * sizeof(btScalar)) == 0;
    }

#ifdef BT_USE_DOUBLE_PRECISION
    /// Stores a changed box, rounded outward to floats beside the exact doubles; returns whether
    /// the store's box changed.
    bool storeBox(std::uint32_t slot, const btVector3& aabbMin, const btVector3& aabbMax);
#else
    /// Stores a changed box: float bounds are kept as they are, with no rounding to do, and the
    /// store holds the same bits as the proxy, whose comparison already found the box changed.
    bool storeBox(std::uint32_t slot, const btVector3& aabbMin, const btVector3& aabbMax) {
        m_boxes.storeFloat(slot, aabbMin.m_floats, aabbMax.m_floats);
        return true;
    }
#endif

    BoxStore m_boxes;
    /// Proxies live in chunks of consecutive slots: stable addresses, and neighbouring slots are
    /// neighbours in memory, so a world that walks its objects in order walks its proxies in order.
    static constexpr std::uint32_t cChunkBits = 10;
    static constexpr std::uint32_t cChunkSize = 1u << cChunkBits;

    std::vector<std::unique_ptr<SlotProxy[]>> m_chunks;
    std::vector<CacheLinePadded<PartnerList>> m_partners; // per slot, a cache line each
    std::uint32_t m_slotCount = 0;                        // slots ever handed out (live or free)
    std::vector<std::uint32_t> m_freeSlots;               // min-heap: the lowest free slot is reused first
    std::vector<std::uint8_t> m_isGhost;                  // per slot, beside the proxies' cache lines
    std::uint32_t m_liveCount = 0;
};

} // namespace bulletgpu
