// SPDX-License-Identifier: Zlib
// TriangleMeshSet on the CPU: leaf boxes, tree builds and refits on demand, and the queries.
#include "kernels/narrow/triangle_mesh_set.h"
#include "kernels/common/stopwatch.h"

#include <omp.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>

namespace bulletgpu {
namespace {

/// Boxes of every triangle of a mesh, moved by `transform` unless it is null.
void computeLeafBoxes(const std::vector<float>& positions, const std::vector<std::uint32_t>& indices,
                      const double* transform, std::vector<NarrowBox>& boxes, int threads) {
    const auto count = static_cast<std::int64_t>(indices.size() / 3);
    boxes.resize(static_cast<std::size_t>(count));
#pragma omp parallel for num_threads(threads) schedule(static) if (count >= 4096)
    for (std::int64_t t = 0; t < count; ++t) {
        boxes[t] =
            triangleBox(loadTriangle(positions.data(), indices.data(), static_cast<std::uint32_t>(t), transform));
    }
}

/// Throws unless every coordinate is finite.
void checkFinite(const float* positions, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
        if (!std::isfinite(positions[i])) throw std::invalid_argument("bulletgpu: mesh positions must be finite");
    }
}

} // namespace

TriangleMeshSet::TriangleMeshSet(int threads) : m_threads(threads > 0 ? threads : omp_get_max_threads()) {}

std::uint32_t TriangleMeshSet::addMesh(const float* positions, std::uint32_t vertexCount, const std::uint32_t* indices,
                                       std::uint32_t triangleCount) {
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
    m_meshes.push_back(std::move(mesh));
    return meshCount() - 1;
}

void TriangleMeshSet::checkMesh(std::uint32_t mesh) const {
    if (mesh >= meshCount()) throw std::invalid_argument("bulletgpu: unknown mesh " + std::to_string(mesh));
}

void TriangleMeshSet::setPositions(std::uint32_t index, const float* positions) {
    checkMesh(index);
    Mesh& mesh = m_meshes[index];
    if (!mesh.positions.empty() && positions == nullptr)
        throw std::invalid_argument("bulletgpu: setPositions needs data");
    checkFinite(positions, mesh.positions.size());
    std::copy(positions, positions + mesh.positions.size(), mesh.positions.begin());
    mesh.positionsChanged = true;
    mesh.worldStale = true;
}

void TriangleMeshSet::setTransform(std::uint32_t index, const double* transform) {
    checkMesh(index);
    Mesh& mesh = m_meshes[index];
    mesh.hasTransform = transform != nullptr;
    if (transform != nullptr) std::copy(transform, transform + 12, mesh.transform);
    mesh.worldStale = true;
}

void TriangleMeshSet::requestRebuild(std::uint32_t index) {
    checkMesh(index);
    m_meshes[index].needsBuild = true;
}

void TriangleMeshSet::clear() { m_meshes.clear(); }

void TriangleMeshSet::updateTree(Mesh& mesh) {
    if (!mesh.needsBuild && !mesh.positionsChanged) return;
    const Clock::time_point start = Clock::now();
    computeLeafBoxes(mesh.positions, mesh.indices, nullptr, mesh.leafBoxes, m_threads);
    const auto triangles = static_cast<std::uint32_t>(mesh.indices.size() / 3);
    if (mesh.needsBuild) {
        mesh.tree.build(mesh.leafBoxes.data(), triangles, m_threads);
        ++m_stats.rebuilt;
        m_stats.buildMs += millisecondsSince(start);
    } else {
        mesh.tree.refit(mesh.leafBoxes.data(), m_threads);
        ++m_stats.refitted;
        m_stats.refitMs += millisecondsSince(start);
    }
    mesh.needsBuild = false;
    mesh.positionsChanged = false;
    mesh.worldStale = true;
#if defined(BULLETGPU_VALIDATE)
    assert(mesh.tree.validate(mesh.tree.nodes(), mesh.leafBoxes.data()).empty());
#endif
}

void TriangleMeshSet::updateWorldTree(Mesh& mesh) {
    if (!mesh.hasTransform || !mesh.worldStale) return;
    const Clock::time_point start = Clock::now();
    computeLeafBoxes(mesh.positions, mesh.indices, mesh.transform, mesh.worldLeafBoxes, m_threads);
    mesh.tree.refitInto(mesh.worldLeafBoxes.data(), mesh.worldNodes, m_threads);
    mesh.worldStale = false;
    m_stats.refitMs += millisecondsSince(start);
#if defined(BULLETGPU_VALIDATE)
    assert(mesh.tree.validate(mesh.worldNodes, mesh.worldLeafBoxes.data()).empty());
#endif
}

MeshView TriangleMeshSet::viewOf(std::uint32_t index, bool world) const {
    const Mesh& mesh = m_meshes[index];
    const bool moved = world && mesh.hasTransform;
    const std::vector<LbvhNode>& nodes = moved ? mesh.worldNodes : mesh.tree.nodes();
    return MeshView{nodes.empty() ? nullptr : nodes.data(), mesh.positions.data(), mesh.indices.data(),
                    moved ? mesh.transform : nullptr, index};
}

void TriangleMeshSet::findContacts(const MeshPairQuery* queries, std::uint32_t count,
                                   std::vector<TriangleContact>& contacts) {
    m_stats = NarrowStats{};
    for (std::uint32_t q = 0; q < count; ++q) {
        checkMesh(queries[q].meshA);
        checkMesh(queries[q].meshB);
    }
    m_queries.clear();
    for (std::uint32_t q = 0; q < count; ++q) {
        const MeshPairQuery& query = queries[q];
        const bool self = query.meshA == query.meshB;
        updateTree(m_meshes[query.meshA]);
        updateTree(m_meshes[query.meshB]);
        if (!self) {
            updateWorldTree(m_meshes[query.meshA]);
            updateWorldTree(m_meshes[query.meshB]);
        }
        m_queries.push_back(BvttQuery{viewOf(query.meshA, !self), viewOf(query.meshB, !self), self});
    }
    const Clock::time_point start = Clock::now();
    m_traversal.run(m_queries.data(), count, m_threads, contacts);
    m_stats.traverseMs = millisecondsSince(start);
    m_stats.boxTests = m_traversal.counters().boxTests;
    m_stats.triangleTests = m_traversal.counters().triangleTests;
    m_stats.contacts = contacts.size();
}

void TriangleMeshSet::findSelfContacts(std::uint32_t mesh, std::vector<TriangleContact>& contacts) {
    const MeshPairQuery query{mesh, mesh};
    findContacts(&query, 1, contacts);
}

void TriangleMeshSet::findPairContacts(std::uint32_t meshA, std::uint32_t meshB,
                                       std::vector<TriangleContact>& contacts) {
    if (meshA == meshB) throw std::invalid_argument("bulletgpu: findPairContacts needs two different meshes");
    const MeshPairQuery query{meshA, meshB};
    findContacts(&query, 1, contacts);
}

std::string TriangleMeshSet::validate() const {
    for (std::uint32_t m = 0; m < meshCount(); ++m) {
        const Mesh& mesh = m_meshes[m];
        if (mesh.needsBuild) continue;
        std::string why =
            mesh.tree.validate(mesh.tree.nodes(), mesh.positionsChanged ? nullptr : mesh.leafBoxes.data());
        if (why.empty() && mesh.hasTransform && !mesh.worldStale) {
            why = mesh.tree.validate(mesh.worldNodes, mesh.worldLeafBoxes.data());
        }
        if (!why.empty()) return "mesh " + std::to_string(m) + ": " + why;
    }
    return {};
}

} // namespace bulletgpu
