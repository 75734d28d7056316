// SPDX-License-Identifier: Zlib
#include "bullet_adapter/proxy_table.h"
#include "bullet_adapter/vector_conversion.h"

#include <algorithm>
#include <cassert>
#include <functional>

namespace bulletgpu {
ProxyTable::ProxyTable() : m_boxes(sizeof(btScalar) == sizeof(double)) {}

ProxyTable::~ProxyTable() = default;

void ProxyTable::reserve(std::uint32_t proxies) {
    m_boxes.reserve(proxies);
    m_chunks.reserve((proxies + cChunkSize - 1) / cChunkSize);
    m_partners.reserve(proxies);
}

SlotProxy* ProxyTable::create(const btVector3& aabbMin, const btVector3& aabbMax, void* clientObject, int group,
                              int mask, bool ghost) {
    std::uint32_t slot;
    if (!m_freeSlots.empty()) {
        std::pop_heap(m_freeSlots.begin(), m_freeSlots.end(), std::greater<>());
        slot = m_freeSlots.back();
        m_freeSlots.pop_back();
    } else {
        slot = m_slotCount++;
        if ((slot >> cChunkBits) >= m_chunks.size()) m_chunks.push_back(std::make_unique<SlotProxy[]>(cChunkSize));
    }
    SlotProxy* proxy = this->proxy(slot);
    proxy->m_clientObject = clientObject;
    proxy->m_collisionFilterGroup = group;
    proxy->m_collisionFilterMask = mask;
    proxy->m_uniqueId = static_cast<int>(slot) + 1;
    proxy->m_aabbMin = aabbMin;
    proxy->m_aabbMax = aabbMax;
    if (m_isGhost.size() <= slot) m_isGhost.resize(slot + 1, 0);
    m_isGhost[slot] = ghost ? 1 : 0;
    if (m_partners.size() <= slot) m_partners.resize(slot + 1);
    m_partners[slot].value.clear();
    double lo[3], hi[3];
    toDoubles(aabbMin, lo);
    toDoubles(aabbMax, hi);
    m_boxes.insert(slot, lo, hi, static_cast<std::uint32_t>(group), static_cast<std::uint32_t>(mask));
    ++m_liveCount;
    return proxy;
}

void ProxyTable::destroy(SlotProxy* proxy) {
    assert(partners(proxy->slot()).empty() && "unlink a proxy's pairs before destroying it");
    m_boxes.erase(proxy->slot());
    proxy->m_clientObject = nullptr;
    m_freeSlots.push_back(proxy->slot());
    std::push_heap(m_freeSlots.begin(), m_freeSlots.end(), std::greater<>());
    --m_liveCount;
}

#ifdef BT_USE_DOUBLE_PRECISION
bool ProxyTable::storeBox(std::uint32_t slot, const btVector3& aabbMin, const btVector3& aabbMax) {
    double lo[3], hi[3];
    toDoubles(aabbMin, lo);
    toDoubles(aabbMax, hi);
    return m_boxes.update(slot, lo, hi);
}
#endif

void ProxyTable::resetSlots() {
    assert(m_liveCount == 0);
    m_boxes.clear();
    m_boxes.clearDirty();
    m_chunks.clear();
    m_slotCount = 0;
    m_freeSlots.clear();
    m_isGhost.clear();
    m_partners.clear();
}

void ProxyTable::link(std::uint32_t a, std::uint32_t b) {
    m_partners[a].value.push(b);
    m_partners[b].value.push(a);
}

bool ProxyTable::unlink(std::uint32_t a, std::uint32_t b) {
    const bool foundA = m_partners[a].value.erase(b);
    const bool foundB = m_partners[b].value.erase(a);
    assert(foundA == foundB);
    (void)foundB;
    return foundA;
}

bool ProxyTable::linked(std::uint32_t a, std::uint32_t b) const { return partners(a).contains(b); }

} // namespace bulletgpu
