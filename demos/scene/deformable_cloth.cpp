// SPDX-License-Identifier: Zlib
#include "demos/scene/deformable_cloth.h"

#include <BulletSoftBody/btDeformableGravityForce.h>
#include <BulletSoftBody/btDeformableMassSpringForce.h>
#include <BulletSoftBody/btSoftBody.h>

namespace bulletgpu::demo {

void setUpDeformableCloth(const JsonReader& params, GeneratorContext& context, btSoftBody& cloth) {
    if (!context.content.deformable())
        params.at("type").fail("deformable cloth in a scene whose world.type is not \"deformable\"");
    cloth.m_cfg.kKHR = 1;
    cloth.m_cfg.kCHR = 1;
    cloth.m_cfg.kDF = btScalar(params.number("friction", 0.1));
    cloth.m_cfg.collisions = btSoftBody::fCollision::SDF_RD | btSoftBody::fCollision::SDF_RDN |
                             btSoftBody::fCollision::SDF_RDF | btSoftBody::fCollision::VF_DD;
    cloth.setSelfCollision(params.boolean("selfCollision", true));
    cloth.setSpringStiffness(btScalar(params.number("springStiffness", 4)));
    const btScalar elastic = btScalar(params.number("elasticStiffness", 2));
    const btScalar damping = btScalar(params.number("dampingStiffness", 0.2));
    context.content.addDeformableForce(&cloth, std::make_unique<btDeformableMassSpringForce>(elastic, damping, true));
    context.content.addDeformableForce(
        &cloth, std::make_unique<btDeformableGravityForce>(context.content.softWorldInfo()->m_gravity));
}

} // namespace bulletgpu::demo
