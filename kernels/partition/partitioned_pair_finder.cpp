// SPDX-License-Identifier: Zlib
#include "kernels/partition/partitioned_pair_finder.h"

#include "kernels/common/aabb_ops.h"
#include "kernels/common/omp_team.h"
#include "kernels/common/stopwatch.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <exception>
#include <iterator>
#include <stdexcept>

namespace bulletgpu {
namespace {

/// Slot-map entry of a global slot that is not in a slab.
constexpr std::uint32_t cNoLocal = 0xffffffffu;
/// First-slab entry of a global slot that is in no slab.
constexpr std::uint8_t cNoSlab = 0xff;

/// Below this many keys the pair set is updated on one thread.
constexpr std::size_t cParallelApply = 1 << 16;
/// Most key ranges the update is cut into.
constexpr int cMaxApplyRanges = 64;

/// out = (set - lost) U found, for sorted sets with lost a subset of set and found disjoint from
/// it. Large sets are cut into key ranges at keys of the larger input, and each range is merged
/// on its own thread straight to its place in out: its size is known up front, since every key
/// of set, less the lost ones, and every found key land in out once.
void applySorted(const std::vector<std::uint64_t>& set, const std::vector<std::uint64_t>& found,
                 const std::vector<std::uint64_t>& lost, std::vector<std::uint64_t>& out, int threads) {
    out.resize(set.size() - lost.size() + found.size());
    const std::vector<std::uint64_t>& splitter = set.size() >= found.size() ? set : found;
    const int ranges = splitter.size() >= cParallelApply ? std::min(threadsForRegion(threads), cMaxApplyRanges) : 1;
    // Range r holds the keys in [splitter[size * r / ranges], splitter[size * (r + 1) / ranges]).
    std::array<std::size_t, cMaxApplyRanges + 1> setAt{}, foundAt{}, lostAt{}, outAt{};
    for (int r = 1; r < ranges; ++r) {
        const std::uint64_t key = splitter[splitter.size() * static_cast<std::size_t>(r) / ranges];
        const auto at = [key](const std::vector<std::uint64_t>& keys) {
            return static_cast<std::size_t>(std::lower_bound(keys.begin(), keys.end(), key) - keys.begin());
        };
        setAt[r] = at(set);
        foundAt[r] = at(found);
        lostAt[r] = at(lost);
    }
    setAt[ranges] = set.size();
    foundAt[ranges] = found.size();
    lostAt[ranges] = lost.size();
    for (int r = 0; r < ranges; ++r) {
        outAt[r + 1] =
            outAt[r] + (setAt[r + 1] - setAt[r]) - (lostAt[r + 1] - lostAt[r]) + (foundAt[r + 1] - foundAt[r]);
    }
#pragma omp parallel for num_threads(ranges) schedule(static, 1)
    for (int r = 0; r < ranges; ++r) {
        auto o = out.begin() + static_cast<std::ptrdiff_t>(outAt[r]);
        auto l = lost.begin() + static_cast<std::ptrdiff_t>(lostAt[r]);
        const auto lEnd = lost.begin() + static_cast<std::ptrdiff_t>(lostAt[r + 1]);
        auto f = found.begin() + static_cast<std::ptrdiff_t>(foundAt[r]);
        const auto fEnd = found.begin() + static_cast<std::ptrdiff_t>(foundAt[r + 1]);
        const auto sEnd = set.begin() + static_cast<std::ptrdiff_t>(setAt[r + 1]);
        for (auto key = set.begin() + static_cast<std::ptrdiff_t>(setAt[r]); key != sEnd; ++key) {
            while (l != lEnd && *l < *key) ++l;
            if (l != lEnd && *l == *key) continue;
            while (f != fEnd && *f < *key) *o++ = *f++;
            *o++ = *key;
        }
        o = std::copy(f, fEnd, o);
        assert(o == out.begin() + static_cast<std::ptrdiff_t>(outAt[r + 1]));
    }
}

/// Below this many found and lost keys in all slabs, the slabs' deltas are merged on one thread.
constexpr std::size_t cParallelMerge = 1 << 14;

/// Appends the keys of the sorted `run` in [lo, hi) (hi = 0: no upper end) to the sorted
/// `into`, merging, with `scratch` as room.
void mergeRange(const std::vector<std::uint64_t>& run, std::uint64_t lo, std::uint64_t hi,
                std::vector<std::uint64_t>& into, std::vector<std::uint64_t>& scratch) {
    const auto begin = std::lower_bound(run.begin(), run.end(), lo);
    const auto end = hi == 0 ? run.end() : std::lower_bound(begin, run.end(), hi);
    if (begin == end) return;
    if (into.empty()) {
        into.assign(begin, end);
        return;
    }
    scratch.clear();
    std::merge(into.begin(), into.end(), begin, end, std::back_inserter(scratch));
    into.swap(scratch);
}

} // namespace

/// One key range of an update's merge: the slabs' found and lost pairs in it, merged, and what
/// remains of them once the pairs in both (whose owner changed) cancel.
struct PartitionedPairFinder::MergeRange {
    std::vector<std::uint64_t> found, lost, scratch, netFound, netLost;
};

/// One slab: its finder, its store of the boxes that touch it, and the slot maps between them.
struct PartitionedPairFinder::Slab {
    std::unique_ptr<PairFinder> finder;
    BoxStore store;
    std::vector<std::uint32_t> localOf;     // per global slot: its slot in this slab, or cNoLocal
    std::vector<std::uint32_t> globalOf;    // per local slot: the global slot it holds (or held)
    std::vector<std::uint32_t> freeLocal;   // local slots ready for reuse
    std::vector<std::uint32_t> pendingFree; // local slots freed in this update: their lost pairs still map
    PairDeltas deltas;                      // in local keys
    std::vector<std::uint64_t> found, lost; // in global keys, sorted
    std::uint32_t migrated = 0;
    std::exception_ptr error;
};

PartitionedPairFinder::PartitionedPairFinder(std::vector<std::unique_ptr<PairFinder>> slabFinders, int hostThreads)
    : m_hostThreads(hostThreads > 0 ? hostThreads : static_cast<int>(slabFinders.size())),
      m_splitter(static_cast<int>(slabFinders.size())) {
    if (slabFinders.empty() || slabFinders.size() > static_cast<std::size_t>(cMaxSlabs)) {
        throw std::invalid_argument("bulletgpu: a partitioned finder takes 1 to " + std::to_string(cMaxSlabs) +
                                    " slabs, not " + std::to_string(slabFinders.size()));
    }
    m_sharedStore = slabFinders.front()->sharesStore();
    for (auto& finder : slabFinders) {
        if (finder->sharesStore() != m_sharedStore) {
            throw std::invalid_argument(
                "bulletgpu: a partitioned finder's slab finders must all share the store or none");
        }
        auto slab = std::make_unique<Slab>();
        slab->finder = std::move(finder);
        m_slabs.push_back(std::move(slab));
    }
    m_loads.assign(m_slabs.size(), 0);
}

PartitionedPairFinder::~PartitionedPairFinder() = default;

Backend PartitionedPairFinder::backend() const { return m_slabs.front()->finder->backend(); }

std::string PartitionedPairFinder::description() const {
    const std::size_t slabs = m_slabs.size();
    const int threads = std::min<int>(m_hostThreads, static_cast<int>(slabs));
    return m_slabs.front()->finder->description() + "; " + std::to_string(slabs) + " slab" + (slabs == 1 ? "" : "s") +
           " on " + std::to_string(threads) + " host thread" + (threads == 1 ? "" : "s");
}

void PartitionedPairFinder::setOwnership(const PairOwnership& window) {
    if (window.axis >= 0) throw std::logic_error("bulletgpu: a partitioned finder cannot be a slab of another");
}

void PartitionedPairFinder::reset() {
    for (auto& slab : m_slabs) {
        slab->finder->reset();
        slab->store.clear();
        slab->store.clearDirty();
        slab->localOf.clear();
        slab->globalOf.clear();
        slab->freeLocal.clear();
        slab->pendingFree.clear();
    }
    m_first.clear();
    m_last.clear();
    m_objects = 0;
    m_splitter.reset();
    m_scanAll = true;
    m_pairs.clear();
    m_editAdded.clear();
    m_editRemoved.clear();
    std::fill(m_loads.begin(), m_loads.end(), 0u);
    m_gate.open();
}

void PartitionedPairFinder::slabRange(const BoxStore& boxes, std::uint32_t slot, int& first, int& last) const {
    if (!boxes.isUsable(slot)) {
        first = 1;
        last = 0;
        return;
    }
    const SlabCuts& cuts = m_splitter.cuts();
    first = cuts.slabOf(boxes.minData(cuts.axis)[slot]);
    last = cuts.slabOf(boxes.maxData(cuts.axis)[slot]);
}

void PartitionedPairFinder::update(BoxStore& boxes, bool filterGroups, PairDeltas& deltas) {
    if (m_gate.skip(boxes, filterGroups, deltas, m_stats)) return;
    const auto start = Clock::now();
    if (!m_initialised) {
        for (auto& slab : m_slabs) slab->store = BoxStore(boxes.keepsExact());
        m_initialised = true;
    }
    const std::uint32_t slots = boxes.size();
    if (m_first.size() < slots) {
        m_first.resize(slots, cNoSlab);
        m_last.resize(slots, 0);
        for (auto& slab : m_slabs) slab->localOf.resize(slots, cNoLocal);
    }
    const bool rebalanced = m_splitter.update(boxes, m_loads);
    if (rebalanced) {
        m_scanAll = true;
        for (std::size_t k = 0; k < m_slabs.size(); ++k) {
            m_slabs[k]->finder->setOwnership(m_splitter.cuts().ownership(static_cast<int>(k)));
        }
    }
    if (m_sharedStore) {
        // The slab finders search the whole store on the device: nothing to hand out.
        m_scan.clear();
        m_slabs.front()->finder->uploadSharedStore(boxes);
    } else if (m_scanAll) {
        m_scan.resize(slots);
        for (std::uint32_t slot = 0; slot < slots; ++slot) m_scan[slot] = slot;
    } else {
        m_scan.assign(boxes.dirtySlots().begin(), boxes.dirtySlots().end());
    }
    // Each scanned slot's slabs now, computed once for all slabs.
    const auto scanned = static_cast<std::int64_t>(m_scan.size());
    m_nextFirst.resize(m_scan.size());
    m_nextLast.resize(m_scan.size());
    const auto rangeThreads = static_cast<int>(std::min<std::int64_t>(m_hostThreads, 1 + scanned / 4096));
#pragma omp parallel for num_threads(rangeThreads) schedule(static)
    for (std::int64_t i = 0; i < scanned; ++i) {
        int first, last;
        slabRange(boxes, m_scan[static_cast<std::size_t>(i)], first, last);
        m_nextFirst[static_cast<std::size_t>(i)] = first <= last ? static_cast<std::uint8_t>(first) : cNoSlab;
        m_nextLast[static_cast<std::size_t>(i)] = first <= last ? static_cast<std::uint8_t>(last) : 0;
    }
    const double distributeMs = millisecondsSince(start);

    const auto sweepStart = Clock::now();
    const int slabs = static_cast<int>(m_slabs.size());
    const int threads = std::min(m_hostThreads, slabs);
    const NestedParallelismScope nested(threads > 1 && m_hostThreads / slabs > 1);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int k = 0; k < slabs; ++k) {
        try {
            updateSlab(k, boxes, filterGroups);
        } catch (...) {
            m_slabs[static_cast<std::size_t>(k)]->error = std::current_exception();
        }
    }
    for (auto& slab : m_slabs) {
        if (slab->error) {
            std::exception_ptr error = slab->error;
            slab->error = nullptr;
            reset(); // the slabs may be half updated: start again from nothing
            std::rethrow_exception(error);
        }
    }
    for (std::size_t i = 0; i < m_scan.size(); ++i) {
        const std::uint32_t slot = m_scan[i];
        const bool was = m_first[slot] != cNoSlab, now = m_nextFirst[i] != cNoSlab;
        if (now && !was) ++m_objects;
        if (was && !now) --m_objects;
        m_first[slot] = m_nextFirst[i];
        m_last[slot] = m_nextLast[i];
    }
    m_scanAll = false;
    if (m_sharedStore) m_objects = boxes.liveCount();
    const double sweepMs = millisecondsSince(sweepStart);

