// SPDX-License-Identifier: Zlib
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace bulletgpu::demo {

/// Whether `names` holds `name`.
inline bool holdsName(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

/// `names`, comma-separated, for error messages.
inline std::string joinedNames(const std::vector<std::string>& names) {
    std::string list;
    for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
    return list;
}

} // namespace bulletgpu::demo
