// SPDX-License-Identifier: Zlib
// bulletgpu::TriangleMeshSet: the public face of the narrow-phase engine, forwarding to the
// engine behind it (TriangleMeshSetImpl).
#include <bulletgpu/TriangleMeshSet.h>

#include "kernels/narrow/engine/triangle_mesh_set.h"

namespace bulletgpu {

namespace detail {
TriangleMeshSetImpl& implOf(TriangleMeshSet& set) { return *set.m_impl; }
const TriangleMeshSetImpl& implOf(const TriangleMeshSet& set) { return *set.m_impl; }
} // namespace detail

TriangleMeshSet::TriangleMeshSet(int threads) : m_impl(std::make_unique<TriangleMeshSetImpl>(threads)) {}
TriangleMeshSet::TriangleMeshSet(Backend backend, int threadsOrDevice)
    : m_impl(std::make_unique<TriangleMeshSetImpl>(backend, threadsOrDevice)) {}
TriangleMeshSet::~TriangleMeshSet() = default;

Backend TriangleMeshSet::backend() const { return m_impl->backend(); }
std::string TriangleMeshSet::description() const { return m_impl->description(); }

std::uint32_t TriangleMeshSet::addMesh(const float* positions, std::uint32_t vertexCount, const std::uint32_t* indices,
                                       std::uint32_t triangleCount) {
    return m_impl->addMesh(positions, vertexCount, indices, triangleCount);
}
void TriangleMeshSet::setPositions(std::uint32_t mesh, const float* positions) {
    m_impl->setPositions(mesh, positions);
}
void TriangleMeshSet::setTransform(std::uint32_t mesh, const double* transform) {
    m_impl->setTransform(mesh, transform);
}
void TriangleMeshSet::requestRebuild(std::uint32_t mesh) { m_impl->requestRebuild(mesh); }
void TriangleMeshSet::setBoundingVolume(std::uint32_t mesh, BoundingVolume volume) {
    m_impl->setBoundingVolume(mesh, volume);
}
BoundingVolume TriangleMeshSet::boundingVolume(std::uint32_t mesh) const { return m_impl->boundingVolume(mesh); }
void TriangleMeshSet::setTraversal(NarrowTraversal traversal) { m_impl->setTraversal(traversal); }
NarrowTraversal TriangleMeshSet::traversal() const { return m_impl->traversal(); }
void TriangleMeshSet::setRebuildRatio(double ratio) { m_impl->setRebuildRatio(ratio); }
double TriangleMeshSet::rebuildRatio() const { return m_impl->rebuildRatio(); }
void TriangleMeshSet::setRestructuring(bool restructure) { m_impl->setRestructuring(restructure); }
bool TriangleMeshSet::restructuring() const { return m_impl->restructuring(); }
void TriangleMeshSet::resetFronts() { m_impl->resetFronts(); }
void TriangleMeshSet::forgetFronts(std::uint32_t meshA, std::uint32_t meshB) { m_impl->forgetFronts(meshA, meshB); }
void TriangleMeshSet::clear() { m_impl->clear(); }
std::uint32_t TriangleMeshSet::meshCount() const { return m_impl->meshCount(); }

void TriangleMeshSet::findSelfContacts(std::uint32_t mesh, std::vector<TriangleContact>& contacts) {
    m_impl->findSelfContacts(mesh, contacts);
}
void TriangleMeshSet::findPairContacts(std::uint32_t meshA, std::uint32_t meshB,
                                       std::vector<TriangleContact>& contacts) {
    m_impl->findPairContacts(meshA, meshB, contacts);
}
void TriangleMeshSet::findContacts(const MeshPairQuery* queries, std::uint32_t count,
                                   std::vector<TriangleContact>& contacts) {
    m_impl->findContacts(queries, count, contacts);
}
void TriangleMeshSet::findProximity(const MeshPairQuery* queries, std::uint32_t count, const ProximityOptions& options,
                                    std::vector<ProximityContact>& contacts) {
    m_impl->findProximity(queries, count, options, contacts);
}
void TriangleMeshSet::findSelfProximity(std::uint32_t mesh, const ProximityOptions& options,
                                        std::vector<ProximityContact>& contacts) {
    m_impl->findSelfProximity(mesh, options, contacts);
}
void TriangleMeshSet::findPairProximity(std::uint32_t meshA, std::uint32_t meshB, const ProximityOptions& options,
                                        std::vector<ProximityContact>& contacts) {
    m_impl->findPairProximity(meshA, meshB, options, contacts);
}
void TriangleMeshSet::findPointContacts(const float* points, std::uint32_t count, std::uint32_t mesh, double distance,
                                        std::vector<PointContact>& contacts) {
    m_impl->findPointContacts(points, count, mesh, distance, contacts);
}

std::string TriangleMeshSet::validate() const { return m_impl->validate(); }
const NarrowStats& TriangleMeshSet::stats() const { return m_impl->stats(); }
int TriangleMeshSet::threads() const { return m_impl->threads(); }

} // namespace bulletgpu
