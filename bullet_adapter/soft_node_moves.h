// SPDX-License-Identifier: Zlib
#pragma once

#include <BulletSoftBody/btSoftBody.h>

#include <cstdint>

/// Writing a collision response's positions back to a soft body's nodes, shared by the cloth,
/// rope and rope-cloth stages.

namespace bulletgpu {

/// Moves the first `count` nodes of `body` to `positions` (x, y, z each), changing each moved
/// node's velocity by its move over `dt`; returns whether any node moved.
inline bool moveNodesTo(btSoftBody& body, const double* positions, std::uint32_t count, double dt) {
    const btScalar inverseDt = static_cast<btScalar>(1 / dt);
    bool moved = false;
    for (std::uint32_t n = 0; n < count; ++n) {
        btSoftBody::Node& node = body.m_nodes[static_cast<int>(n)];
        const double* p = positions + 3 * std::size_t(n);
        const btVector3 corrected(static_cast<btScalar>(p[0]), static_cast<btScalar>(p[1]),
                                  static_cast<btScalar>(p[2]));
        const btVector3 move = corrected - node.m_x;
        if (move.isZero()) continue;
        node.m_x = corrected;
        node.m_v += move * inverseDt;
        moved = true;
    }
    return moved;
}

} // namespace bulletgpu
