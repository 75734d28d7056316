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

} // namespace bulletgpu
