// SPDX-License-Identifier: Zlib
#include "kernels/sap/margin_pair_finder.h"

#include "kernels/common/aabb_ops.h"
#include "kernels/common/omp_team.h"
#include "kernels/common/stopwatch.h"
#include "kernels/common/thread_buffers.h"
#include "kernels/sap/incremental_sweep.h"
#include "kernels/sap/sap_ops.h"

#include <omp.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace bulletgpu {
namespace {

/// Below this many items a pass runs on one thread.
constexpr std::size_t cParallelThreshold = 8192;

/// How far ahead the re-tests prefetch the higher slot's box (read in random order).
constexpr std::size_t cPrefetchDistance = 16;

constexpr float cNaN = std::numeric_limits<float>::quiet_NaN();

/// A box grown on every axis by the margin for its last move (none for unusable boxes).
FloatBox grownBox(const FloatBox& real, float lastMove) {
    float extent = 0;
    for (int axis = 0; axis < 3; ++axis) extent = std::max(extent, real.hi[axis] - real.lo[axis]);
    float margin =
        std::min(std::max(MarginPairFinder::cPredictedMoves * lastMove, MarginPairFinder::cMinMarginShare * extent),
                 MarginPairFinder::cMaxMarginShare * extent);
    if (!(lastMove > 0 && margin > 0 && margin < HUGE_VALF)) margin = 0; // not moving, unusable or infinite
    FloatBox grown = real;
    for (int axis = 0; axis < 3; ++axis) {
        grown.lo[axis] -= margin;
        grown.hi[axis] += margin;
    }
    return grown;
}

/// Calls body(k, thread) for every k in [0, count), each thread of the team taking one contiguous
/// share in order, so that per-thread lists joined in thread order follow k.
template <typename Body>
void forEachInShares(std::size_t count, int threads, Body&& body) {
#pragma omp parallel num_threads(threads)
    {
        const auto t = static_cast<std::size_t>(omp_get_thread_num());
        const auto team = static_cast<std::size_t>(omp_get_num_threads());
        for (std::size_t k = count * t / team; k < count * (t + 1) / team; ++k) body(k, t);
    }
}

} // namespace

MarginPairFinder::MarginPairFinder(std::unique_ptr<PairFinder> inner, int threads, MarginBoxes policy)
    : m_inner(std::move(inner)), m_threads(threads > 0 ? threads : omp_get_max_threads()), m_chooser(policy) {
    if (m_inner == nullptr || m_inner->hostPairs() == nullptr) {
        throw std::invalid_argument("MarginPairFinder: the inner finder must keep its pairs on the host");
    }
    m_threadEscaped.resize(static_cast<std::size_t>(m_threads));
    m_threadFound.resize(static_cast<std::size_t>(m_threads));
    m_threadLost.resize(static_cast<std::size_t>(m_threads));
}

std::string MarginPairFinder::description() const {
    return m_inner->description() + (m_chooser.useMargins() ? ", margin boxes" : "");
}

void MarginPairFinder::reset() {
    m_inner->reset();
    m_keys.clear();
    m_overlaps.clear();
    m_pairCount = 0;
    m_refreshAll = true;
    m_gate.open();
}

void MarginPairFinder::setOwnership(const PairOwnership& window) {
    if (window == m_ownership) return;
    m_ownership = window;
    // Without margins the inner finder applies the window; with them the re-tests do, to every
    // candidate in the next update.
    if (!m_chooser.useMargins()) m_inner->setOwnership(window);
    m_refreshAll = true;
    m_gate.open();
}

void MarginPairFinder::applyEdits(const std::vector<std::uint64_t>& added, const std::vector<std::uint64_t>& removed) {
    if (added.empty() && removed.empty()) return;
    // The inner finder takes the same edits, so the candidates stay its pair set; the next update
    // re-finds removed pairs (offering refused ones again) and drops added ones the margins miss.
    m_inner->applyEdits(added, removed);
    m_gate.open();
    if (!m_chooser.useMargins()) return;
    m_edited.clear();
    m_editedOverlaps.clear();
    std::size_t a = 0, r = 0;
    const auto take = [&](std::uint64_t key, bool overlaps) {
        m_edited.push_back(key);
        m_editedOverlaps.push_back(overlaps ? 1 : 0);
    };
    for (std::size_t i = 0; i < m_keys.size() || a < added.size();) {
        if (a < added.size() && (i == m_keys.size() || added[a] < m_keys[i])) {
            take(added[a++], true);
            ++m_pairCount;
            continue;
        }
        const std::uint64_t key = m_keys[i];
        const bool was = m_overlaps[i++] != 0;
        while (r < removed.size() && removed[r] < key) ++r;
        if (a < added.size() && added[a] == key) {
            ++a;
            take(key, true);
            m_pairCount += was ? 0 : 1;
        } else if (r < removed.size() && removed[r] == key) {
            m_pairCount -= was ? 1 : 0;
        } else {
            take(key, was);
        }
    }
    m_keys.swap(m_edited);
    m_overlaps.swap(m_editedOverlaps);
}

