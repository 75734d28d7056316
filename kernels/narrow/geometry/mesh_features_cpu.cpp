// SPDX-License-Identifier: Zlib
// Mesh features on the host: edges by sorting the triangles' sides, owners in one pass, welds by
// sorting the positions.
#include "kernels/narrow/geometry/mesh_features.h"

#include <algorithm>
#include <cstddef>
#include <numeric>

namespace bulletgpu {

void buildMeshFeatures(const std::uint32_t* indices, std::uint32_t triangleCount, std::uint32_t vertexCount,
                       MeshFeatures& out) {
    const std::size_t sides = 3 * static_cast<std::size_t>(triangleCount);
    // Each side as (lower << 32 | higher), with its position, sorted: equal keys are one edge.
    std::vector<std::uint64_t> keys(sides);
    std::vector<std::uint32_t> order(sides);
    for (std::size_t s = 0; s < sides; ++s) {
        const std::uint32_t a = indices[s], b = indices[s - s % 3 + (s % 3 + 1) % 3];
        keys[s] = static_cast<std::uint64_t>(std::min(a, b)) << 32 | std::max(a, b);
    }
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t x, std::uint32_t y) { return keys[x] != keys[y] ? keys[x] < keys[y] : x < y; });
    out.edges.clear();
    out.triangleEdges.assign(sides, 0);
    out.owned.assign(triangleCount, 0);
    for (std::size_t i = 0; i < sides; ++i) {
        const std::uint32_t side = order[i];
        if (i == 0 || keys[side] != keys[order[i - 1]]) {
            out.edges.push_back(static_cast<std::uint32_t>(keys[side] >> 32));
            out.edges.push_back(static_cast<std::uint32_t>(keys[side]));
            // The first side of the run has the lowest position: the lowest triangle, first side.
            out.owned[side / 3] |= ownsEdgeBit(static_cast<int>(side % 3));
        }
        out.triangleEdges[side] = static_cast<std::uint32_t>(out.edges.size() / 2 - 1);
    }
    std::vector<bool> seen(vertexCount, false);
    for (std::size_t c = 0; c < sides; ++c) {
        if (seen[indices[c]]) continue;
        seen[indices[c]] = true;
        out.owned[c / 3] |= ownsVertexBit(static_cast<int>(c % 3));
    }
}

void weldVertices(const float* positions, std::uint32_t vertexCount, std::vector<std::uint32_t>& weld,
                  std::vector<std::uint32_t>& order) {
    order.resize(vertexCount);
    std::iota(order.begin(), order.end(), 0u);
    // Float comparisons: -0 and +0 compare equal, and positions are finite.
    const auto before = [positions](std::uint32_t x, std::uint32_t y) {
        const float* p = positions + 3 * static_cast<std::size_t>(x);
        const float* q = positions + 3 * static_cast<std::size_t>(y);
        for (int k = 0; k < 3; ++k) {
            if (p[k] != q[k]) return p[k] < q[k];
        }
        return x < y;
    };
    std::sort(order.begin(), order.end(), before);
    const auto samePosition = [positions](std::uint32_t x, std::uint32_t y) {
        const float* p = positions + 3 * static_cast<std::size_t>(x);
        const float* q = positions + 3 * static_cast<std::size_t>(y);
        return p[0] == q[0] && p[1] == q[1] && p[2] == q[2];
    };
    // Runs of equal positions are sorted by index: the first is the canonical vertex.
    weld.resize(vertexCount);
    std::uint32_t canonical = 0;
    for (std::uint32_t i = 0; i < vertexCount; ++i) {
        if (i == 0 || !samePosition(order[i - 1], order[i])) canonical = order[i];
        weld[order[i]] = canonical;
    }
}

} // namespace bulletgpu
