// SPDX-License-Identifier: Zlib
#pragma once

#include "bench/mesh_bench_world.h"

#include <cmath>
#include <memory>

/// Procedural triangle meshes for the mesh benchmarks: closed, outward-wound bodies and a bumpy
/// ground grid.

namespace bulletgpu::bench {

/// A closed torus around the y axis: nu steps around the axis, nv around the tube, 2 nu nv
/// triangles, wound outward.
inline std::unique_ptr<MeshData> torusMesh(int nu, int nv, btScalar major, btScalar minor) {
    auto m = std::make_unique<MeshData>();
    for (int i = 0; i < nu; ++i) {
        for (int j = 0; j < nv; ++j) {
            const btScalar u = SIMD_2_PI * btScalar(i) / btScalar(nu), v = SIMD_2_PI * btScalar(j) / btScalar(nv);
            const btScalar r = major + minor * std::cos(v);
            m->addVertex(r * std::cos(u), minor * std::sin(v), r * std::sin(u));
        }
    }
    for (int i = 0; i < nu; ++i) {
        for (int j = 0; j < nv; ++j) {
            const int a = i * nv + j, b = i * nv + (j + 1) % nv, c = ((i + 1) % nu) * nv + j,
                      d = ((i + 1) % nu) * nv + (j + 1) % nv;
            m->indices.insert(m->indices.end(), {a, b, c, b, d, c});
        }
    }
    m->wrap();
    return m;
}

/// A closed capsule along y (a sphere when halfHeight is 0): `slices` around the axis and
/// `stacks` (even) from pole to pole, the upper hemisphere raised by halfHeight and the lower
/// one lowered; 2 slices (stacks - 1) triangles, wound outward.
inline std::unique_ptr<MeshData> capsuleMesh(int slices, int stacks, btScalar radius, btScalar halfHeight) {
    auto m = std::make_unique<MeshData>();
    m->addVertex(0, radius + halfHeight, 0);
    for (int s = 1; s < stacks; ++s) {
        const btScalar polar = SIMD_PI * btScalar(s) / btScalar(stacks);
        const btScalar y = radius * std::cos(polar) + (2 * s <= stacks ? halfHeight : -halfHeight);
        for (int k = 0; k < slices; ++k) {
            const btScalar around = SIMD_2_PI * btScalar(k) / btScalar(slices);
            const btScalar r = radius * std::sin(polar);
            m->addVertex(r * std::cos(around), y, r * std::sin(around));
        }
    }
    const int bottom = 1 + (stacks - 1) * slices;
    m->addVertex(0, -radius - halfHeight, 0);
    const auto ring = [slices](int s, int k) { return 1 + (s - 1) * slices + k % slices; };
    for (int k = 0; k < slices; ++k) {
        m->indices.insert(m->indices.end(), {0, ring(1, k + 1), ring(1, k)});
        m->indices.insert(m->indices.end(), {bottom, ring(stacks - 1, k), ring(stacks - 1, k + 1)});
    }
    for (int s = 1; s + 1 < stacks; ++s) {
        for (int k = 0; k < slices; ++k) {
            const int a = ring(s, k), b = ring(s, k + 1), c = ring(s + 1, k), d = ring(s + 1, k + 1);
            m->indices.insert(m->indices.end(), {a, b, c, b, d, c});
        }
    }
    m->wrap();
    return m;
}

/// A square grid of n x n cells of `size` around the origin in y = 0, raised by
/// bump sin(0.7 x) cos(0.5 z), two triangles per cell, wound with +y up.
inline std::unique_ptr<MeshData> groundMesh(int n, btScalar size, btScalar bump) {
    auto m = std::make_unique<MeshData>();
    const btScalar half = size * btScalar(n) / 2;
    for (int i = 0; i <= n; ++i) {
        for (int j = 0; j <= n; ++j) {
            const btScalar x = -half + size * btScalar(i), z = -half + size * btScalar(j);
            m->addVertex(x, bump * std::sin(x * btScalar(0.7)) * std::cos(z * btScalar(0.5)), z);
        }
    }
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            const int a = i * (n + 1) + j, b = a + 1, c = a + n + 1, d = c + 1;
            m->indices.insert(m->indices.end(), {a, b, c, b, d, c});
        }
    }
    m->wrap();
    return m;
}

} // namespace bulletgpu::bench
