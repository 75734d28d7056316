// SPDX-License-Identifier: Zlib
#pragma once

#include <fstream>
#include <string>

/// What the benchmarks record of the machine they ran on (Linux /proc files).

namespace bulletgpu {

/// The first "model name" of /proc/cpuinfo, or "unknown".
inline std::string cpuModel() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    }
    return "unknown";
}

/// The 1, 5 and 15 minute load averages, as /proc/loadavg gives them.
inline std::string loadAverages() {
    std::ifstream file("/proc/loadavg");
    std::string one, five, fifteen;
    file >> one >> five >> fifteen;
    return one + " " + five + " " + fifteen;
}

} // namespace bulletgpu