    const auto mergeStart = Clock::now();
    merge(deltas);
    m_stats = PairFinderStats{};
    m_stats.rebalanced = rebalanced;
    m_stats.classifyMs = distributeMs;
    m_stats.sweepMs = sweepMs;
    m_stats.diffMs = millisecondsSince(mergeStart);
    fillStats(distributeMs);
    m_stats.threads = threads;

    m_gate.record(boxes, filterGroups);
    boxes.clearDirty();
#if defined(BULLETGPU_VALIDATE)
    assert(validate(boxes));
#endif
}

void PartitionedPairFinder::updateSlab(int index, BoxStore& boxes, bool filterGroups) {
    Slab& slab = *m_slabs[static_cast<std::size_t>(index)];
    slab.migrated = 0;
    if (m_sharedStore) {
        // Global slots already, each list sorted; the store's dirty list is cleared by update().
        slab.finder->update(boxes, filterGroups, slab.deltas);
        slab.found.swap(slab.deltas.found);
        slab.lost.swap(slab.deltas.lost);
        return;
    }
    const auto slab8 = static_cast<std::uint8_t>(index);
    for (std::size_t i = 0; i < m_scan.size(); ++i) {
        const std::uint32_t slot = m_scan[i];
        // cNoSlab is above every slab index, so a box in no slab is never "in".
        const bool isIn = m_nextFirst[i] <= slab8 && slab8 <= m_nextLast[i];
        const bool wasIn = m_first[slot] <= slab8 && slab8 <= m_last[slot];
        if (!isIn && !wasIn) continue;
        if (isIn) {
            std::uint32_t local = slab.localOf[slot];
            if (!wasIn) {
                if (slab.freeLocal.empty()) {
                    local = static_cast<std::uint32_t>(slab.globalOf.size());
                    slab.globalOf.push_back(slot);
                } else {
                    local = slab.freeLocal.back();
                    slab.freeLocal.pop_back();
                    slab.globalOf[local] = slot;
                }
                slab.localOf[slot] = local;
                ++slab.migrated;
            }
            slab.store.copyFrom(local, boxes, slot);
        } else if (wasIn) {
            const std::uint32_t local = slab.localOf[slot];
            slab.store.erase(local);
            slab.pendingFree.push_back(local);
            slab.localOf[slot] = cNoLocal;
            ++slab.migrated;
        }
    }

    slab.finder->update(slab.store, filterGroups, slab.deltas);
    const auto toGlobal = [&slab](std::vector<std::uint64_t>& keys) {
        for (std::uint64_t& key : keys) key = pairKey(slab.globalOf[pairLow(key)], slab.globalOf[pairHigh(key)]);
        std::sort(keys.begin(), keys.end());
    };
    slab.found.swap(slab.deltas.found);
    slab.lost.swap(slab.deltas.lost);
    toGlobal(slab.found);
    toGlobal(slab.lost);
    slab.freeLocal.insert(slab.freeLocal.end(), slab.pendingFree.begin(), slab.pendingFree.end());
    slab.pendingFree.clear();
}

