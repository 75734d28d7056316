// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/narrow/geometry/triangle_ops.h"

#include <cmath>

/// Oriented bounding boxes of the narrow phase, shared by the CPU and CUDA paths (gProximity,
/// Lauterbach, Mo, Manocha 2010, section 4: OBBs fitted by covariance and merged on refit).
///
/// The conservative rule, as for the float boxes (triangle_ops.h): every OBB contains what it
/// bounds exactly, and an overlap test may say "overlap" wrongly but never "disjoint". All
/// arithmetic is in double. Axes are orthonormal up to rounding; every extent is computed by
/// projecting the bounded points and then grown by cObbSlack times the magnitude of the numbers
/// involved, which is 2^16 times more than the few roundings of a projection, of the centre and
/// of the axes' departure from orthonormality can move a point; the separating-axis test grows
/// its radii the same way. The slack is far below any distance that matters for culling.

namespace bulletgpu {

/// An oriented box (120 bytes): centre + sum of t_k * axis[k] with |t_k| <= extent[k].
struct NarrowObb {
    double centre[3];  ///< Centre.
    double axis[3][3]; ///< Unit axes, one per row, orthonormal up to rounding.
    double extent[3];  ///< Half widths along the axes.
};

/// Relative slack of every OBB extent and separating-axis test (2^-36).
constexpr double cObbSlack = 1.4551915228366852e-11;

/// a . b.
BULLETGPU_HD double dot3(const double* a, const double* b) { return (a[0] * b[0] + a[1] * b[1]) + a[2] * b[2]; }

/// a x b into out.
BULLETGPU_HD void cross3(const double* a, const double* b, double* out) {
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/// Scales v to unit length; returns false (leaving v) when it is zero or not finite.
BULLETGPU_HD bool normalize3(double* v) {
    const double length = sqrt(dot3(v, v));
    if (!(length > 0) || !(length < INFINITY)) return false;
    for (int k = 0; k < 3; ++k) v[k] /= length;
    return true;
}

/// Sets `axes` to the world axes.
BULLETGPU_HD void identityAxes(double axes[3][3]) {
    for (int r = 0; r < 3; ++r) {
        for (int k = 0; k < 3; ++k) axes[r][k] = r == k ? 1.0 : 0.0;
    }
}

/// Makes `axes` orthonormal (Gram-Schmidt, the third axis from the first two); falls back to
/// the world axes when they are degenerate.
BULLETGPU_HD void orthonormalize(double axes[3][3]) {
    double w[3];
    bool ok = normalize3(axes[0]);
    if (ok) {
        const double d = dot3(axes[0], axes[1]);
        for (int k = 0; k < 3; ++k) axes[1][k] -= d * axes[0][k];
        ok = normalize3(axes[1]);
    }
    if (ok) {
        cross3(axes[0], axes[1], w);
        ok = normalize3(w);
    }
    if (!ok) {
        identityAxes(axes);
        return;
    }
    for (int k = 0; k < 3; ++k) axes[2][k] = w[k];
}

/// The OBB with orthonormal `axes` around `count` points: extents from their projections,
/// grown by the slack of the points' magnitude, or of `scaleFloor` when that is larger (the
/// magnitude of the numbers the points were computed from).
BULLETGPU_HD NarrowObb obbAroundPoints(const double axes[3][3], const Vec3d* points, int count, double scaleFloor = 0) {
    NarrowObb obb;
    double lo[3], hi[3], scale = scaleFloor;
    for (int k = 0; k < 3; ++k) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
        for (int c = 0; c < 3; ++c) obb.axis[k][c] = axes[k][c];
    }
    for (int p = 0; p < count; ++p) {
        for (int k = 0; k < 3; ++k) {
            const double s = dot3(axes[k], points[p].v);
            lo[k] = s < lo[k] ? s : lo[k];
            hi[k] = s > hi[k] ? s : hi[k];
            const double m = fabs(points[p].v[k]);
            scale = m > scale ? m : scale;
        }
    }
    for (int c = 0; c < 3; ++c) obb.centre[c] = 0;
    for (int k = 0; k < 3; ++k) {
        const double mid = 0.5 * (lo[k] + hi[k]);
        for (int c = 0; c < 3; ++c) obb.centre[c] += mid * axes[k][c];
    }
    // |axis . x| <= |x|_1 <= 3 |x|_inf for every point and for the centre.
    const double slack = cObbSlack * 6 * scale;
    for (int k = 0; k < 3; ++k) obb.extent[k] = 0.5 * (hi[k] - lo[k]) + slack;
    return obb;
}

/// The eight corners of an OBB.
BULLETGPU_HD void obbCorners(const NarrowObb& obb, Vec3d* corners) {
    for (int i = 0; i < 8; ++i) {
        for (int c = 0; c < 3; ++c) {
            double x = obb.centre[c];
            for (int k = 0; k < 3; ++k) x += ((i >> k) & 1 ? obb.extent[k] : -obb.extent[k]) * obb.axis[k][c];
            corners[i].v[c] = x;
        }
    }
}

/// Eigenvectors (rows of `axes`) of the symmetric 3x3 matrix `m`, by a fixed number of cyclic
/// Jacobi sweeps (deterministic, the same on both backends).
BULLETGPU_HD void symmetricEigenvectors(double m[3][3], double axes[3][3]) {
    identityAxes(axes);
    for (int sweep = 0; sweep < 6; ++sweep) {
        for (int pair = 0; pair < 3; ++pair) {
            const int p = pair == 2 ? 1 : 0, q = pair == 0 ? 1 : 2;
            const double apq = m[p][q];
            if (fabs(apq) <= 1e-300) continue;
            const double theta = (m[q][q] - m[p][p]) / (2 * apq);
            const double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
            const double c = 1 / sqrt(t * t + 1), s = t * c;
            for (int k = 0; k < 3; ++k) {
                const double mkp = m[k][p], mkq = m[k][q];
                m[k][p] = c * mkp - s * mkq;
                m[k][q] = s * mkp + c * mkq;
            }
            for (int k = 0; k < 3; ++k) {
                const double mpk = m[p][k], mqk = m[q][k];
                m[p][k] = c * mpk - s * mqk;
                m[q][k] = s * mpk + c * mqk;
            }
            for (int k = 0; k < 3; ++k) {
                const double vp = axes[p][k], vq = axes[q][k];
                axes[p][k] = c * vp - s * vq;
                axes[q][k] = s * vp + c * vq;
            }
        }
    }
}

/// The OBB of a triangle: one axis along its longest edge, one along its normal (the world
/// axes when it is degenerate).
BULLETGPU_HD NarrowObb triangleObb(const Triangle3d& t) {
    double axes[3][3], edges[3][3];
    for (int e = 0; e < 3; ++e) {
        for (int k = 0; k < 3; ++k) edges[e][k] = t.p[(e + 1) % 3][k] - t.p[e][k];
    }
    const double l0 = dot3(edges[0], edges[0]), l1 = dot3(edges[1], edges[1]), l2 = dot3(edges[2], edges[2]);
    const int longest = l0 >= l1 ? (l0 >= l2 ? 0 : 2) : (l1 >= l2 ? 1 : 2);
    double normal[3];
    cross3(edges[0], edges[1], normal);
    double inPlane[3];
    cross3(normal, edges[longest], inPlane);
    for (int k = 0; k < 3; ++k) {
        axes[0][k] = edges[longest][k];
        axes[1][k] = inPlane[k];
    }
    orthonormalize(axes);
    return obbAroundPoints(axes, t.p, 3);
}

/// The OBB of two OBBs: axes from the covariance of their sixteen corners, extents from the
/// corners' projections.
BULLETGPU_HD NarrowObb mergeObbs(const NarrowObb& a, const NarrowObb& b) {
    Vec3d corners[16];
    obbCorners(a, corners);
    obbCorners(b, corners + 8);
    double mean[3] = {0, 0, 0};
    for (const Vec3d& p : corners) {
        for (int k = 0; k < 3; ++k) mean[k] += p.v[k];
    }
    for (int k = 0; k < 3; ++k) mean[k] /= 16;
    double covariance[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    for (const Vec3d& p : corners) {
        const double d[3] = {p.v[0] - mean[0], p.v[1] - mean[1], p.v[2] - mean[2]};
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 3; ++c) covariance[r][c] += d[r] * d[c];
        }
    }
    double axes[3][3];
    symmetricEigenvectors(covariance, axes);
    orthonormalize(axes);
    return obbAroundPoints(axes, corners, 16);
}

