// SPDX-License-Identifier: Zlib
// The README's one-line integration, built against the installed package.
#include <bulletgpu/Broadphase.h>

#include <btBulletDynamicsCommon.h>

#include <cstdio>

int main() {
    btDefaultCollisionConfiguration configuration;
    btCollisionDispatcher dispatcher(&configuration);
    bulletgpu::Broadphase broadphase; // instead of btDbvtBroadphase
    btSequentialImpulseConstraintSolver solver;
    btDiscreteDynamicsWorld world(&dispatcher, &broadphase, &solver, &configuration);
    btBoxShape shape(btVector3(1, 1, 1));
    btRigidBody a(1, nullptr, &shape), b(1, nullptr, &shape);
    a.getWorldTransform().setOrigin(btVector3(0, 0, 0));
    b.getWorldTransform().setOrigin(btVector3(1.5, 0, 0));
    world.addRigidBody(&a);
    world.addRigidBody(&b);
    world.stepSimulation(1.0 / 60);
    const int pairs = world.getPairCache()->getNumOverlappingPairs();
    world.removeRigidBody(&b);
    world.removeRigidBody(&a);
    std::printf("consumer: %d pair(s) with the %s backend\n", pairs, bulletgpu::toString(broadphase.backend()));
    return pairs == 1 ? 0 : 1;
}
