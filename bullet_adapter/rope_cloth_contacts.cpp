// SPDX-License-Identifier: Zlib
#include "bullet_adapter/rope_cloth_contacts.h"

#include "bullet_adapter/self_collision_response.h"
#include "bullet_adapter/soft_node_moves.h"

#include <BulletSoftBody/btSoftBody.h>

#include <algorithm>
#include <cmath>

namespace bulletgpu {
namespace {

/// Relative and absolute slack on the query's reach, for the float positions it reads.
constexpr double cRelativeSlack = 1e-4, cAbsoluteSlack = 1e-6;

/// An axis-aligned box of positions.
struct Box {
    double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL};
    double hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
};

/// The box of `count` positions from `positions`.
Box boxOf(const double* positions, std::uint32_t count) {
    Box box;
    for (std::uint32_t i = 0; i < count; ++i)
        for (int k = 0; k < 3; ++k) {
            box.lo[k] = std::min(box.lo[k], positions[3 * i + k]);
            box.hi[k] = std::max(box.hi[k], positions[3 * i + k]);
        }
    return box;
}

/// Whether `a` and `b` come within `reach` of each other on every axis.
bool within(const Box& a, const Box& b, double reach) {
    for (int k = 0; k < 3; ++k)
        if (a.lo[k] - reach > b.hi[k] || b.lo[k] - reach > a.hi[k]) return false;
    return true;
}

} // namespace

double RopeClothContacts::load(const btSoftBody& body, std::uint32_t count, std::uint32_t offset, const double* start) {
    const bool active = body.isActive();
    double move = 0;
    for (std::uint32_t n = 0; n < count; ++n) {
        const btSoftBody::Node& node = body.m_nodes[static_cast<int>(n)];
        double d2 = 0;
        for (int k = 0; k < 3; ++k) {
            const std::size_t i = 3 * std::size_t(offset + n) + k;
            m_start[i] = start[3 * std::size_t(n) + k];
            m_end[i] = node.m_x[k];
            d2 += (m_end[i] - m_start[i]) * (m_end[i] - m_start[i]);
        }
        m_inverseMass[offset + n] = active ? node.m_im : 0;
        move = std::max(move, std::sqrt(d2));
    }
    return move;
}

void RopeClothContacts::collide(SoftClothMeshes& cloths, const SoftRopeChains& ropes, int iterations) {
    m_pairCount = 0;
    if (ropes.chains().empty()) return;
    for (ClothMesh& cloth : cloths.cloths()) {
        if (!cloth.started) continue;
        const std::uint32_t clothNodes = cloth.nodeCount;
        // The engine reads the cloth where it is now (after its own stage), again after a rope moved it.
        bool engineStale = true;
        for (const RopeChain& rope : ropes.chains()) {
            const std::uint32_t total = clothNodes + rope.nodeCount;
            m_start.resize(3 * std::size_t(total));
            m_end.resize(3 * std::size_t(total));
            m_inverseMass.resize(total);
            const double clothMove = load(*cloth.body, clothNodes, 0, cloth.start.data());
            const double ropeMove = load(*rope.body, rope.nodeCount, clothNodes, ropes.startOf(rope));
            if (!std::isfinite(ropeMove) || !std::isfinite(clothMove)) continue;
            const double separation = 0.5 * (rope.thickness + cloth.thickness);
            const double reach = (separation + clothMove + ropeMove) * (1 + cRelativeSlack) + cAbsoluteSlack;
            if (!within(boxOf(m_end.data(), clothNodes),
                        boxOf(m_end.data() + 3 * std::size_t(clothNodes), rope.nodeCount), reach))
                continue;
            if (engineStale) {
                for (std::size_t i = 0; i < 3 * std::size_t(clothNodes); ++i)
                    cloth.positions[i] = static_cast<float>(m_end[i]);
                cloths.engine().setPositions(cloth.mesh, cloth.positions.data());
                engineStale = false;
            }
            m_points.resize(3 * std::size_t(rope.nodeCount));
            for (std::size_t i = 0; i < m_points.size(); ++i)
                m_points[i] = static_cast<float>(m_end[3 * std::size_t(clothNodes) + i]);
            cloths.engine().findPointContacts(m_points.data(), rope.nodeCount, cloth.mesh, reach, m_contacts);
            if (m_contacts.empty()) continue;
            m_pairs.clear();
            for (const PointContact& c : m_contacts)
                m_pairs.push_back(CcdFeaturePair{clothNodes + c.point, c.triangle, CcdFeatureKind::VertexFace});
            m_pairCount += m_pairs.size();
            const SelfCollisionMesh mesh{
                total,          cloth.indices.data(), cloth.faceCount,     cloth.features.edges.data(),
                m_start.data(), m_end.data(),         m_inverseMass.data()};
            projectSelfPairs(mesh, m_pairs.data(), m_pairs.size(), separation, iterations, m_threads, m_colouring);
            engineStale = moveNodesTo(*cloth.body, m_end.data(), clothNodes, cloth.body->m_sst.sdt);
            moveNodesTo(*rope.body, m_end.data() + 3 * std::size_t(clothNodes), rope.nodeCount, rope.body->m_sst.sdt);
        }
    }
}

} // namespace bulletgpu
