// SPDX-License-Identifier: Zlib
#include "bullet_adapter/self_collision_response.h"

#include "bullet_adapter/pair_colouring.h"
#include "kernels/common/omp_team.h"
#include "kernels/narrow/geometry/feature_distance.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace bulletgpu {

namespace {

/// Up to three weighted vertices of one side of a pair: the point they make is sum w_i x_i.
struct WeightedPoint {
    std::uint32_t vertex[3]; ///< Vertices.
    double weight[3];        ///< Barycentric weights (sum 1).
    int count;               ///< Vertices used (1 to 3).
};

Vec3d load(const double* positions, std::uint32_t v) {
    return Vec3d{{positions[3 * v], positions[3 * v + 1], positions[3 * v + 2]}};
}

/// The point `p` makes of `positions`.
Vec3d evaluate(const WeightedPoint& p, const double* positions) {
    Vec3d sum{{0, 0, 0}};
    for (int i = 0; i < p.count; ++i) sum = vecAddScaled(sum, p.weight[i], load(positions, p.vertex[i]));
    return sum;
}

/// Barycentric weights of point `x` of triangle (a, b, c), clamped to the triangle.
void triangleWeights(const Vec3d& x, const Vec3d& a, const Vec3d& b, const Vec3d& c, double* w) {
    const Vec3d ab = vecSub(b, a), ac = vecSub(c, a), ax = vecSub(x, a);
    const double d00 = vecDot(ab, ab), d01 = vecDot(ab, ac), d11 = vecDot(ac, ac);
    const double d20 = vecDot(ax, ab), d21 = vecDot(ax, ac);
    const double det = d00 * d11 - d01 * d01;
    double v = 0, u = 0;
    if (det > 0) {
        v = std::clamp((d11 * d20 - d01 * d21) / det, 0.0, 1.0);
        u = std::clamp((d00 * d21 - d01 * d20) / det, 0.0, 1.0);
    }
    const double sum = v + u;
    if (sum > 1) v /= sum, u /= sum;
    w[0] = 1 - v - u;
    w[1] = v;
    w[2] = u;
}

/// Parameter of point `x` along segment [a, b], in [0, 1].
double segmentParameter(const Vec3d& x, const Vec3d& a, const Vec3d& b) {
    const Vec3d ab = vecSub(b, a);
    const double len2 = vecDot(ab, ab);
    return len2 > 0 ? clampUnit(vecDot(vecSub(x, a), ab) / len2) : 0.0;
}

/// The two sides of `pair` at the end positions, as weighted points at their closest points.
void closestSides(const SelfCollisionMesh& m, const CcdFeaturePair& pair, WeightedPoint& sideA, WeightedPoint& sideB) {
    std::uint32_t v[4];
    pairVertices(m, pair, v);
    const Vec3d x0 = load(m.end, v[0]), x1 = load(m.end, v[1]), x2 = load(m.end, v[2]), x3 = load(m.end, v[3]);
    if (pair.kind == CcdFeatureKind::VertexFace) {
        sideA = WeightedPoint{{v[0], 0, 0}, {1, 0, 0}, 1};
        sideB = WeightedPoint{{v[1], v[2], v[3]}, {0, 0, 0}, 3};
        closestTriangleWeights(x0, x1, x2, x3, sideB.weight);
        return;
    }
    const FeaturePoints fp = segmentsClosest(x0, x1, x2, x3);
    const double s = segmentParameter(fp.onA, x0, x1), t = segmentParameter(fp.onB, x2, x3);
    sideA = WeightedPoint{{v[0], v[1], 0}, {1 - s, s, 0}, 2};
    sideB = WeightedPoint{{v[2], v[3], 0}, {1 - t, t, 0}, 2};
}

double length(const Vec3d& v) { return std::sqrt(vecDot(v, v)); }

/// A direction for a pair whose closest points coincide at the end: from B to A at the start,
/// else the triangle's or the edges' normal. False when none is defined.
bool fallbackDirection(const SelfCollisionMesh& m, const CcdFeaturePair& pair, const Vec3d& startGap, Vec3d& n) {
    const double startLength = length(startGap);
    if (startLength > 0) {
        n = vecScale(1 / startLength, startGap);
        return true;
    }
    // The triangle's normal (corners v[1..3]), or the cross product of the two edges.
    std::uint32_t v[4];
    pairVertices(m, pair, v);
    const Vec3d x0 = load(m.end, v[0]), x1 = load(m.end, v[1]), x2 = load(m.end, v[2]), x3 = load(m.end, v[3]);
    const Vec3d axis = pair.kind == CcdFeatureKind::VertexFace ? vecCross(vecSub(x2, x1), vecSub(x3, x1))
                                                               : vecCross(vecSub(x1, x0), vecSub(x3, x2));
    const double axisLength = length(axis);
    if (!(axisLength > 0)) return false;
    n = vecScale(1 / axisLength, axis);
    return true;
}

/// Moves the vertices of `side` by `scale` times their weight and inverse mass along `n`; writes
/// no pinned one (inverse mass 0), which pairs of the same colour may read at the same time.
void moveSide(const SelfCollisionMesh& m, const WeightedPoint& side, double scale, const Vec3d& n) {
    for (int i = 0; i < side.count; ++i) {
        const std::uint32_t v = side.vertex[i];
        if (m.inverseMass[v] == 0) continue;
        const double step = scale * side.weight[i] * m.inverseMass[v];
        for (int k = 0; k < 3; ++k) m.end[3 * v + k] += step * n.v[k];
    }
}

/// Projects one pair to `thickness` apart (see projectSelfPairs); false when it moved nothing.
bool projectPair(const SelfCollisionMesh& m, const CcdFeaturePair& pair, double thickness) {
    WeightedPoint sideA, sideB;
    closestSides(m, pair, sideA, sideB);
    const Vec3d gap = vecSub(evaluate(sideA, m.end), evaluate(sideB, m.end));
    const Vec3d startGap = vecSub(evaluate(sideA, m.start), evaluate(sideB, m.start));
    const double distance = length(gap);
    Vec3d n;
    double separation = distance;
    if (distance > 1e-12 * (1 + length(evaluate(sideA, m.end)))) {
        n = vecScale(1 / distance, gap);
        if (vecDot(startGap, n) < 0) n = vecScale(-1, n), separation = -distance;
    } else if (!fallbackDirection(m, pair, startGap, n)) {
        return false;
    }
    if (separation >= thickness) return false;
    double weightSum = 0;
    for (int i = 0; i < sideA.count; ++i)
        weightSum += sideA.weight[i] * sideA.weight[i] * m.inverseMass[sideA.vertex[i]];
    for (int i = 0; i < sideB.count; ++i)
        weightSum += sideB.weight[i] * sideB.weight[i] * m.inverseMass[sideB.vertex[i]];
    if (!(weightSum > 0)) return false;
    const double lambda = (thickness - separation) / weightSum;
    moveSide(m, sideA, lambda, n);
    moveSide(m, sideB, -lambda, n);
    return true;
}

} // namespace

