// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/narrow/distance/rss_tree.h"

#include <cstdint>
#include <vector>

/// Separation distance between two rigid triangle meshes (issue 33, part 3), on the CPU.

namespace bulletgpu {

/// Options of a distance query.
struct DistanceOptions {
    int threads = 2; ///< OpenMP threads of the traversal.
    /// RSS bounds the calling thread computes alone before the pending pairs go to all threads
    /// (waking a sleeping thread and waiting for it can take milliseconds on a loaded machine,
    /// where most queries take less).
    std::uint64_t serialBounds = 131072;
};

/// The answer of a distance query. When the meshes do not meet: the smallest distance between
/// a triangle of A and a triangle of B (triangleDistance, in the world frame, in double), the
/// pair realising it with the smallest (triangleA, triangleB) among equals, and its closest
/// points. When they meet: distance 0, `intersecting`, and one meeting pair with a point where
/// they meet (which pair may depend on the threads). With an empty mesh: infinite distance and
/// cNoNode triangles.
struct DistanceResult {
    double distance = INFINITY;        ///< Distance between the meshes (0 when they meet).
    double pointA[3] = {0, 0, 0};      ///< Closest point on mesh A (world frame).
    double pointB[3] = {0, 0, 0};      ///< Closest point on mesh B (world frame).
    std::uint32_t triangleA = cNoNode; ///< Triangle of A holding pointA.
    std::uint32_t triangleB = cNoNode; ///< Triangle of B holding pointB.
    bool intersecting = false;         ///< The meshes meet (exact test).
    std::uint64_t volumeTests = 0;     ///< RSS lower bounds computed.
    std::uint64_t triangleTests = 0;   ///< Triangle pairs measured.
};

/// Meshes with their RSS trees, and distance queries between any two of them under rigid
/// transforms. Traversal (gProximity section 4.2): node pairs are walked depth first, the
/// larger node of a pair split, the child pair with the smaller lower bound visited first, and
/// every pair pruned whose lower bound, less the query's rounding allowance, exceeds the
/// smallest triangle distance found so far (its first path is the greedy descent to the
/// closest-looking leaf pair). The calling thread walks alone for the first serialBounds
/// bounds (most queries end there); the pairs still pending are then cut into tasks, ordered
/// by their bounds, for `threads` threads that share the running bound through an atomic
/// double and keep their own best pair. The result is the smallest (distance, triangleA,
/// triangleB) of them all; since no pair that could equal it is ever pruned (bounds fall short
/// of every distance below them by the allowance, and pruning is strict), it does not depend
/// on the threads. An exactly meeting pair stops every thread.
class MeshDistance {
public:
    /// Copies a mesh (`positions`: x, y, z floats per vertex in its own frame, `indices`: three
    /// per triangle) and builds its tree on `threads`; returns its id (0, 1, ...).
    std::uint32_t addMesh(const float* positions, std::uint32_t vertexCount, const std::uint32_t* indices,
                          std::uint32_t triangleCount, int threads = 2);

    /// The distance between meshes `meshA` and `meshB` placed by the rigid transforms
    /// `transformA` and `transformB` (row-major 3x4 [R | t] in double, R a rotation to double
    /// rounding; null: identity). Triangle corners are moved to the world frame by
    /// transformPoint, as the brute-force oracle moves them.
    DistanceResult distance(std::uint32_t meshA, const double* transformA, std::uint32_t meshB,
                            const double* transformB, const DistanceOptions& options = {}) const;

    /// Meshes added.
    std::uint32_t meshCount() const { return static_cast<std::uint32_t>(m_meshes.size()); }
    /// The tree of a mesh.
    const RssTree& tree(std::uint32_t mesh) const { return m_meshes[mesh].tree; }

private:
    /// One mesh and its tree.
    struct Mesh {
        std::vector<float> positions;       ///< x, y, z per vertex.
        std::vector<std::uint32_t> indices; ///< Three per triangle.
        RssTree tree;                       ///< RSS over its triangles.
        double magnitude;                   ///< Largest |coordinate| of its vertices.
    };
    std::vector<Mesh> m_meshes;
};

} // namespace bulletgpu
