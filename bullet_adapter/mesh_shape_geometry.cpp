// SPDX-License-Identifier: Zlib
#include "bullet_adapter/mesh_shape_geometry.h"
#include "kernels/narrow/geometry/manifold_contact.h"

#include <BulletCollision/CollisionShapes/btBoxShape.h>
#include <BulletCollision/CollisionShapes/btConvexHullShape.h>
#include <BulletCollision/CollisionShapes/btConvexTriangleMeshShape.h>
#include <BulletCollision/CollisionShapes/btScaledBvhTriangleMeshShape.h>
#include <BulletCollision/CollisionShapes/btStridingMeshInterface.h>
#include <BulletCollision/CollisionShapes/btTriangleMeshShape.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <LinearMath/btConvexHullComputer.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace bulletgpu {
namespace {

/// Appends the triangles of one part of a striding mesh interface, its vertices scaled.
void appendPart(const btStridingMeshInterface& mesh, int part, const btVector3& scaling, MeshShapeGeometry& out) {
    const unsigned char* vertexBase = nullptr;
    const unsigned char* indexBase = nullptr;
    int vertexCount = 0, vertexStride = 0, indexStride = 0, faceCount = 0;
    PHY_ScalarType vertexType = PHY_FLOAT, indexType = PHY_INTEGER;
    mesh.getLockedReadOnlyVertexIndexBase(&vertexBase, vertexCount, vertexType, vertexStride, &indexBase, indexStride,
                                          faceCount, indexType, part);
    const auto first = static_cast<std::uint32_t>(out.positions.size() / 3);
    bool ok = vertexType == PHY_FLOAT || vertexType == PHY_DOUBLE;
    for (int v = 0; v < vertexCount && ok; ++v) {
        const unsigned char* at = vertexBase + static_cast<std::ptrdiff_t>(v) * vertexStride;
        for (int k = 0; k < 3; ++k) {
            const double x = vertexType == PHY_FLOAT ? reinterpret_cast<const float*>(at)[k]
                                                     : reinterpret_cast<const double*>(at)[k];
            out.positions.push_back(static_cast<float>(x * scaling[k]));
        }
    }
    for (int f = 0; f < faceCount && ok; ++f) {
        const unsigned char* at = indexBase + static_cast<std::ptrdiff_t>(f) * indexStride;
        for (int c = 0; c < 3; ++c) {
            long index = -1;
            if (indexType == PHY_INTEGER)
                index = reinterpret_cast<const int*>(at)[c];
            else if (indexType == PHY_SHORT)
                index = reinterpret_cast<const unsigned short*>(at)[c];
            else if (indexType == PHY_UCHAR)
                index = at[c];
            if (index < 0 || index >= vertexCount) {
                ok = false;
                break;
            }
            out.indices.push_back(first + static_cast<std::uint32_t>(index));
        }
        out.parts.push_back(part);
        out.partTriangles.push_back(f);
    }
    mesh.unLockReadOnlyVertexBase(part);
    if (!ok) throw std::invalid_argument("bulletgpu: a mesh part has an unsupported type or an index out of range");
}

/// Appends every part of a striding mesh interface.
void appendMesh(const btStridingMeshInterface& mesh, const btVector3& scaling, MeshShapeGeometry& out) {
    for (int part = 0; part < mesh.getNumSubParts(); ++part) appendPart(mesh, part, scaling, out);
}

/// Appends a convex polygon's fan of triangles (vertex indices into out.positions).
void appendFan(const std::vector<std::uint32_t>& polygon, MeshShapeGeometry& out) {
    for (std::size_t i = 1; i + 1 < polygon.size(); ++i) {
        out.indices.insert(out.indices.end(), {polygon[0], polygon[i], polygon[i + 1]});
        out.parts.push_back(-1);
        out.partTriangles.push_back(static_cast<int>(out.parts.size() - 1));
    }
}

/// The 12 triangles of a box of half extents h.
void appendBox(const btVector3& h, MeshShapeGeometry& out) {
    for (int corner = 0; corner < 8; ++corner) {
        out.positions.push_back(static_cast<float>(corner & 1 ? h.x() : -h.x()));
        out.positions.push_back(static_cast<float>(corner & 2 ? h.y() : -h.y()));
        out.positions.push_back(static_cast<float>(corner & 4 ? h.z() : -h.z()));
    }
    const std::uint32_t faces[6][4] = {{0, 2, 6, 4}, {1, 5, 7, 3}, {0, 4, 5, 1},
                                       {2, 3, 7, 6}, {0, 1, 3, 2}, {4, 6, 7, 5}};
    for (const auto& face : faces) appendFan({face[0], face[1], face[2], face[3]}, out);
}

/// The hull of `count` points (scaled), its faces fanned into triangles.
void appendHull(const btVector3* points, int count, const btVector3& scaling, MeshShapeGeometry& out) {
    std::vector<btVector3> scaled(points, points + count);
    for (btVector3& p : scaled) p *= scaling;
    btConvexHullComputer hull;
    if (count > 0) hull.compute(&scaled[0].x(), sizeof(btVector3), count, 0, 0);
    for (int v = 0; v < hull.vertices.size(); ++v) {
        for (int k = 0; k < 3; ++k) out.positions.push_back(static_cast<float>(hull.vertices[v][k]));
    }
    std::vector<std::uint32_t> polygon;
    for (int f = 0; f < hull.faces.size(); ++f) {
        polygon.clear();
        const btConvexHullComputer::Edge* first = &hull.edges[hull.faces[f]];
        const btConvexHullComputer::Edge* edge = first;
        do {
            polygon.push_back(static_cast<std::uint32_t>(edge->getTargetVertex()));
            edge = edge->getNextEdgeOfFace();
        } while (edge != first && polygon.size() <= static_cast<std::size_t>(hull.vertices.size()));
        appendFan(polygon, out);
    }
}

/// Vertex `v` of the geometry in double.
btVector3 vertexOf(const MeshShapeGeometry& g, std::uint32_t v) {
    return btVector3(g.positions[3 * v], g.positions[3 * v + 1], g.positions[3 * v + 2]);
}

/// The raw (winding) normal of triangle t, unnormalised, in double.
void windingNormal(const MeshShapeGeometry& g, std::size_t t, double n[3]) {
    double p[3][3];
    for (int c = 0; c < 3; ++c) {
        for (int k = 0; k < 3; ++k) p[c][k] = g.positions[3 * g.indices[3 * t + c] + k];
    }
    const double u[3] = {p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]};
    const double w[3] = {p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]};
    n[0] = u[1] * w[2] - u[2] * w[1];
    n[1] = u[2] * w[0] - u[0] * w[2];
    n[2] = u[0] * w[1] - u[1] * w[0];
}

