// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/Backend.h>
#include <bulletgpu/TriangleMeshSet.h>

#include "kernels/common/thread_tuner.h"
#include "kernels/narrow/engine/neighbour_cull_cpu.h"
#include "kernels/narrow/engine/proximity_sort_cpu.h"
#include "kernels/narrow/traversal/bvtt_front.h"
#include "kernels/narrow/traversal/bvtt_traversal.h"
#include "kernels/narrow/hierarchy/lbvh.h"
#include "kernels/narrow/geometry/mesh_features.h"
#include "kernels/narrow/geometry/candidate_proximity.h"
#include "kernels/narrow/geometry/proximity_contact.h"
#include "kernels/narrow/geometry/triangle_contact.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

/// What stands behind bulletgpu::TriangleMeshSet (<bulletgpu/TriangleMeshSet.h>): the meshes,
/// their trees and fronts, the host policy (when to build, refit, restructure, regenerate
/// fronts) and, on the CUDA backend, the device engine. Internal: the project's tests reach it
/// through detail::implOf.

namespace bulletgpu {

/// A copy of one mesh's tree (topology and boxes in the mesh's own frame).
struct TreeSnapshot {
    std::vector<LbvhNode> nodes;       ///< Depth-first nodes.
    std::vector<std::uint32_t> escape; ///< Node after each node's subtree.
    std::vector<std::uint32_t> leaves; ///< Leaf nodes in depth-first order.
    std::vector<NarrowObb> obbs;       ///< OBB of each node (BoundingVolume::Obb only).
};

namespace detail {

/// The device side of TriangleMeshSet on the CUDA backend: meshes, trees and fronts resident on
/// the device; positions uploaded when they change; only contacts come back.
class NarrowDeviceEngine {
public:
    virtual ~NarrowDeviceEngine() = default;
    /// Adds a mesh (already checked) whose principal frame is `frame` (builds with OBBs sort in it).
    virtual void addMesh(const float* positions, std::uint32_t vertexCount, const std::uint32_t* indices,
                         std::uint32_t triangleCount, const MortonFrame& frame) = 0;
    /// Replaces a mesh's positions; its tree is refitted at the next query, and built in the
    /// mesh's own axes from then on.
    virtual void setPositions(std::uint32_t mesh, const float* positions) = 0;
    /// Sets or clears (null) a mesh's transform.
    virtual void setTransform(std::uint32_t mesh, const double* transform) = 0;
    /// Builds the mesh's tree anew at the next query.
    virtual void requestRebuild(std::uint32_t mesh) = 0;
    /// Sets a mesh's bounding volumes; they are computed at the next query.
    virtual void setBoundingVolume(std::uint32_t mesh, BoundingVolume volume) = 0;
    /// Removes every mesh and front.
    virtual void clear() = 0;
    /// Forgets every front.
    virtual void resetFronts() = 0;
    /// Sets the front measure's rebuild ratio (0: never rebuild on quality).
    virtual void setRebuildRatio(double ratio) = 0;
    /// Restructures degraded subtrees (true) or rebuilds degraded trees whole (false).
    virtual void setRestructuring(bool restructure) = 0;
    /// Runs queries sorted by mesh pair; appends each one's contacts, sorted, to `contacts`.
    virtual void findContacts(const MeshPairQuery* queries, std::uint32_t count, bool keepFronts,
                              std::vector<TriangleContact>& contacts, NarrowStats& stats) = 0;
    /// Sets a mesh's contact-query features (built on the host from its indices, kept for good).
    virtual void setFeatures(std::uint32_t mesh, const MeshFeatures& features) = 0;
    /// Sets a mesh's canonical vertices (weldVertices) for self contact queries that exclude
    /// welds; sent to the device only when they changed.
    virtual void setWeld(std::uint32_t mesh, const std::vector<std::uint32_t>& weld) = 0;
    /// Runs contact queries sorted by mesh pair (every mesh with its features set, and its weld
    /// in a self query when options.excludeWelded); appends each one's contacts, sorted by
    /// proximityBefore, to `contacts`: the CPU path's contacts, byte for byte.
    virtual void findProximity(const MeshPairQuery* queries, std::uint32_t count, const ProximityOptions& options,
                               std::vector<ProximityContact>& contacts, NarrowStats& stats) = 0;
    /// The points-against-mesh query of `count` points (checked) against `mesh` at `distance`;
    /// writes the contacts, sorted by (point, triangle), to `contacts` (emptied first): the CPU
    /// path's contacts, byte for byte.
    virtual void findPointContacts(const float* points, std::uint32_t count, std::uint32_t mesh, double distance,
                                   std::vector<PointContact>& contacts, NarrowStats& stats) = 0;
    /// A copy of the mesh's tree as of the last query.
    virtual TreeSnapshot tree(std::uint32_t mesh) const = 0;
    /// What it runs on.
    virtual std::string description() const = 0;
};

/// The CUDA engine on `device`; throws std::runtime_error saying why when the library was built
/// without CUDA or the device cannot be used.
std::unique_ptr<NarrowDeviceEngine> createCudaNarrowEngine(int device);

} // namespace detail

/// The engine of a TriangleMeshSet. Members named as the public ones do what the public header
/// documents for them.
class TriangleMeshSetImpl {
public:
    /// As TriangleMeshSet's constructor of the same parameters.
    explicit TriangleMeshSetImpl(int threads = 0);
    /// As TriangleMeshSet's constructor of the same parameters.
    TriangleMeshSetImpl(Backend backend, int threadsOrDevice);
    /// Frees the meshes, trees, fronts and the device engine.
    ~TriangleMeshSetImpl();
    TriangleMeshSetImpl(const TriangleMeshSetImpl&) = delete;
    TriangleMeshSetImpl& operator=(const TriangleMeshSetImpl&) = delete;

