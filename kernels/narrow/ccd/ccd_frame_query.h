// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/cache_line.h"
#include "kernels/narrow/ccd/ccd_candidate_ops.h"
#include "kernels/narrow/hierarchy/lbvh.h"
#include "kernels/narrow/traversal/bvtt_front.h"

#include <bulletgpu/Backend.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

/// Whole-frame continuous collision detection of triangle meshes on the CPU (issue 29): the
/// culling stage in front of the per-pair tests of ccd_queries.h, on OpenMP threads.
///
/// Every vertex moves linearly from its position at t = 0 to its position at t = 1. A query
/// builds a tree (Lbvh) over each mesh's swept triangle boxes, grown and rounded outward
/// (ccd_swept_bounds.h), walks it (FrontTraversal, leaf walks) for the overlapping triangle
/// pairs, expands each into its vertex-face (both directions) and edge-edge feature pairs, each
/// feature pair once (MeshFeatures ownership; a self query skips features sharing a vertex),
/// drops the feature pairs whose own grown swept extents are apart, that the exact test would
/// rule out on its first box, or that stay on one side of a plane beyond the same reach
/// (ccd_plane_filter.h), and runs vertexFaceCcd or edgeEdgeCcd on the rest.
///
/// Contract. No false negatives relative to the per-pair tests: a feature pair is dropped only
/// when its features stay farther apart than a margin that covers the per-pair test's reach
/// (eta, its tolerances and rounding; ccd_swept_bounds.h) or when the per-pair test would rule
/// it out on its first box. So every pair that the per-pair test, run on every feature pair of
/// the meshes, reports as a decided hit is reported here, with the same time of impact (the
/// same test on the same points), and every pair whose features come within eta during the step
/// is reported with a lower bound on the earliest such time (ccd_queries.h). The reach of hits
/// reported on the time stop rests on the split rule's argument in ccd_swept_bounds.h, checked
/// by set equality on random scenes (narrow_ccd_frame_test.cpp); undecided hits (iteration
/// limit, queue capacity) of pairs beyond the margin are not kept. Only vertices used by a
/// triangle take part. Impacts are sorted by (kind, a, b), so the result does not depend on the
/// threads.
///
/// On Backend::Cuda the triangle boxes, features and trees are built on the host as above, then
/// the features' swept bounds, tree walk, expansion, filters, exact tests and sort run on the
/// device with the same per-element functions (ccd_frame_engine.h): the same impacts, times and
/// counts, bit for bit.

namespace bulletgpu {

namespace detail {
class CcdDeviceEngine;
} // namespace detail

/// One mesh at the two ends of the step.
struct CcdMesh {
    const double* positions0;     ///< x, y, z per vertex at t = 0.
    const double* positions1;     ///< x, y, z per vertex at t = 1.
    std::uint32_t vertexCount;    ///< Vertices.
    const std::uint32_t* indices; ///< Three vertex indices per triangle.
    std::uint32_t triangleCount;  ///< Triangles.
};

/// The settings of a frame query.
struct CcdFrameOptions {
    double eta = 0.0; ///< Minimum separation: features within eta count as an impact (>= 0).
    /// Drop the feature pairs that the exact test would rule out on its first box
    /// (firstBoxSeparated) and plane-separated ones (ccd_plane_filter.h) before the exact tests;
    /// the impacts are the same either way, only the work differs. Off when
    /// exact.maxIterations is 0.
    bool prefilter = true;
    CcdOptions exact; ///< The per-pair tests' stopping rules.
    int threads = 1;  ///< OpenMP threads.
};

/// One impact: a feature pair whose exact test reported a hit.
struct CcdImpact {
    CcdFeaturePair pair; ///< The features (see CcdFeatureKind).
    double toi;          ///< Lower bound on the time of impact, in [0, 1].
    bool undecided;      ///< Reported without deciding (CcdResult::undecided).
};

/// Counts and stage times of one query.
struct CcdFrameCounts {
    std::uint64_t trianglePairs = 0;  ///< Triangle pairs whose grown swept boxes overlap.
    std::uint64_t featurePairs = 0;   ///< Feature pairs they hold, each once (shared vertices excluded).
    std::uint64_t firstBoxCulled = 0; ///< Of them, near by their extents but ruled out by firstBoxSeparated.
    std::uint64_t planeCulled = 0;    ///< Of the rest, plane-separated (ccd_plane_filter.h).
    std::uint64_t exactTests = 0;     ///< Feature pairs given to the exact tests.
    std::uint64_t impacts = 0;        ///< Of them, hits.
    std::uint64_t undecided = 0;      ///< Of the hits, undecided ones.
    std::uint64_t iterations = 0;     ///< Parameter boxes the exact tests examined.
    std::uint64_t rootRejections = 0; ///< Exact tests that ruled their pair out on the first box.
    double boxMs = 0;                 ///< Swept boxes, features and tree builds (host; on CUDA, no feature bounds).
    double uploadMs = 0;              ///< Copies of the meshes and trees to the device (CUDA only).
    double traverseMs = 0;            ///< Tree walk for triangle pairs (on CUDA, the feature bounds first).
    double expandMs = 0;              ///< Expansion into feature pairs and their filter.
    double exactMs = 0;               ///< Exact tests, the sort of impacts (and their copy back on CUDA).
};

/// The outcome of one query.
struct CcdFrameResult {
    std::vector<CcdImpact> impacts; ///< Sorted by pair (featurePairBefore).
    double earliestToi = HUGE_VAL;  ///< Smallest toi of the impacts; HUGE_VAL when none.
    CcdFrameCounts counts;          ///< Counts and times.
};

/// Runs whole-frame CCD queries; buffers (trees, features, candidates) are reused between calls.
/// Positions must be finite and at most 2^1000 in magnitude (std::invalid_argument otherwise).
class CcdFrameQuery {
public:
    /// A query on `backend`: Cpu, Cuda on `device` (std::runtime_error, saying why, when it is
    /// not usable) or Auto (Cuda on device 0 when usable, else Cpu).
    explicit CcdFrameQuery(Backend backend = Backend::Cpu, int device = 0);
    /// Releases the device engine, if any.
    ~CcdFrameQuery();
    /// Takes over another query's buffers and engine.
    CcdFrameQuery(CcdFrameQuery&&) noexcept;
    /// Takes over another query's buffers and engine.
    CcdFrameQuery& operator=(CcdFrameQuery&&) noexcept;

