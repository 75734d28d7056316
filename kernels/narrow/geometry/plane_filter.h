// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/narrow/geometry/triangle_ops.h"

#include <cstdint>

/// The planes' static filter over blocks of candidate triangle pairs, on the CPU.
///
/// Four out of five candidate pairs that a box test passes are separated by one triangle's
/// plane. Tested pair by pair, the outcome is a branch the processor cannot predict; here both
/// planes of four pairs are tested at once in vector registers (AVX2 where the processor has
/// it, through cpu_clones.h, else SSE2), lane by lane with exactly the operations of
/// certainlySeparated (triangle_intersection.h), and the pairs that neither plane separates
/// are kept for the exact test. Dropping a pair is therefore always right: the static filter
/// only certifies signs that orient3d's exact arithmetic agrees with.

namespace bulletgpu {

/// Keeps, in place and in order, the pairs (triangleA[i] of sourceA, triangleB[i] of sourceB),
/// i < count, that neither triangle's plane certainly separates from the other triangle;
/// returns how many were kept. Both sources must store their corners and plane minors.
int planeFilterKeep(const TriangleSource& sourceA, const TriangleSource& sourceB, std::uint32_t* triangleA,
                    std::uint32_t* triangleB, int count);

} // namespace bulletgpu