void PartitionedPairFinder::mergeSlabDeltas(PairDeltas& deltas) {
    // Every pair is owned by one slab at a time, so the slabs' found lists are disjoint, and so
    // are their lost lists; a pair whose ownership moved is lost by one slab and found by another.
    // Each slab's lists are sorted: merge them run by run instead of sorting the lot, each key
    // range on its own thread, cut at keys of the longest list.
    const std::vector<std::uint64_t>* longest = &m_slabs.front()->found;
    std::size_t total = 0;
    for (const auto& slab : m_slabs) {
        for (const std::vector<std::uint64_t>* list : {&slab->found, &slab->lost}) {
            total += list->size();
            if (list->size() > longest->size()) longest = list;
        }
    }
    const int ranges = total >= cParallelMerge ? std::min(threadsForRegion(m_hostThreads), cMaxApplyRanges) : 1;
    if (m_mergeRanges.size() < static_cast<std::size_t>(ranges)) m_mergeRanges.resize(static_cast<std::size_t>(ranges));
    // Range r holds the keys in [cut[r], cut[r + 1]); the last has no upper end. Keys are never
    // 0 (the two slots of a pair differ), so a cut of 0 stands for "no end".
    std::array<std::uint64_t, cMaxApplyRanges + 1> cut{};
    for (int r = 1; r < ranges; ++r) cut[r] = (*longest)[longest->size() * static_cast<std::size_t>(r) / ranges];
    std::array<std::size_t, cMaxApplyRanges + 1> foundAt{}, lostAt{};
#pragma omp parallel num_threads(ranges)
    {
#pragma omp for schedule(static, 1)
        for (int r = 0; r < ranges; ++r) {
            MergeRange& range = m_mergeRanges[static_cast<std::size_t>(r)];
            range.found.clear();
            range.lost.clear();
            const std::uint64_t hi = r + 1 < ranges ? cut[r + 1] : 0;
            if (r == 0 || cut[r] != hi) {
                for (const auto& slab : m_slabs) {
                    mergeRange(slab->found, cut[r], hi, range.found, range.scratch);
                    mergeRange(slab->lost, cut[r], hi, range.lost, range.scratch);
                }
            }
            range.netFound.clear();
            range.netLost.clear();
            std::set_difference(range.found.begin(), range.found.end(), range.lost.begin(), range.lost.end(),
                                std::back_inserter(range.netFound));
            std::set_difference(range.lost.begin(), range.lost.end(), range.found.begin(), range.found.end(),
                                std::back_inserter(range.netLost));
        }
#pragma omp single
        {
            for (int r = 0; r < ranges; ++r) {
                foundAt[r + 1] = foundAt[r] + m_mergeRanges[static_cast<std::size_t>(r)].netFound.size();
                lostAt[r + 1] = lostAt[r] + m_mergeRanges[static_cast<std::size_t>(r)].netLost.size();
            }
            deltas.found.resize(foundAt[ranges]);
            deltas.lost.resize(lostAt[ranges]);
        }
#pragma omp for schedule(static, 1)
        for (int r = 0; r < ranges; ++r) {
            const MergeRange& range = m_mergeRanges[static_cast<std::size_t>(r)];
            std::copy(range.netFound.begin(), range.netFound.end(),
                      deltas.found.begin() + static_cast<std::ptrdiff_t>(foundAt[r]));
            std::copy(range.netLost.begin(), range.netLost.end(),
                      deltas.lost.begin() + static_cast<std::ptrdiff_t>(lostAt[r]));
        }
    }
}

