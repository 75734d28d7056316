// SPDX-License-Identifier: Zlib
#include "demos/render/shape_tessellation.h"

#include <BulletCollision/CollisionShapes/btBoxShape.h>
#include <BulletCollision/CollisionShapes/btCapsuleShape.h>
#include <BulletCollision/CollisionShapes/btCompoundShape.h>
#include <BulletCollision/CollisionShapes/btConcaveShape.h>
#include <BulletCollision/CollisionShapes/btConeShape.h>
#include <BulletCollision/CollisionShapes/btConvexPolyhedron.h>
#include <BulletCollision/CollisionShapes/btCylinderShape.h>
#include <BulletCollision/CollisionShapes/btPolyhedralConvexShape.h>
#include <BulletCollision/CollisionShapes/btSphereShape.h>
#include <BulletCollision/CollisionShapes/btStaticPlaneShape.h>
#include <BulletCollision/CollisionShapes/btTriangleCallback.h>
#include <BulletSoftBody/btSoftBody.h>
#include <LinearMath/btConvexHullComputer.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace bulletgpu::demo {

namespace {

constexpr int kSlices = 16;               // segments around round shapes
constexpr int kStacks = 10;               // segments from pole to pole (even, so there is an equator ring)
constexpr btScalar kRopeHalfWidth = 0.03; // smallest half width of a rope ribbon, in world units
constexpr double kPi = 3.14159265358979323846;

/// Maps a vector from a frame whose up axis is y to one whose up axis is `upAxis`, by a cyclic
/// permutation of the axes (a rotation).
btVector3 fromYUp(const btVector3& v, int upAxis) {
    btVector3 out;
    out[upAxis] = v.y();
    out[(upAxis + 1) % 3] = v.z();
    out[(upAxis + 2) % 3] = v.x();
    return out;
}

/// The unit direction at a polar angle from +y and an azimuth around it.
btVector3 sphereDirection(double polar, double azimuth) {
    return btVector3(btScalar(std::sin(polar) * std::cos(azimuth)), btScalar(std::cos(polar)),
                     btScalar(std::sin(polar) * std::sin(azimuth)));
}

/// Appends a latitude-longitude surface: rings of kSlices vertices from the +y pole to the -y pole.
/// `vertexAt(direction, upperHalf, position, normal)` places each vertex from its unit direction
/// (y up). With `splitEquator` the equator ring is emitted twice, once for each half, so the halves
/// can be pulled apart (capsules).
template <typename VertexAt>
void appendLatLong(Mesh& mesh, bool splitEquator, VertexAt vertexAt) {
    const int first = mesh.vertexCount();
    int rings = 0;
    for (int stack = 0; stack <= kStacks; ++stack) {
        const bool equator = stack == kStacks / 2;
        const int copies = equator && splitEquator ? 2 : 1;
        for (int copy = 0; copy < copies; ++copy) {
            const bool upperHalf = stack < kStacks / 2 || (equator && copy == 0);
            for (int slice = 0; slice < kSlices; ++slice) {
                btVector3 position;
                btVector3 normal;
                vertexAt(sphereDirection(kPi * stack / kStacks, 2 * kPi * slice / kSlices), upperHalf, position,
                         normal);
                mesh.addVertex(position, normal);
            }
            ++rings;
        }
    }
    // Quads between neighbouring rings; the pole rings are single points, so one triangle of each
    // quad next to a pole is left out.
    for (int ring = 0; ring + 1 < rings; ++ring) {
        const int top = first + ring * kSlices;
        const int bottom = top + kSlices;
        for (int slice = 0; slice < kSlices; ++slice) {
            const int next = (slice + 1) % kSlices;
            if (ring != 0) mesh.addTriangle(top + slice, bottom + next, top + next);
            if (ring + 2 != rings) mesh.addTriangle(top + slice, bottom + slice, bottom + next);
        }
    }
}

/// A capsule (a sphere when halfHeight is 0) around an axis through the origin.
void appendCapsule(Mesh& mesh, btScalar radius, btScalar halfHeight, int upAxis) {
    appendLatLong(mesh, halfHeight > 0,
                  [&](const btVector3& direction, bool upperHalf, btVector3& position, btVector3& normal) {
                      const btVector3 lift(0, upperHalf ? halfHeight : -halfHeight, 0);
                      position = fromYUp(direction * radius + lift, upAxis);
                      normal = fromYUp(direction, upAxis);
                  });
}

/// Any convex shape through its support function: each vertex is the support point in its direction.
void appendSupportMapped(Mesh& mesh, const btConvexShape& shape) {
    appendLatLong(mesh, false, [&](const btVector3& direction, bool, btVector3& position, btVector3& normal) {
        position = shape.localGetSupportingVertex(direction);
        normal = direction;
    });
}

/// A ring of kSlices vertices around the y axis at a height, with one normal each.
template <typename NormalAt>
int appendRing(Mesh& mesh, btScalar radius, btScalar y, int upAxis, NormalAt normalAt) {
    const int first = mesh.vertexCount();
    for (int slice = 0; slice < kSlices; ++slice) {
        const double azimuth = 2 * kPi * slice / kSlices;
        const btVector3 radial(btScalar(std::cos(azimuth)), 0, btScalar(std::sin(azimuth)));
        mesh.addVertex(fromYUp(radial * radius + btVector3(0, y, 0), upAxis), fromYUp(normalAt(radial), upAxis));
    }
    return first;
}

/// A flat disc around the y axis at a height, facing +y or -y.
void appendDisc(Mesh& mesh, btScalar radius, btScalar y, int upAxis) {
    const btVector3 normal(0, y >= 0 ? 1 : -1, 0);
    const int centre = mesh.addVertex(fromYUp(btVector3(0, y, 0), upAxis), fromYUp(normal, upAxis));
    const int ring = appendRing(mesh, radius, y, upAxis, [&](const btVector3&) { return normal; });
    for (int slice = 0; slice < kSlices; ++slice) mesh.addTriangle(centre, ring + slice, ring + (slice + 1) % kSlices);
}

/// Side quads between two rings of kSlices vertices.
void appendBand(Mesh& mesh, int upperRing, int lowerRing) {
    for (int slice = 0; slice < kSlices; ++slice) {
        const int next = (slice + 1) % kSlices;
        mesh.addTriangle(upperRing + slice, lowerRing + slice, lowerRing + next);
        mesh.addTriangle(upperRing + slice, lowerRing + next, upperRing + next);
    }
}

/// A closed cylinder around an axis through the origin.
void appendCylinder(Mesh& mesh, btScalar radius, btScalar halfHeight, int upAxis) {
    const auto radialNormal = [](const btVector3& radial) { return radial; };
    const int upper = appendRing(mesh, radius, halfHeight, upAxis, radialNormal);
    const int lower = appendRing(mesh, radius, -halfHeight, upAxis, radialNormal);
    appendBand(mesh, upper, lower);
    appendDisc(mesh, radius, halfHeight, upAxis);
    appendDisc(mesh, radius, -halfHeight, upAxis);
}

/// A cone with its apex at +height/2 and its base at -height/2 along the up axis.
void appendCone(Mesh& mesh, btScalar radius, btScalar height, int upAxis) {
    const auto slantNormal = [&](const btVector3& radial) {
        return (radial * height + btVector3(0, radius, 0)).normalized();
    };
    // The apex gets one vertex per slice so each side strip keeps its own normal.
    const int apex = appendRing(mesh, 0, height / 2, upAxis, slantNormal);
    const int base = appendRing(mesh, radius, -height / 2, upAxis, slantNormal);
    for (int slice = 0; slice < kSlices; ++slice) {
        mesh.addTriangle(apex + slice, base + slice, base + (slice + 1) % kSlices);
    }
    appendDisc(mesh, radius, -height / 2, upAxis);
}

/// A box of the given half extents around the origin, one flat quad per face.
void appendBox(Mesh& mesh, const btVector3& half) {
    for (int axis = 0; axis < 3; ++axis) {
        const int u = (axis + 1) % 3;
        const int v = (axis + 2) % 3;
        for (const btScalar sign : {btScalar(1), btScalar(-1)}) {
            btVector3 normal(0, 0, 0);
            normal[axis] = sign;
            int corners[4];
            for (int k = 0; k < 4; ++k) {
                btVector3 corner = normal * half[axis];
                corner[u] = (k == 1 || k == 2) ? half[u] : -half[u];
                corner[v] = k >= 2 ? half[v] : -half[v];
                corners[k] = mesh.addVertex(corner, normal);
            }
            mesh.addTriangle(corners[0], corners[1], corners[2]);
            mesh.addTriangle(corners[0], corners[2], corners[3]);
        }
    }
}

/// One flat convex polygon of a convex solid, fanned into triangles, its normal turned away from
/// a point inside the solid.
void appendConvexFace(Mesh& mesh, const std::vector<btVector3>& polygon, const btVector3& interior) {
    if (polygon.size() < 3) return;
    btVector3 normal(0, 0, 0); // Newell's method
    btVector3 centroid(0, 0, 0);
    for (std::size_t i = 0; i < polygon.size(); ++i) {
        normal += polygon[i].cross(polygon[(i + 1) % polygon.size()]);
        centroid += polygon[i];
    }
    if (!(normal.length2() > 0)) return;
    normal.normalize();
    centroid /= btScalar(polygon.size());
    if (normal.dot(centroid - interior) < 0) normal = -normal;
    const int first = mesh.addVertex(polygon[0], normal);
    for (std::size_t i = 1; i < polygon.size(); ++i) mesh.addVertex(polygon[i], normal);
    for (int i = 1; i + 1 < static_cast<int>(polygon.size()); ++i) mesh.addTriangle(first, first + i, first + i + 1);
}

/// The mean of some points.
btVector3 meanOf(const btVector3* points, int count) {
    btVector3 sum(0, 0, 0);
    for (int i = 0; i < count; ++i) sum += points[i];
    return count > 0 ? sum / btScalar(count) : sum;
}

/// A convex polyhedron: its precomputed faces when initializePolyhedralFeatures was called,
/// otherwise the convex hull of its vertices.
void appendPolyhedron(Mesh& mesh, const btPolyhedralConvexShape& shape) {
    std::vector<btVector3> polygon;
    if (const btConvexPolyhedron* polyhedron = shape.getConvexPolyhedron()) {
        const btVector3 interior = meanOf(&polyhedron->m_vertices[0], polyhedron->m_vertices.size());
        for (int f = 0; f < polyhedron->m_faces.size(); ++f) {
            const btFace& face = polyhedron->m_faces[f];
            polygon.clear();
            for (int i = 0; i < face.m_indices.size(); ++i)
                polygon.push_back(polyhedron->m_vertices[face.m_indices[i]]);
            appendConvexFace(mesh, polygon, interior);
        }
        return;
    }
    std::vector<btVector3> points(static_cast<std::size_t>(std::max(shape.getNumVertices(), 0)));
    for (std::size_t i = 0; i < points.size(); ++i) shape.getVertex(static_cast<int>(i), points[i]);
    if (points.size() < 3) return;
    btConvexHullComputer hull;
    hull.compute(points[0].m_floats, sizeof(btVector3), static_cast<int>(points.size()), 0, 0);
    const btVector3 interior = meanOf(&hull.vertices[0], hull.vertices.size());
    for (int f = 0; f < hull.faces.size(); ++f) {
        polygon.clear();
        const btConvexHullComputer::Edge* start = &hull.edges[hull.faces[f]];
        const btConvexHullComputer::Edge* edge = start;
        do {
            polygon.push_back(hull.vertices[edge->getSourceVertex()]);
            edge = edge->getNextEdgeOfFace();
        } while (edge != start);
        appendConvexFace(mesh, polygon, interior);
    }
}

/// Collects the triangles a concave shape reports, each flat.
class TriangleCollector final : public btTriangleCallback {
public:
    explicit TriangleCollector(Mesh& mesh) : m_mesh(mesh) {}

