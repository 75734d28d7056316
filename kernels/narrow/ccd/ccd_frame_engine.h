// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/narrow/ccd/ccd_frame_query.h"

#include <cstdint>
#include <memory>
#include <string>

/// The device side of CcdFrameQuery (ccd_frame_query.h): the host prepares each mesh (positions,
/// features, swept triangle boxes, tree) as on the CPU, and an engine behind this interface runs
/// the rest of the query on a device, the features' swept bounds first.

namespace bulletgpu::detail {

/// One mesh as the host prepared it: host arrays, read during CcdDeviceEngine::run only.
struct CcdPreparedSide {
    CcdMeshView mesh;               ///< Positions, triangles and features (no swept bounds).
    std::uint32_t vertexCount;      ///< Vertices (x0, x1, vertexBounds).
    std::uint32_t edgeCount;        ///< Edges (edges holds two indices each, edgeBounds one bound).
    std::uint32_t triangleCount;    ///< Triangles (indices and triangleEdges three each; owned, faceBounds).
    const LbvhNode* nodes;          ///< Tree over the grown swept triangle boxes, depth-first.
    const std::uint32_t* escape;    ///< Node after each node's subtree.
    const std::uint32_t* leaves;    ///< Leaf nodes in depth-first order.
    std::uint32_t nodeCount;        ///< Nodes of the tree.
    std::uint32_t leafCount;        ///< Leaves of the tree.
    std::uint64_t featuresRevision; ///< Changes whenever indices, edges or ownership change.
};

/// Runs the tree walk, expansion, filters, exact tests and sort of a whole-frame CCD query.
class CcdDeviceEngine {
public:
    virtual ~CcdDeviceEngine() = default;

    /// Finds the impacts of `sides` (sides[0] alone when `self`, else A and B): writes
    /// out.impacts (sorted by featurePairBefore), out.earliestToi and every count and time of
    /// out.counts but boxMs, exactly as the CPU path computes them.
    virtual void run(const CcdPreparedSide* sides, bool self, const CcdFrameOptions& options, CcdFrameResult& out) = 0;

    /// The device's name.
    virtual const std::string& deviceName() const = 0;
};

/// The CUDA engine on `device`; throws std::runtime_error, saying why, when it is not usable
/// (or the library was built without CUDA).
std::unique_ptr<CcdDeviceEngine> createCudaCcdEngine(int device);

} // namespace bulletgpu::detail
