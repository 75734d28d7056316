// SPDX-License-Identifier: Zlib
// The CUDA backend of PairFinder: the CPU finder's algorithm step for step on one stream,
// with the boxes and the pair set resident on the device.
#include "kernels/sap/pair_finder.h"
#include "kernels/common/stopwatch.h"

#include "kernels/common/cuda_check.h"
#include "kernels/common/cuda_device.h"
#include "kernels/common/launch.h"
#include "kernels/common/radix_sort_cpu.h"
#include "kernels/common/cuda_resources.cuh"
#include "kernels/sap/detail/sap_kernels.cuh"
#include "kernels/sap/sap_grid.h"
#include "kernels/sap/slot_staging.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace bulletgpu {
namespace {

using detail::DeviceBuffer;
using detail::DeviceScope;
using detail::PinnedBuffer;

/// Counters written on the device by kernels and CUB, read back in one copy.
struct SapCounters {
    unsigned long long normals;    ///< Bucketed boxes.
    unsigned long long huge;       ///< Huge boxes.
    unsigned long long entries;    ///< Box-in-cell entries.
    unsigned long long pairs;      ///< Pair keys the sweeps appended (also past the buffer's capacity).
    unsigned long long candidates; ///< Pairs the cell sweeps tested on all three axes.
    unsigned long long found;      ///< Pairs new since the last update.
    unsigned long long lost;       ///< Pairs gone since the last update.
    unsigned long long kept;       ///< Pairs an edit did not remove.
    unsigned long long fresh;      ///< Added pairs the set did not hold yet.
};

/// Points recorded on the stream during an update, for the phase timings.
enum Mark { MarkStart, MarkUploaded, MarkClassified, MarkSorted, MarkSwept, MarkDiffed, MarkCopied, MarkCount };

/// The device copy of the box store's arrays.
struct DeviceBoxArrays {
    DeviceBuffer<float> min[3], max[3];
    DeviceBuffer<double> exactMin[3], exactMax[3];
    DeviceBuffer<std::uint32_t> group, mask;
    DeviceBuffer<std::uint8_t> state;

    /// Makes room for `slots` slots (and their exact bounds when `exact`); returns whether any
    /// array was replaced, which discards its contents.
    bool reserve(std::uint64_t slots, bool exact, cudaStream_t stream) {
        bool replaced = false;
        for (int axis = 0; axis < 3; ++axis) {
            replaced |= min[axis].reserve(slots, stream);
            replaced |= max[axis].reserve(slots, stream);
            if (exact) {
                replaced |= exactMin[axis].reserve(slots, stream);
                replaced |= exactMax[axis].reserve(slots, stream);
            }
        }
        replaced |= group.reserve(slots, stream);
        replaced |= mask.reserve(slots, stream);
        replaced |= state.reserve(slots, stream);
        return replaced;
    }

    /// Pointers for the scatter kernel.
    detail::SapDeviceBoxes writable(bool exact) const {
        detail::SapDeviceBoxes boxes{};
        for (int axis = 0; axis < 3; ++axis) {
            boxes.min[axis] = min[axis].data();
            boxes.max[axis] = max[axis].data();
            boxes.exactMin[axis] = exact ? exactMin[axis].data() : nullptr;
            boxes.exactMax[axis] = exact ? exactMax[axis].data() : nullptr;
        }
        boxes.group = group.data();
        boxes.mask = mask.data();
        boxes.state = state.data();
        return boxes;
    }

    /// Read-only view for the kernels (exact bounds only when `exact`).
    BoxArraysView view(bool exact) const {
        const detail::SapDeviceBoxes boxes = writable(exact);
        BoxArraysView view{};
        for (int axis = 0; axis < 3; ++axis) {
            view.min[axis] = boxes.min[axis];
            view.max[axis] = boxes.max[axis];
            view.exactMin[axis] = boxes.exactMin[axis];
            view.exactMax[axis] = boxes.exactMax[axis];
        }
        view.group = boxes.group;
        view.mask = boxes.mask;
        return view;
    }
};

/// The device copy of a box store: the boxes stay resident and each upload sends only the slots
/// that changed. A finder owns one, or the slab finders of one device share one
/// (createCudaSlabFinders): it is uploaded once per update on its own stream, and the slabs'
/// streams wait for that upload.
class DeviceBoxMirror {
public:
    /// A mirror on `device`, with a stream and an event of its own for shared uploads.
    explicit DeviceBoxMirror(int device) : m_uploaded(device), m_stream(device) {}

