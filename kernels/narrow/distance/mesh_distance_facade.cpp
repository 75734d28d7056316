// SPDX-License-Identifier: Zlib
// MeshDistance: owns the meshes and their trees, picks the backend, and turns a call into a
// query for the CPU or the device engine (transforms defaulted, the allowance computed once).
#include "kernels/narrow/distance/mesh_distance.h"

#include "kernels/common/cuda_device.h"
#include "kernels/narrow/distance/distance_ops.h"

#include <algorithm>
#include <cmath>

namespace bulletgpu {

MeshDistance::MeshDistance(Backend backend, int device) {
    if (backend == Backend::Auto) backend = probeCudaDevice(device).usable ? Backend::Cuda : Backend::Cpu;
    if (backend == Backend::Cuda) m_device = detail::createCudaDistanceEngine(device);
}

MeshDistance::~MeshDistance() = default;
MeshDistance::MeshDistance(MeshDistance&&) noexcept = default;
MeshDistance& MeshDistance::operator=(MeshDistance&&) noexcept = default;

std::uint32_t MeshDistance::addMesh(const float* positions, std::uint32_t vertexCount, const std::uint32_t* indices,
                                    std::uint32_t triangleCount, int threads) {
    detail::DistanceMesh mesh;
    mesh.positions.assign(positions, positions + 3 * static_cast<std::size_t>(vertexCount));
    mesh.indices.assign(indices, indices + 3 * static_cast<std::size_t>(triangleCount));
    mesh.magnitude = 0;
    for (const float x : mesh.positions) mesh.magnitude = std::max(mesh.magnitude, std::fabs(static_cast<double>(x)));
    mesh.tree.build(mesh.positions.data(), mesh.indices.data(), triangleCount, threads);
    m_meshes.push_back(std::move(mesh));
    if (m_device) {
        try {
            m_device->addMesh(m_meshes.back());
        } catch (...) {
            m_meshes.pop_back();
            throw;
        }
    }
    return static_cast<std::uint32_t>(m_meshes.size() - 1);
}

DistanceResult MeshDistance::distance(std::uint32_t meshA, const double* transformA, std::uint32_t meshB,
                                      const double* transformB, const DistanceOptions& options) const {
    const detail::DistanceMesh& ma = m_meshes[meshA];
    const detail::DistanceMesh& mb = m_meshes[meshB];
    if (ma.tree.nodes().empty() || mb.tree.nodes().empty()) return DistanceResult{};
    const double* ta = transformA != nullptr ? transformA : cIdentityTransform;
    const double* tb = transformB != nullptr ? transformB : cIdentityTransform;
    const detail::DistanceQuery query{&ma, &mb, meshA, meshB, ta, tb, querySlack(ma.magnitude, ta, mb.magnitude, tb)};
    return m_device ? m_device->distance(query, options) : detail::cpuMeshDistance(query, options);
}

std::string MeshDistance::description() const {
    return m_device ? m_device->description() : std::string("cpu (OpenMP)");
}

} // namespace bulletgpu
