// SPDX-License-Identifier: Zlib
#pragma once

#include "bullet_adapter/soft_cloth_meshes.h"

#include <cstdint>
#include <vector>

/// The started cloths of a world as one mesh for the self-collision response, so that its
/// projection and CCD keep different cloths apart as they keep a cloth apart from itself: the
/// vertices, faces and edges of each cloth in turn (edges as buildMeshFeatures numbers the whole,
/// which, vertex blocks being contiguous, is each cloth's own numbering shifted).

namespace bulletgpu {

/// A vertex-face pair between two cloths of a group, in the cloths' own numbering.
struct CrossVertexFace {
    ClothMesh* nodeCloth; ///< The node's cloth.
    std::uint32_t node;   ///< The node.
    ClothMesh* faceCloth; ///< The face's cloth.
    std::uint32_t face;   ///< The face.
};

/// Two or more cloths of one thickness, answered as one mesh.
class ClothGroup {
public:
    /// Takes the started cloths of `meshes` as the group when there are at least two, all of one
    /// thickness (else returns false and the cloths answer alone), and finds the pairs between
    /// different cloths within that thickness at their end positions (those findPairs gave the
    /// engine), in one batch of pair queries; their distances join the group's nearest for the
    /// continuous stage's skip. With `reachFraction` > 0 the pairs are kept as one cloth's are
    /// (SoftCollisionConfig::pairListReach): a query on a quiet step reaches that much of the
    /// thickness further, and later steps re-measure its pairs instead of querying while no
    /// vertex of the group has moved, relative to the group, by half that margin since.
    bool prepare(SoftClothMeshes& meshes, double reachFraction);

    /// Appends to `out` the vertex-face pairs between different members found by the last
    /// prepare that returned true, in the order it found them.
    void crossVertexFaces(std::vector<CrossVertexFace>& out) const;

    /// The members' thickness (that of the last prepare that returned true).
    double thickness() const { return m_group.thickness; }

    /// True when `body` is a member of the last prepare that returned true.
    bool isMember(const btSoftBody* body) const;

    /// Copies the members' step buffers (start, end, inverse masses, queried positions) and
    /// pairs into the group's mesh, with the pairs between cloths, and returns it.
    ClothMesh& gather();

    /// Copies the group's end positions back to its members.
    void scatter();

    /// The members of the last prepare.
    std::size_t memberCount() const { return m_members.size(); }
    /// Whether the last prepare that returned true queried the engine (else it re-measured).
    bool queried() const { return m_queried; }

private:
    /// Rebuilds the group's topology when its members changed; returns whether it did.
    bool rebuild();

    ClothMesh m_group;                 ///< The members as one mesh (body null).
    std::vector<ClothMesh*> m_members; ///< Started cloths, in the world's order.
    /// What the topology was built for: a member's body, nodes, faces and thickness.
    struct Built {
        const btSoftBody* body;
        std::uint32_t nodes;
        std::uint32_t faces;
        double thickness;
    };
    std::vector<Built> m_built;                    ///< Members the topology was built for.
    std::vector<std::uint32_t> m_vertexOffset;     ///< First vertex of each member.
    std::vector<std::uint32_t> m_faceOffset;       ///< First face of each member.
    std::vector<std::uint32_t> m_edgeOffset;       ///< First edge of each member.
    std::vector<CcdFeaturePair> m_crossPairs;      ///< Pairs between members, in the group's numbering.
    double m_crossNearest = 0;                     ///< Smallest distance the pair queries reported.
    std::vector<CcdFeaturePair> m_crossCandidates; ///< Pairs between members within m_crossReach at m_crossListed.
    std::vector<double> m_crossListed;             ///< The group's end positions at the last query.
    double m_crossReach = 0;                       ///< That query's distance.
    bool m_crossListValid = false;                 ///< The candidates hold every such pair.
    bool m_queried = false;                        ///< See queried().
    std::vector<MeshPairQuery> m_queries;          ///< One query per pair of members.
    std::vector<std::uint32_t> m_memberOfMesh;     ///< Member of each engine mesh (or ~0).
    std::vector<ProximityContact> m_contacts;      ///< The queries' output.
};

} // namespace bulletgpu