    /// Sends the dirty slots, and every slot the device does not hold yet, on `stream`.
    void upload(const BoxStore& boxes, cudaStream_t stream);
    /// Uploads on the mirror's own stream and marks the point the slabs' streams wait for.
    void uploadShared(const BoxStore& boxes) {
        upload(boxes, m_stream.get());
        BULLETGPU_CUDA_TRY(cudaEventRecord(m_uploaded[0], m_stream.get()));
    }
    /// Makes `stream` wait for the last shared upload.
    void waitForSharedUpload(cudaStream_t stream) const {
        BULLETGPU_CUDA_TRY(cudaStreamWaitEvent(stream, m_uploaded[0], 0));
    }
    /// Read-only view of the resident boxes.
    BoxArraysView view() const { return m_boxes.view(m_residentExact); }
    /// The device's filter states, for classification.
    const std::uint8_t* states() const { return m_boxes.state.data(); }

private:
    DeviceBoxArrays m_boxes;
    const BoxStore* m_residentStore = nullptr; // the store the device arrays mirror
    bool m_residentExact = false;
    std::uint32_t m_residentSlots = 0;      // slots [0, this) mirror the store up to its dirty list
    std::vector<std::uint32_t> m_sendSlots; // the slots an upload sends, when not the dirty list itself
    PinnedBuffer<SapSlotRecord> m_staging;
    PinnedBuffer<SapExactRecord> m_exactStaging;
    DeviceBuffer<SapSlotRecord> m_records;
    DeviceBuffer<SapExactRecord> m_exactRecords;
    detail::CudaEvents<1> m_uploaded;
    detail::CudaStream m_stream; // last: destroyed first, after waiting for the uploads
};

/// Per-slot scratch: classification, the normal and huge lists, the endpoint sort.
struct SlotBuffers {
    DeviceBuffer<std::uint8_t> isNormal, isHuge;
    DeviceBuffer<std::uint32_t> cellCount, normalSlots, hugeSlots, sortKeys, sortedKeys, sortedSlots;
    DeviceBuffer<std::uint32_t> rankCellCount, rankOffset;

    /// Makes room for `slots` slots.
    void reserve(std::uint64_t slots, cudaStream_t stream) {
        for (auto* bytes : {&isNormal, &isHuge}) bytes->reserve(slots, stream);
        for (auto* words : {&cellCount, &normalSlots, &hugeSlots, &sortKeys, &sortedKeys, &sortedSlots, &rankCellCount,
                            &rankOffset}) {
            words->reserve(slots, stream);
        }
    }
};

/// Box-in-cell entries, before and after the stable sort by cell, and the cell starts.
struct EntryBuffers {
    DeviceBuffer<std::uint32_t> emittedCell, emittedRank, cell, rank, slot, cellStart;
    DeviceBuffer<float> minS, maxS, minU, maxU, minV, maxV;

    /// Makes room for `entries` entries over `cells` cells.
    void reserve(std::uint64_t entries, std::uint64_t cells, cudaStream_t stream) {
        for (auto* words : {&emittedCell, &emittedRank, &cell, &rank, &slot}) words->reserve(entries, stream);
        for (auto* bounds : {&minS, &maxS, &minU, &maxU, &minV, &maxV}) bounds->reserve(entries, stream);
        cellStart.reserve(cells + 1, stream);
    }

    /// The sorted entries as the sweep reads them.
    detail::SapEntries sorted() const {
        return detail::SapEntries{minS.data(), maxS.data(), minU.data(), maxU.data(),
                                  minV.data(), maxV.data(), slot.data(), cell.data()};
    }
};

/// The CUDA backend of PairFinder. Every step runs on one stream; the host waits only to
/// read counts that size the next step, and for the found and lost lists.
class PairFinderCuda final : public PairFinder {
public:
    /// A finder with its own device copy of the store, or, given `sharedMirror`, one slab finder
    /// of several sharing it (see PairFinder::sharesStore). Throws std::runtime_error with the
    /// probe's reason when the device cannot be used.
    explicit PairFinderCuda(int device, std::shared_ptr<DeviceBoxMirror> sharedMirror = nullptr);

