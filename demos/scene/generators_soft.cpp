// SPDX-License-Identifier: Zlib
#include "demos/scene/generator.h"
#include "demos/scene/procedural_meshes.h"
#include "demos/scene/soft_tori.h"

#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyHelpers.h>

namespace bulletgpu::demo {

namespace {

btTransform at(const btVector3& position) { return btTransform(btQuaternion::getIdentity(), position); }

// A bending material of stiffness kLST with bending constraints over the given distance, as
// SoftDemo adds to its cloths and tori (the material is not drawn).
void addBending(btSoftBody& body, int distance, btScalar stiffness) {
    btSoftBody::Material* material = body.appendMaterial();
    material->m_kLST = stiffness;
    material->m_flags -= btSoftBody::fMaterial::DebugDraw;
    body.generateBendingConstraints(distance, material);
}

btSoftBody* patch(btSoftBodyWorldInfo& info, const btVector3& center, btScalar half, int resolutionX, int resolutionZ,
                  int fixed, bool diagonals) {
    return btSoftBodyHelpers::CreatePatch(info, center + btVector3(-half, 0, -half), center + btVector3(half, 0, -half),
                                          center + btVector3(-half, 0, half), center + btVector3(half, 0, half),
                                          resolutionX, resolutionZ, fixed, diagonals);
}

int readFixed(const JsonReader& params, int fallback) {
    if (!params.has("fixed")) return fallback;
    const int64_t fixed = params.at("fixed").nonNegativeInt();
    if (fixed > 15) params.at("fixed").fail("expected a corner mask from 0 to 15");
    return int(fixed);
}

} // namespace

void generateClothPatch(const JsonReader& params, GeneratorContext& context) {
    btSoftBodyWorldInfo& info = context.softInfo(params);
    const int resolution = params.positiveInt("resolution", 31);
    if (resolution < 2) params.at("resolution").fail("expected at least 2 nodes per side");
    const int fixed = readFixed(params, 15);
    const bool diagonals = params.boolean("diagonals", true);
    btSoftBody* body = nullptr;
    if (params.has("corners")) {
        // Any quadrilateral, corners in CreatePatch's order (c00, c10, c01, c11).
        if (params.has("center") || params.has("halfSize")) params.fail("corners excludes center and halfSize");
        const std::vector<JsonReader> corners = params.at("corners").elements();
        if (corners.size() != 4) params.at("corners").fail("expected 4 corners");
        body = btSoftBodyHelpers::CreatePatch(info, corners[0].vec3(), corners[1].vec3(), corners[2].vec3(),
                                              corners[3].vec3(), resolution, resolution, fixed, diagonals);
    } else {
        body = patch(info, params.vec3("center", btVector3(0, 0, 0)), btScalar(params.positiveNumber("halfSize", 8)),
                     resolution, resolution, fixed, diagonals);
    }
    context.content.addSoftBody(body);
    if (params.has("margin")) body->getCollisionShape()->setMargin(btScalar(params.at("margin").number()));
    if (params.has("bendingDistance")) {
        addBending(*body, params.at("bendingDistance").positiveInt(), btScalar(params.number("bendingStiffness", 0.4)));
    }
    if (params.has("positionIterations")) body->m_cfg.piterations = params.at("positionIterations").positiveInt();
    body->setTotalMass(btScalar(params.positiveNumber("mass", 150)));
}

void generateRigidUpStack(const JsonReader& params, GeneratorContext& context) {
    const int count = params.positiveInt("count", 10);
    const btScalar mass = btScalar(params.positiveNumber("mass", 10));
    const btScalar startY = btScalar(params.number("startY", 2));
    const btScalar stepY = btScalar(params.number("stepY", 6));
    auto compound = std::make_unique<btCompoundShape>();
    compound->addChildShape(btTransform::getIdentity(),
                            context.content.addShape(std::make_unique<btBoxShape>(btVector3(4, 1, 1))));
    compound->addChildShape(btTransform(btQuaternion(SIMD_HALF_PI, 0, 0)),
                            context.content.addShape(std::make_unique<btCylinderShapeX>(btVector3(4, 1, 1))));
    btCollisionShape* shapes[] = {context.content.addShape(std::move(compound)),
                                  context.content.addShape(std::make_unique<btBoxShape>(btVector3(1, 1, 1))),
                                  context.content.addShape(std::make_unique<btSphereShape>(btScalar(1.5)))};
    for (int i = 0; i < count; ++i) {
        context.content.addRigidBody(mass, at(btVector3(0, startY + stepY * btScalar(i), 0)), shapes[i % 3]);
    }
}

void generateRopes(const JsonReader& params, GeneratorContext& context) {
    btSoftBodyWorldInfo& info = context.softInfo(params);
    const int count = params.positiveInt("count", 15);
    const btVector3 from = params.vec3("from", btVector3(-10, 0, 0));
    const btVector3 to = params.vec3("to", btVector3(10, 0, 0));
    const btVector3 step = params.vec3("step", btVector3(0, 0, btScalar(0.25)));
    const int resolution = params.positiveInt("resolution", 16);
    const int fixed = readFixed(params, 3);
    const int iterations = params.positiveInt("positionIterations", 4);
    const btScalar stiffnessLow = btScalar(params.number("stiffnessFirst", 0.1));
    const btScalar stiffnessHigh = btScalar(params.number("stiffnessLast", 1.0));
    const btScalar mass = btScalar(params.positiveNumber("mass", 20));
    const bool hasMargin = params.has("margin");
    const btScalar margin = hasMargin ? btScalar(params.at("margin").number()) : 0;
    for (int i = 0; i < count; ++i) {
        const btVector3 offset = step * btScalar(i);
        btSoftBody* rope = context.content.addSoftBody(
            btSoftBodyHelpers::CreateRope(info, from + offset, to + offset, resolution, fixed));
        rope->m_cfg.piterations = iterations;
        const btScalar t = count > 1 ? btScalar(i) / btScalar(count - 1) : 0;
        rope->m_materials[0]->m_kLST = stiffnessLow + t * (stiffnessHigh - stiffnessLow);
        if (hasMargin) rope->getCollisionShape()->setMargin(margin);
        rope->setTotalMass(mass);
    }
}

void generateRopeAttach(const JsonReader& params, GeneratorContext& context) {
    btSoftBodyWorldInfo& info = context.softInfo(params);
    const btVector3 boxPosition = params.vec3("boxPosition", btVector3(12, 8, 0));
    const btVector3 boxHalfExtents = params.vec3("boxHalfExtents", btVector3(2, 6, 2));
    const btScalar boxMass = btScalar(params.positiveNumber("boxMass", 50));
    const btScalar ropeLength = btScalar(params.positiveNumber("ropeLength", 10));
    const int resolution = params.positiveInt("resolution", 8);
    const btScalar ropeMass = btScalar(params.positiveNumber("ropeMass", 50));
    btCollisionShape* box = context.content.addShape(std::make_unique<btBoxShape>(boxHalfExtents));
    btRigidBody* body = context.content.addRigidBody(boxMass, at(boxPosition), box);
    for (const btScalar z : {btScalar(-1), btScalar(1)}) {
        const btVector3 start(0, boxPosition.y(), z);
        btSoftBody* rope = context.content.addSoftBody(
            btSoftBodyHelpers::CreateRope(info, start, start + btVector3(ropeLength, 0, 0), resolution, 1));
        rope->setTotalMass(ropeMass);
        rope->appendAnchor(rope->m_nodes.size() - 1, body);
    }
}

void generateClothAttach(const JsonReader& params, GeneratorContext& context) {
    btSoftBodyWorldInfo& info = context.softInfo(params);
    const btScalar half = btScalar(params.positiveNumber("halfSize", 4));
    const btScalar height = btScalar(params.number("height", 6));
    const int resolution = params.positiveInt("resolution", 9);
    if (resolution < 2) params.at("resolution").fail("expected at least 2 nodes per side");
    const btScalar boxMass = btScalar(params.positiveNumber("boxMass", 20));
    btSoftBody* cloth =
        context.content.addSoftBody(patch(info, btVector3(0, height, 0), half, resolution, resolution, 4 + 8, true));
    btCollisionShape* box = context.content.addShape(std::make_unique<btBoxShape>(btVector3(half, 1, 3)));
    btRigidBody* body = context.content.addRigidBody(boxMass, at(btVector3(0, height, -(half + btScalar(3.5)))), box);
    cloth->appendAnchor(0, body);
    cloth->appendAnchor(resolution - 1, body);
}

btSoftBody* makeSoftTorus(btSoftBodyWorldInfo& info, const SoftToriSpec& spec, int index) {
    const TriMesh torus = torusMesh(spec.majorRadius, spec.minorRadius, spec.majorSegments, spec.minorSegments);
    btSoftBody* body =
        btSoftBodyHelpers::CreateFromTriMesh(info, torus.vertices.data(), torus.indices.data(), torus.triangleCount());
    addBending(*body, 2, 1);
    body->m_cfg.piterations = 2;
    body->m_cfg.collisions |= btSoftBody::fCollision::VF_SS;
    body->randomizeConstraints();
    btMatrix3x3 rotation;
    rotation.setEulerZYX(SIMD_HALF_PI * btScalar(1 - (index & 1)), SIMD_HALF_PI * btScalar(index & 1), 0);
    body->transform(btTransform(rotation, btVector3(spec.spacing * btScalar(index), spec.height, 0)));
    body->scale(btVector3(spec.scale, spec.scale, spec.scale));
    body->setTotalMass(spec.mass, true);
    return body;
}

void generateSoftTori(const JsonReader& params, GeneratorContext& context) {
    btSoftBodyWorldInfo& info = context.softInfo(params);
    SoftToriSpec spec;
    spec.count = params.positiveInt("count", spec.count);
    spec.spacing = btScalar(params.number("spacing", spec.spacing));
    spec.height = btScalar(params.number("height", spec.height));
    spec.scale = btScalar(params.positiveNumber("scale", spec.scale));
    spec.mass = btScalar(params.positiveNumber("mass", spec.mass));
    spec.majorRadius = btScalar(params.positiveNumber("majorRadius", spec.majorRadius));
    spec.minorRadius = btScalar(params.positiveNumber("minorRadius", spec.minorRadius));
    spec.majorSegments = params.positiveInt("majorSegments", spec.majorSegments);
    spec.minorSegments = params.positiveInt("minorSegments", spec.minorSegments);
    for (int i = 0; i < spec.count; ++i) context.content.addSoftBody(makeSoftTorus(info, spec, i));
}

void generateSoftMesh(const JsonReader& params, GeneratorContext& context) {
    btSoftBodyWorldInfo& info = context.softInfo(params);
    const TriMesh mesh = readObjParam(params, context);
    btSoftBody* body = context.content.addSoftBody(
        btSoftBodyHelpers::CreateFromTriMesh(info, mesh.vertices.data(), mesh.indices.data(), mesh.triangleCount()));
    if (params.has("bendingDistance")) {
        addBending(*body, params.at("bendingDistance").positiveInt(), btScalar(params.number("bendingStiffness", 1)));
    }
    body->m_cfg.piterations = params.positiveInt("positionIterations", 2);
    if (params.boolean("selfCollision", false)) body->m_cfg.collisions |= btSoftBody::fCollision::VF_SS;
    body->transform(at(params.vec3("position", btVector3(0, 0, 0))));
    body->setTotalMass(btScalar(params.positiveNumber("mass", 1)), params.boolean("massFromFaces", true));
}

} // namespace bulletgpu::demo
