// SPDX-License-Identifier: Zlib
// TriangleMeshSet on the CPU: leaf boxes, tree builds and refits on demand, and the queries.
#include "kernels/narrow/engine/triangle_mesh_set.h"
#include "kernels/common/cuda_device.h"
#include "kernels/common/stopwatch.h"

#include <omp.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>

namespace bulletgpu {
namespace {

/// Corners (in double, moved by `transform` unless it is null) and boxes of every triangle.
void computeLeafBoxes(const std::vector<float>& positions, const std::vector<std::uint32_t>& indices,
                      const double* transform, std::vector<FloatBox>& boxes, std::vector<Triangle3d>& corners,
                      std::vector<PlaneMinors>& planes, int threads) {
    const auto count = static_cast<std::int64_t>(indices.size() / 3);
    boxes.resize(static_cast<std::size_t>(count));
    corners.resize(static_cast<std::size_t>(count));
    planes.resize(static_cast<std::size_t>(count));
#pragma omp parallel for num_threads(threads) schedule(static) if (count >= 4096)
    for (std::int64_t t = 0; t < count; ++t) {
        const Triangle3d tri = loadTriangle(positions.data(), indices.data(), static_cast<std::uint32_t>(t), transform);
        corners[t] = tri;
        boxes[t] = triangleBox(tri);
        planes[t] = planeMinors(tri.p[0], tri.p[1], tri.p[2]);
    }
}

/// Every OBB of `own` moved by `transform`.
void transformObbs(const double* transform, const std::vector<NarrowObb>& own, std::vector<NarrowObb>& out,
                   int threads) {
    const auto count = static_cast<std::int64_t>(own.size());
    out.resize(own.size());
#pragma omp parallel for num_threads(threads) schedule(static) if (count >= 1024)
    for (std::int64_t i = 0; i < count; ++i) out[i] = transformObb(transform, own[i]);
}

/// Throws unless every coordinate is finite.
void checkFinite(const float* positions, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
        if (!std::isfinite(positions[i])) throw std::invalid_argument("bulletgpu: mesh positions must be finite");
    }
}

} // namespace

TriangleMeshSetImpl::TriangleMeshSetImpl(int threads)
    : m_threads(threads > 0 ? threads : omp_get_max_threads()), m_maxThreads(m_threads), m_treeTuner(m_threads),
      m_queryTuner(m_threads) {}

TriangleMeshSetImpl::TriangleMeshSetImpl(Backend backend, int threadsOrDevice)
    : m_threads(backend == Backend::Cpu && threadsOrDevice > 0 ? threadsOrDevice : omp_get_max_threads()),
      m_maxThreads(m_threads), m_treeTuner(m_threads), m_queryTuner(m_threads) {
    if (backend == Backend::Auto) backend = probeCudaDevice(0).usable ? Backend::Cuda : Backend::Cpu;
    if (backend == Backend::Cuda) m_device = detail::createCudaNarrowEngine(threadsOrDevice);
}

TriangleMeshSetImpl::~TriangleMeshSetImpl() = default;

std::string TriangleMeshSetImpl::description() const {
    return m_device ? m_device->description() : "CPU backend on " + std::to_string(m_maxThreads) + " OpenMP threads";
}

TreeSnapshot TriangleMeshSetImpl::treeSnapshot(std::uint32_t mesh) const {
    checkMesh(mesh);
    if (m_device) return m_device->tree(mesh);
    const Lbvh& tree = m_meshes[mesh].tree;
    const bool oriented = m_meshes[mesh].volume == BoundingVolume::Obb;
    return TreeSnapshot{tree.nodes(), tree.escapes(), tree.leafNodes(),
                        oriented ? m_meshes[mesh].obbs : std::vector<NarrowObb>{}};
}

void TriangleMeshSetImpl::resetFronts() {
    m_fronts.clear();
    m_proximityFronts.clear();
    if (m_device) m_device->resetFronts();
}

