// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/narrow/geometry/exact_predicates.h"

#include <cmath>
#include <cstdint>
#include <cstring>

/// Continuous collision detection of one vertex-face or edge-edge pair (issue 29), shared by the
/// CPU and CUDA paths. Every point moves linearly from its position at t = 0 to its position at
/// t = 1; a pair is reported when its features come within `eta` of each other at some time in
/// [0, 1], with a time of impact that is never later than the earliest such time.
///
/// The method is inclusion-based, in the manner of Tight-Inclusion (Wang et al. 2021). The gap
/// between the features is a function F(t, u, v) over the box [0, 1]^3:
/// - vertex-face: F = p(t) - (a(t) + u (b(t) - a(t)) + v (c(t) - a(t))), with u + v <= 1;
/// - edge-edge:   F = (a0(t) + u (a1(t) - a0(t))) - (b0(t) + v (b1(t) - b0(t))).
/// The features come within eta when |F| <= eta somewhere, which needs |F_k| <= eta on every
/// axis k and |n . F| <= sqrt(3) eta along the 4 diagonals n = (+-1, +-1, +-1). Each of these is
/// multilinear in (t, u, v), so its range over a box is spanned by its values at the box's 8
/// corners. Those are evaluated in double and widened by a rigorous bound on the rounding error;
/// a box is discarded only when, on some axis or diagonal, the widened range misses the bound. Surviving boxes are
/// subdivided in the order of their lower time bound, and the first one small enough (see CcdOptions) gives the time of
/// impact: its lower time bound.
///
/// The rounding bound. Every corner value is computed by the same expression tree (see
/// vertexFaceCcd and edgeEdgeCcd), of depth at most 8, in which every product has an exact
/// operand (t, u or v). With unit roundoff r = 2^-53, the computed value then equals the sum of
/// the expression's monomials each multiplied by at most 8 factors (1 + delta), |delta| <= r, so
/// its error is at most gamma_8 = 8r / (1 - 8r) times the same expression evaluated on absolute
/// values with every subtraction turned into an addition (Higham, Accuracy and Stability of
/// Numerical Algorithms, lemma 3.1). With M_k the largest |coordinate| on axis k among the 8
/// input points and t, u, v in [0, 1], that absolute expression is at most 18 M_k for both
/// queries, so err_k = 18 gamma_8 M_k plus 64 * 2^-1074 for products that land in the subnormal
/// range (6 products, each off by at most 2^-1075, scaled by at most 3 (1 + gamma_8) later on).
/// err_k is computed with each operation rounded up (nextafter), and the rejection compares a
/// computed corner value against the rounded-up threshold eta + err_k. Inputs whose coordinates
/// exceed 2^1000 in magnitude, or are not finite, lie outside the bound's domain (intermediate
/// values could overflow): such a query is reported as a hit at t = 0 with `undecided` set.
/// Degenerate inputs (zero motion, collapsed faces or edges, parallel edges, coplanar motion)
/// need no special case: the enclosure is rigorous for them too.
///
/// No false negatives: a box holding a point within eta is never discarded, so the pending boxes
/// always cover the earliest such point; the first box reported starts no later than every
/// pending box, so the reported time of impact is at most the earliest time at which the
/// features come within eta. False positives are queries whose features come within eta on
/// every axis and within sqrt(3) eta along the diagonals (so at most sqrt(3) eta apart), plus the
/// tolerances of CcdOptions, but not within eta.
///
/// Code must be compiled without floating-point contraction (-ffp-contract=off, --fmad=false):
/// a fused multiply-add would change the expression tree that the bound is derived for.

