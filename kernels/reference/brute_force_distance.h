// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/narrow/distance/triangle_distance.h"
#include "kernels/reference/brute_force_triangles.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

/// The oracles of the separation distance: every triangle pair measured with triangleDistance
/// (the engine's per-pair function, so equal inputs give equal doubles), and, to check that
/// function itself, distances between points, segments and triangles found by a different
/// method: nested ternary searches over the features' parameters (each distance is convex in
/// them), sharing no code with triangle_distance.h.

namespace bulletgpu {

/// The closest triangle pair of two meshes.
struct OracleDistance {
    double distance = INFINITY;            ///< Smallest triangle distance (0 when any pair meets).
    std::uint32_t triangleA = 0xffffffffu; ///< The first pair of that distance in (A, B) order.
    std::uint32_t triangleB = 0xffffffffu; ///< Its triangle of B.
    TriangleDistance closest{};            ///< Its closest points.
    bool intersecting = false;             ///< Some pair meets.
};

/// All pairs of `a` against `b` (each moved by its transform), on OpenMP threads: the
/// smallest distance, the first pair of it in (triangleA, triangleB) order, and whether any
/// pair meets.
inline OracleDistance oracleDistance(const OracleMesh& a, const OracleMesh& b) {
    const auto rows = static_cast<std::int64_t>(a.triangles);
    std::vector<OracleDistance> perRow(a.triangles);
    std::vector<Triangle3d> second(b.triangles);
    for (std::uint32_t tb = 0; tb < b.triangles; ++tb)
        second[tb] = loadTriangle(b.positions, b.indices, tb, b.transform);
#pragma omp parallel for schedule(dynamic, 16)
    for (std::int64_t ta = 0; ta < rows; ++ta) {
        const Triangle3d t1 = loadTriangle(a.positions, a.indices, static_cast<std::uint32_t>(ta), a.transform);
        OracleDistance& row = perRow[ta];
        for (std::uint32_t tb = 0; tb < b.triangles; ++tb) {
            const TriangleDistance d = triangleDistance(t1, second[tb]);
            row.intersecting = row.intersecting || d.intersecting;
            if (d.distance < row.distance) {
                row.distance = d.distance;
                row.triangleA = static_cast<std::uint32_t>(ta);
                row.triangleB = tb;
                row.closest = d;
            }
        }
    }
    OracleDistance best;
    for (const OracleDistance& row : perRow) {
        best.intersecting = best.intersecting || row.intersecting;
        if (row.distance < best.distance)
            best = OracleDistance{row.distance, row.triangleA, row.triangleB, row.closest, best.intersecting};
    }
    return best;
}

/// A triangle's box in double (exact: minima and maxima of its corners).
struct OracleBox {
    double lo[3]; ///< Minimum corner.
    double hi[3]; ///< Maximum corner.
};

/// The box of a triangle.
inline OracleBox oracleBox(const Triangle3d& t) {
    OracleBox box;
    for (int k = 0; k < 3; ++k) {
        box.lo[k] = std::fmin(std::fmin(t.p[0][k], t.p[1][k]), t.p[2][k]);
        box.hi[k] = std::fmax(std::fmax(t.p[0][k], t.p[1][k]), t.p[2][k]);
    }
    return box;
}

/// A lower bound of the distance between two boxes: each per-axis gap is one correctly rounded
/// subtraction, the sum and root add a few roundings, and the factor 1 - 2^-40 covers them all.
inline double oracleBoxDistance(const OracleBox& a, const OracleBox& b) {
    double sum = 0;
    for (int k = 0; k < 3; ++k) {
        const double gap = std::fmax(0.0, std::fmax(a.lo[k] - b.hi[k], b.lo[k] - a.hi[k]));
        sum += gap * gap;
    }
    return std::sqrt(sum) * (1 - 9.094947017729282e-13);
}

/// oracleDistance for large meshes: the same pairs measured, except those whose boxes are
/// farther apart than the best distance its row's thread has found (B's boxes sorted by their
/// minimum x, each row's scan stopped past that bound). Such pairs cannot equal the best, so the
/// answer is oracleDistance's.
inline OracleDistance oracleDistanceCulled(const OracleMesh& a, const OracleMesh& b) {
    std::vector<Triangle3d> second(b.triangles);
    std::vector<OracleBox> boxes(b.triangles);
    std::vector<std::uint32_t> byX(b.triangles);
    for (std::uint32_t tb = 0; tb < b.triangles; ++tb) {
        second[tb] = loadTriangle(b.positions, b.indices, tb, b.transform);
        boxes[tb] = oracleBox(second[tb]);
        byX[tb] = tb;
    }
    std::sort(byX.begin(), byX.end(),
              [&](std::uint32_t x, std::uint32_t y) { return boxes[x].lo[0] < boxes[y].lo[0]; });
    const auto rows = static_cast<std::int64_t>(a.triangles);
    std::vector<OracleDistance> perRow(a.triangles);
#pragma omp parallel
    {
        double bound = INFINITY;
#pragma omp for schedule(dynamic, 64)
        for (std::int64_t ta = 0; ta < rows; ++ta) {
            const Triangle3d t1 = loadTriangle(a.positions, a.indices, static_cast<std::uint32_t>(ta), a.transform);
            const OracleBox box = oracleBox(t1);
            OracleDistance& row = perRow[ta];
            for (const std::uint32_t tb : byX) {
                if (boxes[tb].lo[0] - box.hi[0] > bound * (1 + 9.094947017729282e-13)) break;
                if (oracleBoxDistance(box, boxes[tb]) > bound) continue;
                const TriangleDistance d = triangleDistance(t1, second[tb]);
                row.intersecting = row.intersecting || d.intersecting;
                if (d.distance < row.distance || (d.distance == row.distance && tb < row.triangleB)) {
                    row.distance = d.distance;
                    row.triangleA = static_cast<std::uint32_t>(ta);
                    row.triangleB = tb;
                    row.closest = d;
                }
                bound = std::fmin(bound, d.distance);
            }
        }
    }
    OracleDistance best;
    for (const OracleDistance& row : perRow) {
        best.intersecting = best.intersecting || row.intersecting;
        if (row.distance < best.distance)
            best = OracleDistance{row.distance, row.triangleA, row.triangleB, row.closest, best.intersecting};
    }
    return best;
}

/// The minimum of convex f over [lo, hi] by ternary search (120 steps: the interval shrinks
/// by (2/3)^120, below double resolution of [0, 1]), evaluated at the final midpoint.
template <typename F>
double ternaryMinimum(F f, double lo, double hi) {
    for (int i = 0; i < 120; ++i) {
        const double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
        if (f(m1) <= f(m2)) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    return f(0.5 * (lo + hi));
}

/// |p - q|, written out.
inline double oracleLength(double x, double y, double z) { return std::sqrt(x * x + y * y + z * z); }

/// Distance from point x to segment [p, q] by ternary search over the segment's parameter.
inline double searchPointSegment(const Vec3d& x, const Vec3d& p, const Vec3d& q) {
    return ternaryMinimum(
        [&](double s) {
            return oracleLength(p[0] + s * (q[0] - p[0]) - x[0], p[1] + s * (q[1] - p[1]) - x[1],
                                p[2] + s * (q[2] - p[2]) - x[2]);
        },
        0.0, 1.0);
}

/// Distance between segments [p0, p1] and [q0, q1] by nested ternary searches.
inline double searchSegmentSegment(const Vec3d& p0, const Vec3d& p1, const Vec3d& q0, const Vec3d& q1) {
    return ternaryMinimum(
        [&](double s) {
            const Vec3d x{{p0[0] + s * (p1[0] - p0[0]), p0[1] + s * (p1[1] - p0[1]), p0[2] + s * (p1[2] - p0[2])}};
            return searchPointSegment(x, q0, q1);
        },
        0.0, 1.0);
}

/// Distance from point x to triangle t by nested ternary searches over u in [0, 1] and
/// v in [0, 1 - u] (the point t0 + u (t1 - t0) + v (t2 - t0)).
inline double searchPointTriangle(const Vec3d& x, const Triangle3d& t) {
    return ternaryMinimum(
        [&](double u) {
            Vec3d p, q;
            for (int k = 0; k < 3; ++k) {
                p.v[k] = t.p[0][k] + u * (t.p[1][k] - t.p[0][k]);
                q.v[k] = t.p[2][k] + u * (t.p[1][k] - t.p[2][k]);
            }
            // Points with this u: the segment from p (v = 0) to q (v = 1 - u).
            return searchPointSegment(x, p, q);
        },
        0.0, 1.0);
}

/// Distance between two triangles that do not meet, from independent searches: the smallest
/// of the 6 vertex-triangle and 9 edge-edge distances (closest points of disjoint triangles
/// are always on such a pair).
inline double searchTriangleDistance(const Triangle3d& t1, const Triangle3d& t2) {
    double best = INFINITY;
    for (int i = 0; i < 3; ++i) {
        best = std::fmin(best, searchPointTriangle(t1.p[i], t2));
        best = std::fmin(best, searchPointTriangle(t2.p[i], t1));
        for (int j = 0; j < 3; ++j) {
            best = std::fmin(best, searchSegmentSegment(t1.p[i], t1.p[(i + 1) % 3], t2.p[j], t2.p[(j + 1) % 3]));
        }
    }
    return best;
}

} // namespace bulletgpu