void MarginPairFinder::update(BoxStore& boxes, bool filterGroups, PairDeltas& deltas) {
    if (m_gate.skip(boxes, filterGroups, deltas, m_stats)) return;
    const auto start = Clock::now();
    if (m_chooser.useMargins()) {
        updateWithMargins(boxes, filterGroups, deltas);
    } else {
        m_inner->setLostPairSink(m_lostSink);
        m_inner->update(boxes, filterGroups, deltas);
        m_stats = m_inner->stats();
    }
    m_gate.record(boxes, filterGroups);
    boxes.clearDirty();
    if (boxes.liveCount() >= MarginChooser::cSmallestScene && m_chooser.record(millisecondsSince(start))) {
        if (m_chooser.useMargins()) {
            enterMargins();
        } else {
            leaveMargins();
        }
    }
#if defined(BULLETGPU_VALIDATE)
    assert(validate(boxes));
#endif
}

void MarginPairFinder::setPolicy(MarginBoxes policy) {
    const bool before = m_chooser.useMargins();
    m_chooser = MarginChooser(policy);
    if (m_chooser.useMargins() == before) return;
    if (m_chooser.useMargins()) {
        enterMargins();
    } else {
        leaveMargins();
    }
}

void MarginPairFinder::enterMargins() {
    m_keys = *m_inner->hostPairs();
    m_overlaps.assign(m_keys.size(), 1);
    m_pairCount = m_keys.size();
    // The inner finder sweeps the margin boxes from now on, starting from the current pairs; the
    // boxes' last moves are unknown, so their first margin boxes are tight.
    m_inner->setOwnership(PairOwnership{});
    m_inner->reset();
    m_inner->applyEdits(m_keys, {});
    std::fill(m_real.begin(), m_real.end(), FloatBox{{cNaN, cNaN, cNaN}, {cNaN, cNaN, cNaN}});
    m_refreshAll = true;
    m_gate.open();
}

void MarginPairFinder::leaveMargins() {
    overlappingCandidates(m_edited);
    m_inner->setOwnership(m_ownership);
    m_inner->reset();
    m_inner->applyEdits(m_edited, {});
    m_keys.clear();
    m_overlaps.clear();
    m_gate.open();
}

void MarginPairFinder::updateWithMargins(BoxStore& boxes, bool filterGroups, PairDeltas& deltas) {
    auto start = Clock::now();
    refreshMarginBoxes(boxes);
    double marginMs = millisecondsSince(start);
    m_inner->setLostPairSink(nullptr);
    m_inner->update(m_margins, filterGroups, m_innerDeltas);
    start = Clock::now();
    const std::uint64_t retests = retestCandidates(boxes, deltas);
    if (m_refreshAll) {
        std::fill(m_changed.begin(), m_changed.end(), 0);
    } else {
        for (std::uint32_t slot : boxes.dirtySlots()) m_changed[slot] = 0;
    }
    m_refreshAll = false;
    marginMs += millisecondsSince(start);

    std::uint32_t escapes = 0;
    for (const auto& escaped : m_threadEscaped) escapes += static_cast<std::uint32_t>(escaped.size());
    const PairFinderStats& inner = m_inner->stats();
    m_stats = inner;
    if (inner.skipped) {
        // No box left its margin box: the inner finder's phases did not run in this update.
        m_stats.classifyMs = m_stats.sortMs = m_stats.sweepMs = m_stats.diffMs = 0;
        m_stats.movingObjects = 0;
    }
    m_stats.skipped = false;
    m_stats.pairs = m_pairCount;
    m_stats.margins = true;
    m_stats.marginEscapes = escapes;
    m_stats.marginCandidates = m_keys.size();
    m_stats.retests = retests;
    m_stats.marginMs = marginMs;
}

