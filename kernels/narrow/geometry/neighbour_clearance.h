// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/narrow/geometry/candidate_proximity.h"
#include "kernels/narrow/geometry/feature_distance.h"
#include "kernels/narrow/geometry/mesh_features.h"

/// How close the features of two mesh neighbours come (per-element, CPU and CUDA): two triangles
/// that share a corner never test the pair of themselves, only their feature pairs that share
/// no corner (candidate_proximity.h), so the smallest distance over those pairs is what a self
/// contact query at any distance can find between them.

namespace bulletgpu {

/// Every vertex and side of a triangle, as FeatureOwnership bits.
constexpr FeatureOwnership cEveryFeature = 0x3f;

/// The smallest squared distance (feature_distance.h, in double) over the feature pairs of
/// triangles a and b that share no corner, owned or not: each corner of one against the other
/// triangle and each side of one against each side of the other, `shared` being their
/// sharedCorners bits. INFINITY when there is no such pair; NaN propagates to the result when a
/// coordinate is NaN (the comparison that uses it then fails).
BULLETGPU_HD double neighbourClearanceSquared(const Triangle3d& a, const Triangle3d& b, unsigned shared) {
    unsigned vertices = 0, edges = 0;
    featureMasks(cEveryFeature, cEveryFeature, shared, vertices, edges);
    double least = INFINITY;
    const auto keep = [&least](double d) { least = d < least || d != d ? d : least; };
    for (; vertices != 0; vertices &= vertices - 1) {
        const int bit = lowestBit(vertices);
        const Triangle3d& face = bit < 3 ? b : a;
        const Vec3d& p = bit < 3 ? a.p[bit] : b.p[bit - 3];
        keep(pointTriangleClosest(p, face.p[0], face.p[1], face.p[2]).distanceSquared);
    }
    for (; edges != 0; edges &= edges - 1) {
        const int bit = lowestBit(edges), i = bit / 3, j = bit % 3;
        keep(segmentsClosest(a.p[i], a.p[i == 2 ? 0 : i + 1], b.p[j], b.p[j == 2 ? 0 : j + 1]).distanceSquared);
    }
    return least;
}

} // namespace bulletgpu