namespace bulletgpu {

/// The stopping rules of the subdivision.
struct CcdOptions {
    /// Absolute tolerance on the gap, in coordinate units: a surviving box is reported once its
    /// computed corner values lie within eta + tolerance on every axis (then every point of the
    /// box is within eta + tolerance + err_k of contact on each axis k).
    double tolerance = 1e-6;
    /// Tolerance on the time: a surviving box is also reported once its width in t is at most
    /// max(timeTolerance, 2^-40), or when the parameter whose change spreads its corner values
    /// most is u or v and its width is 2^-40 (the search always ends).
    double timeTolerance = 1e-6;
    /// Boxes examined before the query gives up; it then reports a hit at the earliest lower
    /// time bound of the boxes still pending, with `undecided` set (conservative).
    std::uint32_t maxIterations = 1000000;
};

/// The outcome of one query.
struct CcdResult {
    /// True when the features may come within eta during [0, 1] (certainly, when they do).
    bool hit = false;
    /// A lower bound on the earliest time in [0, 1] at which the features come within eta when
    /// `hit`; HUGE_VAL otherwise.
    double toi = HUGE_VAL;
    /// Boxes examined.
    std::uint32_t iterations = 0;
    /// Most boxes pending at once.
    std::uint32_t peakPending = 0;
    /// True when the hit was reported without deciding: the iteration limit or the capacity of
    /// the box queue was reached, or the input lies outside the supported
    /// range (a coordinate not finite or above 2^1000).
    bool undecided = false;
};

namespace ccd {

/// Unit roundoff of double (2^-53).
constexpr double cUnitRoundoff = 1.1102230246251565e-16;
/// 18 gamma_8 = 18 * 8r / (1 - 8r), enlarged by 2^-40 relative to cover its own rounding.
constexpr double cErrorFactor = 18.0 * (8.0 * cUnitRoundoff / (1.0 - 8.0 * cUnitRoundoff)) * (1.0 + 0x1p-40);
/// The absolute error allowed for products in the subnormal range: 64 * 2^-1074.
constexpr double cUnderflowBound = 64.0 * 0x1p-1074;
/// 19 gamma_2 = 19 * 2r / (1 - 2r), enlarged by 2^-40 relative: the rounding of a diagonal sum.
constexpr double cDiagonalFactor = 19.0 * (2.0 * cUnitRoundoff / (1.0 - 2.0 * cUnitRoundoff)) * (1.0 + 0x1p-40);
/// sqrt(3), rounded up.
constexpr double cSqrt3Up = 1.7320508075688772 * (1.0 + 0x1p-50);
/// The largest |coordinate| inside the error bound's domain.
constexpr double cMaxMagnitude = 0x1p1000;
/// log2(1 / cMinWidth).
constexpr int cFinestLevel = 40;
/// Parameter intervals this wide or narrower are not split: 2^-40.
constexpr double cMinWidth = 1.0 / static_cast<double>(std::uint64_t{1} << cFinestLevel);
/// Boxes pending at once by default (32 bytes each: 32 KiB of stack); beyond this a query
/// reports an undecided hit (see subdivide). A CUDA kernel may pick a smaller queue.
constexpr int cQueueCapacity = 1024;

/// A box of parameters t, u and v. Every split halves an interval of [0, 1] and none of width
/// cMinWidth is split, so each interval is [k, k + 2^w] cMinWidth for integers 0 <= k < 2^40 and
/// 0 <= w <= 40: stored so, in 32 bytes (a queue's boxes move half the bytes of six doubles),
/// with bounds that are exact in double.
struct ParameterBox {
    std::uint64_t start[3];   ///< k of t, u and v: the lower bound in units of cMinWidth.
    std::uint8_t widthLog[3]; ///< w of t, u and v: the width is 2^w units.
    std::int32_t level;       ///< Splits from the whole domain.

    /// The lower bound of parameter d (0: t, 1: u, 2: v).
    BULLETGPU_HD double lo(int d) const { return static_cast<double>(start[d]) * cMinWidth; }
    /// The upper bound of parameter d.
    BULLETGPU_HD double hi(int d) const {
        return static_cast<double>(start[d] + (std::uint64_t{1} << widthLog[d])) * cMinWidth;
    }
    /// The whole domain [0, 1]^3.
    BULLETGPU_HD static ParameterBox whole() {
        return ParameterBox{{0, 0, 0}, {cFinestLevel, cFinestLevel, cFinestLevel}, 0};
    }
    /// The halves of parameter d at its exact midpoint (the interval must be wider than
    /// cMinWidth), one level deeper.
    BULLETGPU_HD void halve(int d, ParameterBox& lower, ParameterBox& upper) const {
        lower = upper = *this;
        lower.widthLog[d] = upper.widthLog[d] = static_cast<std::uint8_t>(widthLog[d] - 1);
        upper.start[d] = start[d] + (std::uint64_t{1} << (widthLog[d] - 1));
        lower.level = upper.level = level + 1;
    }
};

/// True when `a` is examined before `b`: the earlier start first, then the smaller box.
BULLETGPU_HD bool before(const ParameterBox& a, const ParameterBox& b) {
    return a.start[0] < b.start[0] || (a.start[0] == b.start[0] && a.level > b.level);
}

/// A binary min-heap of boxes in the order of `before`, of fixed capacity.
template <int Capacity>
struct BoxQueue {
    ParameterBox boxes[Capacity]; ///< Heap-ordered boxes.
    int size = 0;                 ///< Boxes in the queue.

