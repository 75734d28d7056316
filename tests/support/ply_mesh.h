// SPDX-License-Identifier: Zlib
#pragma once

#include <cstdint>
#include <string>
#include <vector>

/// Reading triangle meshes from binary PLY files (the real-data frames of tests and benchmarks).

namespace bulletgpu {

/// A triangle mesh in the layout TriangleMeshSet::addMesh takes.
struct PlyMesh {
    std::vector<float> positions;       ///< x, y, z per vertex.
    std::vector<std::uint32_t> indices; ///< Three vertex indices per triangle.
    std::vector<double> exactPositions; ///< x, y, z per vertex as stored (float or double files).
};

/// Reads a binary PLY (little or big endian) with vertex x, y, z of any scalar type (doubles
/// rounded to the nearest float in `positions`, kept in `exactPositions`) and faces as index
/// lists (polygons split into fans).
/// Throws std::runtime_error saying why when the file cannot be read.
PlyMesh readPlyMesh(const std::string& path);

} // namespace bulletgpu
