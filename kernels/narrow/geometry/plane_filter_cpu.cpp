// SPDX-License-Identifier: Zlib
// planeFilterKeep: four candidate pairs per step in GCC vector registers, compiled twice (for
// x86-64-v3 and the baseline, cpu_clones.h) and chosen when the program loads.
#include "kernels/narrow/geometry/plane_filter.h"

#include "kernels/common/cpu_clones.h"
#include "kernels/narrow/geometry/triangle_intersection.h"

#include <cstdint>

// GCC 12 splits 32-byte vectors in two for the baseline clone and then takes the arrays of
// them below for maybe uninitialized; every element is written before it is read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace bulletgpu {
namespace {

/// Pairs tested together.
constexpr int cLanes = 4;
/// One double per pair.
using Lanes = double __attribute__((vector_size(cLanes * sizeof(double))));
/// One comparison result per pair: all bits set (-1) or none.
using LaneMask = std::int64_t __attribute__((vector_size(cLanes * sizeof(double))));

} // namespace

BULLETGPU_CPU_CLONES
int planeFilterKeep(const TriangleSource& sourceA, const TriangleSource& sourceB, std::uint32_t* triangleA,
                    std::uint32_t* triangleB, int count) {
    const LaneMask signBits = {INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN};
    int kept = 0;
    for (int first = 0; first < count; first += cLanes) {
        std::uint32_t lane[2][cLanes];
        for (int l = 0; l < cLanes; ++l) {
            // Lanes past the end repeat the last pair; their results are not read.
            const int i = first + l < count ? first + l : count - 1;
            lane[0][l] = triangleA[i];
            lane[1][l] = triangleB[i];
        }
        // certainlySeparated of each lane: B's plane against A's corners, then the reverse.
        LaneMask apart = {0, 0, 0, 0};
        for (int side = 0; side < 2; ++side) {
            const TriangleSource& planeSource = side == 0 ? sourceB : sourceA;
            const TriangleSource& cornerSource = side == 0 ? sourceA : sourceB;
            const std::uint32_t* planeOf = lane[1 - side];
            const std::uint32_t* cornersOf = lane[side];
            const Triangle3d* planeCorners = planeSource.corners;
            const PlaneMinors* minors = planeSource.planes;
            const Triangle3d* corners = cornerSource.corners;
            Lanes origin[3], normal[3], permanent[3];
            for (int k = 0; k < 3; ++k) {
                origin[k] = Lanes{planeCorners[planeOf[0]].p[0][k], planeCorners[planeOf[1]].p[0][k],
                                  planeCorners[planeOf[2]].p[0][k], planeCorners[planeOf[3]].p[0][k]};
                normal[k] = Lanes{minors[planeOf[0]].normal[k], minors[planeOf[1]].normal[k],
                                  minors[planeOf[2]].normal[k], minors[planeOf[3]].normal[k]};
                permanent[k] = Lanes{minors[planeOf[0]].permanent[k], minors[planeOf[1]].permanent[k],
                                     minors[planeOf[2]].permanent[k], minors[planeOf[3]].permanent[k]};
            }
            LaneMask above = {0, 0, 0, 0}, below = {0, 0, 0, 0};
            for (int c = 0; c < 3; ++c) {
                Lanes w[3], size[3];
                for (int k = 0; k < 3; ++k) {
                    w[k] = Lanes{corners[cornersOf[0]].p[c][k], corners[cornersOf[1]].p[c][k],
                                 corners[cornersOf[2]].p[c][k], corners[cornersOf[3]].p[c][k]} -
                           origin[k];
                    size[k] = reinterpret_cast<Lanes>(reinterpret_cast<LaneMask>(w[k]) & ~signBits);
                }
                const Lanes det = (normal[0] * w[0] + normal[1] * w[1]) + normal[2] * w[2];
                const Lanes bound = exact::cOrient3dBound *
                                    ((permanent[0] * size[0] + permanent[1] * size[1]) + permanent[2] * size[2]);
                above += det > bound;
                below += -det > bound;
            }
            apart |= (above == -3) | (below == -3);
        }
        for (int l = 0; l < cLanes && first + l < count; ++l) {
            triangleA[kept] = lane[0][l];
            triangleB[kept] = lane[1][l];
            kept += static_cast<int>(apart[l] == 0);
        }
    }
    return kept;
}

} // namespace bulletgpu
