// SPDX-License-Identifier: Zlib
#pragma once

#include <cmath>
#include <vector>

/// Rigid transforms (row-major 3x4 [R | t]) that the narrow-phase tests move meshes with.

namespace bulletgpu::test {

/// A rotation by `angle` about z followed by a translation.
inline std::vector<double> rigidTransform(double angle, double tx, double ty, double tz) {
    const double c = std::cos(angle), s = std::sin(angle);
    return {c, -s, 0, tx, s, c, 0, ty, 0, 0, 1, tz};
}

/// A rotation by `angle` about x (a ring in the xy plane stands up), then a translation along x.
inline std::vector<double> uprightTransform(double angle, double tx) {
    const double c = std::cos(angle), s = std::sin(angle);
    return {1, 0, 0, tx, 0, c, -s, 0, 0, s, c, 0};
}

} // namespace bulletgpu::test
