// SPDX-License-Identifier: Zlib
#pragma once

#include "bullet_adapter/rope_collision_response.h"
#include "kernels/chain/sphere_chain.h"
#include "kernels/narrow/ccd/link_ccd.h"

#include <LinearMath/btAlignedObjectArray.h>

#include <cstdint>
#include <vector>

class btSoftBody;

/// Ropes as sphere chains: a soft body without faces whose structural links join consecutive
/// nodes is one SphereChainSet chain whose spheres are its nodes (radius half the thickness),
/// neighbours along the rope within the thickness at rest excluded; one query per step finds
/// the pairs within each rope and between ropes, which the projection pushes apart. A continuous
/// stage then keeps every link from passing through another during the step (LinkCcd).

namespace bulletgpu {

/// One rope on the chain set.
struct RopeChain {
    btSoftBody* body = nullptr;   ///< The soft body.
    std::uint32_t nodeCount = 0;  ///< Nodes when it was registered.
    std::uint32_t linkCount = 0;  ///< Links when it was registered.
    double thickness = 0;         ///< Distance kept between its nodes (twice the sphere radius).
    std::uint32_t neighbours = 0; ///< Same-rope pairs with |i - j| <= this are skipped.
    std::uint32_t first = 0;      ///< Index of its first node in the concatenated buffers.
};

/// The ropes of a soft-body world on one sphere-chain set.
class SoftRopeChains {
public:
    /// A set on `backend` (`threadsOrDevice` as SphereChainSet takes it); the link CCD runs on
    /// `cpuThreads` OpenMP threads.
    SoftRopeChains(Backend backend, int threadsOrDevice, int cpuThreads);

    /// Whether `body` is a rope: at least two nodes, no face, and every link that is not a
    /// bending link joins nodes i and i + 1.
    static bool isRope(const btSoftBody& body);

    /// Keeps one chain for each rope of `bodies` that is in `selected` (per body, same length),
    /// with its thickness; a changed list or topology re-adds the chains.
    void sync(const btAlignedObjectArray<btSoftBody*>& bodies, const std::vector<char>& selected,
              const std::vector<double>& thickness);

    /// Records every rope's m_x as the start of the step.
    void recordStart();

    /// Copies m_x into the end buffers, then up to `rounds` times finds the node pairs within 1.5
    /// times the thickness (same-rope neighbours excluded; a round keeps the pairs of earlier
    /// rounds and steps, searching anew those of the nodes that moved, see updatePairs) and
    /// projects them `iterations` times,
    /// stopping after a round whose pairs all kept their distance (to 0.1% of the thickness), then writes the moved
    /// nodes back (m_v changed by the move over the step). Sleeping ropes do not move.
    /// With `continuous`, before the write-back: the link pairs that come within eta (`etaFraction`
    /// times the thinnest rope's thickness) between
    /// the start and the projected end (LinkCcd, each node moving linearly) put their nodes back
    /// at their start positions, held there while the rounds run again; after cCcdPasses such
    /// passes, every rope still in an impact goes back to its start whole, until none is. So no
    /// link meets another during the step (within eta): ropes that are back at their start do
    /// not move, and the step's start had no link within eta of another but those that were
    /// already there (which the rounds push apart).
    void collide(int iterations, int rounds, bool continuous, double etaFraction);

    /// Ropes on the set.
    std::uint32_t ropeCount() const { return static_cast<std::uint32_t>(m_ropes.size()); }
    /// The chains, in the order of the world's bodies.
    const std::vector<RopeChain>& chains() const { return m_ropes; }
    /// The start-of-step positions of `rope`'s nodes (x, y, z each), as recordStart took them.
    const double* startOf(const RopeChain& rope) const { return m_start.data() + 3 * std::size_t(rope.first); }

    /// Node pairs the last collide() found in its first round.
    std::uint64_t pairCount() const { return m_pairCount; }
    /// Time the last collide() spent finding pairs (positions into the chains, the query, the
    /// pair list), in ms.
    double searchMilliseconds() const { return m_searchMilliseconds; }
    /// Rounds of the last collide(), and of them the rounds that ran the chain query.
    std::uint32_t rounds() const { return m_rounds; }
    std::uint32_t queries() const { return m_queries; } ///< See rounds().
    /// Rounds of the last collide() that searched the moved nodes' pairs only.
    std::uint32_t moverUpdates() const { return m_moverUpdates; }
    /// Link pairs within eta during the last collide()'s step before its continuous stage.
    std::uint64_t linkImpacts() const { return m_linkImpacts; }
    /// Nodes the last collide() put back at their start (ropes sent back whole included).
    std::uint64_t frozenNodes() const { return m_frozenNodes; }
    /// Ropes the last collide() sent back whole.
    std::uint32_t revertedRopes() const { return m_revertedRopes; }

