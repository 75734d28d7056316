// SPDX-License-Identifier: Zlib
#include <bulletgpu/PairIndex.h>

#include <cassert>

namespace bulletgpu {

namespace {

/// The smallest capacity the index grows to.
constexpr std::size_t cMinCapacity = 16;

/// A 64-bit mix (the MurmurHash3 finalizer): nearby ids land in unrelated slots.
std::uint64_t mix(std::uint64_t key) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    key *= 0xc4ceb9fe1a85ec53ULL;
    key ^= key >> 33;
    return key;
}

} // namespace

std::size_t PairIndex::home(std::uint64_t key) const {
    return static_cast<std::size_t>(mix(key)) & (m_slots.size() - 1);
}

int PairIndex::find(std::uint64_t key) const {
    if (m_slots.empty()) return -1;
    const std::size_t mask = m_slots.size() - 1;
    for (std::size_t i = home(key);; i = (i + 1) & mask) {
        const Slot& slot = m_slots[i];
        if (slot.position < 0) return -1;
        if (slot.key == key) return slot.position;
    }
}

std::size_t PairIndex::slotOf(std::uint64_t key) const {
    const std::size_t mask = m_slots.size() - 1;
    std::size_t i = home(key);
    while (m_slots[i].key != key || m_slots[i].position < 0) {
        assert(m_slots[i].position >= 0 && "the key is not in the index");
        i = (i + 1) & mask;
    }
    return i;
}

int PairIndex::findOrInsert(std::uint64_t key, int position) {
    assert(position >= 0);
    reserve(m_size + 1);
    const std::size_t mask = m_slots.size() - 1;
    std::size_t i = home(key);
    for (; m_slots[i].position >= 0; i = (i + 1) & mask) {
        if (m_slots[i].key == key) return m_slots[i].position;
    }
    m_slots[i] = Slot{key, position};
    ++m_size;
    return -1;
}

void PairIndex::erase(std::uint64_t key) { eraseSlot(slotOf(key)); }

int PairIndex::take(std::uint64_t key) {
    if (m_slots.empty()) return -1;
    const std::size_t mask = m_slots.size() - 1;
    for (std::size_t i = home(key); m_slots[i].position >= 0; i = (i + 1) & mask) {
        if (m_slots[i].key != key) continue;
        const int position = m_slots[i].position;
        eraseSlot(i);
        return position;
    }
    return -1;
}

void PairIndex::eraseSlot(std::size_t slot) {
    const std::size_t mask = m_slots.size() - 1;
    std::size_t hole = slot;
    // Backward shift: move each following entry of the run into the hole unless its home lies
    // cyclically in (hole, next], where it must stay to remain reachable.
    for (std::size_t next = (hole + 1) & mask; m_slots[next].position >= 0; next = (next + 1) & mask) {
        const std::size_t start = home(m_slots[next].key);
        const bool stays = hole <= next ? (hole < start && start <= next) : (hole < start || start <= next);
        if (stays) continue;
        m_slots[hole] = m_slots[next];
        hole = next;
    }
    m_slots[hole].position = -1;
    --m_size;
}

void PairIndex::reposition(std::uint64_t key, int position) {
    assert(position >= 0);
    m_slots[slotOf(key)].position = position;
}

void PairIndex::reserve(std::size_t count) {
    if (2 * count <= m_slots.size()) return;
    std::size_t capacity = m_slots.empty() ? cMinCapacity : m_slots.size();
    while (2 * count > capacity) capacity *= 2;
    rehash(capacity);
}

void PairIndex::rehash(std::size_t capacity) {
    std::vector<Slot> old(capacity, Slot{0, -1});
    old.swap(m_slots);
    const std::size_t mask = capacity - 1;
    for (const Slot& slot : old) {
        if (slot.position < 0) continue;
        std::size_t i = home(slot.key);
        while (m_slots[i].position >= 0) i = (i + 1) & mask;
        m_slots[i] = slot;
    }
}

} // namespace bulletgpu