void MarginPairFinder::refreshMarginBoxes(const BoxStore& boxes) {
    const std::uint32_t slots = std::max(boxes.size(), m_margins.size());
    if (m_real.size() < slots) {
        m_real.resize(slots, FloatBox{{cNaN, cNaN, cNaN}, {cNaN, cNaN, cNaN}});
        m_changed.resize(slots, 0);
        m_lastMove.resize(slots, 0.0f);
    }
    const std::vector<std::uint32_t>& dirty = boxes.dirtySlots();
    const std::size_t count = m_refreshAll ? slots : dirty.size();
    const int threads = threadsForRegion(count >= cParallelThreshold ? m_threads : 1);
    const float* minData[3] = {boxes.minData(0), boxes.minData(1), boxes.minData(2)};
    const float* maxData[3] = {boxes.maxData(0), boxes.maxData(1), boxes.maxData(2)};
    const float* marginMin[3] = {m_margins.minData(0), m_margins.minData(1), m_margins.minData(2)};
    const float* marginMax[3] = {m_margins.maxData(0), m_margins.maxData(1), m_margins.maxData(2)};
    for (auto& escaped : m_threadEscaped) escaped.clear();
    forEachInShares(count, threads, [&](std::size_t k, std::size_t t) {
        const std::uint32_t slot = m_refreshAll ? static_cast<std::uint32_t>(k) : dirty[k];
        m_changed[slot] = 1;
        FloatBox& real = m_real[slot];
        const FloatBox previous = real;
        const bool live = boxes.isLive(slot);
        const bool usable = live && boxes.isUsable(slot);
        float move = 0;
        for (int axis = 0; axis < 3; ++axis) {
            real.lo[axis] = usable ? minData[axis][slot] : cNaN;
            real.hi[axis] = usable ? maxData[axis][slot] : cNaN;
            move = std::max(
                {move, std::fabs(real.lo[axis] - previous.lo[axis]), std::fabs(real.hi[axis] - previous.hi[axis])});
        }
        m_lastMove[slot] = usable && !std::isnan(previous.lo[0]) ? move : 0.0f;
        std::vector<Escape>& escaped = m_threadEscaped[t];
        if (live != m_margins.isLive(slot)) {
            escaped.push_back(Escape{slot, real});
            return;
        }
        if (!live || (!usable && !m_margins.isUsable(slot))) return; // no pairs either way
        bool inside = boxes.groupData()[slot] == m_margins.groupData()[slot] &&
                      boxes.maskData()[slot] == m_margins.maskData()[slot];
        for (int axis = 0; axis < 3 && inside; ++axis) {
            inside = marginMin[axis][slot] <= real.lo[axis] && real.hi[axis] <= marginMax[axis][slot];
        }
        if (!inside) escaped.push_back(Escape{slot, grownBox(real, m_lastMove[slot])});
    });
    std::size_t escapes = 0;
    for (const auto& escaped : m_threadEscaped) escapes += escaped.size();
    if (!m_refreshAll && escapes > boxes.liveCount() / IncrementalSweep::cMovingShareDivisor) {
        // Too many for an incremental sweep: every box gets a new margin box now, so that the
        // next wave of escapes comes all at once, a few frames later.
        for (auto& escaped : m_threadEscaped) escaped.clear();
        forEachInShares(slots, threadsForRegion(m_threads), [&](std::size_t k, std::size_t t) {
            const auto slot = static_cast<std::uint32_t>(k);
            if (boxes.isLive(slot) || m_margins.isLive(slot)) {
                m_threadEscaped[t].push_back(Escape{slot, grownBox(m_real[slot], m_lastMove[slot])});
            }
        });
    }
    // The margin store's dirty list records the escapes in the order of the changes.
    for (const auto& escaped : m_threadEscaped) {
        for (const Escape& escape : escaped) {
            const std::uint32_t slot = escape.slot;
            if (!boxes.isLive(slot)) {
                m_margins.erase(slot);
                continue;
            }
            const std::uint32_t group = boxes.groupData()[slot];
            const std::uint32_t mask = boxes.maskData()[slot];
            if (!m_margins.isLive(slot)) {
                const double lo[3] = {escape.margin.lo[0], escape.margin.lo[1], escape.margin.lo[2]};
                const double hi[3] = {escape.margin.hi[0], escape.margin.hi[1], escape.margin.hi[2]};
                m_margins.insert(slot, lo, hi, group, mask);
            } else {
                m_margins.setFilter(slot, group, mask);
                m_margins.updateFloat(slot, escape.margin.lo, escape.margin.hi);
            }
        }
    }
    shareCapacity(
        m_threadEscaped, m_threadEscaped.size(), [](auto& v) -> auto& { return v; });
}

