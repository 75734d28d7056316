// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/chain/chain_ops.h"

#include <bulletgpu/Backend.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

/// Self- and mutual collision of chains of spheres (ropes, cables, catheters, hair) after
/// Ayala, Madera and Moo-Mena, "Self-Collision Detection in Tubular Objects Approximated by
/// Spheres": a bottom-up hierarchy of enclosing spheres over the chains' spheres in order,
/// refitted level by level (on CUDA as independent subtrees, then the levels above them: the
/// paper's aGPU2), each node also bounded by a box. By default the CUDA solver runs one
/// traversal per sphere (the paper's GPU2), or two (GPU2v2) on sets of up to 32,768 spheres,
/// where that measured faster (ChainQuery::traversal picks either), and the CPU solver descends
/// the hierarchy against itself (chain_descent.h), which shares the upper levels' tests among
/// the leaves.

namespace bulletgpu {

/// Counters and timings of the last findContacts().
struct ChainStats {
    std::uint32_t spheres = 0;  ///< Spheres of all chains.
    std::uint32_t chains = 0;   ///< Chains.
    std::uint64_t contacts = 0; ///< Contacts reported.
    bool refitted = false;      ///< Positions or radii had changed, so the hierarchy was refitted.
    double refitMs = 0;         ///< Hierarchy refit (the upload of the leaves included on CUDA).
    double traverseMs = 0;      ///< Traversal (CPU: the sort of its pairs included).
    double contactMs = 0;       ///< Computing the contacts (CUDA: the sort and the copy back included).
};

/// The spheres of all chains, laid out for the hierarchy; what a solver reads.
struct ChainLayout {
    std::vector<ChainSphere> nodes;         ///< Leaves (global sphere order) first, then each level.
    std::vector<FloatBox> boxes;            ///< The same nodes' boxes (written by the solver's refit).
    std::vector<std::uint32_t> sphereChain; ///< Chain of each global sphere.
    std::vector<std::uint32_t> chainStart;  ///< Global index of each chain's first sphere, then the total.
    ChainLevels tree{};                     ///< Level sizes and offsets of the hierarchy.
    std::uint64_t topologyRevision = 0;     ///< Bumped when chains are added or cleared.
    std::uint64_t positionsRevision = 0;    ///< Bumped when any centre or radius changes.
    /// Leaves moveSpheres moved since the solver's last refit, unless wholeMoved (any other
    /// change, or too many of them): a refit may then recompute their paths to the root alone.
    std::vector<std::uint32_t> movedLeaves;
    bool wholeMoved = true; ///< Some change since the last refit is not in movedLeaves.

    /// Records a change movedLeaves does not list (the next refit is whole).
    void markWholeMoved() {
        wholeMoved = true;
        movedLeaves.clear();
    }
};

namespace detail {

/// A backend of SphereChainSet: refits the hierarchy when the positions changed and finds
/// the contacts. Implementations return identical contacts.
class ChainSolver {
public:
    virtual ~ChainSolver() = default;
    /// Refits when `layout` changed since the last call, then writes the sorted contacts.
    virtual void findContacts(ChainLayout& layout, const ChainQuery& query, std::vector<ChainContact>& contacts,
                              ChainStats& stats) = 0;
    /// findContacts, keeping the contacts that hold one of the `count` listed global spheres
    /// (increasing, checked by the caller): one walk per listed sphere (visitPairsOfListed).
    virtual void findContactsOf(ChainLayout& layout, const std::uint32_t* spheres, std::uint32_t count,
                                const ChainQuery& query, std::vector<ChainContact>& contacts, ChainStats& stats) = 0;
    /// The backend and what it runs on.
    virtual std::string description() const = 0;
};

/// The CPU solver on OpenMP threads (threads <= 0: OpenMP's default).
std::unique_ptr<ChainSolver> createCpuChainSolver(int threads);

/// The CUDA solver on `device`; throws std::runtime_error saying why when the library was
/// built without CUDA or the device cannot be used.
std::unique_ptr<ChainSolver> createCudaChainSolver(int device);

} // namespace detail

/// One or many chains of spheres and their contacts, within a chain and between chains.
///
/// Contacts are exactly the pairs that satisfy spheresTouchExact (see chain_ops.h), minus the
/// excluded same-chain neighbours, sorted by (chainA, sphereA, chainB, sphereB), whichever the
/// backend. Moving spheres (setPositions) refits the hierarchy; the next query rebuilds nothing
/// else, and buffers are reused once sizes settle.
class SphereChainSet {
public:
    /// A set on `backend`; `threadsOrDevice` is the OpenMP thread count for Cpu (<= 0: default)
    /// or the device for Cuda. Auto picks CUDA when a device is usable. Cuda throws
    /// std::runtime_error saying why when no device is usable.
    explicit SphereChainSet(Backend backend = Backend::Cpu, int threadsOrDevice = 0);
    ~SphereChainSet();
    SphereChainSet(const SphereChainSet&) = delete;
    SphereChainSet& operator=(const SphereChainSet&) = delete;

    /// Appends a chain of `count` spheres: `centres` holds x, y, z per sphere, `radii` one radius
    /// each (finite, >= 0). Returns the chain's index. Throws std::invalid_argument on bad input.
    std::uint32_t addChain(const float* centres, const float* radii, std::uint32_t count);

    /// Moves the spheres of `chain` (same count as added); `radii` may be null to keep them.
    void setPositions(std::uint32_t chain, const float* centres, const float* radii = nullptr);

    /// Moves the `count` global spheres `spheres` (below sphereCount()) to `centres` (x, y, z
    /// each, in the list's order), radii kept; throws std::invalid_argument on bad input, moving
    /// nothing. The CPU solver's next refit recomputes only their paths to the root while they
    /// are few (the same hierarchy as a whole refit).
    void moveSpheres(const std::uint32_t* spheres, std::uint32_t count, const float* centres);

    /// Removes every chain.
    void clear();

    /// Number of chains.
    std::uint32_t chainCount() const { return static_cast<std::uint32_t>(m_layout.chainStart.size() - 1); }
    /// Spheres of all chains.
    std::uint32_t sphereCount() const { return m_layout.chainStart.back(); }

    /// Writes every contact the query asks for, sorted (see the class comment).
    void findContacts(const ChainQuery& query, std::vector<ChainContact>& contacts);

    /// Writes the contacts findContacts would write that hold one of the `count` global spheres
    /// `spheres` (strictly increasing, below sphereCount(); else std::invalid_argument), in the
    /// same order: one walk of the hierarchy per listed sphere, whatever query.traversal says,
    /// for updating a few spheres' contacts without the whole search.
    void findContactsOf(const std::uint32_t* spheres, std::uint32_t count, const ChainQuery& query,
                        std::vector<ChainContact>& contacts);

    /// The backend in use (Cpu or Cuda).
    Backend backend() const { return m_backend; }
    /// The backend and what it runs on.
    std::string description() const { return m_solver->description(); }
    /// Counters of the last findContacts() or findContactsOf().
    const ChainStats& stats() const { return m_stats; }

private:
    /// Recomputes the level sizes and offsets and sizes the node array.
    void layOutLevels();
    /// Checks, then copies the spheres of one chain into the leaves from global index `first`.
    void writeLeaves(std::uint32_t first, const float* centres, const float* radii, std::uint32_t count);

    Backend m_backend;
    std::unique_ptr<detail::ChainSolver> m_solver;
    ChainLayout m_layout;
    ChainStats m_stats;
};

} // namespace bulletgpu
