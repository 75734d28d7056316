// SPDX-License-Identifier: Zlib
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace bulletgpu {

/// The slots a proxy is paired with. The first few are kept inline, so that a list fills one
/// cache line and most pair changes touch no other memory; more spill into a vector.
class PartnerList {
public:
    /// Number of partners kept inline.
    static constexpr std::uint32_t cInline = 6;

    /// Number of partners.
    std::uint32_t size() const { return m_count; }
    /// Whether there are none.
    bool empty() const { return m_count == 0; }

    /// The i-th partner (order changes on erase).
    std::uint32_t operator[](std::uint32_t i) const { return i < cInline ? m_inline[i] : m_overflow[i - cInline]; }

    /// Adds a partner (the caller ensures it is not there yet).
    void push(std::uint32_t slot) {
        if (m_count < cInline)
            m_inline[m_count] = slot;
        else
            m_overflow.push_back(slot);
        ++m_count;
    }

    /// Removes a partner; returns false when it was not there.
    bool erase(std::uint32_t slot) {
        for (std::uint32_t i = 0; i < m_count; ++i) {
            if ((*this)[i] != slot) continue;
            const std::uint32_t last = (*this)[m_count - 1];
            if (i < cInline)
                m_inline[i] = last;
            else
                m_overflow[i - cInline] = last;
            if (m_count > cInline) m_overflow.pop_back();
            --m_count;
            return true;
        }
        return false;
    }

    /// Whether a slot is a partner.
    bool contains(std::uint32_t slot) const {
        for (std::uint32_t i = 0; i < m_count; ++i) {
            if ((*this)[i] == slot) return true;
        }
        return false;
    }

    /// Copies the partners into a vector, sorted.
    void copySorted(std::vector<std::uint32_t>& out) const {
        out.resize(m_count);
        for (std::uint32_t i = 0; i < m_count; ++i) out[i] = (*this)[i];
        std::sort(out.begin(), out.end());
    }

    /// Forgets every partner.
    void clear() {
        m_count = 0;
        m_overflow.clear();
    }

private:
    std::uint32_t m_count = 0;
    std::uint32_t m_inline[cInline] = {};
    std::vector<std::uint32_t> m_overflow;
};

} // namespace bulletgpu