void TriangleMeshSetImpl::forgetFronts(std::uint32_t meshA, std::uint32_t meshB) {
    for (const std::uint64_t key :
         {static_cast<std::uint64_t>(meshA) << 32 | meshB, static_cast<std::uint64_t>(meshB) << 32 | meshA}) {
        m_fronts.erase(key);
        m_proximityFronts.erase(key);
    }
}

std::uint32_t TriangleMeshSetImpl::addMesh(const float* positions, std::uint32_t vertexCount,
                                           const std::uint32_t* indices, std::uint32_t triangleCount) {
    if (triangleCount >= (cLeafFlag >> 1)) throw std::invalid_argument("bulletgpu: a mesh holds under 2^30 triangles");
    if ((vertexCount > 0 && positions == nullptr) || (triangleCount > 0 && indices == nullptr)) {
        throw std::invalid_argument("bulletgpu: addMesh needs positions and indices");
    }
    checkFinite(positions, 3 * static_cast<std::size_t>(vertexCount));
    for (std::size_t i = 0; i < 3 * static_cast<std::size_t>(triangleCount); ++i) {
        if (indices[i] >= vertexCount) throw std::invalid_argument("bulletgpu: a triangle index is out of range");
    }
    Mesh mesh;
    mesh.positions.assign(positions, positions + 3 * static_cast<std::size_t>(vertexCount));
    mesh.indices.assign(indices, indices + 3 * static_cast<std::size_t>(triangleCount));
    mesh.frame = principalFrame(positions, indices, triangleCount);
    if (m_device) m_device->addMesh(positions, vertexCount, indices, triangleCount, mesh.frame);
    m_meshes.push_back(std::move(mesh));
    return meshCount() - 1;
}

void TriangleMeshSetImpl::checkMesh(std::uint32_t mesh) const {
    if (mesh >= meshCount()) throw std::invalid_argument("bulletgpu: unknown mesh " + std::to_string(mesh));
}

void TriangleMeshSetImpl::setPositions(std::uint32_t index, const float* positions) {
    checkMesh(index);
    Mesh& mesh = m_meshes[index];
    if (!mesh.positions.empty() && positions == nullptr)
        throw std::invalid_argument("bulletgpu: setPositions needs data");
    checkFinite(positions, mesh.positions.size());
    std::copy(positions, positions + mesh.positions.size(), mesh.positions.begin());
    mesh.positionsChanged = true;
    mesh.frame = MortonFrame{};
    mesh.worldStale = true;
    if (m_device) m_device->setPositions(index, positions);
}

void TriangleMeshSetImpl::setTransform(std::uint32_t index, const double* transform) {
    checkMesh(index);
    if (transform != nullptr && !std::all_of(transform, transform + 12, [](double x) { return std::isfinite(x); })) {
        throw std::invalid_argument("bulletgpu: a mesh transform must be finite");
    }
    Mesh& mesh = m_meshes[index];
    mesh.hasTransform = transform != nullptr;
    if (transform != nullptr) std::copy(transform, transform + 12, mesh.transform);
    mesh.worldStale = true;
    ++mesh.transformVersion;
    if (m_device) m_device->setTransform(index, transform);
}

void TriangleMeshSetImpl::requestRebuild(std::uint32_t index) {
    checkMesh(index);
    m_meshes[index].needsBuild = true;
    if (m_device) m_device->requestRebuild(index);
}

void TriangleMeshSetImpl::clear() {
    m_meshes.clear();
    m_fronts.clear();
    m_proximityFronts.clear();
    if (m_device) m_device->clear();
}

void TriangleMeshSetImpl::setBoundingVolume(std::uint32_t index, BoundingVolume volume) {
    checkMesh(index);
    Mesh& mesh = m_meshes[index];
    if (mesh.volume == volume) return;
    mesh.volume = volume;
    // The next query fits the OBBs anew, and every front is generated anew.
    mesh.volumeChanged = true;
    mesh.worldStale = true;
    resetFronts();
    if (m_device) m_device->setBoundingVolume(index, volume);
}

BoundingVolume TriangleMeshSetImpl::boundingVolume(std::uint32_t index) const {
    checkMesh(index);
    return m_meshes[index].volume;
}