    /// The backend in use (Cpu or Cuda).
    Backend backend() const { return m_device ? Backend::Cuda : Backend::Cpu; }
    /// The backend and what it runs on.
    std::string description() const;

    /// As TriangleMeshSet::addMesh.
    std::uint32_t addMesh(const float* positions, std::uint32_t vertexCount, const std::uint32_t* indices,
                          std::uint32_t triangleCount);

    /// As TriangleMeshSet::setPositions.
    void setPositions(std::uint32_t mesh, const float* positions);

    /// As TriangleMeshSet::setTransform.
    void setTransform(std::uint32_t mesh, const double* transform);

    /// Builds the tree of `mesh` anew at the next query (after large deformations).
    void requestRebuild(std::uint32_t mesh);

    /// As TriangleMeshSet::setBoundingVolume.
    void setBoundingVolume(std::uint32_t mesh, BoundingVolume volume);
    /// The bounding volumes of `mesh`.
    BoundingVolume boundingVolume(std::uint32_t mesh) const;

    /// As TriangleMeshSet::setTraversal.
    void setTraversal(NarrowTraversal traversal);
    /// How queries traverse.
    NarrowTraversal traversal() const { return m_traversal; }
    /// As TriangleMeshSet::setRebuildRatio.
    void setRebuildRatio(double ratio);
    /// The rebuild ratio in use.
    double rebuildRatio() const { return m_rebuildRatio; }
    /// As TriangleMeshSet::setRestructuring.
    void setRestructuring(bool restructure);
    /// Whether degraded subtrees are restructured.
    bool restructuring() const { return m_restructuring; }
    /// Generates every front anew at the next query instead of updating it.
    void resetFronts();
    /// As TriangleMeshSet::forgetFronts.
    void forgetFronts(std::uint32_t meshA, std::uint32_t meshB);
    /// The front kept for the query (meshA, meshB), or null when there is none (with the
    /// LeafWalk traversal its entries are empty: the walk only counts them).
    const BvttFront* front(std::uint32_t meshA, std::uint32_t meshB) const;
    /// The front a fresh walk of every query leaf makes over the trees as the last query left
    /// them (CPU backend, one thread): what a kept front must equal.
    std::vector<FrontEntry> walkedFront(std::uint32_t meshA, std::uint32_t meshB) const;

