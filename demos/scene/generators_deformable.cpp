// SPDX-License-Identifier: Zlib
// Cloths of Bullet's deformable world (btDeformableMultiBodyDynamicsWorld).
#include "demos/scene/deformable_cloth.h"
#include "demos/scene/generator.h"

#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyHelpers.h>

namespace bulletgpu::demo {

void generateDeformableCloth(const JsonReader& params, GeneratorContext& context) {
    btSoftBodyWorldInfo& info = context.softInfo(params);
    const std::vector<JsonReader> corners = params.at("corners").elements();
    if (corners.size() != 4) params.at("corners").fail("expected 4 corners");
    int resolution[2] = {15, 30};
    if (params.has("resolution")) {
        const std::vector<JsonReader> counts = params.at("resolution").elements();
        if (counts.size() != 2) params.at("resolution").fail("expected 2 node counts");
        for (int k = 0; k < 2; ++k) {
            resolution[k] = counts[k].positiveInt();
            if (resolution[k] < 2) counts[k].fail("expected at least 2 nodes");
        }
    }
    const int64_t fixed = params.has("fixed") ? params.at("fixed").nonNegativeInt() : 0;
    if (fixed > 15) params.at("fixed").fail("expected a corner mask from 0 to 15");
    btSoftBody* cloth = context.content.addSoftBody(
        btSoftBodyHelpers::CreatePatch(info, corners[0].vec3(), corners[1].vec3(), corners[2].vec3(), corners[3].vec3(),
                                       resolution[0], resolution[1], int(fixed), params.boolean("diagonals", true)));
    cloth->getCollisionShape()->setMargin(btScalar(params.number("margin", 0.02)));
    cloth->generateBendingConstraints(params.positiveInt("bendingDistance", 2));
    cloth->setTotalMass(btScalar(params.positiveNumber("mass", 0.5)));
    setUpDeformableCloth(params, context, *cloth);
}

} // namespace bulletgpu::demo
