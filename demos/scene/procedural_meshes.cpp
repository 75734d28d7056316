// SPDX-License-Identifier: Zlib
#include "demos/scene/procedural_meshes.h"

#include <tiny_obj_loader.h>

#include <cmath>
#include <stdexcept>

namespace bulletgpu::demo {

std::vector<btVector3> taruHullPoints() {
    constexpr int cRingPoints = 14;
    const btScalar ringY[3] = {-1, 0, 1};
    const btScalar ringRadius[3] = {btScalar(0.75), btScalar(1.05), btScalar(0.75)};
    std::vector<btVector3> points;
    for (int ring = 0; ring < 3; ++ring) {
        for (int i = 0; i < cRingPoints; ++i) {
            const btScalar angle = SIMD_2_PI * btScalar(i) / btScalar(cRingPoints);
            points.emplace_back(ringRadius[ring] * btCos(angle), ringY[ring], ringRadius[ring] * btSin(angle));
        }
    }
    points.emplace_back(0, btScalar(1.15), 0);
    return points;
}

TriMesh torusMesh(btScalar majorRadius, btScalar minorRadius, int majorSegments, int minorSegments) {
    TriMesh mesh;
    for (int i = 0; i < majorSegments; ++i) {
        const btScalar around = SIMD_2_PI * btScalar(i) / btScalar(majorSegments);
        for (int j = 0; j < minorSegments; ++j) {
            const btScalar tube = SIMD_2_PI * btScalar(j) / btScalar(minorSegments);
            const btScalar radius = majorRadius + minorRadius * btCos(tube);
            mesh.vertices.insert(mesh.vertices.end(),
                                 {radius * btCos(around), minorRadius * btSin(tube), radius * btSin(around)});
        }
    }
    for (int i = 0; i < majorSegments; ++i) {
        const int ring = i * minorSegments;
        const int nextRing = ((i + 1) % majorSegments) * minorSegments;
        for (int j = 0; j < minorSegments; ++j) {
            const int nextJ = (j + 1) % minorSegments;
            mesh.indices.insert(mesh.indices.end(), {ring + j, ring + nextJ, nextRing + nextJ});
            mesh.indices.insert(mesh.indices.end(), {ring + j, nextRing + nextJ, nextRing + j});
        }
    }
    return mesh;
}

const std::vector<std::pair<int, int>>& landscapeTileGrids() {
    static const std::vector<std::pair<int, int>> grids{{64, 32}, {66, 30}, {64, 32}, {64, 33},
                                                        {66, 34}, {66, 35}, {64, 35}, {66, 33}};
    return grids;
}

namespace {

btScalar landscapeHeight(btScalar x, btScalar z) {
    return btScalar(6) * btSin(x / btScalar(23)) * btCos(z / btScalar(31)) +
           btScalar(3) * btSin((x + z) / btScalar(11)) + btScalar(2) * btCos((x - btScalar(2) * z) / btScalar(17));
}

} // namespace

std::vector<TriMesh> landscapeTiles(btScalar side, btScalar heightScale) {
    std::vector<TriMesh> tiles;
    const btScalar tileWidth = side / 2;
    const btScalar tileDepth = side / 4;
    const std::vector<std::pair<int, int>>& grids = landscapeTileGrids();
    for (size_t tile = 0; tile < grids.size(); ++tile) {
        const int columns = grids[tile].first;
        const int rows = grids[tile].second;
        const btScalar x0 = -side / 2 + tileWidth * btScalar(tile % 2);
        const btScalar z0 = -side / 2 + tileDepth * btScalar(tile / 2);
        TriMesh mesh;
        for (int r = 0; r < rows; ++r) {
            for (int c = 0; c < columns; ++c) {
                const btScalar x = x0 + tileWidth * btScalar(c) / btScalar(columns - 1);
                const btScalar z = z0 + tileDepth * btScalar(r) / btScalar(rows - 1);
                mesh.vertices.insert(mesh.vertices.end(), {x, heightScale * landscapeHeight(x, z), z});
            }
        }
        for (int r = 0; r + 1 < rows; ++r) {
            for (int c = 0; c + 1 < columns; ++c) {
                const int v = r * columns + c;
                mesh.indices.insert(mesh.indices.end(), {v, v + columns, v + 1});
                mesh.indices.insert(mesh.indices.end(), {v + 1, v + columns, v + columns + 1});
            }
        }
        tiles.push_back(std::move(mesh));
    }
    return tiles;
}

TriMesh loadObjMesh(const std::string& path) {
    tinyobj::ObjReaderConfig config;
    config.triangulate = true;
    tinyobj::ObjReader reader;
    if (!reader.ParseFromFile(path, config)) {
        throw std::runtime_error("cannot read OBJ file '" + path + "': " + reader.Error());
    }
    TriMesh mesh;
    const std::vector<tinyobj::real_t>& positions = reader.GetAttrib().vertices;
    mesh.vertices.assign(positions.begin(), positions.end());
    for (const tinyobj::shape_t& shape : reader.GetShapes()) {
        for (const tinyobj::index_t& index : shape.mesh.indices) {
            if (index.vertex_index < 0 || index.vertex_index >= mesh.vertexCount()) {
                throw std::runtime_error("OBJ file '" + path + "' has a face with a bad vertex index");
            }
            mesh.indices.push_back(index.vertex_index);
        }
    }
    if (mesh.triangleCount() == 0) throw std::runtime_error("OBJ file '" + path + "' has no triangles");
    return mesh;
}

} // namespace bulletgpu::demo
