// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"

#include <cstdint>
#include <vector>

/// The features of a triangle mesh for the contact query (proximity_contact.h): its edges, the
/// edges of each triangle, which triangle owns each vertex and edge, and the welded vertices.
///
/// Ownership makes the engine report each feature pair once from candidate triangle pairs:
/// a vertex is owned by the lowest-index triangle using it (by its first corner holding it), an
/// edge by the lowest-index triangle having it as a side (by its first such side). A vertex used
/// by no triangle has no owner and is never reported.

namespace bulletgpu {

/// Owner bits of one triangle: bit i (0-2) when it owns the vertex at corner i, bit 3 + i when
/// it owns its side i (corners i and (i + 1) % 3).
using FeatureOwnership = std::uint8_t;

/// Bit of FeatureOwnership for the vertex at `corner`.
BULLETGPU_HD FeatureOwnership ownsVertexBit(int corner) { return static_cast<FeatureOwnership>(1u << corner); }
/// Bit of FeatureOwnership for side `side`.
BULLETGPU_HD FeatureOwnership ownsEdgeBit(int side) { return static_cast<FeatureOwnership>(8u << side); }

/// A mesh's edges and feature ownership (they depend on its indices only).
struct MeshFeatures {
    std::vector<std::uint32_t> edges;         ///< Two vertex indices (lower, higher) per edge, ascending.
    std::vector<std::uint32_t> triangleEdges; ///< Edge of each triangle's side 0, 1, 2.
    std::vector<FeatureOwnership> owned;      ///< Owner bits of each triangle.
};

/// The features of `triangleCount` triangles (three vertex indices each, below vertexCount).
void buildMeshFeatures(const std::uint32_t* indices, std::uint32_t triangleCount, std::uint32_t vertexCount,
                       MeshFeatures& out);

/// Writes to `weld` (resized to vertexCount) the canonical vertex of each vertex: the lowest
/// index whose position (x, y, z floats) is equal to its own (-0 equals +0). `order` is scratch.
void weldVertices(const float* positions, std::uint32_t vertexCount, std::vector<std::uint32_t>& weld,
                  std::vector<std::uint32_t>& order);

} // namespace bulletgpu