    Backend backend() const override { return Backend::Cuda; }
    void update(BoxStore& boxes, bool filterGroups, PairDeltas& deltas) override;
    void applyEdits(const std::vector<std::uint64_t>& added, const std::vector<std::uint64_t>& removed) override;
    void setOwnership(const PairOwnership& window) override {
        if (window == m_ownership) return;
        m_ownership = window;
        m_gate.open();
    }
    void reset() override;
    bool sharesStore() const override { return m_sharesMirror; }
    void uploadSharedStore(const BoxStore& boxes) override {
        const DeviceScope scope(m_device);
        m_mirror->uploadShared(boxes);
    }
    std::uint64_t pairCount() const override { return m_pairCount; }
    const PairFinderStats& stats() const override { return m_stats; }
    std::string description() const override;

private:
    /// Classifies the slots and compacts the normal and huge lists; returns their counts.
    SapCounters classify(std::uint32_t slots);
    /// Sorts the normal boxes along the sweep axis and buckets them into per-cell entries.
    void sortIntoCells(const SapCounters& classified);
    /// Runs the sweeps into the raw pair buffer, growing it and sweeping again on overflow.
    SapCounters sweep(const SapCounters& classified, bool filterGroups, int slotBits);
    /// Sorts the new pairs, diffs them with the held set, copies the deltas and swaps the sets.
    void diff(std::uint64_t newCount, int slotBits, PairDeltas& deltas);
    void fillStats(const SapCounters& classified, const SapCounters& swept, double hostMs);

    /// Runs a CUB algorithm: asks for its temporary storage, grows the kept buffer, runs it.
    template <typename Call>
    void runCub(Call&& call);
    /// Copies the inputs whose flag is set to out, in order, and their number to *selected.
    template <typename Input, typename Output>
    void selectFlagged(Input input, const std::uint8_t* flags, Output* out, unsigned long long* selected,
                       std::uint64_t count);
    void resetCounters();
    /// Copies the counters to the host and waits for the stream.
    SapCounters readCounters();
    /// Copies count keys from the device into a host list, resized to fit.
    void copyToHost(const DeviceBuffer<std::uint64_t>& source, std::uint64_t count, std::vector<std::uint64_t>& out);
    /// Uploads a host list of keys.
    void copyToDevice(const std::vector<std::uint64_t>& source, DeviceBuffer<std::uint64_t>& out);
    void record(Mark mark);
    double elapsedMs(Mark from, Mark to) const;
    BoxArraysView deviceView() const { return m_mirror->view(); }
    cudaStream_t stream() const { return m_stream.get(); }

