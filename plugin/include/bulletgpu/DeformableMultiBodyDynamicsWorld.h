// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/SoftBodySolver.h>

#include <BulletSoftBody/btDeformableMultiBodyDynamicsWorld.h>

#include <memory>
#include <unordered_map>

class btDeformableBodySolver;
class btDeformableMultiBodyConstraintSolver;
class btSoftBody;

namespace bulletgpu {

/// Bullet's deformable world (btDeformableMultiBodyDynamicsWorld) whose cloths' self-collision
/// runs on the engine: replace `new btDeformableMultiBodyDynamicsWorld(...)` with
/// `new bulletgpu::DeformableMultiBodyDynamicsWorld(...)`, same arguments, and optionally a
/// SoftCollisionConfig. Each step is Bullet's (internalSingleStepSimulation, in its order), with
/// its three soft-body collision stages changed for the selected bodies (those with faces and
/// self-collision on, SoftCollisionConfig::selfCollision or setSelfCollision):
///  1. contacts: Bullet's own between different soft bodies (CollideVF_DD) and its self-collision
///     of the bodies not selected; for the selected ones, the engine finds every vertex-face and
///     edge-edge pair within the thickness at the positions the step will reach, and its
///     vertex-face pairs go into m_faceNodeContacts as CollideFF_DD would make them; when they
///     answer as one mesh (below), their vertex-face pairs between two of them go in as
///     CollideVF_DD would make them, in place of Bullet's contacts between those two;
///  2. Bullet's applyRepulsionForce on all of those contacts, unchanged;
///  3. CCD: Bullet's vertex-face CCD between different soft bodies and of the bodies not
///     selected; then, for each selected cloth, the classic solver's response on the motion the
///     step will make (bullet_adapter/self_collision_response.h): its pairs projected to the
///     thickness apart, then the vertex-face **and edge-edge** CCD with its failsafe, the result
///     handed back as node velocities so that Bullet's applyTransforms moves the nodes there;
///     two or more awake selected cloths of one thickness answer as one mesh
///     (bullet_adapter/cloth_group.h), so that the response keeps them apart from each other too.
/// So a selected cloth free of intersecting non-adjacent triangles at the start of a step is free
/// of them at its end, as in the classic solver (docs/soft-self-collision.md), and so are two
/// such cloths of one thickness against each other, up to btScalar
/// rounding of x + dt v (far below the CCD's separation) and two stated exceptions: a node whose
/// corrected velocity exceeds the world's m_maxDisplacement per step is clamped by Bullet, and a
/// node held by a deformable anchor is put where the anchor says (the response never moves one).
/// Bullet's own self-collision flag (btSoftBody::setSelfCollision) is held off for the selected
/// bodies during its stages and restored after. Ropes (no faces) keep Bullet's handling.
class DeformableMultiBodyDynamicsWorld : public btDeformableMultiBodyDynamicsWorld {
public:
    /// The arguments of btDeformableMultiBodyDynamicsWorld's constructor, with the same ownership,
    /// and the settings of the self-collision (SoftCollisionConfig's rope settings do not apply).
    /// Throws std::invalid_argument on a bad config, std::runtime_error when Backend::Cuda has no
    /// usable device.
    DeformableMultiBodyDynamicsWorld(btDispatcher* dispatcher, btBroadphaseInterface* broadphase,
                                     btDeformableMultiBodyConstraintSolver* constraintSolver,
                                     btCollisionConfiguration* collisionConfiguration,
                                     btDeformableBodySolver* deformableBodySolver = nullptr,
                                     const SoftCollisionConfig& config = {});
    /// Frees the engine.
    ~DeformableMultiBodyDynamicsWorld() override;

    /// Switches the engine's self-collision of `body` on or off, overriding
    /// SoftCollisionConfig::selfCollision (off: Bullet's own, as its flags say).
    void setSelfCollision(const btSoftBody* body, bool enabled);
    /// Whether the engine's self-collision of `body` is on.
    bool selfCollision(const btSoftBody* body) const;

    /// The settings.
    const SoftCollisionConfig& config() const { return m_config; }
    /// The backend the engine runs on (Cpu or Cuda).
    Backend backend() const { return m_backend; }
    /// Counters of the last step (the cloth fields; the rope fields stay 0).
    const SoftCollisionStats& stats() const { return m_stats; }

protected:
    /// Bullet's step with the soft-body collision stages described above.
    void internalSingleStepSimulation(btScalar timeStep) override;

private:
    /// The cloths on the engine (defined in the source).
    struct Engine;

    /// The selected cloths' pairs at the positions the step will reach (the engine's queries).
    void findSelfContacts(btScalar timeStep);
    /// Bullet's performDeformableCollisionDetection less the pairs of two cloths answered as one
    /// mesh (their contacts come from the engine).
    void detectSoftSoftContacts();
    /// The pairs findSelfContacts found, into the nodes' bodies' m_faceNodeContacts.
    void appendEngineContacts();
    /// The selected cloths' projection and continuous stage, handed back as velocities.
    void respondToSelfContacts(btScalar timeStep);

    SoftCollisionConfig m_config;                           ///< Settings.
    Backend m_backend = Backend::Cpu;                       ///< Backend the engine runs on.
    std::unique_ptr<Engine> m_engine;                       ///< The cloths on the engine.
    std::unordered_map<const btSoftBody*, bool> m_switches; ///< Per-body overrides.
    SoftCollisionStats m_stats;                             ///< Counters of the last step.
};

} // namespace bulletgpu
