// SPDX-License-Identifier: Zlib
#include "demos/scene/generator.h"
#include "demos/scene/shape_spec.h"

#include <random>

namespace bulletgpu::demo {

namespace {

// Places one body of the picked variant; applies the generator's optional friction.
btRigidBody* place(GeneratorContext& context, const BodyVariant& variant, const btTransform& transform,
                   const JsonReader& params) {
    btRigidBody* body = context.content.addRigidBody(variant.mass, transform, variant.shape);
    if (params.has("friction")) body->setFriction(btScalar(params.at("friction").number()));
    return body;
}

btTransform at(const btVector3& position) { return btTransform(btQuaternion::getIdentity(), position); }

btBoxShape* boxShape(const JsonReader& params, GeneratorContext& context, const btVector3& fallback) {
    auto box = std::make_unique<btBoxShape>(params.vec3("halfExtents", fallback));
    btBoxShape* shape = box.get();
    context.content.addShape(std::move(box));
    return shape;
}

} // namespace

void generateStackedLayers(const JsonReader& params, GeneratorContext& context) {
    const int size = params.at("size").positiveInt();
    const int layers = params.at("layers").positiveInt();
    const float cubeSize = float(params.at("cubeSize").positiveNumber());
    float spacing = float(params.at("spacing").number());
    const float spacingGrowth = float(params.number("spacingGrowth", 1));
    const btVector3 positionScale = params.vec3("positionScale", btVector3(1, 1, 1));
    const btVector3 positionOffset = params.vec3("positionOffset", btVector3(0, 0, 0));
    btVector3 pos(0, btScalar(params.at("startY").number()), 0);
    BodyVariants variants(params, context);
    float offset = -float(size) * (cubeSize * 2.0f + spacing) * 0.5f;
    int index = 0;
    for (int k = 0; k < layers; ++k) {
        for (int j = 0; j < size; ++j) {
            pos[2] = btScalar(offset + float(j) * (cubeSize * 2.0f + spacing));
            for (int i = 0; i < size; ++i) {
                pos[0] = btScalar(offset + float(i) * (cubeSize * 2.0f + spacing));
                place(context, variants.pick(index++), at(positionOffset + positionScale * pos), params);
            }
        }
        offset -= 0.05f * spacing * float(size - 1);
        spacing *= spacingGrowth;
        pos[1] += btScalar(cubeSize * 2.0f + spacing);
    }
}

void generateGrid(const JsonReader& params, GeneratorContext& context) {
    const int count = context.scaled(params.at("count").positiveInt(), params.boolean("scalable", false));
    const int columns = params.at("columns").positiveInt();
    const int rows = params.at("rows").positiveInt();
    const btVector3 center = params.at("center").vec3();
    const btVector3 spacing = params.at("spacing").vec3();
    const bool randomOrientation = params.boolean("randomOrientation", false);
    BodyVariants variants(params, context);
    std::mt19937 random(context.seed ^ 0x9e3779b9u);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    for (int n = 0; n < count; ++n) {
        const int i = n % columns;
        const int j = (n / columns) % rows;
        const int k = n / (columns * rows);
        const btVector3 position =
            center + btVector3((btScalar(i) - btScalar(columns - 1) / 2) * spacing.x(), btScalar(k) * spacing.y(),
                               (btScalar(j) - btScalar(rows - 1) / 2) * spacing.z());
        btQuaternion rotation = btQuaternion::getIdentity();
        if (randomOrientation) {
            const float x = unit(random);
            const float y = unit(random);
            const float z = unit(random);
            const float w = unit(random);
            rotation = btQuaternion(x, y, z, w);
            if (rotation.length2() < btScalar(1e-6)) rotation = btQuaternion::getIdentity();
            rotation.normalize();
        }
        place(context, variants.pick(n), btTransform(rotation, position), params);
    }
}

void generatePyramid(const JsonReader& params, GeneratorContext& context) {
    const btVector3 origin = params.at("position").vec3();
    int stackSize = params.at("size").positiveInt();
    btBoxShape* shape = boxShape(params, context, btVector3(1, 1, 1));
    const btScalar mass = readMass(params);
    const btVector3 boxSize = shape->getHalfExtentsWithMargin();
    const btScalar space = btScalar(0.0001);
    const btScalar diffX = boxSize[0] * btScalar(1.02);
    const btScalar diffY = boxSize[1] * btScalar(1.02);
    const btScalar diffZ = boxSize[2] * btScalar(1.02);
    btScalar offsetX = -btScalar(stackSize) * (diffX * 2 + space) * btScalar(0.5);
    btScalar offsetZ = -btScalar(stackSize) * (diffZ * 2 + space) * btScalar(0.5);
    btVector3 pos(0, boxSize[1], 0);
    while (stackSize > 0) {
        for (int j = 0; j < stackSize; ++j) {
            pos[2] = offsetZ + btScalar(j) * (diffZ * 2 + space);
            for (int i = 0; i < stackSize; ++i) {
                pos[0] = offsetX + btScalar(i) * (diffX * 2 + space);
                place(context, {shape, mass}, at(origin + pos), params);
            }
        }
        offsetX += diffX;
        offsetZ += diffZ;
        pos[1] += diffY * 2 + space;
        --stackSize;
    }
}

void generateWall(const JsonReader& params, GeneratorContext& context) {
    const btVector3 origin = params.at("position").vec3();
    int stackSize = params.at("size").positiveInt();
    btBoxShape* shape = boxShape(params, context, btVector3(1, 1, 1));
    const btScalar mass = readMass(params);
    const btVector3 boxSize = shape->getHalfExtentsWithMargin();
    btScalar offset = -btScalar(stackSize) * boxSize[2] * 2 * btScalar(0.5);
    btVector3 pos(0, boxSize[1], 0);
    while (stackSize > 0) {
        for (int i = 0; i < stackSize; ++i) {
            pos[2] = offset + btScalar(i) * boxSize[2] * 2;
            place(context, {shape, mass}, at(origin + pos), params);
        }
        offset += boxSize[2];
        pos[1] += boxSize[1] * 2;
        --stackSize;
    }
}

void generateTowerCircle(const JsonReader& params, GeneratorContext& context) {
    const btVector3 origin = params.at("position").vec3();
    const int levels = params.at("levels").positiveInt();
    const int perRing = params.at("perRing").positiveInt();
    btBoxShape* shape = boxShape(params, context, btVector3(1, 1, 1));
    const btScalar mass = readMass(params);
    const btVector3 boxSize = shape->getHalfExtentsWithMargin();
    const btScalar radius = btScalar(1.3) * btScalar(perRing) * boxSize[0] / SIMD_PI;
    btQuaternion rotY(0, 1, 0, 0);
    btScalar posY = boxSize[1];
    for (int i = 0; i < levels; ++i) {
        for (int j = 0; j < perRing; ++j) {
            place(context, {shape, mass}, btTransform(rotY, origin + quatRotate(rotY, btVector3(0, posY, radius))),
                  params);
            rotY *= btQuaternion(btVector3(0, 1, 0), SIMD_PI / (btScalar(perRing) * btScalar(0.5)));
        }
        posY += boxSize[1] * 2;
        rotY *= btQuaternion(btVector3(0, 1, 0), SIMD_PI / btScalar(perRing));
    }
}

void generateBoxStacks(const JsonReader& params, GeneratorContext& context) {
    const int height = params.positiveInt("height", 15);
    const int width = params.positiveInt("width", 8);
    const int rows = params.positiveInt("rows", 1);
    const int columns = params.positiveInt("columns", 1);
    const btVector3 half = params.vec3("halfExtents", btVector3(btScalar(0.5), btScalar(0.25), btScalar(0.5)));
    const btScalar mass = readMass(params);
    const btScalar friction = btScalar(params.number("friction", 1));
    const btScalar xSpacing = btScalar(params.number("xSpacing", 20));
    const btScalar zSpacing = btScalar(params.number("zSpacing", 2 + double(width) * half.x() * 2));
    btCollisionShape* shape =
        params.boolean("spheres", false)
            ? context.content.addShape(std::make_unique<btSphereShape>(btScalar(params.number("sphereRadius", 0.5))))
            : context.content.addShape(std::make_unique<btBoxShape>(half));
    for (int column = 0; column < columns; ++column) {
        for (int row = 0; row < rows; ++row) {
            const btVector3 center(btScalar(column) * xSpacing, 0, btScalar(row - rows / 2) * zSpacing);
            btVector3 offset(0, 0, -half.z() * btScalar(width - 1));
            for (int iZ = 0; iZ < width; ++iZ) {
                offset += btVector3(0, 0, half.z() * 2);
                for (int iY = 0; iY < height; ++iY) {
                    const int rowSize = height - iY;
                    for (int iX = 0; iX < rowSize; ++iX) {
                        const btVector3 pos = offset + btVector3(half.x() * btScalar(1 + iX * 2 - rowSize),
                                                                 half.y() * btScalar(1 + iY * 2), 0);
                        btRigidBody* body = context.content.addRigidBody(mass, at(center + pos), shape);
                        body->setFriction(friction);
                        body->setRollingFriction(0);
                        if (mass > 0) body->forceActivationState(DISABLE_DEACTIVATION);
                    }
                }
            }
        }
    }
}

} // namespace bulletgpu::demo
