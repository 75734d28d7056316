// SPDX-License-Identifier: Zlib
#pragma once

#include "bullet_adapter/mesh_shape_geometry.h"
#include "bullet_adapter/soft_body_meshes.h"

#include <bulletgpu/TriangleMeshSet.h>

#include <LinearMath/btTransform.h>

#include <cstdint>
#include <vector>

class btCollisionObject;
class btSoftBody;

/// Rigid mesh vertices against soft bodies' faces. The node contacts
/// (bullet_adapter/soft_rigid_contacts.h) keep nodes out of a mesh, but a sharp feature (a
/// spike's apex, an ear's tip) can come through a face between nodes, where no node is near it.
/// Here every vertex of a closed mesh near a soft body is a point of the engine's
/// points-against-mesh query against the body's faces (an engine mesh following its nodes). The
/// faces it meets get, before Bullet's solve, one RContact per node that holds the node as if it
/// were at the face's closest point (so Bullet's links and contacts are solved together), and
/// after the solve the closest is pushed away from the vertex to the contact reach, its nodes
/// moved in proportion to their inverse masses and barycentric weights (position-based dynamics).

namespace bulletgpu {

/// A soft body with faces that touched a closed rigid mesh this step.
struct SoftMeshFacePair {
    btSoftBody* body;                  ///< The soft body.
    const btCollisionObject* object;   ///< The mesh's collision object.
    const MeshShapeGeometry* geometry; ///< The mesh, shape frame (valid until the next generate).
    std::uint64_t serial;              ///< Changes whenever the mesh was read anew (keys its vertex normals).
    btTransform transform;             ///< The mesh's world transform.
    btScalar reach;                    ///< Contact reach: the body's margin plus the mesh's.
};

/// The vertex-face contacts of closed rigid meshes against soft bodies' faces.
class MeshFaceContacts {
public:
    /// An engine on `backend` (`threadsOrDevice` as TriangleMeshSet takes it).
    MeshFaceContacts(Backend backend, int threadsOrDevice);

    /// Before Bullet's solve, for every pair (in order): the mesh's vertices within the body's
    /// bounding box, grown by the reach plus the largest node move |m_x - m_q|, find the body's
    /// faces within that distance. A vertex meets such a face when it is less than the reach from
    /// the face's plane on the side it was on at the step's start (m_q), and the face moving away
    /// from it moves outward from the mesh (along the vertex's outward normal, the area-weighted
    /// normal of its triangle fan). A closest point at a node counts too: the node's own contacts
    /// did not hold a spike's apex right under it. Each node of a face a vertex meets gets an
    /// RContact along the face's normal whose plane lies as far from the node as the reach plane
    /// from the face's closest point (CollideSDF_RS's other fields), without sliding (friction
    /// term m_c3 = 0) when none of the face's nodes has a contact of its own with the mesh (the
    /// vertex alone holds the face, as a spike's apex does).
    void addContacts(const std::vector<SoftMeshFacePair>& pairs);

    /// After Bullet's solve, the same search at the solved positions; the closest face of each
    /// vertex, when the vertex meets it, is pushed along its normal to the reach. Each moved
    /// node's velocity changes by its move over the step; pinned nodes stay. Four passes,
    /// vertices in order.
    void respond(const std::vector<SoftMeshFacePair>& pairs);

    /// RContacts made by the last addContacts.
    std::uint64_t contactCount() const { return m_contactCount; }
    /// Face pushes made by the last respond.
    std::uint64_t pushCount() const { return m_pushCount; }

private:
    /// A rigid mesh's outward vertex normals, kept while its pairs come every step.
    struct VertexNormals {
        std::uint64_t serial = 0;   ///< The mesh reading they belong to.
        std::vector<float> normals; ///< Unit x, y, z per vertex (zero when its fan has no area).
        bool used = false;          ///< Used by this respond.
    };
    /// A vertex in reach of a body and its candidate faces m_contacts[begin, end).
    struct Vertex {
        btVector3 position; ///< World frame.
        btVector3 normal;   ///< Outward unit normal, world frame.
        std::size_t begin;  ///< First candidate.
        std::size_t end;    ///< One past the last.
    };

    /// The vertex normals of `pair`'s mesh, computed when its reading is new.
    const std::vector<float>& normalsOf(const SoftMeshFacePair& pair);
    /// Gathers `pair`'s vertices in reach and their candidate faces into m_vertices.
    void findVertices(const SoftMeshFacePair& pair, const std::vector<float>& normals);
    /// A face a vertex meets.
    struct Meeting {
        int face = -1;                 ///< The face of the body.
        double weights[3] = {0, 0, 0}; ///< Barycentric weights of its closest point q.
        btVector3 q;                   ///< That point.
        btVector3 away;                ///< The face's unit normal away from the vertex.
        btScalar gap = 0;              ///< (q - vertex) . away, less than the reach.
    };
    /// Whether `vertex` meets `face` of `body` within `reach` (see addContacts), `out` filled.
    bool meetFace(const btSoftBody& body, const Vertex& vertex, int face, btScalar reach, Meeting& out) const;
    /// The closest of `vertex`'s candidate faces of `body`, when the vertex meets it.
    bool meet(const btSoftBody& body, const Vertex& vertex, btScalar reach, Meeting& out) const;
    /// Adds the RContacts of `pair`'s body for the face `vertex` meets.
    void addFaceContacts(const SoftMeshFacePair& pair, const Vertex& vertex, const Meeting& m);
    /// Pushes the face `vertex` meets away from it to `reach` (see respond).
    void push(btSoftBody& body, const Vertex& vertex, btScalar reach);

    SoftBodyMeshes m_meshes;              ///< The engine and the bodies' meshes.
    std::vector<VertexNormals> m_normals; ///< Per rigid mesh reading.
    std::vector<float> m_points;          ///< One pair's vertices in reach.
    std::vector<Vertex> m_vertices;       ///< The same, with normals and candidates.
    std::vector<char> m_supported;        ///< Per node of a body: has a node contact with the mesh.
    std::vector<PointContact> m_contacts; ///< The query's contacts.
    std::uint64_t m_contactCount = 0;     ///< contactCount().
    std::uint64_t m_pushCount = 0;        ///< pushCount().
};

} // namespace bulletgpu
