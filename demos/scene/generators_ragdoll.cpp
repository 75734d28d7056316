// SPDX-License-Identifier: Zlib
#include "demos/scene/generator.h"

#include <array>

namespace bulletgpu::demo {

namespace {

enum BodyPart {
    cPelvis,
    cSpine,
    cHead,
    cLeftUpperLeg,
    cLeftLowerLeg,
    cRightUpperLeg,
    cRightLowerLeg,
    cLeftUpperArm,
    cLeftLowerArm,
    cRightUpperArm,
    cRightLowerArm,
    cBodyPartCount
};

// Capsule radius and height, and the body's position and z rotation, for scale 1.
struct PartSpec {
    btScalar radius, height;
    btVector3 position;
    btScalar rollZ;
};

const std::array<PartSpec, cBodyPartCount>& partSpecs() {
    static const std::array<PartSpec, cBodyPartCount> specs{{
        {btScalar(0.15), btScalar(0.20), btVector3(0, 1, 0), 0},
        {btScalar(0.15), btScalar(0.28), btVector3(0, btScalar(1.2), 0), 0},
        {btScalar(0.10), btScalar(0.05), btVector3(0, btScalar(1.6), 0), 0},
        {btScalar(0.07), btScalar(0.45), btVector3(btScalar(-0.18), btScalar(0.65), 0), 0},
        {btScalar(0.05), btScalar(0.37), btVector3(btScalar(-0.18), btScalar(0.2), 0), 0},
        {btScalar(0.07), btScalar(0.45), btVector3(btScalar(0.18), btScalar(0.65), 0), 0},
        {btScalar(0.05), btScalar(0.37), btVector3(btScalar(0.18), btScalar(0.2), 0), 0},
        {btScalar(0.05), btScalar(0.33), btVector3(btScalar(-0.35), btScalar(1.45), 0), SIMD_HALF_PI},
        {btScalar(0.04), btScalar(0.25), btVector3(btScalar(-0.7), btScalar(1.45), 0), SIMD_HALF_PI},
        {btScalar(0.05), btScalar(0.33), btVector3(btScalar(0.35), btScalar(1.45), 0), -SIMD_HALF_PI},
        {btScalar(0.04), btScalar(0.25), btVector3(btScalar(0.7), btScalar(1.45), 0), -SIMD_HALF_PI},
    }};
    return specs;
}

// One joint: the two parts, each side's frame (setEulerZYX arguments and origin at scale 1), the kind
// and its limits (hinge: low, high; cone twist: swing span 1, swing span 2, twist span).
struct JointSpec {
    BodyPart a, b;
    btVector3 eulerA, originA, eulerB, originB;
    bool hinge;
    btScalar limit1, limit2, limit3;
};

const std::array<JointSpec, 10>& jointSpecs() {
    const btScalar quarter = SIMD_PI / 4;
    const btScalar half = SIMD_HALF_PI;
    static const std::array<JointSpec, 10> specs{{
        {cPelvis, cSpine, btVector3(0, half, 0), btVector3(0, btScalar(0.15), 0), btVector3(0, half, 0),
         btVector3(0, btScalar(-0.15), 0), true, -quarter, half, 0},
        {cSpine, cHead, btVector3(0, 0, half), btVector3(0, btScalar(0.30), 0), btVector3(0, 0, half),
         btVector3(0, btScalar(-0.14), 0), false, quarter, quarter, half},
        {cPelvis, cLeftUpperLeg, btVector3(0, 0, -quarter * 5), btVector3(btScalar(-0.18), btScalar(-0.10), 0),
         btVector3(0, 0, -quarter * 5), btVector3(0, btScalar(0.225), 0), false, quarter, quarter, 0},
        {cLeftUpperLeg, cLeftLowerLeg, btVector3(0, half, 0), btVector3(0, btScalar(-0.225), 0), btVector3(0, half, 0),
         btVector3(0, btScalar(0.185), 0), true, 0, half, 0},
        {cPelvis, cRightUpperLeg, btVector3(0, 0, quarter), btVector3(btScalar(0.18), btScalar(-0.10), 0),
         btVector3(0, 0, quarter), btVector3(0, btScalar(0.225), 0), false, quarter, quarter, 0},
        {cRightUpperLeg, cRightLowerLeg, btVector3(0, half, 0), btVector3(0, btScalar(-0.225), 0),
         btVector3(0, half, 0), btVector3(0, btScalar(0.185), 0), true, 0, half, 0},
        {cSpine, cLeftUpperArm, btVector3(0, 0, SIMD_PI), btVector3(btScalar(-0.2), btScalar(0.15), 0),
         btVector3(0, 0, half), btVector3(0, btScalar(-0.18), 0), false, half, half, 0},
        {cLeftUpperArm, cLeftLowerArm, btVector3(0, half, 0), btVector3(0, btScalar(0.18), 0), btVector3(0, half, 0),
         btVector3(0, btScalar(-0.14), 0), true, -half, 0, 0},
        {cSpine, cRightUpperArm, btVector3(0, 0, 0), btVector3(btScalar(0.2), btScalar(0.15), 0), btVector3(0, 0, half),
         btVector3(0, btScalar(-0.18), 0), false, half, half, 0},
        {cRightUpperArm, cRightLowerArm, btVector3(0, half, 0), btVector3(0, btScalar(0.18), 0), btVector3(0, half, 0),
         btVector3(0, btScalar(-0.14), 0), true, -half, 0, 0},
    }};
    return specs;
}

btTransform frame(const btVector3& eulerZYX, const btVector3& origin) {
    btTransform transform = btTransform::getIdentity();
    transform.getBasis().setEulerZYX(eulerZYX.x(), eulerZYX.y(), eulerZYX.z());
    transform.setOrigin(origin);
    return transform;
}

void addRagdoll(GeneratorContext& context, const std::array<btCollisionShape*, cBodyPartCount>& shapes,
                const btVector3& offset, btScalar scale) {
    std::array<btRigidBody*, cBodyPartCount> bodies{};
    for (int part = 0; part < cBodyPartCount; ++part) {
        const PartSpec& spec = partSpecs()[size_t(part)];
        const btTransform local = frame(btVector3(0, 0, spec.rollZ), scale * spec.position);
        btRigidBody* body = context.content.addRigidBody(1, btTransform(btQuaternion::getIdentity(), offset) * local,
                                                         shapes[size_t(part)]);
        body->setDamping(btScalar(0.05), btScalar(0.85));
        body->setDeactivationTime(btScalar(0.8));
        body->setSleepingThresholds(btScalar(1.6), btScalar(2.5));
        bodies[size_t(part)] = body;
    }
    for (const JointSpec& joint : jointSpecs()) {
        const btTransform localA = frame(joint.eulerA, scale * joint.originA);
        const btTransform localB = frame(joint.eulerB, scale * joint.originB);
        btRigidBody& a = *bodies[joint.a];
        btRigidBody& b = *bodies[joint.b];
        if (joint.hinge) {
            auto hinge = std::make_unique<btHingeConstraint>(a, b, localA, localB);
            hinge->setLimit(joint.limit1, joint.limit2);
            context.content.addConstraint(std::move(hinge), true);
        } else {
            auto cone = std::make_unique<btConeTwistConstraint>(a, b, localA, localB);
            cone->setLimit(joint.limit1, joint.limit2, joint.limit3);
            context.content.addConstraint(std::move(cone), true);
        }
    }
}

} // namespace

void generateRagdolls(const JsonReader& params, GeneratorContext& context) {
    int rowSize = params.positiveInt("rows", 16);
    const btScalar scale = btScalar(params.positiveNumber("scale", 3.5));
    const btScalar xSpacing = btScalar(params.number("xSpacing", 6));
    const btScalar rowRise = btScalar(params.number("rowRise", 7));
    const btScalar rowShiftZ = btScalar(params.number("rowShiftZ", -2));
    btVector3 pos = params.vec3("start", btVector3(0, 1, 0));
    std::array<btCollisionShape*, cBodyPartCount> shapes{};
    for (int part = 0; part < cBodyPartCount; ++part) {
        const PartSpec& spec = partSpecs()[size_t(part)];
        shapes[size_t(part)] =
            context.content.addShape(std::make_unique<btCapsuleShape>(spec.radius * scale, spec.height * scale));
    }
    while (rowSize > 0) {
        const btScalar offset = -btScalar(rowSize) * xSpacing * btScalar(0.5);
        for (int i = 0; i < rowSize; ++i) {
            pos[0] = offset + btScalar(i) * xSpacing;
            addRagdoll(context, shapes, pos, scale);
        }
        pos[1] += rowRise;
        pos[2] += rowShiftZ;
        --rowSize;
    }
}

} // namespace bulletgpu::demo
