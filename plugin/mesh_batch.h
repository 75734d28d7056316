// SPDX-License-Identifier: Zlib
#pragma once

#include "bullet_adapter/mesh_instances.h"
#include "narrow_backend_choice.h"
#include "kernels/narrow/geometry/contact_reduction.h"

#include <bulletgpu/CollisionDispatcher.h>
#include <bulletgpu/TriangleMeshSet.h>

#include <LinearMath/btTransform.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

class btCollisionObject;
class btCollisionShape;
class btPersistentManifold;
struct btCollisionObjectWrapper;

namespace bulletgpu::detail {

/// One mesh pair of a step, as its algorithm saw it: what the manifold write needs once the
/// wrappers of the near callback are gone.
struct MeshRequest {
    MeshCollisionAlgorithm* algorithm = nullptr; ///< Null once cancelled.
    btPersistentManifold* manifold = nullptr;    ///< Where the contacts go.
    bool refresh = false;                        ///< The algorithm owns the manifold: refresh it.
    std::uint32_t mesh[2] = {0, 0};              ///< Engine meshes of body0 and body1.
    const btCollisionShape* shape[2] = {nullptr, nullptr};
    const btCollisionObject* object[2] = {nullptr, nullptr};
    btTransform transform[2]; ///< The wrappers' world transforms.
    int partId[2] = {-1, -1};
    int index[2] = {-1, -1};
};

/// The mesh pairs of a dispatch and the engine they run on.
class MeshBatch {
public:
    /// The engine on the backend `config` resolves to (see NarrowConfig).
    explicit MeshBatch(const NarrowConfig& config);

    /// The engine meshes of the world's objects.
    MeshInstances& instances() { return m_instances; }
    /// Opens the batch: requests wait for run().
    void open();
    /// Runs the engine once over the waiting requests, writes their manifolds and closes the batch.
    void run();
    /// Queues a pair (or runs it at once when the batch is not open).
    void submit(MeshCollisionAlgorithm& algorithm, const btCollisionObjectWrapper* body0,
                const btCollisionObjectWrapper* body1);
    /// Forgets the waiting request of an algorithm being destroyed, and the fronts of its pair.
    void cancel(const MeshCollisionAlgorithm& algorithm);
    /// The engine.
    const TriangleMeshSet& engine() const { return m_set; }

    /// The backend the contacts run on.
    Backend backend() const { return m_set.backend(); }
    /// The backend line.
    const std::string& description() const { return m_description; }
    /// Counters of the last run.
    const MeshBatchStats& stats() const { return m_stats; }
    /// Logs one line to the config's sink.
    void log(const std::string& line) const;

private:
    /// How far apart a request's contacts are looked for: the margins, plus the manifold's
    /// breaking threshold unless a side is a GImpact shape (Bullet's GImpact algorithm looks
    /// within the margins only; its convex-concave algorithm adds the threshold).
    double reachOf(const MeshRequest& request) const;
    /// How far from a sphere request's centre its contacts are looked for: the radius, the
    /// mesh's margin and the manifold's breaking threshold.
    double sphereReachOf(const MeshRequest& request) const;
    /// Queues sphere request `r` for runSpheres once its mesh is placed and its centre and
    /// reach are finite (else it is skipped).
    void queueSphere(std::uint32_t r);
    /// Runs the queued spheres: for each mesh, one points-against-mesh query of their centres
    /// within the largest of their reaches; each sphere keeps its contacts within its own.
    void runSpheres();
    /// Writes a sphere request's manifold from its centre's point contacts [begin, end).
    void writeSphere(const MeshRequest& request, const PointContact* begin, const PointContact* end);
    /// Turns every feature contact of the run into a solver contact (manifoldContact) and marks
    /// those kept (within their query's threshold), the queries split over the threads; fills
    /// m_queryContacts, m_thresholds, m_converted and m_kept.
    void convertContacts();
    /// Reduces m_solver (a request's solver contacts) to at most 4, holding the manifold's
    /// points, and writes them.
    void reduceAndWrite(const MeshRequest& request, double threshold);
    /// Writes a request's reduced contacts into its manifold.
    void write(const MeshRequest& request, const ProximityContact* contacts, std::uint32_t count);

    /// The engine on `backend`.
    MeshBatch(const NarrowConfig& config, const NarrowBackendChoice& backend);

    NarrowConfig m_config;
    std::string m_description;
    TriangleMeshSet m_set;
    MeshInstances m_instances;
    int m_threads; ///< Host threads for the contacts' conversion.
    bool m_open = false;
    bool m_loggedSkip = false;
    std::uint64_t m_pass = 0; ///< Runs so far (deformations are looked for once per run).
    std::vector<MeshRequest> m_requests;
    std::vector<std::uint32_t> m_order; ///< Queried requests by engine mesh pair.
    std::vector<MeshPairQuery> m_queries;
    std::vector<ProximityContact> m_contacts;  ///< The engine's feature contacts.
    std::vector<std::size_t> m_queryContacts;  ///< Query q's feature contacts: [m_queryContacts[q], [q + 1]).
    std::vector<double> m_thresholds;          ///< Query q's largest solver distance.
    std::vector<ProximityContact> m_converted; ///< Each feature contact as a solver contact.
    std::vector<std::uint8_t> m_kept;          ///< Whether it is one (manifoldContact, within the threshold).
    std::vector<ProximityContact> m_solver;    ///< One pair's solver contacts.
    std::vector<std::uint32_t> m_spheres;      ///< Queued sphere requests.
    std::vector<float> m_centres;              ///< One mesh's sphere centres.
    std::vector<PointContact> m_points;        ///< Their contacts with the mesh.
    MeshBatchStats m_stats;
};

} // namespace bulletgpu::detail
