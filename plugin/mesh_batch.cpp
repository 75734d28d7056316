// SPDX-License-Identifier: Zlib
// The mesh batch: the pairs the near callback queued, one contact query over all mesh pairs and
// one points query per mesh over its spheres' centres, the solver rules and the reduction per
// pair, then Bullet's btManifoldResult per point.
#include "mesh_batch.h"

#include "backend_choice.h"
#include "narrow_backend_choice.h"
#include "kernels/common/omp_team.h"
#include "kernels/common/stopwatch.h"
#include "kernels/narrow/geometry/manifold_contact.h"

#include <BulletCollision/CollisionDispatch/btCollisionObjectWrapper.h>
#include <BulletCollision/CollisionDispatch/btManifoldResult.h>
#include <BulletCollision/CollisionShapes/btCollisionShape.h>
#include <BulletCollision/CollisionShapes/btSphereShape.h>
#include <BulletCollision/NarrowPhaseCollision/btPersistentManifold.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace bulletgpu::detail {
namespace {

/// From this many feature contacts in a run, their conversion to solver contacts splits over
/// the threads.
constexpr std::size_t cParallelContacts = 4096;

/// The triangle of a feature for Bullet's shape identifiers.
std::uint32_t triangleOf(const MeshShapeGeometry& g, ProximityKind kind, bool sideA, std::uint32_t feature) {
    const bool vertex = (kind == ProximityKind::VertexFace && sideA) || (kind == ProximityKind::FaceVertex && !sideA);
    if (vertex) return g.vertexTriangles[feature];
    if (kind == ProximityKind::EdgeEdge) return g.edgeTriangles[feature];
    return feature;
}

/// The same contact seen from the other mesh: sides, features and points swapped, normal turned.
ProximityContact swappedSides(const ProximityContact& c) {
    ProximityContact s = c;
    s.meshA = c.meshB;
    s.meshB = c.meshA;
    s.featureA = c.featureB;
    s.featureB = c.featureA;
    const auto kind = static_cast<ProximityKind>(c.kind);
    if (kind == ProximityKind::VertexFace) s.kind = static_cast<std::uint32_t>(ProximityKind::FaceVertex);
    if (kind == ProximityKind::FaceVertex) s.kind = static_cast<std::uint32_t>(ProximityKind::VertexFace);
    for (int k = 0; k < 3; ++k) {
        s.pointA[k] = c.pointB[k];
        s.pointB[k] = c.pointA[k];
        s.normal[k] = -c.normal[k];
    }
    return s;
}

} // namespace

MeshBatch::MeshBatch(const NarrowConfig& config)
    : MeshBatch(config,
                chooseNarrowBackend(config.backend, config.cudaDevice, cpuThreads(config.threads), "mesh contacts")) {}

MeshBatch::MeshBatch(const NarrowConfig& config, const NarrowBackendChoice& backend)
    : m_config(config), m_description(backend.line),
      m_set(backend.backend, backend.backend == Backend::Cuda ? config.cudaDevice : cpuThreads(config.threads)),
      m_instances(m_set), m_threads(cpuThreads(config.threads)) {
    m_set.setTraversal(config.traversal);
    if (config.logBackendChoice) log(m_description);
}

void MeshBatch::log(const std::string& line) const { logLine(m_config.logSink, line); }

void MeshBatch::open() {
    m_requests.clear();
    m_open = true;
}

