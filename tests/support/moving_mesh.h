// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/narrow/ccd/ccd_frame_query.h"

#include <cstdint>
#include <random>
#include <vector>

/// Meshes with positions at t = 0 and t = 1 that the CCD frame query tests (CPU and CUDA) run on.

namespace bulletgpu::test {

/// A mesh with positions at t = 0 and t = 1.
struct MovingMesh {
    std::vector<double> x0, x1;         ///< x, y, z per vertex.
    std::vector<std::uint32_t> indices; ///< Three per triangle.

    /// The query's view.
    CcdMesh view() const {
        return CcdMesh{x0.data(), x1.data(), static_cast<std::uint32_t>(x0.size() / 3), indices.data(),
                       static_cast<std::uint32_t>(indices.size() / 3)};
    }
};

/// A side x side grid of vertices with spacing 1/(side - 1) in the unit square at height z,
/// each vertex jittered by up to `jitter` at t = 0 and moved by up to `motion` per axis.
inline MovingMesh randomGrid(std::uint32_t side, double z, double jitter, double motion, std::mt19937_64& random) {
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    MovingMesh mesh;
    const double step = 1.0 / (side - 1);
    for (std::uint32_t j = 0; j < side; ++j) {
        for (std::uint32_t i = 0; i < side; ++i) {
            const double p[3] = {i * step + jitter * unit(random), j * step + jitter * unit(random),
                                 z + jitter * unit(random)};
            for (int k = 0; k < 3; ++k) {
                mesh.x0.push_back(p[k]);
                mesh.x1.push_back(p[k] + motion * unit(random));
            }
        }
    }
    for (std::uint32_t j = 0; j + 1 < side; ++j) {
        for (std::uint32_t i = 0; i + 1 < side; ++i) {
            const std::uint32_t v = j * side + i;
            mesh.indices.insert(mesh.indices.end(), {v, v + 1, v + side, v + 1, v + side + 1, v + side});
        }
    }
    return mesh;
}

/// A single triangle, static unless x1 is given.
inline MovingMesh triangle(const std::vector<double>& x0, const std::vector<double>& x1) {
    return MovingMesh{x0, x1.empty() ? x0 : x1, {0, 1, 2}};
}

/// Every coordinate scaled by `scale`, then moved by `offset`.
inline void transform(MovingMesh& mesh, double scale, double offset) {
    for (std::vector<double>* x : {&mesh.x0, &mesh.x1}) {
        for (double& value : *x) value = value * scale + offset;
    }
}

} // namespace bulletgpu::test
