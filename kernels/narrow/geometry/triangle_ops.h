// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/aabb_ops.h"
#include "kernels/common/float_box.h"
#include "kernels/common/host_device.h"
#include "kernels/narrow/geometry/exact_predicates.h"

#include <cmath>
#include <cstddef>
#include <cstdint>

/// Per-element box and point math of the narrow phase, shared by the CPU and CUDA paths.
///
/// The conservative rule. A triangle's box is computed from the double coordinates that the
/// exact triangle test reads, rounded outward to float (floatBelow / floatAbove), so it contains
/// the triangle exactly; a parent's box is the float union of its children's, so it contains
/// them exactly; overlap is inclusive. Two triangles that meet therefore have overlapping
/// boxes at every level, and no float rounding can hide a pair from the traversal.

namespace bulletgpu {

/// A triangle in double coordinates: what the exact test reads.
struct Triangle3d {
    Vec3d p[3]; ///< Corners.
};

/// The float box of a triangle, rounded outward so it contains the double corners exactly.
BULLETGPU_HD FloatBox triangleBox(const Triangle3d& t) {
    FloatBox box;
    for (int k = 0; k < 3; ++k) {
        double lo = t.p[0][k], hi = t.p[0][k];
        for (int c = 1; c < 3; ++c) {
            lo = t.p[c][k] < lo ? t.p[c][k] : lo;
            hi = t.p[c][k] > hi ? t.p[c][k] : hi;
        }
        box.lo[k] = floatBelow(lo);
        box.hi[k] = floatAbove(hi);
    }
    return box;
}

/// A float point promoted to double (exact).
BULLETGPU_HD Vec3d toVec3d(const float* xyz) { return Vec3d{{xyz[0], xyz[1], xyz[2]}}; }

/// A float point moved by a rigid transform: `m` is a row-major 3x4 matrix [R | t] in double.
/// The evaluation order is fixed, so every caller gets the same double coordinates.
BULLETGPU_HD Vec3d transformPoint(const double* m, const float* xyz) {
    Vec3d out;
    for (int r = 0; r < 3; ++r) {
        out.v[r] = ((m[4 * r] * xyz[0] + m[4 * r + 1] * xyz[1]) + m[4 * r + 2] * xyz[2]) + m[4 * r + 3];
    }
    return out;
}

/// Triangle `t` of a mesh: corners from `positions` (x, y, z floats per vertex) through
/// `indices` (three per triangle), moved by `transform` unless it is null (then exact).
BULLETGPU_HD Triangle3d loadTriangle(const float* positions, const std::uint32_t* indices, std::uint32_t t,
                                     const double* transform) {
    Triangle3d tri;
    for (int c = 0; c < 3; ++c) {
        const float* v = positions + 3 * static_cast<std::size_t>(indices[3 * static_cast<std::size_t>(t) + c]);
        tri.p[c] = transform != nullptr ? transformPoint(transform, v) : toVec3d(v);
    }
    return tri;
}

/// Triangle `t` of a mesh whose vertices are already in double (x, y, z per vertex).
BULLETGPU_HD Triangle3d loadMovedTriangle(const double* moved, const std::uint32_t* indices, std::uint32_t t) {
    Triangle3d tri;
    for (int c = 0; c < 3; ++c) {
        const double* v = moved + 3 * static_cast<std::size_t>(indices[3 * static_cast<std::size_t>(t) + c]);
        tri.p[c] = Vec3d{{v[0], v[1], v[2]}};
    }
    return tri;
}

/// Where the exact test reads a mesh's triangles: corners computed once per frame in the query's
/// frame, the vertices moved once per frame, or else the positions moved by the transform as
/// each triangle is read (the same doubles in all three).
struct TriangleSource {
    const Triangle3d* corners;    ///< Corners of each triangle, or null.
    const float* positions;       ///< x, y, z per vertex (own frame).
    const std::uint32_t* indices; ///< Three vertex indices per triangle.
    const double* transform;      ///< Row-major 3x4 [R | t], or null.
    const PlaneMinors* planes;    ///< Plane minors of each triangle's corners, or null.
    const double* moved;          ///< x, y, z per vertex in the query's frame (transformPoint of each
                                  ///< position), or null.

    /// Triangle t in the query's frame: the stored corners, or `scratch` filled with them.
    BULLETGPU_HD const Triangle3d& triangle(std::uint32_t t, Triangle3d& scratch) const {
        if (corners != nullptr) return corners[t];
        scratch =
            moved != nullptr ? loadMovedTriangle(moved, indices, t) : loadTriangle(positions, indices, t, transform);
        return scratch;
    }
    /// The plane minors of triangle t, or null when the test computes them.
    BULLETGPU_HD const PlaneMinors* plane(std::uint32_t t) const { return planes != nullptr ? planes + t : nullptr; }
};

/// True when two triangles of one mesh share a vertex index (self-collision skips them).
BULLETGPU_HD bool shareVertex(const std::uint32_t* indices, std::uint32_t a, std::uint32_t b) {
    const std::uint32_t* ia = indices + 3 * static_cast<std::size_t>(a);
    const std::uint32_t* ib = indices + 3 * static_cast<std::size_t>(b);
    // No early exit: about half the candidates of a self query are neighbours, unpredictably.
    bool shared = false;
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) shared |= ia[i] == ib[j];
    }
    return shared;
}

} // namespace bulletgpu
