// SPDX-License-Identifier: Zlib
#pragma once

#include "bullet_adapter/pair_colouring.h"
#include "bullet_adapter/soft_cloth_meshes.h"

#include <bulletgpu/SoftBodySolver.h>

#include <LinearMath/btAlignedObjectArray.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

class btSoftBody;

/// The cloths' self-collision of a soft-body world, written once for the classic solver
/// (bulletgpu::SoftBodySolver) and the deformable world (bulletgpu::DeformableMultiBodyDynamicsWorld):
/// which bodies take part and with what thickness, their engine meshes, and the response of one
/// cloth's step (projection, then the continuous stage).

namespace bulletgpu::detail {

/// Checks `config`; throws std::invalid_argument on a bad value.
const SoftCollisionConfig& checkedSoftConfig(const SoftCollisionConfig& config);

/// Where a soft-body config's engines run.
struct SoftEngineSetup {
    Backend backend;     ///< Cpu or Cuda.
    int threads;         ///< CPU threads (the CCD query, the CPU engines).
    int threadsOrDevice; ///< The engines' argument: the threads on the CPU, the device on CUDA.
};

/// Chooses the backend of `config` (after BULLETGPU_BACKEND, as chooseNarrowBackend does) and
/// logs the line that says which, unless the config turns that off. Throws std::runtime_error
/// when Backend::Cuda has no usable device.
SoftEngineSetup setUpSoftEngine(const SoftCollisionConfig& config);

/// The cloths of one world on one engine, with the CCD query and its scratch.
class ClothSelfCollision {
public:
    /// Cloths on `backend` (`threadsOrDevice` as TriangleMeshSet takes it), the CCD query on
    /// `cpuThreads` threads.
    ClothSelfCollision(Backend backend, int threadsOrDevice, int cpuThreads);

    /// Selects the bodies of `bodies` whose self-collision is on (`switches`, else
    /// config.selfCollision) with their thickness (config.thickness, else the collision margin),
    /// and keeps the cloths' meshes in line with them.
    void sync(const btAlignedObjectArray<btSoftBody*>& bodies, const SoftCollisionConfig& config,
              const std::unordered_map<const btSoftBody*, bool>& switches);

    /// Projects the contact pairs of `cloth` apart and, with config.continuous, runs the
    /// continuous stage over its step (start to end buffers); adds its counters to `stats`.
    void respond(ClothMesh& cloth, const SoftCollisionConfig& config, SoftCollisionStats& stats);

    /// The cloths and their engine.
    SoftClothMeshes& meshes() { return m_meshes; }
    /// Whether each body of the last sync takes part.
    const std::vector<char>& selected() const { return m_selected; }
    /// Thickness of each body of the last sync.
    const std::vector<double>& thickness() const { return m_thickness; }

private:
    SoftClothMeshes m_meshes;           ///< The cloths' meshes and step buffers.
    CcdFrameQuery m_ccd;                ///< The continuous query (reuses its buffers).
    CcdFrameResult m_ccdResult;         ///< Its output.
    std::vector<std::uint8_t> m_frozen; ///< The failsafe's flags.
    PairColouring m_colouring;          ///< The projection's colouring.
    std::vector<char> m_selected;       ///< Whether each world body takes part.
    std::vector<double> m_thickness;    ///< Thickness of each world body.
    int m_threads;                      ///< CPU threads of the CCD query and the projection.
};

} // namespace bulletgpu::detail
