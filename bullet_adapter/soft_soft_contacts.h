// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/TriangleMeshSet.h>

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

class btSoftBody;

/// Node-face contacts between two different soft bodies (Bullet's VF_SS, CollideVF_SS) from the
/// narrow engine's pair contact query: every soft body with faces is an engine mesh following its
/// nodes, and each gathered pair of bodies is one pair query, whose vertex-face and face-vertex
/// records become the btSoftBody::SContacts CollideVF_SS would make.

namespace bulletgpu {

/// Whether `a` and `b` collide node against face (VF_SS in both bodies' flags, as
/// btSoftBody::defaultCollisionHandler decides) and are two bodies with faces (the engine tests
/// the vertices of triangles only: a rope against a cloth stays Bullet's).
bool isVertexFacePair(const btSoftBody* a, const btSoftBody* b);

/// The node-face contacts between the soft bodies of a world.
class SoftSoftContacts {
public:
    /// An engine on `backend` (`threadsOrDevice` as TriangleMeshSet takes it).
    SoftSoftContacts(Backend backend, int threadsOrDevice);

    /// Records the pair (a call isVertexFacePair accepts; either order counts once).
    void gather(btSoftBody* a, btSoftBody* b);

    /// For every gathered pair, one engine pair query within the largest margin CollideVF_SS
    /// can use (the two collision margins plus twice the largest node move |m_x - m_q|), then
    /// Bullet's own test per record: a's nodes against b's faces go to a's m_scontacts, b's nodes
    /// against a's faces to b's, filled as CollideVF_SS fills them. Forgets the pairs.
    void generate();

    /// Contacts made by the last generate.
    std::uint64_t contactCount() const { return m_contactCount; }

private:
    /// A body's engine mesh.
    struct BodyMesh {
        std::uint32_t mesh = 0;             ///< The engine mesh.
        int nodes = -1;                     ///< Node count when made.
        int faces = -1;                     ///< Face count when made.
        std::vector<float> positions;       ///< m_x as floats.
        std::vector<std::uint32_t> indices; ///< Three node indices per face.
    };

    /// The engine mesh of `body`, made (again, when its topology changed) and moved to its m_x.
    std::uint32_t meshOf(btSoftBody* body);
    /// The contacts of `nodes`' nodes against `faces`' faces among m_contacts (`vertexFirst`:
    /// records whose featureA is the node).
    void addContacts(btSoftBody& nodes, btSoftBody& faces, bool vertexFirst);

    TriangleMeshSet m_set;                                    ///< The engine.
    std::unordered_map<const btSoftBody*, BodyMesh> m_meshes; ///< Engine mesh per body.
    std::vector<std::pair<btSoftBody*, btSoftBody*>> m_pairs; ///< This step's gathered pairs.
    std::vector<ProximityContact> m_contacts;                 ///< One pair query's records.
    std::uint64_t m_contactCount = 0;                         ///< contactCount().
};

} // namespace bulletgpu
