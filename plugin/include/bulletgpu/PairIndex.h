// SPDX-License-Identifier: Zlib
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bulletgpu {

/// An open-addressing hash index from a pair of proxy unique ids to the pair's position in a
/// pair array: linear probing, at most half full, grown by doubling, erased by shifting the
/// following entries back (no tombstones). Allocates only when it grows.
class PairIndex final {
public:
    /// The key of the pair of two unique ids, the smaller id in the high half (either order).
    static std::uint64_t keyOf(int uid0, int uid1) {
        const auto a = static_cast<std::uint32_t>(uid0 < uid1 ? uid0 : uid1);
        const auto b = static_cast<std::uint32_t>(uid0 < uid1 ? uid1 : uid0);
        return (static_cast<std::uint64_t>(a) << 32) | b;
    }

    /// The position stored for the key, or -1 when the key is absent.
    int find(std::uint64_t key) const;

    /// The position stored for the key if present; otherwise stores the key with `position` and
    /// returns -1, growing first when that would make the index more than half full. One search.
    int findOrInsert(std::uint64_t key, int position);

    /// Removes a key that is present.
    void erase(std::uint64_t key);

    /// Removes the key if present and returns its position, or returns -1. One search.
    int take(std::uint64_t key);

    /// Changes the position stored for a key that is present.
    void reposition(std::uint64_t key, int position);

    /// Grows, if needed, so that `count` keys fit without growing again.
    void reserve(std::size_t count);

    /// Starts loading the slot the key's search begins at.
    void prefetch(std::uint64_t key) const {
        if (!m_slots.empty()) __builtin_prefetch(&m_slots[home(key)]);
    }

    /// Number of keys held.
    std::size_t size() const { return m_size; }

private:
    /// One slot: a key and its position, or an empty slot (position -1).
    struct Slot {
        std::uint64_t key;
        int position;
    };

    /// The slot a key's search starts at.
    std::size_t home(std::uint64_t key) const;
    /// The slot holding a key that is present.
    std::size_t slotOf(std::uint64_t key) const;
    /// Empties a full slot, moving the entries after it back as their searches need.
    void eraseSlot(std::size_t slot);
    /// Rebuilds the slots at a new power-of-two capacity.
    void rehash(std::size_t capacity);

    std::vector<Slot> m_slots; // power-of-two length, or empty
    std::size_t m_size = 0;
};

} // namespace bulletgpu
