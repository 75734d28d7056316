// SPDX-License-Identifier: Zlib
#pragma once

#include "bullet_adapter/mesh_shape_geometry.h"
#include "kernels/narrow/geometry/manifold_contact.h"

#include <bulletgpu/TriangleMeshSet.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <vector>

class btCollisionObject;
class btCollisionShape;
class btTransform;

/// The engine meshes that stand for Bullet objects' mesh shapes: one per (collision object,
/// shape, compound part and child), counted by the algorithms that use it. A shape's geometry is
/// read once and kept; when no object uses it, the next user reads it again unless the shape's
/// type, margin and local box are unchanged. A released engine mesh is kept idle and handed to
/// the next object of the same shape (the engine never removes a mesh). The engine meshes are
/// per object because the engine's pair queries read world-frame copies of both meshes.

namespace bulletgpu {

/// What an engine mesh stands for: a wrapper's object, shape, part and index.
struct MeshInstanceKey {
    const btCollisionObject* object = nullptr; ///< The collision object.
    const btCollisionShape* shape = nullptr;   ///< The (child) shape.
    int partId = -1;                           ///< The wrapper's part.
    int index = -1;                            ///< The wrapper's index (compound child).

    /// Strict order (for the map of live instances).
    bool operator<(const MeshInstanceKey& o) const {
        return std::tie(object, shape, partId, index) < std::tie(o.object, o.shape, o.partId, o.index);
    }
};

/// The engine meshes of the objects in a collision world.
class MeshInstances {
public:
    /// Instances whose meshes live in `set` (not owned).
    explicit MeshInstances(TriangleMeshSet& set) : m_set(set) {}

    /// The engine mesh standing for `key`, made or reused; counts one more user. Throws
    /// std::invalid_argument when the shape cannot be read (meshGeometryOf).
    std::uint32_t acquire(const MeshInstanceKey& key);
    /// Counts one user less; at zero the mesh goes idle for its shape's next object.
    void release(std::uint32_t mesh);

    /// Reads the shape of `mesh` again when it is a GImpact shape whose local box changed since
    /// it was read (Bullet's updateBound after postUpdate: a deformed mesh), once per `pass`. A
    /// mesh whose triangles changed, or that can no longer be read, keeps its last geometry.
    void followDeformation(std::uint32_t mesh, std::uint64_t pass);
    /// Reads `shape`'s vertices again and refits every engine mesh made for it (same
    /// triangles). Returns false when the shape is not in use or its triangles changed (then the
    /// old mesh stays). Throws std::invalid_argument as meshGeometryOf does.
    bool refreshShape(const btCollisionShape* shape);

    /// Moves `mesh` to `world` (skipped when unchanged). Returns false, leaving the mesh where it
    /// was, when the transform is not finite.
    bool place(std::uint32_t mesh, const btTransform& world);

    /// The geometry of the shape `mesh` stands for.
    const MeshShapeGeometry& geometry(std::uint32_t mesh) const { return m_instances[mesh].shape->geometry; }
    /// The surface `mesh` presents to the solver contacts, at its last placement.
    ContactSurface surface(std::uint32_t mesh) const;

    /// Engine meshes in use.
    std::size_t liveCount() const { return m_live.size(); }
    /// Engine meshes made (in use and idle).
    std::size_t meshCount() const { return m_instances.size(); }

private:
    /// A shape read once, and its idle engine meshes.
    struct Shape {
        MeshShapeGeometry geometry;          ///< The mesh and its normals.
        std::vector<std::uint32_t> idle;     ///< Engine meshes no object uses.
        std::vector<std::uint32_t> meshes;   ///< Every engine mesh made for it.
        int live = 0;                        ///< Engine meshes in use.
        float box[6] = {0, 0, 0, 0, 0, 0};   ///< A GImpact shape's local box when read.
        std::uint64_t checkedPass = 0;       ///< The pass followDeformation last looked at it.
        std::array<double, 8> fingerprint{}; ///< Type, margin and local box when last checked.
    };
    /// One engine mesh.
    struct Instance {
        Shape* shape = nullptr;                                      ///< Its shape.
        MeshInstanceKey key;                                         ///< What it stands for while used.
        int users = 0;                                               ///< Algorithms using it.
        double transform[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}; ///< Last placement.
        bool placed = false;                                         ///< Placed at least once.
    };

    /// Replaces an entry's geometry with `geometry` read anew and refits its engine meshes;
    /// false when the triangles differ.
    bool refit(Shape& entry, MeshShapeGeometry geometry);
    /// The entry of `shape`, read anew when no object uses it (its memory may hold another shape).
    Shape& shapeEntry(const btCollisionShape* shape);

    TriangleMeshSet& m_set;
    std::unordered_map<const btCollisionShape*, std::unique_ptr<Shape>> m_shapes;
    std::vector<std::unique_ptr<Shape>> m_retired; ///< Entries replaced while idle meshes held them.
    std::map<MeshInstanceKey, std::uint32_t> m_live;
    std::vector<Instance> m_instances; ///< By engine mesh.
};

} // namespace bulletgpu