    /// The backend in use (Cpu or Cuda).
    Backend backend() const { return m_device ? Backend::Cuda : Backend::Cpu; }

    /// Self CCD of one mesh: every pair of its features that share no vertex.
    void runSelf(const CcdMesh& mesh, const CcdFrameOptions& options, CcdFrameResult& out);

    /// CCD between two meshes: A's vertices against B's triangles, A's triangles against B's
    /// vertices and A's edges against B's.
    void runPair(const CcdMesh& a, const CcdMesh& b, const CcdFrameOptions& options, CcdFrameResult& out);

    /// The feature pairs given to the exact tests by the last query, in traversal order (CPU
    /// backend; empty on CUDA, whose candidates stay on the device).
    const std::vector<CcdFeaturePair>& candidates() const { return m_candidates; }

    /// The edges (two vertex indices, lower first, ascending) of the last query's mesh A or B,
    /// which EdgeEdge pairs index.
    const std::vector<std::uint32_t>& edgesOf(int side) const { return m_sides[side].features.edges; }

private:
    /// What a query keeps of one mesh.
    struct Side {
        std::vector<Vec3d> x0, x1;                                     ///< Positions at t = 0 and t = 1.
        std::vector<std::uint32_t> indices;                            ///< The indices the features were built for.
        MeshFeatures features;                                         ///< Edges and ownership.
        std::uint64_t featuresRevision = 0;                            ///< Counts the builds of `features`.
        std::vector<SweptBounds> vertexBounds, edgeBounds, faceBounds; ///< Swept bounds of each feature (CPU only).
        std::vector<FloatBox> boxes;                                   ///< Grown swept triangle boxes.
        Lbvh tree;                                                     ///< Tree over them.
    };
    /// Per-thread outputs.
    struct ThreadOut {
        std::vector<CcdFeaturePair> candidates; ///< Feature pairs kept by the thread's expansion.
        std::vector<CcdImpact> impacts;         ///< Hits of the thread's exact tests.
        CcdExpandCounts expand;                 ///< The thread's expansion counts.
        std::uint64_t iterations = 0;           ///< Boxes its exact tests examined.
        std::uint64_t rootRejections = 0;       ///< Its exact tests that ended on the first box.
    };

    /// Copies `mesh` into side `s`, builds its features (when the indices changed), their swept
    /// bounds (on the CPU backend), boxes and tree.
    void prepare(int s, const CcdMesh& mesh, const CcdFrameOptions& options);
    /// The candidate stage's view of side `s`.
    CcdMeshView viewOf(int s) const;
    /// The tree walk's view of side `s`.
    MeshView treeViewOf(int s) const;
    /// Walks the trees, expands and filters, runs the exact tests and sorts (on the device
    /// engine when there is one).
    void run(bool self, const CcdFrameOptions& options, CcdFrameResult& out);
    /// The host stages of run.
    void runOnHost(bool self, const CcdFrameOptions& options, CcdFrameResult& out);

    Side m_sides[2];                                   ///< Mesh A, and mesh B of a pair query.
    FrontTraversal m_traversal;                        ///< The leaf walk for triangle pairs.
    BvttFront m_walkFront;                             ///< Its (unkept) front.
    std::vector<CcdFeaturePair> m_candidates;          ///< Pairs given to the exact tests.
    std::vector<CacheLinePadded<ThreadOut>> m_threads; ///< Per-thread outputs.
    std::unique_ptr<detail::CcdDeviceEngine> m_device; ///< The CUDA engine, or null on the CPU.
};

} // namespace bulletgpu
