// SPDX-License-Identifier: Zlib
#pragma once

#include <LinearMath/btScalar.h>

class btSoftBody;
struct btSoftBodyWorldInfo;

namespace bulletgpu::demo {

/// SoftDemo's "Collide" tori (examples/SoftDemo/SoftDemo.cpp, Init_Collide): the fields of the
/// soft_tori generator, SoftDemo's values by default (three linked tori of 300 nodes, 600 faces).
struct SoftToriSpec {
    int count = 3;              ///< Tori, side by side along x.
    btScalar spacing = 3;       ///< Distance between neighbouring tori's centres along x.
    btScalar height = 2;        ///< Height (y) of their centres.
    btScalar scale = 2;         ///< Scale applied to each torus after it is placed.
    btScalar mass = 50;         ///< Total mass of each torus.
    btScalar majorRadius = 2;   ///< Radius of the tube's centre circle.
    btScalar minorRadius = 0.5; ///< Radius of the tube.
    int majorSegments = 30;     ///< Steps around the centre circle.
    int minorSegments = 10;     ///< Points around the tube.
};

/// Torus `index` of `spec` as SoftDemo makes it: bending constraints of distance 2, 2 position
/// iterations, VF_SS collisions, randomized constraints, every other torus turned a quarter
/// turn, placed, scaled and given its mass. The caller adds it to a world and owns it.
btSoftBody* makeSoftTorus(btSoftBodyWorldInfo& info, const SoftToriSpec& spec, int index);

} // namespace bulletgpu::demo