void PartitionedPairFinder::merge(PairDeltas& deltas) {
    mergeSlabDeltas(deltas);

    if (m_editAdded.empty() && m_editRemoved.empty()) {
        applySorted(m_pairs, deltas.found, deltas.lost, m_scratch, m_hostThreads);
        m_pairs.swap(m_scratch);
        return;
    }
    // Edits made the caller's set differ from the slabs' union: rebuild the union, apply the
    // slabs' deltas to it and report the difference with what the caller holds.
    applySorted(m_pairs, m_editRemoved, m_editAdded, m_slabPairs, m_hostThreads);
    applySorted(m_slabPairs, deltas.found, deltas.lost, m_scratch, m_hostThreads);
    deltas.found.clear();
    deltas.lost.clear();
    std::set_difference(m_scratch.begin(), m_scratch.end(), m_pairs.begin(), m_pairs.end(),
                        std::back_inserter(deltas.found));
    std::set_difference(m_pairs.begin(), m_pairs.end(), m_scratch.begin(), m_scratch.end(),
                        std::back_inserter(deltas.lost));
    m_pairs.swap(m_scratch);
    m_editAdded.clear();
    m_editRemoved.clear();
}

void PartitionedPairFinder::recordEdit(std::vector<std::uint64_t>& undone, std::vector<std::uint64_t>& recorded) {
    // m_found holds the pairs the edit changes. Those an earlier edit made differ from the
    // slabs' union now agree with it again; the others now differ the other way.
    m_lost.clear();
    std::set_difference(m_found.begin(), m_found.end(), undone.begin(), undone.end(), std::back_inserter(m_lost));
    m_scratch.clear();
    std::set_difference(undone.begin(), undone.end(), m_found.begin(), m_found.end(), std::back_inserter(m_scratch));
    undone.swap(m_scratch);
    m_scratch.clear();
    std::set_union(recorded.begin(), recorded.end(), m_lost.begin(), m_lost.end(), std::back_inserter(m_scratch));
    recorded.swap(m_scratch);
}

