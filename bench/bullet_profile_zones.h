// SPDX-License-Identifier: Zlib
#pragma once

#include <LinearMath/btQuickprof.h>

#include <chrono>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

/// Times Bullet's own BT_PROFILE zones (Debian's Bullet is built with them) by installing enter
/// and leave functions: the milliseconds spent in each named zone since the last reset, nested
/// zones counted in each of their parents too. One instance at a time, one thread (Bullet's
/// single-threaded worlds).

namespace bulletgpu::bench {

class BulletZoneTimer {
public:
    /// Installs the timer's enter and leave functions.
    BulletZoneTimer() {
        s_active = this;
        m_previousEnter = btGetCurrentEnterProfileZoneFunc();
        m_previousLeave = btGetCurrentLeaveProfileZoneFunc();
        btSetCustomEnterProfileZoneFunc(&enter);
        btSetCustomLeaveProfileZoneFunc(&leave);
    }
    /// Puts the previous functions back.
    ~BulletZoneTimer() {
        btSetCustomEnterProfileZoneFunc(m_previousEnter);
        btSetCustomLeaveProfileZoneFunc(m_previousLeave);
        s_active = nullptr;
    }
    BulletZoneTimer(const BulletZoneTimer&) = delete;
    BulletZoneTimer& operator=(const BulletZoneTimer&) = delete;

    /// Forgets the times so far.
    void reset() { m_totals.clear(); }
    /// Milliseconds in zone `name` since the last reset.
    double milliseconds(const char* name) const {
        const auto it = m_totals.find(name);
        return it == m_totals.end() ? 0.0 : it->second;
    }

private:
    using Clock = std::chrono::steady_clock;

    static void enter(const char* name) { s_active->m_open.push_back({name, Clock::now()}); }
    static void leave() {
        BulletZoneTimer& self = *s_active;
        if (self.m_open.empty()) return;
        const Open open = self.m_open.back();
        self.m_open.pop_back();
        self.m_totals[open.name] += std::chrono::duration<double, std::milli>(Clock::now() - open.start).count();
    }

    /// A zone entered and not yet left.
    struct Open {
        const char* name;
        Clock::time_point start;
    };
    inline static BulletZoneTimer* s_active = nullptr;
    btEnterProfileZoneFunc* m_previousEnter;          ///< The enter function before this timer.
    btLeaveProfileZoneFunc* m_previousLeave;          ///< The leave function before this timer.
    std::vector<Open> m_open;                         ///< Zones entered, innermost last.
    std::unordered_map<std::string, double> m_totals; ///< Milliseconds per zone name.
};

} // namespace bulletgpu::bench
