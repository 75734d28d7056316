// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/Backend.h>
#include <bulletgpu/NarrowContacts.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

/// The narrow-phase engine: triangle meshes, their hierarchies and the queries for intersecting
/// triangle pairs and for features within a distance (after Lauterbach, Mo and Manocha,
/// "gProximity", 2010), on the CPU or CUDA. Bullet-free; installed with the package.

namespace bulletgpu {

/// How a query walks the bounding-volume test tree.
enum class NarrowTraversal {
    Descent,  ///< Both trees descended together from the roots, one stack per task (gProximity 4.1).
    LeafWalk, ///< Every leaf walks the other tree stacklessly, anew each query (Wang/Tang 2.2).
    Fronts,   ///< The leaf walks' fronts are kept and updated by sprouting and pruning (Wang/Tang 2-3).
};
/// The bounding volumes of a mesh's tree.
enum class BoundingVolume {
    Aabb, ///< Axis-aligned float boxes (cheapest to refit and test).
    Obb,  ///< Boxes and oriented boxes: two nodes are disjoint when either pair is.
};
/// Counters and timings of the last query.
struct NarrowStats {
    std::uint32_t rebuilt = 0;               ///< Trees built (first use, rebuild requested).
    std::uint32_t refitted = 0;              ///< Trees refitted (positions or transform changed).
    double buildMs = 0;                      ///< Building trees and restructuring subtrees.
    double refitMs = 0;                      ///< Refitting trees (world-frame copies and the contact
                                             ///< query's grown trees included).
    double traverseMs = 0;                   ///< Traversal, exact tests and sorting.
    double testMs = 0;                       ///< The exact tests and sorting alone (LeafWalk, Fronts).
    std::uint64_t boxTests = 0;              ///< Node pairs compared (backends differ: the CPU's
                                             ///< front update skips entries below a pruned subtree).
    std::uint64_t triangleTests = 0;         ///< Triangle pairs given to the exact test.
    std::uint64_t contacts = 0;              ///< Intersecting pairs reported.
    std::uint64_t frontEntries = 0;          ///< Entries of the queries' fronts afterwards (LeafWalk, Fronts).
    std::uint32_t frontsGenerated = 0;       ///< Fronts generated anew rather than updated.
    std::uint32_t ownFrameQueries = 0;       ///< Pair queries culled in their first mesh's own frame (a
                                             ///< small moving mesh against a large one; CPU LeafWalk).
    std::uint32_t rebuildsScheduled = 0;     ///< Meshes whose degraded trees the next query rebuilds.
    std::uint32_t restructuresScheduled = 0; ///< Degraded subtrees the next query rebuilds in place.
    std::uint32_t subtreesRestructured = 0;  ///< Subtrees rebuilt in place before this query.
    std::uint64_t leavesRestructured = 0;    ///< Leaves of those subtrees.
    double worstQualityRatio = 1;            ///< Largest front measure over its reference (Wang/Tang 2018, 4.1).
    std::uint64_t neighboursSkipped = 0;     ///< Self contact queries (CPU): candidates sharing a vertex skipped,
                                             ///< their features proven farther apart than the distance.
    std::uint64_t neighbourPatchesApart = 0; ///< Self contact queries (CPU): vertices whose neighbour pairs
                                             ///< were proven apart.
};
/// One request of a batch: meshA against meshB, or meshA against itself when they are equal.
struct MeshPairQuery {
    std::uint32_t meshA; ///< First mesh.
    std::uint32_t meshB; ///< Second mesh; meshA for self-collision.
};
/// The contact query's parameters.
struct ProximityOptions {
    double distance = 0;         ///< Report feature pairs within this distance (finite, >= 0).
    bool excludeWelded = false;  ///< Self queries also skip features whose vertices are welded
                                 ///< (equal positions), as along a mesh's seams.
    bool vertexFaceOnly = false; ///< Only vertex-triangle pairs (VertexFace, FaceVertex): no edge
                                 ///< pairs and no intersecting-triangle records (cheaper).
};

/// Rebuild ratio used unless TriangleMeshSet::setRebuildRatio says otherwise.
constexpr double cDefaultRebuildRatio = 1.5;

class TriangleMeshSet;
class TriangleMeshSetImpl;

namespace detail {
/// The engine behind a set, for the project's own tests and tools (its type is defined in the
/// source tree only).
TriangleMeshSetImpl& implOf(TriangleMeshSet& set);
/// The engine behind a set, read only.
const TriangleMeshSetImpl& implOf(const TriangleMeshSet& set);
} // namespace detail

/// Triangle meshes and the queries over them: every pair of intersecting triangles within a mesh
/// or between meshes, every pair of features within a distance (the contact query), and points
/// against a mesh.
///
/// An intersecting pair is reported when the exact triangle test says the closed triangles meet,
/// exactly for the double corners it is given. Self-collision reads the mesh's float positions as
/// they are and skips pairs that share a vertex index. A pair of meshes reads each mesh's
/// positions moved by its transform in double, or as they are when it has none. Positions changed
/// with setPositions refit the mesh's tree at the next query; requestRebuild builds it anew.
/// Buffers are reused once sizes settle.
class TriangleMeshSet {
public:
    /// A set whose queries run on up to `threads` OpenMP threads (<= 0: OpenMP's default). Every
    /// 64 queries the tree updates and the traversal each run once on one thread and once on the
    /// team, and the faster of the two is used until the next probe: a
    /// team that shares its cores with other programs can be many times slower than one thread.
    explicit TriangleMeshSet(int threads = 0);