/// Orients the triangles: convex shapes away from the vertices' centroid; closed meshes
/// outward (positive volume); open meshes as they are, marked two-sided.
void orient(MeshShapeGeometry& g) {
    const std::size_t triangles = g.indices.size() / 3;
    if (g.convex) {
        double centroid[3] = {0, 0, 0};
        const std::size_t vertices = g.positions.size() / 3;
        for (std::size_t v = 0; v < vertices; ++v) {
            for (int k = 0; k < 3; ++k) centroid[k] += g.positions[3 * v + k] / static_cast<double>(vertices);
        }
        for (std::size_t t = 0; t < triangles; ++t) {
            double n[3];
            windingNormal(g, t, n);
            const float* p = &g.positions[3 * g.indices[3 * t]];
            const double outward =
                n[0] * (p[0] - centroid[0]) + n[1] * (p[1] - centroid[1]) + n[2] * (p[2] - centroid[2]);
            if (outward < 0) std::swap(g.indices[3 * t + 1], g.indices[3 * t + 2]);
        }
        return;
    }
    std::vector<std::uint32_t> uses(g.features.edges.size() / 2, 0);
    for (std::uint32_t e : g.features.triangleEdges) ++uses[e];
    const bool closed = triangles > 0 && std::all_of(uses.begin(), uses.end(), [](std::uint32_t u) { return u == 2; });
    g.twoSided = !closed;
    if (!closed) return;
    double volume = 0;
    for (std::size_t t = 0; t < triangles; ++t) {
        const btVector3 a = vertexOf(g, g.indices[3 * t]), b = vertexOf(g, g.indices[3 * t + 1]),
                        c = vertexOf(g, g.indices[3 * t + 2]);
        volume += a.dot(b.cross(c));
    }
    if (volume < 0) {
        for (std::size_t t = 0; t < triangles; ++t) std::swap(g.indices[3 * t + 1], g.indices[3 * t + 2]);
    }
}

