// SPDX-License-Identifier: Zlib
#pragma once

#include "bench/mesh_bench_world.h"

#include <cmath>
#include <memory>

/// Procedural triangle meshes for the mesh benchmarks: closed, outward-wound capsules (the torus
/// and the ground grid are the tests', tests/support/mesh_arrays.h).

namespace bulletgpu::bench {

/// A closed capsule along y (a sphere when halfHeight is 0): `slices` around the axis and
/// `stacks` (even) from pole to pole, the upper hemisphere raised by halfHeight and the lower
/// one lowered; 2 slices (stacks - 1) triangles, wound outward.
inline std::unique_ptr<MeshArrays> capsuleMesh(int slices, int stacks, btScalar radius, btScalar halfHeight) {
    auto m = std::make_unique<MeshArrays>();
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

} // namespace bulletgpu::bench
