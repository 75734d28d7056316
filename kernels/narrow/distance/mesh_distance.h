// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/narrow/distance/rss_tree.h"

#include <bulletgpu/Backend.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

/// Separation distance between two rigid triangle meshes (issue 33, part 3), on the CPU or a
/// CUDA device.

namespace bulletgpu {

/// Options of a distance query.
struct DistanceOptions {
    int threads = 2; ///< OpenMP threads of the traversal (CPU backend).
    /// RSS bounds the calling thread computes alone before the pending pairs go to all threads
    /// (waking a sleeping thread and waiting for it can take milliseconds on a loaded machine,
    /// where most queries take less).
    std::uint64_t serialBounds = 131072;
    /// CUDA: most node pairs a round may keep on the first try (0: as many as the buffers hold);
    /// a round that produces more makes the query run again with room for them (for tests of
    /// that path).
    std::uint64_t cudaFrontierLimit = 0;
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

namespace detail {

/// A mesh of a MeshDistance as its engines read it.
struct DistanceMesh {
    std::vector<float> positions;       ///< x, y, z per vertex.
    std::vector<std::uint32_t> indices; ///< Three per triangle.
    RssTree tree;                       ///< RSS over its triangles.
    double magnitude;                   ///< Largest |coordinate| of its vertices.
};

/// One query as the engines receive it: both meshes (non-empty), their transforms (never null)
/// and the rounding allowance of its bounds (querySlack).
struct DistanceQuery {
    const DistanceMesh* a;    ///< Mesh A.
    const DistanceMesh* b;    ///< Mesh B.
    std::uint32_t meshA;      ///< Id of mesh A.
    std::uint32_t meshB;      ///< Id of mesh B.
    const double* transformA; ///< Row-major 3x4 [R | t] of A.
    const double* transformB; ///< Row-major 3x4 [R | t] of B.
    double slack;             ///< Allowance subtracted from every lower bound.
};

/// The CPU traversal (see MeshDistance) on OpenMP threads.
DistanceResult cpuMeshDistance(const DistanceQuery& query, const DistanceOptions& options);

/// A device engine of MeshDistance: keeps copies of the meshes and answers queries with the
/// same result as cpuMeshDistance (the same pair, distance and points when apart).
class DistanceDeviceEngine {
public:
    virtual ~DistanceDeviceEngine() = default;
    /// Uploads mesh number meshCount-1 (its vertices, triangles and tree).
    virtual void addMesh(const DistanceMesh& mesh) = 0;
    /// Answers one query.
    virtual DistanceResult distance(const DistanceQuery& query, const DistanceOptions& options) = 0;
    /// The backend and what it runs on.
    virtual std::string description() const = 0;
};

/// The CUDA engine on `device`; throws std::runtime_error saying why when the library was built
/// without CUDA or the device cannot be used.
std::unique_ptr<DistanceDeviceEngine> createCudaDistanceEngine(int device);

} // namespace detail

/// Meshes with their RSS trees, and distance queries between any two of them under rigid
/// transforms. Traversal on the CPU (gProximity section 4.2): node pairs are walked depth
/// first, the larger node of a pair split, the child pair with the smaller lower bound visited
/// first, and every pair pruned whose lower bound, less the query's rounding allowance, exceeds
/// the smallest triangle distance found so far (its first path is the greedy descent to the
/// closest-looking leaf pair). The calling thread walks alone for the first serialBounds
/// bounds (most queries end there); the pairs still pending are then cut into tasks, ordered
/// by their bounds, for `threads` threads that share the running bound through an atomic
/// double and keep their own best pair. The result is the smallest (distance, triangleA,
/// triangleB) of them all; since no pair that could equal it is ever pruned (bounds fall short
/// of every distance below them by the allowance, and pruning is strict), it does not depend
/// on the threads. An exactly meeting pair stops every thread.
///
/// On CUDA (mesh_distance.cu) the trees are uploaded once per mesh and the same pairs are
/// expanded breadth first, in rounds, with the same bounds and pruning against a running bound
/// shared by the whole device; the result is the same smallest (distance, triangleA,
/// triangleB), so the same pair, distance and points as on the CPU when the meshes are apart.
/// A CUDA MeshDistance runs one query at a time (distance() is not safe to call from several
/// threads at once).
class MeshDistance {
public:
    /// A set of meshes queried on `backend` (`device`: the CUDA device). Auto picks CUDA when a
    /// device is usable; Cuda throws std::runtime_error saying why when none is.
    explicit MeshDistance(Backend backend = Backend::Cpu, int device = 0);
    ~MeshDistance();
    MeshDistance(MeshDistance&&) noexcept;
    MeshDistance& operator=(MeshDistance&&) noexcept;

    /// Copies a mesh (`positions`: x, y, z floats per vertex in its own frame, `indices`: three
    /// per triangle) and builds its tree on `threads` (then uploads it on CUDA); returns its id
    /// (0, 1, ...).
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
    /// The backend in use (Cpu or Cuda).
    Backend backend() const { return m_device ? Backend::Cuda : Backend::Cpu; }
    /// The backend and what it runs on.
    std::string description() const;

private:
    std::vector<detail::DistanceMesh> m_meshes;
    std::unique_ptr<detail::DistanceDeviceEngine> m_device; ///< Null on the CPU.
};

} // namespace bulletgpu
