// SPDX-License-Identifier: Zlib
#include "bullet_adapter/rope_collision_response.h"

#include "kernels/common/omp_team.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace bulletgpu {

namespace {

/// A node's end and start positions, radius and inverse mass in RopeNodes' arrays (lists too
/// short to pay for packing them).
struct SpreadNodes {
    const RopeNodes& m; ///< The arrays.
    double* end(std::uint32_t i) const { return m.end + 3 * static_cast<std::size_t>(i); }
    const double* start(std::uint32_t i) const { return m.start + 3 * static_cast<std::size_t>(i); }
    double radius(std::uint32_t i) const { return m.radius[i]; }
    double inverseMass(std::uint32_t i) const { return m.inverseMass[i]; }
};

/// The same in one RopeNodeState per node: a pair's test reads one cache line per node.
struct PackedNodes {
    RopeNodeState* s; ///< One per node.
    double* end(std::uint32_t i) const { return s[i].end; }
    const double* start(std::uint32_t i) const { return s[i].start; }
    double radius(std::uint32_t i) const { return s[i].radius; }
    double inverseMass(std::uint32_t i) const { return s[i].inverseMass; }
};

/// Projects nodes i and j, their positions, radii and masses read through `at`, to the sum of
/// their radii apart (see RopePairProjection); returns the shortfall it corrected.
template <typename At>
double projectPair(const RopeNodes& m, const At& at, std::uint32_t i, std::uint32_t j) {
    double* const xi = at.end(i);
    double* const xj = at.end(j);
    const double* const si = at.start(i);
    const double* const sj = at.start(j);
    double gap[3], startGap[3];
    for (int k = 0; k < 3; ++k) gap[k] = xi[k] - xj[k];
    const double distance2 = gap[0] * gap[0] + gap[1] * gap[1] + gap[2] * gap[2];
    const double target = at.radius(i) + at.radius(j);
    // Most listed pairs are apart: settled on squares, before the masses, the root and the start
    // positions (as is a pair with a position that is not finite).
    if (!(distance2 < target * target)) return 0;
    const double wi = at.inverseMass(i), wj = at.inverseMass(j);
    const double weightSum = wi + wj;
    if (!(weightSum > 0)) return 0;
    const double distance = std::sqrt(distance2);
    if (distance >= target) return 0;
    for (int k = 0; k < 3; ++k) startGap[k] = si[k] - sj[k];
    double n[3];
    double separation = distance;
    if (distance > 0) {
        for (int k = 0; k < 3; ++k) n[k] = gap[k] / distance;
        if (n[0] * startGap[0] + n[1] * startGap[1] + n[2] * startGap[2] < 0) {
            for (double& c : n) c = -c;
            separation = -distance;
        }
    } else {
        const double startLength =
            std::sqrt(startGap[0] * startGap[0] + startGap[1] * startGap[1] + startGap[2] * startGap[2]);
        if (!(startLength > 0)) return 0;
        for (int k = 0; k < 3; ++k) n[k] = startGap[k] / startLength;
    }
    const double push = target - separation;
    const double lambda = push / weightSum;
    for (int k = 0; k < 3; ++k) {
        xi[k] += lambda * wi * n[k];
        xj[k] -= lambda * wj * n[k];
    }
    const double mu = m.friction ? std::max(m.friction[i], m.friction[j]) : 0;
    if (mu > 0) {
        double slip[3]; // Relative move over the step, across the normal.
        for (int k = 0; k < 3; ++k) slip[k] = (xi[k] - si[k]) - (xj[k] - sj[k]);
        const double along = slip[0] * n[0] + slip[1] * n[1] + slip[2] * n[2];
        for (int k = 0; k < 3; ++k) slip[k] -= along * n[k];
        const double length = std::sqrt(slip[0] * slip[0] + slip[1] * slip[1] + slip[2] * slip[2]);
        if (length > 0) {
            const double taken = (length <= mu * push ? 1 : mu * push / length) / weightSum;
            for (int k = 0; k < 3; ++k) {
                xi[k] -= taken * wi * slip[k];
                xj[k] += taken * wj * slip[k];
            }
        }
    }
    return push;
}

/// Bins of the histogram that cuts the nodes into slabs.
constexpr std::uint32_t cBins = 1024;
/// About this many nodes, evenly spaced in the list, place the cut.
constexpr std::uint32_t cCutSamples = 8192;

/// The phase group g runs in.
int phaseOf(std::uint32_t g, std::uint32_t slabs) {
    if (g < slabs) return 0;
    if (g == 2 * slabs - 1) return 3;
    return (g - slabs) % 2 == 0 ? 1 : 2;
}

/// Projects the listed pairs once, those with a zero in `phase` when it is not null; returns the
/// largest shortfall.
template <typename At>
double projectListed(const RopeNodes& nodes, const At& at, const std::uint32_t* pairs, std::size_t count,
                     const std::uint8_t* phase) {
    double largest = 0;
    for (std::size_t p = 0; p < count; ++p)
        if (phase == nullptr || phase[p] == 0)
            largest = std::max(largest, projectPair(nodes, at, pairs[2 * p], pairs[2 * p + 1]));
    return largest;
}

} // namespace