/// Fills the vertices' neighbours and the edges' opposite corners from the final triangles.
void buildAdjacency(MeshShapeGeometry& g) {
    const std::size_t vertices = g.positions.size() / 3, edges = g.features.edges.size() / 2;
    g.neighbourStarts.assign(vertices + 1, 0);
    for (std::size_t e = 0; e < edges; ++e) {
        ++g.neighbourStarts[g.features.edges[2 * e] + 1];
        ++g.neighbourStarts[g.features.edges[2 * e + 1] + 1];
    }
    for (std::size_t v = 0; v < vertices; ++v) g.neighbourStarts[v + 1] += g.neighbourStarts[v];
    g.neighbours.assign(g.neighbourStarts.back(), 0);
    std::vector<std::uint32_t> fill(g.neighbourStarts.begin(), g.neighbourStarts.end() - 1);
    for (std::size_t e = 0; e < edges; ++e) {
        const std::uint32_t a = g.features.edges[2 * e], b = g.features.edges[2 * e + 1];
        g.neighbours[fill[a]++] = b;
        g.neighbours[fill[b]++] = a;
    }
    g.edgeOpposite.assign(2 * edges, cNoVertex);
    const std::size_t triangles = g.indices.size() / 3;
    for (std::size_t t = 0; t < triangles; ++t) {
        for (int side = 0; side < 3; ++side) {
            const std::uint32_t e = g.features.triangleEdges[3 * t + side];
            const std::uint32_t opposite = g.indices[3 * t + (side + 2) % 3];
            std::uint32_t* slots = &g.edgeOpposite[2 * e];
            if (slots[0] == cNoVertex) {
                slots[0] = opposite;
            } else if (slots[1] == cNoVertex) {
                slots[1] = opposite;
            }
        }
    }
}

/// Fills the normals, the features and the centre after the triangles are final.
void finish(MeshShapeGeometry& g) {
    const auto vertices = static_cast<std::uint32_t>(g.positions.size() / 3);
    const auto triangles = static_cast<std::uint32_t>(g.indices.size() / 3);
    if (!std::all_of(g.positions.begin(), g.positions.end(), [](float x) { return std::isfinite(x); })) {
        throw std::invalid_argument("bulletgpu: a mesh vertex is not finite");
    }
    buildMeshFeatures(g.indices.data(), triangles, vertices, g.features);
    orient(g);
    buildMeshFeatures(g.indices.data(), triangles, vertices, g.features);
    g.faceNormals.assign(3 * static_cast<std::size_t>(triangles), 0.0f);
    const std::size_t edges = g.features.edges.size() / 2;
    std::vector<double> edgeSums(3 * edges, 0.0);
    g.vertexTriangles.assign(vertices, 0);
    g.edgeTriangles.assign(edges, 0);
    std::vector<bool> vertexSeen(vertices, false), edgeSeen(edges, false);
    for (std::uint32_t t = 0; t < triangles; ++t) {
        double n[3];
        windingNormal(g, t, n);
        const double length = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int k = 0; k < 3 && length > 0; ++k) g.faceNormals[3 * t + k] = static_cast<float>(n[k] / length);
        for (int c = 0; c < 3; ++c) {
            const std::uint32_t v = g.indices[3 * t + c], e = g.features.triangleEdges[3 * t + c];
            if (!vertexSeen[v]) vertexSeen[v] = true, g.vertexTriangles[v] = t;
            if (!edgeSeen[e]) edgeSeen[e] = true, g.edgeTriangles[e] = t;
            for (int k = 0; k < 3; ++k) edgeSums[3 * e + k] += g.faceNormals[3 * t + k];
        }
    }
    buildAdjacency(g);
    g.edgeNormals.assign(3 * edges, 0.0f);
    for (std::size_t e = 0; e < edges; ++e) {
        const double* s = &edgeSums[3 * e];
        const double length = std::sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
        for (int k = 0; k < 3 && length > 1e-12; ++k) g.edgeNormals[3 * e + k] = static_cast<float>(s[k] / length);
    }
    float lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (std::uint32_t v = 0; v < vertices; ++v) {
        for (int k = 0; k < 3; ++k) {
            const float x = g.positions[3 * v + k];
            lo[k] = v == 0 ? x : std::min(lo[k], x);
            hi[k] = v == 0 ? x : std::max(hi[k], x);
        }
    }
    for (int k = 0; k < 3; ++k) g.centre[k] = 0.5f * (lo[k] + hi[k]);
}

