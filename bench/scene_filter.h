// SPDX-License-Identifier: Zlib
#pragma once

#include <string>

namespace bulletgpu::bench {

/// The scenes a benchmark's command line picks: a comma-separated list of names, or every scene
/// when the list is empty or absent.
class SceneFilter {
public:
    /// Picks the scenes named in `list` (for example "cloth-ball,seams"); empty picks all.
    explicit SceneFilter(const std::string& list) : m_list(list.empty() ? std::string() : "," + list + ",") {}
    /// Whether the scene `name` is picked.
    bool chosen(const std::string& name) const {
        return m_list.empty() || m_list.find("," + name + ",") != std::string::npos;
    }

private:
    std::string m_list; ///< The list with a comma before and after each name, or empty.
};

} // namespace bulletgpu::bench
