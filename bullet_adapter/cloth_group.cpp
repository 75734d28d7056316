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

bool ClothGroup::prepare(SoftClothMeshes& meshes) {
    m_members.clear();
    for (ClothMesh& cloth : meshes.cloths())
        if (cloth.started) m_members.push_back(&cloth);
    const bool oneThickness = std::all_of(m_members.begin(), m_members.end(), [&](const ClothMesh* c) {
        return c->thickness == m_members.front()->thickness;
    });
    if (m_members.size() < 2 || !oneThickness) {
        m_members.clear();
        return false;
    }
    rebuild();

    m_queries.clear();
    m_memberOfMesh.assign(meshes.cloths().size(), cNoMember);
    for (std::size_t i = 0; i < m_members.size(); ++i) {
        m_memberOfMesh[m_members[i]->mesh] = static_cast<std::uint32_t>(i);
        for (std::size_t j = i + 1; j < m_members.size(); ++j)
            m_queries.push_back(MeshPairQuery{m_members[i]->mesh, m_members[j]->mesh});
    }
    const double thickness = m_members.front()->thickness;
    meshes.engine().findProximity(m_queries.data(), static_cast<std::uint32_t>(m_queries.size()), {thickness, false},
                                  m_contacts);
    m_crossPairs.clear();
    m_crossNearest = HUGE_VAL;
    for (const ProximityContact& c : m_contacts) {
        m_crossNearest = std::min(m_crossNearest, double(c.distance));
        if (!(c.distance < thickness)) continue;
        const std::uint32_t a = m_memberOfMesh[c.meshA], b = m_memberOfMesh[c.meshB];
        switch (static_cast<ProximityKind>(c.kind)) {
            case ProximityKind::VertexFace:
                m_crossPairs.push_back(CcdFeaturePair{c.featureA + m_vertexOffset[a], c.featureB + m_faceOffset[b],
                                                      CcdFeatureKind::VertexFace});
                break;
            case ProximityKind::FaceVertex:
                m_crossPairs.push_back(CcdFeaturePair{c.featureB + m_vertexOffset[b], c.featureA + m_faceOffset[a],
                                                      CcdFeatureKind::VertexFace});
                break;
            case ProximityKind::EdgeEdge:
                m_crossPairs.push_back(CcdFeaturePair{c.featureA + m_edgeOffset[a], c.featureB + m_edgeOffset[b],
                                                      CcdFeatureKind::EdgeEdge});
                break;
            case ProximityKind::TrianglesIntersect:
                break;
        }
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

void ClothGroup::rebuild() {
    const bool same =
        m_built.size() == m_members.size() &&
        std::equal(m_members.begin(), m_members.end(), m_built.begin(), [](const ClothMesh* c, const Built& b) {
            return c->body == b.body && c->nodeCount == b.nodes && c->faceCount == b.faces &&
                   c->thickness == b.thickness;
        });
    if (same) return;
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