    /// A set on `backend`: `threadsOrDevice` is the most OpenMP threads for Cpu (<= 0: default)
    /// or the device for Cuda. Auto picks CUDA when a device is usable. Cuda throws
    /// std::runtime_error saying why when no device is usable. The CUDA backend always walks
    /// leaves (Descent runs as LeafWalk) and gives the same contacts, bit for bit.
    TriangleMeshSet(Backend backend, int threadsOrDevice);
    /// Frees the meshes, trees and fronts (on CUDA, the device memory too).
    ~TriangleMeshSet();
    TriangleMeshSet(const TriangleMeshSet&) = delete;
    TriangleMeshSet& operator=(const TriangleMeshSet&) = delete;

    /// The backend in use (Cpu or Cuda).
    Backend backend() const;

    /// The backend and what it runs on.
    std::string description() const;

    /// Adds a mesh of `vertexCount` vertices (x, y, z floats each, finite) and `triangleCount`
    /// triangles (three vertex indices each, below vertexCount). Returns the mesh's index.
    /// Throws std::invalid_argument on bad input. Until its positions are first replaced the mesh
    /// is rigid, and a build with OBBs sorts its triangles in its principal frame (principalFrame).
    std::uint32_t addMesh(const float* positions, std::uint32_t vertexCount, const std::uint32_t* indices,
                          std::uint32_t triangleCount);

    /// Replaces the vertex positions of `mesh` (same count); its tree is refitted at the next
    /// query. The mesh is deforming from then on: later builds sort in its own axes.
    void setPositions(std::uint32_t mesh, const float* positions);

    /// Sets the rigid transform of `mesh` used by pair queries: a row-major 3x4 matrix [R | t]
    /// in double, or null for none. Throws std::invalid_argument unless every entry is finite.
    void setTransform(std::uint32_t mesh, const double* transform);

    /// Builds the tree of `mesh` anew at the next query (after large deformations).
    void requestRebuild(std::uint32_t mesh);

    /// Chooses the bounding volumes of `mesh` (default Aabb); fronts are generated anew. A query
    /// uses OBBs where both of its meshes keep them. Contacts do not depend on the choice. The
    /// tree keeps its topology until its next build, which sorts a rigid mesh with OBBs in its
    /// principal frame (gProximity 4.4); choose before the first query to have that at once.
    void setBoundingVolume(std::uint32_t mesh, BoundingVolume volume);

    /// The bounding volumes of `mesh`.
    BoundingVolume boundingVolume(std::uint32_t mesh) const;

    /// Chooses how queries traverse; fronts are generated anew on a change. The default is
    /// LeafWalk on both backends: walking every leaf anew (on the CPU sixteen leaves at a time)
    /// beat updating a kept front on every scene measured, on the CPU
    /// (docs/benchmarks/narrow-cpu.md) and on an H100 (docs/benchmarks/narrow-h100.md).
    void setTraversal(NarrowTraversal traversal);

    /// How queries traverse.
    NarrowTraversal traversal() const;

