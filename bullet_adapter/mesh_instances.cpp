// SPDX-License-Identifier: Zlib
#include "bullet_adapter/mesh_instances.h"

#include <BulletCollision/CollisionShapes/btCollisionShape.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <LinearMath/btTransform.h>

#include <array>
#include <cmath>
#include <stdexcept>

namespace bulletgpu {
namespace {

/// Whether two geometries hold the same mesh.
bool sameMesh(const MeshShapeGeometry& a, const MeshShapeGeometry& b) {
    return a.positions == b.positions && a.indices == b.indices && a.margin == b.margin && a.convex == b.convex;
}

/// Writes a GImpact shape's local box (min, max) to `box`; false for other shapes.
bool gimpactBox(const btCollisionShape* shape, float box[6]) {
    if (shape->getShapeType() != GIMPACT_SHAPE_PROXYTYPE) return false;
    const btAABB& local =
        const_cast<btGImpactShapeInterface*>(static_cast<const btGImpactShapeInterface*>(shape))->getLocalBox();
    for (int k = 0; k < 3; ++k) {
        box[k] = static_cast<float>(local.m_min[k]);
        box[3 + k] = static_cast<float>(local.m_max[k]);
    }
    return true;
}

/// A shape's type, margin and local box: what is compared before trusting an idle entry.
std::array<double, 8> fingerprintOf(const btCollisionShape* shape) {
    btVector3 lo, hi;
    shape->getAabb(btTransform::getIdentity(), lo, hi);
    return {double(shape->getShapeType()), double(shape->getMargin()), lo.x(), lo.y(), lo.z(), hi.x(), hi.y(), hi.z()};
}

} // namespace

bool MeshInstances::refit(Shape& entry, MeshShapeGeometry geometry) {
    if (geometry.indices != entry.geometry.indices) return false;
    entry.geometry = std::move(geometry);
    for (std::uint32_t mesh : entry.meshes) m_set.setPositions(mesh, entry.geometry.positions.data());
    return true;
}

bool MeshInstances::refreshShape(const btCollisionShape* shape) {
    const auto found = m_shapes.find(shape);
    if (found == m_shapes.end() || found->second->live == 0) return false;
    Shape& entry = *found->second;
    gimpactBox(shape, entry.box);
    entry.fingerprint = fingerprintOf(shape);
    return refit(entry, meshGeometryOf(shape));
}

void MeshInstances::followDeformation(std::uint32_t mesh, std::uint64_t pass) {
    Shape& entry = *m_instances[mesh].shape;
    if (entry.checkedPass == pass) return;
    entry.checkedPass = pass;
    const btCollisionShape* shape = m_instances[mesh].key.shape;
    float box[6];
    if (!gimpactBox(shape, box) || std::equal(box, box + 6, entry.box)) return;
    std::copy(box, box + 6, entry.box);
    entry.fingerprint = fingerprintOf(shape);
    try {
        refit(entry, meshGeometryOf(shape));
    } catch (const std::invalid_argument&) {
        // A vertex went non-finite: the engine keeps the last good mesh.
    }
}

MeshInstances::Shape& MeshInstances::shapeEntry(const btCollisionShape* shape) {
    std::unique_ptr<Shape>& entry = m_shapes[shape];
    if (entry && entry->live > 0) return *entry;
    // An idle entry is trusted while the shape's type, margin and local box are unchanged (the
    // memory may since hold another shape); otherwise the shape is read again.
    const std::array<double, 8> print = fingerprintOf(shape);
    if (entry && entry->fingerprint == print) return *entry;
    MeshShapeGeometry geometry = meshGeometryOf(shape);
    if (entry && !sameMesh(entry->geometry, geometry)) m_retired.push_back(std::move(entry));
    if (!entry) {
        entry = std::make_unique<Shape>();
        entry->geometry = std::move(geometry);
        gimpactBox(shape, entry->box);
    }
    entry->fingerprint = print;
    return *entry;
}

std::uint32_t MeshInstances::acquire(const MeshInstanceKey& key) {
    const auto found = m_live.find(key);
    if (found != m_live.end()) {
        ++m_instances[found->second].users;
        return found->second;
    }
    Shape& shape = shapeEntry(key.shape);
    std::uint32_t mesh;
    if (!shape.idle.empty()) {
        mesh = shape.idle.back();
        shape.idle.pop_back();
    } else {
        const MeshShapeGeometry& g = shape.geometry;
        mesh = m_set.addMesh(g.positions.data(), static_cast<std::uint32_t>(g.positions.size() / 3), g.indices.data(),
                             static_cast<std::uint32_t>(g.indices.size() / 3));
        m_instances.resize(mesh + 1);
        m_instances[mesh].shape = &shape;
        shape.meshes.push_back(mesh);
    }
    Instance& instance = m_instances[mesh];
    instance.key = key;
    instance.users = 1;
    ++shape.live;
    m_live.emplace(key, mesh);
    return mesh;
}

void MeshInstances::release(std::uint32_t mesh) {
    Instance& instance = m_instances[mesh];
    if (--instance.users > 0) return;
    m_live.erase(instance.key);
    --instance.shape->live;
    instance.shape->idle.push_back(mesh);
    instance.key = MeshInstanceKey{};
}

bool MeshInstances::place(std::uint32_t mesh, const btTransform& world) {
    double m[12];
    const btMatrix3x3& r = world.getBasis();
    for (int row = 0; row < 3; ++row) {
        for (int col = 0; col < 3; ++col) m[4 * row + col] = r[row][col];
        m[4 * row + 3] = world.getOrigin()[row];
    }
    for (double x : m) {
        if (!std::isfinite(x)) return false;
    }
    Instance& instance = m_instances[mesh];
    if (instance.placed && std::equal(m, m + 12, instance.transform)) return true;
    m_set.setTransform(mesh, m);
    std::copy(m, m + 12, instance.transform);
    instance.placed = true;
    return true;
}

ContactSurface MeshInstances::surface(std::uint32_t mesh) const {
    const Instance& instance = m_instances[mesh];
    const MeshShapeGeometry& g = instance.shape->geometry;
    ContactSurface s;
    s.positions = g.positions.data();
    s.indices = g.indices.data();
    s.faceNormals = g.faceNormals.data();
    s.edgeNormals = g.edgeNormals.data();
    s.edges = g.features.edges.data();
    s.neighbourStarts = g.neighbourStarts.data();
    s.neighbours = g.neighbours.data();
    s.edgeOpposite = g.edgeOpposite.data();
    s.transform = instance.transform;
    s.centre = transformPoint(instance.transform, g.centre);
    s.margin = g.margin;
    s.twoSided = g.twoSided;
    return s;
}

} // namespace bulletgpu
