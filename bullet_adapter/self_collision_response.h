// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/narrow/ccd/ccd_frame_query.h"
#include "kernels/narrow/geometry/exact_predicates.h"

#include <cstddef>
#include <cstdint>
#include <vector>

/// The response to a cloth's self-contacts, on flat buffers (no Bullet type): a mass-weighted
/// position projection that pushes vertex-face and edge-edge pairs to the thickness apart, on
/// the side they were on at the start of the step, and the continuous failsafe that keeps a step
/// from creating an intersection the projection left behind.

namespace bulletgpu {

/// One deforming mesh over one step: positions at its start (collision-free by induction) and at
/// its end (corrected in place), inverse masses (0: pinned, never moved).
struct SelfCollisionMesh {
    std::uint32_t vertexCount = 0;          ///< Vertices.
    const std::uint32_t* indices = nullptr; ///< Three vertex indices per triangle.
    std::uint32_t triangleCount = 0;        ///< Triangles.
    const std::uint32_t* edges = nullptr;   ///< Two vertex indices per edge (MeshFeatures order).
    const double* start = nullptr;          ///< x, y, z per vertex at the start of the step.
    double* end = nullptr;                  ///< x, y, z per vertex at the end; corrected in place.
    const double* inverseMass = nullptr;    ///< Inverse mass per vertex (0: pinned).
};

/// The four vertices of `pair` into `out`: VertexFace, vertex a then the corners of triangle b;
/// EdgeEdge, the ends of edge a then those of edge b.
inline void pairVertices(const SelfCollisionMesh& mesh, const CcdFeaturePair& pair, std::uint32_t* out) {
    if (pair.kind == CcdFeatureKind::VertexFace) {
        const std::uint32_t* t = mesh.indices + 3 * pair.b;
        out[0] = pair.a, out[1] = t[0], out[2] = t[1], out[3] = t[2];
        return;
    }
    const std::uint32_t* e = mesh.edges + 2 * pair.a;
    const std::uint32_t* f = mesh.edges + 2 * pair.b;
    out[0] = e[0], out[1] = e[1], out[2] = f[0], out[3] = f[1];
}

/// Barycentric weights `w` of the point of triangle (a, b, c) closest to `x`.
void closestTriangleWeights(const Vec3d& x, const Vec3d& a, const Vec3d& b, const Vec3d& c, double* w);

struct PairColouring;

/// Pair lists shorter than this run on the calling thread (the same order; no team to wake).
constexpr std::size_t cParallelProjectionPairs = 4096;

/// Pushes every pair of `pairs` (VertexFace: vertex a, triangle b; EdgeEdge: edges a, b) that
/// is closer than `thickness` at the end positions to `thickness` apart, `iterations` times
/// (Gauss-Seidel, closest points recomputed each time; fewer when a pass moves nothing, after
/// which every later pass would move nothing either). The separating direction is the one from
/// the pair's closest points at the end, turned around when the same material points were on
/// the other side at the start (the pair crossed during the step); each vertex moves in
/// proportion to its inverse mass and barycentric weight, as in position-based dynamics, and a
/// pinned one (inverse mass 0) is never written. Coloured Gauss-Seidel: each pass runs the
/// colours of colourPairs one after the other, so the order is the colours' blocks of
/// consecutive pairs (each in list order), not the list's; the blocks of a colour run on up to
/// `threads` OpenMP threads at once (their pairs move no vertex in common and read none another
/// block moves), so the result is the same bit for bit on any number of threads. Lists shorter
/// than cParallelProjectionPairs run on the calling thread. `colouring` is scratch.
void projectSelfPairs(const SelfCollisionMesh& mesh, const CcdFeaturePair* pairs, std::size_t count, double thickness,
                      int iterations, int threads, PairColouring& colouring);

/// Settings of the continuous stage.
struct ContinuousOptions {
    double eta = 0;                     ///< Separation the CCD query keeps (>= 0).
    double thickness = 0;               ///< Thickness the projection of impacts restores.
    int iterations = 1;                 ///< Projection iterations per round.
    std::uint32_t projectionRounds = 2; ///< Rounds whose impacts are projected before freezing.
    std::uint32_t freezeRounds = 16;    ///< Rounds that freeze vertices before reverting all.
    int threads = 1;                    ///< OpenMP threads of the CCD query and the projection.
    /// The skip: when set, the positions a discrete contact query saw this step (before the
    /// projection; it read them as floats), which reported every vertex-face and edge-edge pair
    /// sharing no vertex closer than `queryDistance` (and every intersecting triangle pair), the
    /// smallest distance among them being `nearest` (+inf when none).
    const double* queried = nullptr;
    double queryDistance = 0; ///< See `queried`.
    double nearest = 0;       ///< See `queried`.
};

/// Outcome of the continuous stage.
struct ContinuousResult {
    std::uint32_t rounds = 0;         ///< CCD queries run.
    std::uint32_t impacts = 0;        ///< Impacts found by the first query (after the discrete projection).
    std::uint32_t frozenVertices = 0; ///< Vertices put back at their start position.
    bool wholeMeshReverted =
        false;                  ///< Every vertex is back at the start (freezing did not converge, or a runaway step).
    double ccdMilliseconds = 0; ///< Time spent in the CCD queries.
    bool skipped = false;       ///< The query was not needed (see slowStepClearsEta).
};

/// The largest distance of a vertex's move (`to` minus `from`, x, y, z each) from the common
/// translation that makes it least: the centre of the moves' bounding box.
double largestRelativeMove(const double* from, const double* to, std::uint32_t vertexCount);

/// The float rounding allowance of the engine's distances for positions up to the largest
/// magnitude in the `count` coordinates of `a` and `b`: 2^-14 (1 + that magnitude).
double positionRounding(const double* a, const double* b, std::size_t count);

/// The distance of a pair query over a step from `from` to `to` (x, y, z per vertex) that a
/// pair list may keep: `thickness` plus `reachFraction` times it when no vertex moved, relative
/// to the others (largestRelativeMove), by a quarter of that margin (quiet enough for the list
/// to last a few steps), else `thickness` alone (no list).
double pairListReach(const double* from, const double* to, std::uint32_t vertexCount, double thickness,
                     double reachFraction);

/// Whether a list of every feature pair within `reach` at `listed` still holds every pair
/// within `thickness` at `now`: no pair has come closer by more than twice the largest relative
/// move of a vertex since, nor by more than the engine's float rounding.
bool pairListHolds(const double* listed, const double* now, std::uint32_t vertexCount, double reach, double thickness);

/// Distance of the features of `pair` (VertexFace: vertex a, triangle b; EdgeEdge: edges a, b of
/// mesh.edges) at `positions` (x, y, z per vertex of the mesh).
double featurePairDistance(const SelfCollisionMesh& mesh, const CcdFeaturePair& pair, const double* positions);

/// Whether no pair of features sharing no vertex comes within `options.eta` anywhere along the
/// linear motion from mesh.start to mesh.end, proven from the discrete query of options.queried
/// (false when that is unset): every such pair was at least min(nearest, queryDistance) apart at
/// the queried positions, up to their float rounding; it is at most 2 P closer at the end, P the
/// largest move of a vertex from the queried to the end positions (the projection), and at most
/// 2 M closer anywhere during the step than at its end, M the largest move of a vertex from start
/// to end (the points of a feature move linearly, by at most their vertices' largest move). Both
/// are measured after taking away the common translation that makes them least (distances do not
/// change under a translation, and a linear motion minus t times a constant is linear), so a
/// cloth falling as a whole passes. The step is clear when min(nearest, queryDistance) - 2 P -
/// 2 M - rounding > eta, rounding = 2^-14 (1 + the largest coordinate), far above the float
/// rounding of positions and distances.
bool slowStepClearsEta(const SelfCollisionMesh& mesh, const ContinuousOptions& options);

/// Whether the step of `mesh` is one no cloth makes but an integration that blows up: some end
/// position is not finite, or some vertex moves, relative to the common translation that makes
/// the moves least, by more than the diagonal of the start positions' bounding box (the mesh
/// deforms by more than its own size in one step). Its CCD query would test nearly every pair
/// of features, at the cost of the longest tests each.
bool runawayStep(const SelfCollisionMesh& mesh);

/// The continuous stage (after Bridson, Fedkiw and Anderson 2002, with rigid impact zones
/// reduced to freezing): runs the self CCD query from start to end with separation options.eta.
/// For the first options.projectionRounds rounds the impacts join `pairs` and all of `pairs` are
/// projected again (projectSelfPairs); after that the vertices of every impact go back to their
/// start positions. It stops at the first query without impact; when freezing stalls or its
/// rounds run out, every vertex goes back. So the end state is either reached from the start
/// without any two features that share no vertex coming within eta (as far as the CCD query
/// sees; it has no false negatives), or is the start state. When slowStepClearsEta proves the
/// step clear it runs no query (ContinuousResult::skipped). A runaway step (runawayStep) goes
/// back whole without a query. `frozen` and `colouring` are scratch.
ContinuousResult runContinuousResponse(const SelfCollisionMesh& mesh, std::vector<CcdFeaturePair>& pairs,
                                       const ContinuousOptions& options, CcdFrameQuery& query, CcdFrameResult& result,
                                       std::vector<std::uint8_t>& frozen, PairColouring& colouring);

} // namespace bulletgpu