    int m_device;
    std::string m_deviceName;
    SapGrid m_grid;
    SapGridChooser m_gridChooser;
    std::shared_ptr<DeviceBoxMirror> m_mirror;
    bool m_sharesMirror; // a slab finder: the partitioned finder uploads, this finder only waits
    SlotBuffers m_slots;
    EntryBuffers m_entries;
    DeviceBuffer<std::uint64_t> m_rawPairs;    // compacted keys, unsorted, as the sweeps append them
    DeviceBuffer<std::uint64_t> m_pairSets[2]; // the held set and scratch for the next one, sorted
    int m_current = 0;                         // which of m_pairSets is held
    std::uint64_t m_pairCount = 0;
    DeviceBuffer<std::uint8_t> m_flags;
    DeviceBuffer<std::uint64_t> m_found, m_lost;
    DeviceBuffer<std::uint64_t> m_editAdded, m_editRemoved, m_editFresh;
    DeviceBuffer<unsigned char> m_cubTemp;
    DeviceBuffer<SapCounters> m_counters;
    PinnedBuffer<SapCounters> m_hostCounters;
    PairOwnership m_ownership;
    UpdateGate m_gate;
    PairFinderStats m_stats;
    detail::CudaEvents<MarkCount> m_marks;
    detail::CudaStream m_stream; // last: destroyed first, after waiting for the work that uses the buffers
};

PairFinderCuda::PairFinderCuda(int device, std::shared_ptr<DeviceBoxMirror> sharedMirror)
    : m_device(device), m_deviceName(usableCudaDeviceName(device)),
      m_mirror(sharedMirror ? sharedMirror : std::make_shared<DeviceBoxMirror>(device)),
      m_sharesMirror(sharedMirror != nullptr), m_marks(device), m_stream(device) {
    const DeviceScope scope(m_device);
    m_counters.reserve(1, stream());
    m_hostCounters.reserve(1, stream());
}

std::string PairFinderCuda::description() const {
    return "CUDA backend on " + m_deviceName + " (device " + std::to_string(m_device) + ")";
}

void PairFinderCuda::reset() {
    m_gridChooser.reset();
    m_pairCount = 0;
    m_gate.open();
}

void PairFinderCuda::update(BoxStore& boxes, bool filterGroups, PairDeltas& deltas) {
    // A slab finder always runs: the partitioned finder decides when to skip, and the store's
    // dirty list, which skip() clears, belongs to it.
    if (!m_sharesMirror && m_gate.skip(boxes, filterGroups, deltas, m_stats)) return;
    const DeviceScope scope(m_device);
    m_stats = PairFinderStats{};
    const auto hostStart = Clock::now();
    m_grid = m_gridChooser.choose(boxes, boxes.liveCount());
    const double hostMs = millisecondsSince(hostStart);

    record(MarkStart);
    if (m_sharesMirror) {
        m_mirror->waitForSharedUpload(stream());
    } else {
        m_mirror->upload(boxes, stream());
    }
    record(MarkUploaded);
    const std::uint32_t slots = boxes.size();
    const SapCounters classified = classify(slots);
    sortIntoCells(classified);
    record(MarkSorted);
    const int slotBits = bitWidth(slots == 0 ? 0 : slots - 1);
    const SapCounters swept = sweep(classified, filterGroups, slotBits);
    record(MarkSwept);
    diff(swept.pairs, slotBits, deltas);
    fillStats(classified, swept, hostMs);

    m_gate.record(boxes, filterGroups);
    if (!m_sharesMirror) boxes.clearDirty();
}

void DeviceBoxMirror::upload(const BoxStore& boxes, cudaStream_t stream) {
    const std::uint32_t slots = boxes.size();
    const bool exact = boxes.keepsExact();
    const bool sameStore = &boxes == m_residentStore && exact == m_residentExact && slots >= m_residentSlots;
    const bool replaced = m_boxes.reserve(slots, exact, stream);
    if (!sameStore || replaced) m_residentSlots = 0; // everything is sent again
    m_residentStore = &boxes;
    m_residentExact = exact;

    // Usually every slot is resident and the dirty list is sent as it is; otherwise the dirty
    // resident slots and then every slot the device does not hold yet.
    const std::vector<std::uint32_t>& dirty = boxes.dirtySlots();
    const std::uint32_t* send = dirty.data();
    std::uint64_t count = dirty.size();
    if (m_residentSlots < slots) {
        m_sendSlots.clear();
        for (std::uint32_t slot : dirty) {
            if (slot < m_residentSlots) m_sendSlots.push_back(slot);
        }
        for (std::uint32_t slot = m_residentSlots; slot < slots; ++slot) m_sendSlots.push_back(slot);
        send = m_sendSlots.data();
        count = m_sendSlots.size();
    }
    m_residentSlots = slots;
    if (count == 0) return;
    m_staging.reserve(count, stream);
    m_records.reserve(count, stream);
    if (exact) {
        m_exactStaging.reserve(count, stream);
        m_exactRecords.reserve(count, stream);
    }
    stageSlotRecords(boxes, send, count, m_staging.data(), exact ? m_exactStaging.data() : nullptr,
                     omp_get_max_threads());
    BULLETGPU_CUDA_TRY(cudaMemcpyAsync(m_records.data(), m_staging.data(), count * sizeof(SapSlotRecord),
                                       cudaMemcpyHostToDevice, stream));
    if (exact) {
        BULLETGPU_CUDA_TRY(cudaMemcpyAsync(m_exactRecords.data(), m_exactStaging.data(), count * sizeof(SapExactRecord),
                                           cudaMemcpyHostToDevice, stream));
    }
    launchPerItem(stream, count, detail::sap_scatter_kernel, m_records.data(), exact ? m_exactRecords.data() : nullptr,
                  count, m_boxes.writable(exact));
}

SapCounters PairFinderCuda::classify(std::uint32_t slots) {
    m_slots.reserve(slots, stream());
    resetCounters();
    SapCounters* counters = m_counters.data();
    const BoxArraysView view = deviceView();
    launchPerItem(stream(), slots, detail::sap_classify_kernel, view, detail::sapAxisBounds(view, m_grid),
                  m_mirror->states(), slots, m_grid, m_ownership, m_slots.isNormal.data(), m_slots.isHuge.data(),
                  m_slots.cellCount.data());
    const thrust::counting_iterator<std::uint32_t> slotIndex(0);
    selectFlagged(slotIndex, m_slots.isNormal.data(), m_slots.normalSlots.data(), &counters->normals, slots);
    selectFlagged(slotIndex, m_slots.isHuge.data(), m_slots.hugeSlots.data(), &counters->huge, slots);
    if (slots > 0) {
        runCub([&](void* temp, std::size_t& bytes) {
            return cub::DeviceReduce::Sum(temp, bytes, m_slots.cellCount.data(), &counters->entries, slots, stream());
        });
    }
    record(MarkClassified);
    const SapCounters classified = readCounters();
    if (classified.entries > std::numeric_limits<std::uint32_t>::max()) {
        throw std::length_error("bulletgpu: " + std::to_string(classified.entries) +
                                " box-in-cell entries exceed the sweep's 32-bit indices");
    }
    return classified;
}

void PairFinderCuda::sortIntoCells(const SapCounters& classified) {
    const auto normals = static_cast<std::uint32_t>(classified.normals);
    const auto entries = static_cast<std::uint32_t>(classified.entries);
    const std::uint32_t cells = m_grid.cellCount();
    m_entries.reserve(entries, cells, stream());
    if (normals == 0) return;

    const detail::SapAxisBounds axes = detail::sapAxisBounds(deviceView(), m_grid);
    launchPerItem(stream(), normals, detail::sap_sort_keys_kernel, axes.minS, m_slots.normalSlots.data(), normals,
                  m_slots.sortKeys.data());
    runCub([&](void* temp, std::size_t& bytes) {
        return cub::DeviceRadixSort::SortPairs(temp, bytes, m_slots.sortKeys.data(), m_slots.sortedKeys.data(),
                                               m_slots.normalSlots.data(), m_slots.sortedSlots.data(), normals, 0, 32,
                                               stream());
    });
    launchPerItem(stream(), normals, detail::sap_rank_counts_kernel, m_slots.cellCount.data(),
                  m_slots.sortedSlots.data(), normals, m_slots.rankCellCount.data());
    runCub([&](void* temp, std::size_t& bytes) {
        return cub::DeviceScan::ExclusiveSum(temp, bytes, m_slots.rankCellCount.data(), m_slots.rankOffset.data(),
                                             normals, stream());
    });
    launchPerItem(stream(), normals, detail::sap_emit_entries_kernel, axes, m_grid, m_slots.sortedSlots.data(),
                  m_slots.rankOffset.data(), normals, m_entries.emittedCell.data(), m_entries.emittedRank.data());
    // Radix sort is stable, so each cell keeps its entries in sweep order.
    const int cellBits = std::max(1, bitWidth(cells - 1));
    runCub([&](void* temp, std::size_t& bytes) {
        return cub::DeviceRadixSort::SortPairs(temp, bytes, m_entries.emittedCell.data(), m_entries.cell.data(),
                                               m_entries.emittedRank.data(), m_entries.rank.data(), entries, 0,
                                               cellBits, stream());
    });
    launchPerItem(stream(), entries, detail::sap_cell_starts_kernel, m_entries.cell.data(), entries, cells,
                  m_entries.cellStart.data());
    launchPerItem(stream(), entries, detail::sap_gather_entries_kernel, axes, m_slots.sortedSlots.data(),
                  m_entries.rank.data(), entries, m_entries.sorted());
}

SapCounters PairFinderCuda::sweep(const SapCounters& classified, bool filterGroups, int slotBits) {
    const auto normals = static_cast<std::uint32_t>(classified.normals);
    const auto huge = static_cast<std::uint32_t>(classified.huge);
    const auto entries = static_cast<std::uint32_t>(classified.entries);
    const BoxArraysView view = deviceView();
    for (;;) {
        resetCounters();
        SapCounters* counters = m_counters.data();
        const detail::SapPairSink sink{m_rawPairs.data(), &counters->pairs, m_rawPairs.capacity(), slotBits};
        launchPerItem(stream(), entries, detail::sap_sweep_kernel, m_entries.sorted(), m_entries.cellStart.data(),
                      entries, m_grid, view, filterGroups, m_ownership, sink, &counters->candidates);
        launchPerItem(stream(), huge > 0 ? normals : 0u, detail::sap_huge_normal_kernel, view,
                      m_slots.normalSlots.data(), normals, m_slots.hugeSlots.data(), huge, filterGroups, m_ownership,
                      sink);
        launchPerItem(stream(), huge, detail::sap_huge_huge_kernel, view, m_slots.hugeSlots.data(), huge, filterGroups,
                      m_ownership, sink);
        const SapCounters swept = readCounters();
        if (swept.pairs <= m_rawPairs.capacity()) return swept;
        m_rawPairs.reserve(swept.pairs, stream()); // every pair was counted: sweep again with room for all
    }
}

void PairFinderCuda::diff(std::uint64_t newCount, int slotBits, PairDeltas& deltas) {
    const std::uint64_t oldCount = m_pairCount;
    DeviceBuffer<std::uint64_t>& next = m_pairSets[1 - m_current];
    const DeviceBuffer<std::uint64_t>& held = m_pairSets[m_current];
    next.reserve(newCount, stream());
    m_flags.reserve(std::max(newCount, oldCount), stream());
    m_found.reserve(newCount, stream());
    m_lost.reserve(oldCount, stream());
    SapCounters* counters = m_counters.data();

    if (newCount > 0) {
        // Compacted keys hold 2 * slotBits significant bits (see sapAppendPair).
        runCub([&](void* temp, std::size_t& bytes) {
            return cub::DeviceRadixSort::SortKeys(temp, bytes, m_rawPairs.data(), next.data(), newCount, 0,
                                                  2 * slotBits, stream());
        });
    }
    launchPerItem(stream(), newCount, detail::sap_expand_keys_kernel, next.data(), newCount, slotBits, next.data());
    launchPerItem(stream(), newCount, detail::sap_flag_missing_kernel, next.data(), newCount, held.data(), oldCount,
                  m_flags.data());
    selectFlagged(next.data(), m_flags.data(), m_found.data(), &counters->found, newCount);
    launchPerItem(stream(), oldCount, detail::sap_flag_missing_kernel, held.data(), oldCount, next.data(), newCount,
                  m_flags.data());
    selectFlagged(held.data(), m_flags.data(), m_lost.data(), &counters->lost, oldCount);
    record(MarkDiffed);

    const SapCounters changed = readCounters();
    copyToHost(m_found, changed.found, deltas.found);
    copyToHost(m_lost, changed.lost, deltas.lost);
    record(MarkCopied);
    BULLETGPU_CUDA_TRY(cudaEventSynchronize(m_marks[MarkCopied]));
    m_current = 1 - m_current;
    m_pairCount = newCount;
}

void PairFinderCuda::fillStats(const SapCounters& classified, const SapCounters& swept, double hostMs) {
    const std::uint64_t normals = classified.normals, huge = classified.huge;
    m_stats.objects = static_cast<std::uint32_t>(normals + huge);
    m_stats.hugeObjects = static_cast<std::uint32_t>(huge);
    m_stats.cells = m_grid.cellCount();
    m_stats.entries = static_cast<std::uint32_t>(classified.entries);
    m_stats.sweepAxis = m_grid.sweepAxis;
    // The huge tests are all-pairs, so their candidate counts follow from the list sizes.
    m_stats.candidates = swept.candidates + (huge > 0 ? normals * huge : 0) + huge * (huge == 0 ? 0 : huge - 1) / 2;
    m_stats.pairs = m_pairCount;
    m_stats.classifyMs = hostMs + elapsedMs(MarkUploaded, MarkClassified);
    m_stats.sortMs = elapsedMs(MarkClassified, MarkSorted);
    m_stats.sweepMs = elapsedMs(MarkSorted, MarkSwept);
    m_stats.diffMs = elapsedMs(MarkSwept, MarkDiffed);
    m_stats.transferMs = elapsedMs(MarkStart, MarkUploaded) + elapsedMs(MarkDiffed, MarkCopied);
}

void PairFinderCuda::applyEdits(const std::vector<std::uint64_t>& added, const std::vector<std::uint64_t>& removed) {
    if (added.empty() && removed.empty()) return;
    m_gate.open(); // the next update recomputes, so refused pairs are offered again
    const DeviceScope scope(m_device);
    const std::uint64_t heldCount = m_pairCount;
    DeviceBuffer<std::uint64_t>& held = m_pairSets[m_current];
    DeviceBuffer<std::uint64_t>& kept = m_pairSets[1 - m_current];
    kept.reserve(heldCount, stream());
    m_flags.reserve(std::max<std::uint64_t>(heldCount, added.size()), stream());
    m_editFresh.reserve(added.size(), stream());
    copyToDevice(removed, m_editRemoved);
    copyToDevice(added, m_editAdded);
    resetCounters();
    SapCounters* counters = m_counters.data();

    // kept = held \ removed, then fresh = added \ kept, then held = merge(kept, fresh).
    launchPerItem(stream(), heldCount, detail::sap_flag_missing_kernel, held.data(), heldCount, m_editRemoved.data(),
                  static_cast<std::uint64_t>(removed.size()), m_flags.data());
    selectFlagged(held.data(), m_flags.data(), kept.data(), &counters->kept, heldCount);
    const std::uint64_t keptCount = readCounters().kept;
    launchPerItem(stream(), added.size(), detail::sap_flag_missing_kernel, m_editAdded.data(),
                  static_cast<std::uint64_t>(added.size()), kept.data(), keptCount, m_flags.data());
    selectFlagged(m_editAdded.data(), m_flags.data(), m_editFresh.data(), &counters->fresh, added.size());
    const std::uint64_t freshCount = readCounters().fresh;
    held.reserve(keptCount + freshCount, stream());
    launchPerItem(stream(), keptCount + freshCount, detail::sap_merge_kernel, kept.data(), keptCount,
                  m_editFresh.data(), freshCount, held.data());
    m_pairCount = keptCount + freshCount;
}

template <typename Call>
void PairFinderCuda::runCub(Call&& call) {
    std::size_t bytes = 0;
    BULLETGPU_CUDA_TRY(call(nullptr, bytes));
    m_cubTemp.reserve(std::max<std::size_t>(bytes, 1), stream());
    BULLETGPU_CUDA_TRY(call(m_cubTemp.data(), bytes));
}

template <typename Input, typename Output>
void PairFinderCuda::selectFlagged(Input input, const std::uint8_t* flags, Output* out, unsigned long long* selected,
                                   std::uint64_t count) {
    if (count == 0) {
        BULLETGPU_CUDA_TRY(cudaMemsetAsync(selected, 0, sizeof(*selected), stream()));
        return;
    }
    runCub([&](void* temp, std::size_t& bytes) {
        return cub::DeviceSelect::Flagged(temp, bytes, input, flags, out, selected, static_cast<std::int64_t>(count),
                                          stream());
    });
}

void PairFinderCuda::resetCounters() {
    BULLETGPU_CUDA_TRY(cudaMemsetAsync(m_counters.data(), 0, sizeof(SapCounters), stream()));
}

SapCounters PairFinderCuda::readCounters() {
    BULLETGPU_CUDA_TRY(cudaMemcpyAsync(m_hostCounters.data(), m_counters.data(), sizeof(SapCounters),
                                       cudaMemcpyDeviceToHost, stream()));
    BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream()));
    return *m_hostCounters.data();
}