void MarginPairFinder::planChunks(int threads) {
    const std::vector<std::uint64_t>& found = m_innerDeltas.found;
    const std::vector<std::uint64_t>& lost = m_innerDeltas.lost;
    const std::vector<std::uint64_t>& pivots = m_keys.empty() ? found : m_keys;
    m_chunks.resize(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t) {
        Chunk& chunk = m_chunks[static_cast<std::size_t>(t)];
        const std::size_t at = pivots.size() * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads);
        if (t == 0 || at == pivots.size()) {
            chunk.keys = t == 0 ? 0 : m_keys.size();
            chunk.found = t == 0 ? 0 : found.size();
            chunk.lost = t == 0 ? 0 : lost.size();
        } else {
            const std::uint64_t pivot = pivots[at];
            chunk.keys =
                static_cast<std::size_t>(std::lower_bound(m_keys.begin(), m_keys.end(), pivot) - m_keys.begin());
            chunk.found = static_cast<std::size_t>(std::lower_bound(found.begin(), found.end(), pivot) - found.begin());
            chunk.lost = static_cast<std::size_t>(std::lower_bound(lost.begin(), lost.end(), pivot) - lost.begin());
        }
        chunk.out = chunk.keys - chunk.lost + chunk.found;
    }
    for (int t = 0; t < threads; ++t) {
        Chunk& chunk = m_chunks[static_cast<std::size_t>(t)];
        const bool last = t + 1 == threads;
        chunk.keysEnd = last ? m_keys.size() : m_chunks[static_cast<std::size_t>(t) + 1].keys;
        chunk.foundEnd = last ? found.size() : m_chunks[static_cast<std::size_t>(t) + 1].found;
        chunk.lostEnd = last ? lost.size() : m_chunks[static_cast<std::size_t>(t) + 1].lost;
        chunk.outEnd = chunk.keysEnd - chunk.lostEnd + chunk.foundEnd;
    }
}

bool MarginPairFinder::overlapsNow(const BoxStore& boxes, std::uint32_t a, std::uint32_t b) const {
    const FloatBox& x = m_real[a];
    const FloatBox& y = m_real[b];
    for (int axis = 0; axis < 3; ++axis) {
        if (!intervalsOverlap(x.lo[axis], x.hi[axis], y.lo[axis], y.hi[axis])) return false;
    }
    if (m_ownership.axis >= 0 && !pairOwned(m_ownership, x.lo[m_ownership.axis], y.lo[m_ownership.axis])) {
        return false;
    }
    return !boxes.keepsExact() || boxes.overlapExact(a, b);
}

std::uint64_t MarginPairFinder::retestChunk(const Chunk& chunk, const BoxStore& boxes, std::uint64_t* outKeys,
                                            std::uint8_t* outOverlaps, std::vector<std::uint64_t>& found,
                                            std::vector<std::uint64_t>& lost) const {
    const std::vector<std::uint64_t>& innerFound = m_innerDeltas.found;
    const std::vector<std::uint64_t>& innerLost = m_innerDeltas.lost;
    std::size_t i = chunk.keys, f = chunk.found, l = chunk.lost, out = chunk.out;
    std::uint64_t tests = 0;
    while (i < chunk.keysEnd || f < chunk.foundEnd) {
        if (f < chunk.foundEnd && (i == chunk.keysEnd || innerFound[f] < m_keys[i])) {
            // A new candidate: its margin boxes started to overlap.
            const std::uint64_t key = innerFound[f++];
            const bool now = overlapsNow(boxes, pairLow(key), pairHigh(key));
            ++tests;
            if (now) found.push_back(key);
            assert(out < chunk.outEnd && "the inner finder's deltas must match the candidates");
            outKeys[out] = key;
            outOverlaps[out++] = now ? 1 : 0;
            continue;
        }
        if (i + cPrefetchDistance < chunk.keysEnd) {
            const std::uint32_t ahead = pairHigh(m_keys[i + cPrefetchDistance]);
            __builtin_prefetch(&m_real[ahead]);
            __builtin_prefetch(&m_changed[ahead]);
        }
        const std::uint64_t key = m_keys[i];
        const bool was = m_overlaps[i++] != 0;
        if (l < chunk.lostEnd && innerLost[l] == key) {
            // The margin boxes parted, so the real ones did.
            ++l;
            if (was) lost.push_back(key);
            continue;
        }
        bool now = was;
        if ((m_changed[pairLow(key)] | m_changed[pairHigh(key)]) != 0) {
            now = overlapsNow(boxes, pairLow(key), pairHigh(key));
            ++tests;
            if (now != was) (now ? found : lost).push_back(key);
        }
        assert(out < chunk.outEnd && "the inner finder's deltas must match the candidates");
        outKeys[out] = key;
        outOverlaps[out++] = now ? 1 : 0;
    }
    assert(out == chunk.outEnd);
    return tests;
}

