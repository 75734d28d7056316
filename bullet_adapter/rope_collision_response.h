// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/thread_tuner.h"

#include <cstddef>
#include <cstdint>
#include <vector>

/// The response to rope contacts on flat buffers (no Bullet type): node pairs of one or several
/// ropes, each node a sphere, pushed apart to the sum of their radii.

namespace bulletgpu {

/// The nodes of all ropes over one step, in one concatenated array.
struct RopeNodes {
    std::uint32_t count = 0;             ///< Nodes.
    const double* start = nullptr;       ///< x, y, z per node at the start of the step.
    double* end = nullptr;               ///< x, y, z per node at the end; corrected in place.
    const double* inverseMass = nullptr; ///< Inverse mass per node (0: pinned, never moved).
    const double* radius = nullptr;      ///< Sphere radius per node (half its rope's thickness).
    const double* friction = nullptr;    ///< Friction coefficient per node (its rope's kDF); null: none.
};

/// A node's state for the passes in one cache line, so that a pair reads one line per node.
struct alignas(64) RopeNodeState {
    double end[3];      ///< x, y, z at the end; corrected in place.
    double radius;      ///< Sphere radius.
    double start[3];    ///< x, y, z at the start of the step.
    double inverseMass; ///< Inverse mass (0: pinned).
};

/// Projects rope node pairs apart, on OpenMP threads, with the same result for any thread count.
///
/// Every pair of nodes closer than the sum of their radii at the end is pushed to that distance,
/// `iterations` times (Gauss-Seidel), each node by its share of the pair's inverse masses. The
/// direction is from the second node to the first at the end, turned around when it points
/// against their direction at the start (they passed through each other during the step), or the
/// start direction when they coincide. With friction (position-based, as Macklin et al. 2014,
/// "Unified Particle Physics for Real-Time Applications", 6.1): the pair's relative move over the
/// step across that direction is then taken away, shared as the push, entirely while it is within
/// mu times the push (the nodes stick), else cut by mu times the push (they slide); mu is the
/// larger coefficient of the two nodes. A pair with a position that is not finite is left alone.
///
/// The order. Below cGroupedFrom pairs, each pass takes the pairs in list order. From there, the
/// nodes are cut into cSlabs slabs of about equal counts (of evenly spaced samples) along the
/// axis their end positions spread most on (when a pass starts: they move within it), and each
/// pass takes, in this order: the pairs inside each slab; those across each even boundary (slabs
/// 2k and 2k + 1); those across each odd one; those across more than one boundary; each group in
/// list order. The groups of one phase share no node, so they run on the threads in any order
/// with the same result; one thread takes each phase's pairs in list order (the same result,
/// with the list's locality). The grouped order's passes read each node from one cache line: the
/// nodes are copied into RopeNodeState before them and their end positions copied back after.
class RopePairProjection {
public:
    /// Below this many pairs, list order on one thread.
    static constexpr std::size_t cGroupedFrom = 4096;
    /// Slabs of the grouped order (a constant, so that the order does not depend on threads). On
    /// two threads 8 slabs balance well and few pairs cross (about 4%).
    static constexpr std::uint32_t cSlabs = 8;

    /// Projects `count` pairs (two node indices each) `iterations` times on up to `threads`
    /// threads. Returns the largest shortfall (sum of radii minus separation) the first pass found,
    /// 0 when every pair was apart.
    double project(const RopeNodes& nodes, const std::uint32_t* pairs, std::size_t count, int iterations, int threads);

private:
    /// Groups: slabs, then the cSlabs - 1 boundaries, then one for pairs across several.
    static constexpr std::uint32_t cGroups = 2 * cSlabs;

    /// Cuts the nodes into slabs (m_slab) along their widest axis, on `team` threads.
    void assignSlabs(const RopeNodes& nodes, int team);
    /// Sorts the pairs, each group's in list order, into m_grouped with m_groupStarts: by group for
    /// a team; by phase for one thread, which leaves the first phase's in the list.
    void groupPairs(const std::uint32_t* pairs, std::size_t count, int team);
    /// Copies the nodes into m_states, on `team` threads.
    void packStates(const RopeNodes& nodes, int team);
    /// Copies m_states' end positions back, on `team` threads.
    void unpackStates(const RopeNodes& nodes, int team) const;
    /// Projects the pairs of m_groupStarts' range g once; returns the largest shortfall in it.
    double projectGroup(const RopeNodes& nodes, std::uint32_t g);

    std::vector<std::uint32_t> m_slab;        ///< Slab per node.
    std::vector<std::uint32_t> m_histogram;   ///< Nodes per bin of the widest axis.
    std::vector<std::uint8_t> m_pairGroup;    ///< Group (or phase, on one thread) per pair.
    std::vector<std::uint32_t> m_groupStarts; ///< Where each group (or phase) starts in m_grouped.
    std::vector<std::uint32_t> m_grouped;     ///< Pairs (two node indices each) by group.
    std::vector<RopeNodeState> m_states;      ///< The nodes while the passes of a grouped order run.
    std::vector<double> m_largest;            ///< Largest first-pass shortfall per group.
    ThreadTuner m_tuner{1};                   ///< One thread or the team, by timing.
    int m_tunedThreads = 1;                   ///< The `threads` m_tuner was made for.
};

} // namespace bulletgpu
