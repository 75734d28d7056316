// SPDX-License-Identifier: Zlib
#include "demos/scene/generator.h"

namespace bulletgpu::demo {

void generateGroundBox(const JsonReader& params, GeneratorContext& context) {
    auto box = std::make_unique<btBoxShape>(params.at("halfExtents").vec3());
    if (params.has("margin")) box->setMargin(btScalar(params.at("margin").number()));
    btCollisionShape* shape = context.content.addShape(std::move(box));
    const btTransform transform(btQuaternion::getIdentity(), params.at("position").vec3());
    const std::string kind = params.string("kind", "static");
    btCollisionObject* object = nullptr;
    if (kind == "collision_object") {
        object = context.content.addCollisionObject(transform, shape);
    } else if (kind == "static" || kind == "kinematic") {
        btRigidBody* body = context.content.addRigidBody(0, transform, shape);
        if (kind == "kinematic") {
            body->setCollisionFlags(body->getCollisionFlags() | btCollisionObject::CF_KINEMATIC_OBJECT);
            body->forceActivationState(DISABLE_DEACTIVATION);
        }
        object = body;
    } else {
        params.at("kind").fail("expected \"static\", \"kinematic\" or \"collision_object\", got \"" + kind + "\"");
    }
    if (params.has("friction")) object->setFriction(btScalar(params.at("friction").number()));
}

void generateGroundPlane(const JsonReader& params, GeneratorContext& context) {
    const btVector3 normal = params.vec3("normal", btVector3(0, 1, 0));
    if (normal.length2() < SIMD_EPSILON) params.at("normal").fail("expected a non-zero normal");
    auto plane = std::make_unique<btStaticPlaneShape>(normal.normalized(), btScalar(params.number("constant", 0)));
    if (params.has("margin")) plane->setMargin(btScalar(params.at("margin").number()));
    btCollisionShape* shape = context.content.addShape(std::move(plane));
    btRigidBody* body = context.content.addRigidBody(0, btTransform::getIdentity(), shape, false);
    if (params.has("friction")) body->setFriction(btScalar(params.at("friction").number()));
}

} // namespace bulletgpu::demo