    /// Removes every mesh.
    void clear();

    /// Number of meshes.
    std::uint32_t meshCount() const { return static_cast<std::uint32_t>(m_meshes.size()); }

    /// Writes the intersecting pairs of distinct triangles of `mesh` that share no vertex.
    void findSelfContacts(std::uint32_t mesh, std::vector<TriangleContact>& contacts);

    /// Writes the intersecting pairs between two different meshes, with their transforms.
    void findPairContacts(std::uint32_t meshA, std::uint32_t meshB, std::vector<TriangleContact>& contacts);

    /// As TriangleMeshSet::findContacts.
    void findContacts(const MeshPairQuery* queries, std::uint32_t count, std::vector<TriangleContact>& contacts);

    /// As TriangleMeshSet::findProximity.
    void findProximity(const MeshPairQuery* queries, std::uint32_t count, const ProximityOptions& options,
                       std::vector<ProximityContact>& contacts);
    /// The contact query of `mesh` against itself.
    void findSelfProximity(std::uint32_t mesh, const ProximityOptions& options,
                           std::vector<ProximityContact>& contacts);
    /// The contact query of two different meshes.
    void findPairProximity(std::uint32_t meshA, std::uint32_t meshB, const ProximityOptions& options,
                           std::vector<ProximityContact>& contacts);
    /// As TriangleMeshSet::findPointContacts.
    void findPointContacts(const float* points, std::uint32_t count, std::uint32_t mesh, double distance,
                           std::vector<PointContact>& contacts);
    /// The contact query's front kept for (meshA, meshB), or null when there is none.
    const BvttFront* proximityFront(std::uint32_t meshA, std::uint32_t meshB) const;
    /// The front a fresh walk makes over the grown trees of the last contact query of (meshA,
    /// meshB) (one thread): what a kept contact-query front must equal.
    std::vector<FrontEntry> walkedProximityFront(std::uint32_t meshA, std::uint32_t meshB) const;

    /// The tree of `mesh` in its own frame, as of the last query (CPU backend).
    const Lbvh& tree(std::uint32_t mesh) const { return m_meshes[mesh].tree; }
    /// A copy of the tree of `mesh` in its own frame, as of the last query, on either backend.
    TreeSnapshot treeSnapshot(std::uint32_t mesh) const;

    /// Runs the tree validators on every mesh: empty when valid, else what is wrong.
    std::string validate() const;

