// SPDX-License-Identifier: Zlib
#pragma once

#include "bullet_adapter/self_collision_response.h"
#include "kernels/narrow/ccd/ccd_frame_query.h"
#include "kernels/narrow/geometry/mesh_features.h"

#include <bulletgpu/TriangleMeshSet.h>

#include <LinearMath/btAlignedObjectArray.h>

#include <cstdint>
#include <memory>
#include <vector>

class btSoftBody;

/// Soft bodies with faces as engine meshes: each cloth's faces are one TriangleMeshSet mesh whose
/// positions follow the nodes' m_x, with the flat buffers of one step (start and end positions
/// in double, inverse masses) that the self-collision response works on.

namespace bulletgpu {

/// One soft body's faces and its buffers.
struct ClothMesh {
    btSoftBody* body = nullptr;             ///< The soft body.
    std::uint32_t mesh = 0;                 ///< Its engine mesh.
    std::uint32_t nodeCount = 0;            ///< Nodes when it was registered.
    std::uint32_t faceCount = 0;            ///< Faces when it was registered.
    double thickness = 0;                   ///< Distance kept between its features.
    std::vector<std::uint32_t> indices;     ///< Three node indices per face.
    MeshFeatures features;                  ///< Edges, as the engine numbers them.
    std::vector<float> positions;           ///< m_x as floats, for the engine.
    std::vector<double> start;              ///< m_x at the start of the step.
    std::vector<double> end;                ///< m_x after Bullet's solver, then corrected.
    std::vector<double> inverseMass;        ///< m_im per node.
    std::vector<CcdFeaturePair> excluded;   ///< Pairs within the thickness when it joined, sorted.
    std::vector<CcdFeaturePair> pairs;      ///< This step's contact pairs.
    std::vector<double> queried;            ///< m_x when the contact query read it (end before the projection).
    double nearest = 0;                     ///< Smallest distance the query reported for the cloth (+inf: none).
    bool started = false;                   ///< start holds this step's positions.
    std::vector<double> listed;             ///< end when the engine last queried it (the candidates' positions).
    std::vector<CcdFeaturePair> candidates; ///< Pairs the engine found within `reach` at `listed` (excluded too).
    double reach = 0;                       ///< The engine query's distance at `listed`.
    bool listValid = false;                 ///< The candidates hold every pair within `reach` at `listed`.

    /// The response's view of the buffers.
    SelfCollisionMesh view();
};

/// The cloths of a soft-body world on one engine.
class SoftClothMeshes {
public:
    /// An engine on `backend` (`threadsOrDevice` as TriangleMeshSet takes it).
    SoftClothMeshes(Backend backend, int threadsOrDevice);

    /// Keeps one mesh for each body of `bodies` that has faces and is in `selected`
    /// (true per body, same length), with its thickness; a changed list or topology re-adds the
    /// meshes (the engine removes none), a new body's pairs within its thickness are excluded.
    void sync(const btAlignedObjectArray<btSoftBody*>& bodies, const std::vector<char>& selected,
              const std::vector<double>& thickness);

    /// Records every active cloth's m_x as the start of the step.
    void recordStart();

    /// Copies every started cloth's m_x into its end buffer and m_im into its inverse masses.
    void readEnds();

    /// Finds every started cloth's contact pairs within its thickness at its end positions (pairs
    /// excluded at registration dropped), and keeps the positions they were found at and the
    /// smallest distance among them (excluded pairs and intersecting triangles too) for the
    /// continuous stage's skip. The engine answers in one query. For a cloth whose nodes moved
    /// over the step (start to end), relative to the rest of the cloth, by less than a quarter of
    /// `reachFraction` times its thickness, the query reaches that far beyond the thickness and
    /// its pairs are kept as candidates: a later step measures them again instead of querying
    /// while no node has moved from where the query saw it, relative to the rest of its cloth, by
    /// so much that a pair beyond the reach could have come within the thickness (0: the engine
    /// queries every step, at the thickness). Same pairs either way.
    void findPairs(double reachFraction = 0);

    /// Cloths the engine queried in the last findPairs (the others measured their kept pairs).
    std::uint32_t queriedCloths() const { return static_cast<std::uint32_t>(m_queries.size()); }

    /// Writes the end buffers back to m_x; each moved node's velocity changes by its move over `dt`.
    void writeBack(ClothMesh& cloth, double dt) const;

    /// The cloths.
    std::vector<ClothMesh>& cloths() { return m_cloths; }

    /// The engine.
    TriangleMeshSet& engine() { return *m_engine; }

private:
    /// Adds the engine mesh of `cloth` (re-reading its topology when `fresh`).
    void addMesh(ClothMesh& cloth, bool fresh);

    std::unique_ptr<TriangleMeshSet> m_engine; ///< The engine.
    std::vector<ClothMesh> m_cloths;           ///< Cloths in the order of the world's bodies.
    std::vector<MeshPairQuery> m_queries;      ///< One self query per active cloth.
    std::vector<std::uint32_t> m_queryCloth;   ///< Cloth of each engine mesh.
    std::vector<ProximityContact> m_contacts;  ///< The query's output.
};

} // namespace bulletgpu
