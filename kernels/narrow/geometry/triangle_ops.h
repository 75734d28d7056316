// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/aabb_ops.h"
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

/// An axis-aligned box in float (24 bytes); empty when lo > hi on an axis.
struct FloatBox {
    float lo[3]; ///< Minimum corner.
    float hi[3]; ///< Maximum corner.
};

/// A triangle in double coordinates: what the exact test reads.
struct Triangle3d {
    Vec3d p[3]; ///< Corners.
};

/// A box that contains nothing and overlaps nothing.
BULLETGPU_HD FloatBox emptyBox() {
    return FloatBox{{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
}

/// Inclusive overlap: touching boxes overlap.
BULLETGPU_HD bool boxesOverlap(const FloatBox& a, const FloatBox& b) {
    return intervalsOverlap(a.lo[0], a.hi[0], b.lo[0], b.hi[0]) &&
           intervalsOverlap(a.lo[1], a.hi[1], b.lo[1], b.hi[1]) && intervalsOverlap(a.lo[2], a.hi[2], b.lo[2], b.hi[2]);
}

/// The smallest box containing both (exact: float min and max do not round).
BULLETGPU_HD FloatBox mergeBoxes(const FloatBox& a, const FloatBox& b) {
    FloatBox m;
    for (int k = 0; k < 3; ++k) {
        m.lo[k] = a.lo[k] < b.lo[k] ? a.lo[k] : b.lo[k];
        m.hi[k] = a.hi[k] > b.hi[k] ? a.hi[k] : b.hi[k];
    }
    return m;
}

/// True when `outer` contains `inner` (inclusive).
BULLETGPU_HD bool boxContains(const FloatBox& outer, const FloatBox& inner) {
    for (int k = 0; k < 3; ++k) {
        if (!(outer.lo[k] <= inner.lo[k] && inner.hi[k] <= outer.hi[k])) return false;
    }
    return true;
}

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

/// Where the exact test reads a mesh's triangles: corners computed once per frame in the query's
/// frame, or else the positions moved by the transform (the same doubles either way).
struct TriangleSource {
    const Triangle3d* corners;    ///< Corners of each triangle, or null.
    const float* positions;       ///< x, y, z per vertex (own frame).
    const std::uint32_t* indices; ///< Three vertex indices per triangle.
    const double* transform;      ///< Row-major 3x4 [R | t], or null.
    const PlaneMinors* planes;    ///< Plane minors of each triangle's corners, or null.

    /// Triangle t in the query's frame: the stored corners, or `scratch` filled with them.
    BULLETGPU_HD const Triangle3d& triangle(std::uint32_t t, Triangle3d& scratch) const {
        if (corners != nullptr) return corners[t];
        scratch = loadTriangle(positions, indices, t, transform);
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

/// Spreads the low 10 bits of v to every third bit.
BULLETGPU_HD std::uint32_t spreadBits10(std::uint32_t v) {
    v &= 0x3ffu;
    v = (v | (v << 16)) & 0x030000ffu;
    v = (v | (v << 8)) & 0x0300f00fu;
    v = (v | (v << 4)) & 0x030c30c3u;
    v = (v | (v << 2)) & 0x09249249u;
    return v;
}

/// 30-bit Morton code of a point with coordinates in [0, 1] (clamped).
BULLETGPU_HD std::uint32_t mortonCode30(float x, float y, float z) {
    const float s[3] = {x, y, z};
    std::uint32_t cell[3];
    for (int k = 0; k < 3; ++k) {
        const float scaled = s[k] * 1024.0f;
        cell[k] = scaled >= 1023.0f ? 1023u : (scaled > 0.0f ? static_cast<std::uint32_t>(scaled) : 0u);
    }
    return (spreadBits10(cell[0]) << 2) | (spreadBits10(cell[1]) << 1) | spreadBits10(cell[2]);
}

} // namespace bulletgpu
