// SPDX-License-Identifier: Zlib
#pragma once

#include <array>
#include <cmath>
#include <random>

/// Rigid transforms (row-major 3x4 [R | t] of doubles) from quaternions, that the separation
/// distance tests and benchmark place meshes with.

namespace bulletgpu::test {

/// A rigid transform: row-major 3x4 [R | t].
using Transform = std::array<double, 12>;

/// The rotation of quaternion (w, x, y, z) (normalised here) and translation t, row-major 3x4.
inline Transform rigid(double w, double x, double y, double z, const double* t) {
    const double n = std::sqrt(w * w + x * x + y * y + z * z);
    w /= n, x /= n, y /= n, z /= n;
    return {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),     t[0],
            2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),     t[1],
            2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y), t[2]};
}

/// A random rotation (seeded) and translation t.
inline Transform randomRigid(std::mt19937& rng, const double* t) {
    std::normal_distribution<double> g;
    const double w = g(rng), x = g(rng), y = g(rng), z = g(rng);
    return rigid(w, x, y, z, t);
}

} // namespace bulletgpu::test
