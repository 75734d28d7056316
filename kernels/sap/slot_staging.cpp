// SPDX-License-Identifier: Zlib
#include "kernels/sap/slot_staging.h"

#include "kernels/common/omp_team.h"

namespace bulletgpu {
namespace {

/// Below this many slots the staging runs on the calling thread.
constexpr std::uint64_t cParallelStaging = 16384;

} // namespace

void stageSlotRecords(const BoxStore& boxes, const std::uint32_t* slots, std::uint64_t count, SapSlotRecord* records,
                      SapExactRecord* exact, int threads) {
    const float* minData[3] = {boxes.minData(0), boxes.minData(1), boxes.minData(2)};
    const float* maxData[3] = {boxes.maxData(0), boxes.maxData(1), boxes.maxData(2)};
    const std::uint32_t* group = boxes.groupData();
    const std::uint32_t* mask = boxes.maskData();
    const std::uint8_t* state = boxes.stateData();
    const auto n = static_cast<std::int64_t>(count);
    const int team = count >= cParallelStaging ? threadsForRegion(threads) : 1;
#pragma omp parallel for num_threads(team) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
        const std::uint32_t slot = slots[i];
        SapSlotRecord& record = records[i];
        for (int axis = 0; axis < 3; ++axis) {
            record.min[axis] = minData[axis][slot];
            record.max[axis] = maxData[axis][slot];
        }
        record.slot = slot;
        record.group = group[slot];
        record.mask = mask[slot];
        record.state = state[slot];
        if (exact != nullptr) {
            for (int axis = 0; axis < 3; ++axis) {
                exact[i].min[axis] = boxes.exactMinData(axis)[slot];
                exact[i].max[axis] = boxes.exactMaxData(axis)[slot];
            }
        }
    }
}

} // namespace bulletgpu