/// The GImpact mesh parts of a GImpact shape (a mesh or one part), or none for a compound.
std::vector<const btGImpactMeshShapePart*> gimpactParts(const btCollisionShape* shape) {
    const auto* gimpact = static_cast<const btGImpactShapeInterface*>(shape);
    std::vector<const btGImpactMeshShapePart*> parts;
    if (gimpact->getGImpactShapeType() == CONST_GIMPACT_TRIMESH_SHAPE) {
        const auto* mesh = static_cast<const btGImpactMeshShape*>(shape);
        for (int i = 0; i < mesh->getMeshPartCount(); ++i) parts.push_back(mesh->getMeshPart(i));
    } else if (gimpact->getGImpactShapeType() == CONST_GIMPACT_TRIMESH_SHAPE_PART) {
        parts.push_back(static_cast<const btGImpactMeshShapePart*>(shape));
    }
    return parts;
}

} // namespace

bool isMeshShape(const btCollisionShape* shape) {
    if (shape == nullptr) return false;
    switch (shape->getShapeType()) {
        case GIMPACT_SHAPE_PROXYTYPE: {
            const auto* gimpact = static_cast<const btGImpactShapeInterface*>(shape);
            return gimpact->getGImpactShapeType() != CONST_GIMPACT_COMPOUND_SHAPE;
        }
        case TRIANGLE_MESH_SHAPE_PROXYTYPE:
        case SCALED_TRIANGLE_MESH_SHAPE_PROXYTYPE:
        case BOX_SHAPE_PROXYTYPE:
        case CONVEX_HULL_SHAPE_PROXYTYPE:
        case CONVEX_TRIANGLEMESH_SHAPE_PROXYTYPE:
            return true;
        default:
            return false;
    }
}

bool isSphereShape(const btCollisionShape* shape) {
    return shape != nullptr && shape->getShapeType() == SPHERE_SHAPE_PROXYTYPE;
}

bool isConcaveMeshShape(const btCollisionShape* shape) { return isMeshShape(shape) && shape->isConcave(); }

MeshShapeGeometry meshGeometryOf(const btCollisionShape* shape) {
    if (!isMeshShape(shape)) throw std::invalid_argument("bulletgpu: the shape is not one the mesh algorithm reads");
    MeshShapeGeometry g;
    switch (shape->getShapeType()) {
        case GIMPACT_SHAPE_PROXYTYPE: {
            for (const btGImpactMeshShapePart* part : gimpactParts(shape)) {
                auto* mutablePart = const_cast<btGImpactMeshShapePart*>(part);
                const btGImpactMeshShapePart::TrimeshPrimitiveManager* manager =
                    mutablePart->getTrimeshPrimitiveManager();
                appendPart(*manager->m_meshInterface, manager->m_part, manager->m_scale, g);
                g.margin = std::max(g.margin, static_cast<double>(part->getMargin()));
            }
            break;
        }
        case TRIANGLE_MESH_SHAPE_PROXYTYPE: {
            const btStridingMeshInterface* mesh = static_cast<const btTriangleMeshShape*>(shape)->getMeshInterface();
            appendMesh(*mesh, mesh->getScaling(), g);
            g.margin = shape->getMargin();
            break;
        }
        case SCALED_TRIANGLE_MESH_SHAPE_PROXYTYPE: {
            const auto* scaled = static_cast<const btScaledBvhTriangleMeshShape*>(shape);
            const btStridingMeshInterface* mesh = scaled->getChildShape()->getMeshInterface();
            appendMesh(*mesh, mesh->getScaling() * scaled->getLocalScaling(), g);
            g.margin = scaled->getChildShape()->getMargin();
            break;
        }
        case BOX_SHAPE_PROXYTYPE: {
            g.convex = true;
            appendBox(static_cast<const btBoxShape*>(shape)->getHalfExtentsWithMargin(), g);
            break;
        }
        case CONVEX_HULL_SHAPE_PROXYTYPE: {
            const auto* hull = static_cast<const btConvexHullShape*>(shape);
            g.convex = true;
            appendHull(hull->getUnscaledPoints(), hull->getNumPoints(), hull->getLocalScaling(), g);
            g.margin = hull->getMargin();
            break;
        }
        default: {
            const auto* convexMesh = static_cast<const btConvexTriangleMeshShape*>(shape);
            const btStridingMeshInterface* mesh = convexMesh->getMeshInterface();
            g.convex = true;
            appendMesh(*mesh, mesh->getScaling(), g);
            g.margin = convexMesh->getMargin();
            break;
        }
    }
    finish(g);
    return g;
}

} // namespace bulletgpu