void closestTriangleWeights(const Vec3d& x, const Vec3d& a, const Vec3d& b, const Vec3d& c, double* w) {
    triangleWeights(pointTriangleClosest(x, a, b, c).onB, a, b, c, w);
}

void projectSelfPairs(const SelfCollisionMesh& mesh, const CcdFeaturePair* pairs, std::size_t count, double thickness,
                      int iterations, int threads, PairColouring& colouring) {
    if (count == 0 || iterations <= 0) return;
    colourPairs(mesh, pairs, count, colouring);
    const std::vector<std::uint32_t>& blocks = colouring.blocks;
    const std::vector<std::uint32_t>& starts = colouring.colourStarts;
    const int team = count >= cParallelProjectionPairs ? threadsForRegion(threads) : 1;
    // Whether a pass moved something, one flag for odd passes and one for even ones: a pass
    // clears its flag after every thread has read it two passes before.
    int moved[2] = {0, 0};
#pragma omp parallel num_threads(team)
    for (int iteration = 0; iteration < iterations; ++iteration) {
        int& movedNow = moved[iteration % 2];
#pragma omp single
        movedNow = 0;
        bool mine = false;
        for (std::size_t c = 0; c + 1 < starts.size(); ++c) {
            const auto begin = static_cast<std::int64_t>(starts[c]), end = static_cast<std::int64_t>(starts[c + 1]);
#pragma omp for schedule(static)
            for (std::int64_t i = begin; i < end; ++i) {
                const std::size_t first = blocks[i] * cColourBlockPairs;
                const std::size_t last = std::min(count, first + cColourBlockPairs);
                for (std::size_t p = first; p < last; ++p) mine = projectPair(mesh, pairs[p], thickness) || mine;
            }
        }
        if (mine) {
#pragma omp atomic write
            movedNow = 1;
        }
#pragma omp barrier
        int any;
#pragma omp atomic read
        any = movedNow;
        // A pass that moves nothing leaves every later pass nothing to move.
        if (!any) break;
    }
}

