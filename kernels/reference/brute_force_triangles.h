// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/narrow/geometry/triangle_contact.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

/// The oracles of the narrow phase: all pairs of triangles (small meshes), the same behind a
/// sort-and-sweep of the triangle boxes (large meshes), and an independent exact test for
/// triangles with integer coordinates that shares no code with trianglesIntersect.

namespace bulletgpu {

/// One mesh as an oracle reads it.
struct OracleMesh {
    const float* positions;       ///< x, y, z per vertex.
    const std::uint32_t* indices; ///< Three vertex indices per triangle.
    std::uint32_t triangles;      ///< Triangle count.
    const double* transform;      ///< Row-major 3x4 [R | t], or null.
    std::uint32_t mesh;           ///< Index reported in contacts.
};

/// The contact of a triangle pair when it meets (same predicate and segment as the engine).
inline bool oracleContact(const OracleMesh& a, std::uint32_t ta, const OracleMesh& b, std::uint32_t tb,
                          TriangleContact& contact) {
    const Triangle3d t1 = loadTriangle(a.positions, a.indices, ta, a.transform);
    const Triangle3d t2 = loadTriangle(b.positions, b.indices, tb, b.transform);
    TriangleTestDetail detail;
    if (!trianglesIntersect(t1, t2, detail)) return false;
    contact.meshA = a.mesh;
    contact.triangleA = ta;
    contact.meshB = b.mesh;
    contact.triangleB = tb;
    contact.flags = intersectionSegment(t1, t2, detail, contact.segment);
    return true;
}

/// The contacts among `candidates` (keys ta << 32 | tb, sorted) of `a` against `b` (against
/// itself when `b` is null: pairs sharing a vertex skipped); sorted by (triangleA, triangleB).
inline std::vector<TriangleContact> oracleContacts(const OracleMesh& a, const OracleMesh* b,
                                                   const std::vector<std::uint64_t>& candidates) {
    const bool self = b == nullptr;
    const OracleMesh& other = self ? a : *b;
    const auto count = static_cast<std::int64_t>(candidates.size());
    std::vector<TriangleContact> found(candidates.size());
    std::vector<char> meets(candidates.size(), 0);
#pragma omp parallel for schedule(dynamic, 1024)
    for (std::int64_t i = 0; i < count; ++i) {
        const auto ta = static_cast<std::uint32_t>(candidates[i] >> 32);
        const auto tb = static_cast<std::uint32_t>(candidates[i]);
        if (self && shareVertex(a.indices, ta, tb)) continue;
        meets[i] = oracleContact(a, ta, other, tb, found[i]);
    }
    std::vector<TriangleContact> contacts;
    for (std::int64_t i = 0; i < count; ++i) {
        if (meets[i]) contacts.push_back(found[i]);
    }
    return contacts;
}

/// The all-pairs oracle, O(n^2): self-collision of `a` when `b` is null (i < j), else a against b.
inline std::vector<TriangleContact> bruteForceContacts(const OracleMesh& a, const OracleMesh* b) {
    std::vector<std::uint64_t> candidates;
    for (std::uint32_t ta = 0; ta < a.triangles; ++ta) {
        for (std::uint32_t tb = b == nullptr ? ta + 1 : 0; tb < (b == nullptr ? a.triangles : b->triangles); ++tb) {
            candidates.push_back(static_cast<std::uint64_t>(ta) << 32 | tb);
        }
    }
    return oracleContacts(a, b, candidates);
}

/// Float boxes of a mesh's triangles (the engine's conservative boxes).
inline std::vector<FloatBox> oracleBoxes(const OracleMesh& m) {
    std::vector<FloatBox> boxes(m.triangles);
    for (std::uint32_t t = 0; t < m.triangles; ++t) {
        boxes[t] = triangleBox(loadTriangle(m.positions, m.indices, t, m.transform));
    }
    return boxes;
}

/// Indices of `boxes` sorted by their lower x bound.
inline std::vector<std::uint32_t> sortedOnX(const std::vector<FloatBox>& boxes) {
    std::vector<std::uint32_t> order(boxes.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
        return boxes[x].lo[0] < boxes[y].lo[0] || (boxes[x].lo[0] == boxes[y].lo[0] && x < y);
    });
    return order;
}

/// Appends the pairs (from `first`, of `second`) whose boxes overlap, for every second box
/// whose lower x bound lies in [lo, hi] of the first box (strictly above lo when `strict`).
inline void sweepFrom(const std::vector<FloatBox>& first, const std::vector<FloatBox>& second,
                      const std::vector<std::uint32_t>& secondOrder, bool strict, bool swapKey,
                      std::vector<std::uint64_t>& out) {
    for (std::uint32_t f = 0; f < first.size(); ++f) {
        const FloatBox& box = first[f];
        const auto below = [&](std::uint32_t s, float lo) { return second[s].lo[0] < lo; };
        const auto notAbove = [&](std::uint32_t s, float lo) { return second[s].lo[0] <= lo; };
        auto it = strict ? std::lower_bound(secondOrder.begin(), secondOrder.end(), box.lo[0], notAbove)
                         : std::lower_bound(secondOrder.begin(), secondOrder.end(), box.lo[0], below);
        for (; it != secondOrder.end() && second[*it].lo[0] <= box.hi[0]; ++it) {
            if (!boxesOverlap(box, second[*it])) continue;
            out.push_back(swapKey ? (static_cast<std::uint64_t>(*it) << 32 | f)
                                  : (static_cast<std::uint64_t>(f) << 32 | *it));
        }
    }
}

