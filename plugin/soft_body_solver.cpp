// SPDX-License-Identifier: Zlib
#include <bulletgpu/SoftBodySolver.h>

#include "bullet_adapter/rope_cloth_contacts.h"
#include "bullet_adapter/soft_cloth_meshes.h"
#include "bullet_adapter/soft_rigid_contacts.h"
#include "bullet_adapter/soft_rope_chains.h"
#include "bullet_adapter/soft_soft_contacts.h"
#include "backend_choice.h"
#include "narrow_backend_choice.h"

#include <BulletSoftBody/btSoftBody.h>

#include <chrono>
#include <cmath>
#include <stdexcept>

namespace bulletgpu {

/// What stands behind the solver: the cloths on the engine, the CCD query and scratch buffers.
struct SoftBodySolver::Engine {
    SoftClothMeshes cloths;           ///< The cloths' meshes and step buffers.
    SoftRopeChains ropes;             ///< The ropes' sphere chains and step buffers.
    SoftRigidContacts meshes;         ///< Soft bodies against rigid triangle meshes.
    SoftSoftContacts softPairs;       ///< Node-face contacts between soft bodies.
    RopeClothContacts ropeCloth;      ///< Ropes against cloths in our response.
    CcdFrameQuery ccd;                ///< The continuous query (reuses its buffers).
    CcdFrameResult ccdResult;         ///< Its output.
    std::vector<std::uint8_t> frozen; ///< The failsafe's flags.
    std::vector<char> selected;       ///< Whether each world body takes part.
    std::vector<double> thickness;    ///< Thickness of each world body.
    int threads;                      ///< CPU threads of the CCD query.

    /// The engine of `config`.
    Engine(Backend backend, int threadsOrDevice, int cpuThreads)
        : cloths(backend, threadsOrDevice), ropes(backend, threadsOrDevice, cpuThreads),
          meshes(backend, threadsOrDevice), softPairs(backend, threadsOrDevice), threads(cpuThreads) {}
};

namespace {

/// Checks `config`; throws std::invalid_argument on a bad value.
const SoftCollisionConfig& checked(const SoftCollisionConfig& config) {
    if (config.cudaDevice < 0) throw std::invalid_argument("bulletgpu::SoftCollisionConfig: cudaDevice < 0");
    if (!std::isfinite(config.thickness))
        throw std::invalid_argument("bulletgpu::SoftCollisionConfig: thickness is not finite");
    if (config.iterations < 0) throw std::invalid_argument("bulletgpu::SoftCollisionConfig: iterations < 0");
    if (config.ropeRounds < 0) throw std::invalid_argument("bulletgpu::SoftCollisionConfig: ropeRounds < 0");
    if (!(config.ccdEtaFraction >= 0 && config.ccdEtaFraction < 1))
        throw std::invalid_argument("bulletgpu::SoftCollisionConfig: ccdEtaFraction outside [0, 1)");
    return config;
}

} // namespace

SoftBodySolver::SoftBodySolver(const SoftCollisionConfig& config) : m_config(checked(config)) {
    const int threads = cpuThreads(config.threads);
    const detail::NarrowBackendChoice choice =
        detail::chooseNarrowBackend(config.backend, config.cudaDevice, threads, "soft-body collisions");
    m_backend = choice.backend;
    const bool cuda = m_backend == Backend::Cuda;
    m_engine = std::make_unique<Engine>(m_backend, cuda ? config.cudaDevice : threads, threads);
    if (config.logBackendChoice) logLine(config.logSink, choice.line);
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
    e.selected.resize(softBodies.size());
    e.thickness.resize(softBodies.size());
    for (int i = 0; i < softBodies.size(); ++i) {
        e.selected[i] = selfCollision(softBodies[i]);
        e.thickness[i] = m_config.thickness > 0 ? m_config.thickness : softBodies[i]->getCollisionShape()->getMargin();
    }
    e.cloths.sync(softBodies, e.selected, e.thickness);
    e.ropes.sync(softBodies, e.selected, e.thickness);
}

void SoftBodySolver::predictMotion(btScalar solverdt) {
    m_engine->cloths.recordStart();
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
    m_engine->softPairs.generate();
    m_meshStats.softContacts = m_engine->softPairs.contactCount();
    m_meshStats.contacts = m_engine->meshes.contactCount();
    m_meshStats.queries = m_engine->meshes.queryCount();
    btDefaultSoftBodySolver::solveConstraints(solverdt);
    m_engine->meshes.keepSides();
    m_meshStats.projected = m_engine->meshes.projectedCount();
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
    e.cloths.findPairs();
    m_stats.contactMilliseconds = since(begin);
    for (ClothMesh& cloth : e.cloths.cloths()) {
        if (!cloth.started) continue;
        ++m_stats.cloths;
        m_stats.contactPairs += cloth.pairs.size();
        const SelfCollisionMesh mesh = cloth.view();
        projectSelfPairs(mesh, cloth.pairs.data(), cloth.pairs.size(), cloth.thickness, m_config.iterations);
        if (m_config.continuous) {
            ContinuousOptions options;
            options.eta = m_config.ccdEtaFraction * cloth.thickness;
            options.thickness = cloth.thickness;
            options.iterations = m_config.iterations;
            options.threads = e.threads;
            options.queried = m_config.skipClearSteps ? cloth.queried.data() : nullptr;
            options.queryDistance = cloth.thickness;
            options.nearest = cloth.nearest;
            const ContinuousResult r = runContinuousResponse(mesh, cloth.pairs, options, e.ccd, e.ccdResult, e.frozen);
            m_stats.impacts += r.impacts;
            m_stats.ccdQueries += r.rounds;
            m_stats.frozenNodes += r.frozenVertices;
            m_stats.revertedCloths += r.wholeMeshReverted ? 1 : 0;
            m_stats.ccdMilliseconds += r.ccdMilliseconds;
            m_stats.ccdSkips += r.skipped ? 1 : 0;
        }
        e.cloths.writeBack(cloth, cloth.body->m_sst.sdt);
    }
    const auto ropesBegin = Clock::now();
    m_stats.projectionMilliseconds = since(begin) - m_stats.contactMilliseconds - m_stats.ccdMilliseconds;
    e.ropes.collide(m_config.iterations, m_config.ropeRounds, m_config.ropeContinuous, m_config.ccdEtaFraction);
    if (m_config.ropeCloth) e.ropeCloth.collide(e.cloths, e.ropes, m_config.iterations);
    m_stats.ropeClothPairs = m_config.ropeCloth ? e.ropeCloth.pairCount() : 0;
    m_stats.impacts += e.ropes.linkImpacts();
    m_stats.frozenNodes += e.ropes.frozenNodes();
    m_stats.revertedRopes = e.ropes.revertedRopes();
    m_stats.ropes = e.ropes.ropeCount();
    m_stats.ropePairs = e.ropes.pairCount();
    m_stats.ropeRounds = e.ropes.rounds();
    m_stats.ropeQueries = e.ropes.queries();
    m_stats.ropeMilliseconds = since(ropesBegin);
    m_stats.milliseconds = since(begin);
}

} // namespace bulletgpu