double largestRelativeMove(const double* from, const double* to, std::uint32_t vertexCount) {
    double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    for (std::size_t i = 0; i < 3 * std::size_t(vertexCount); ++i) {
        const double d = to[i] - from[i];
        lo[i % 3] = std::min(lo[i % 3], d);
        hi[i % 3] = std::max(hi[i % 3], d);
    }
    double centre[3];
    for (int k = 0; k < 3; ++k) centre[k] = 0.5 * (lo[k] + hi[k]);
    double largest = 0;
    for (std::uint32_t v = 0; v < vertexCount; ++v) {
        double d2 = 0;
        for (int k = 0; k < 3; ++k) {
            const std::size_t i = 3 * std::size_t(v) + k;
            const double d = to[i] - from[i] - centre[k];
            d2 += d * d;
        }
        largest = std::max(largest, d2);
    }
    return std::sqrt(largest);
}

double pairListReach(const double* from, const double* to, std::uint32_t vertexCount, double thickness,
                     double reachFraction) {
    const double margin = thickness * std::max(0.0, reachFraction);
    const bool quiet = margin > 0 && 4 * largestRelativeMove(from, to, vertexCount) < margin;
    return thickness + (quiet ? margin : 0);
}

bool pairListHolds(const double* listed, const double* now, std::uint32_t vertexCount, double reach, double thickness) {
    const double rounding = positionRounding(now, listed, 3 * std::size_t(vertexCount));
    return reach - 2 * largestRelativeMove(listed, now, vertexCount) - rounding > thickness;
}

double featurePairDistance(const SelfCollisionMesh& mesh, const CcdFeaturePair& pair, const double* positions) {
    std::uint32_t v[4];
    pairVertices(mesh, pair, v);
    const Vec3d x0 = load(positions, v[0]), x1 = load(positions, v[1]), x2 = load(positions, v[2]),
                x3 = load(positions, v[3]);
    const FeaturePoints closest = pair.kind == CcdFeatureKind::VertexFace ? pointTriangleClosest(x0, x1, x2, x3)
                                                                          : segmentsClosest(x0, x1, x2, x3);
    return std::sqrt(closest.distanceSquared);
}

double positionRounding(const double* a, const double* b, std::size_t count) {
    double largest = 0;
    for (std::size_t i = 0; i < count; ++i) largest = std::max({largest, std::fabs(a[i]), std::fabs(b[i])});
    return 0x1p-14 * (1 + largest);
}

bool slowStepClearsEta(const SelfCollisionMesh& mesh, const ContinuousOptions& options) {
    if (!options.queried || mesh.vertexCount == 0) return false;
    const std::size_t coordinates = 3 * std::size_t(mesh.vertexCount);
    const double projected = largestRelativeMove(options.queried, mesh.end, mesh.vertexCount);
    const double moved = largestRelativeMove(mesh.start, mesh.end, mesh.vertexCount);
    const double rounding = std::max(positionRounding(mesh.end, options.queried, coordinates),
                                     positionRounding(mesh.start, mesh.start, coordinates));
    const double bound = std::min(options.nearest, options.queryDistance) - 2 * projected - 2 * moved - rounding;
    return std::isfinite(bound) && bound > options.eta;
}

