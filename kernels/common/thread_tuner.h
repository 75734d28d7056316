// SPDX-License-Identifier: Zlib
#pragma once

#include <cstdint>

namespace bulletgpu {

/// Chooses how many OpenMP threads a large update uses, by timing. A team of threads that
/// shares its cores with other programs waits at every barrier for a descheduled member and
/// can end up several times slower than one thread; so every cProbePeriod updates one runs on
/// one thread and the next on the whole team, and the faster of the two decides until the
/// next probe. Results never depend on the choice, only the time does.
class ThreadTuner {
public:
    /// Updates between two probes.
    static constexpr std::uint32_t cProbePeriod = 64;

    /// A tuner for a team of up to maxThreads threads.
    explicit ThreadTuner(int maxThreads) : m_maxThreads(maxThreads), m_choice(maxThreads) {}

    /// Threads for the next update.
    int threadsForNextUpdate() const {
        const std::uint32_t phase = m_updates % cProbePeriod;
        if (m_maxThreads <= 1) return 1;
        if (phase == 0) return 1;
        if (phase == 1) return m_maxThreads;
        return m_choice;
    }

    /// Reports how long the update just run took.
    void record(double milliseconds) {
        const std::uint32_t phase = m_updates % cProbePeriod;
        if (phase == 0) m_singleMs = milliseconds;
        if (phase == 1) m_choice = milliseconds < m_singleMs ? m_maxThreads : 1;
        ++m_updates;
    }

private:
    int m_maxThreads;
    int m_choice;
    std::uint32_t m_updates = cProbePeriod - 2; // two updates on the team, then the first probe
    double m_singleMs = 0;
};

} // namespace bulletgpu
