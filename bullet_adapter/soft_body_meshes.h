// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/TriangleMeshSet.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

class btSoftBody;

/// Soft bodies' faces as engine meshes that follow their nodes, on one TriangleMeshSet: the
/// soft-soft contacts and the mesh-vertex face contacts each keep one. A body is known by its
/// address and checked by its faces, so a body removed and another made at the same address
/// with other faces gets a mesh of its own; the meshes of bodies that stopped coming are freed.

namespace bulletgpu {

/// The engine meshes of soft bodies' faces.
class SoftBodyMeshes {
public:
    /// An engine on `backend` (`threadsOrDevice` as TriangleMeshSet takes it).
    SoftBodyMeshes(Backend backend, int threadsOrDevice);

    /// The engine.
    TriangleMeshSet& set() { return m_set; }

    /// Starts a pass: meshOf moves each mesh at most once in it. When the idle engine meshes
    /// (those of bodies not asked for in cStalePasses passes, and those left behind when a
    /// body's faces changed) outnumber both the others and cSpareMeshes, the engine is cleared
    /// (every engine mesh index changes) and the meshes of the bodies still coming are made
    /// again as they come.
    void beginPass();

    /// The engine mesh of `body`'s faces (three node indices each) at its m_x, moved there once
    /// a pass; made anew when its faces changed.
    std::uint32_t meshOf(btSoftBody& body) { return meshAt(body, false); }
    /// meshOf, moved to m_x even when this pass moved it already (the caller has moved nodes).
    std::uint32_t meshAtCurrent(btSoftBody& body) { return meshAt(body, true); }

    /// The body whose faces engine mesh `mesh` holds (meshOf since the last clearing).
    btSoftBody* bodyOf(std::uint32_t mesh) const { return m_bodyOfMesh[mesh]; }

    /// Engine meshes held, those of bodies gone included (tests).
    std::uint32_t meshCount() const { return m_set.meshCount(); }

    /// Passes after which a body's mesh counts as stale.
    static constexpr std::uint64_t cStalePasses = 120;
    /// Stale meshes kept however few the others.
    static constexpr std::size_t cSpareMeshes = 8;

private:
    /// A body's faces as an engine mesh.
    struct BodyMesh {
        std::uint32_t mesh = ~0u;           ///< The engine mesh (~0u: none since the last clearing).
        std::vector<float> positions;       ///< m_x as floats.
        std::vector<std::uint32_t> indices; ///< Three node indices per face.
        std::uint64_t seen = 0;             ///< The last pass that asked for it.
    };

    /// meshOf, moving a mesh this pass moved already when `again`.
    std::uint32_t meshAt(btSoftBody& body, bool again);

    TriangleMeshSet m_set;                                    ///< The engine.
    std::unordered_map<const btSoftBody*, BodyMesh> m_meshes; ///< Per body.
    std::vector<btSoftBody*> m_bodyOfMesh;                    ///< The body of each engine mesh.
    std::vector<std::uint32_t> m_scratchIndices;              ///< A body's faces, to compare.
    std::uint64_t m_pass = 0;                                 ///< Passes so far.
};

} // namespace bulletgpu