/// The box-culled oracle: triangle pairs whose boxes overlap, found by a sweep on x over the
/// sorted lower bounds, then the exact test. Equal to bruteForceContacts because boxes contain
/// their triangles (triangle_ops.h).
inline std::vector<TriangleContact> sweptContacts(const OracleMesh& a, const OracleMesh* b) {
    const std::vector<FloatBox> boxesA = oracleBoxes(a);
    std::vector<std::uint64_t> candidates;
    if (b == nullptr) {
        // Each overlapping pair once, from the box with the lower (lo, index).
        const std::vector<std::uint32_t> order = sortedOnX(boxesA);
        for (std::size_t i = 0; i < order.size(); ++i) {
            const FloatBox& box = boxesA[order[i]];
            for (std::size_t j = i + 1; j < order.size() && boxesA[order[j]].lo[0] <= box.hi[0]; ++j) {
                if (boxesOverlap(box, boxesA[order[j]])) candidates.push_back(pairKey(order[i], order[j]));
            }
        }
    } else {
        // Pairs with lo_b in [lo_a, hi_a], then pairs with lo_a in (lo_b, hi_b].
        const std::vector<FloatBox> boxesB = oracleBoxes(*b);
        sweepFrom(boxesA, boxesB, sortedOnX(boxesB), false, false, candidates);
        sweepFrom(boxesB, boxesA, sortedOnX(boxesA), true, true, candidates);
    }
    std::sort(candidates.begin(), candidates.end());
    return oracleContacts(a, b, candidates);
}

/// A 128-bit integer (a GCC/Clang extension).
__extension__ typedef __int128 OracleInt;

/// Exact rational x = num / den (den != 0) for the independent test.
struct Rational {
    OracleInt num, den;
};

/// The independent exact test for triangles with small integer coordinates (|c| <= 128; the
/// elimination multiplies four 5x5 minors in 128-bit integers, which larger grids overflow): the
/// closed triangles meet exactly when some lambda, mu >= 0 with sum 1 each give
/// sum lambda_i P_i = sum mu_j Q_j, a linear program that is feasible exactly when one of its
/// basic solutions is; every basic solution is solved in exact integer arithmetic.
inline bool integerTrianglesMeet(const long long p[3][3], const long long q[3][3]) {
    // Columns: lambda 0..2 (P corners), mu 0..2 (-Q corners); rows: x, y, z, sum lambda, sum mu.
    long long a[5][6] = {};
    for (int c = 0; c < 3; ++c) {
        for (int k = 0; k < 3; ++k) {
            a[k][c] = p[c][k];
            a[k][3 + c] = -q[c][k];
        }
        a[3][c] = 1;
        a[4][3 + c] = 1;
    }
    const long long rhs[5] = {0, 0, 0, 1, 1};
    for (int subset = 1; subset < 64; ++subset) {
        int columns[6], k = 0;
        for (int c = 0; c < 6; ++c) {
            if (subset & (1 << c)) columns[k++] = c;
        }
        if (k > 5) continue;
        // Gaussian elimination on rationals, rows 0..4, columns `columns`, then rhs.
        Rational m[5][7];
        for (int r = 0; r < 5; ++r) {
            for (int c = 0; c < k; ++c) m[r][c] = Rational{a[r][columns[c]], 1};
            m[r][k] = Rational{rhs[r], 1};
        }
        auto sub = [](Rational x, Rational f, Rational y) { // x - f * y
            Rational r{x.num * f.den * y.den - f.num * y.num * x.den, x.den * f.den * y.den};
            OracleInt g1 = r.num < 0 ? -r.num : r.num, g2 = r.den < 0 ? -r.den : r.den;
            while (g2 != 0) {
                const OracleInt t = g1 % g2;
                g1 = g2;
                g2 = t;
            }
            if (g1 > 1) r.num /= g1, r.den /= g1;
            return r;
        };
        bool independent = true;
        for (int c = 0; c < k && independent; ++c) {
            int pivot = c;
            while (pivot < 5 && m[pivot][c].num == 0) ++pivot;
            if (pivot == 5) {
                independent = false;
                break;
            }
            std::swap(m[pivot], m[c]);
            for (int r = 0; r < 5; ++r) {
                if (r == c || m[r][c].num == 0) continue;
                const Rational f{m[r][c].num * m[c][c].den, m[r][c].den * m[c][c].num};
                for (int j = c; j <= k; ++j) m[r][j] = sub(m[r][j], f, m[c][j]);
            }
        }
        if (!independent) continue;
        bool feasible = true;
        for (int r = k; r < 5; ++r) feasible = feasible && m[r][k].num == 0;
        for (int c = 0; c < k && feasible; ++c) {
            // x_c = m[c][k] / m[c][c] must be >= 0.
            const auto sign = [](OracleInt v) { return v < 0 ? -1 : (v > 0 ? 1 : 0); };
            feasible = sign(m[c][k].num) * sign(m[c][k].den) * sign(m[c][c].num) * sign(m[c][c].den) >= 0;
        }
        if (feasible) return true;
    }
    return false;
}

} // namespace bulletgpu