/// The OBB of two OBBs along given orthonormal `axes` (a refit that keeps a node's orientation):
/// extents from the sixteen corners' projections.
BULLETGPU_HD NarrowObb mergeObbsAlong(const double axes[3][3], const NarrowObb& a, const NarrowObb& b) {
    Vec3d corners[16];
    obbCorners(a, corners);
    obbCorners(b, corners + 8);
    return obbAroundPoints(axes, corners, 16);
}

/// An OBB moved by a rigid transform `m` (row-major 3x4 [R | t] in double): the moved corners
/// are bounded along the moved, re-orthonormalized axes. The slack follows the magnitude of the
/// terms of the transform (transformPoint rounds relative to them, not to its result).
BULLETGPU_HD NarrowObb transformObb(const double* m, const NarrowObb& obb) {
    Vec3d corners[8];
    obbCorners(obb, corners);
    double terms = 0;
    for (Vec3d& p : corners) {
        const Vec3d x = p;
        for (int r = 0; r < 3; ++r) {
            p.v[r] = ((m[4 * r] * x.v[0] + m[4 * r + 1] * x.v[1]) + m[4 * r + 2] * x.v[2]) + m[4 * r + 3];
            const double size =
                ((fabs(m[4 * r] * x.v[0]) + fabs(m[4 * r + 1] * x.v[1])) + fabs(m[4 * r + 2] * x.v[2])) +
                fabs(m[4 * r + 3]);
            terms = size > terms ? size : terms;
        }
    }
    double axes[3][3];
    for (int k = 0; k < 3; ++k) {
        for (int r = 0; r < 3; ++r) {
            axes[k][r] = (m[4 * r] * obb.axis[k][0] + m[4 * r + 1] * obb.axis[k][1]) + m[4 * r + 2] * obb.axis[k][2];
        }
    }
    orthonormalize(axes);
    return obbAroundPoints(axes, corners, 8, terms);
}

