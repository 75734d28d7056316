// SPDX-License-Identifier: Zlib
#pragma once

#include <cstdint>

/// The records the narrow-phase engine's queries return (bulletgpu/TriangleMeshSet.h): plain,
/// trivially copyable structs, the same on the CPU and CUDA backends.

namespace bulletgpu {

/// Contact flag: the triangles are coplanar or one is degenerate; the segment is then one
/// representative point (the mean of the two centroids), not the intersection.
constexpr std::uint32_t cContactCoplanar = 1u;

/// One pair of intersecting triangles (44 bytes). Self-collision: meshA == meshB and
/// triangleA < triangleB. Coordinates are in the frame the test ran in: the mesh's own for
/// self-collision, the world (the transforms applied) for pairs of meshes.
struct TriangleContact {
    std::uint32_t meshA;     ///< Mesh of the first triangle.
    std::uint32_t triangleA; ///< First triangle's index in its mesh.
    std::uint32_t meshB;     ///< Mesh of the second triangle.
    std::uint32_t triangleB; ///< Second triangle's index in its mesh.
    float segment[2][3];     ///< End points of the intersection segment, computed in double then rounded.
    std::uint32_t flags;     ///< cContactCoplanar or 0.
};

/// What a proximity contact relates.
enum class ProximityKind : std::uint32_t {
    VertexFace = 0,         ///< featureA: vertex of mesh A; featureB: triangle of mesh B.
    FaceVertex = 1,         ///< featureA: triangle of mesh A; featureB: vertex of mesh B.
    EdgeEdge = 2,           ///< featureA: edge of mesh A; featureB: edge of mesh B.
    TrianglesIntersect = 3, ///< featureA, featureB: intersecting triangles of mesh A and mesh B.
};

/// One contact of the contact query (64 bytes, trivially copyable). In a self query meshA ==
/// meshB, every vertex-triangle pair is a VertexFace record, an edge pair has featureA <
/// featureB and an intersecting triangle pair has featureA < featureB.
struct ProximityContact {
    std::uint32_t meshA;    ///< Mesh of featureA.
    std::uint32_t meshB;    ///< Mesh of featureB.
    std::uint32_t kind;     ///< A ProximityKind.
    std::uint32_t featureA; ///< Vertex, edge or triangle index in mesh A (by kind).
    std::uint32_t featureB; ///< Vertex, edge or triangle index in mesh B (by kind).
    float pointA[3];        ///< Closest point on featureA in the query's frame (for
                            ///< TrianglesIntersect: the deepest point of the penetrating triangle
                            ///< or its projection; see the README).
    float pointB[3];        ///< Closest point on featureB.
    float normal[3];        ///< Unit normal from B to A.
    float distance;         ///< Separation >= 0 of the features; for TrianglesIntersect minus the
                            ///< penetration depth estimate (<= 0).
    std::uint32_t reserved; ///< Zero (pads the record to 64 bytes).
};

/// One contact of the points-against-mesh query (40 bytes, trivially copyable).
struct PointContact {
    std::uint32_t point;    ///< Index of the query point.
    std::uint32_t triangle; ///< Triangle of the mesh.
    float onMesh[3];        ///< Closest point of the triangle (world frame).
    float normal[3];        ///< Unit normal from the triangle to the point: along point - onMesh,
                            ///< or the triangle's winding normal (+z at zero area) when they meet.
    float distance;         ///< |point - onMesh|, negative when the point lies behind the triangle
                            ///< (on the far side of its winding normal).
    std::uint32_t reserved; ///< Zero (pads the record to 40 bytes).
};

} // namespace bulletgpu
