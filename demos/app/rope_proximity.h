// SPDX-License-Identifier: Zlib
#pragma once

#include <LinearMath/btAlignedObjectArray.h>

class btSoftBody;

namespace bulletgpu::demo {

/// The least distance between two nodes i and j > i + 1 of one rope (a soft body without faces),
/// over the ropes among `bodies` (a soft or deformable world's getSoftBodyArray()), as the rope self-collision tests
/// measure it (every pair: quadratic in a rope's nodes); -1 when the world has no rope of at least 3 nodes.
double closestRopeNodes(const btAlignedObjectArray<btSoftBody*>& bodies);

} // namespace bulletgpu::demo