void PartitionedPairFinder::applyEdits(const std::vector<std::uint64_t>& added,
                                       const std::vector<std::uint64_t>& removed) {
    if (added.empty() && removed.empty()) return;
    m_gate.open(); // the next update runs, so refused pairs are offered again
    m_found.clear();
    std::set_intersection(removed.begin(), removed.end(), m_pairs.begin(), m_pairs.end(), std::back_inserter(m_found));
    recordEdit(m_editAdded, m_editRemoved);
    applySorted(m_pairs, {}, m_found, m_scratch, m_hostThreads);
    m_pairs.swap(m_scratch);

    m_found.clear();
    std::set_difference(added.begin(), added.end(), m_pairs.begin(), m_pairs.end(), std::back_inserter(m_found));
    recordEdit(m_editRemoved, m_editAdded);
    applySorted(m_pairs, m_found, {}, m_scratch, m_hostThreads);
    m_pairs.swap(m_scratch);
}

void PartitionedPairFinder::fillStats(double distributeMs) {
    m_stats.partitions = static_cast<int>(m_slabs.size());
    m_stats.splitAxis = m_slabs.size() > 1 ? m_splitter.cuts().axis : -1;
    std::uint64_t total = 0;
    for (std::size_t k = 0; k < m_slabs.size(); ++k) {
        const Slab& slab = *m_slabs[k];
        const PairFinderStats& s = slab.finder->stats();
        m_loads[k] = m_sharedStore ? s.objects : slab.store.liveCount();
        total += m_loads[k];
        m_stats.maxLoad = std::max(m_stats.maxLoad, m_loads[k]);
        m_stats.migrated += slab.migrated;
        if (k < m_stats.partitionLoads.size()) m_stats.partitionLoads[k] = m_loads[k];
        m_stats.hugeObjects += s.hugeObjects;
        m_stats.cells += s.cells;
        m_stats.entries += s.entries;
        m_stats.candidates += s.candidates;
        m_stats.movingObjects += s.movingObjects;
        m_stats.transferMs += s.transferMs;
        m_stats.sortMs += s.sortMs;
        m_stats.sweepAxis = s.sweepAxis;
    }
    m_stats.objects = m_objects;
    m_stats.straddlers = static_cast<std::uint32_t>(total > m_objects ? total - m_objects : 0);
    const double mean = static_cast<double>(total) / static_cast<double>(m_slabs.size());
    m_stats.imbalance = mean > 0 ? m_stats.maxLoad / mean : 1.0;
    m_stats.pairs = m_pairs.size();
    m_stats.classifyMs = distributeMs;
}

