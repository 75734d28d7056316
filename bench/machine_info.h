// SPDX-License-Identifier: Zlib
#pragma once

#include <ctime>
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

/// The compiler and its version, as the benchmark was built.
inline std::string compilerName() {
#if defined(__clang__)
    return "clang " __clang_version__;
#elif defined(__GNUC__)
    return "gcc " __VERSION__;
#else
    return "unknown";
#endif
}

/// The time now in UTC, ISO 8601 (for example "2026-11-25T19:20:00Z").
inline std::string utcTimestamp() {
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return date;
}

} // namespace bulletgpu