std::uint64_t MarginPairFinder::retestCandidates(const BoxStore& boxes, PairDeltas& deltas) {
    // The candidates are the inner finder's pair set, so its lost pairs are candidates and its
    // found pairs are not: the merged list has a known size, and each chunk a known place in it.
    const std::size_t merged = m_keys.size() - m_innerDeltas.lost.size() + m_innerDeltas.found.size();
    const int threads =
        threadsForRegion(m_keys.size() + m_innerDeltas.found.size() >= cParallelThreshold ? m_threads : 1);
    planChunks(threads);
    const bool inPlace = m_innerDeltas.found.empty() && m_innerDeltas.lost.empty();
    if (!inPlace) {
        m_nextKeys.resize(merged);
        m_nextOverlaps.resize(merged);
    }
    std::uint64_t* outKeys = inPlace ? m_keys.data() : m_nextKeys.data();
    std::uint8_t* outOverlaps = inPlace ? m_overlaps.data() : m_nextOverlaps.data();
    std::uint64_t tests = 0;
#pragma omp parallel for schedule(static, 1) num_threads(threads) reduction(+ : tests)
    for (int t = 0; t < threads; ++t) {
        auto& found = m_threadFound[static_cast<std::size_t>(t)];
        auto& lost = m_threadLost[static_cast<std::size_t>(t)];
        found.clear();
        lost.clear();
        tests += retestChunk(m_chunks[static_cast<std::size_t>(t)], boxes, outKeys, outOverlaps, found, lost);
    }
    if (!inPlace) {
        m_keys.swap(m_nextKeys);
        m_overlaps.swap(m_nextOverlaps);
    }
    // Chunks follow key order, so their deltas joined in order are sorted.
    for (int t = 0; t < threads; ++t) {
        const auto& found = m_threadFound[static_cast<std::size_t>(t)];
        const auto& lost = m_threadLost[static_cast<std::size_t>(t)];
        deltas.found.insert(deltas.found.end(), found.begin(), found.end());
        deltas.lost.insert(deltas.lost.end(), lost.begin(), lost.end());
    }
    m_pairCount += deltas.found.size();
    m_pairCount -= deltas.lost.size();
    const std::size_t parts = static_cast<std::size_t>(threads);
    shareGatheringCapacity(
        m_threadFound, parts, [](auto& v) -> auto& { return v; }, deltas.found.size());
    shareGatheringCapacity(
        m_threadLost, parts, [](auto& v) -> auto& { return v; }, deltas.lost.size());
    return tests;
}

void MarginPairFinder::overlappingCandidates(std::vector<std::uint64_t>& out) const {
    out.clear();
    for (std::size_t i = 0; i < m_keys.size(); ++i) {
        if (m_overlaps[i] != 0) out.push_back(m_keys[i]);
    }
}

std::vector<std::uint64_t> MarginPairFinder::pairs() const {
    if (!m_chooser.useMargins()) return *m_inner->hostPairs();
    std::vector<std::uint64_t> pairs;
    overlappingCandidates(pairs);
    return pairs;
}

bool MarginPairFinder::validate(const BoxStore& boxes) const {
    if (!m_chooser.useMargins() || m_refreshAll) return true; // nothing to check until the next update
    if (m_overlaps.size() != m_keys.size() || m_keys.size() != m_inner->pairCount()) return false;
    std::uint64_t overlapping = 0;
    for (std::size_t i = 0; i < m_keys.size(); ++i) {
        if (i > 0 && m_keys[i - 1] >= m_keys[i]) return false;
        const bool now = overlapsNow(boxes, pairLow(m_keys[i]), pairHigh(m_keys[i]));
        if (now != (m_overlaps[i] != 0)) return false;
        overlapping += now ? 1 : 0;
    }
    if (overlapping != m_pairCount) return false;
    for (std::uint32_t slot = 0; slot < boxes.size(); ++slot) {
        if (!boxes.isUsable(slot)) continue;
        if (!m_margins.isLive(slot)) return false;
        for (int axis = 0; axis < 3; ++axis) {
            if (!(m_margins.minData(axis)[slot] <= boxes.minData(axis)[slot] &&
                  boxes.maxData(axis)[slot] <= m_margins.maxData(axis)[slot])) {
                return false;
            }
        }
    }
    return true;
}

std::unique_ptr<PairFinder> createMarginPairFinder(std::unique_ptr<PairFinder> inner, int threads, MarginBoxes policy) {
    return std::make_unique<MarginPairFinder>(std::move(inner), threads, policy);
}

} // namespace bulletgpu