    /// Counters of the last query.
    const NarrowStats& stats() const { return m_stats; }
    /// OpenMP threads the queries use at most.
    int threads() const { return m_maxThreads; }

private:
    /// One mesh and what is derived from it.
    struct Mesh {
        std::vector<float> positions;
        std::vector<std::uint32_t> indices;
        double transform[12] = {};
        bool hasTransform = false;
        Lbvh tree;
        std::vector<FloatBox> leafBoxes;      ///< Own frame.
        std::vector<FloatBox> worldLeafBoxes; ///< Transformed (only with a transform).
        std::vector<Triangle3d> corners;      ///< Each triangle's corners in double, own frame.
        std::vector<Triangle3d> worldCorners; ///< Transformed (only with a transform).
        std::vector<PlaneMinors> planes;      ///< Plane minors of each triangle's corners.
        std::vector<PlaneMinors> worldPlanes; ///< Of the transformed corners.
        std::vector<LbvhNode> worldNodes;     ///< Tree with transformed boxes.
        BoundingVolume volume = BoundingVolume::Aabb;
        MortonFrame frame;                ///< The principal frame while rigid (for builds with OBBs).
        std::vector<NarrowObb> obbs;      ///< Own frame, one per node (Obb only).
        std::vector<NarrowObb> worldObbs; ///< Transformed (Obb with a transform).
        bool needsBuild = true;
        bool positionsChanged = false;
        bool volumeChanged = false; ///< The OBBs are to be fitted anew (or no longer used).
        bool worldStale = true;
        bool refittedSinceBuild = false;                 ///< Deformed since its tree was built.
        std::vector<NodeRange> pendingSubtrees;          ///< To restructure at the next query.
        std::vector<NodeRange> restructured;             ///< Restructured by this query (fronts to carry over).
        std::uint64_t topologyVersion = 0;               ///< Builds and restructures of its tree.
        MeshFeatures features;                           ///< Edges and ownership (at the first contact query).
        bool featuresBuilt = false;                      ///< `features` is current.
        std::vector<std::uint32_t> weld;                 ///< Canonical vertices (contact queries with welds).
        std::vector<FloatBox> grownBoxes[2];             ///< Leaf boxes grown for the contact query (own, world frame).
        std::vector<LbvhNode> grownNodes[2];             ///< The tree over them (own, world frame).
        std::uint64_t cornersVersion[2] = {0, 0};        ///< Bumped whenever corners (own, world frame) are recomputed.
        std::uint64_t transformVersion = 0;              ///< Bumped by every setTransform.
        std::uint64_t grownCorners[2] = {~0ull, ~0ull};  ///< Own cornersVersion the grown trees were made from.
        std::uint64_t grownTransform = ~0ull;            ///< transformVersion the world grown tree was made at.
        std::uint64_t grownTopology[2] = {~0ull, ~0ull}; ///< topologyVersion they were made over.
        double grownDistance[2] = {-1, -1};              ///< The distance they were grown by.
        std::vector<double> movedVertices;               ///< Vertices moved to the world with the world grown tree.
        NeighbourCull neighbours;                        ///< Its self contact queries' neighbour clearances.
    };

    /// A contact-query front and what it was made for.
    struct ProximityFront {
        BvttFront front;      ///< The entries (buildA, buildB hold the topology versions).
        double distance = -1; ///< The query distance.
    };
    /// Per-thread contact-query outputs.
    struct ProximityThreadOut {
        std::vector<ProximityContact> contacts; ///< Contacts found.
        ProximitySortScratch sort;              ///< Scratch of sorting its contacts.
        std::vector<PointContact> points;       ///< Point contacts found.
        std::vector<FrontEntry> walk;           ///< A point's candidate leaves; own-frame culling's scratch.
        std::vector<FrontEntry> ownCandidates;  ///< Candidates of a query culled in its own frame.
        FrontTraversal traversal;               ///< Its walks when queries run one per thread.
        BvttFront walkFront;                    ///< The front of its walks (unused entries).
        std::vector<std::size_t> ends;          ///< End of each of its queries' contacts.
        std::vector<std::uint32_t> queries;     ///< Positions in m_order of its queries.
        FrontCounters counters;                 ///< Its queries' counters, summed.
        std::uint32_t frontsGenerated = 0;      ///< Its queries whose fronts were generated anew.
        std::uint64_t neighboursSkipped = 0;    ///< Its candidates the neighbour culls skipped.
    };