    /// Restructures or rebuilds a deformed mesh's tree once a front over it has degraded by
    /// `ratio` (default cDefaultRebuildRatio): the degraded subtrees are rebuilt
    /// in place and the fronts carried over, or the whole tree is built anew. 0 rebuilds only on
    /// requestRebuild. The Descent traversal keeps no front and never rebuilds on its own.
    void setRebuildRatio(double ratio);

    /// The rebuild ratio in use.
    double rebuildRatio() const;

    /// Whether a degraded tree has its degraded subtrees rebuilt in place (default true), or is
    /// rebuilt whole (false).
    void setRestructuring(bool restructure);

    /// Whether degraded subtrees are restructured.
    bool restructuring() const;

    /// Generates every front anew at the next query instead of updating it.
    void resetFronts();

    /// Frees the fronts kept on the host for the pair of meshA and meshB, in either order (both
    /// queries'), as when the pair is gone for good; a later query of the pair generates them
    /// anew. (On CUDA the device's intersection-query fronts stay until resetFronts.)
    void forgetFronts(std::uint32_t meshA, std::uint32_t meshB);

    /// Removes every mesh.
    void clear();

    /// Number of meshes.
    std::uint32_t meshCount() const;

    /// Writes the intersecting pairs of distinct triangles of `mesh` that share no vertex.
    void findSelfContacts(std::uint32_t mesh, std::vector<TriangleContact>& contacts);

    /// Writes the intersecting pairs between two different meshes, with their transforms.
    void findPairContacts(std::uint32_t meshA, std::uint32_t meshB, std::vector<TriangleContact>& contacts);

    /// Runs a batch of self and pair queries in one traversal; contacts are sorted by
    /// (meshA, meshB, triangleA, triangleB).
    void findContacts(const MeshPairQuery* queries, std::uint32_t count, std::vector<TriangleContact>& contacts);

    /// The contact query of a batch of self and pair queries: every
    /// vertex-triangle and edge-edge feature pair within options.distance (in a self query,
    /// features sharing a vertex skipped, or sharing a welded position with
    /// options.excludeWelded) and every intersecting triangle pair (in a self query, pairs that
    /// share or weld a vertex skipped), sorted by (meshA, meshB, kind, featureA, featureB). Pair
    /// queries read the meshes moved by their transforms. Candidates come from the meshes' trees
    /// with leaf boxes grown by d/2 and a rounding allowance, walked anew each query, or through fronts kept
    /// per mesh pair (NarrowTraversal::Fronts; Descent walks as LeafWalk), which are separate from
    /// the intersection query's and generated anew when the distance changes or a tree is rebuilt
    /// or restructured. Contact queries schedule no rebuilds. On the CUDA backend the whole batch
    /// runs on the device in one pass (the same contacts, byte for byte). Throws
    /// std::invalid_argument on a bad mesh or distance.
    void findProximity(const MeshPairQuery* queries, std::uint32_t count, const ProximityOptions& options,
                       std::vector<ProximityContact>& contacts);

    /// The contact query of `mesh` against itself.
    void findSelfProximity(std::uint32_t mesh, const ProximityOptions& options,
                           std::vector<ProximityContact>& contacts);

    /// The contact query of two different meshes.
    void findPairProximity(std::uint32_t meshA, std::uint32_t meshB, const ProximityOptions& options,
                           std::vector<ProximityContact>& contacts);

    /// The points-against-mesh query: every (point, triangle) pair of `count` points (x, y, z
    /// floats each, finite, world frame) and the triangles of `mesh` (moved by its transform)
    /// within `distance` (pointTriangleContact), sorted by (point, triangle). On the CUDA backend
    /// it runs on the device (the same contacts).
    void findPointContacts(const float* points, std::uint32_t count, std::uint32_t mesh, double distance,
                           std::vector<PointContact>& contacts);

    /// Runs the tree validators on every mesh: empty when valid, else what is wrong.
    std::string validate() const;

    /// Counters of the last query.
    const NarrowStats& stats() const;

    /// OpenMP threads the queries use at most.
    int threads() const;

private:
    friend TriangleMeshSetImpl& detail::implOf(TriangleMeshSet& set);
    friend const TriangleMeshSetImpl& detail::implOf(const TriangleMeshSet& set);

    std::unique_ptr<TriangleMeshSetImpl> m_impl; ///< Meshes, trees, fronts and the backend's engine.
};

} // namespace bulletgpu
