// SPDX-License-Identifier: Zlib
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace bulletgpu::test {

/// Sets an environment variable for a test and restores its old value (or its absence) after.
class EnvironmentOverride {
public:
    explicit EnvironmentOverride(const char* name) : m_name(name) {
        if (const char* value = std::getenv(name)) m_saved = value;
    }
    EnvironmentOverride(const EnvironmentOverride&) = delete;
    EnvironmentOverride& operator=(const EnvironmentOverride&) = delete;
    ~EnvironmentOverride() {
        if (m_saved) {
            setenv(m_name, m_saved->c_str(), 1);
        } else {
            unsetenv(m_name);
        }
    }
    /// Gives the variable this value.
    void set(const char* value) const { setenv(m_name, value, 1); }

private:
    const char* m_name;
    std::optional<std::string> m_saved;
};

} // namespace bulletgpu::test
