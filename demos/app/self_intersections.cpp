// SPDX-License-Identifier: Zlib
#include "demos/app/self_intersections.h"

#include <BulletSoftBody/btSoftBody.h>

#include <algorithm>

namespace bulletgpu::demo {
namespace {

void readPositions(const btSoftBody& body, std::vector<float>& positions) {
    positions.clear();
    for (int n = 0; n < body.m_nodes.size(); ++n)
        for (int k = 0; k < 3; ++k) positions.push_back(static_cast<float>(body.m_nodes[n].m_x[k]));
}

} // namespace

SelfIntersectionCounter::SelfIntersectionCounter() : m_set(Backend::Cpu, 0) {}

long long SelfIntersectionCounter::count(const btAlignedObjectArray<btSoftBody*>& bodies) {
    long long total = -1;
    for (int b = 0; b < bodies.size(); ++b) {
        const btSoftBody& body = *bodies[b];
        if (body.m_faces.size() == 0) continue;
        readPositions(body, m_positions);
        const auto nodes = static_cast<std::uint32_t>(body.m_nodes.size());
        const Body* known = nullptr;
        for (const Body& entry : m_bodies) {
            if (entry.body == &body && entry.nodes == nodes) known = &entry;
        }
        if (known == nullptr) {
            m_indices.clear();
            for (int f = 0; f < body.m_faces.size(); ++f)
                for (int k = 0; k < 3; ++k)
                    m_indices.push_back(static_cast<std::uint32_t>(body.m_faces[f].m_n[k] - &body.m_nodes[0]));
            const std::uint32_t mesh = m_set.addMesh(m_positions.data(), nodes, m_indices.data(),
                                                     static_cast<std::uint32_t>(m_indices.size() / 3));
            m_bodies.push_back(Body{&body, mesh, nodes});
            known = &m_bodies.back();
        } else {
            m_set.setPositions(known->mesh, m_positions.data());
        }
        m_set.findSelfContacts(known->mesh, m_contacts);
        total = std::max(total, 0LL) + static_cast<long long>(m_contacts.size());
    }
    return total;
}

} // namespace bulletgpu::demo
