// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/NarrowContacts.h>

#include "kernels/common/host_device.h"
#include "kernels/narrow/geometry/triangle_intersection.h"

#include <cstdint>

/// The result of the narrow phase and the geometry contact generation starts from, shared by
/// the CPU and CUDA paths.

namespace bulletgpu {

/// Dot product of v and (p - o).
BULLETGPU_HD double dotFrom(const Vec3d& v, const Vec3d& p, const Vec3d& o) {
    return v[0] * (p[0] - o[0]) + v[1] * (p[1] - o[1]) + v[2] * (p[2] - o[2]);
}

/// Cross product of (b - a) and (c - a).
BULLETGPU_HD Vec3d triangleNormal(const Triangle3d& t) {
    const Vec3d& a = t.p[0];
    const double ux = t.p[1][0] - a[0], uy = t.p[1][1] - a[1], uz = t.p[1][2] - a[2];
    const double vx = t.p[2][0] - a[0], vy = t.p[2][1] - a[1], vz = t.p[2][2] - a[2];
    return Vec3d{{uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx}};
}

/// Points where triangle `t` meets the plane through `o` with normal `n`: its corners on the
/// plane and the crossings of its straddling edges (exact sides, interpolated in double).
/// Returns how many were written to `points` (at most 2 when t is not in the plane).
BULLETGPU_HD int planeCrossings(const Triangle3d& t, const PlaneSides& sides, const Vec3d& n, const Vec3d& o,
                                Vec3d* points) {
    int count = 0;
    double d[3];
    for (int c = 0; c < 3; ++c) {
        d[c] = dotFrom(n, t.p[c], o);
        if (sides.s[c] == 0) points[count++] = t.p[c];
    }
    for (int e = 0; e < 3; ++e) {
        const int f = (e + 1) % 3;
        if (sides.s[e] * sides.s[f] >= 0) continue;
        const double denominator = d[e] - d[f];
        double w = denominator != 0 ? d[e] / denominator : 0.5;
        w = w < 0 ? 0 : (w > 1 ? 1 : w);
        for (int k = 0; k < 3; ++k) points[count].v[k] = t.p[e][k] + w * (t.p[f][k] - t.p[e][k]);
        ++count;
    }
    return count;
}

/// Writes p rounded to float.
BULLETGPU_HD void storePoint(const Vec3d& p, float* out) {
    for (int k = 0; k < 3; ++k) out[k] = static_cast<float>(p[k]);
}

/// The intersection segment of two triangles that trianglesIntersect found meeting, written to
/// `segment`; returns the contact flags. For transversal pairs the segment is the overlap, on
/// the line where the planes meet, of each triangle's cut by the other's plane.
BULLETGPU_HD std::uint32_t intersectionSegment(const Triangle3d& t1, const Triangle3d& t2,
                                               const TriangleTestDetail& detail, float segment[2][3]) {
    const bool transversal = detail.axis[0] >= 0 && detail.axis[1] >= 0 && !detail.sides[0].coplanar();
    if (!transversal) {
        Vec3d mean;
        for (int k = 0; k < 3; ++k) {
            mean.v[k] = (t1.p[0][k] + t1.p[1][k] + t1.p[2][k] + t2.p[0][k] + t2.p[1][k] + t2.p[2][k]) / 6.0;
        }
        storePoint(mean, segment[0]);
        storePoint(mean, segment[1]);
        return cContactCoplanar;
    }
    const Vec3d n1 = triangleNormal(t1), n2 = triangleNormal(t2);
    const Vec3d line{{n1[1] * n2[2] - n1[2] * n2[1], n1[2] * n2[0] - n1[0] * n2[2], n1[0] * n2[1] - n1[1] * n2[0]}};
    Vec3d cut1[3], cut2[3];
    const int count1 = planeCrossings(t1, detail.sides[0], n2, t2.p[0], cut1);
    const int count2 = planeCrossings(t2, detail.sides[1], n1, t1.p[0], cut2);
    // The overlap of [min, max] along `line` of both cuts.
    const Vec3d origin{{0, 0, 0}};
    Vec3d start = cut1[0], end = cut1[0];
    double startAt = dotFrom(line, start, origin), endAt = startAt;
    for (int pass = 0; pass < 2; ++pass) {
        const Vec3d* cut = pass == 0 ? cut1 : cut2;
        const int count = pass == 0 ? count1 : count2;
        double lo = dotFrom(line, cut[0], origin), hi = lo;
        int loIndex = 0, hiIndex = 0;
        for (int c = 1; c < count; ++c) {
            const double at = dotFrom(line, cut[c], origin);
            if (at < lo) {
                lo = at;
                loIndex = c;
            }
            if (at > hi) {
                hi = at;
                hiIndex = c;
            }
        }
        if (pass == 0 || lo > startAt) {
            startAt = lo;
            start = cut[loIndex];
        }
        if (pass == 0 || hi < endAt) {
            endAt = hi;
            end = cut[hiIndex];
        }
    }
    if (startAt > endAt) {
        // Rounding emptied a touching overlap: both ends at the middle.
        for (int k = 0; k < 3; ++k) start.v[k] = 0.5 * (start[k] + end[k]);
        end = start;
    }
    storePoint(start, segment[0]);
    storePoint(end, segment[1]);
    return 0;
}

} // namespace bulletgpu
