// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/Backend.h>

#include <BulletSoftBody/btDefaultSoftBodySolver.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

class btSoftBody;

namespace bulletgpu {

/// Settings of a bulletgpu::SoftBodySolver, fixed at construction.
struct SoftCollisionConfig {
    /// The engines' backend. BULLETGPU_BACKEND (cpu, cuda or auto) overrides Auto, as for the
    /// broad phase; Auto takes the CUDA device when one is usable and the CPU otherwise; Cuda
    /// throws std::runtime_error saying why when the device is not usable.
    Backend backend = Backend::Auto;
    /// OpenMP threads of the engine and the CCD query (0 or less: OpenMP's default).
    int threads = 0;
    /// The CUDA device for Backend::Cuda. Must be >= 0.
    int cudaDevice = 0;
    /// Self-collision of every soft body with faces (cloth) and of every rope (no faces, links
    /// joining consecutive nodes), ropes against ropes too; SoftBodySolver::setSelfCollision
    /// overrides it per body.
    bool selfCollision = true;
    /// Distance kept between a cloth's features and between a rope's nodes (twice their sphere
    /// radius); 0 or less: each body's collision margin (btSoftBody::getCollisionShape()->
    /// getMargin()). Cloth feature pairs already within it when a body joins (a fine cloth's
    /// neighbours) and rope nodes within it along the rope at rest are never pushed apart.
    double thickness = 0;
    /// Gauss-Seidel passes of the position projection over a step's contact pairs (cloth and rope).
    int iterations = 4;
    /// Most rounds of rope contact search and projection a step (a round keeps the pairs of
    /// earlier rounds and steps and searches anew those of the nodes that have moved a quarter of
    /// the thickness since, or the whole set when many have; they stop once every pair keeps its
    /// distance). The projection has friction:
    /// the larger `m_cfg.kDF` of two touching ropes (Bullet's default 0.2) holds their relative
    /// slip within kDF times the push (bullet_adapter/rope_collision_response.h).
    int ropeRounds = 8;
    /// Whether the continuous stage of cloths runs: CCD from the step's start to its end,
    /// impacts projected, then the failsafe that puts impacting nodes back where they started.
    bool continuous = true;
    /// Whether the continuous stage of ropes runs: the link CCD over the step (every pair of
    /// links that would meet), with the same failsafe, so that no link passes through another.
    /// Off by default: on ten coiled ropes of 10,000 nodes it costs about 100 ms a step and,
    /// while they pile up, seconds (docs/soft-self-collision.md); the projection alone keeps the
    /// nodes apart but lets a stretched link pass through another now and then.
    bool ropeContinuous = false;
    /// Whether ropes collide with cloths (both with self-collision on) in this solver's response:
    /// after the cloths' and the ropes' stages, rope nodes within reach of a cloth's faces are
    /// projected to the mean of the two thicknesses from them, on the side they came from
    /// (bullet_adapter/rope_cloth_contacts.h). Bullet's own VF_SS contacts between them, when
    /// both bodies have VF_SS, are made as well, and do not hold a falling rope.
    bool ropeCloth = true;
    /// Whether the vertices of closed rigid triangle meshes hold soft bodies' faces off
    /// (bullet_adapter/mesh_face_contacts.h): a sharp feature (a spike's apex, an ear's tip)
    /// between a cloth's nodes, which the node contacts miss, gives the face's nodes RContacts
    /// before Bullet's solve and pushes the face back to the contact reach (body margin plus mesh
    /// margin), on the side it came from, after it. Open meshes are left out.
    bool meshFaceContacts = true;
    /// How far beyond the thickness the cloths' contact query reaches, as a fraction of the
    /// thickness, for a cloth that deformed over the step by less than a quarter of that (a
    /// cloth that deforms faster is queried at the thickness every step). The pairs it finds are
    /// kept, and later steps measure them again instead of querying while no node has moved,
    /// relative to the rest of its cloth, by so much that a pair beyond the reach could have come
    /// within the thickness (a cloth falling or resting as a whole is not queried again). The
    /// pairs are the same as a query every step would find; 0 queries every step. Must be finite
    /// and >= 0.
    double pairListReach = 0.5;
    /// Separation the CCD query keeps, as a fraction of the thickness.
    double ccdEtaFraction = 0.01;
    /// Skip the CCD query of a cloth's step when the contact query already proves it clear: no
    /// node moved far enough, against the distances that query reported, for two features to
    /// come within the separation (bullet_adapter/self_collision_response.h, slowStepClearsEta).
    /// The guarantee is the same either way; off runs the query every step.
    bool skipClearSteps = true;
    /// Whether to log the line that says which backend the solver runs on, at construction.
    bool logBackendChoice = true;
    /// Where that line goes (standard error when empty).
    std::function<void(const char* line)> logSink;
};

/// Counters of the last step, summed over the cloths and ropes.
struct SoftCollisionStats {
    std::uint32_t cloths = 0;       ///< Cloths whose self-collision ran.
    std::uint64_t contactPairs = 0; ///< Vertex-face and edge-edge pairs within the thickness.
    std::uint64_t impacts = 0;      ///< CCD impacts left after the discrete projection (cloth features, rope links).
    std::uint64_t ccdQueries = 0;   ///< CCD queries run.
    std::uint32_t ccdSkips = 0;     ///< Cloths whose step was proven clear without a CCD query.
    std::uint32_t contactQueries =
        0; ///< Cloths whose contact pairs the engine queried (others re-measured kept pairs).
    std::uint32_t crossQueries =
        0; ///< Deformable world: pair queries between grouped cloths run (0: kept pairs re-measured).
    std::uint64_t frozenNodes = 0;      ///< Nodes put back at their start position by the failsafe.
    std::uint32_t revertedCloths = 0;   ///< Cloths put back whole at their start.
    std::uint32_t revertedRopes = 0;    ///< Ropes put back whole at their start.
    std::uint32_t ropes = 0;            ///< Ropes on the sphere chains.
    std::uint64_t ropePairs = 0;        ///< Rope node pairs within 1.5 thicknesses, first round (one rope or two).
    std::uint32_t ropeRounds = 0;       ///< Rope rounds of projection.
    std::uint32_t ropeQueries = 0;      ///< Of them, rounds that ran the chain query (the others kept its pairs).
    std::uint32_t ropeMoverUpdates = 0; ///< Of them, rounds that searched the moved nodes' pairs only.
    std::uint64_t ropeClothPairs = 0;   ///< Rope node and cloth face pairs projected.
    double milliseconds = 0;            ///< Time of the self-collision stage (cloths and ropes).
    double contactMilliseconds = 0;     ///< Of it, the cloths' engine query (positions copied in, pairs found).
    double ccdMilliseconds = 0;         ///< Of it, the cloths' CCD queries.
    double projectionMilliseconds = 0;  ///< Of it, the cloths' projections and failsafe (everything but the queries).
    double ropeMilliseconds = 0;        ///< Of it, the ropes' stage (against cloths too).
    double ropeSearchMilliseconds = 0;  ///< Of that, the rope pair search (the chain queries).
};

/// Counters of the last step's contacts with rigid meshes and between soft bodies.
struct SoftMeshStats {
    std::uint64_t contacts = 0;     ///< RContacts made against rigid triangle meshes.
    std::uint32_t queries = 0;      ///< Engine queries run (one per mesh object touched).
    std::uint64_t projected = 0;    ///< Node moves back in front of a mesh after Bullet's solve.
    std::uint64_t faceContacts = 0; ///< Of the RContacts, those of faces a mesh vertex meets (meshFaceContacts).
    std::uint64_t facePushes = 0;   ///< Faces pushed from a mesh vertex after Bullet's solve (meshFaceContacts).
    std::uint64_t softContacts = 0; ///< SContacts made between soft bodies (VF_SS).
    double softMilliseconds = 0;    ///< Time making them (meshes updated, engine query, Bullet's test per record).
};

/// A btDefaultSoftBodySolver that adds self-collision to cloth in Bullet's classic
/// btSoftRigidDynamicsWorld: pass `new bulletgpu::SoftBodySolver()` as the world's last
/// constructor argument. Everything Bullet does stays as it is; after Bullet's own constraint
/// solve of each step (solveConstraints, which the world calls after the rigid step), the
/// faces of every cloth are one engine mesh, its vertex-face and edge-edge pairs within the
/// thickness are projected apart (mass weighted, on the side they were on at the step's start,
/// velocities changed by the moves over the step), and the continuous stage makes sure the step
/// creates no intersection: a cloth free of intersecting non-adjacent triangles at the start of a
/// step is free of them at its end (see bullet_adapter/self_collision_response.h). Ropes are
/// sphere chains whose touching non-neighbour nodes, within a rope and between ropes, are
/// projected to the thickness apart, then kept from passing through each other by the link
/// CCD of the continuous stage (bullet_adapter/soft_rope_chains.h); rope nodes near a cloth's
/// faces are projected back to the side they came from (SoftCollisionConfig::ropeCloth).
class SoftBodySolver : public btDefaultSoftBodySolver {
public:
    /// A solver with `config`. Throws std::invalid_argument on a bad config, std::runtime_error
    /// when Backend::Cuda has no usable device.
    explicit SoftBodySolver(const SoftCollisionConfig& config = {});
    /// Frees the engine.
    ~SoftBodySolver() override;

