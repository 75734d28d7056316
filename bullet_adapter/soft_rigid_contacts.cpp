// SPDX-License-Identifier: Zlib
#include "bullet_adapter/soft_rigid_contacts.h"

#include <BulletCollision/CollisionDispatch/btCollisionObjectWrapper.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyInternals.h>

#include <algorithm>
#include <stdexcept>
#include <tuple>

namespace bulletgpu {
namespace {

/// Slack on the barycentric weights of the crossing test, so that a node passing through a
/// shared edge crosses both triangles rather than neither.
constexpr btScalar cCrossingSlack = btScalar(1e-4);

/// Whether `shape` is a concave triangle mesh the engine reads.
bool isConcaveMesh(const btCollisionShape* shape) {
    switch (shape->getShapeType()) {
        case TRIANGLE_MESH_SHAPE_PROXYTYPE:
        case SCALED_TRIANGLE_MESH_SHAPE_PROXYTYPE:
            return true;
        case GIMPACT_SHAPE_PROXYTYPE:
            return static_cast<const btGImpactShapeInterface*>(shape)->getGImpactShapeType() ==
                   CONST_GIMPACT_TRIMESH_SHAPE;
        default:
            return false;
    }
}

/// Whether the segment from `q` to `x` passes through the triangle (a, b, c) of unit normal `n`,
/// with `q` in front of it (n . (q - a) >= 0) and `x` behind.
bool crosses(const btVector3& q, const btVector3& x, const btVector3& a, const btVector3& b, const btVector3& c,
             const btVector3& n) {
    const btScalar dq = n.dot(q - a), dx = n.dot(x - a);
    if (!(dq >= 0 && dx < 0)) return false;
    const btVector3 y = q + (x - q) * (dq / (dq - dx));
    const btVector3 w = BaryCoord(a, b, c, y);
    return w.x() >= -cCrossingSlack && w.y() >= -cCrossingSlack && w.z() >= -cCrossingSlack;
}

/// The candidate of node `n` against the triangle (a, b, c) whose closest point is `onMesh`; false
/// for a degenerate triangle. The side kept is the outside of a closed mesh and, on an open
/// (two-sided) one, the side of the node's step-start position m_q.
bool candidateOf(const btSoftBody::Node& n, const btVector3& onMesh, const btVector3& a, const btVector3& b,
                 const btVector3& c, bool twoSided, SoftRigidCandidate& out) {
    btVector3 face = (b - a).cross(c - a);
    if (!(face.length2() > 0)) return false;
    face.normalize();
    if (twoSided && face.dot(n.m_q - a) < 0) face = -face;
    const btVector3 away = n.m_x - onMesh;
    const btScalar length = away.length();
    out.onMesh = onMesh;
    out.behind = face.dot(n.m_x - a) < 0;
    const bool faceRegion = away.cross(face).length() <= btScalar(1e-3) * length;
    out.penetrating = out.behind && (crosses(n.m_q, n.m_x, a, b, c, face) || (!twoSided && faceRegion));
    out.separation = out.penetrating ? -length : length;
    out.normal = length > SIMD_EPSILON ? away / out.separation : face;
    if (out.penetrating && out.normal.dot(face) < 0) out.normal = face;
    return true;
}

/// Bullet's RContact for node `n` of `body` against `object` with contact normal `normal` and
/// plane offset `offset`, as CollideSDF_RS fills it; false when neither side can move.
bool makeContact(btSoftBody& body, btSoftBody::Node& n, const btCollisionObject* object, const btTransform& world,
                 const btVector3& normal, btScalar offset, btSoftBody::RContact& c) {
    const btRigidBody* rigid = btRigidBody::upcast(object);
    const btScalar ima = n.m_im;
    const btScalar imb = rigid ? rigid->getInvMass() : btScalar(0);
    if (!(ima + imb > 0)) return false;
    static const btMatrix3x3 iwiStatic(0, 0, 0, 0, 0, 0, 0, 0, 0);
    const btMatrix3x3& iwi = rigid ? rigid->getInvInertiaTensorWorld() : iwiStatic;
    const btScalar dt = body.m_sst.sdt;
    const btVector3 ra = n.m_x - world.getOrigin();
    const btVector3 va = rigid ? rigid->getVelocityInLocalPoint(ra) * dt : btVector3(0, 0, 0);
    const btVector3 vr = (n.m_x - n.m_q) - va;
    const btScalar dn = btDot(vr, normal);
    const btVector3 fv = vr - normal * dn;
    const btScalar fc = body.m_cfg.kDF * object->getFriction();
    c.m_cti.m_colObj = object;
    c.m_cti.m_normal = normal;
    c.m_cti.m_offset = offset;
    c.m_node = &n;
    c.m_c0 = ImpulseMatrix(dt, ima, imb, iwi, ra);
    c.m_c1 = ra;
    c.m_c2 = ima * dt;
    c.m_c3 = fv.length2() < (dn * fc * dn * fc) ? 0 : 1 - fc;
    c.m_c4 = object->isStaticOrKinematicObject() ? body.m_cfg.kKHR : body.m_cfg.kCHR;
    c.t1 = c.t2 = btVector3(0, 0, 0); // Tangents of the deformable solver, unused here.
    return true;
}

} // namespace

bool isSoftMeshCall(const btSoftBody* body, const btCollisionObjectWrapper* wrap) {
    if ((body->m_cfg.collisions & btSoftBody::fCollision::RVSmask) != btSoftBody::fCollision::SDF_RS) return false;
    const btCollisionShape* shape = wrap->getCollisionObject()->getCollisionShape();
    return shape != nullptr && isConcaveMesh(shape);
}

SoftRigidContacts::SoftRigidContacts(Backend backend, int threadsOrDevice)
    : m_set(backend, threadsOrDevice), m_instances(m_set) {}

void SoftRigidContacts::gather(btSoftBody* body, const btCollisionObjectWrapper* wrap) {
    const btCollisionObject* object = wrap->getCollisionObject();
    if (!m_touches.empty() && m_touches.back().object == object && m_touches.back().body == body) return;
    m_touches.push_back(Touch{object, object->getCollisionShape(), body, wrap->getWorldTransform()});
}

std::uint32_t SoftRigidContacts::meshOf(const Touch& touch) {
    const MeshInstanceKey key{touch.object, touch.shape, -1, -1};
    for (Held& held : m_held) {
        if (held.key.object == key.object && held.key.shape == key.shape) {
            held.touched = true;
            return held.mesh;
        }
    }
    m_held.push_back(Held{key, m_instances.acquire(key), true});
    return m_held.back().mesh;
}

void SoftRigidContacts::generate() {
    m_contactCount = 0;
    m_queryCount = 0;
    std::sort(m_touches.begin(), m_touches.end(), [](const Touch& a, const Touch& b) {
        return std::tie(a.object, a.shape, a.body) < std::tie(b.object, b.shape, b.body);
    });
    m_touches.erase(
        std::unique(m_touches.begin(), m_touches.end(),
                    [](const Touch& a, const Touch& b) { return a.object == b.object && a.body == b.body; }),
        m_touches.end());
    for (Held& held : m_held) held.touched = false;
    for (std::size_t begin = 0, end = 0; begin < m_touches.size(); begin = end) {
        while (end < m_touches.size() && m_touches[end].object == m_touches[begin].object &&
               m_touches[end].shape == m_touches[begin].shape)
            ++end;
        collideMesh(begin, end);
    }
    m_touches.clear();
    releaseUntouched();
}

void SoftRigidContacts::releaseUntouched() {
    std::size_t kept = 0;
    for (const Held& held : m_held) {
        if (held.touched)
            m_held[kept++] = held;
        else
            m_instances.release(held.mesh);
    }
    m_held.resize(kept);
}

void SoftRigidContacts::collideMesh(std::size_t begin, std::size_t end) {
    const Touch& first = m_touches[begin];
    std::uint32_t mesh;
    try {
        mesh = meshOf(first);
    } catch (const std::invalid_argument&) {
        return; // A shape the engine cannot read (a non-finite vertex): no contacts with it.
    }
    if (!m_instances.place(mesh, first.transform)) return;
    const MeshShapeGeometry& g = m_instances.geometry(mesh);
    // Every active body's nodes, and the reach: the largest contact distance plus the largest move
    // of a node over the step (so that a node that crossed the surface is found).
    m_points.clear();
    m_bodyStarts.assign(1, 0);
    btScalar reach = 0, move = 0;
    for (std::size_t t = begin; t < end; ++t) {
        btSoftBody& body = *m_touches[t].body;
        if (body.isActive()) {
            reach = btMax(reach, body.getCollisionShape()->getMargin() + btScalar(g.margin));
            for (int i = 0; i < body.m_nodes.size(); ++i) {
                const btSoftBody::Node& n = body.m_nodes[i];
                for (int k = 0; k < 3; ++k) m_points.push_back(static_cast<float>(n.m_x[k]));
                move = btMax(move, (n.m_x - n.m_q).length());
            }
        }
        m_bodyStarts.push_back(static_cast<std::uint32_t>(m_points.size() / 3));
    }
    if (m_points.empty()) return;
    m_set.findPointContacts(m_points.data(), static_cast<std::uint32_t>(m_points.size() / 3), mesh,
                            static_cast<double>(reach + move), m_contacts);
    ++m_queryCount;
    const btTransform& world = first.transform;
    const auto corner = [&](std::uint32_t triangle, int k) {
        const float* p = &g.positions[3 * g.indices[3 * triangle + k]];
        return world * btVector3(p[0], p[1], p[2]);
    };
    std::size_t touch = begin;
    for (std::size_t i = 0; i < m_contacts.size();) {
        const std::uint32_t point = m_contacts[i].point;
        while (m_bodyStarts[touch - begin + 1] <= point) ++touch;
        btSoftBody& body = *m_touches[touch].body;
        btSoftBody::Node& n = body.m_nodes[static_cast<int>(point - m_bodyStarts[touch - begin])];
        m_candidates.clear();
        for (; i < m_contacts.size() && m_contacts[i].point == point; ++i) {
            const PointContact& pc = m_contacts[i];
            SoftRigidCandidate candidate;
            if (candidateOf(n, btVector3(pc.onMesh[0], pc.onMesh[1], pc.onMesh[2]), corner(pc.triangle, 0),
                            corner(pc.triangle, 1), corner(pc.triangle, 2), g.twoSided, candidate))
                m_candidates.push_back(candidate);
        }
        if (!n.m_battach)
            addNodeContacts(body, n, first.object, world, body.getCollisionShape()->getMargin() + btScalar(g.margin));
    }
}

void SoftRigidContacts::addNodeContacts(btSoftBody& body, btSoftBody::Node& n, const btCollisionObject* object,
                                        const btTransform& world, btScalar contactDistance) {
    bool anyPenetrating = false;
    for (const SoftRigidCandidate& c : m_candidates) anyPenetrating = anyPenetrating || c.penetrating;
    m_accepted.clear();
    for (const SoftRigidCandidate& c : m_candidates) {
        // Once the node went through a triangle, the planes of its neighbours it lies behind
        // would pull it further through.
        if (c.separation >= contactDistance || (anyPenetrating && c.behind && !c.penetrating)) continue;
        bool seen = false; // Triangles sharing the closest point (an edge, a vertex) count once.
        for (const btVector3& used : m_accepted) seen = seen || (used - c.onMesh).length2() < SIMD_EPSILON;
        if (seen) continue;
        m_accepted.push_back(c.onMesh);
        // CollideSDF_RS's plane: through the point contactDistance out along the normal.
        const btScalar dst = c.separation - contactDistance;
        const btScalar offset = -btDot(c.normal, n.m_x - c.normal * dst);
        btSoftBody::RContact contact;
        if (makeContact(body, n, object, world, c.normal, offset, contact)) {
            body.m_rcontacts.push_back(contact);
            ++m_contactCount;
        }
    }
}

} // namespace bulletgpu
