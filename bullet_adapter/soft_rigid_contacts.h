// SPDX-License-Identifier: Zlib
#pragma once

#include "bullet_adapter/mesh_instances.h"

#include <bulletgpu/TriangleMeshSet.h>

#include <BulletSoftBody/btSoftBody.h>
#include <LinearMath/btTransform.h>

#include <cstdint>
#include <vector>

class btCollisionObject;
struct btCollisionObjectWrapper;

/// Soft bodies' nodes against rigid triangle meshes on the narrow engine, in place of Bullet's
/// prism path (btSoftBodyConcaveCollisionAlgorithm, one 6-point hull per triangle and the sparse
/// SDF against it). The soft-rigid algorithm's calls are gathered during collision detection;
/// at the start of the soft solve one points-against-mesh query per mesh object, with the nodes
/// of every soft body touching it, gives the btSoftBody::RContacts CollideSDF_RS would make.

namespace bulletgpu {

/// Whether the soft-rigid call of `body` against `wrap` is taken over: the body collides
/// rigid bodies by SDF_RS and the wrapper's object has a btBvhTriangleMeshShape,
/// btScaledBvhTriangleMeshShape or btGImpactMeshShape (the call comes once per triangle prism
/// from btSoftBodyConcaveCollisionAlgorithm, or once with the mesh itself).
bool isSoftMeshCall(const btSoftBody* body, const btCollisionObjectWrapper* wrap);

/// A node against one triangle, before Bullet's record is made.
struct SoftRigidCandidate {
    btVector3 onMesh;    ///< Closest point of the triangle.
    btVector3 normal;    ///< Unit normal towards the side the node keeps.
    btScalar separation; ///< Distance along it, negative when the node went through.
    bool behind;         ///< Behind the triangle's plane, seen from the side it keeps.
    bool penetrating;    ///< Went through the triangle, or lies straight behind a closed mesh's face.
};

/// The soft bodies' contacts with the rigid meshes of a world.
class SoftRigidContacts {
public:
    /// An engine on `backend` (`threadsOrDevice` as TriangleMeshSet takes it).
    SoftRigidContacts(Backend backend, int threadsOrDevice);

    /// Records that `body` touches the mesh object of `wrap` this step, at the wrapper's
    /// transform (a call isSoftMeshCall accepts; repeated calls count once).
    void gather(btSoftBody* body, const btCollisionObjectWrapper* wrap);

    /// Appends to every active gathered body's m_rcontacts the contacts of its nodes with the
    /// meshes it touches (one engine query per mesh object), then forgets the gathered calls and
    /// frees the engine meshes of objects no body touched. A node within the body's margin plus
    /// the mesh's margin of a triangle gets a contact, on the side its step-start position m_q
    /// was on where the segment from m_q to m_x crosses the triangle (closed meshes: outside).
    void generate();

    /// Contacts made by the last generate.
    std::uint64_t contactCount() const { return m_contactCount; }
    /// Engine queries run by the last generate.
    std::uint32_t queryCount() const { return m_queryCount; }

private:
    /// One gathered (body, mesh object) pair.
    struct Touch {
        const btCollisionObject* object; ///< The mesh's collision object.
        const btCollisionShape* shape;   ///< Its mesh shape.
        btSoftBody* body;                ///< The soft body.
        btTransform transform;           ///< The mesh's world transform at collision detection.
    };
    /// An engine mesh kept for an object.
    struct Held {
        MeshInstanceKey key; ///< The object and shape.
        std::uint32_t mesh;  ///< Its engine mesh.
        bool touched;        ///< Touched in this generate.
    };

    /// The engine mesh of `touch`'s object, acquired when it has none.
    std::uint32_t meshOf(const Touch& touch);
    /// Runs the query of the touches [begin, end) (one object) and appends their contacts.
    void collideMesh(std::size_t begin, std::size_t end);
    /// Appends `n`'s contacts from m_candidates (within `contactDistance`, one per closest point).
    void addNodeContacts(btSoftBody& body, btSoftBody::Node& n, const btCollisionObject* object,
                         const btTransform& world, btScalar contactDistance);
    /// Releases the meshes of objects not touched in this generate.
    void releaseUntouched();

    TriangleMeshSet m_set;
    MeshInstances m_instances;
    std::vector<Touch> m_touches;
    std::vector<Held> m_held;
    std::vector<float> m_points;                  ///< Nodes of one query.
    std::vector<std::uint32_t> m_bodyStarts;      ///< First point of each touch of the query.
    std::vector<PointContact> m_contacts;         ///< The query's contacts.
    std::vector<SoftRigidCandidate> m_candidates; ///< One node's triangles.
    std::vector<btVector3> m_accepted;            ///< Closest points already used for a node.
    std::uint64_t m_contactCount = 0;
    std::uint32_t m_queryCount = 0;
};

} // namespace bulletgpu