    void processTriangle(btVector3* triangle, int, int) override {
        btVector3 normal = (triangle[1] - triangle[0]).cross(triangle[2] - triangle[0]);
        if (!(normal.length2() > 0)) return;
        normal.normalize();
        const int first = m_mesh.addVertex(triangle[0], normal);
        m_mesh.addVertex(triangle[1], normal);
        m_mesh.addVertex(triangle[2], normal);
        m_mesh.addTriangle(first, first + 1, first + 2);
    }

private:
    Mesh& m_mesh;
};

/// Every triangle of a concave shape (triangle meshes, height fields, GImpact meshes).
void appendConcave(Mesh& mesh, const btConcaveShape& shape) {
    btVector3 aabbMin;
    btVector3 aabbMax;
    btTransform identity;
    identity.setIdentity();
    shape.getAabb(identity, aabbMin, aabbMax);
    const btVector3 margin(1, 1, 1);
    TriangleCollector collector(mesh);
    shape.processAllTriangles(&collector, aabbMin - margin, aabbMax + margin);
    mesh.twoSided = true;
}

/// A finite square of an infinite plane.
void appendPlane(Mesh& mesh, const btStaticPlaneShape& plane, const PlaneStandIn& standIn) {
    const btVector3& planeNormal = plane.getPlaneNormal();
    if (!(planeNormal.length2() > 0)) return;
    const btVector3 normal = planeNormal.normalized();
    const btVector3 centre = standIn.centre - (normal.dot(standIn.centre) - plane.getPlaneConstant()) * normal;
    btVector3 u;
    btVector3 v;
    btPlaneSpace1(normal, u, v);
    u *= standIn.halfExtent;
    v *= standIn.halfExtent;
    const int first = mesh.addVertex(centre - u - v, normal);
    mesh.addVertex(centre + u - v, normal);
    mesh.addVertex(centre + u + v, normal);
    mesh.addVertex(centre - u + v, normal);
    mesh.addTriangle(first, first + 1, first + 2);
    mesh.addTriangle(first, first + 2, first + 3);
    mesh.twoSided = true;
}

/// A compound's children, each tessellated in its own frame and then moved by its child transform.
void appendCompound(Mesh& mesh, const btCompoundShape& compound, const PlaneStandIn& standIn) {
    for (int i = 0; i < compound.getNumChildShapes(); ++i) {
        const btTransform& childTransform = compound.getChildTransform(i);
        PlaneStandIn childStandIn = standIn;
        childStandIn.centre = childTransform.invXform(standIn.centre);
        const int first = mesh.vertexCount();
        tessellateShape(*compound.getChildShape(i), childStandIn, mesh);
        mesh.transformFrom(first, childTransform);
    }
}

} // namespace

