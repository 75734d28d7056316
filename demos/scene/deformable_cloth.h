// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/scene/generator.h"

class btSoftBody;

namespace bulletgpu::demo {

/// Makes `cloth` (with its margin, bending links and mass set) a cloth of Bullet's deformable
/// world as its DeformableSelfCollision example does: collision hardness 1 with rigid and
/// kinematic bodies, SDF_RD, SDF_RDN, SDF_RDF and VF_DD collisions, self-collision on, link
/// stiffness 4, and a btDeformableMassSpringForce and a btDeformableGravityForce (the world's
/// gravity) that the content gives it in the world. Reads from params, with the example's
/// values as defaults: `friction` (kDF, 0.1), `springStiffness` (4), `elasticStiffness` (2),
/// `dampingStiffness` (0.2) and `selfCollision` (true). Fails on params when the scene's world
/// is not deformable.
void setUpDeformableCloth(const JsonReader& params, GeneratorContext& context, btSoftBody& cloth);

} // namespace bulletgpu::demo
