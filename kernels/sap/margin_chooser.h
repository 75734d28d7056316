// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/MarginBoxes.h>

#include <cstdint>

namespace bulletgpu {

/// Chooses, for MarginBoxes::Auto, whether a MarginPairFinder sweeps margin boxes, from the
/// measured time of its updates: a trial of each way, then the faster way runs, and the other
/// is tried again after the run; a way that keeps winning runs longer each time (up to
/// cLongestRun updates), so a scene whose motion changes is caught and a steady one pays for
/// few trials (a run lasts at most cLongestRun updates, 17 s at 60 Hz). The first updates after a switch are left out
/// of the measure (switching to margins sweeps every box once or twice).
class MarginChooser {
public:
    /// Fewest live boxes for which a finder consults the chooser: smaller scenes stay as they
    /// start, their updates taking too little time to compare.
    static constexpr std::uint32_t cSmallestScene = 8192;
    /// Updates left out of the measure after a switch.
    static constexpr int cSettleUpdates = 3;
    /// Updates measured in a trial.
    static constexpr int cTrialUpdates = 16;
    /// Length of the winner's first run, in updates.
    static constexpr int cFirstRun = 64;
    /// Longest run.
    static constexpr int cLongestRun = 1024;

    /// Auto starts without margins; On and Off never change.
    explicit MarginChooser(MarginBoxes policy) : m_policy(policy), m_useMargins(policy == MarginBoxes::On) {}

    /// Whether the next update sweeps margin boxes.
    bool useMargins() const { return m_useMargins; }

    /// Records the time of an update made the current way; returns true when the next update
    /// is to be made the other way.
    bool record(double milliseconds);

private:
    MarginBoxes m_policy;
    bool m_useMargins;
    bool m_trial = true;   // the current stretch measures this way, else it is a winner's run
    bool m_winner = false; // the way that won the last comparison
    bool m_compared = false;
    int m_updates = 0; // updates in the current stretch
    int m_runLength = cFirstRun;
    double m_sum = 0; // measured time of the current stretch
    int m_measured = 0;
    double m_cost[2] = {-1.0, -1.0}; // mean ms per update without [0] and with [1] margins; -1 unknown
};

} // namespace bulletgpu