void PairFinderCuda::copyToHost(const DeviceBuffer<std::uint64_t>& source, std::uint64_t count,
                                std::vector<std::uint64_t>& out) {
    out.resize(count);
    if (count == 0) return;
    BULLETGPU_CUDA_TRY(
        cudaMemcpyAsync(out.data(), source.data(), count * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream()));
}

void PairFinderCuda::copyToDevice(const std::vector<std::uint64_t>& source, DeviceBuffer<std::uint64_t>& out) {
    out.reserve(source.size(), stream());
    if (source.empty()) return;
    BULLETGPU_CUDA_TRY(cudaMemcpyAsync(out.data(), source.data(), source.size() * sizeof(std::uint64_t),
                                       cudaMemcpyHostToDevice, stream()));
}

void PairFinderCuda::record(Mark mark) { BULLETGPU_CUDA_TRY(cudaEventRecord(m_marks[mark], stream())); }

double PairFinderCuda::elapsedMs(Mark from, Mark to) const {
    float ms = 0;
    BULLETGPU_CUDA_TRY(cudaEventElapsedTime(&ms, m_marks[from], m_marks[to]));
    return ms;
}

} // namespace

std::unique_ptr<PairFinder> createCudaPairFinder(int device) { return std::make_unique<PairFinderCuda>(device); }

std::vector<std::unique_ptr<PairFinder>> createCudaSlabFinders(int device, int count) {
    auto mirror = std::make_shared<DeviceBoxMirror>(device);
    std::vector<std::unique_ptr<PairFinder>> finders;
    for (int k = 0; k < count; ++k) finders.push_back(std::make_unique<PairFinderCuda>(device, mirror));
    return finders;
}

} // namespace bulletgpu
