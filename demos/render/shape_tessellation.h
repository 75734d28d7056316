// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/render/mesh.h"

class btCollisionShape;
class btSoftBody;

namespace bulletgpu::demo {

/// The finite square drawn for an infinite static plane.
struct PlaneStandIn {
    /// A point in the shape's frame; the square is centred on its projection onto the plane.
    btVector3 centre{0, 0, 0};
    /// Half the side of the square.
    btScalar halfExtent = 1000;
};

/// Appends a collision shape's surface, in the shape's own frame, to a mesh: boxes, spheres,
/// capsules, cylinders and cones (any up axis), convex hulls and other polyhedra, multi-spheres
/// and other convex shapes (through their support function), compounds (children placed by their
/// transforms), triangle meshes and other concave shapes, and static planes (a finite square).
/// Shapes it cannot tessellate add nothing.
void tessellateShape(const btCollisionShape& shape, const PlaneStandIn& plane, Mesh& mesh);

/// Replaces a mesh with a soft body's surface in world space: its faces (cloth, triangle-mesh
/// bodies) or, for bodies without faces (ropes), its links as ribbons turned towards the eye, at
/// least `minHalfWidthPerDistance` times their distance from the eye wide on each side.
void tessellateSoftBody(const btSoftBody& body, const btVector3& eye, double minHalfWidthPerDistance, Mesh& mesh);

} // namespace bulletgpu::demo