void tessellateShape(const btCollisionShape& shape, const PlaneStandIn& plane, Mesh& mesh) {
    switch (shape.getShapeType()) {
        case BOX_SHAPE_PROXYTYPE:
            appendBox(mesh, static_cast<const btBoxShape&>(shape).getHalfExtentsWithMargin());
            return;
        case SPHERE_SHAPE_PROXYTYPE:
            appendCapsule(mesh, static_cast<const btSphereShape&>(shape).getRadius(), 0, 1);
            return;
        case CAPSULE_SHAPE_PROXYTYPE: {
            const auto& capsule = static_cast<const btCapsuleShape&>(shape);
            appendCapsule(mesh, capsule.getRadius(), capsule.getHalfHeight(), capsule.getUpAxis());
            return;
        }
        case CYLINDER_SHAPE_PROXYTYPE: {
            const auto& cylinder = static_cast<const btCylinderShape&>(shape);
            const int upAxis = cylinder.getUpAxis();
            appendCylinder(mesh, cylinder.getRadius(), cylinder.getHalfExtentsWithMargin()[upAxis], upAxis);
            return;
        }
        case CONE_SHAPE_PROXYTYPE: {
            const auto& cone = static_cast<const btConeShape&>(shape);
            appendCone(mesh, cone.getRadius(), cone.getHeight(), cone.getConeUpIndex());
            return;
        }
        case COMPOUND_SHAPE_PROXYTYPE:
            appendCompound(mesh, static_cast<const btCompoundShape&>(shape), plane);
            return;
        case STATIC_PLANE_PROXYTYPE:
            appendPlane(mesh, static_cast<const btStaticPlaneShape&>(shape), plane);
            return;
        default:
            break;
    }
    if (const auto* polyhedral = dynamic_cast<const btPolyhedralConvexShape*>(&shape)) {
        appendPolyhedron(mesh, *polyhedral);
    } else if (const auto* convex = dynamic_cast<const btConvexShape*>(&shape)) {
        appendSupportMapped(mesh, *convex);
    } else if (const auto* concave = dynamic_cast<const btConcaveShape*>(&shape)) {
        appendConcave(mesh, *concave);
    }
}

