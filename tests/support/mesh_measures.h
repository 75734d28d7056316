// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/reference/brute_force_distance.h"
#include "tests/support/ply_mesh.h"

#include <cmath>
#include <cstddef>
#include <cstdint>

/// Counts and sizes of a PlyMesh that the separation distance tests (CPU and CUDA) use.

namespace bulletgpu::test {

/// Triangles of a mesh.
inline std::uint32_t triangles(const PlyMesh& mesh) { return static_cast<std::uint32_t>(mesh.indices.size() / 3); }

/// Vertices of a mesh.
inline std::uint32_t vertices(const PlyMesh& mesh) { return static_cast<std::uint32_t>(mesh.positions.size() / 3); }

/// Largest distance of a vertex from the origin.
inline double radiusOf(const PlyMesh& mesh) {
    double r = 0;
    for (std::size_t v = 0; v < mesh.positions.size(); v += 3) {
        r = std::fmax(r, oracleLength(mesh.positions[v], mesh.positions[v + 1], mesh.positions[v + 2]));
    }
    return r;
}

} // namespace bulletgpu::test
