// SPDX-License-Identifier: Zlib
#pragma once

#include "bullet_adapter/soft_body_meshes.h"

#include <bulletgpu/TriangleMeshSet.h>

#include <cstdint>
#include <utility>
#include <vector>

class btSoftBody;

/// Node-face contacts between two different soft bodies (Bullet's VF_SS, CollideVF_SS) from the
/// narrow engine: every soft body with faces is an engine mesh following its nodes; the gathered
/// pairs of bodies with faces are one batch of pair queries, whose vertex-face and face-vertex
/// records become the btSoftBody::SContacts CollideVF_SS would make; a body without faces (a
/// rope) meets the other body's faces through the points-against-mesh query of its nodes.

namespace bulletgpu {

/// Whether `a` and `b` collide node against face (VF_SS in both bodies' flags, as
/// btSoftBody::defaultCollisionHandler decides): two different bodies with nodes, at least one
/// with faces (a rope against a cloth: the rope's nodes against the cloth's faces, as in Bullet;
/// two ropes meet nothing there).
bool isVertexFacePair(const btSoftBody* a, const btSoftBody* b);

/// The node-face contacts between the soft bodies of a world.
class SoftSoftContacts {
public:
    /// An engine on `backend` (`threadsOrDevice` as TriangleMeshSet takes it).
    SoftSoftContacts(Backend backend, int threadsOrDevice);

    /// Records the pair (a call isVertexFacePair accepts; either order counts once).
    void gather(btSoftBody* a, btSoftBody* b);

    /// For every gathered pair, the engine's candidates within the largest margin CollideVF_SS
    /// can use (the two collision margins plus twice the largest node move |m_x - m_q|; pairs of
    /// bodies with faces in one batch at the largest of theirs), then Bullet's own test per
    /// record: a's nodes against b's faces go to a's m_scontacts, b's nodes against a's faces to
    /// b's, filled as CollideVF_SS fills them. A rope's node with a non-finite position meets no
    /// face. Forgets the pairs.
    void generate();

    /// Contacts made by the last generate.
    std::uint64_t contactCount() const { return m_contactCount; }

private:
    /// The contacts of the nodes of `nodes` (a body without faces) against the faces of `faces`
    /// from the points-against-mesh query within `reach`.
    void addNodeContacts(btSoftBody& nodes, btSoftBody& faces, double reach);
    /// Bullet's test (CollideVF_SS::Process) of node `node` of `nodes` against face `face` of
    /// `faces`: the contact it makes, if any, appended to nodes.m_scontacts.
    void addContact(btSoftBody& nodes, btSoftBody& faces, std::uint32_t node, std::uint32_t face);

    SoftBodyMeshes m_meshes;                                  ///< The engine and the bodies' meshes.
    std::vector<std::pair<btSoftBody*, btSoftBody*>> m_pairs; ///< This step's gathered pairs.
    std::vector<MeshPairQuery> m_queries;                     ///< The batch of pairs with faces.
    std::vector<ProximityContact> m_contacts;                 ///< Its records.
    std::vector<float> m_points;                              ///< A faceless body's finite nodes.
    std::vector<std::uint32_t> m_pointNodes;                  ///< Their node indices.
    std::vector<PointContact> m_pointContacts;                ///< Their records.
    std::uint64_t m_contactCount = 0;                         ///< contactCount().
};

} // namespace bulletgpu
