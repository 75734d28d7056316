// SPDX-License-Identifier: Zlib
#include "kernels/sap/margin_chooser.h"

#include <algorithm>

namespace bulletgpu {

bool MarginChooser::record(double milliseconds) {
    if (m_policy != MarginBoxes::Auto) return false;
    if (++m_updates > cSettleUpdates) {
        m_sum += milliseconds;
        ++m_measured;
    }
    if (m_updates < (m_trial ? cSettleUpdates + cTrialUpdates : m_runLength)) return false;
    m_cost[m_useMargins ? 1 : 0] = m_sum / std::max(1, m_measured);
    m_updates = 0;
    m_sum = 0;
    m_measured = 0;
    if (m_trial && m_cost[m_useMargins ? 0 : 1] >= 0) {
        // Both ways measured: the faster runs, longer when it won the last time too.
        const bool winner = m_cost[1] < m_cost[0];
        m_runLength = m_compared && winner == m_winner ? std::min(2 * m_runLength, cLongestRun) : cFirstRun;
        m_winner = winner;
        m_compared = true;
        m_trial = false;
        if (winner == m_useMargins) return false;
        m_useMargins = winner;
        return true;
    }
    // The first trial, or the end of a run: try the other way.
    m_trial = true;
    m_useMargins = !m_useMargins;
    return true;
}

} // namespace bulletgpu
