// SPDX-License-Identifier: Zlib
#include "bullet_adapter/soft_cloth_meshes.h"

#include "bullet_adapter/soft_node_moves.h"

#include <BulletSoftBody/btSoftBody.h>

#include <algorithm>
#include <cmath>

namespace bulletgpu {

namespace {

/// Node index of `node` in `body` (Node::index is not kept for ordinary soft bodies).
std::uint32_t nodeIndex(const btSoftBody& body, const btSoftBody::Node* node) {
    return static_cast<std::uint32_t>(node - &body.m_nodes[0]);
}

/// Whether `cloth` stands for `body` as it is now, with `thickness`.
bool matches(const ClothMesh& cloth, const btSoftBody* body, double thickness) {
    return cloth.body == body && cloth.nodeCount == static_cast<std::uint32_t>(body->m_nodes.size()) &&
           cloth.faceCount == static_cast<std::uint32_t>(body->m_faces.size()) && cloth.thickness == thickness;
}

/// The feature pair a self contact relates, or false for intersecting-triangle records.
bool pairOf(const ProximityContact& c, CcdFeaturePair& pair) {
    if (c.kind == static_cast<std::uint32_t>(ProximityKind::VertexFace)) {
        pair = CcdFeaturePair{c.featureA, c.featureB, CcdFeatureKind::VertexFace};
        return true;
    }
    if (c.kind == static_cast<std::uint32_t>(ProximityKind::EdgeEdge)) {
        pair = CcdFeaturePair{c.featureA, c.featureB, CcdFeatureKind::EdgeEdge};
        return true;
    }
    return false;
}

} // namespace

SelfCollisionMesh ClothMesh::view() {
    return SelfCollisionMesh{nodeCount,    indices.data(), faceCount,         features.edges.data(),
                             start.data(), end.data(),     inverseMass.data()};
}

SoftClothMeshes::SoftClothMeshes(Backend backend, int threadsOrDevice)
    : m_engine(std::make_unique<TriangleMeshSet>(backend, threadsOrDevice)) {}

void SoftClothMeshes::sync(const btAlignedObjectArray<btSoftBody*>& bodies, const std::vector<char>& selected,
                           const std::vector<double>& thickness) {
    // Unchanged list: nothing to do.
    std::size_t wanted = 0;
    bool same = true;
    for (int i = 0; i < bodies.size(); ++i) {
        if (!selected[i] || bodies[i]->m_faces.size() == 0) continue;
        same = same && wanted < m_cloths.size() && matches(m_cloths[wanted], bodies[i], thickness[i]);
        ++wanted;
    }
    if (same && wanted == m_cloths.size()) return;

    // Keep the cloths that still match, read the others anew, and re-add every mesh.
    std::vector<ClothMesh> previous = std::move(m_cloths);
    m_cloths.clear();
    m_engine->clear();
    for (int i = 0; i < bodies.size(); ++i) {
        btSoftBody* body = bodies[i];
        if (!selected[i] || body->m_faces.size() == 0) continue;
        auto kept = std::find_if(previous.begin(), previous.end(),
                                 [&](const ClothMesh& c) { return matches(c, body, thickness[i]); });
        const bool fresh = kept == previous.end();
        ClothMesh cloth;
        if (!fresh) {
            cloth = std::move(*kept);
            kept->body = nullptr;
        }
        cloth.body = body;
        cloth.thickness = thickness[i];
        cloth.mesh = static_cast<std::uint32_t>(m_cloths.size());
        m_cloths.push_back(std::move(cloth));
        addMesh(m_cloths.back(), fresh);
    }
}

void SoftClothMeshes::addMesh(ClothMesh& cloth, bool fresh) {
    btSoftBody& body = *cloth.body;
    if (fresh) {
        cloth.nodeCount = static_cast<std::uint32_t>(body.m_nodes.size());
        cloth.faceCount = static_cast<std::uint32_t>(body.m_faces.size());
        cloth.indices.resize(3 * std::size_t(cloth.faceCount));
        for (std::uint32_t f = 0; f < cloth.faceCount; ++f)
            for (int k = 0; k < 3; ++k) cloth.indices[3 * f + k] = nodeIndex(body, body.m_faces[f].m_n[k]);
        buildMeshFeatures(cloth.indices.data(), cloth.faceCount, cloth.nodeCount, cloth.features);
        cloth.positions.resize(3 * std::size_t(cloth.nodeCount));
        cloth.start.resize(cloth.positions.size());
        cloth.end.resize(cloth.positions.size());
        cloth.queried.resize(cloth.positions.size());
        cloth.inverseMass.resize(cloth.nodeCount);
        cloth.started = false;
    }
    for (std::uint32_t n = 0; n < cloth.nodeCount; ++n)
        for (int k = 0; k < 3; ++k) cloth.positions[3 * n + k] = static_cast<float>(body.m_nodes[n].m_x[k]);
    const std::uint32_t mesh =
        m_engine->addMesh(cloth.positions.data(), cloth.nodeCount, cloth.indices.data(), cloth.faceCount);
    m_engine->setPositions(mesh, cloth.positions.data());
    if (!fresh) return;

    // Features already within the thickness belong to the cloth's own fine structure.
    m_engine->findSelfProximity(mesh, {cloth.thickness, false}, m_contacts);
    cloth.excluded.clear();
    CcdFeaturePair pair;
    for (const ProximityContact& c : m_contacts)
        if (pairOf(c, pair)) cloth.excluded.push_back(pair);
    std::sort(cloth.excluded.begin(), cloth.excluded.end(), featurePairBefore);
}

void SoftClothMeshes::recordStart() {
    for (ClothMesh& cloth : m_cloths) {
        cloth.started = cloth.body->isActive();
        if (!cloth.started) continue;
        for (std::uint32_t n = 0; n < cloth.nodeCount; ++n)
            for (int k = 0; k < 3; ++k) cloth.start[3 * n + k] = cloth.body->m_nodes[n].m_x[k];
    }
}

void SoftClothMeshes::readEnds() {
    for (ClothMesh& cloth : m_cloths) {
        if (!cloth.started) continue;
        const btSoftBody& body = *cloth.body;
        for (std::uint32_t n = 0; n < cloth.nodeCount; ++n) {
            cloth.inverseMass[n] = body.m_nodes[n].m_im;
            for (int k = 0; k < 3; ++k) cloth.end[3 * n + k] = body.m_nodes[n].m_x[k];
        }
    }
}

void SoftClothMeshes::findPairs(double reachFraction) {
    m_queries.clear();
    double distance = 0;
    for (ClothMesh& cloth : m_cloths) {
        cloth.pairs.clear();
        if (!cloth.started) continue;
        for (std::size_t i = 0; i < cloth.end.size(); ++i) cloth.positions[i] = static_cast<float>(cloth.end[i]);
        cloth.queried.assign(cloth.end.begin(), cloth.end.end());
        cloth.nearest = HUGE_VAL;
        m_engine->setPositions(cloth.mesh, cloth.positions.data());
        if (reachFraction > 0 && cloth.listValid &&
            pairListHolds(cloth.listed.data(), cloth.end.data(), cloth.nodeCount, cloth.reach, cloth.thickness)) {
            const SelfCollisionMesh mesh = cloth.view();
            for (const CcdFeaturePair& pair : cloth.candidates) {
                const double d = featurePairDistance(mesh, pair, cloth.end.data());
                cloth.nearest = std::min(cloth.nearest, d);
                if (d < cloth.thickness &&
                    !std::binary_search(cloth.excluded.begin(), cloth.excluded.end(), pair, featurePairBefore))
                    cloth.pairs.push_back(pair);
            }
            continue;
        }
        // Reach beyond the thickness only for a cloth quiet enough (relative to itself) over this
        // step for the list to last a few steps: elsewhere the wider query costs more than it saves.
        cloth.reach =
            pairListReach(cloth.start.data(), cloth.end.data(), cloth.nodeCount, cloth.thickness, reachFraction);
        cloth.listed.assign(cloth.end.begin(), cloth.end.end());
        cloth.candidates.clear();
        cloth.listValid = cloth.reach > cloth.thickness;
        m_queries.push_back(MeshPairQuery{cloth.mesh, cloth.mesh});
        distance = std::max(distance, cloth.reach);
    }
    if (m_queries.empty()) return;
    m_engine->findProximity(m_queries.data(), static_cast<std::uint32_t>(m_queries.size()), {distance, false},
                            m_contacts);
    CcdFeaturePair pair;
    for (const ProximityContact& c : m_contacts) {
        ClothMesh& cloth = m_cloths[c.meshA];
        cloth.nearest = std::min(cloth.nearest, double(c.distance));
        if (!pairOf(c, pair)) {
            cloth.listValid = false; // intersecting triangles: query again next step
            continue;
        }
        if (!(c.distance < cloth.reach)) continue;
        if (cloth.listValid) cloth.candidates.push_back(pair);
        if (!(c.distance < cloth.thickness)) continue;
        if (std::binary_search(cloth.excluded.begin(), cloth.excluded.end(), pair, featurePairBefore)) continue;
        cloth.pairs.push_back(pair);
    }
}

void SoftClothMeshes::writeBack(ClothMesh& cloth, double dt) const {
    moveNodesTo(*cloth.body, cloth.end.data(), cloth.nodeCount, dt);
}

} // namespace bulletgpu
