// SPDX-License-Identifier: Zlib
#include <bulletgpu/DeformableMultiBodyDynamicsWorld.h>

#include "bullet_adapter/cloth_group.h"
#include "bullet_adapter/deformable_cloth_steps.h"
#include "cloth_self_collision.h"

#include <BulletSoftBody/btDeformableBodySolver.h>
#include <BulletSoftBody/btSoftBody.h>
#include <LinearMath/btQuickprof.h>

#include <chrono>
#include <vector>

namespace bulletgpu {

/// What stands behind the world: the cloths on the engine, and the bodies whose Bullet
/// self-collision flag is held off.
struct DeformableMultiBodyDynamicsWorld::Engine {
    detail::ClothSelfCollision cloths;  ///< The selected cloths' meshes, CCD query and response.
    ClothGroup group;                   ///< Two or more started cloths answered as one mesh.
    bool grouped = false;               ///< Whether this step's cloths answer as the group.
    std::vector<btSoftBody*> held;      ///< Selected bodies whose useSelfCollision() was on.
    std::vector<CrossVertexFace> cross; ///< This step's vertex-face pairs between the group's cloths.
    std::vector<char> member;           ///< Per soft body of the world: a member of this step's group.

    /// The engine of a config.
    Engine(Backend backend, int threadsOrDevice, int cpuThreads) : cloths(backend, threadsOrDevice, cpuThreads) {}
};

namespace {

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

/// Turns Bullet's self-collision of the selected cloths off for its own stages, back on after.
class HeldSelfCollision {
public:
    HeldSelfCollision(std::vector<ClothMesh>& cloths, std::vector<btSoftBody*>& held) : m_held(held) {
        m_held.clear();
        for (ClothMesh& cloth : cloths)
            if (cloth.body->useSelfCollision()) {
                cloth.body->setSelfCollision(false);
                m_held.push_back(cloth.body);
            }
    }
    ~HeldSelfCollision() {
        for (btSoftBody* body : m_held) body->setSelfCollision(true);
    }
    HeldSelfCollision(const HeldSelfCollision&) = delete;
    HeldSelfCollision& operator=(const HeldSelfCollision&) = delete;

private:
    std::vector<btSoftBody*>& m_held;
};

} // namespace

DeformableMultiBodyDynamicsWorld::DeformableMultiBodyDynamicsWorld(
    btDispatcher* dispatcher, btBroadphaseInterface* broadphase,
    btDeformableMultiBodyConstraintSolver* constraintSolver, btCollisionConfiguration* collisionConfiguration,
    btDeformableBodySolver* deformableBodySolver, const SoftCollisionConfig& config)
    : btDeformableMultiBodyDynamicsWorld(dispatcher, broadphase, constraintSolver, collisionConfiguration,
                                         deformableBodySolver),
      m_config(detail::checkedSoftConfig(config)) {
    const detail::SoftEngineSetup setup = detail::setUpSoftEngine(m_config);
    m_backend = setup.backend;
    m_engine = std::make_unique<Engine>(setup.backend, setup.threadsOrDevice, setup.threads);
}

DeformableMultiBodyDynamicsWorld::~DeformableMultiBodyDynamicsWorld() = default;

void DeformableMultiBodyDynamicsWorld::setSelfCollision(const btSoftBody* body, bool enabled) {
    m_switches[body] = enabled;
}

bool DeformableMultiBodyDynamicsWorld::selfCollision(const btSoftBody* body) const {
    const auto it = m_switches.find(body);
    return it == m_switches.end() ? m_config.selfCollision : it->second;
}

void DeformableMultiBodyDynamicsWorld::internalSingleStepSimulation(btScalar timeStep) {
    BT_PROFILE("internalSingleStepSimulation");
    if (m_internalPreTickCallback != nullptr) (*m_internalPreTickCallback)(this, timeStep);
    reinitialize(timeStep);
    applyRigidBodyGravity(timeStep);
    predictUnconstraintMotion(timeStep);
    btMultiBodyDynamicsWorld::performDiscreteCollisionDetection();
    btMultiBodyDynamicsWorld::calculateSimulationIslands();
    beforeSolverCallbacks(timeStep);
    solveConstraints(timeStep);
    afterSolverCallbacks(timeStep);

    m_stats = SoftCollisionStats{};
    m_engine->cloths.sync(getSoftBodyArray(), m_config, m_switches);
    {
        HeldSelfCollision held(m_engine->cloths.meshes().cloths(), m_engine->held);
        findSelfContacts(timeStep);
        detectSoftSoftContacts();
        appendEngineContacts();
        applyRepulsionForce(timeStep);
        performGeometricCollisions(timeStep);
    }
    respondToSelfContacts(timeStep);

    integrateTransforms(timeStep);
    btMultiBodyDynamicsWorld::updateActions(timeStep);
    updateActivationState(timeStep);
}

void DeformableMultiBodyDynamicsWorld::findSelfContacts(btScalar timeStep) {
    BT_PROFILE("bulletgpu::DeformableMultiBodyDynamicsWorld::findSelfContacts");
    const auto begin = Clock::now();
    SoftClothMeshes& meshes = m_engine->cloths.meshes();
    meshes.recordStart();
    for (ClothMesh& cloth : meshes.cloths())
        if (cloth.started) predictClothEnd(cloth, timeStep);
    meshes.findPairs(m_config.pairListReach);
    m_stats.contactQueries = meshes.queriedCloths();
    m_engine->grouped = m_engine->group.prepare(meshes, m_config.pairListReach);
    m_stats.crossQueries = m_engine->grouped && m_engine->group.queried() ? 1 : 0;
    m_stats.contactMilliseconds = millisecondsSince(begin);
}

void DeformableMultiBodyDynamicsWorld::detectSoftSoftContacts() {
    btSoftBodyArray& bodies = getSoftBodyArray();
    // Membership once per body, not once per pair.
    std::vector<char>& member = m_engine->member;
    member.resize(static_cast<std::size_t>(bodies.size()));
    for (int i = 0; i < bodies.size(); ++i) {
        member[i] = m_engine->grouped && m_engine->group.isMember(bodies[i]);
        bodies[i]->m_softSoftCollision = true;
    }
    for (int i = 0; i < bodies.size(); ++i) {
        for (int j = i; j < bodies.size(); ++j) {
            if (j != i && member[i] && member[j]) continue;
            bodies[i]->defaultCollisionHandler(bodies[j]);
        }
    }
    for (int i = 0; i < bodies.size(); ++i) bodies[i]->m_softSoftCollision = false;
}

void DeformableMultiBodyDynamicsWorld::appendEngineContacts() {
    const auto begin = Clock::now();
    Engine& e = *m_engine;
    for (ClothMesh& cloth : e.cloths.meshes().cloths())
        if (cloth.started) appendFaceNodeContacts(cloth);
    if (e.grouped) {
        e.cross.clear();
        e.group.crossVertexFaces(e.cross);
        appendCrossFaceNodeContacts(e.cross, e.group.thickness());
    }
    m_stats.contactMilliseconds += millisecondsSince(begin);
    m_stats.milliseconds = m_stats.contactMilliseconds;
}

void DeformableMultiBodyDynamicsWorld::respondToSelfContacts(btScalar timeStep) {
    BT_PROFILE("bulletgpu::DeformableMultiBodyDynamicsWorld::respondToSelfContacts");
    const auto begin = Clock::now();
    Engine& e = *m_engine;
    std::vector<ClothMesh>& cloths = e.cloths.meshes().cloths();
    for (ClothMesh& cloth : cloths)
        if (cloth.started) predictClothEnd(cloth, timeStep);
    if (e.grouped) {
        e.cloths.respond(e.group.gather(), m_config, m_stats);
        m_stats.cloths += static_cast<std::uint32_t>(e.group.memberCount() - 1);
        e.group.scatter();
    } else {
        for (ClothMesh& cloth : cloths)
            if (cloth.started) e.cloths.respond(cloth, m_config, m_stats);
    }
    for (ClothMesh& cloth : cloths)
        if (cloth.started) steerNodesToEnd(cloth, timeStep);
    const double elapsed = millisecondsSince(begin);
    m_stats.projectionMilliseconds = elapsed - m_stats.ccdMilliseconds;
    m_stats.milliseconds += elapsed;
}

} // namespace bulletgpu
