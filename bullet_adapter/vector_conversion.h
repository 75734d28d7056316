// SPDX-License-Identifier: Zlib
#pragma once

#include <LinearMath/btVector3.h>

namespace bulletgpu {

/// Writes a Bullet vector's three components as doubles (exact for float and double Bullet).
inline void toDoubles(const btVector3& v, double out[3]) {
    out[0] = static_cast<double>(v.getX());
    out[1] = static_cast<double>(v.getY());
    out[2] = static_cast<double>(v.getZ());
}

} // namespace bulletgpu