    /// Adds a box (the caller checks the capacity).
    BULLETGPU_HD void push(const ParameterBox& box) {
        int i = size++;
        while (i > 0 && before(box, boxes[(i - 1) / 2])) {
            boxes[i] = boxes[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        boxes[i] = box;
    }
    /// Removes and returns the first box (the queue must not be empty).
    BULLETGPU_HD ParameterBox pop() {
        const ParameterBox first = boxes[0];
        const ParameterBox last = boxes[--size];
        int i = 0;
        for (;;) {
            int child = 2 * i + 1;
            if (child >= size) break;
            if (child + 1 < size && before(boxes[child + 1], boxes[child])) ++child;
            if (!before(boxes[child], last)) break;
            boxes[i] = boxes[child];
            i = child;
        }
        boxes[i] = last;
        return first;
    }
};

/// The next double above x, as nextafter(x, +infinity): +infinity and NaN stay, -infinity gives
/// the lowest double, a zero the smallest positive subnormal. On the host in integer arithmetic
/// (the library call was 4% of a cloth's step), with the same results.
BULLETGPU_HD double roundUp(double x) {
#if defined(__CUDA_ARCH__)
    return nextafter(x, HUGE_VAL);
#else
    if (!(x < HUGE_VAL)) return x;
    if (x == 0.0) return 0x1p-1074;
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof(bits));
    // Positive doubles grow with their bits, negative ones shrink.
    bits = x > 0.0 ? bits + 1u : bits - 1u;
    std::memcpy(&x, &bits, sizeof(x));
    return x;
#endif
}

/// max(a, b) (a when b is NaN).
BULLETGPU_HD double larger(double a, double b) { return b > a ? b : a; }

/// The rejection thresholds of a query whose 8 points are `points`: eta + err_k on axis k (k < 3),
/// and sqrt(3) eta plus the error of a diagonal sum (k = 3), all rounded up; false when a
/// coordinate is not finite or exceeds cMaxMagnitude.
///
/// A diagonal sum s = (+-F_0 +- F_1) +- F_2 of computed corner values is off the exact n . F,
/// n = (+-1, +-1, +-1), by at most err_0 + err_1 + err_2 (the corner values' error) plus
/// gamma_2 (|F_0| + |F_1| + |F_2|) (its two additions), where each |F_k| is at most
/// 18 M_k (1 + gamma_8) < 19 M_k, plus subnormal rounding (one more cUnderflowBound covers it).
/// A contact within eta has |n . F| <= sqrt(3) eta.
BULLETGPU_HD bool rejectionThresholds(const Vec3d* points, double eta, double threshold[4]) {
    double errorSum = 0.0, magnitudeSum = 0.0;
    for (int k = 0; k < 3; ++k) {
        double magnitude = 0.0;
        for (int i = 0; i < 8; ++i) {
            // NaN fails this comparison too.
            if (!(fabs(points[i][k]) <= cMaxMagnitude)) return false;
            magnitude = larger(magnitude, fabs(points[i][k]));
        }
        const double error = roundUp(roundUp(cErrorFactor * magnitude) + cUnderflowBound);
        threshold[k] = roundUp(eta + error);
        errorSum = roundUp(errorSum + error);
        magnitudeSum = roundUp(magnitudeSum + magnitude);
    }
    const double sumError = roundUp(roundUp(errorSum + roundUp(cDiagonalFactor * magnitudeSum)) + cUnderflowBound);
    threshold[3] = roundUp(roundUp(cSqrt3Up * eta) + sumError);
    return true;
}

/// Subdivides the parameter box, earliest start first; `evaluate(lo, hi, f)` writes F at the
/// corners of the box [lo, hi] (t, u, v), f[(ti << 2) | (ui << 1) | vi][k] for corner
/// (t, u, v) = (lo or hi by ti, ui, vi), axis k. `triangle` discards boxes lying wholly in u + v > 1.
///
/// The pending boxes cover every point that has not been ruled out, the earliest contact
/// included, and they are examined in the order of their lower time bound. So the first box to
/// be reported starts no later than the earliest contact, and the search ends there. When the
/// iteration limit or the queue's capacity is reached, the box in hand starts no later than any
/// pending one, and its start is reported as an undecided hit.
template <int QueueCapacity, class Evaluate>
BULLETGPU_HD void subdivide(const Evaluate& evaluate, const double threshold[4], double eta, bool triangle,
                            const CcdOptions& options, CcdResult& result) {
    // Corner pairs along t, u and v: corner c and c | cAxisBit[d], for the 4 c without that bit.
    constexpr int cAxisBit[3] = {4, 2, 1};
    const double timeWidth = larger(options.timeTolerance, cMinWidth);
    const double reach = eta + options.tolerance;
    BoxQueue<QueueCapacity> queue;
    queue.push(ParameterBox::whole());
    result.hit = false;
    result.toi = HUGE_VAL;
    result.iterations = 0;
    result.undecided = false;
    result.peakPending = 1;
    while (queue.size > 0) {
        const ParameterBox box = queue.pop();
        double lo[3], hi[3];
        for (int d = 0; d < 3; ++d) {
            lo[d] = box.lo(d);
            hi[d] = box.hi(d);
        }
        if (result.iterations == options.maxIterations) {
            result.hit = result.undecided = true;
            result.toi = lo[0];
            return;
        }
        ++result.iterations;
        // Rounding is monotone, so a computed sum above 1 means an exact sum above 1.
        if (triangle && lo[1] + lo[2] > 1.0) continue;

        double f[8][3];
        evaluate(lo, hi, f);
        // The enclosure on each axis: whether it misses [-eta, eta], and whether the computed
        // corners all lie within eta + tolerance.
        bool separated = false, close = true, open[3];
        for (int k = 0; k < 3; ++k) {
            double lo = f[0][k], hi = f[0][k];
            for (int c = 1; c < 8; ++c) {
                lo = f[c][k] < lo ? f[c][k] : lo;
                hi = f[c][k] > hi ? f[c][k] : hi;
            }
            separated |= lo > threshold[k] || hi < -threshold[k];
            open[k] = lo < -reach || hi > reach;
            close &= !open[k];
        }
        // The 4 diagonal directions (+-1, +-1, +-1), up to sign, cut the cube's corners.
        for (int j = 0; j < 4 && !separated; ++j) {
            const double sign0 = j == 3 ? -1.0 : 1.0, sign1 = j == 2 ? -1.0 : 1.0, sign2 = j == 1 ? -1.0 : 1.0;
            double lo = HUGE_VAL, hi = -HUGE_VAL;
            for (int c = 0; c < 8; ++c) {
                const double sum = (sign0 * f[c][0] + sign1 * f[c][1]) + sign2 * f[c][2];
                lo = sum < lo ? sum : lo;
                hi = sum > hi ? sum : hi;
            }
            separated = lo > threshold[3] || hi < -threshold[3];
        }
        if (separated) continue;

        // Split the parameter whose change spreads the corner values most on the axes not yet
        // within eta + tolerance.
        int split = 0;
        double widest = -1.0;
        for (int d = 0; d < 3; ++d) {
            double change = 0.0;
            for (int c = 0; c < 8; ++c) {
                if ((c & cAxisBit[d]) != 0) continue;
                for (int k = 0; k < 3; ++k) {
                    if (open[k]) change = larger(change, fabs(f[c | cAxisBit[d]][k] - f[c][k]));
                }
            }
            if (change > widest) {
                widest = change;
                split = d;
            }
        }
        if (close || !(hi[0] - lo[0] > timeWidth) || !(hi[split] - lo[split] > cMinWidth)) {
            result.hit = true;
            result.toi = lo[0];
            return;
        }
        if (queue.size + 2 > QueueCapacity) {
            result.hit = result.undecided = true;
            result.toi = lo[0];
            return;
        }
        ParameterBox lower, upper;
        box.halve(split, lower, upper);
        queue.push(lower);
        queue.push(upper);
        if (queue.size > static_cast<int>(result.peakPending))
            result.peakPending = static_cast<std::uint32_t>(queue.size);
    }
}

/// A hit at t = 0, reported without deciding (the input lies outside the bound's domain).
BULLETGPU_HD void reportUndecided(CcdResult& result) {
    result.hit = true;
    result.toi = 0.0;
    result.iterations = 0;
    result.peakPending = 0;
    result.undecided = true;
}

/// Runs one query over four points moving linearly from `x0` to `x1`: `corner(at, u, v)` gives
/// the gap on one axis from the four points' coordinates at a corner's time, in the evaluation
/// order its query documents; `triangle` as in subdivide.
template <int QueueCapacity, class Corner>
BULLETGPU_HD void runQuery(const Vec3d x0[4], const Vec3d x1[4], double eta, bool triangle, const CcdOptions& options,
                           CcdResult& result, const Corner& corner) {
    Vec3d points[8];
    for (int i = 0; i < 4; ++i) {
        points[i] = x0[i];
        points[4 + i] = x1[i];
    }
    double threshold[4];
    if (!rejectionThresholds(points, eta, threshold)) {
        reportUndecided(result);
        return;
    }
    // Start and motion of the four points on each axis.
    double start[4][3], motion[4][3];
    for (int i = 0; i < 4; ++i) {
        for (int k = 0; k < 3; ++k) {
            start[i][k] = x0[i][k];
            motion[i][k] = x1[i][k] - x0[i][k];
        }
    }
    const auto evaluate = [&](const double lo[3], const double hi[3], double f[8][3]) {
        for (int ti = 0; ti < 2; ++ti) {
            const double t = ti == 0 ? lo[0] : hi[0];
            for (int k = 0; k < 3; ++k) {
                double at[4];
                for (int i = 0; i < 4; ++i) at[i] = start[i][k] + t * motion[i][k];
                for (int ui = 0; ui < 2; ++ui) {
                    const double u = ui == 0 ? lo[1] : hi[1];
                    for (int vi = 0; vi < 2; ++vi) {
                        const double v = vi == 0 ? lo[2] : hi[2];
                        f[(ti << 2) | (ui << 1) | vi][k] = corner(at, u, v);
                    }
                }
            }
        }
    };
    subdivide<QueueCapacity>(evaluate, threshold, eta, triangle, options, result);
}

} // namespace ccd

/// Vertex-face CCD: `x0` holds the vertex p and the face corners a, b, c at t = 0, `x1` the same
/// at t = 1. Corner values: x(t) = x0 + t (x1 - x0) for p, a, b, c, then
/// F = p(t) - ((a(t) + u (b(t) - a(t))) + v (c(t) - a(t))), in that order. `eta` >= 0.
/// `QueueCapacity` bounds the boxes pending at once.
template <int QueueCapacity = ccd::cQueueCapacity>
BULLETGPU_HD void vertexFaceCcd(const Vec3d x0[4], const Vec3d x1[4], double eta, const CcdOptions& options,
                                CcdResult& result) {
    ccd::runQuery<QueueCapacity>(x0, x1, eta, true, options, result, [](const double at[4], double u, double v) {
        return at[0] - ((at[1] + u * (at[2] - at[1])) + v * (at[3] - at[1]));
    });
}

/// Edge-edge CCD: `x0` holds the edges' endpoints a0, a1, b0, b1 at t = 0, `x1` the same at
/// t = 1. Corner values: x(t) = x0 + t (x1 - x0) for each endpoint, then
/// F = (a0(t) + u (a1(t) - a0(t))) - (b0(t) + v (b1(t) - b0(t))), in that order. `eta` >= 0.
/// `QueueCapacity` bounds the boxes pending at once.
template <int QueueCapacity = ccd::cQueueCapacity>
BULLETGPU_HD void edgeEdgeCcd(const Vec3d x0[4], const Vec3d x1[4], double eta, const CcdOptions& options,
                              CcdResult& result) {
    ccd::runQuery<QueueCapacity>(x0, x1, eta, false, options, result, [](const double at[4], double u, double v) {
        return (at[0] + u * (at[1] - at[0])) - (at[2] + v * (at[3] - at[2]));
    });
}

} // namespace bulletgpu
