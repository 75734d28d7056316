// SPDX-License-Identifier: Zlib
#include "kernels/sap/cell_sweep_cpu.h"

#include "kernels/common/aabb_ops.h"
#include "kernels/common/lane_mask.h"
#include "kernels/sap/sap_grid.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace bulletgpu {
namespace {

constexpr std::uint32_t cLanes = CellLanes::cLanes;
constexpr std::uint32_t cAllLanes = (1u << cLanes) - 1;
static_assert(cLanes == 4, "the lane tests below are written for four lanes");

/// The lanes of a group that lie inside the cell when `left` entries of it remain.
std::uint32_t lanesInside(std::uint32_t left) { return left >= cLanes ? cAllLanes : (1u << left) - 1; }

/// Outcome of testing one entry (the probe) against a group of later entries.
struct LaneMasks {
    std::uint32_t inRange; ///< Lanes inside the cell whose box starts at or before the probe's end.
    std::uint32_t hits;    ///< Of those, the lanes that overlap on u and v, share the reference cell and pass groups.
};

#if defined(__SSE2__)

/// The probe's values, one per lane.
class Probe {
public:
    Probe(const CellLanes& e, std::uint32_t i)
        : m_maxS(_mm_set1_ps(e.maxS[i])), m_minU(_mm_set1_ps(e.minU[i])), m_maxU(_mm_set1_ps(e.maxU[i])),
          m_minV(_mm_set1_ps(e.minV[i])), m_maxV(_mm_set1_ps(e.maxV[i])),
          m_corner(_mm_set1_epi32(static_cast<int>(e.corner[i]))),
          m_group(_mm_set1_epi32(static_cast<int>(e.group[i]))), m_mask(_mm_set1_epi32(static_cast<int>(e.mask[i]))) {}

    /// Tests entries [j, j + cLanes); `inside` masks the lanes past the cell's end.
    LaneMasks test(const CellLanes& e, std::uint32_t j, std::uint32_t inside, bool filterGroups) const {
        const __m128 inS = _mm_cmple_ps(_mm_loadu_ps(e.minS.data() + j), m_maxS);
        const auto inRange = static_cast<std::uint32_t>(_mm_movemask_ps(inS)) & inside;
        const __m128 meetU = _mm_and_ps(_mm_cmple_ps(_mm_loadu_ps(e.minU.data() + j), m_maxU),
                                        _mm_cmple_ps(m_minU, _mm_loadu_ps(e.maxU.data() + j)));
        const __m128 meetV = _mm_and_ps(_mm_cmple_ps(_mm_loadu_ps(e.minV.data() + j), m_maxV),
                                        _mm_cmple_ps(m_minV, _mm_loadu_ps(e.maxV.data() + j)));
        const __m128i corners = _mm_or_si128(m_corner, load(e.corner, j));
        __m128i keep = _mm_cmpeq_epi32(corners, _mm_set1_epi32(static_cast<int>(cBothCorners)));
        if (filterGroups) {
            const __m128i zero = _mm_setzero_si128();
            const __m128i groupMissesMask = _mm_cmpeq_epi32(_mm_and_si128(load(e.group, j), m_mask), zero);
            const __m128i maskMissesGroup = _mm_cmpeq_epi32(_mm_and_si128(m_group, load(e.mask, j)), zero);
            keep = _mm_andnot_si128(_mm_or_si128(groupMissesMask, maskMissesGroup), keep);
        }
        const __m128 meet = _mm_and_ps(_mm_and_ps(meetU, meetV), _mm_castsi128_ps(keep));
        return {inRange, static_cast<std::uint32_t>(_mm_movemask_ps(meet)) & inRange};
    }

private:
    static __m128i load(const std::vector<std::uint32_t>& values, std::uint32_t j) {
        return _mm_loadu_si128(reinterpret_cast<const __m128i*>(values.data() + j));
    }

    __m128 m_maxS, m_minU, m_maxU, m_minV, m_maxV;
    __m128i m_corner, m_group, m_mask;
};

#else

/// The probe's values; the lanes are tested one after another with the same comparisons.
class Probe {
public:
    Probe(const CellLanes& /*lanes*/, std::uint32_t i) : m_i(i) {}