void MeshBatch::submit(MeshCollisionAlgorithm& algorithm, const btCollisionObjectWrapper* body0,
                       const btCollisionObjectWrapper* body1) {
    const bool swapped = body0->getCollisionObject() != algorithm.body0();
    const btCollisionObjectWrapper* wrappers[2] = {body0, body1};
    MeshRequest request;
    request.algorithm = &algorithm;
    request.manifold = algorithm.manifold();
    request.refresh = algorithm.ownsManifold();
    request.mesh[0] = swapped ? algorithm.meshOfBody1() : algorithm.meshOfBody0();
    request.mesh[1] = swapped ? algorithm.meshOfBody0() : algorithm.meshOfBody1();
    for (int side = 0; side < 2; ++side) {
        request.shape[side] = wrappers[side]->getCollisionShape();
        request.object[side] = wrappers[side]->getCollisionObject();
        request.transform[side] = wrappers[side]->getWorldTransform();
        request.partId[side] = wrappers[side]->m_partId;
        request.index[side] = wrappers[side]->m_index;
    }
    if (m_open) {
        m_requests.push_back(request);
        return;
    }
    open();
    m_requests.push_back(request);
    run();
}

void MeshBatch::cancel(const MeshCollisionAlgorithm& algorithm) {
    if (algorithm.meshOfBody0() != cNoMesh && algorithm.meshOfBody1() != cNoMesh) {
        m_set.forgetFronts(algorithm.meshOfBody0(), algorithm.meshOfBody1());
    }
    if (!m_open) return;
    for (MeshRequest& request : m_requests) {
        if (request.algorithm == &algorithm) request.algorithm = nullptr;
    }
}

void MeshBatch::run() {
    const Clock::time_point start = Clock::now();
    m_open = false;
    ++m_pass;
    m_stats = MeshBatchStats{};
    m_order.clear();
    m_queries.clear();
    double distance = 0;
    for (std::uint32_t r = 0; r < m_requests.size(); ++r) {
        MeshRequest& request = m_requests[r];
        if (request.algorithm == nullptr) continue;
        if (request.mesh[0] == cNoMesh || request.mesh[1] == cNoMesh) {
            queueSphere(r);
            continue;
        }
        m_instances.followDeformation(request.mesh[0], m_pass);
        m_instances.followDeformation(request.mesh[1], m_pass);
        if (!m_instances.place(request.mesh[0], request.transform[0]) ||
            !m_instances.place(request.mesh[1], request.transform[1])) {
            ++m_stats.skippedPairs;
            if (!m_loggedSkip) log("a mesh pair is skipped while an object's transform is not finite (logged once)");
            m_loggedSkip = true;
            continue;
        }
        const double reach = reachOf(request);
        if (!std::isfinite(reach) || reach < 0) {
            ++m_stats.skippedPairs;
            continue;
        }
        distance = std::max(distance, reach);
        m_order.push_back(r);
    }
    // The mesh with fewer triangles goes first: the CPU query walks every triangle of its first
    // mesh through the other's tree, so a hull against a landscape walks the hull's triangles.
    const auto queryOf = [&](std::uint32_t r) {
        const std::uint32_t* mesh = m_requests[r].mesh;
        const bool swap = m_instances.geometry(mesh[0]).indices.size() > m_instances.geometry(mesh[1]).indices.size();
        return swap ? MeshPairQuery{mesh[1], mesh[0]} : MeshPairQuery{mesh[0], mesh[1]};
    };
    std::sort(m_order.begin(), m_order.end(), [&](std::uint32_t x, std::uint32_t y) {
        const MeshPairQuery a = queryOf(x), b = queryOf(y);
        return a.meshA != b.meshA ? a.meshA < b.meshA : a.meshB < b.meshB;
    });
    for (std::uint32_t r : m_order) m_queries.push_back(queryOf(r));
    m_stats.pairs += static_cast<std::uint32_t>(m_queries.size());
    ProximityOptions options;
    options.distance = distance;
    m_set.findProximity(m_queries.data(), static_cast<std::uint32_t>(m_queries.size()), options, m_contacts);
    m_stats.queryMs = m_set.stats().buildMs + m_set.stats().refitMs + m_set.stats().traverseMs;
    m_stats.triangleTests = m_set.stats().triangleTests;
    m_stats.featureContacts = m_contacts.size();
    convertContacts();
    for (std::size_t q = 0; q < m_order.size(); ++q) {
        m_solver.clear();
        for (std::size_t i = m_queryContacts[q]; i < m_queryContacts[q + 1]; ++i) {
            if (m_kept[i] != 0) m_solver.push_back(m_converted[i]);
        }
        m_stats.solverContacts += m_solver.size();
        reduceAndWrite(m_requests[m_order[q]], m_thresholds[q]);
    }
    runSpheres();
    m_requests.clear();
    m_stats.totalMs = millisecondsSince(start);
}