    /// Implements btSoftBodySolver::optimize: Bullet's, then keeps the cloths' engine meshes and
    /// the ropes' chains in line with the world's soft bodies (added, removed, switched).
    void optimize(btAlignedObjectArray<btSoftBody*>& softBodies, bool forceUpdate = false) override;
    /// Implements btSoftBodySolver::predictMotion: records the start positions, then Bullet's.
    void predictMotion(btScalar solverdt) override;
    /// Implements btSoftBodySolver::solveConstraints: the contacts with rigid triangle meshes and
    /// between soft bodies gathered by processCollision, Bullet's solve, nodes that ended behind a
    /// mesh put back in front of it, faces pushed away from closed meshes' vertices
    /// (SoftCollisionConfig::meshFaceContacts), then the self-collision stage.
    void solveConstraints(btScalar solverdt) override;
    /// Implements btSoftBodySolver::processCollision (soft against rigid): a soft body (SDF_RS)
    /// against a btBvhTriangleMeshShape, btScaledBvhTriangleMeshShape or btGImpactMeshShape object
    /// is only recorded, its contacts made by the engine at the start of solveConstraints
    /// (bullet_adapter/soft_rigid_contacts.h); anything else is Bullet's.
    void processCollision(btSoftBody* body, const btCollisionObjectWrapper* wrap) override;
    /// Implements btSoftBodySolver::processCollision (soft against soft): two bodies colliding by
    /// VF_SS, at least one with faces (cloth against cloth, rope against cloth), are only
    /// recorded, their node-face contacts made by the engine at the start of solveConstraints
    /// (bullet_adapter/soft_soft_contacts.h); anything else is Bullet's.
    void processCollision(btSoftBody* body, btSoftBody* other) override;

