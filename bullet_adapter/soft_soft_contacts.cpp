// SPDX-License-Identifier: Zlib
#include "bullet_adapter/soft_soft_contacts.h"

#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyInternals.h>

#include <algorithm>

namespace bulletgpu {
namespace {

/// Relative and absolute slack on the engine's distance, so that float rounding in Bullet's test
/// never accepts a pair the engine's double test left out.
constexpr double cRelativeSlack = 1e-4, cAbsoluteSlack = 1e-6;

/// The largest |m_x - m_q| over `body`'s nodes.
btScalar largestMove(const btSoftBody& body) {
    btScalar move = 0;
    for (int i = 0; i < body.m_nodes.size(); ++i)
        move = btMax(move, (body.m_nodes[i].m_x - body.m_nodes[i].m_q).length());
    return move;
}

} // namespace

bool isVertexFacePair(const btSoftBody* a, const btSoftBody* b) {
    const int shared = a->m_cfg.collisions & b->m_cfg.collisions;
    return a != b && (shared & btSoftBody::fCollision::SVSmask) == btSoftBody::fCollision::VF_SS &&
           a->m_faces.size() > 0 && b->m_faces.size() > 0;
}

SoftSoftContacts::SoftSoftContacts(Backend backend, int threadsOrDevice) : m_set(backend, threadsOrDevice) {}

void SoftSoftContacts::gather(btSoftBody* a, btSoftBody* b) { m_pairs.emplace_back(std::min(a, b), std::max(a, b)); }

std::uint32_t SoftSoftContacts::meshOf(btSoftBody* body) {
    BodyMesh& m = m_meshes[body];
    m.positions.resize(3 * static_cast<std::size_t>(body->m_nodes.size()));
    for (int i = 0; i < body->m_nodes.size(); ++i)
        for (int k = 0; k < 3; ++k) m.positions[3 * i + k] = static_cast<float>(body->m_nodes[i].m_x[k]);
    if (m.nodes != body->m_nodes.size() || m.faces != body->m_faces.size()) {
        m.nodes = body->m_nodes.size();
        m.faces = body->m_faces.size();
        m.indices.clear();
        for (int f = 0; f < body->m_faces.size(); ++f)
            for (int k = 0; k < 3; ++k)
                m.indices.push_back(static_cast<std::uint32_t>(body->m_faces[f].m_n[k] - &body->m_nodes[0]));
        m.mesh = m_set.addMesh(m.positions.data(), static_cast<std::uint32_t>(m.nodes), m.indices.data(),
                               static_cast<std::uint32_t>(m.faces));
    }
    m_set.setPositions(m.mesh, m.positions.data());
    return m.mesh;
}

void SoftSoftContacts::generate() {
    m_contactCount = 0;
    std::sort(m_pairs.begin(), m_pairs.end());
    m_pairs.erase(std::unique(m_pairs.begin(), m_pairs.end()), m_pairs.end());
    for (const auto& [a, b] : m_pairs) {
        const btScalar mrg = a->getCollisionShape()->getMargin() + b->getCollisionShape()->getMargin();
        const double reach = mrg + 2 * btMax(largestMove(*a), largestMove(*b));
        ProximityOptions options;
        options.distance = reach * (1 + cRelativeSlack) + cAbsoluteSlack;
        m_set.findPairProximity(meshOf(a), meshOf(b), options, m_contacts);
        addContacts(*a, *b, true);
        addContacts(*b, *a, false);
    }
    m_pairs.clear();
}

void SoftSoftContacts::addContacts(btSoftBody& nodes, btSoftBody& faces, bool vertexFirst) {
    const btScalar mrg = nodes.getCollisionShape()->getMargin() + faces.getCollisionShape()->getMargin();
    const auto kind = static_cast<std::uint32_t>(vertexFirst ? ProximityKind::VertexFace : ProximityKind::FaceVertex);
    for (const ProximityContact& pc : m_contacts) {
        if (pc.kind != kind) continue;
        btSoftBody::Node* node = &nodes.m_nodes[static_cast<int>(vertexFirst ? pc.featureA : pc.featureB)];
        btSoftBody::Face* face = &faces.m_faces[static_cast<int>(vertexFirst ? pc.featureB : pc.featureA)];
        // CollideVF_SS::Process, as Bullet computes it.
        const btVector3 o = node->m_x;
        btVector3 p(0, 0, 0);
        btScalar d = SIMD_INFINITY;
        ProjectOrigin(face->m_n[0]->m_x - o, face->m_n[1]->m_x - o, face->m_n[2]->m_x - o, p, d);
        const btScalar m = mrg + (o - node->m_q).length() * 2;
        if (!(d < m * m)) continue;
        const btSoftBody::Node* n[] = {face->m_n[0], face->m_n[1], face->m_n[2]};
        const btVector3 w = BaryCoord(n[0]->m_x, n[1]->m_x, n[2]->m_x, p + o);
        const btScalar ma = node->m_im;
        btScalar mb = BaryEval(n[0]->m_im, n[1]->m_im, n[2]->m_im, w);
        if (n[0]->m_im <= 0 || n[1]->m_im <= 0 || n[2]->m_im <= 0) mb = 0;
        const btScalar ms = ma + mb;
        if (!(ms > 0)) continue;
        btSoftBody::SContact c;
        c.m_normal = p / -btSqrt(d);
        c.m_margin = m;
        c.m_node = node;
        c.m_face = face;
        c.m_weights = w;
        c.m_friction = btMax(nodes.m_cfg.kDF, faces.m_cfg.kDF);
        c.m_cfm[0] = ma / ms * nodes.m_cfg.kSHR;
        c.m_cfm[1] = mb / ms * faces.m_cfg.kSHR;
        nodes.m_scontacts.push_back(c);
        ++m_contactCount;
    }
}

} // namespace bulletgpu