void MeshBatch::convertContacts() {
    // Each query's feature contacts (they come in m_queries' order) and solver threshold.
    const std::size_t queries = m_order.size();
    m_queryContacts.assign(queries + 1, 0);
    m_thresholds.resize(queries);
    std::size_t next = 0;
    for (std::size_t q = 0; q < queries; ++q) {
        m_queryContacts[q] = next;
        while (next < m_contacts.size() && m_contacts[next].meshA == m_queries[q].meshA &&
               m_contacts[next].meshB == m_queries[q].meshB)
            ++next;
        const MeshRequest& request = m_requests[m_order[q]];
        m_thresholds[q] = reachOf(request) - m_instances.geometry(request.mesh[0]).margin -
                          m_instances.geometry(request.mesh[1]).margin;
    }
    m_queryContacts[queries] = next;
    m_converted.resize(m_contacts.size());
    m_kept.resize(m_contacts.size());
    // Each contact on its own (manifoldContact reads the surfaces only), so the queries split
    // over the threads; the manifolds are written afterwards, on the calling thread.
    const auto count = static_cast<std::int64_t>(queries);
    const int team = threadsForRegion(next >= cParallelContacts ? m_threads : 1);
#pragma omp parallel for num_threads(team) if (team > 1) schedule(dynamic, 8)
    for (std::int64_t q = 0; q < count; ++q) {
        const MeshRequest& request = m_requests[m_order[q]];
        const bool swapped = m_queries[q].meshA != request.mesh[0];
        const ContactSurface a = m_instances.surface(request.mesh[0]), b = m_instances.surface(request.mesh[1]);
        for (std::size_t i = m_queryContacts[q]; i < m_queryContacts[q + 1]; ++i) {
            const ProximityContact contact = swapped ? swappedSides(m_contacts[i]) : m_contacts[i];
            m_kept[i] = manifoldContact(contact, a, b, m_converted[i]) && m_converted[i].distance <= m_thresholds[q];
        }
    }
}

double MeshBatch::reachOf(const MeshRequest& request) const {
    const double margins = m_instances.geometry(request.mesh[0]).margin + m_instances.geometry(request.mesh[1]).margin;
    const bool gimpact = request.shape[0]->getShapeType() == GIMPACT_SHAPE_PROXYTYPE ||
                         request.shape[1]->getShapeType() == GIMPACT_SHAPE_PROXYTYPE;
    return margins + (gimpact ? 0.0 : double(request.manifold->getContactBreakingThreshold()));
}

void MeshBatch::reduceAndWrite(const MeshRequest& request, double threshold) {
    // The manifold's points on this request's B, so that resting contacts are kept.
    const btPersistentManifold& manifold = *request.manifold;
    const bool sameOrder = manifold.getBody0() == request.object[0];
    Vec3d held[MANIFOLD_CACHE_SIZE];
    const auto heldCount = static_cast<std::uint32_t>(manifold.getNumContacts());
    for (std::uint32_t i = 0; i < heldCount; ++i) {
        const btManifoldPoint& point = manifold.getContactPoint(static_cast<int>(i));
        const btVector3& onB = sameOrder ? point.getPositionWorldOnB() : point.getPositionWorldOnA();
        held[i] = Vec3d{{onB.x(), onB.y(), onB.z()}};
    }
    std::uint32_t chosen[cMaxReducedContacts];
    const std::uint32_t kept = reduceContactsHolding(m_solver.data(), static_cast<std::uint32_t>(m_solver.size()),
                                                     cMaxReducedContacts, held, heldCount, threshold, chosen);
    ProximityContact reduced[cMaxReducedContacts];
    for (std::uint32_t i = 0; i < kept; ++i) reduced[i] = m_solver[chosen[i]];
    write(request, reduced, kept);
    m_stats.points += kept;
}

