// SPDX-License-Identifier: Zlib
#include "bullet_adapter/soft_soft_contacts.h"

#include "bullet_adapter/world_order.h"

#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyInternals.h>

#include <algorithm>
#include <cmath>

namespace bulletgpu {
namespace {

/// Relative and absolute slack on the engine's distance, so that float rounding in Bullet's test
/// never accepts a pair the engine's double test left out.
constexpr double cRelativeSlack = 1e-4, cAbsoluteSlack = 1e-6;

/// The largest finite |m_x - m_q| over `body`'s nodes (a node with a non-finite position meets
/// nothing: Bullet's test rejects it).
btScalar largestMove(const btSoftBody& body) {
    btScalar move = 0;
    for (int i = 0; i < body.m_nodes.size(); ++i) {
        const btScalar m = (body.m_nodes[i].m_x - body.m_nodes[i].m_q).length();
        if (std::isfinite(m)) move = btMax(move, m);
    }
    return move;
}

} // namespace

bool isVertexFacePair(const btSoftBody* a, const btSoftBody* b) {
    const int shared = a->m_cfg.collisions & b->m_cfg.collisions;
    return a != b && (shared & btSoftBody::fCollision::SVSmask) == btSoftBody::fCollision::VF_SS &&
           a->m_nodes.size() > 0 && b->m_nodes.size() > 0 && (a->m_faces.size() > 0 || b->m_faces.size() > 0);
}

SoftSoftContacts::SoftSoftContacts(Backend backend, int threadsOrDevice) : m_meshes(backend, threadsOrDevice) {}

void SoftSoftContacts::gather(btSoftBody* a, btSoftBody* b) {
    if (worldOrder(b) < worldOrder(a)) std::swap(a, b);
    m_pairs.emplace_back(a, b);
}

void SoftSoftContacts::generate() {
    m_contactCount = 0;
    m_meshes.beginPass();
    std::sort(m_pairs.begin(), m_pairs.end(), [](const auto& x, const auto& y) {
        return std::make_pair(worldOrder(x.first), worldOrder(x.second)) <
               std::make_pair(worldOrder(y.first), worldOrder(y.second));
    });
    m_pairs.erase(std::unique(m_pairs.begin(), m_pairs.end()), m_pairs.end());
    // Pairs of bodies with faces: one batch of pair queries at the largest reach (Bullet's own
    // test then applies each record's); a body without faces (a rope): its nodes against the
    // other's faces, the points-against-mesh query.
    m_queries.clear();
    double distance = 0;
    for (const auto& [a, b] : m_pairs) {
        const btScalar mrg = a->getCollisionShape()->getMargin() + b->getCollisionShape()->getMargin();
        const double reach =
            (mrg + 2 * btMax(largestMove(*a), largestMove(*b))) * (1 + cRelativeSlack) + cAbsoluteSlack;
        if (a->m_faces.size() > 0 && b->m_faces.size() > 0) {
            m_queries.push_back(MeshPairQuery{m_meshes.meshOf(*a), m_meshes.meshOf(*b)});
            distance = std::max(distance, reach);
        } else {
            addNodeContacts(a->m_faces.size() > 0 ? *b : *a, a->m_faces.size() > 0 ? *a : *b, reach);
        }
    }
    if (!m_queries.empty()) {
        ProximityOptions options;
        options.distance = distance;
        // Bullet's VF_SS tests nodes against faces only: no edge pairs, no intersection test.
        options.vertexFaceOnly = true;
        m_meshes.set().findProximity(m_queries.data(), static_cast<std::uint32_t>(m_queries.size()), options,
                                     m_contacts);
        for (const ProximityContact& pc : m_contacts) {
            btSoftBody& a = *m_meshes.bodyOf(pc.meshA);
            btSoftBody& b = *m_meshes.bodyOf(pc.meshB);
            const auto kind = static_cast<ProximityKind>(pc.kind);
            if (kind == ProximityKind::VertexFace) addContact(a, b, pc.featureA, pc.featureB);
            if (kind == ProximityKind::FaceVertex) addContact(b, a, pc.featureB, pc.featureA);
        }
    }
    m_pairs.clear();
}

void SoftSoftContacts::addNodeContacts(btSoftBody& nodes, btSoftBody& faces, double reach) {
    // Nodes with a non-finite position meet nothing (the query takes finite points only).
    m_points.clear();
    m_pointNodes.clear();
    for (int i = 0; i < nodes.m_nodes.size(); ++i) {
        const btVector3& x = nodes.m_nodes[i].m_x;
        const float p[3] = {static_cast<float>(x.x()), static_cast<float>(x.y()), static_cast<float>(x.z())};
        if (!(std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2]))) continue;
        m_points.insert(m_points.end(), p, p + 3);
        m_pointNodes.push_back(static_cast<std::uint32_t>(i));
    }
    if (m_pointNodes.empty()) return;
    m_meshes.set().findPointContacts(m_points.data(), static_cast<std::uint32_t>(m_pointNodes.size()),
                                     m_meshes.meshOf(faces), reach, m_pointContacts);
    for (const PointContact& pc : m_pointContacts) addContact(nodes, faces, m_pointNodes[pc.point], pc.triangle);
}

void SoftSoftContacts::addContact(btSoftBody& nodes, btSoftBody& faces, std::uint32_t nodeIndex,
                                  std::uint32_t faceIndex) {
    const btScalar mrg = nodes.getCollisionShape()->getMargin() + faces.getCollisionShape()->getMargin();
    btSoftBody::Node* node = &nodes.m_nodes[static_cast<int>(nodeIndex)];
    btSoftBody::Face* face = &faces.m_faces[static_cast<int>(faceIndex)];
    // CollideVF_SS::Process, as Bullet computes it.
    const btVector3 o = node->m_x;
    btVector3 p(0, 0, 0);
    btScalar d = SIMD_INFINITY;
    ProjectOrigin(face->m_n[0]->m_x - o, face->m_n[1]->m_x - o, face->m_n[2]->m_x - o, p, d);
    const btScalar m = mrg + (o - node->m_q).length() * 2;
    if (!(d < m * m)) return;
    const btSoftBody::Node* n[] = {face->m_n[0], face->m_n[1], face->m_n[2]};
    const btVector3 w = BaryCoord(n[0]->m_x, n[1]->m_x, n[2]->m_x, p + o);
    const btScalar ma = node->m_im;
    btScalar mb = BaryEval(n[0]->m_im, n[1]->m_im, n[2]->m_im, w);
    if (n[0]->m_im <= 0 || n[1]->m_im <= 0 || n[2]->m_im <= 0) mb = 0;
    const btScalar ms = ma + mb;
    if (!(ms > 0)) return;
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

} // namespace bulletgpu