    /// Checks the queries' meshes and sorts m_order by mesh pair, so that joined results come
    /// out in the documented order.
    void orderQueries(const MeshPairQuery* queries, std::uint32_t count);
    /// Builds or refits the trees a query reads (own frame, and world frame for a pair query).
    void updateTreesOf(const MeshPairQuery& query);
    /// Builds or refits the mesh's own tree when needed.
    void updateTree(Mesh& mesh);
    /// Refits the mesh's world-frame tree when it has a transform and is stale.
    void updateWorldTree(Mesh& mesh);
    /// The view of a mesh for a query, in its own frame or in the world.
    MeshView viewOf(std::uint32_t index, bool world) const;
    /// viewOf over the tree grown for the last contact query (boxes only).
    MeshView grownViewOf(std::uint32_t index, bool world) const;
    /// True when a pair query culls in its first mesh's own frame (ownFrameCandidates): that
    /// mesh moves by a near-rotation and has at most 1/8 of the second's triangles, so its tree
    /// grown in its own frame serves every placement and only the second mesh's triangles near
    /// it are moved, into its frame. LeafWalk traversal only.
    bool cullsInOwnFrame(const MeshPairQuery& query) const;
    /// The first mesh's own grown tree with its triangles moved to the world as the exact tests
    /// read them (no stored corners or planes): the test view of a query culled in its frame.
    /// Its vertices are not moved beforehand (moveVertices): a small mesh's few candidates read
    /// fewer corners than it has vertices.
    MeshView ownFrameViewOf(std::uint32_t index) const;
    /// The candidates of a query culled in its first mesh's own frame (own_frame_bounds.h): the
    /// second mesh's world tree walked with the first's own grown root box moved to the world,
    /// then the first mesh's own grown tree walked with each leaf's triangle moved into its frame.
    /// Entries hold the first mesh's leaf node and the second's; `leaves` is scratch. Reads only.
    void ownFrameCandidates(const MeshPairQuery& query, double distance, std::vector<FrontEntry>& leaves,
                            std::vector<FrontEntry>& candidates, FrontCounters& counters) const;
    /// Which grown tree of a mesh a query reads: 1 (world) for a pair query of a mesh with a
    /// transform, else 0 (own frame).
    std::uint32_t grownFrameOf(std::uint32_t index, bool world) const;
    /// Grows the mesh's leaf boxes and tree by `distance` on up to `threads` threads, unless
    /// they already are, from the same corners, transform and topology (a static mesh is grown
    /// once). In the world frame the boxes are made from the moved vertices (moveVertices), and
    /// no corners are stored: the contact query's exact tests read the moved vertices too
    /// (TriangleSource). Touches only the mesh (safe one mesh per thread).
    void growTree(std::uint32_t index, bool world, double distance, int threads);
    /// Moves the vertices of a mesh with a transform to the world (movedVertices), as growTree
    /// makes its world grown tree (so they are current exactly when that tree is): what those
    /// boxes and the contact query's exact tests read of it, each vertex moved once instead of
    /// once per triangle corner read. Touches only the mesh.
    void moveVertices(std::uint32_t index, int threads);
    /// Builds (and hands the device engine) the features of every mesh the queries read, and
    /// the welds of their self queries when options.excludeWelded.
    void prepareFeatures(const MeshPairQuery* queries, std::uint32_t count, const ProximityOptions& options);
    /// Moves to the world and grows the trees of every mesh the queries read, one mesh per
    /// thread when there are many.
    void prepareGrownTrees(const MeshPairQuery* queries, std::uint32_t count, double distance);
    /// The neighbour cull (neighbour_cull_cpu.h) of the query of meshA against meshB, or null:
    /// only self queries without welds have one.
    NeighbourCull* neighbourCullOf(std::uint32_t meshA, std::uint32_t meshB, const ProximityOptions& options);
    /// Prepares the neighbour cull of every query that has one (built at its first use), each
    /// mesh once, and lists those meshes in m_culledMeshes.
    void prepareNeighbourCulls(const MeshPairQuery* queries, std::uint32_t count, const ProximityOptions& options);
    /// Measures again the patches the culls of m_culledMeshes did not prove apart.
    void refreshNeighbourCulls();
    /// The contact-query front of a query; emptied when the distance or a tree's topology changed.
    BvttFront& proximityFrontOf(const MeshPairQuery& query, double distance);
    /// Tests one query's candidates on the threads; appends the contacts, sorted.
    void testProximityCandidates(const BvttQuery& views, const std::vector<FrontEntry>& candidates,
                                 const ProximityOptions& options, std::vector<ProximityContact>& contacts);
    /// The contact query's view of one side of a query.
    ProximityMeshView proximityViewOf(const MeshView& view, bool self, const ProximityOptions& options) const;
    /// Runs the ordered queries one per thread on `team` threads (each walk and test on one
    /// thread); appends every query's contacts, sorted, in m_order's order.
    void runProximityQueriesPerThread(const MeshPairQuery* queries, const ProximityOptions& options, int team,
                                      std::vector<ProximityContact>& contacts);
    /// Records a query's front quality; when degraded, schedules the restructuring of the
    /// degraded subtrees of the other mesh's tree, or its rebuild (front_quality.h).
    void recordQuality(const MeshPairQuery& query, const BvttQuery& views, BvttFront& front,
                       const FrontCounters& counters);
    /// Carries every kept front over the trees restructured by this query's updates.
    void carryFrontsOver();
    /// The OBB validators of a mesh (own frame, and world frame when current).
    std::string validateObbsOf(const Mesh& mesh) const;
    /// Checks a mesh index.
    void checkMesh(std::uint32_t mesh) const;