void tessellateSoftBody(const btSoftBody& body, const btVector3& eye, double minHalfWidthPerDistance, Mesh& mesh) {
    mesh.clear();
    mesh.twoSided = true;
    const btSoftBody::tNodeArray& nodes = body.m_nodes;
    if (nodes.size() == 0) return;

    if (body.m_faces.size() > 0) {
        // Shared vertices with area-weighted normals, so cloth shades smoothly.
        for (int i = 0; i < nodes.size(); ++i) mesh.addVertex(nodes[i].m_x, btVector3(0, 0, 0));
        const btSoftBody::Node* base = &nodes[0];
        for (int f = 0; f < body.m_faces.size(); ++f) {
            const btSoftBody::Face& face = body.m_faces[f];
            const int a = static_cast<int>(face.m_n[0] - base);
            const int b = static_cast<int>(face.m_n[1] - base);
            const int c = static_cast<int>(face.m_n[2] - base);
            const btVector3 normal = (nodes[b].m_x - nodes[a].m_x).cross(nodes[c].m_x - nodes[a].m_x);
            for (const int corner : {a, b, c}) mesh.normals[static_cast<std::size_t>(corner)] += normal;
            mesh.addTriangle(a, b, c);
        }
        for (btVector3& normal : mesh.normals) {
            if (normal.length2() > 0) normal.normalize();
        }
        return;
    }

    for (int l = 0; l < body.m_links.size(); ++l) {
        const btVector3& a = body.m_links[l].m_n[0]->m_x;
        const btVector3& b = body.m_links[l].m_n[1]->m_x;
        const btVector3 along = b - a;
        const btVector3 toEye = eye - (a + b) * btScalar(0.5);
        btVector3 side = along.cross(toEye);
        if (!(side.length2() > 0)) continue;
        const btScalar halfWidth = std::max(kRopeHalfWidth, btScalar(minHalfWidthPerDistance * double(toEye.length())));
        side *= halfWidth / side.length();
        btVector3 normal = side.cross(along).normalized();
        if (normal.dot(toEye) < 0) normal = -normal;
        const int first = mesh.addVertex(a - side, normal);
        mesh.addVertex(a + side, normal);
        mesh.addVertex(b + side, normal);
        mesh.addVertex(b - side, normal);
        mesh.addTriangle(first, first + 1, first + 2);
        mesh.addTriangle(first, first + 2, first + 3);
    }
}

} // namespace bulletgpu::demo
