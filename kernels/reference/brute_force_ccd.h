// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/narrow/geometry/exact_predicates.h"

#include <cmath>

/// The oracle of continuous collision detection for small scenes: the features' distance at
/// evenly spaced times, with closest points found in double by a method that shares no code with
/// kernels/narrow/ccd (point-triangle: plane projection, else the nearest edge; segment-segment:
/// the interior critical point, else the nearest endpoint-to-segment distance). It misses contacts
/// shorter than a step and carries the double rounding of the distance, so a test compares the
/// CCD against it only where the sampled distance is below eta by a margin.

namespace bulletgpu {

/// What the sampling found for one pair.
struct SampledCcd {
    bool hit = false;         ///< A sample came closer than the threshold.
    double firstTime = 1.0;   ///< Time of the first such sample (when `hit`).
    double minDistance = 0.0; ///< Smallest sampled distance.
};

namespace sampling {

/// a - b.
inline Vec3d sub(const Vec3d& a, const Vec3d& b) { return Vec3d{{a[0] - b[0], a[1] - b[1], a[2] - b[2]}}; }
/// a + s b.
inline Vec3d addScaled(const Vec3d& a, double s, const Vec3d& b) {
    return Vec3d{{a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2]}};
}
/// a . b.
inline double dot(const Vec3d& a, const Vec3d& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
/// a x b.
inline Vec3d cross(const Vec3d& a, const Vec3d& b) {
    return Vec3d{{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}};
}
/// |a|.
inline double length(const Vec3d& a) { return std::sqrt(dot(a, a)); }

/// Distance from p to the segment ab (a point when a == b).
inline double pointSegmentDistance(const Vec3d& p, const Vec3d& a, const Vec3d& b) {
    const Vec3d ab = sub(b, a);
    const double lengthSquared = dot(ab, ab);
    double s = lengthSquared > 0.0 ? dot(sub(p, a), ab) / lengthSquared : 0.0;
    s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
    return length(sub(p, addScaled(a, s, ab)));
}

/// Distance from p to the triangle abc: to its plane when p projects inside, else to the
/// nearest edge (also for collapsed triangles).
inline double pointTriangleDistance(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    const Vec3d n = cross(sub(b, a), sub(c, a));
    const double nn = dot(n, n);
    if (nn > 0.0) {
        // Inside when p's projection lies on the inner side of all three edges.
        const Vec3d ap = sub(p, a), bp = sub(p, b), cp = sub(p, c);
        const bool inside = dot(cross(sub(b, a), ap), n) >= 0.0 && dot(cross(sub(c, b), bp), n) >= 0.0 &&
                            dot(cross(sub(a, c), cp), n) >= 0.0;
        if (inside) return std::fabs(dot(ap, n)) / std::sqrt(nn);
    }
    const double ab = pointSegmentDistance(p, a, b), bc = pointSegmentDistance(p, b, c),
                 ca = pointSegmentDistance(p, c, a);
    return std::fmin(ab, std::fmin(bc, ca));
}

/// Distance between the segments a0a1 and b0b1: the minimum of a convex quadratic over [0, 1]^2
/// lies at its interior critical point or on the square's boundary, where it is an
/// endpoint-to-segment distance.
inline double segmentSegmentDistance(const Vec3d& a0, const Vec3d& a1, const Vec3d& b0, const Vec3d& b1) {
    double best = std::fmin(std::fmin(pointSegmentDistance(a0, b0, b1), pointSegmentDistance(a1, b0, b1)),
                            std::fmin(pointSegmentDistance(b0, a0, a1), pointSegmentDistance(b1, a0, a1)));
    const Vec3d d1 = sub(a1, a0), d2 = sub(b1, b0), r = sub(a0, b0);
    const double a = dot(d1, d1), b = dot(d1, d2), e = dot(d2, d2), c = dot(d1, r), f = dot(d2, r);
    const double denominator = a * e - b * b;
    if (denominator > 1e-12 * a * e) {
        const double s = (b * f - c * e) / denominator, t = (a * f - b * c) / denominator;
        if (s >= 0.0 && s <= 1.0 && t >= 0.0 && t <= 1.0) {
            best = std::fmin(best, length(sub(addScaled(a0, s, d1), addScaled(b0, t, d2))));
        }
    }
    return best;
}

/// Sampled distance of 4 points moving linearly from x0 to x1 at `steps` + 1 times;
/// `distance(p)` measures the 4 points at one time.
template <class Distance>
SampledCcd sample(const Vec3d x0[4], const Vec3d x1[4], double threshold, int steps, const Distance& distance) {
    SampledCcd result;
    result.minDistance = HUGE_VAL;
    for (int i = 0; i <= steps; ++i) {
        const double t = static_cast<double>(i) / steps;
        Vec3d p[4];
        for (int j = 0; j < 4; ++j) p[j] = addScaled(x0[j], t, sub(x1[j], x0[j]));
        const double d = distance(p);
        if (d < threshold && !result.hit) {
            result.hit = true;
            result.firstTime = t;
        }
        result.minDistance = std::fmin(result.minDistance, d);
    }
    return result;
}

} // namespace sampling

/// Vertex-face pair sampled at `steps` + 1 times (x0, x1: vertex, then face corners, at t = 0
/// and t = 1); a hit is a sample closer than `threshold`.
inline SampledCcd sampleVertexFace(const Vec3d x0[4], const Vec3d x1[4], double threshold, int steps) {
    return sampling::sample(x0, x1, threshold, steps,
                            [](const Vec3d* p) { return sampling::pointTriangleDistance(p[0], p[1], p[2], p[3]); });
}

/// Edge-edge pair sampled at `steps` + 1 times (x0, x1: a0, a1, b0, b1 at t = 0 and t = 1); a
/// hit is a sample closer than `threshold`.
inline SampledCcd sampleEdgeEdge(const Vec3d x0[4], const Vec3d x1[4], double threshold, int steps) {
    return sampling::sample(x0, x1, threshold, steps,
                            [](const Vec3d* p) { return sampling::segmentSegmentDistance(p[0], p[1], p[2], p[3]); });
}

} // namespace bulletgpu
