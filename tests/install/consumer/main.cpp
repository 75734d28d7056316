// SPDX-License-Identifier: Zlib
// The README's one-line integration and the narrow-phase engine, built against the installed
// package (whose headers are the public ones only).
#include <bulletgpu/Broadphase.h>
#include <bulletgpu/TriangleMeshSet.h>

#include <btBulletDynamicsCommon.h>

#include <cstdint>
#include <cstdio>
#include <vector>

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

    // Two triangles crossing each other: one intersecting pair, one contact within 0.1.
    const float positions[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0.2f, 0.2f, -0.5f, 0.2f, 0.2f, 0.5f, 0.8f, 0.2f, 0.5f};
    const std::uint32_t first[] = {0, 1, 2}, second[] = {0, 1, 2};
    bulletgpu::TriangleMeshSet meshes(bulletgpu::Backend::Cpu, 1);
    const std::uint32_t meshA = meshes.addMesh(positions, 3, first, 1);
    const std::uint32_t meshB = meshes.addMesh(positions + 9, 3, second, 1);
    std::vector<bulletgpu::TriangleContact> crossings;
    meshes.findPairContacts(meshA, meshB, crossings);
    std::vector<bulletgpu::ProximityContact> near;
    meshes.findPairProximity(meshA, meshB, bulletgpu::ProximityOptions{0.1, false}, near);
    std::printf("consumer: %zu intersecting triangle pair(s), %zu contact(s) within 0.1\n", crossings.size(),
                near.size());
    return pairs == 1 && crossings.size() == 1 && !near.empty() ? 0 : 1;
}
