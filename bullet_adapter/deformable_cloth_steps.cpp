// SPDX-License-Identifier: Zlib
#include "bullet_adapter/deformable_cloth_steps.h"

#include <BulletSoftBody/btSoftBody.h>

namespace bulletgpu {

namespace {

/// Where a step of `dt` takes `node` (applyTransforms' expression, in btScalar).
btVector3 stepEnd(const btSoftBody::Node& node, btScalar dt) { return node.m_x + dt * (node.m_v + node.m_splitv); }

Vec3d load(const btVector3& v) { return Vec3d{{double(v.x()), double(v.y()), double(v.z())}}; }

} // namespace

void predictClothEnd(ClothMesh& cloth, double dt) {
    btSoftBody& body = *cloth.body;
    const btScalar step = static_cast<btScalar>(dt);
    const btScalar limit = body.getWorldInfo()->m_maxDisplacement / step;
    for (std::uint32_t n = 0; n < cloth.nodeCount; ++n) {
        btSoftBody::Node& node = body.m_nodes[static_cast<int>(n)];
        for (int k = 0; k < 3; ++k) node.m_v[k] = btMax(-limit, btMin(limit, node.m_v[k]));
        const btVector3 end = stepEnd(node, step);
        for (int k = 0; k < 3; ++k) cloth.end[3 * n + k] = end[k];
        cloth.inverseMass[n] = node.m_im;
    }
    for (int a = 0; a < body.m_deformableAnchors.size(); ++a)
        cloth.inverseMass[static_cast<std::size_t>(body.m_deformableAnchors[a].m_node - &body.m_nodes[0])] = 0;
}

namespace {

/// The contact of `node` against `face` (of `faceBody`) as Bullet's deformable colliders make
/// it, at the nodes' m_x; false when the face has no normal (zero area).
bool faceNodeContact(btSoftBody::Node& node, btSoftBody::Face& face, btSoftBody& faceBody, btScalar margin,
                     btScalar friction, btSoftBody::DeformableFaceNodeContact& contact) {
    const btVector3& a = face.m_n[0]->m_x;
    const btVector3& b = face.m_n[1]->m_x;
    const btVector3& c = face.m_n[2]->m_x;
    btVector3 normal = (b - a).cross(c - a);
    const btScalar length = normal.length();
    if (!(length > 0)) return false;
    normal /= length;
    if (normal.dot(node.m_x - a) < 0) normal = -normal;
    double w[3];
    closestTriangleWeights(load(node.m_x), load(a), load(b), load(c), w);
    contact.m_node = &node;
    contact.m_face = &face;
    contact.m_bary = btVector3(btScalar(w[0]), btScalar(w[1]), btScalar(w[2]));
    contact.m_weights = btVector3(0, 0, 0);
    contact.m_normal = normal;
    contact.m_margin = margin;
    contact.m_friction = friction;
    contact.m_imf = 0;
    contact.m_c0 = 0;
    contact.m_colObj = &faceBody;
    return true;
}

} // namespace

std::size_t appendFaceNodeContacts(ClothMesh& cloth) {
    btSoftBody& body = *cloth.body;
    std::size_t appended = 0;
    for (const CcdFeaturePair& pair : cloth.pairs) {
        if (pair.kind != CcdFeatureKind::VertexFace) continue;
        btSoftBody::DeformableFaceNodeContact contact;
        if (!faceNodeContact(body.m_nodes[static_cast<int>(pair.a)], body.m_faces[static_cast<int>(pair.b)], body,
                             static_cast<btScalar>(cloth.thickness), body.m_cfg.kDF * body.m_cfg.kDF, contact))
            continue;
        body.m_faceNodeContacts.push_back(contact);
        ++appended;
    }
    return appended;
}

std::size_t appendCrossFaceNodeContacts(const std::vector<CrossVertexFace>& pairs, double thickness) {
    std::size_t appended = 0;
    for (const CrossVertexFace& pair : pairs) {
        btSoftBody& nodeBody = *pair.nodeCloth->body;
        btSoftBody& faceBody = *pair.faceCloth->body;
        btSoftBody::Node& node = nodeBody.m_nodes[static_cast<int>(pair.node)];
        btSoftBody::Face& face = faceBody.m_faces[static_cast<int>(pair.face)];
        // CollideVF_DD's mass rule: no contact between a held node and a face with a held node.
        const bool faceHeld = face.m_n[0]->m_im <= 0 || face.m_n[1]->m_im <= 0 || face.m_n[2]->m_im <= 0;
        if (!(node.m_im > 0) && faceHeld) continue;
        btSoftBody::DeformableFaceNodeContact contact;
        if (!faceNodeContact(node, face, faceBody, static_cast<btScalar>(thickness),
                             nodeBody.m_cfg.kDF * faceBody.m_cfg.kDF, contact))
            continue;
        nodeBody.m_faceNodeContacts.push_back(contact);
        ++appended;
    }
    return appended;
}

std::size_t steerNodesToEnd(ClothMesh& cloth, double dt) {
    btSoftBody& body = *cloth.body;
    const btScalar step = static_cast<btScalar>(dt);
    std::size_t changed = 0;
    for (std::uint32_t n = 0; n < cloth.nodeCount; ++n) {
        btSoftBody::Node& node = body.m_nodes[static_cast<int>(n)];
        const btVector3 predicted = stepEnd(node, step);
        const double* end = &cloth.end[3 * std::size_t(n)];
        if (end[0] == double(predicted.x()) && end[1] == double(predicted.y()) && end[2] == double(predicted.z()))
            continue;
        const btVector3 target(static_cast<btScalar>(end[0]), static_cast<btScalar>(end[1]),
                               static_cast<btScalar>(end[2]));
        node.m_v = (target - node.m_x) / step - node.m_splitv;
        ++changed;
    }
    return changed;
}

} // namespace bulletgpu
