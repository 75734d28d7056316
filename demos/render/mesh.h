// SPDX-License-Identifier: Zlib
#pragma once

#include <LinearMath/btTransform.h>
#include <LinearMath/btVector3.h>

#include <cstddef>
#include <vector>

namespace bulletgpu::demo {

/// An indexed triangle mesh with a unit normal per vertex, in one coordinate frame.
struct Mesh {
    std::vector<btVector3> positions; ///< Vertex positions.
    std::vector<btVector3> normals;   ///< Unit vertex normals, one per position.
    std::vector<int> indices;         ///< Three vertex indices per triangle.
    /// Whether the mesh is an open surface (cloth, triangle mesh, plane) to shade from both sides;
    /// closed meshes have outward normals and their faces turned away from the camera are skipped.
    bool twoSided = false;

    /// Removes every vertex and triangle and makes the mesh closed; keeps the capacity.
    void clear() {
        positions.clear();
        normals.clear();
        indices.clear();
        twoSided = false;
    }
    /// Number of vertices.
    int vertexCount() const { return static_cast<int>(positions.size()); }
    /// Adds a vertex; returns its index.
    int addVertex(const btVector3& position, const btVector3& normal) {
        positions.push_back(position);
        normals.push_back(normal);
        return vertexCount() - 1;
    }
    /// Adds a triangle of three vertex indices.
    void addTriangle(int a, int b, int c) { indices.insert(indices.end(), {a, b, c}); }
    /// Moves the vertices from index `first` on by a rigid transform.
    void transformFrom(int first, const btTransform& transform) {
        for (std::size_t i = static_cast<std::size_t>(first); i < positions.size(); ++i) {
            positions[i] = transform * positions[i];
            normals[i] = transform.getBasis() * normals[i];
        }
    }
};

} // namespace bulletgpu::demo
