// SPDX-License-Identifier: Zlib
#pragma once

#include <LinearMath/btScalar.h>

#include <vector>

namespace bulletgpu::demo {

/// An indexed triangle mesh: xyz per vertex, three vertex indices per triangle.
struct TriMesh {
    std::vector<btScalar> vertices; ///< x, y, z of each vertex.
    std::vector<int> indices;       ///< Three vertex indices per triangle.

    /// Vertices in the mesh.
    int vertexCount() const { return static_cast<int>(vertices.size() / 3); }
    /// Triangles in the mesh.
    int triangleCount() const { return static_cast<int>(indices.size() / 3); }
};

} // namespace bulletgpu::demo