bool runawayStep(const SelfCollisionMesh& mesh) {
    double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    for (std::size_t i = 0; i < 3 * std::size_t(mesh.vertexCount); ++i) {
        if (!std::isfinite(mesh.end[i])) return true;
        lo[i % 3] = std::min(lo[i % 3], mesh.start[i]);
        hi[i % 3] = std::max(hi[i % 3], mesh.start[i]);
    }
    if (mesh.vertexCount == 0) return false;
    double diagonal2 = 0;
    for (int k = 0; k < 3; ++k) diagonal2 += (hi[k] - lo[k]) * (hi[k] - lo[k]);
    return largestRelativeMove(mesh.start, mesh.end, mesh.vertexCount) > std::sqrt(diagonal2);
}

ContinuousResult runContinuousResponse(const SelfCollisionMesh& mesh, std::vector<CcdFeaturePair>& pairs,
                                       const ContinuousOptions& options, CcdFrameQuery& query, CcdFrameResult& result,
                                       std::vector<std::uint8_t>& frozen, PairColouring& colouring) {
    ContinuousResult out;
    if (slowStepClearsEta(mesh, options)) {
        out.skipped = true;
        return out;
    }
    frozen.assign(mesh.vertexCount, 0);
    if (runawayStep(mesh)) {
        for (std::size_t i = 0; i < 3 * std::size_t(mesh.vertexCount); ++i) mesh.end[i] = mesh.start[i];
        out.frozenVertices = mesh.vertexCount;
        out.wholeMeshReverted = true;
        return out;
    }
    const CcdMesh ccdMesh{mesh.start, mesh.end, mesh.vertexCount, mesh.indices, mesh.triangleCount};
    CcdFrameOptions ccd;
    ccd.eta = options.eta;
    ccd.threads = options.threads;
    const auto freeze = [&](std::uint32_t v) {
        if (frozen[v]) return false;
        frozen[v] = 1;
        for (int k = 0; k < 3; ++k) mesh.end[3 * v + k] = mesh.start[3 * v + k];
        ++out.frozenVertices;
        return true;
    };
    const std::uint32_t maxRounds = options.projectionRounds + options.freezeRounds;
    while (out.rounds < maxRounds) {
        const auto queryStart = std::chrono::steady_clock::now();
        query.runSelf(ccdMesh, ccd, result);
        out.ccdMilliseconds +=
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - queryStart).count();
        if (out.rounds++ == 0) out.impacts = static_cast<std::uint32_t>(result.impacts.size());
        if (result.impacts.empty()) return out;
        if (out.rounds <= options.projectionRounds) {
            for (const CcdImpact& impact : result.impacts) pairs.push_back(impact.pair);
            projectSelfPairs(mesh, pairs.data(), pairs.size(), options.thickness, options.iterations, options.threads,
                             colouring);
            continue;
        }
        bool progressed = false;
        for (const CcdImpact& impact : result.impacts) {
            const CcdFeaturePair& p = impact.pair;
            if (p.kind == CcdFeatureKind::EdgeEdge) {
                for (std::uint32_t e : {p.a, p.b})
                    for (int k = 0; k < 2; ++k) progressed |= freeze(mesh.edges[2 * e + k]);
            } else {
                progressed |= freeze(p.a);
                for (int k = 0; k < 3; ++k) progressed |= freeze(mesh.indices[3 * p.b + k]);
            }
        }
        if (!progressed) break;
    }
    for (std::uint32_t v = 0; v < mesh.vertexCount; ++v) freeze(v);
    out.wholeMeshReverted = true;
    return out;
}

} // namespace bulletgpu