void RopePairProjection::assignSlabs(const RopeNodes& nodes, int team) {
    m_slab.resize(nodes.count);
    // The cut is only a balance between the groups: every stride-th node places it.
    const std::uint32_t stride = std::max<std::uint32_t>(1, nodes.count / cCutSamples);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (std::uint32_t i = 0; i < nodes.count; i += stride) {
        for (int k = 0; k < 3; ++k) {
            const double x = nodes.end[3 * i + k];
            if (!std::isfinite(x)) continue;
            lo[k] = std::min(lo[k], x);
            hi[k] = std::max(hi[k], x);
        }
    }
    int axis = 0;
    for (int k = 1; k < 3; ++k)
        if (hi[k] - lo[k] > hi[axis] - lo[axis]) axis = k;
    const double extent = hi[axis] - lo[axis];
    // No spread (or nothing finite): one slab, the groups' order is the list's.
    if (!(extent > 0) || !std::isfinite(extent)) {
        std::fill(m_slab.begin(), m_slab.end(), 0);
        return;
    }
    const double scale = cBins / extent;
    // A node's bin, those beyond the samples' range in the end bins; one that is not finite
    // goes to the first.
    const auto binOf = [&](std::uint32_t i) {
        const double t = (nodes.end[3 * i + axis] - lo[axis]) * scale;
        if (!(t >= 0)) return std::uint32_t{0};
        return t >= cBins - 1 ? cBins - 1 : static_cast<std::uint32_t>(t);
    };
    m_histogram.assign(cBins, 0);
    std::uint64_t samples = 0;
    for (std::uint32_t i = 0; i < nodes.count; i += stride, ++samples) ++m_histogram[binOf(i)];
    // Each bin goes whole to the slab its first sample's rank falls in.
    std::uint64_t before = 0;
    for (std::uint32_t& bin : m_histogram) {
        const std::uint64_t inBin = bin;
        bin = static_cast<std::uint32_t>(before * cSlabs / samples);
        before += inBin;
    }
    const auto count = static_cast<std::int64_t>(nodes.count);
#pragma omp parallel for num_threads(team) if (team > 1) schedule(static)
    for (std::int64_t i = 0; i < count; ++i) m_slab[i] = m_histogram[binOf(static_cast<std::uint32_t>(i))];
}

void RopePairProjection::groupPairs(const std::uint32_t* pairs, std::size_t count, int team) {
    m_pairGroup.resize(count);
    const auto pairCount = static_cast<std::int64_t>(count);
#pragma omp parallel for num_threads(team) if (team > 1) schedule(static)
    for (std::int64_t p = 0; p < pairCount; ++p) {
        const std::uint32_t a = m_slab[pairs[2 * p]], b = m_slab[pairs[2 * p + 1]];
        const std::uint32_t low = std::min(a, b), high = std::max(a, b);
        const std::uint32_t g = low == high ? low : (high == low + 1 ? cSlabs + low : cGroups - 1);
        // One thread takes each phase in list order: the same result (see RopePairProjection).
        m_pairGroup[p] = static_cast<std::uint8_t>(team > 1 ? g : static_cast<std::uint32_t>(phaseOf(g, cSlabs)));
    }
    // One thread reads the pairs inside slabs (phase 0, most of them) from the list itself.
    const bool listed = team == 1;
    m_groupStarts.assign(cGroups + 1, 0);
    for (const std::uint8_t g : m_pairGroup)
        if (!listed || g != 0) ++m_groupStarts[g + 1];
    for (std::uint32_t g = 0; g < cGroups; ++g) m_groupStarts[g + 1] += m_groupStarts[g];
    m_grouped.resize(2 * static_cast<std::size_t>(m_groupStarts[cGroups]));
    std::uint32_t next[cGroups]; // Each group's next place.
    std::copy(m_groupStarts.begin(), m_groupStarts.end() - 1, next);
    for (std::size_t p = 0; p < count; ++p) {
        if (listed && m_pairGroup[p] == 0) continue;
        const std::uint32_t at = next[m_pairGroup[p]]++;
        m_grouped[2 * static_cast<std::size_t>(at)] = pairs[2 * p];
        m_grouped[2 * static_cast<std::size_t>(at) + 1] = pairs[2 * p + 1];
    }
}