    int m_threads;                                        ///< Threads of the phase running now (the tuners' choice).
    int m_maxThreads;                                     ///< The team's size.
    ThreadTuner m_treeTuner;                              ///< Threads for the trees' builds and refits.
    ThreadTuner m_queryTuner;                             ///< Threads for the traversals and exact tests.
    std::unique_ptr<detail::NarrowDeviceEngine> m_device; ///< Set on the CUDA backend.
    std::vector<Mesh> m_meshes;
    /// The front of one query; stale when a tree was rebuilt since.
    BvttFront& frontOf(const MeshPairQuery& query);

    std::vector<BvttQuery> m_queries;
    std::vector<std::uint32_t> m_order;         ///< Queries sorted by mesh pair.
    std::vector<MeshPairQuery> m_sortedQueries; ///< The queries in that order (CUDA backend).
    BvttTraversal m_descent;
    FrontTraversal m_frontTraversal;
    FrontLog m_frontLog;                                                 ///< The log of a degraded query.
    std::vector<NodeRange> m_chosen;                                     ///< Subtrees a degraded front chose.
    std::map<std::uint64_t, BvttFront> m_fronts;                         ///< Key meshA << 32 | meshB.
    std::map<std::uint64_t, ProximityFront> m_proximityFronts;           ///< Key meshA << 32 | meshB.
    std::vector<CacheLinePadded<ProximityThreadOut>> m_proximityThreads; ///< Contact-query outputs.
    std::vector<ProximityContact> m_proximityMerge[2];                   ///< Merges of the threads' sorted contacts.
    /// Where one query's contacts lie when queries run one per thread.
    struct QueryRange {
        int thread = 0;        ///< The thread that ran it.
        std::size_t begin = 0; ///< First contact in that thread's output.
        std::size_t end = 0;   ///< One past its last.
    };
    std::vector<QueryRange> m_queryRanges;     ///< By position in m_order.
    std::vector<BvttFront*> m_queryFronts;     ///< Kept fronts by position in m_order (Fronts traversal).
    std::vector<std::uint8_t> m_growNeeds;     ///< Frames each mesh's grown trees are needed in (bits 0, 1).
    std::vector<std::uint32_t> m_growList;     ///< The meshes a contact-query batch reads.
    std::vector<std::uint32_t> m_culledMeshes; ///< The meshes whose neighbour culls this batch prepared.
    std::vector<std::uint32_t> m_weldOrder;    ///< Scratch of weldVertices.
    BvttFront m_walkFront;                     ///< The front of a walk (unused entries).
    std::vector<FrontEntry> m_ownLeaves;       ///< Scratch of ownFrameCandidates (one thread).
    std::vector<FrontEntry> m_ownCandidates;   ///< Candidates of a query culled in its own frame (one thread).
    NarrowTraversal m_traversal = NarrowTraversal::LeafWalk;
    double m_rebuildRatio = cDefaultRebuildRatio;
    bool m_restructuring = true;
    NarrowStats m_stats;
};

} // namespace bulletgpu