bool PartitionedPairFinder::validate(const BoxStore& boxes) const {
    for (std::size_t i = 1; i < m_pairs.size(); ++i) {
        if (m_pairs[i - 1] >= m_pairs[i]) return false;
    }
    if (m_sharedStore) return true; // no slab stores
    for (std::uint32_t slot = 0; slot < boxes.size(); ++slot) {
        int first, last;
        slabRange(boxes, slot, first, last);
        for (int k = 0; k < static_cast<int>(m_slabs.size()); ++k) {
            const Slab& slab = *m_slabs[static_cast<std::size_t>(k)];
            const bool in = first <= k && k <= last;
            const std::uint32_t local = slot < slab.localOf.size() ? slab.localOf[slot] : cNoLocal;
            if (in != (local != cNoLocal)) return false;
            if (in && (!slab.store.isLive(local) || slab.globalOf[local] != slot)) return false;
        }
    }
    return true;
}

std::unique_ptr<PairFinder> createPartitionedCpuPairFinder(int slabs, int threads) {
    const int hostThreads = threads > 0 ? threads : omp_get_max_threads();
    std::vector<std::unique_ptr<PairFinder>> finders;
    for (int k = 0; k < std::max(1, slabs); ++k) {
        finders.push_back(createCpuPairFinder(std::max(1, hostThreads / std::max(1, slabs))));
    }
    return std::make_unique<PartitionedPairFinder>(std::move(finders), hostThreads);
}

std::unique_ptr<PairFinder> createPartitionedCudaPairFinder(int slabs, const std::vector<int>& devices) {
    if (devices.empty()) throw std::invalid_argument("bulletgpu: a partitioned CUDA finder needs at least one device");
    const int count = std::max(1, slabs);
    const bool oneDevice = std::all_of(devices.begin(), devices.end(), [&](int d) { return d == devices.front(); });
    // One host thread drives each slab's stream; every thread may work on the merge.
    const int hostThreads = std::max(count, omp_get_max_threads());
    if (oneDevice) {
        return std::make_unique<PartitionedPairFinder>(createCudaSlabFinders(devices.front(), count), hostThreads);
    }
    std::vector<std::unique_ptr<PairFinder>> finders;
    for (int k = 0; k < count; ++k) {
        finders.push_back(createCudaPairFinder(devices[static_cast<std::size_t>(k) % devices.size()]));
    }
    return std::make_unique<PartitionedPairFinder>(std::move(finders), hostThreads);
}

} // namespace bulletgpu