void TriangleMeshSetImpl::setRebuildRatio(double ratio) {
    if (!(ratio == 0 || ratio > 1)) throw std::invalid_argument("bulletgpu: the rebuild ratio is 0 or above 1");
    m_rebuildRatio = ratio;
    if (m_device) m_device->setRebuildRatio(ratio);
}

void TriangleMeshSetImpl::setRestructuring(bool restructure) {
    m_restructuring = restructure;
    if (m_device) m_device->setRestructuring(restructure);
}

void TriangleMeshSetImpl::setTraversal(NarrowTraversal traversal) {
    m_traversal = traversal;
    resetFronts();
}

const BvttFront* TriangleMeshSetImpl::front(std::uint32_t meshA, std::uint32_t meshB) const {
    const auto found = m_fronts.find(static_cast<std::uint64_t>(meshA) << 32 | meshB);
    return found == m_fronts.end() ? nullptr : &found->second;
}

std::vector<FrontEntry> TriangleMeshSetImpl::walkedFront(std::uint32_t meshA, std::uint32_t meshB) const {
    checkMesh(meshA);
    checkMesh(meshB);
    const bool self = meshA == meshB;
    return walkedFrontOf(frontTreeOf(viewOf(meshA, !self)), frontTreeOf(viewOf(meshB, !self)), self);
}

BvttFront& TriangleMeshSetImpl::frontOf(const MeshPairQuery& query) {
    BvttFront& front = m_fronts[static_cast<std::uint64_t>(query.meshA) << 32 | query.meshB];
    const std::uint64_t buildA = m_meshes[query.meshA].tree.buildCount();
    const std::uint64_t buildB = m_meshes[query.meshB].tree.buildCount();
    if (front.buildA != buildA || front.buildB != buildB) {
        front.generated = false;
        front.quality = FrontQuality{};
        front.buildA = buildA;
        front.buildB = buildB;
    }
    return front;
}

void TriangleMeshSetImpl::updateTree(Mesh& mesh) {
    const bool build = mesh.needsBuild, moved = mesh.positionsChanged;
    const bool restructure = !build && !mesh.pendingSubtrees.empty();
    if (!build && !moved && !mesh.volumeChanged && !restructure) return;
    const Clock::time_point start = Clock::now();
    mesh.restructured.clear();
    if (build || moved) {
        computeLeafBoxes(mesh.positions, mesh.indices, nullptr, mesh.leafBoxes, mesh.corners, mesh.planes, m_threads);
        ++mesh.cornersVersion[0];
    }
    if (build) {
        // OBBs of a rigid mesh gain from a tree sorted in its principal frame; boxes do not. A
        // build runs on one thread: its many short parallel steps gained little on two threads
        // (cloth-ball 15.8 against 17.5 ms), and a team sharing its cores with another program
        // waits at every step for a descheduled member (70 to 230 ms instead of 1 to 30).
        mesh.tree.build(mesh.leafBoxes.data(), static_cast<std::uint32_t>(mesh.indices.size() / 3), 1,
                        mesh.volume == BoundingVolume::Obb ? mesh.frame : MortonFrame{});
    } else if (restructure) {
        mesh.restructured.swap(mesh.pendingSubtrees);
        mesh.tree.restructure(mesh.leafBoxes.data(), mesh.restructured, m_threads);
        m_stats.subtreesRestructured += static_cast<std::uint32_t>(mesh.restructured.size());
        m_stats.leavesRestructured += leavesIn(mesh.restructured);
    } else if (moved) {
        mesh.tree.refit(mesh.leafBoxes.data(), m_threads);
    }
    mesh.pendingSubtrees.clear();
    if (build || restructure) ++mesh.topologyVersion;
    if (mesh.volume == BoundingVolume::Obb) {
        // A refit keeps the orientations fitted at the build (or at the switch to OBBs) outside
        // the restructured subtrees.
        mesh.tree.refitObbs(mesh.corners.data(), mesh.obbs, !build && !mesh.volumeChanged, mesh.restructured,
                            m_threads);
    }
    (build || restructure ? m_stats.buildMs : m_stats.refitMs) += millisecondsSince(start);
    if (build) {
        ++m_stats.rebuilt;
    } else if (moved) {
        ++m_stats.refitted;
    }
    // A change of volumes alone is no deformation.
    mesh.refittedSinceBuild = !build && (mesh.refittedSinceBuild || moved);
    mesh.needsBuild = false;
    mesh.positionsChanged = false;
    mesh.volumeChanged = false;
    mesh.worldStale = true;
#if defined(BULLETGPU_VALIDATE)
    assert(mesh.tree.validate(mesh.tree.nodes(), mesh.leafBoxes.data()).empty());
    assert(mesh.volume != BoundingVolume::Obb || mesh.tree.validateObbs(mesh.obbs, mesh.corners.data()).empty());
#endif
}

