// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/narrow/geometry/mesh_features.h"

#include <cstdint>
#include <vector>

class btCollisionShape;

/// A Bullet collision shape as the narrow engine's triangle mesh: flat arrays in the shape's
/// own frame (local scaling applied), what each triangle is called in Bullet, and what the
/// solver contacts need (face and edge normals, margin, sidedness).
///
/// Shapes read: btGImpactMeshShape (every part) and btGImpactMeshShapePart;
/// btBvhTriangleMeshShape and btTriangleMeshShape (their btStridingMeshInterface: every part,
/// int, short or unsigned char indices, float or double vertices, the interface's scaling);
/// btScaledBvhTriangleMeshShape (its scaling times the child's); btBoxShape (12 triangles over
/// its extents with margin); btConvexHullShape (the hull of its scaled points,
/// btConvexHullComputer); btConvexTriangleMeshShape (its interface's triangles).

namespace bulletgpu {

/// A shape's mesh and what contacts read from it.
struct MeshShapeGeometry {
    std::vector<float> positions;               ///< x, y, z per vertex, shape frame.
    std::vector<std::uint32_t> indices;         ///< Three vertices per triangle (wound outward when closed).
    std::vector<int> parts;                     ///< Bullet's part (sub-part) of each triangle.
    std::vector<int> partTriangles;             ///< Bullet's index of each triangle within its part.
    std::vector<float> faceNormals;             ///< Unit normal per triangle (zero when degenerate).
    std::vector<float> edgeNormals;             ///< Unit mean of the adjacent faces' normals per edge.
    std::vector<std::uint32_t> vertexTriangles; ///< A triangle using each vertex (the first).
    std::vector<std::uint32_t> edgeTriangles;   ///< A triangle having each edge (the first).
    std::vector<std::uint32_t> neighbourStarts; ///< Vertex v's neighbours: neighbours[starts[v], starts[v + 1]).
    std::vector<std::uint32_t> neighbours;      ///< The vertices sharing an edge with each vertex.
    std::vector<std::uint32_t> edgeOpposite;    ///< Per edge, the third corners of its first two triangles
                                                ///< (cNoVertex when it has fewer).
    MeshFeatures features;                      ///< Edges as the engine numbers them.
    double margin = 0;                          ///< Thickness Bullet adds outside the triangles.
    bool convex = false;                        ///< A convex shape (box, hull): identifiers stay the wrapper's.
    bool twoSided = false;                      ///< Open surface: no inside.
    float centre[3] = {0, 0, 0};                ///< Centre of the vertices' bounding box.
};

/// Whether meshGeometryOf reads `shape` (by its type and, for GImpact, its kind).
bool isMeshShape(const btCollisionShape* shape);

/// Whether `shape` is a btSphereShape (taken against concave meshes as a point with a radius).
bool isSphereShape(const btCollisionShape* shape);

/// Whether `shape` is a mesh isMeshShape reads that is not convex (GImpact or static meshes).
bool isConcaveMeshShape(const btCollisionShape* shape);

/// The mesh of `shape`. Throws std::invalid_argument for a shape isMeshShape rejects, an index
/// out of range or a non-finite vertex.
MeshShapeGeometry meshGeometryOf(const btCollisionShape* shape);

} // namespace bulletgpu
