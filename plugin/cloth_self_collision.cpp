// SPDX-License-Identifier: Zlib
#include "cloth_self_collision.h"

#include "backend_choice.h"
#include "narrow_backend_choice.h"

#include <BulletSoftBody/btSoftBody.h>

#include <cmath>
#include <stdexcept>

namespace bulletgpu::detail {

const SoftCollisionConfig& checkedSoftConfig(const SoftCollisionConfig& config) {
    if (config.cudaDevice < 0) throw std::invalid_argument("bulletgpu::SoftCollisionConfig: cudaDevice < 0");
    if (!std::isfinite(config.thickness))
        throw std::invalid_argument("bulletgpu::SoftCollisionConfig: thickness is not finite");
    if (config.iterations < 0) throw std::invalid_argument("bulletgpu::SoftCollisionConfig: iterations < 0");
    if (config.ropeRounds < 0) throw std::invalid_argument("bulletgpu::SoftCollisionConfig: ropeRounds < 0");
    if (!(config.pairListReach >= 0 && std::isfinite(config.pairListReach)))
        throw std::invalid_argument("bulletgpu::SoftCollisionConfig: pairListReach negative or not finite");
    if (!(config.ccdEtaFraction >= 0 && config.ccdEtaFraction < 1))
        throw std::invalid_argument("bulletgpu::SoftCollisionConfig: ccdEtaFraction outside [0, 1)");
    return config;
}

SoftEngineSetup setUpSoftEngine(const SoftCollisionConfig& config) {
    const int threads = cpuThreads(config.threads);
    const NarrowBackendChoice choice =
        chooseNarrowBackend(config.backend, config.cudaDevice, threads, "soft-body collisions");
    if (config.logBackendChoice) logLine(config.logSink, choice.line);
    const bool cuda = choice.backend == Backend::Cuda;
    return SoftEngineSetup{choice.backend, threads, cuda ? config.cudaDevice : threads};
}

ClothSelfCollision::ClothSelfCollision(Backend backend, int threadsOrDevice, int cpuThreads)
    : m_meshes(backend, threadsOrDevice), m_threads(cpuThreads) {}

void ClothSelfCollision::sync(const btAlignedObjectArray<btSoftBody*>& bodies, const SoftCollisionConfig& config,
                              const std::unordered_map<const btSoftBody*, bool>& switches) {
    m_selected.resize(bodies.size());
    m_thickness.resize(bodies.size());
    for (int i = 0; i < bodies.size(); ++i) {
        const auto it = switches.find(bodies[i]);
        m_selected[i] = it == switches.end() ? config.selfCollision : it->second;
        m_thickness[i] = config.thickness > 0 ? config.thickness : bodies[i]->getCollisionShape()->getMargin();
    }
    m_meshes.sync(bodies, m_selected, m_thickness);
}

void ClothSelfCollision::respond(ClothMesh& cloth, const SoftCollisionConfig& config, SoftCollisionStats& stats) {
    ++stats.cloths;
    stats.contactPairs += cloth.pairs.size();
    const SelfCollisionMesh mesh = cloth.view();
    projectSelfPairs(mesh, cloth.pairs.data(), cloth.pairs.size(), cloth.thickness, config.iterations, m_threads,
                     m_colouring);
    if (!config.continuous) return;
    ContinuousOptions options;
    options.eta = config.ccdEtaFraction * cloth.thickness;
    options.thickness = cloth.thickness;
    options.iterations = config.iterations;
    options.threads = m_threads;
    options.queried = config.skipClearSteps ? cloth.queried.data() : nullptr;
    options.queryDistance = cloth.thickness;
    options.nearest = cloth.nearest;
    const ContinuousResult r =
        runContinuousResponse(mesh, cloth.pairs, options, m_ccd, m_ccdResult, m_frozen, m_colouring);
    stats.impacts += r.impacts;
    stats.ccdQueries += r.rounds;
    stats.frozenNodes += r.frozenVertices;
    stats.revertedCloths += r.wholeMeshReverted ? 1 : 0;
    stats.ccdMilliseconds += r.ccdMilliseconds;
    stats.ccdSkips += r.skipped ? 1 : 0;
}

} // namespace bulletgpu::detail
