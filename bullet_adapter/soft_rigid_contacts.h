// SPDX-License-Identifier: Zlib
#pragma once

#include "bullet_adapter/mesh_face_contacts.h"
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

/// Bullet's RContact `c` for node `n` of `body` against `object` (at `world`) with contact normal
/// `normal` and plane offset `offset`, as CollideSDF_RS fills it; false when neither side can move.
bool makeRigidContact(btSoftBody& body, btSoftBody::Node& n, const btCollisionObject* object, const btTransform& world,
                      const btVector3& normal, btScalar offset, btSoftBody::RContact& c);

/// A node against one triangle, before Bullet's record is made.
struct SoftRigidCandidate {
    btVector3 onMesh;     ///< Closest point of the triangle.
    btVector3 normal;     ///< Unit normal towards the side the node keeps.
    btScalar separation;  ///< Distance along it, negative when the node went through.
    bool behind;          ///< Behind the triangle's plane, seen from the side it keeps.
    bool penetrating;     ///< Went through the triangle, or lies straight behind a closed mesh's face.
    btVector3 corners[3]; ///< The triangle (world frame).
    btVector3 face;       ///< Its unit normal towards the side kept.
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
    /// the mesh's margin of a triangle gets a contact towards the side it keeps: a closed mesh's
    /// outside; on an open mesh the side of the winding remembered while the node stays in reach,
    /// else the side its step-start position m_q is on. A node whose segment from m_q to m_x
    /// crosses a triangle gets a negative distance, and so does one lying straight behind the
    /// face of a closed mesh (or of a settled side) that is its closest triangle: over a part
    /// thinner than the reach a node lies straight behind the far side's faces too.
    void generate();

    /// After Bullet's solve: moves every node that ended on the wrong side of the triangles it
    /// had in reach (behind a triangle it went through since the step's start, or behind the
    /// normal at its closest
    /// point: a face's, an edge's two faces', a vertex's fan; on the side it keeps, see generate;
    /// boundary edges excepted) or behind the plane of a penetrating contact back in front of it,
    /// and changes its velocity by the move over the step (pinned nodes stay).
    void keepSides();

    /// Contacts made by the last generate.
    std::uint64_t contactCount() const { return m_contactCount; }
    /// Engine queries run by the last generate.
    std::uint32_t queryCount() const { return m_queryCount; }
    /// Node moves made by the last keepSides.
    std::uint64_t projectedCount() const { return m_projectedCount; }
    /// The pairs of an active body with faces and a closed mesh the last generate collided, for
    /// MeshFaceContacts (open meshes are left out).
    const std::vector<SoftMeshFacePair>& facePairs() const { return m_facePairs; }

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
        MeshInstanceKey key;  ///< The object and shape.
        std::uint32_t mesh;   ///< Its engine mesh.
        bool touched;         ///< Touched in this generate.
        std::uint64_t serial; ///< Which acquisition it is (SoftMeshFacePair::serial).
    };

    /// The engine mesh of `touch`'s object, acquired when it has none (`serial`: the acquisition's).
    std::uint32_t meshOf(const Touch& touch, std::uint64_t& serial);
    /// Runs the query of the touches [begin, end) (one object) and appends their contacts.
    void collideMesh(std::size_t begin, std::size_t end);
    /// Appends the contacts of `node` of `touch`'s body from m_contacts[begin, end) (its
    /// triangles of `g`), keeping the side `remembered` from the last step (0: none), and returns
    /// the side kept (+1 in front of the winding, -1 behind).
    std::int8_t collideNode(const Touch& touch, std::uint32_t node, std::size_t begin, std::size_t end,
                            std::int8_t remembered, const MeshShapeGeometry& g);
    /// The side memory of `touch`'s body against its object, made when missing.
    std::vector<std::int8_t>& sidesOf(const Touch& touch);
    /// Appends `n`'s contacts from m_candidates (within `contactDistance`, one per closest point).
    void addNodeContacts(btSoftBody& body, btSoftBody::Node& n, const btCollisionObject* object,
                         const btTransform& world, btScalar contactDistance);
    /// Releases the meshes of objects, and the side memories of pairs, not touched in this generate.
    void releaseUntouched();

    /// A penetrating contact's plane, which keepSides holds its node in front of.
    struct Surface {
        btSoftBody* body;       ///< The soft body.
        btSoftBody::Node* node; ///< Its node.
        btVector3 normal;       ///< Unit normal towards the side kept.
        btVector3 point;        ///< The contact's closest point.
    };
    /// A triangle in a node's reach, for keepSides.
    struct SideTriangle {
        btVector3 corners[3];      ///< World frame.
        btVector3 face;            ///< Unit normal towards the node's side.
        std::uint32_t vertices[3]; ///< The mesh's vertex indices (to find shared edges).
    };
    /// A node and its triangles m_sideTriangles[first, first + count).
    struct NodeSides {
        btSoftBody* body;       ///< The soft body.
        btSoftBody::Node* node; ///< Its node.
        btVector3 start;        ///< Its position at the step's start (m_q before Bullet's solve).
        std::uint32_t first;    ///< First triangle.
        std::uint32_t count;    ///< Triangles.
    };
    /// The side of an open mesh each node of a body keeps, while it stays in reach of the mesh.
    struct Sides {
        const btCollisionObject* object; ///< The mesh's collision object.
        const btSoftBody* body;          ///< The soft body.
        std::vector<std::int8_t> sides;  ///< Per node: +1 in front of the winding, -1 behind, 0 none.
        bool touched;                    ///< Touched in this generate.
    };

    /// The closest point of `node`'s triangles to its m_x and the sum of the face normals of
    /// the triangles sharing it (a face's, an edge's two, a vertex's fan): the node is on the
    /// wrong side when behind that normal. False when the point is on the mesh's boundary (an
    /// edge of one triangle only), which a node may pass around.
    bool closestSide(const NodeSides& node, btVector3& closest, btVector3& normal);

    TriangleMeshSet m_set;                        ///< The engine.
    MeshInstances m_instances;                    ///< The mesh objects' engine meshes.
    std::vector<Touch> m_touches;                 ///< This step's gathered calls.
    std::vector<Held> m_held;                     ///< Engine meshes kept for objects.
    std::vector<Sides> m_sides;                   ///< Side memories per (object, body).
    std::vector<Surface> m_surfaces;              ///< This step's penetrating contacts, for keepSides.
    std::vector<SideTriangle> m_sideTriangles;    ///< This step's triangles in reach, by node.
    std::vector<NodeSides> m_nodeSides;           ///< This step's nodes in reach of a mesh.
    std::vector<btVector3> m_closest;             ///< closestSide's closest points.
    std::vector<std::uint64_t> m_edges;           ///< closestSide's edges through the point.
    std::vector<std::int8_t> m_previousSides;     ///< One body's memory from the last step.
    std::vector<float> m_points;                  ///< Nodes of one query.
    std::vector<std::uint32_t> m_bodyStarts;      ///< First point of each touch of the query.
    std::vector<PointContact> m_contacts;         ///< The query's contacts.
    std::vector<SoftRigidCandidate> m_candidates; ///< One node's triangles.
    std::vector<btVector3> m_accepted;            ///< Closest points already used for a node.
    std::vector<SoftMeshFacePair> m_facePairs;    ///< facePairs().
    std::uint64_t m_acquisitions = 0;             ///< Engine meshes acquired so far.
    std::uint64_t m_contactCount = 0;             ///< contactCount().
    std::uint32_t m_queryCount = 0;               ///< queryCount().
    std::uint64_t m_projectedCount = 0;           ///< projectedCount().
};

} // namespace bulletgpu
