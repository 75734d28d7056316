// SPDX-License-Identifier: Zlib
#include "demos/app/rope_proximity.h"

#include <BulletSoftBody/btSoftBody.h>

#include <algorithm>

namespace bulletgpu::demo {

double closestRopeNodes(const btAlignedObjectArray<btSoftBody*>& bodies) {
    double closest = -1;
    for (int b = 0; b < bodies.size(); ++b) {
        const btSoftBody::tNodeArray& nodes = bodies[b]->m_nodes;
        if (bodies[b]->m_faces.size() > 0 || nodes.size() < 3) continue;
        for (int i = 0; i < nodes.size(); ++i) {
            for (int j = i + 2; j < nodes.size(); ++j) {
                const double distance = double((nodes[i].m_x - nodes[j].m_x).length());
                closest = closest < 0 ? distance : std::min(closest, distance);
            }
        }
    }
    return closest;
}

} // namespace bulletgpu::demo
