// SPDX-License-Identifier: Zlib
#include "demos/scene/generator.h"
#include "demos/scene/procedural_meshes.h"

#include <stdexcept>

namespace bulletgpu::demo {

namespace {

btRigidBody* addStaticMesh(GeneratorContext& context, TriMesh mesh, const btVector3& position) {
    btTriangleIndexVertexArray* array = context.content.addMesh(std::move(mesh));
    btCollisionShape* shape = context.content.addShape(std::make_unique<btBvhTriangleMeshShape>(array, true));
    return context.content.addRigidBody(0, btTransform(btQuaternion::getIdentity(), position), shape);
}

} // namespace

void generateLandscape(const JsonReader& params, GeneratorContext& context) {
    const btVector3 position = params.vec3("position", btVector3(0, -25, 0));
    const btScalar side = btScalar(params.positiveNumber("size", 500));
    const btScalar heightScale = btScalar(params.number("heightScale", 1));
    const btScalar friction = btScalar(params.number("friction", 0.9));
    for (TriMesh& tile : landscapeTiles(side, heightScale)) {
        addStaticMesh(context, std::move(tile), position)->setFriction(friction);
    }
}

TriMesh readObjParam(const JsonReader& params, const GeneratorContext& context) {
    const JsonReader file = params.at("file");
    const std::string relative = file.string();
    const std::string path = !relative.empty() && relative[0] == '/' ? relative : context.sceneDirectory + relative;
    TriMesh mesh;
    try {
        mesh = loadObjMesh(path);
    } catch (const std::runtime_error& error) {
        file.fail(error.what());
    }
    const btVector3 scale = params.vec3("scale", btVector3(1, 1, 1));
    for (size_t i = 0; i < mesh.vertices.size(); ++i) mesh.vertices[i] *= scale[int(i % 3)];
    return mesh;
}

void generateMesh(const JsonReader& params, GeneratorContext& context) {
    TriMesh mesh = readObjParam(params, context);
    btRigidBody* body = addStaticMesh(context, std::move(mesh), params.vec3("position", btVector3(0, 0, 0)));
    if (params.has("friction")) body->setFriction(btScalar(params.at("friction").number()));
}

} // namespace bulletgpu::demo
