// SPDX-License-Identifier: Zlib
#pragma once

#include <omp.h>

#include <algorithm>

namespace bulletgpu {

/// The threads a parallel region opened here gets when it asks for `requested`. Inside a region
/// that is already active, OpenMP gives a nested region the calling thread alone unless nesting
/// was enabled (omp_get_max_active_levels); that happens when a pair finder runs inside the
/// partitioned finder's loop over slabs, or inside a user's own parallel code. Regions still
/// split their work by omp_get_num_threads(), so a smaller team than asked for stays correct.
inline int threadsForRegion(int requested) {
    if (requested <= 1 || omp_get_active_level() >= omp_get_max_active_levels()) return 1;
    return std::min(requested, omp_get_thread_limit());
}

/// Lets parallel regions opened inside one more level of parallel region get their own teams
/// while it lives, and restores OpenMP's setting afterwards. The partitioned finder opens one
/// around its loop over slabs, so that K slabs on T threads each sweep with T / K threads.
class NestedParallelismScope {
public:
    /// Allows two active levels when `enable` is true and fewer are allowed now.
    explicit NestedParallelismScope(bool enable) : m_saved(omp_get_max_active_levels()) {
        if (enable && m_saved < 2) omp_set_max_active_levels(2);
    }
    NestedParallelismScope(const NestedParallelismScope&) = delete;
    NestedParallelismScope& operator=(const NestedParallelismScope&) = delete;
    /// Restores the caller's setting.
    ~NestedParallelismScope() { omp_set_max_active_levels(m_saved); }

private:
    int m_saved;
};

} // namespace bulletgpu
