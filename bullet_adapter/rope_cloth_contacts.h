// SPDX-License-Identifier: Zlib
#pragma once

#include "bullet_adapter/pair_colouring.h"
#include "bullet_adapter/soft_cloth_meshes.h"
#include "bullet_adapter/soft_rope_chains.h"
#include "kernels/narrow/ccd/ccd_swept_bounds.h"

#include <bulletgpu/NarrowContacts.h>

#include <cstdint>
#include <vector>

/// Ropes against cloths in the solver's own response. Bullet's VF_SS contacts between a rope's
/// nodes and a cloth's faces (soft_soft_contacts.h makes them on the engine) go to Bullet's soft
/// SContact solve, which lets a falling rope slip through a cloth; this stage runs after the
/// cloths' and the ropes' own stages and projects each rope node that is within reach of a cloth
/// face back to the mean of the two thicknesses from it, on the side it was on at the start of
/// the step (projectSelfPairs over a mesh of the cloth's nodes followed by the rope's), so that a
/// node that crossed a face during the step goes back.

namespace bulletgpu {

/// The rope-cloth stage of a soft-body world.
class RopeClothContacts {
public:
    /// The stage, its projection on up to `threads` CPU threads (1 or fewer: the calling thread).
    explicit RopeClothContacts(int threads = 1) : m_threads(threads) {}

    /// For every active cloth of `cloths` and every rope of `ropes` whose boxes come within
    /// reach (the mean thickness plus both bodies' largest moves over the step, so that a node
    /// that crossed a face is found), the points-against-mesh query of the rope's nodes against
    /// the cloth's faces on the cloths' engine, then `iterations` passes of projectSelfPairs with
    /// the mean thickness (on the stage's threads); moved nodes are written back to m_x, m_v changed
    /// by the move over the step. A rope with a non-finite node position is left alone; sleeping
    /// bodies do not move.
    void collide(SoftClothMeshes& cloths, const SoftRopeChains& ropes, int iterations);

    /// Rope node and cloth face pairs the last collide() projected.
    std::uint64_t pairCount() const { return m_pairCount; }

private:
    /// Copies m_x of `body`'s `count` nodes into m_end from node `offset` on, with their inverse
    /// masses (0 when the body sleeps); returns the largest distance from `start` (3 per node).
    double load(const btSoftBody& body, std::uint32_t count, std::uint32_t offset, const double* start);

    std::vector<double> m_start;          ///< The cloth's then the rope's start positions.
    std::vector<double> m_end;            ///< Their end positions, projected in place.
    std::vector<double> m_inverseMass;    ///< Their inverse masses.
    std::vector<float> m_points;          ///< The rope's nodes for the query.
    std::vector<PointContact> m_contacts; ///< The query's output.
    std::vector<CcdFeaturePair> m_pairs;  ///< Rope node (after the cloth's nodes), cloth face.
    PairColouring m_colouring;            ///< The projection's colouring.
    std::uint64_t m_pairCount = 0;        ///< pairCount().
    int m_threads;                        ///< The projection's threads.
};

} // namespace bulletgpu
