// SPDX-License-Identifier: Zlib
#include "demos/scene/generator.h"

#include <LinearMath/btConvexHullComputer.h>
#include <LinearMath/btGeometryUtil.h>

#include <algorithm>

namespace bulletgpu::demo {

namespace {

btScalar radicalInverse(int index, int base) {
    double result = 0;
    double fraction = 1.0 / base;
    for (int i = index; i > 0; i /= base) {
        result += fraction * (i % base);
        fraction /= base;
    }
    return btScalar(result);
}

// The corners of the Voronoi cell of points[cell] inside the cube [-half, half]^3. Only the
// nearest neighbours are used as long as the cell stays closer to its point than half their
// distance (farther points cannot cut it); otherwise more neighbours are taken.
btAlignedObjectArray<btVector3> cellCorners(const std::vector<btVector3>& points, size_t cell, btScalar half) {
    const btVector3& site = points[cell];
    std::vector<size_t> neighbours;
    for (size_t j = 0; j < points.size(); ++j) {
        if (j != cell) neighbours.push_back(j);
    }
    std::sort(neighbours.begin(), neighbours.end(),
              [&](size_t a, size_t b) { return site.distance2(points[a]) < site.distance2(points[b]); });
    size_t used = std::min<size_t>(neighbours.size(), 24);
    for (;;) {
        btAlignedObjectArray<btVector3> planes;
        for (int axis = 0; axis < 3; ++axis) {
            btVector3 normal(0, 0, 0);
            normal[axis] = 1;
            planes.push_back(btVector4(normal.x(), normal.y(), normal.z(), -half));
            planes.push_back(btVector4(-normal.x(), -normal.y(), -normal.z(), -half));
        }
        for (size_t n = 0; n < used; ++n) {
            const btVector3& other = points[neighbours[n]];
            const btVector3 normal = (other - site).normalized();
            planes.push_back(
                btVector4(normal.x(), normal.y(), normal.z(), -normal.dot((site + other) * btScalar(0.5))));
        }
        btAlignedObjectArray<btVector3> candidates;
        btGeometryUtil::getVerticesFromPlaneEquations(planes, candidates);
        // Bullet accepts intersections up to 0.01 outside a plane; keep only the true corners.
        btAlignedObjectArray<btVector3> corners;
        for (int i = 0; i < candidates.size(); ++i) {
            bool inside = true;
            for (int p = 0; p < planes.size() && inside; ++p) {
                inside = planes[p].dot(candidates[i]) + planes[p][3] <= btScalar(1e-4);
            }
            if (inside) corners.push_back(candidates[i]);
        }
        btScalar reach = 0;
        for (int i = 0; i < corners.size(); ++i) reach = std::max(reach, corners[i].distance(site));
        if (used == neighbours.size() || site.distance(points[neighbours[used]]) > 2 * reach) return corners;
        used = std::min(neighbours.size(), used * 2);
    }
}

// Volume and centroid of the convex hull, by a fan of tetrahedra from its first vertex.
std::pair<btScalar, btVector3> volumeAndCentroid(const btConvexHullComputer& hull) {
    const btVector3& apex = hull.vertices[0];
    btScalar volume = 0;
    btVector3 moment(0, 0, 0);
    for (int f = 0; f < hull.faces.size(); ++f) {
        const btConvexHullComputer::Edge* first = &hull.edges[hull.faces[f]];
        const btVector3& a = hull.vertices[first->getSourceVertex()];
        const btConvexHullComputer::Edge* edge = first->getNextEdgeOfFace();
        while (edge->getTargetVertex() != first->getSourceVertex()) {
            const btVector3& b = hull.vertices[edge->getSourceVertex()];
            const btVector3& c = hull.vertices[edge->getTargetVertex()];
            const btScalar tetra = btFabs((a - apex).dot((b - apex).cross(c - apex))) / 6;
            volume += tetra;
            moment += tetra * (apex + a + b + c) / 4;
            edge = edge->getNextEdgeOfFace();
        }
    }
    return {volume, volume > 0 ? moment / volume : apex};
}

} // namespace

void generateVoronoiPack(const JsonReader& params, GeneratorContext& context) {
    const int cells = params.positiveInt("cells", 90);
    const btScalar half = btScalar(params.positiveNumber("halfExtent", 1));
    const btScalar fallHeight = btScalar(params.number("fallHeight", 3.5));
    const btScalar margin = btScalar(params.number("margin", 0.04));
    const btScalar friction = btScalar(params.number("friction", 0.6));
    const btScalar density = btScalar(params.positiveNumber("density", 1));
    const bool polyhedral = params.boolean("polyhedral", true);
    if (cells < 2) params.at("cells").fail("expected at least 2 cells");
    std::vector<btVector3> points;
    for (int i = 1; i <= cells; ++i) {
        points.emplace_back((2 * radicalInverse(i, 2) - 1) * half, (2 * radicalInverse(i, 3) - 1) * half,
                            (2 * radicalInverse(i, 5) - 1) * half);
    }
    for (size_t cell = 0; cell < points.size(); ++cell) {
        const btAlignedObjectArray<btVector3> corners = cellCorners(points, cell, half);
        btConvexHullComputer hull;
        hull.compute(&corners[0].getX(), sizeof(btVector3), corners.size(), 0, 0);
        const auto [volume, centroid] = volumeAndCentroid(hull);
        auto shape = std::make_unique<btConvexHullShape>();
        for (int v = 0; v < hull.vertices.size(); ++v) shape->addPoint(hull.vertices[v] - centroid, false);
        shape->recalcLocalAabb();
        if (polyhedral) shape->initializePolyhedralFeatures();
        shape->setMargin(margin);
        btCollisionShape* owned = context.content.addShape(std::move(shape));
        const btTransform transform(btQuaternion::getIdentity(), centroid + btVector3(0, fallHeight, 0));
        btRigidBody* body = context.content.addRigidBody(volume * density, transform, owned, false);
        body->setFriction(friction);
    }
}

} // namespace bulletgpu::demo
