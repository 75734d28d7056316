// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/narrow/geometry/exact_predicates.h"

#include <cmath>

/// A cheap filter in front of the exact CCD tests (per-element, CPU and CUDA): a vertex that stays
/// on one side of its moving face's plane, farther than a distance D all through the step, never
/// comes within D of the face; likewise two edges whose lines stay farther apart than D.
///
/// Both cases read f(t) = P(t) . (E1(t) x E2(t)) with P, E1, E2 linear in t:
/// - vertex-face: P = p - a, E1 = b - a, E2 = c - a; f / |n| is the vertex's signed distance to
///   the face's plane, n = E1 x E2;
/// - edge-edge: P = b0 - a0, E1 = a1 - a0, E2 = b1 - b0; f / |n| is the signed distance between
///   the two lines.
/// n(t) is quadratic with Bernstein control points n0, n0 + (E1(0) x E2' + E1' x E2(0)) / 2, n1
/// (' the motion over the step), so |n(t)| <= N, the largest control point's length; f is cubic
/// with the Bernstein coefficients of the product of P's (linear) and n's (quadratic), and lies
/// between the smallest and largest of them. The pair is separated when every coefficient
/// exceeds D N (or every one is below -D N) by a rounding allowance: 2^-40 S, where S bounds
/// every computed term (64 times the product of the largest |component| of P, E1 and E2), and
/// 2^-40 D S_n for the rounding of N (S_n bounds every n term). The rounding of each computed
/// term is below 32 unit roundoffs of S, so the allowance has more than 2^7 to spare. An
/// overflow makes S and the allowance infinite (or NaN, which fails every comparison) and a
/// product that underflows can only shrink a coefficient toward zero, so neither can make a pair
/// look separated. Minima and maxima are comparisons, not fmin/fmax (library calls on the host).

namespace bulletgpu {

/// Rounding allowance of the plane filter relative to its bounds (2^-40).
constexpr double cPlaneFilterAllowance = 0x1p-40;

namespace ccdplane {

/// a - b.
BULLETGPU_HD Vec3d sub(const Vec3d& a, const Vec3d& b) { return Vec3d{{a[0] - b[0], a[1] - b[1], a[2] - b[2]}}; }
/// a + s b.
BULLETGPU_HD Vec3d addScaled(const Vec3d& a, double s, const Vec3d& b) {
    return Vec3d{{a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2]}};
}
/// a x b.
BULLETGPU_HD Vec3d cross(const Vec3d& a, const Vec3d& b) {
    return Vec3d{{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}};
}
/// a . b.
BULLETGPU_HD double dot(const Vec3d& a, const Vec3d& b) { return (a[0] * b[0] + a[1] * b[1]) + a[2] * b[2]; }
/// max(a, b) without a library call (a when b is NaN).
BULLETGPU_HD double larger(double a, double b) { return b > a ? b : a; }
/// min(a, b) without a library call (a when b is NaN).
BULLETGPU_HD double smaller(double a, double b) { return b < a ? b : a; }
/// The largest |component|.
BULLETGPU_HD double largest(const Vec3d& a) { return larger(fabs(a[0]), larger(fabs(a[1]), fabs(a[2]))); }

} // namespace ccdplane

/// True when f(t) = P(t) . (E1(t) x E2(t)) stays beyond D |E1(t) x E2(t)| in one sign over
/// [0, 1] (see above): P, E1 and E2 given at t = 0 (`p0`, `e10`, `e20`) and t = 1.
BULLETGPU_HD bool planeSeparated(const Vec3d& p0, const Vec3d& p1, const Vec3d& e10, const Vec3d& e11, const Vec3d& e20,
                                 const Vec3d& e21, double distance) {
    using namespace ccdplane;
    const Vec3d e1v = sub(e11, e10), e2v = sub(e21, e20);
    const Vec3d n0 = cross(e10, e20), n2 = cross(e11, e21);
    const Vec3d middle = addScaled(cross(e10, e2v), 1.0, cross(e1v, e20));
    const Vec3d n1 = addScaled(n0, 0.5, middle);
    // Bernstein coefficients of the cubic f = P n.
    const double k0 = dot(p0, n0);
    const double k1 = (2.0 * dot(p0, n1) + dot(p1, n0)) / 3.0;
    const double k2 = (dot(p0, n2) + 2.0 * dot(p1, n1)) / 3.0;
    const double k3 = dot(p1, n2);
    const double lengthBound = sqrt(larger(dot(n0, n0), larger(dot(n1, n1), dot(n2, n2))));
    const double edges = larger(largest(e10), largest(e11)) * larger(largest(e20), largest(e21)) * 64.0;
    const double bound = larger(largest(p0), largest(p1)) * edges;
    const double threshold =
        distance * lengthBound + cPlaneFilterAllowance * bound + cPlaneFilterAllowance * distance * edges;
    // A NaN coefficient comes from an overflow, which makes the threshold infinite or NaN.
    const double lo = smaller(smaller(k0, k1), smaller(k2, k3)), hi = larger(larger(k0, k1), larger(k2, k3));
    return lo > threshold || hi < -threshold;
}

} // namespace bulletgpu