void RopePairProjection::packStates(const RopeNodes& nodes, int team) {
    m_states.resize(nodes.count);
    const auto count = static_cast<std::int64_t>(nodes.count);
#pragma omp parallel for num_threads(team) if (team > 1) schedule(static)
    for (std::int64_t i = 0; i < count; ++i) {
        RopeNodeState& state = m_states[i];
        for (int k = 0; k < 3; ++k) {
            state.end[k] = nodes.end[3 * i + k];
            state.start[k] = nodes.start[3 * i + k];
        }
        state.radius = nodes.radius[i];
        state.inverseMass = nodes.inverseMass[i];
    }
}

void RopePairProjection::unpackStates(const RopeNodes& nodes, int team) const {
    const auto count = static_cast<std::int64_t>(nodes.count);
#pragma omp parallel for num_threads(team) if (team > 1) schedule(static)
    for (std::int64_t i = 0; i < count; ++i)
        for (int k = 0; k < 3; ++k) nodes.end[3 * i + k] = m_states[i].end[k];
}

double RopePairProjection::projectGroup(const RopeNodes& nodes, std::uint32_t g) {
    return projectListed(nodes, PackedNodes{m_states.data()},
                         m_grouped.data() + 2 * static_cast<std::size_t>(m_groupStarts[g]),
                         m_groupStarts[g + 1] - m_groupStarts[g], nullptr);
}

double RopePairProjection::project(const RopeNodes& nodes, const std::uint32_t* pairs, std::size_t count,
                                   int iterations, int threads) {
    if (count < cGroupedFrom) {
        double largest = 0;
        for (int iteration = 0; iteration < iterations; ++iteration) {
            const double shortfall = projectListed(nodes, SpreadNodes{nodes}, pairs, count, nullptr);
            if (iteration == 0) largest = shortfall;
        }
        return largest;
    }
    if (threads != m_tunedThreads) {
        m_tuner = ThreadTuner(threads);
        m_tunedThreads = threads;
    }
    const auto begin = std::chrono::steady_clock::now();
    const int team = threadsForRegion(m_tuner.threadsForNextUpdate());
    assignSlabs(nodes, team);
    groupPairs(pairs, count, team);
    m_largest.assign(cGroups, 0);
    packStates(nodes, team);
    if (team == 1) {
        // Each phase a run of groups that share no node, in list order: the first read from the
        // list, the others from m_grouped (m_groupStarts holds the phases).
        for (int iteration = 0; iteration < iterations; ++iteration) {
            const double largest = projectListed(nodes, PackedNodes{m_states.data()}, pairs, count, m_pairGroup.data());
            if (iteration == 0) m_largest[0] = largest;
            for (std::uint32_t phase = 1; phase < 4; ++phase) {
                const double inPhase = projectGroup(nodes, phase);
                if (iteration == 0) m_largest[phase] = inPhase;
            }
        }
    } else {
        // Every thread meets the same loops; each phase's groups share no node, and a phase ends
        // at the barrier of its loop.
#pragma omp parallel num_threads(team)
        for (int iteration = 0; iteration < iterations; ++iteration) {
            for (int phase = 0; phase < 4; ++phase) {
#pragma omp for schedule(dynamic, 1)
                for (std::int64_t g = 0; g < std::int64_t{cGroups}; ++g) {
                    if (phaseOf(static_cast<std::uint32_t>(g), cSlabs) != phase) continue;
                    const double largest = projectGroup(nodes, static_cast<std::uint32_t>(g));
                    if (iteration == 0) m_largest[g] = largest;
                }
            }
        }
    }
    unpackStates(nodes, team);
    // Per pair visit, so that calls with different lists compare.
    m_tuner.record(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count() /
                   (static_cast<double>(count) * std::max(iterations, 1)));
    return *std::max_element(m_largest.begin(), m_largest.end());
}

} // namespace bulletgpu