void TriangleMeshSetImpl::updateWorldTree(Mesh& mesh) {
    if (!mesh.hasTransform || !mesh.worldStale) return;
    const Clock::time_point start = Clock::now();
    computeLeafBoxes(mesh.positions, mesh.indices, mesh.transform, mesh.worldLeafBoxes, mesh.worldCorners,
                     mesh.worldPlanes, m_threads);
    ++mesh.cornersVersion[1];
    mesh.tree.refitInto(mesh.worldLeafBoxes.data(), mesh.worldNodes, m_threads);
    if (mesh.volume == BoundingVolume::Obb) transformObbs(mesh.transform, mesh.obbs, mesh.worldObbs, m_threads);
    mesh.worldStale = false;
    m_stats.refitMs += millisecondsSince(start);
#if defined(BULLETGPU_VALIDATE)
    assert(mesh.tree.validate(mesh.worldNodes, mesh.worldLeafBoxes.data()).empty());
    assert(mesh.volume != BoundingVolume::Obb ||
           mesh.tree.validateObbs(mesh.worldObbs, mesh.worldCorners.data()).empty());
#endif
}

MeshView TriangleMeshSetImpl::viewOf(std::uint32_t index, bool world) const {
    const Mesh& mesh = m_meshes[index];
    const bool moved = world && mesh.hasTransform;
    const std::vector<LbvhNode>& nodes = moved ? mesh.worldNodes : mesh.tree.nodes();
    const bool oriented = mesh.volume == BoundingVolume::Obb;
    const std::vector<NarrowObb>& obbs = moved ? mesh.worldObbs : mesh.obbs;
    const std::vector<Triangle3d>& corners = moved ? mesh.worldCorners : mesh.corners;
    const std::vector<PlaneMinors>& planes = moved ? mesh.worldPlanes : mesh.planes;
    return MeshView{nodes.empty() ? nullptr : nodes.data(),
                    mesh.positions.data(),
                    mesh.indices.data(),
                    moved ? mesh.transform : nullptr,
                    index,
                    mesh.tree.escapes().data(),
                    mesh.tree.leafNodes().data(),
                    static_cast<std::uint32_t>(nodes.size()),
                    mesh.tree.leafCount(),
                    oriented ? obbs.data() : nullptr,
                    corners.empty() ? nullptr : corners.data(),
                    planes.empty() ? nullptr : planes.data(),
                    nullptr};
}

void TriangleMeshSetImpl::orderQueries(const MeshPairQuery* queries, std::uint32_t count) {
    for (std::uint32_t q = 0; q < count; ++q) {
        checkMesh(queries[q].meshA);
        checkMesh(queries[q].meshB);
    }
    m_order.resize(count);
    for (std::uint32_t q = 0; q < count; ++q) m_order[q] = q;
    std::sort(m_order.begin(), m_order.end(), [&](std::uint32_t x, std::uint32_t y) {
        return queries[x].meshA != queries[y].meshA ? queries[x].meshA < queries[y].meshA
                                                    : queries[x].meshB < queries[y].meshB;
    });
}