namespace {

/// The side of a sphere request that is the sphere.
int sphereSideOf(const MeshRequest& request) { return request.mesh[0] == cNoMesh ? 0 : 1; }

} // namespace

double MeshBatch::sphereReachOf(const MeshRequest& request) const {
    const int sphereSide = sphereSideOf(request);
    const double radius = static_cast<const btSphereShape*>(request.shape[sphereSide])->getRadius();
    return radius + m_instances.geometry(request.mesh[1 - sphereSide]).margin +
           request.manifold->getContactBreakingThreshold();
}

void MeshBatch::queueSphere(std::uint32_t r) {
    const MeshRequest& request = m_requests[r];
    const int sphereSide = sphereSideOf(request), meshSide = 1 - sphereSide;
    const std::uint32_t mesh = request.mesh[meshSide];
    m_instances.followDeformation(mesh, m_pass);
    const btVector3& centre = request.transform[sphereSide].getOrigin();
    if (!m_instances.place(mesh, request.transform[meshSide]) || !std::isfinite(sphereReachOf(request)) ||
        !std::isfinite(double(centre.x()) + centre.y() + centre.z())) {
        ++m_stats.skippedPairs;
        return;
    }
    m_spheres.push_back(r);
}

void MeshBatch::runSpheres() {
    const auto meshOf = [this](std::uint32_t r) {
        const MeshRequest& request = m_requests[r];
        return request.mesh[1 - sphereSideOf(request)];
    };
    std::stable_sort(m_spheres.begin(), m_spheres.end(),
                     [&](std::uint32_t x, std::uint32_t y) { return meshOf(x) < meshOf(y); });
    for (std::size_t first = 0; first < m_spheres.size();) {
        const std::uint32_t mesh = meshOf(m_spheres[first]);
        std::size_t last = first;
        double reach = 0;
        m_centres.clear();
        for (; last < m_spheres.size() && meshOf(m_spheres[last]) == mesh; ++last) {
            const MeshRequest& request = m_requests[m_spheres[last]];
            const btVector3& centre = request.transform[sphereSideOf(request)].getOrigin();
            for (int k = 0; k < 3; ++k) m_centres.push_back(static_cast<float>(centre[k]));
            reach = std::max(reach, sphereReachOf(request));
        }
        m_set.findPointContacts(m_centres.data(), static_cast<std::uint32_t>(last - first), mesh, reach, m_points);
        m_stats.featureContacts += m_points.size();
        // Sorted by point: each sphere's contacts follow one another.
        std::size_t next = 0;
        for (std::size_t i = first; i < last; ++i) {
            const std::size_t begin = next;
            while (next < m_points.size() && m_points[next].point == i - first) ++next;
            writeSphere(m_requests[m_spheres[i]], m_points.data() + begin, m_points.data() + next);
        }
        first = last;
    }
    m_spheres.clear();
}

