// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/narrow/bvtt_traversal.h"
#include "kernels/narrow/lbvh.h"
#include "kernels/narrow/triangle_contact.h"

#include <cstdint>
#include <string>
#include <vector>

/// The narrow-phase engine's owner object: triangle meshes, their hierarchies and the queries
/// for intersecting triangle pairs (after Lauterbach, Mo and Manocha, "gProximity", 2010).

namespace bulletgpu {

/// Counters and timings of the last query.
struct NarrowStats {
    std::uint32_t rebuilt = 0;       ///< Trees built (first use, rebuild requested).
    std::uint32_t refitted = 0;      ///< Trees refitted (positions or transform changed).
    double buildMs = 0;              ///< Building trees.
    double refitMs = 0;              ///< Refitting trees (world-frame copies included).
    double traverseMs = 0;           ///< Traversal, exact tests and sorting.
    std::uint64_t boxTests = 0;      ///< Node pairs compared.
    std::uint64_t triangleTests = 0; ///< Triangle pairs given to the exact test.
    std::uint64_t contacts = 0;      ///< Intersecting pairs reported.
};

/// One request of a batch: meshA against meshB, or meshA against itself when they are equal.
struct MeshPairQuery {
    std::uint32_t meshA; ///< First mesh.
    std::uint32_t meshB; ///< Second mesh; meshA for self-collision.
};

/// Triangle meshes and every pair of intersecting triangles within a mesh or between meshes.
///
/// A pair is reported when trianglesIntersect (triangle_intersection.h), exact for the double
/// corners it is given, says the closed triangles meet. Self-collision reads the mesh's float
/// positions as they are and skips pairs that share a vertex index. A pair of meshes reads each
/// mesh's positions moved by its transform in double (transformPoint), or as they are when it
/// has none. Positions changed with setPositions refit the mesh's tree at the next query;
/// requestRebuild builds it anew. Buffers are reused once sizes settle.
class TriangleMeshSet {
public:
    /// A set whose queries run on `threads` OpenMP threads (<= 0: OpenMP's default).
    explicit TriangleMeshSet(int threads = 0);

    /// Adds a mesh of `vertexCount` vertices (x, y, z floats each, finite) and `triangleCount`
    /// triangles (three vertex indices each, below vertexCount). Returns the mesh's index.
    /// Throws std::invalid_argument on bad input.
    std::uint32_t addMesh(const float* positions, std::uint32_t vertexCount, const std::uint32_t* indices,
                          std::uint32_t triangleCount);

    /// Replaces the vertex positions of `mesh` (same count); its tree is refitted at the next query.
    void setPositions(std::uint32_t mesh, const float* positions);

    /// Sets the rigid transform of `mesh` used by pair queries: a row-major 3x4 matrix [R | t]
    /// in double, or null for none.
    void setTransform(std::uint32_t mesh, const double* transform);

    /// Builds the tree of `mesh` anew at the next query (after large deformations).
    void requestRebuild(std::uint32_t mesh);

    /// Removes every mesh.
    void clear();

    /// Number of meshes.
    std::uint32_t meshCount() const { return static_cast<std::uint32_t>(m_meshes.size()); }

    /// Writes the intersecting pairs of distinct triangles of `mesh` that share no vertex.
    void findSelfContacts(std::uint32_t mesh, std::vector<TriangleContact>& contacts);

    /// Writes the intersecting pairs between two different meshes, with their transforms.
    void findPairContacts(std::uint32_t meshA, std::uint32_t meshB, std::vector<TriangleContact>& contacts);

    /// Runs a batch of self and pair queries in one traversal; contacts are sorted by
    /// (meshA, meshB, triangleA, triangleB).
    void findContacts(const MeshPairQuery* queries, std::uint32_t count, std::vector<TriangleContact>& contacts);

    /// The tree of `mesh` in its own frame, as of the last query.
    const Lbvh& tree(std::uint32_t mesh) const { return m_meshes[mesh].tree; }

    /// Runs the tree validators on every mesh: empty when valid, else what is wrong.
    std::string validate() const;

    /// Counters of the last query.
    const NarrowStats& stats() const { return m_stats; }
    /// OpenMP threads the queries use.
    int threads() const { return m_threads; }

private:
    /// One mesh and what is derived from it.
    struct Mesh {
        std::vector<float> positions;
        std::vector<std::uint32_t> indices;
        double transform[12] = {};
        bool hasTransform = false;
        Lbvh tree;
        std::vector<NarrowBox> leafBoxes;      ///< Own frame.
        std::vector<NarrowBox> worldLeafBoxes; ///< Transformed (only with a transform).
        std::vector<LbvhNode> worldNodes;      ///< Tree with transformed boxes.
        bool needsBuild = true;
        bool positionsChanged = false;
        bool worldStale = true;
    };

    /// Builds or refits the mesh's own tree when needed.
    void updateTree(Mesh& mesh);
    /// Refits the mesh's world-frame tree when it has a transform and is stale.
    void updateWorldTree(Mesh& mesh);
    /// The view of a mesh for a query, in its own frame or in the world.
    MeshView viewOf(std::uint32_t index, bool world) const;
    /// Checks a mesh index.
    void checkMesh(std::uint32_t mesh) const;

    int m_threads;
    std::vector<Mesh> m_meshes;
    std::vector<BvttQuery> m_queries;
    BvttTraversal m_traversal;
    NarrowStats m_stats;
};

} // namespace bulletgpu