void TriangleMeshSetImpl::updateTreesOf(const MeshPairQuery& query) {
    updateTree(m_meshes[query.meshA]);
    updateTree(m_meshes[query.meshB]);
    if (query.meshA != query.meshB) {
        updateWorldTree(m_meshes[query.meshA]);
        updateWorldTree(m_meshes[query.meshB]);
    }
}

void TriangleMeshSetImpl::findContacts(const MeshPairQuery* queries, std::uint32_t count,
                                       std::vector<TriangleContact>& contacts) {
    m_stats = NarrowStats{};
    orderQueries(queries, count);
    if (m_device) {
        m_sortedQueries.resize(count);
        for (std::uint32_t q = 0; q < count; ++q) m_sortedQueries[q] = queries[m_order[q]];
        contacts.clear();
        m_device->findContacts(m_sortedQueries.data(), count, m_traversal == NarrowTraversal::Fronts, contacts,
                               m_stats);
        m_stats.contacts = contacts.size();
        return;
    }
    m_queries.clear();
    m_threads = m_treeTuner.threadsForNextUpdate();
    for (std::uint32_t q = 0; q < count; ++q) {
        const MeshPairQuery& query = queries[q];
        const bool self = query.meshA == query.meshB;
        updateTreesOf(query);
        m_queries.push_back(BvttQuery{viewOf(query.meshA, !self), viewOf(query.meshB, !self), self});
    }
    const double treeMs = m_stats.buildMs + m_stats.refitMs;
    if (treeMs > 0) m_treeTuner.record(treeMs);
    m_threads = m_queryTuner.threadsForNextUpdate();
    carryFrontsOver();
    const Clock::time_point start = Clock::now();
    if (m_traversal == NarrowTraversal::Descent) {
        m_descent.run(m_queries.data(), count, m_threads, contacts);
        m_stats.boxTests = m_descent.counters().boxTests;
        m_stats.triangleTests = m_descent.counters().triangleTests;
    } else {
        contacts.clear();
        const bool keep = m_traversal == NarrowTraversal::Fronts;
        for (std::uint32_t q : m_order) {
            BvttFront& front = frontOf(queries[q]);
            // The reference front log (first query over fresh trees) is counted by the
            // traversal itself: a leaf walk would otherwise walk every leaf a second time.
            const bool logReference = front.quality.logStale && m_rebuildRatio > 0;
            m_frontTraversal.run(m_queries[q], front, keep ? FrontRun::Update : FrontRun::Walk, m_threads, contacts,
                                 logReference ? &front.referenceLog : nullptr);
            if (logReference) front.quality.logStale = false;
            const FrontCounters& counters = m_frontTraversal.counters();
            m_stats.boxTests += counters.boxTests;
            m_stats.triangleTests += counters.triangleTests;
            m_stats.frontEntries += counters.frontEntries;
            m_stats.frontsGenerated += counters.generated ? 1 : 0;
            m_stats.testMs += counters.testMs;
            recordQuality(queries[q], m_queries[q], front, counters);
            if (!keep) front.entries.clear();
        }
    }
    m_stats.traverseMs = millisecondsSince(start);
    m_stats.contacts = contacts.size();
    m_queryTuner.record(m_stats.traverseMs);
}

void TriangleMeshSetImpl::carryFrontsOver() {
    for (auto& [key, front] : m_fronts) {
        const auto meshA = static_cast<std::uint32_t>(key >> 32), meshB = static_cast<std::uint32_t>(key);
        Mesh& a = m_meshes[meshA];
        Mesh& b = m_meshes[meshB];
        if (a.restructured.empty() && b.restructured.empty()) continue;
        // A front over a rebuilt tree is generated anew anyway.
        if (!front.generated || front.buildA != a.tree.buildCount() || front.buildB != b.tree.buildCount()) continue;
        const RestructuredRanges inA{a.restructured.data(), static_cast<std::uint32_t>(a.restructured.size())};
        const RestructuredRanges inB{b.restructured.data(), static_cast<std::uint32_t>(b.restructured.size())};
        m_frontTraversal.carryOver(frontTreeOf(viewOf(meshA, false)), frontTreeOf(viewOf(meshB, false)), meshA == meshB,
                                   inA, inB, front, m_threads);
        // The restructured subtrees have new nodes: the next query records the reference log.
        front.quality.logStale = true;
    }
    for (Mesh& mesh : m_meshes) mesh.restructured.clear();
}