void MeshBatch::writeSphere(const MeshRequest& request, const PointContact* begin, const PointContact* end) {
    const int sphereSide = sphereSideOf(request);
    const btVector3& centre = request.transform[sphereSide].getOrigin();
    const double radius = static_cast<const btSphereShape*>(request.shape[sphereSide])->getRadius();
    const double meshMargin = m_instances.geometry(request.mesh[1 - sphereSide]).margin;
    const double threshold = request.manifold->getContactBreakingThreshold();
    ++m_stats.pairs;
    const float point[3] = {static_cast<float>(centre.x()), static_cast<float>(centre.y()),
                            static_cast<float>(centre.z())};
    m_solver.clear();
    for (const PointContact* contact = begin; contact != end; ++contact) {
        const PointContact& p = *contact;
        // Along the closest point (a sphere meets a mesh where its centre is nearest), or the
        // triangle's normal when the centre lies on it.
        const btVector3 onMesh(p.onMesh[0], p.onMesh[1], p.onMesh[2]);
        btVector3 out(point[0] - p.onMesh[0], point[1] - p.onMesh[1], point[2] - p.onMesh[2]);
        const double gap = out.length();
        out = gap > 0 ? out / btScalar(gap) : btVector3(p.normal[0], p.normal[1], p.normal[2]);
        const double depth = gap - radius - meshMargin;
        if (depth > threshold) continue;
        const btVector3 surfaceOfMesh = onMesh + out * btScalar(meshMargin);
        const btVector3 surfaceOfSphere = surfaceOfMesh + out * btScalar(depth);
        // In the request's order: B's point, the normal from B to A.
        const bool sphereIsA = sphereSide == 0;
        const btVector3 normal = sphereIsA ? out : -out;
        const btVector3& onA = sphereIsA ? surfaceOfSphere : surfaceOfMesh;
        const btVector3& onB = sphereIsA ? surfaceOfMesh : surfaceOfSphere;
        ProximityContact c{};
        c.meshA = request.mesh[0];
        c.meshB = request.mesh[1];
        c.kind = static_cast<std::uint32_t>(sphereIsA ? ProximityKind::VertexFace : ProximityKind::FaceVertex);
        c.featureA = sphereIsA ? 0 : p.triangle;
        c.featureB = sphereIsA ? p.triangle : 0;
        for (int k = 0; k < 3; ++k) {
            c.pointA[k] = static_cast<float>(onA[k]);
            c.pointB[k] = static_cast<float>(onB[k]);
            c.normal[k] = static_cast<float>(normal[k]);
        }
        c.distance = static_cast<float>(depth);
        m_solver.push_back(c);
    }
    m_stats.solverContacts += m_solver.size();
    reduceAndWrite(request, threshold);
}

void MeshBatch::write(const MeshRequest& request, const ProximityContact* contacts, std::uint32_t count) {
    const btCollisionObjectWrapper body0(nullptr, request.shape[0], request.object[0], request.transform[0],
                                         request.partId[0], request.index[0]);
    const btCollisionObjectWrapper body1(nullptr, request.shape[1], request.object[1], request.transform[1],
                                         request.partId[1], request.index[1]);
    btManifoldResult result(&body0, &body1);
    result.setPersistentManifold(request.manifold);
    const MeshShapeGeometry* a = request.mesh[0] != cNoMesh ? &m_instances.geometry(request.mesh[0]) : nullptr;
    const MeshShapeGeometry* b = request.mesh[1] != cNoMesh ? &m_instances.geometry(request.mesh[1]) : nullptr;
    for (std::uint32_t i = 0; i < count; ++i) {
        const ProximityContact& c = contacts[i];
        const auto kind = static_cast<ProximityKind>(c.kind);
        if (a != nullptr && !a->convex) {
            const std::uint32_t t = triangleOf(*a, kind, true, c.featureA);
            result.setShapeIdentifiersA(a->parts[t], a->partTriangles[t]);
        }
        if (b != nullptr && !b->convex) {
            const std::uint32_t t = triangleOf(*b, kind, false, c.featureB);
            result.setShapeIdentifiersB(b->parts[t], b->partTriangles[t]);
        }
        result.addContactPoint(btVector3(c.normal[0], c.normal[1], c.normal[2]),
                               btVector3(c.pointB[0], c.pointB[1], c.pointB[2]), c.distance);
    }
    if (request.refresh) result.refreshContactPoints();
}

} // namespace bulletgpu::detail
