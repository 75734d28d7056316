// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/sap/pair_finder.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <thread>
#include <vector>

namespace bulletgpu::test {

/// The deltas an update must report when the sorted pair set goes from `before` to `after`.
inline PairDeltas deltasBetween(const std::vector<std::uint64_t>& before, const std::vector<std::uint64_t>& after) {
    PairDeltas deltas;
    std::set_difference(after.begin(), after.end(), before.begin(), before.end(), std::back_inserter(deltas.found));
    std::set_difference(before.begin(), before.end(), after.begin(), after.end(), std::back_inserter(deltas.lost));
    return deltas;
}

/// Records the lost pairs a finder hands over during its updates.
struct RecordingSink final : LostPairSink {
    std::vector<std::uint64_t> lost; ///< The last list handed over.
    int calls = 0;                   ///< Calls since the counter was last reset.
    int takenUpdates = 0;            ///< Updates that handed their lost pairs over.
    bool onCallingThread = true;     ///< Every call came on the thread that called update().
    std::thread::id caller;          ///< That thread.

    void takeLost(const std::vector<std::uint64_t>& keys) override {
        ++calls;
        lost = keys;
        onCallingThread = onCallingThread && std::this_thread::get_id() == caller;
    }
};

} // namespace bulletgpu::test
