// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/TriangleMeshSet.h>

#include <LinearMath/btAlignedObjectArray.h>

#include <cstdint>
#include <vector>

class btSoftBody;

namespace bulletgpu::demo {

/// Counts, among a world's soft bodies, the pairs of triangles of one soft body that share no vertex and
/// meet (cloth passing through itself), with the engine's discrete query on the CPU, as the
/// self-collision tests do. Each soft body with faces is one engine mesh, added the first time it
/// is seen (a body's faces must not change after that).
class SelfIntersectionCounter {
public:
    SelfIntersectionCounter();

    /// Intersecting triangle pairs sharing no vertex, summed over the soft bodies (a soft or
    /// deformable world's getSoftBodyArray()), at their current node positions; -1 when no soft
    /// body has faces (ropes only).
    long long count(const btAlignedObjectArray<btSoftBody*>& bodies);

private:
    struct Body {
        const void* body;    // the btSoftBody it counts
        std::uint32_t mesh;  // its engine mesh
        std::uint32_t nodes; // its node count
    };

    TriangleMeshSet m_set;
    std::vector<Body> m_bodies;
    std::vector<float> m_positions;
    std::vector<std::uint32_t> m_indices;
    std::vector<TriangleContact> m_contacts;
};

} // namespace bulletgpu::demo
