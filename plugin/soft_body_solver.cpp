// SPDX-License-Identifier: Zlib
#include <bulletgpu/SoftBodySolver.h>

#include "bullet_adapter/mesh_face_contacts.h"
#include "bullet_adapter/rope_cloth_contacts.h"
#include "bullet_adapter/soft_rigid_contacts.h"
#include "bullet_adapter/soft_rope_chains.h"
#include "bullet_adapter/soft_soft_contacts.h"
#include "cloth_self_collision.h"

#include <BulletSoftBody/btSoftBody.h>

#include <chrono>

namespace bulletgpu {

/// What stands behind the solver: the cloths and ropes on the engines, and the contact stages.
struct SoftBodySolver::Engine {
    detail::ClothSelfCollision cloths; ///< The cloths' meshes, CCD query and response.
    SoftRopeChains ropes;              ///< The ropes' sphere chains and step buffers.
    SoftRigidContacts meshes;          ///< Soft bodies against rigid triangle meshes.
    MeshFaceContacts meshFaces;        ///< Rigid mesh vertices against soft bodies' faces.
    SoftSoftContacts softPairs;        ///< Node-face contacts between soft bodies.
    RopeClothContacts ropeCloth;       ///< Ropes against cloths in our response.

    /// The engine of `config`.
    Engine(Backend backend, int threadsOrDevice, int cpuThreads)
        : cloths(backend, threadsOrDevice, cpuThreads), ropes(backend, threadsOrDevice, cpuThreads),
          meshes(backend, threadsOrDevice), meshFaces(backend, threadsOrDevice), softPairs(backend, threadsOrDevice),
          ropeCloth(cpuThreads) {}
};

SoftBodySolver::SoftBodySolver(const SoftCollisionConfig& config) : m_config(detail::checkedSoftConfig(config)) {
    const detail::SoftEngineSetup setup = detail::setUpSoftEngine(m_config);
    m_backend = setup.backend;
    m_engine = std::make_unique<Engine>(setup.backend, setup.threadsOrDevice, setup.threads);
}

SoftBodySolver::~SoftBodySolver() = default;

void SoftBodySolver::setSelfCollision(const btSoftBody* body, bool enabled) { m_switches[body] = enabled; }

bool SoftBodySolver::selfCollision(const btSoftBody* body) const {
    const auto it = m_switches.find(body);
    return it == m_switches.end() ? m_config.selfCollision : it->second;
}

void SoftBodySolver::optimize(btAlignedObjectArray<btSoftBody*>& softBodies, bool forceUpdate) {
    btDefaultSoftBodySolver::optimize(softBodies, forceUpdate);
    Engine& e = *m_engine;
    e.cloths.sync(softBodies, m_config, m_switches);
    e.ropes.sync(softBodies, e.cloths.selected(), e.cloths.thickness());
}

void SoftBodySolver::predictMotion(btScalar solverdt) {
    m_engine->cloths.meshes().recordStart();
    m_engine->ropes.recordStart();
    btDefaultSoftBodySolver::predictMotion(solverdt);
}

void SoftBodySolver::processCollision(btSoftBody* body, const btCollisionObjectWrapper* wrap) {
    if (isSoftMeshCall(body, wrap))
        m_engine->meshes.gather(body, wrap);
    else
        btDefaultSoftBodySolver::processCollision(body, wrap);
}

void SoftBodySolver::processCollision(btSoftBody* body, btSoftBody* other) {
    if (isVertexFacePair(body, other))
        m_engine->softPairs.gather(body, other);
    else
        btDefaultSoftBodySolver::processCollision(body, other);
}

void SoftBodySolver::solveConstraints(btScalar solverdt) {
    m_engine->meshes.generate();
    if (m_config.meshFaceContacts) m_engine->meshFaces.addContacts(m_engine->meshes.facePairs());
    const auto softBegin = std::chrono::steady_clock::now();
    m_engine->softPairs.generate();
    m_meshStats.softMilliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - softBegin).count();
    m_meshStats.softContacts = m_engine->softPairs.contactCount();
    m_meshStats.faceContacts = m_config.meshFaceContacts ? m_engine->meshFaces.contactCount() : 0;
    m_meshStats.contacts = m_engine->meshes.contactCount() + m_meshStats.faceContacts;
    m_meshStats.queries = m_engine->meshes.queryCount();
    btDefaultSoftBodySolver::solveConstraints(solverdt);
    m_engine->meshes.keepSides();
    m_meshStats.projected = m_engine->meshes.projectedCount();
    m_meshStats.facePushes = 0;
    if (m_config.meshFaceContacts) {
        m_engine->meshFaces.respond(m_engine->meshes.facePairs());
        m_meshStats.facePushes = m_engine->meshFaces.pushCount();
    }
    collideSoftBodies();
}

void SoftBodySolver::collideSoftBodies() {
    using Clock = std::chrono::steady_clock;
    const auto since = [](Clock::time_point t) {
        return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
    };
    const auto begin = Clock::now();
    m_stats = SoftCollisionStats{};
    Engine& e = *m_engine;
    e.cloths.meshes().readEnds();
    e.cloths.meshes().findPairs(m_config.pairListReach);
    m_stats.contactQueries = e.cloths.meshes().queriedCloths();
    m_stats.contactMilliseconds = since(begin);
    for (ClothMesh& cloth : e.cloths.meshes().cloths()) {
        if (!cloth.started) continue;
        e.cloths.respond(cloth, m_config, m_stats);
        e.cloths.meshes().writeBack(cloth, cloth.body->m_sst.sdt);
    }
    const auto ropesBegin = Clock::now();
    m_stats.projectionMilliseconds = since(begin) - m_stats.contactMilliseconds - m_stats.ccdMilliseconds;
    e.ropes.collide(m_config.iterations, m_config.ropeRounds, m_config.ropeContinuous, m_config.ccdEtaFraction);
    if (m_config.ropeCloth) e.ropeCloth.collide(e.cloths.meshes(), e.ropes, m_config.iterations);
    m_stats.ropeClothPairs = m_config.ropeCloth ? e.ropeCloth.pairCount() : 0;
    m_stats.impacts += e.ropes.linkImpacts();
    m_stats.frozenNodes += e.ropes.frozenNodes();
    m_stats.revertedRopes = e.ropes.revertedRopes();
    m_stats.ropes = e.ropes.ropeCount();
    m_stats.ropePairs = e.ropes.pairCount();
    m_stats.ropeRounds = e.ropes.rounds();
    m_stats.ropeQueries = e.ropes.queries();
    m_stats.ropeMoverUpdates = e.ropes.moverUpdates();
    m_stats.ropeSearchMilliseconds = e.ropes.searchMilliseconds();
    m_stats.ropeMilliseconds = since(ropesBegin);
    m_stats.milliseconds = since(begin);
}

} // namespace bulletgpu
