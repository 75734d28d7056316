// SPDX-License-Identifier: Zlib
#include "demos/scene/generator.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace bulletgpu::demo {

namespace {

// Casts a fixed set of rays after every step, each through a ClosestRayResultCallback.
class RayScript final : public SceneScript {
public:
    void add(const btVector3& from, const btVector3& to) {
        m_from.push_back(from);
        m_to.push_back(to);
    }
    void afterStep(btDiscreteDynamicsWorld& world) override {
        m_hits = 0;
        for (size_t i = 0; i < m_from.size(); ++i) {
            btCollisionWorld::ClosestRayResultCallback callback(m_from[i], m_to[i]);
            world.rayTest(m_from[i], m_to[i], callback);
            if (callback.hasHit()) ++m_hits;
        }
    }
    int rayHits() const override { return m_hits; }

private:
    std::vector<btVector3> m_from;
    std::vector<btVector3> m_to;
    int m_hits = 0;
};

// Moves kinematic boxes along fixed directions before every step, reflecting them at the walls.
class BoxFieldScript final : public SceneScript {
public:
    BoxFieldScript(const btVector3& low, const btVector3& high, btScalar speed)
        : m_low(low), m_high(high), m_speed(speed) {}
    void add(btRigidBody* body, const btVector3& position, const btVector3& direction) {
        m_bodies.push_back(body);
        m_positions.push_back(position);
        m_directions.push_back(direction);
    }
    void beforeStep(btDiscreteDynamicsWorld&, btScalar) override {
        for (size_t i = 0; i < m_bodies.size(); ++i) {
            btVector3& position = m_positions[i];
            btVector3& direction = m_directions[i];
            position += direction * m_speed;
            for (int axis = 0; axis < 3; ++axis) {
                if (position[axis] > m_high[axis]) {
                    position[axis] = 2 * m_high[axis] - position[axis];
                    direction[axis] = -direction[axis];
                } else if (position[axis] < m_low[axis]) {
                    position[axis] = 2 * m_low[axis] - position[axis];
                    direction[axis] = -direction[axis];
                }
            }
            m_bodies[i]->setWorldTransform(btTransform(btQuaternion::getIdentity(), position));
        }
    }

private:
    btVector3 m_low;
    btVector3 m_high;
    btScalar m_speed;
    std::vector<btRigidBody*> m_bodies;
    std::vector<btVector3> m_positions;
    std::vector<btVector3> m_directions;
};

// A uniform number in [0, 1) from the engine's 32 bits (the same on every standard library).
btScalar unitRandom(std::mt19937& random) { return btScalar(double(random()) / 4294967296.0); }

} // namespace

void generateRays(const JsonReader& params, GeneratorContext& context) {
    const int count = params.positiveInt("count", 500);
    const btVector3 source = params.vec3("source", btVector3(0, 50, 0));
    const btScalar length = btScalar(params.positiveNumber("length", 2500));
    const btScalar endY = btScalar(params.number("endY", -1000));
    const btScalar turns = btScalar(params.number("turns", 2));
    auto script = std::make_unique<RayScript>();
    const btScalar step = turns * SIMD_2_PI / btScalar(count);
    for (int i = 0; i < count; ++i) {
        const btQuaternion rotation(btVector3(0, 1, 0), step * btScalar(i));
        btVector3 to = source + quatRotate(rotation, btVector3(1, 0, 0)) * length;
        to.setY(endY);
        script->add(source, to);
    }
    context.content.addScript(std::move(script));
}

void generateMovingBoxField(const JsonReader& params, GeneratorContext& context) {
    const int count = context.scaled(params.at("count").positiveInt(), params.boolean("scalable", false));
    const double density = params.positiveNumber("density", 0.25);
    const btScalar speed = btScalar(params.number("speed", 0.05));
    const btScalar half = btScalar(params.positiveNumber("halfExtent", 0.5));
    const btVector3 center = params.vec3("center", btVector3(0, 0, 0));
    const btScalar side = std::max(btScalar(std::cbrt(double(count) / density)), 2 * half);
    const btVector3 low = center - btVector3(side, side, side) / 2 + btVector3(half, half, half);
    const btVector3 high = center + btVector3(side, side, side) / 2 - btVector3(half, half, half);
    btCollisionShape* shape = context.content.addShape(std::make_unique<btBoxShape>(btVector3(half, half, half)));
    auto script = std::make_unique<BoxFieldScript>(low, high, speed);
    std::mt19937 random(context.seed);
    for (int i = 0; i < count; ++i) {
        const btVector3 position =
            low + (high - low) * btVector3(unitRandom(random), unitRandom(random), unitRandom(random));
        btVector3 direction(0, 0, 0);
        while (direction.length2() < btScalar(1e-4) || direction.length2() > 1) {
            direction = btVector3(2 * unitRandom(random) - 1, 2 * unitRandom(random) - 1, 2 * unitRandom(random) - 1);
        }
        direction.normalize();
        // Kinematic boxes join the default group with a full mask, so the broadphase pairs them with
        // each other; the world then skips the narrow phase for those pairs (skipStaticPairs).
        btRigidBody* body =
            context.content.addRigidBody(0, btTransform(btQuaternion::getIdentity(), position), shape, false,
                                         btBroadphaseProxy::DefaultFilter, btBroadphaseProxy::AllFilter);
        body->setCollisionFlags(body->getCollisionFlags() | btCollisionObject::CF_KINEMATIC_OBJECT);
        body->forceActivationState(DISABLE_DEACTIVATION);
        script->add(body, position, direction);
    }
    context.content.skipStaticPairs();
    context.content.addScript(std::move(script));
}

} // namespace bulletgpu::demo
