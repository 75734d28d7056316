// SPDX-License-Identifier: Zlib
#include "bullet_adapter/soft_body_meshes.h"

#include <BulletSoftBody/btSoftBody.h>

#include <algorithm>

namespace bulletgpu {

SoftBodyMeshes::SoftBodyMeshes(Backend backend, int threadsOrDevice) : m_set(backend, threadsOrDevice) {}

void SoftBodyMeshes::beginPass() {
    ++m_pass;
    // Idle engine meshes: those of stale bodies and those left behind by changed faces.
    std::size_t fresh = 0;
    for (const auto& entry : m_meshes) fresh += entry.second.mesh != ~0u && m_pass - entry.second.seen <= cStalePasses;
    if (m_set.meshCount() - fresh <= std::max(cSpareMeshes, fresh)) return;
    m_set.clear();
    m_bodyOfMesh.clear();
    for (auto it = m_meshes.begin(); it != m_meshes.end();) {
        if (m_pass - it->second.seen > cStalePasses) {
            it = m_meshes.erase(it);
        } else {
            it->second.mesh = ~0u;
            ++it;
        }
    }
}

std::uint32_t SoftBodyMeshes::meshAt(btSoftBody& body, bool again) {
    BodyMesh& m = m_meshes[&body];
    if (!again && m.seen == m_pass && m.mesh != ~0u) return m.mesh;
    m.seen = m_pass;
    m_scratchIndices.clear();
    for (int f = 0; f < body.m_faces.size(); ++f)
        for (int k = 0; k < 3; ++k)
            m_scratchIndices.push_back(static_cast<std::uint32_t>(body.m_faces[f].m_n[k] - &body.m_nodes[0]));
    const bool remade = m.mesh == ~0u || m.indices != m_scratchIndices ||
                        m.positions.size() != 3 * static_cast<std::size_t>(body.m_nodes.size());
    m.positions.resize(3 * static_cast<std::size_t>(body.m_nodes.size()));
    for (int i = 0; i < body.m_nodes.size(); ++i)
        for (int k = 0; k < 3; ++k) m.positions[3 * i + k] = static_cast<float>(body.m_nodes[i].m_x[k]);
    if (!remade) {
        m_set.setPositions(m.mesh, m.positions.data());
        return m.mesh;
    }
    // A new body, or one whose faces changed: the old mesh stays idle until the next clearing.
    m.indices.swap(m_scratchIndices);
    m.mesh = m_set.addMesh(m.positions.data(), static_cast<std::uint32_t>(body.m_nodes.size()), m.indices.data(),
                           static_cast<std::uint32_t>(body.m_faces.size()));
    m_bodyOfMesh.resize(std::max<std::size_t>(m_bodyOfMesh.size(), m.mesh + 1), nullptr);
    m_bodyOfMesh[m.mesh] = &body;
    return m.mesh;
}

} // namespace bulletgpu