/// True unless one of the fifteen separating axes of Gottschalk, Lin and Manocha (1996) proves
/// the boxes disjoint; radii are grown by the slack, so rounding never hides an overlap.
BULLETGPU_HD bool obbsOverlap(const NarrowObb& a, const NarrowObb& b) {
    double r[3][3], absR[3][3], t[3], d[3];
    for (int k = 0; k < 3; ++k) d[k] = b.centre[k] - a.centre[k];
    double scale = 0;
    for (int i = 0; i < 3; ++i) {
        t[i] = dot3(a.axis[i], d);
        for (int j = 0; j < 3; ++j) {
            r[i][j] = dot3(a.axis[i], b.axis[j]);
            // The epsilon keeps the edge-edge axes of nearly parallel edges conservative.
            absR[i][j] = fabs(r[i][j]) + 1e-12;
        }
        // The centres' magnitudes bound the rounding of their difference.
        scale += fabs(t[i]) + a.extent[i] + b.extent[i] + fabs(a.centre[i]) + fabs(b.centre[i]);
    }
    const double slack = cObbSlack * 8 * scale;
    for (int i = 0; i < 3; ++i) {
        const double rb = b.extent[0] * absR[i][0] + b.extent[1] * absR[i][1] + b.extent[2] * absR[i][2];
        if (fabs(t[i]) > a.extent[i] + rb + slack) return false;
    }
    for (int j = 0; j < 3; ++j) {
        const double ra = a.extent[0] * absR[0][j] + a.extent[1] * absR[1][j] + a.extent[2] * absR[2][j];
        if (fabs(t[0] * r[0][j] + t[1] * r[1][j] + t[2] * r[2][j]) > ra + b.extent[j] + slack) return false;
    }
    for (int i = 0; i < 3; ++i) {
        const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
        for (int j = 0; j < 3; ++j) {
            const int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
            const double ra = a.extent[i1] * absR[i2][j] + a.extent[i2] * absR[i1][j];
            const double rb = b.extent[j1] * absR[i][j2] + b.extent[j2] * absR[i][j1];
            if (fabs(t[i2] * r[i1][j] - t[i1] * r[i2][j]) > ra + rb + slack) return false;
        }
    }
    return true;
}

/// True when `obb` contains point p (inclusive), as the validators check it.
BULLETGPU_HD bool obbContainsPoint(const NarrowObb& obb, const Vec3d& p) {
    const double d[3] = {p.v[0] - obb.centre[0], p.v[1] - obb.centre[1], p.v[2] - obb.centre[2]};
    for (int k = 0; k < 3; ++k) {
        if (!(fabs(dot3(obb.axis[k], d)) <= obb.extent[k])) return false;
    }
    return true;
}

/// Overlap of two nodes' volumes: their boxes, and their OBBs when both have one (null: none).
BULLETGPU_HD bool volumesOverlap(const FloatBox& boxA, const NarrowObb* obbA, const FloatBox& boxB,
                                 const NarrowObb* obbB) {
    if (!boxesOverlap(boxA, boxB)) return false;
    return obbA == nullptr || obbB == nullptr || obbsOverlap(*obbA, *obbB);
}

} // namespace bulletgpu
