// SPDX-License-Identifier: Zlib
#include "bullet_adapter/mesh_face_contacts.h"

#include "bullet_adapter/self_collision_response.h"
#include "bullet_adapter/soft_rigid_contacts.h"

#include <BulletSoftBody/btSoftBody.h>

#include <algorithm>
#include <cmath>

namespace bulletgpu {
namespace {

/// Passes over a step's vertices after the solve (pushing one face can move its neighbours
/// towards a vertex; two passes left an apex through the cloth in some drops, four none).
constexpr int cPasses = 4;

/// The unit normal of the triangle (a, b, c); false when it has no area.
bool unitNormal(const btVector3& a, const btVector3& b, const btVector3& c, btVector3& normal) {
    normal = (b - a).cross(c - a);
    if (!(normal.length2() > SIMD_EPSILON * SIMD_EPSILON)) return false;
    normal.normalize();
    return true;
}

/// `v` in double.
Vec3d toVec3d(const btVector3& v) { return Vec3d{{double(v.x()), double(v.y()), double(v.z())}}; }

} // namespace

MeshFaceContacts::MeshFaceContacts(Backend backend, int threadsOrDevice) : m_meshes(backend, threadsOrDevice) {}

const std::vector<float>& MeshFaceContacts::normalsOf(const SoftMeshFacePair& pair) {
    for (VertexNormals& v : m_normals) {
        if (v.serial == pair.serial) {
            v.used = true;
            return v.normals;
        }
    }
    // Area-weighted: each triangle adds its unnormalized normal to its three corners.
    const MeshShapeGeometry& g = *pair.geometry;
    std::vector<float> normals(g.positions.size(), 0.0f);
    const auto vertex = [&](std::uint32_t i) {
        return btVector3(g.positions[3 * i], g.positions[3 * i + 1], g.positions[3 * i + 2]);
    };
    for (std::size_t t = 0; t + 2 < g.indices.size(); t += 3) {
        const std::uint32_t* v = &g.indices[t];
        const btVector3 n = (vertex(v[1]) - vertex(v[0])).cross(vertex(v[2]) - vertex(v[0]));
        for (int k = 0; k < 3; ++k)
            for (int a = 0; a < 3; ++a) normals[3 * v[k] + a] += static_cast<float>(n[a]);
    }
    for (std::size_t i = 0; i < normals.size(); i += 3) {
        btVector3 n(normals[i], normals[i + 1], normals[i + 2]);
        n = n.length2() > 0 ? n.normalized() : btVector3(0, 0, 0);
        for (int a = 0; a < 3; ++a) normals[i + a] = static_cast<float>(n[a]);
    }
    m_normals.push_back(VertexNormals{pair.serial, std::move(normals), true});
    return m_normals.back().normals;
}

void MeshFaceContacts::findVertices(const SoftMeshFacePair& pair, const std::vector<float>& normals) {
    btSoftBody& body = *pair.body;
    m_points.clear();
    m_vertices.clear();
    // The body's box at its current positions, grown by the reach and the largest node move (a
    // face that came through a vertex during the step is that close to it).
    btVector3 lo(SIMD_INFINITY, SIMD_INFINITY, SIMD_INFINITY), hi = -lo;
    btScalar move = 0;
    for (int i = 0; i < body.m_nodes.size(); ++i) {
        const btSoftBody::Node& n = body.m_nodes[i];
        if (!std::isfinite(n.m_x.x() + n.m_x.y() + n.m_x.z() + n.m_q.x() + n.m_q.y() + n.m_q.z()))
            return; // A node gone non-finite: no engine mesh can follow it.
        lo.setMin(n.m_x);
        hi.setMax(n.m_x);
        move = btMax(move, (n.m_x - n.m_q).length());
    }
    const btScalar distance = pair.reach + move;
    if (!(lo.x() <= hi.x())) return;
    const btVector3 grow(distance, distance, distance);
    lo -= grow;
    hi += grow;
    const MeshShapeGeometry& g = *pair.geometry;
    const btMatrix3x3& basis = pair.transform.getBasis();
    for (std::size_t i = 0; 3 * i < g.positions.size(); ++i) {
        const float* p = &g.positions[3 * i];
        const btVector3 x = pair.transform * btVector3(p[0], p[1], p[2]);
        const float* n = &normals[3 * i];
        // Not finite (a non-finite transform or vertex): no point the engine could query.
        if (!std::isfinite(x.x() + x.y() + x.z())) continue;
        if (x.x() < lo.x() || x.y() < lo.y() || x.z() < lo.z() || x.x() > hi.x() || x.y() > hi.y() || x.z() > hi.z() ||
            (n[0] == 0 && n[1] == 0 && n[2] == 0))
            continue;
        for (int k = 0; k < 3; ++k) m_points.push_back(static_cast<float>(x[k]));
        m_vertices.push_back(Vertex{x, basis * btVector3(n[0], n[1], n[2]), 0, 0});
    }
    if (m_vertices.empty()) return;
    // The body's faces where its nodes are now (respond's pushes move them between pairs).
    m_meshes.set().findPointContacts(m_points.data(), static_cast<std::uint32_t>(m_vertices.size()),
                                     m_meshes.meshAtCurrent(body), static_cast<double>(distance), m_contacts);
    // Candidates per vertex (the contacts come sorted by point).
    for (std::size_t i = 0; i < m_contacts.size();) {
        std::size_t end = i;
        while (end < m_contacts.size() && m_contacts[end].point == m_contacts[i].point) ++end;
        Vertex& v = m_vertices[m_contacts[i].point];
        v.begin = i;
        v.end = end;
        i = end;
    }
}

bool MeshFaceContacts::meetFace(const btSoftBody& body, const Vertex& vertex, int face, btScalar reach,
                                Meeting& out) const {
    const btVector3& p = vertex.position;
    const btSoftBody::Node* const* nodes = body.m_faces[face].m_n;
    out.face = face;
    closestTriangleWeights(toVec3d(p), toVec3d(nodes[0]->m_x), toVec3d(nodes[1]->m_x), toVec3d(nodes[2]->m_x),
                           out.weights);
    out.q = nodes[0]->m_x * btScalar(out.weights[0]) + nodes[1]->m_x * btScalar(out.weights[1]) +
            nodes[2]->m_x * btScalar(out.weights[2]);
    btVector3 normal, startNormal;
    if (!unitNormal(nodes[0]->m_x, nodes[1]->m_x, nodes[2]->m_x, normal)) return false;
    if (!unitNormal(nodes[0]->m_q, nodes[1]->m_q, nodes[2]->m_q, startNormal)) startNormal = normal;
    // The face moves away from the side of its plane the vertex was on at the step's start, and
    // only outward from the mesh (a face already through the vertex at the start stays so).
    out.away = startNormal.dot(p - nodes[0]->m_q) >= 0 ? -normal : normal;
    out.gap = (out.q - p).dot(out.away);
    return out.away.dot(vertex.normal) > 0 && out.gap < reach;
}

bool MeshFaceContacts::meet(const btSoftBody& body, const Vertex& vertex, btScalar reach, Meeting& out) const {
    // The closest candidate face at the current positions.
    const btVector3& p = vertex.position;
    const Vec3d pd = toVec3d(p);
    int closest = -1;
    btScalar best = SIMD_INFINITY;
    for (std::size_t k = vertex.begin; k < vertex.end; ++k) {
        const btSoftBody::Face& f = body.m_faces[static_cast<int>(m_contacts[k].triangle)];
        double w[3];
        closestTriangleWeights(pd, toVec3d(f.m_n[0]->m_x), toVec3d(f.m_n[1]->m_x), toVec3d(f.m_n[2]->m_x), w);
        const btVector3 q =
            f.m_n[0]->m_x * btScalar(w[0]) + f.m_n[1]->m_x * btScalar(w[1]) + f.m_n[2]->m_x * btScalar(w[2]);
        const btScalar d = (q - p).length2();
        if (d < best) {
            best = d;
            closest = static_cast<int>(m_contacts[k].triangle);
        }
    }
    return closest >= 0 && meetFace(body, vertex, closest, reach, out);
}

void MeshFaceContacts::addFaceContacts(const SoftMeshFacePair& pair, const Vertex& vertex, const Meeting& m) {
    btSoftBody& body = *pair.body;
    bool supported = false;
    for (int k = 0; k < 3; ++k) supported = supported || m_supported[body.m_faces[m.face].m_n[k] - &body.m_nodes[0]];
    for (int k = 0; k < 3; ++k) {
        btSoftBody::Node& n = *body.m_faces[m.face].m_n[k];
        if (n.m_battach) continue;
        // The plane through the vertex at the reach, moved by the node's height over q: Bullet
        // sees the face's gap at each node (dot(x, normal) + offset = gap - reach).
        const btScalar offset = -(m.away.dot(vertex.position) + pair.reach + m.away.dot(n.m_x - m.q));
        btSoftBody::RContact contact;
        if (makeRigidContact(body, n, pair.object, pair.transform, m.away, offset, contact)) {
            if (!supported) contact.m_c3 = 0; // The vertex alone holds the face: it sticks, not slides off.
            body.m_rcontacts.push_back(contact);
            ++m_contactCount;
        }
    }
}

void MeshFaceContacts::push(btSoftBody& body, const Vertex& vertex, btScalar reach) {
    Meeting m;
    if (!meet(body, vertex, reach, m)) return;
    btSoftBody::Node* const* nodes = body.m_faces[m.face].m_n;
    btScalar weighted = 0;
    for (int k = 0; k < 3; ++k) weighted += nodes[k]->m_im * btScalar(m.weights[k] * m.weights[k]);
    if (!(weighted > 0)) return;
    const btScalar delta = reach - m.gap;
    for (int k = 0; k < 3; ++k) {
        const btVector3 move = m.away * (nodes[k]->m_im * btScalar(m.weights[k]) * delta / weighted);
        nodes[k]->m_x += move;
        nodes[k]->m_v += move * body.m_sst.isdt;
    }
    ++m_pushCount;
}

void MeshFaceContacts::addContacts(const std::vector<SoftMeshFacePair>& pairs) {
    m_contactCount = 0;
    m_meshes.beginPass();
    for (VertexNormals& v : m_normals) v.used = false;
    for (const SoftMeshFacePair& pair : pairs) {
        btSoftBody& body = *pair.body;
        if (body.m_faces.size() == 0) continue;
        findVertices(pair, normalsOf(pair));
        if (m_vertices.empty()) continue;
        // The nodes with contacts of their own against the mesh.
        m_supported.assign(static_cast<std::size_t>(body.m_nodes.size()), 0);
        for (int c = 0; c < body.m_rcontacts.size(); ++c)
            if (body.m_rcontacts[c].m_cti.m_colObj == pair.object)
                m_supported[body.m_rcontacts[c].m_node - &body.m_nodes[0]] = 1;
        for (const Vertex& v : m_vertices) {
            for (std::size_t k = v.begin; k < v.end; ++k) {
                Meeting m;
                if (meetFace(*pair.body, v, static_cast<int>(m_contacts[k].triangle), pair.reach, m))
                    addFaceContacts(pair, v, m);
            }
        }
    }
    m_normals.erase(std::remove_if(m_normals.begin(), m_normals.end(), [](const VertexNormals& v) { return !v.used; }),
                    m_normals.end());
}

void MeshFaceContacts::respond(const std::vector<SoftMeshFacePair>& pairs) {
    m_pushCount = 0;
    for (const SoftMeshFacePair& pair : pairs) {
        if (pair.body->m_faces.size() == 0) continue;
        findVertices(pair, normalsOf(pair));
        for (int pass = 0; pass < cPasses; ++pass)
            for (const Vertex& v : m_vertices)
                if (v.begin < v.end) push(*pair.body, v, pair.reach);
    }
}

} // namespace bulletgpu
