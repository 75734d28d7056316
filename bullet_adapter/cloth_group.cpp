// SPDX-License-Identifier: Zlib
#include "bullet_adapter/cloth_group.h"

#include <algorithm>
#include <cmath>

namespace bulletgpu {

namespace {

constexpr std::uint32_t cNoMember = ~0u;

/// Copies `source` into `target` from position `at` (sized by rebuild).
void copyInto(std::vector<double>& target, std::size_t at, const std::vector<double>& source) {
    std::copy(source.begin(), source.end(), target.begin() + static_cast<std::ptrdiff_t>(at));
}

} // namespace

bool ClothGroup::prepare(SoftClothMeshes& meshes, double reachFraction) {
    m_members.clear();
    for (ClothMesh& cloth : meshes.cloths())
        if (cloth.started) m_members.push_back(&cloth);
    const bool oneThickness = std::all_of(m_members.begin(), m_members.end(), [&](const ClothMesh* c) {
        return c->thickness == m_members.front()->thickness;
    });
    if (m_members.size() < 2 || !oneThickness) {
        m_members.clear();
        m_crossListValid = false;
        return false;
    }
    if (rebuild()) m_crossListValid = false;
    for (std::size_t i = 0; i < m_members.size(); ++i) {
        copyInto(m_group.start, 3 * std::size_t(m_vertexOffset[i]), m_members[i]->start);
        copyInto(m_group.end, 3 * std::size_t(m_vertexOffset[i]), m_members[i]->end);
    }
    const double thickness = m_members.front()->thickness;
    m_crossPairs.clear();
    m_crossNearest = HUGE_VAL;
    m_queried = !(reachFraction > 0 && m_crossListValid &&
                  pairListHolds(m_crossListed.data(), m_group.end.data(), m_group.nodeCount, m_crossReach, thickness));
    if (!m_queried) {
        const SelfCollisionMesh mesh = m_group.view();
        for (const CcdFeaturePair& pair : m_crossCandidates) {
            const double d = featurePairDistance(mesh, pair, m_group.end.data());
            m_crossNearest = std::min(m_crossNearest, d);
            if (d < thickness) m_crossPairs.push_back(pair);
        }
        return true;
    }
    // Reach beyond the thickness only while the group is quiet over this step (relative to
    // itself), as SoftClothMeshes::findPairs does for one cloth.
    m_crossReach = pairListReach(m_group.start.data(), m_group.end.data(), m_group.nodeCount, thickness, reachFraction);
    m_crossListed.assign(m_group.end.begin(), m_group.end.end());
    m_crossCandidates.clear();
    m_crossListValid = m_crossReach > thickness;

    m_queries.clear();
    m_memberOfMesh.assign(meshes.cloths().size(), cNoMember);
    for (std::size_t i = 0; i < m_members.size(); ++i) {
        m_memberOfMesh[m_members[i]->mesh] = static_cast<std::uint32_t>(i);
        for (std::size_t j = i + 1; j < m_members.size(); ++j)
            m_queries.push_back(MeshPairQuery{m_members[i]->mesh, m_members[j]->mesh});
    }
    meshes.engine().findProximity(m_queries.data(), static_cast<std::uint32_t>(m_queries.size()), {m_crossReach, false},
                                  m_contacts);
    for (const ProximityContact& c : m_contacts) {
        m_crossNearest = std::min(m_crossNearest, double(c.distance));
        const std::uint32_t a = m_memberOfMesh[c.meshA], b = m_memberOfMesh[c.meshB];
        CcdFeaturePair pair;
        switch (static_cast<ProximityKind>(c.kind)) {
            case ProximityKind::VertexFace:
                pair = CcdFeaturePair{c.featureA + m_vertexOffset[a], c.featureB + m_faceOffset[b],
                                      CcdFeatureKind::VertexFace};
                break;
            case ProximityKind::FaceVertex:
                pair = CcdFeaturePair{c.featureB + m_vertexOffset[b], c.featureA + m_faceOffset[a],
                                      CcdFeatureKind::VertexFace};
                break;
            case ProximityKind::EdgeEdge:
                pair = CcdFeaturePair{c.featureA + m_edgeOffset[a], c.featureB + m_edgeOffset[b],
                                      CcdFeatureKind::EdgeEdge};
                break;
            case ProximityKind::TrianglesIntersect:
                m_crossListValid = false; // Intersecting cloths: query again next step.
                continue;
        }
        if (!(c.distance < m_crossReach)) continue;
        if (m_crossListValid) m_crossCandidates.push_back(pair);
        if (c.distance < thickness) m_crossPairs.push_back(pair);
    }
    return true;
}

void ClothGroup::crossVertexFaces(std::vector<CrossVertexFace>& out) const {
    // The member holding group vertex (face) g: the last whose first vertex (face) is <= g.
    const auto memberOf = [](const std::vector<std::uint32_t>& firsts, std::uint32_t g) {
        return static_cast<std::size_t>(std::upper_bound(firsts.begin(), firsts.end(), g) - firsts.begin()) - 1;
    };
    for (const CcdFeaturePair& p : m_crossPairs) {
        if (p.kind != CcdFeatureKind::VertexFace) continue;
        const std::size_t nodeMember = memberOf(m_vertexOffset, p.a), faceMember = memberOf(m_faceOffset, p.b);
        out.push_back(CrossVertexFace{m_members[nodeMember], p.a - m_vertexOffset[nodeMember], m_members[faceMember],
                                      p.b - m_faceOffset[faceMember]});
    }
}

bool ClothGroup::isMember(const btSoftBody* body) const {
    return std::any_of(m_members.begin(), m_members.end(), [&](const ClothMesh* c) { return c->body == body; });
}

bool ClothGroup::rebuild() {
    const bool same =
        m_built.size() == m_members.size() &&
        std::equal(m_members.begin(), m_members.end(), m_built.begin(), [](const ClothMesh* c, const Built& b) {
            return c->body == b.body && c->nodeCount == b.nodes && c->faceCount == b.faces &&
                   c->thickness == b.thickness;
        });
    if (same) return false;
    m_built.clear();
    m_vertexOffset.clear();
    m_faceOffset.clear();
    m_edgeOffset.clear();
    m_group = ClothMesh{};
    m_group.thickness = m_members.front()->thickness;
    m_group.started = true;
    for (const ClothMesh* cloth : m_members) {
        m_built.push_back(Built{cloth->body, cloth->nodeCount, cloth->faceCount, cloth->thickness});
        m_vertexOffset.push_back(m_group.nodeCount);
        m_faceOffset.push_back(m_group.faceCount);
        m_edgeOffset.push_back(static_cast<std::uint32_t>(m_group.features.edges.size() / 2));
        for (const std::uint32_t v : cloth->indices) m_group.indices.push_back(v + m_group.nodeCount);
        for (const std::uint32_t v : cloth->features.edges) m_group.features.edges.push_back(v + m_group.nodeCount);
        m_group.nodeCount += cloth->nodeCount;
        m_group.faceCount += cloth->faceCount;
    }
    const std::size_t coordinates = 3 * std::size_t(m_group.nodeCount);
    m_group.start.resize(coordinates);
    m_group.end.resize(coordinates);
    m_group.queried.resize(coordinates);
    m_group.inverseMass.resize(m_group.nodeCount);
    return true;
}

ClothMesh& ClothGroup::gather() {
    m_group.pairs.clear();
    m_group.nearest = m_crossNearest;
    for (std::size_t i = 0; i < m_members.size(); ++i) {
        const ClothMesh& cloth = *m_members[i];
        const std::size_t at = 3 * std::size_t(m_vertexOffset[i]);
        copyInto(m_group.start, at, cloth.start);
        copyInto(m_group.end, at, cloth.end);
        copyInto(m_group.queried, at, cloth.queried);
        copyInto(m_group.inverseMass, m_vertexOffset[i], cloth.inverseMass);
        m_group.nearest = std::min(m_group.nearest, cloth.nearest);
        for (const CcdFeaturePair& p : cloth.pairs) {
            const bool edges = p.kind == CcdFeatureKind::EdgeEdge;
            m_group.pairs.push_back(CcdFeaturePair{p.a + (edges ? m_edgeOffset[i] : m_vertexOffset[i]),
                                                   p.b + (edges ? m_edgeOffset[i] : m_faceOffset[i]), p.kind});
        }
    }
    m_group.pairs.insert(m_group.pairs.end(), m_crossPairs.begin(), m_crossPairs.end());
    return m_group;
}

void ClothGroup::scatter() {
    for (std::size_t i = 0; i < m_members.size(); ++i) {
        ClothMesh& cloth = *m_members[i];
        const auto from = m_group.end.begin() + static_cast<std::ptrdiff_t>(3 * std::size_t(m_vertexOffset[i]));
        std::copy(from, from + static_cast<std::ptrdiff_t>(cloth.end.size()), cloth.end.begin());
    }
}

} // namespace bulletgpu
