// SPDX-License-Identifier: Zlib
#pragma once

#include <cstddef>
#include <cstdint>

/// The response to rope contacts on flat buffers (no Bullet type): node pairs of one or several
/// ropes, each node a sphere, pushed apart to the sum of their radii.

namespace bulletgpu {

/// The nodes of all ropes over one step, in one concatenated array.
struct RopeNodes {
    std::uint32_t count = 0;             ///< Nodes.
    const double* start = nullptr;       ///< x, y, z per node at the start of the step.
    double* end = nullptr;               ///< x, y, z per node at the end; corrected in place.
    const double* inverseMass = nullptr; ///< Inverse mass per node (0: pinned, never moved).
    const double* radius = nullptr;      ///< Sphere radius per node (half its rope's thickness).
    const double* friction = nullptr;    ///< Friction coefficient per node (its rope's kDF); null: none.
};

/// Pushes every pair of nodes of `pairs` (two node indices each) that is closer than the sum of
/// their radii at the end to that distance, `iterations` times in order (Gauss-Seidel), each
/// node by its share of the pair's inverse masses. The direction is from the second node to the
/// first at the end, turned around when it points against their direction at the start (they
/// passed through each other during the step), or the start direction when they coincide.
/// With friction (position-based, as Macklin et al. 2014, "Unified Particle Physics for
/// Real-Time Applications", 6.1): the pair's relative move over the step across that direction
/// is then taken away, shared as the push, entirely while it is within mu times the push (the
/// nodes stick), else cut by mu times the push (they slide); mu is the larger coefficient of
/// the two nodes.
/// Returns the largest shortfall (sum of radii minus separation) the first pass found, 0 when
/// every pair was apart.
double projectRopePairs(const RopeNodes& nodes, const std::uint32_t* pairs, std::size_t count, int iterations);

} // namespace bulletgpu