    /// Passes of link CCD, freezing and projection before ropes are sent back whole.
    static constexpr int cCcdPasses = 4;

private:
    /// Writes node g's float search centre for `position` (x, y, z): the position, or when it is
    /// not finite or beyond 1e15 a point of its own far from every other (so the node meets
    /// nothing, as the projection's pairs then never hold it).
    void searchCentre(std::uint32_t g, const double* position, float* centre) const;
    /// Moves the search frame (m_frame) by the median move, per axis, of a sample of the nodes
    /// since their last search: all search positions translated alike keep their distances, so
    /// ropes falling together need no search.
    void shiftFrame();
    /// The nodes (increasing) that have moved since their pairs were last searched, relative to
    /// the search frame (shiftFrame), by (cDetectionScale - 1) / 2 of the thinnest rope's
    /// thickness, less the float rounding, into m_movers. The pair list holds every pair whose
    /// search positions were closer than cDetectionScale times the sum of the radii, so while
    /// neither node of an unlisted pair is a mover the pair stays beyond the sum of the radii:
    /// the projection leaves it alone.
    void findMovers();
    /// Brings the pair list up to date for this round: nothing when no node moved (findMovers),
    /// the movers' pairs searched anew from where they are now (updateMovers) when few did, the
    /// whole search (findPairs) when many did or the list is not current.
    void updatePairs();
    /// Moves the movers' search positions to where they are (in the search frame) and replaces
    /// every listed pair that holds one by the pairs SphereChainSet::findContactsOf finds for them.
    void updateMovers();
    /// Appends the node pairs of m_contacts (same-rope neighbours left out) to `pairs`.
    void appendPairs(std::vector<std::uint32_t>& pairs) const;
    /// Moves the chains to the end buffers and finds the node pairs to project.
    void findPairs();
    /// Writes the end buffers of `rope` back to its nodes.
    void writeBack(const RopeChain& rope) const;
    /// Up to `rounds` rounds of pair search and projection on the end buffers.
    void projectRounds(int iterations, int rounds);
    /// Finds the link pairs within eta over the step (start to end buffers) into m_impacts.
    void findLinkImpacts(double eta);
    /// Puts node g back at its start, held there (no inverse mass) for the rest of the step.
    void freeze(std::uint32_t g);
    /// The rope holding node g.
    std::uint32_t ropeOf(std::uint32_t g) const;
    /// The continuous stage of collide().
    void keepLinksApart(int iterations, int rounds, double eta);

    SphereChainSet m_set;           ///< The chains.
    std::vector<RopeChain> m_ropes; ///< Ropes in the order of the world's bodies.
    std::vector<double> m_start;    ///< Start positions of all nodes.
    std::vector<double> m_end;      ///< End positions of all nodes.
    std::vector<double>
        m_queried; ///< Each node's search position (where its pairs were last searched, less m_frame then).
    double m_frame[3] = {0, 0, 0};        ///< The search frame's translation since the last whole search.
    std::vector<double> m_frameSample;    ///< shiftFrame's sampled moves of one axis.
    double m_farSpacing = 1;              ///< Spacing of the far search centres (searchCentre).
    std::vector<double> m_inverseMass;    ///< Inverse masses (0 for sleeping ropes).
    std::vector<double> m_friction;       ///< Friction coefficient per node (its rope's kDF).
    std::vector<double> m_radius;         ///< Sphere radii.
    std::vector<float> m_centres;         ///< Float centres for the chain set.
    std::vector<float> m_radii;           ///< Float radii for the chain set.
    std::vector<ChainContact> m_contacts; ///< The query's output.
    std::vector<std::uint32_t> m_pairs;   ///< Node pairs (concatenated indices) to project.
    RopePairProjection m_projection;      ///< Projects m_pairs on the threads.
    std::uint32_t m_queryNeighbours = 0;  ///< The query's neighbour exclusion (the ropes' least).
    double m_thinnest = 0;                ///< The least thickness of the ropes.
    std::uint64_t m_pairCount = 0;        ///< Pairs of the last collide()'s first round.
    std::uint64_t m_roundPairs = 0;       ///< Pairs of the first round of the last projectRounds().
    int m_threads;                        ///< OpenMP threads of the projection and the link CCD.
    std::uint32_t m_rounds = 0;           ///< Rounds of the last collide().
    std::uint32_t m_queries = 0;          ///< Of them, rounds that queried.
    std::uint32_t m_moverUpdates = 0;     ///< See moverUpdates().
    std::vector<std::uint32_t> m_movers;  ///< findMovers's nodes.
    std::vector<char> m_isMover;          ///< Per node: in m_movers (0 between updates).
    std::vector<float> m_moverCentres;    ///< The movers' new float centres (x, y, z each).
    std::vector<std::uint32_t> m_newPairs, m_mergedPairs; ///< updateMovers's scratch.
    bool m_listCurrent = false;          ///< Whether m_pairs came from a query of the chains as they are.
    double m_searchMilliseconds = 0;     ///< See searchMilliseconds().
    LinkCcd m_linkCcd;                   ///< The continuous query over the links.
    std::vector<LinkImpact> m_impacts;   ///< Its output.
    std::vector<std::uint32_t> m_firsts; ///< First node of each rope (LinkCcd's view, kept by sync).
    std::vector<std::uint32_t> m_counts; ///< Nodes of each rope (LinkCcd's view, kept by sync).
    std::vector<char> m_frozen;          ///< Whether each node is back at its start.
    std::vector<char> m_reverted;        ///< Whether each rope is back at its start whole.
    std::uint64_t m_linkImpacts = 0;     ///< See linkImpacts().
    std::uint64_t m_frozenNodes = 0;     ///< See frozenNodes().
    std::uint32_t m_revertedRopes = 0;   ///< See revertedRopes().
};

} // namespace bulletgpu
