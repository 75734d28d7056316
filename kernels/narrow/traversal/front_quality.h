// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/TriangleMeshSet.h>

#include <cstdint>

/// The trees' quality as the fronts see it, and when to rebuild (after Wang, Tang et al.,
/// "Efficient BVH-based Collision Detection Scheme with Ordering and Restructuring", 2018,
/// section 4.1), shared by the CPU and CUDA backends so both rebuild on the same query.
///
/// The paper's metric counts front nodes per overlapping leaf pair under a subtree. Refitting a
/// deforming mesh's tree lets its boxes swell and overlap: the leaf walks stop deeper and the
/// front grows while the overlapping leaf pairs do not. Here the fronts are rooted at the query
/// leaves, so the measure is taken over the whole query: front entries per query leaf and
/// overlapping leaf pair. The first query over freshly built trees sets the reference.
///
/// Once a later query's measure exceeds the reference by the rebuild ratio, the front log
/// (front_log.h) finds where: the same measure per subtree of the other tree (entries and
/// overlapping leaf pairs that stop inside it, and its leaves) against the same at the reference
/// query or at the first query after the last restructuring. From the largest subtrees whose
/// measure grew by the ratio and that hold at most half the leaves, the search narrows to a
/// child while the degradation lies in it alone; those subtrees are rebuilt in place before the
/// next query (section 4.2) and the fronts carried over (4.3). When none qualifies, when together
/// they hold over half the leaves, or when the query right after a restructuring is still
/// degraded, the whole tree is built anew.

namespace bulletgpu {

/// Fronts smaller than this never ask for a rebuild (their queries are cheap either way).
constexpr std::uint64_t cMinEntriesForRebuild = 4096;

/// Subtrees with fewer front entries than this are never restructured.
constexpr std::uint64_t cMinEntriesForRestructure = 1024;

/// The quality record of one query's front.
struct FrontQuality {
    double reference = 0;      ///< Measure of the first query over the current trees; 0 until then.
    double last = 0;           ///< Measure of the last query.
    bool restructured = false; ///< The last degraded query restructured subtrees (next time: rebuild).
    bool logStale = true;      ///< The next query records the front log's reference (front_log.h).

    /// The last measure over the reference (1 before there is one).
    double ratio() const { return reference > 0 ? last / reference : 1.0; }
};

/// Front entries per query leaf and overlapping leaf pair.
inline double frontMeasure(std::uint64_t entries, std::uint64_t candidates, std::uint32_t queryLeaves) {
    return static_cast<double>(entries) / static_cast<double>(candidates + queryLeaves);
}

/// Records one query's front in `quality`; returns true when the trees should be rebuilt:
/// the measure exceeds `rebuildRatio` (> 1; 0 never) times the reference.
inline bool recordFrontQuality(FrontQuality& quality, std::uint64_t entries, std::uint64_t candidates,
                               std::uint32_t queryLeaves, double rebuildRatio) {
    if (queryLeaves == 0) return false;
    quality.last = frontMeasure(entries, candidates, queryLeaves);
    if (quality.reference == 0) {
        quality.reference = quality.last;
        return false;
    }
    return rebuildRatio > 0 && entries >= cMinEntriesForRebuild && quality.last > rebuildRatio * quality.reference;
}

} // namespace bulletgpu