void TriangleMeshSetImpl::recordQuality(const MeshPairQuery& query, const BvttQuery& views, BvttFront& front,
                                        const FrontCounters& counters) {
    const std::uint32_t leaves = m_meshes[query.meshA].tree.leafCount();
    const bool degraded =
        recordFrontQuality(front.quality, counters.frontEntries, counters.candidates, leaves, m_rebuildRatio);
    m_stats.worstQualityRatio = std::max(m_stats.worstQualityRatio, front.quality.ratio());
    const FrontTree other = frontTreeOf(views.b);
    // A leaf walk keeps no entries: the leaves walk again when a log needs them.
    const auto recordLog = [&](FrontLog& log) {
        if (m_traversal != NarrowTraversal::Fronts && front.entries.empty()) {
            m_frontTraversal.regenerateEntries(views, front, m_threads);
        }
        log.record(other.nodeCount, front.entries, m_frontTraversal.candidates());
    };
    if (!degraded) {
        front.quality.restructured = false;
        return;
    }
    // The entries stop in meshB's tree; meshA's tree enters the query only through its leaves.
    Mesh& mesh = m_meshes[query.meshB];
    if (!mesh.refittedSinceBuild || mesh.needsBuild) return;
    m_chosen.clear();
    if (m_restructuring && !front.quality.restructured) {
        recordLog(m_frontLog);
        chooseSubtrees(other, m_frontLog, front.referenceLog, m_rebuildRatio, m_chosen);
    }
    if (scheduleRepair(m_chosen, mesh.tree.leafCount(), mesh.pendingSubtrees, front.quality)) {
        mesh.needsBuild = true;
        ++m_stats.rebuildsScheduled;
    } else {
        m_stats.restructuresScheduled += static_cast<std::uint32_t>(m_chosen.size());
    }
}

void TriangleMeshSetImpl::findSelfContacts(std::uint32_t mesh, std::vector<TriangleContact>& contacts) {
    const MeshPairQuery query{mesh, mesh};
    findContacts(&query, 1, contacts);
}

void TriangleMeshSetImpl::findPairContacts(std::uint32_t meshA, std::uint32_t meshB,
                                           std::vector<TriangleContact>& contacts) {
    if (meshA == meshB) throw std::invalid_argument("bulletgpu: findPairContacts needs two different meshes");
    const MeshPairQuery query{meshA, meshB};
    findContacts(&query, 1, contacts);
}

std::string TriangleMeshSetImpl::validateObbsOf(const Mesh& mesh) const {
    std::string why = mesh.tree.validateObbs(mesh.obbs, mesh.corners.data());
    if (why.empty() && mesh.hasTransform && !mesh.worldStale) {
        why = mesh.tree.validateObbs(mesh.worldObbs, mesh.worldCorners.data());
        if (!why.empty()) why = "world " + why;
    }
    return why;
}

std::string TriangleMeshSetImpl::validate() const {
    for (std::uint32_t m = 0; m < meshCount(); ++m) {
        const Mesh& mesh = m_meshes[m];
        if (mesh.needsBuild) continue;
        std::string why =
            mesh.tree.validate(mesh.tree.nodes(), mesh.positionsChanged ? nullptr : mesh.leafBoxes.data());
        if (why.empty() && mesh.hasTransform && !mesh.worldStale) {
            why = mesh.tree.validate(mesh.worldNodes, mesh.worldLeafBoxes.data());
        }
        if (why.empty() && mesh.volume == BoundingVolume::Obb && !mesh.positionsChanged && !mesh.volumeChanged) {
            why = validateObbsOf(mesh);
        }
        if (!why.empty()) return "mesh " + std::to_string(m) + ": " + why;
    }
    return {};
}

} // namespace bulletgpu
