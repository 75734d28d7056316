// SPDX-License-Identifier: Zlib
#include "bullet_adapter/soft_rigid_contacts.h"

#include "bullet_adapter/world_order.h"

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

/// Passes of keepSides over the contacts (a node may touch several triangles).
constexpr int cSidePasses = 2;
/// Squared distance within which closest points on triangles count as one point (an edge, a
/// vertex).
constexpr btScalar cSharedPoint = btScalar(1e-10);
/// How far in front of the surface keepSides puts a node that ended behind it.
constexpr btScalar cSideClearance = btScalar(1e-4);

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

/// Whether `y` lies over the triangle (a, b, c) of unit normal `n` (projected along n), with
/// cCrossingSlack of its area to spare (Bullet's BaryCoord is unsigned, so signed areas here).
bool overTriangle(const btVector3& y, const btVector3& a, const btVector3& b, const btVector3& c, const btVector3& n) {
    const btScalar slack = -cCrossingSlack * (b - a).cross(c - a).dot(n);
    return (b - y).cross(c - y).dot(n) >= slack && (c - y).cross(a - y).dot(n) >= slack &&
           (a - y).cross(b - y).dot(n) >= slack;
}

/// Whether the segment from `q` to `x` passes through the triangle (a, b, c) of unit normal `n`,
/// with `q` in front of it (n . (q - a) >= 0) and `x` behind.
bool crosses(const btVector3& q, const btVector3& x, const btVector3& a, const btVector3& b, const btVector3& c,
             const btVector3& n) {
    const btScalar dq = n.dot(q - a), dx = n.dot(x - a);
    if (!(dq >= 0 && dx < 0)) return false;
    return overTriangle(q + (x - q) * (dq / (dq - dx)), a, b, c, n);
}

/// The unit winding normal of the triangle (a, b, c); false when it has no area.
bool windingNormal(const btVector3& a, const btVector3& b, const btVector3& c, btVector3& normal) {
    normal = (b - a).cross(c - a);
    if (!(normal.length2() > 0)) return false;
    normal.normalize();
    return true;
}

/// The candidate of node `n` against the triangle (a, b, c) whose closest point is `onMesh`,
/// keeping the node on side `side` of the winding (+1 in front, -1 behind); false for a
/// degenerate triangle. Behind the triangle is penetrating when the node went through it this
/// step or, with `settled` (a closed mesh, or a side remembered from the last step), when it lies
/// straight behind the face rather than off an edge.
bool candidateOf(const btSoftBody::Node& n, const btVector3& onMesh, const btVector3& a, const btVector3& b,
                 const btVector3& c, btScalar side, bool settled, SoftRigidCandidate& out) {
    btVector3 face;
    if (!windingNormal(a, b, c, face)) return false;
    face *= side;
    const btVector3 away = n.m_x - onMesh;
    const btScalar length = away.length();
    out.onMesh = onMesh;
    out.corners[0] = a;
    out.corners[1] = b;
    out.corners[2] = c;
    out.face = face;
    out.behind = face.dot(n.m_x - a) < 0;
    const bool faceRegion = away.cross(face).length() <= btScalar(1e-3) * length;
    out.penetrating = out.behind && (crosses(n.m_q, n.m_x, a, b, c, face) || (settled && faceRegion));
    out.separation = out.penetrating ? -length : length;
    out.normal = length > SIMD_EPSILON ? away / out.separation : face;
    if (out.penetrating && out.normal.dot(face) < 0) out.normal = face;
    return true;
}

} // namespace

