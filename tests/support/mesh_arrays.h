// SPDX-License-Identifier: Zlib
#pragma once

#include <BulletCollision/CollisionShapes/btTriangleIndexVertexArray.h>

#include <cmath>
#include <memory>
#include <vector>

/// Triangle meshes as Bullet's btTriangleIndexVertexArray reads them, and the procedural ones the
/// mesh tests and benchmarks share: a ground grid and a torus.

namespace bulletgpu::test {

/// Vertices and indices that a btTriangleIndexVertexArray points into (kept alive with it).
struct MeshArrays {
    std::vector<btScalar> vertices;                    ///< x, y, z per vertex.
    std::vector<int> indices;                          ///< Three per triangle.
    std::unique_ptr<btTriangleIndexVertexArray> array; ///< The interface over them (see wrap).

    /// Appends the vertex (x, y, z).
    void addVertex(btScalar x, btScalar y, btScalar z) {
        vertices.push_back(x);
        vertices.push_back(y);
        vertices.push_back(z);
    }
    /// Points the interface at the arrays (call once they are filled).
    void wrap() {
        array = std::make_unique<btTriangleIndexVertexArray>(
            static_cast<int>(indices.size() / 3), indices.data(), static_cast<int>(3 * sizeof(int)),
            static_cast<int>(vertices.size() / 3), vertices.data(), static_cast<int>(3 * sizeof(btScalar)));
    }
    /// Triangles held.
    int triangles() const { return static_cast<int>(indices.size() / 3); }
};

/// A flat square grid of n x n cells of `size` in the plane y = height (two triangles per cell),
/// wound with +y up.
inline std::unique_ptr<MeshArrays> groundGrid(int n, btScalar size, btScalar height = 0, btScalar bump = 0) {
    auto m = std::make_unique<MeshArrays>();
    const btScalar half = size * n / 2;
    for (int i = 0; i <= n; ++i) {
        for (int j = 0; j <= n; ++j) {
            const btScalar x = -half + size * i, z = -half + size * j;
            m->vertices.insert(m->vertices.end(), {x, height + bump * std::sin(x * 0.7f) * std::cos(z * 0.5f), z});
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

/// A closed torus around the y axis (nu x nv quads), wound outward.
inline std::unique_ptr<MeshArrays> torusArrays(int nu, int nv, btScalar major, btScalar minor) {
    auto m = std::make_unique<MeshArrays>();
    for (int i = 0; i < nu; ++i) {
        for (int j = 0; j < nv; ++j) {
            const btScalar u = 2 * SIMD_PI * i / nu, v = 2 * SIMD_PI * j / nv;
            const btScalar r = major + minor * std::cos(v);
            m->vertices.insert(m->vertices.end(), {r * std::cos(u), minor * std::sin(v), r * std::sin(u)});
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

/// A closed square pyramid standing on the plane y = 0 with its apex at (ax, ay, az) and a base
/// of half width `halfWidth`, wound outward (a spike, when the base is narrow).
inline std::unique_ptr<MeshArrays> pyramidArrays(btScalar ax, btScalar ay, btScalar az, btScalar halfWidth) {
    auto m = std::make_unique<MeshArrays>();
    for (int i = 0; i < 4; ++i)
        m->addVertex(ax + (i & 1 ? halfWidth : -halfWidth), 0, az + (i & 2 ? halfWidth : -halfWidth));
    m->addVertex(ax, ay, az);
    // Sides counter-clockwise seen from outside, then the base seen from below.
    m->indices = {0, 1, 4, 1, 3, 4, 3, 2, 4, 2, 0, 4, 0, 2, 3, 0, 3, 1};
    m->wrap();
    return m;
}

} // namespace bulletgpu::test