    /// Switches self-collision of `body` on or off, overriding SoftCollisionConfig::selfCollision.
    void setSelfCollision(const btSoftBody* body, bool enabled);
    /// Whether self-collision of `body` is on.
    bool selfCollision(const btSoftBody* body) const;

    /// The settings.
    const SoftCollisionConfig& config() const { return m_config; }
    /// The backend the engines run on (Cpu or Cuda).
    Backend backend() const { return m_backend; }
    /// Counters of the last step.
    const SoftCollisionStats& stats() const { return m_stats; }
    /// Counters of the last step's contacts with rigid triangle meshes and between soft bodies.
    const SoftMeshStats& meshStats() const { return m_meshStats; }

private:
    /// The cloths' meshes, the ropes' chains, the CCD query and scratch (defined in the source).
    struct Engine;

    /// Runs the self-collision stage on every cloth, then the ropes' stage.
    void collideSoftBodies();

    SoftCollisionConfig m_config;                           ///< Settings.
    Backend m_backend = Backend::Cpu;                       ///< Backend the engines run on.
    std::unique_ptr<Engine> m_engine;                       ///< What stands behind the solver.
    std::unordered_map<const btSoftBody*, bool> m_switches; ///< Per-body overrides.
    SoftCollisionStats m_stats;                             ///< Counters of the last step.
    SoftMeshStats m_meshStats;                              ///< Mesh and soft-soft counters of the last step.
};

} // namespace bulletgpu