bool makeRigidContact(btSoftBody& body, btSoftBody::Node& n, const btCollisionObject* object, const btTransform& world,
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

std::uint32_t SoftRigidContacts::meshOf(const Touch& touch, std::uint64_t& serial) {
    const MeshInstanceKey key{touch.object, touch.shape, -1, -1};
    for (Held& held : m_held) {
        if (held.key.object == key.object && held.key.shape == key.shape) {
            held.touched = true;
            serial = held.serial;
            return held.mesh;
        }
    }
    m_held.push_back(Held{key, m_instances.acquire(key), true, ++m_acquisitions});
    serial = m_held.back().serial;
    return m_held.back().mesh;
}

void SoftRigidContacts::generate() {
    m_contactCount = 0;
    m_queryCount = 0;
    m_facePairs.clear();
    std::sort(m_touches.begin(), m_touches.end(), [](const Touch& a, const Touch& b) {
        return std::make_tuple(worldOrder(a.object), a.shape, worldOrder(a.body)) <
               std::make_tuple(worldOrder(b.object), b.shape, worldOrder(b.body));
    });
    m_touches.erase(
        std::unique(m_touches.begin(), m_touches.end(),
                    [](const Touch& a, const Touch& b) { return a.object == b.object && a.body == b.body; }),
        m_touches.end());
    for (Held& held : m_held) held.touched = false;
    for (Sides& sides : m_sides) sides.touched = false;
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
    m_sides.erase(std::remove_if(m_sides.begin(), m_sides.end(), [](const Sides& s) { return !s.touched; }),
                  m_sides.end());
}

void SoftRigidContacts::collideMesh(std::size_t begin, std::size_t end) {
    const Touch& first = m_touches[begin];
    std::uint32_t mesh;
    std::uint64_t serial = 0;
    try {
        mesh = meshOf(first, serial);
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
            const btScalar bodyReach = body.getCollisionShape()->getMargin() + btScalar(g.margin);
            reach = btMax(reach, bodyReach);
            if (!g.twoSided && body.m_faces.size() > 0)
                m_facePairs.push_back(SoftMeshFacePair{&body, first.object, &g, serial, first.transform, bodyReach});
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
    std::size_t i = 0;
    for (std::size_t t = begin; t < end; ++t) {
        std::vector<std::int8_t>& sides = sidesOf(m_touches[t]);
        m_previousSides.assign(sides.begin(), sides.end());
        std::fill(sides.begin(), sides.end(), 0);
        const std::uint32_t firstPoint = m_bodyStarts[t - begin], lastPoint = m_bodyStarts[t - begin + 1];
        while (i < m_contacts.size() && m_contacts[i].point < lastPoint) {
            const std::uint32_t point = m_contacts[i].point, node = point - firstPoint;
            std::size_t nodeEnd = i;
            while (nodeEnd < m_contacts.size() && m_contacts[nodeEnd].point == point) ++nodeEnd;
            sides[node] = collideNode(m_touches[t], node, i, nodeEnd, m_previousSides[node], g);
            i = nodeEnd;
        }
    }
}

std::int8_t SoftRigidContacts::collideNode(const Touch& touch, std::uint32_t node, std::size_t begin, std::size_t end,
                                           std::int8_t remembered, const MeshShapeGeometry& g) {
    btSoftBody& body = *touch.body;
    const btTransform& world = touch.transform;
    btSoftBody::Node& n = body.m_nodes[static_cast<int>(node)];
    const auto corner = [&](std::uint32_t triangle, int k) {
        const float* p = &g.positions[3 * g.indices[3 * triangle + k]];
        return world * btVector3(p[0], p[1], p[2]);
    };
    // The side kept: a closed mesh's outside; on an open one the side remembered from the last
    // step, or else the side of the closest triangle's winding that m_q lies on.
    std::size_t closest = begin;
    for (std::size_t k = begin; k < end; ++k)
        if (std::fabs(m_contacts[k].distance) < std::fabs(m_contacts[closest].distance)) closest = k;
    std::int8_t side = g.twoSided ? remembered : 1;
    if (side == 0) {
        const std::uint32_t triangle = m_contacts[closest].triangle;
        const btVector3 a = corner(triangle, 0);
        btVector3 winding;
        side =
            windingNormal(a, corner(triangle, 1), corner(triangle, 2), winding) && winding.dot(n.m_q - a) < 0 ? -1 : 1;
    }
    const bool settled = !g.twoSided || remembered != 0;
    m_candidates.clear();
    const bool held = n.m_im > 0 && !n.m_battach;
    if (held) m_nodeSides.push_back(NodeSides{&body, &n, n.m_q, static_cast<std::uint32_t>(m_sideTriangles.size()), 0});
    for (std::size_t k = begin; k < end; ++k) {
        const PointContact& pc = m_contacts[k];
        SoftRigidCandidate candidate;
        // Lying straight behind a face counts as being inside only for the closest triangle: a node
        // over a thin part (an ear) lies straight behind the far side's faces too.
        if (!candidateOf(n, btVector3(pc.onMesh[0], pc.onMesh[1], pc.onMesh[2]), corner(pc.triangle, 0),
                         corner(pc.triangle, 1), corner(pc.triangle, 2), side, settled && k == closest, candidate))
            continue;
        m_candidates.push_back(candidate);
        if (held) {
            const std::uint32_t* v = &g.indices[3 * pc.triangle];
            m_sideTriangles.push_back(SideTriangle{{candidate.corners[0], candidate.corners[1], candidate.corners[2]},
                                                   candidate.face,
                                                   {v[0], v[1], v[2]}});
            ++m_nodeSides.back().count;
        }
    }
    if (!n.m_battach)
        addNodeContacts(body, n, touch.object, world, body.getCollisionShape()->getMargin() + btScalar(g.margin));
    return side;
}

std::vector<std::int8_t>& SoftRigidContacts::sidesOf(const Touch& touch) {
    for (Sides& s : m_sides) {
        if (s.object == touch.object && s.body == touch.body) {
            s.touched = true;
            s.sides.resize(static_cast<std::size_t>(touch.body->m_nodes.size()), 0);
            return s.sides;
        }
    }
    m_sides.push_back(Sides{touch.object, touch.body, {}, true});
    m_sides.back().sides.assign(static_cast<std::size_t>(touch.body->m_nodes.size()), 0);
    return m_sides.back().sides;
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
        if (makeRigidContact(body, n, object, world, c.normal, offset, contact)) {
            body.m_rcontacts.push_back(contact);
            ++m_contactCount;
            if (n.m_im > 0 && c.penetrating) m_surfaces.push_back(Surface{&body, &n, c.normal, c.onMesh});
        }
    }
}

bool SoftRigidContacts::closestSide(const NodeSides& node, btVector3& closest, btVector3& normal) {
    const btVector3& x = node.node->m_x;
    const SideTriangle* triangles = &m_sideTriangles[node.first];
    m_closest.resize(node.count);
    btScalar best = SIMD_INFINITY;
    for (std::uint32_t t = 0; t < node.count; ++t) {
        const btVector3* p = triangles[t].corners;
        btScalar d = SIMD_INFINITY;
        m_closest[t] = btVector3(0, 0, 0);
        ProjectOrigin(p[0] - x, p[1] - x, p[2] - x, m_closest[t], d);
        m_closest[t] += x;
        best = btMin(best, d);
    }
    if (!(best < SIMD_INFINITY)) return false;
    // The triangles sharing the closest point, and the edges through it (each must be shared by
    // two of them, else the point is on the boundary).
    closest = btVector3(0, 0, 0);
    normal = btVector3(0, 0, 0);
    m_edges.clear();
    for (std::uint32_t t = 0; t < node.count; ++t) {
        if ((m_closest[t] - x).length2() > best + cSharedPoint) continue;
        closest = m_closest[t];
        normal += triangles[t].face;
        for (int k = 0; k < 3; ++k) {
            const btVector3 a = triangles[t].corners[k], b = triangles[t].corners[(k + 1) % 3];
            btScalar d = SIMD_INFINITY;
            btVector3 onEdge(0, 0, 0);
            ProjectOrigin(a - closest, b - closest, onEdge, d);
            if (d > cSharedPoint) continue;
            const std::uint32_t u = triangles[t].vertices[k], v = triangles[t].vertices[(k + 1) % 3];
            m_edges.push_back(std::min(u, v) * std::uint64_t(1) << 32 | std::max(u, v));
        }
    }
    std::sort(m_edges.begin(), m_edges.end());
    for (std::size_t e = 0; e < m_edges.size();) {
        std::size_t same = e;
        while (same < m_edges.size() && m_edges[same] == m_edges[e]) ++same;
        if (same - e < 2) return false;
        e = same;
    }
    return normal.length2() > SIMD_EPSILON;
}

void SoftRigidContacts::keepSides() {
    m_projectedCount = 0;
    const auto push = [this](btSoftBody& body, btSoftBody::Node& n, const btVector3& normal, btScalar behind) {
        const btVector3 move = normal * (behind + cSideClearance);
        n.m_x += move;
        n.m_v += move * body.m_sst.isdt;
        ++m_projectedCount;
    };
    for (int pass = 0; pass < cSidePasses; ++pass) {
        for (const NodeSides& node : m_nodeSides) {
            // Behind a triangle it went through since the step's start (lying straight behind a
            // triangle says nothing over a thin part: the closest point below decides that).
            for (std::uint32_t t = node.first; t < node.first + node.count; ++t) {
                const SideTriangle& tri = m_sideTriangles[t];
                const btVector3& x = node.node->m_x;
                const btVector3* p = tri.corners;
                const btScalar behind = tri.face.dot(p[0] - x);
                if (behind > 0 && crosses(node.start, x, p[0], p[1], p[2], tri.face))
                    push(*node.body, *node.node, tri.face, behind);
            }
            // Behind the closest point's normal (an edge, a vertex).
            btVector3 closest, normal;
            if (!closestSide(node, closest, normal)) continue;
            normal.normalize();
            const btScalar behind = normal.dot(closest - node.node->m_x);
            if (behind > 0) push(*node.body, *node.node, normal, behind);
        }
        for (const Surface& s : m_surfaces) {
            const btScalar behind = s.normal.dot(s.point - s.node->m_x);
            if (behind > 0) push(*s.body, *s.node, s.normal, behind);
        }
    }
    m_surfaces.clear();
    m_nodeSides.clear();
    m_sideTriangles.clear();
}

} // namespace bulletgpu