    /// Tests entries [j, j + cLanes); `inside` masks the lanes past the cell's end.
    LaneMasks test(const CellLanes& e, std::uint32_t j, std::uint32_t inside, bool filterGroups) const {
        LaneMasks masks{0, 0};
        for (std::uint32_t k = 0; k < cLanes; ++k) {
            const std::uint32_t b = j + k;
            const bool inS = e.minS[b] <= e.maxS[m_i];
            const bool meet = e.minU[b] <= e.maxU[m_i] && e.minU[m_i] <= e.maxU[b] && e.minV[b] <= e.maxV[m_i] &&
                              e.minV[m_i] <= e.maxV[b] && (e.corner[b] | e.corner[m_i]) == cBothCorners &&
                              (!filterGroups || groupsCollide(e.group[m_i], e.mask[m_i], e.group[b], e.mask[b]));
            masks.inRange |= static_cast<std::uint32_t>(inS) << k;
            masks.hits |= static_cast<std::uint32_t>(inS && meet) << k;
        }
        masks.inRange &= inside;
        masks.hits &= inside;
        return masks;
    }

private:
    std::uint32_t m_i;
};

#endif

/// Appends the hit lanes' pairs with the probe's slot: every lane's key is written and only
/// the hits advance the count, so the outcome of the tests costs no branch.
void emitHits(std::uint32_t probeSlot, const std::uint32_t* slots, std::uint32_t hits, SweepOutput& out) {
    std::uint64_t* keys = out.keys.data() + out.count;
    std::size_t written = 0;
    for (std::uint32_t k = 0; k < cLanes; ++k) {
        keys[written] = pairKey(probeSlot, slots[k]);
        written += (hits >> k) & 1u;
    }
    out.count += written;
}

/// Appends the hit lanes' pairs that also pass the slot confirmation.
void emitConfirmedHits(std::uint32_t probeSlot, const std::uint32_t* slots, std::uint32_t hits,
                       const CellSweepRules& rules, SweepOutput& out) {
    for (std::uint32_t k = 0; k < cLanes; ++k) {
        if ((hits >> k & 1u) == 0) continue;
        const std::uint32_t b = slots[k];
        if (sapAcceptPair(rules.view, probeSlot, b, false) && sapOwnsPair(rules.ownership, rules.view, probeSlot, b)) {
            out.keys[out.count++] = pairKey(probeSlot, b);
        }
    }
}

} // namespace

void CellLanes::makeRoom(std::size_t padded) {
    if (minS.size() >= padded) return;
    for (auto* bounds : {&minS, &maxS, &minU, &maxU, &minV, &maxV}) bounds->resize(padded);
    for (auto* values : {&slot, &corner, &group, &mask}) values->resize(padded);
}

void CellLanes::load(const CellEntry* entries, std::uint32_t count) {
    makeRoom(std::size_t{count} + cLanes - 1);
    for (std::uint32_t i = 0; i < count; ++i) {
        const CellEntry& entry = entries[i];
        minS[i] = entry.minS;
        maxS[i] = entry.maxS;
        minU[i] = entry.minU;
        maxU[i] = entry.maxU;
        minV[i] = entry.minV;
        maxV[i] = entry.maxV;
        slot[i] = entry.slot;
        corner[i] = entry.corner;
        group[i] = entry.group;
        mask[i] = entry.mask;
    }
}

std::uint64_t sweepCell(const CellEntry* entries, std::uint32_t count, const CellSweepRules& rules, CellLanes& lanes,
                        SweepOutput& out) {
    lanes.load(entries, count);
    std::uint64_t candidates = 0;
    for (std::uint32_t i = 0; i < count; ++i) {
        const Probe probe(lanes, i);
        const std::uint32_t probeSlot = lanes.slot[i];
        // The entries are in sweep order, so the lanes in range form a prefix: the first
        // group that is not wholly in range is the last.
        for (std::uint32_t j = i + 1; j < count; j += cLanes) {
            const LaneMasks masks = probe.test(lanes, j, lanesInside(count - j), rules.filterGroups);
            candidates += laneCount(masks.inRange);
            out.reserveFor(cLanes);
            if (rules.confirmBySlot) {
                emitConfirmedHits(probeSlot, lanes.slot.data() + j, masks.hits, rules, out);
            } else {
                emitHits(probeSlot, lanes.slot.data() + j, masks.hits, out);
            }
            if (masks.inRange != cAllLanes) break;
        }
    }
    return candidates;
}

} // namespace bulletgpu
