// SPDX-License-Identifier: Zlib
#include "kernels/narrow/engine/neighbour_cull_cpu.h"

#include "kernels/narrow/geometry/neighbour_clearance.h"
#include "kernels/narrow/geometry/proximity_bounds.h"
#include "kernels/narrow/geometry/triangle_ops.h"

#include <algorithm>
#include <cmath>

namespace bulletgpu {
namespace {

/// From this many vertices the passes run on the team.
constexpr std::int64_t cParallelVertices = 4096;
/// Queries a patch waits before it is measured again when its clearance, measured now, would
/// not outlast the move its ring makes in one query (a patch near contact, or deforming fast).
constexpr std::uint8_t cHopelessWait = 15;
/// A patch is measured once its ring's shortest spoke is this many times the ring's relative
/// move since its positions were kept (it moves slowly enough to stay apart for a while).
constexpr double cSettledSpokes = 3;

/// Position of vertex v in double.
Vec3d pointAt(const float* positions, std::uint32_t v) { return toVec3d(positions + 3 * static_cast<std::size_t>(v)); }

/// The largest |coordinate| of p, NaN when one is NaN.
double magnitudeOf(const float* p) {
    double m = 0;
    for (int k = 0; k < 3; ++k) {
        const double a = std::fabs(static_cast<double>(p[k]));
        m = a > m || a != a ? a : m;
    }
    return m;
}

} // namespace

void NeighbourCull::build(const std::uint32_t* indices, std::uint32_t triangles, std::uint32_t vertices) {
    m_vertexCount = vertices;
    // Triangles of each vertex (a corner repeated within a triangle counted once).
    m_triangleStart.assign(static_cast<std::size_t>(vertices) + 1, 0);
    for (std::uint32_t t = 0; t < triangles; ++t) {
        const std::uint32_t* c = indices + 3 * static_cast<std::size_t>(t);
        for (int k = 0; k < 3; ++k) {
            if ((k > 0 && c[k] == c[0]) || (k == 2 && c[2] == c[1])) continue;
            ++m_triangleStart[c[k] + 1];
        }
    }
    for (std::uint32_t v = 0; v < vertices; ++v) m_triangleStart[v + 1] += m_triangleStart[v];
    m_triangles.resize(m_triangleStart[vertices]);
    std::vector<std::uint32_t> fill(m_triangleStart.begin(), m_triangleStart.end() - 1);
    for (std::uint32_t t = 0; t < triangles; ++t) {
        const std::uint32_t* c = indices + 3 * static_cast<std::size_t>(t);
        for (int k = 0; k < 3; ++k) {
            if ((k > 0 && c[k] == c[0]) || (k == 2 && c[2] == c[1])) continue;
            m_triangles[fill[c[k]]++] = t;
        }
    }
    // Each vertex's ring: the other corners of its triangles, each once (a few, so a linear
    // search finds repeats).
    m_ringStart.assign(static_cast<std::size_t>(vertices) + 1, 0);
    m_ring.resize(2 * m_triangles.size());
    std::uint32_t size = 0;
    for (std::uint32_t v = 0; v < vertices; ++v) {
        const std::uint32_t start = size;
        for (std::uint32_t k = m_triangleStart[v]; k < m_triangleStart[v + 1]; ++k) {
            const std::uint32_t* c = indices + 3 * static_cast<std::size_t>(m_triangles[k]);
            for (int i = 0; i < 3; ++i) {
                if (c[i] == v || std::find(&m_ring[start], &m_ring[size], c[i]) != &m_ring[size]) continue;
                m_ring[size++] = c[i];
            }
        }
        m_ringStart[v + 1] = size;
    }
    m_ring.resize(size);
    m_ringKept.assign(3 * m_ring.size(), 0.0f);
    m_kept.assign(3 * static_cast<std::size_t>(vertices), NAN);
    m_reach.assign(vertices, NAN);
    m_clearance.assign(vertices, NAN);
    m_wait.assign(vertices, 0);
    m_age.assign(vertices, 0);
    m_apart.assign(vertices, 0);
    m_apartCount = 0;
}

void NeighbourCull::prepare(const float* positions, double distance, int threads) {
    m_distance = distance;
    const auto count = static_cast<std::int64_t>(m_vertexCount);
    std::uint64_t apart = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : apart) if (count >= cParallelVertices)
    for (std::int64_t i = 0; i < count; ++i) {
        const auto v = static_cast<std::uint32_t>(i);
        const double clearance = m_clearance[v];
        bool proven = clearance == INFINITY; // An empty patch: no pairs to skip or test.
        m_reach[v] = NAN;
        if (!proven && !std::isnan(m_kept[3 * static_cast<std::size_t>(v)])) {
            // R(v): the largest move of a ring vertex relative to v since the positions were kept;
            // M: the largest |coordinate| then and now.
            const float* now = positions + 3 * static_cast<std::size_t>(v);
            const float* kept = &m_kept[3 * static_cast<std::size_t>(v)];
            double moved[3], magnitude = std::max(magnitudeOf(now), magnitudeOf(kept)), reach2 = 0;
            for (int k = 0; k < 3; ++k) moved[k] = double(now[k]) - double(kept[k]);
            for (std::uint32_t r = m_ringStart[v]; r < m_ringStart[v + 1]; ++r) {
                const float* at = positions + 3 * static_cast<std::size_t>(m_ring[r]);
                const float* then = &m_ringKept[3 * static_cast<std::size_t>(r)];
                double relative2 = 0;
                for (int k = 0; k < 3; ++k) {
                    const double d = (double(at[k]) - double(then[k])) - moved[k];
                    relative2 += d * d;
                }
                reach2 = relative2 > reach2 || relative2 != relative2 ? relative2 : reach2;
                magnitude = std::max({magnitude, magnitudeOf(at), magnitudeOf(then)});
            }
            const double reach = std::sqrt(reach2);
            m_reach[v] = reach;
            // Unmeasured (NaN) proves nothing.
            proven = clearance - 2 * reach >
                     featureFilterMargin(magnitude, distance) + cFeatureFilterAllowance * (magnitude + clearance);
        }
        m_apart[v] = proven ? 1 : 0;
        if (m_age[v] < 255) ++m_age[v];
        apart += proven ? 1 : 0;
    }
    m_apartCount = apart;
}

void NeighbourCull::keep(std::uint32_t v, const float* positions) {
    m_age[v] = 0;
    for (int k = 0; k < 3; ++k)
        m_kept[3 * static_cast<std::size_t>(v) + k] = positions[3 * static_cast<std::size_t>(v) + k];
    for (std::uint32_t r = m_ringStart[v]; r < m_ringStart[v + 1]; ++r) {
        for (int k = 0; k < 3; ++k)
            m_ringKept[3 * static_cast<std::size_t>(r) + k] = positions[3 * static_cast<std::size_t>(m_ring[r]) + k];
    }
}

bool NeighbourCull::settled(std::uint32_t v, const float* positions) const {
    // Its ring moves slowly next to its size: its shortest spoke now is over cSettledSpokes times
    // the ring's relative move since the positions were kept.
    const double reach = m_reach[v];
    if (!(reach == reach)) return false;
    const Vec3d at = pointAt(positions, v);
    double spoke2 = INFINITY;
    for (std::uint32_t r = m_ringStart[v]; r < m_ringStart[v + 1]; ++r) {
        const double d2 = distanceSquared(at, pointAt(positions, m_ring[r]));
        spoke2 = d2 < spoke2 ? d2 : spoke2;
    }
    return spoke2 > cSettledSpokes * cSettledSpokes * reach * reach;
}

void NeighbourCull::measure(std::uint32_t v, const std::uint32_t* indices, const float* positions) {
    double least2 = INFINITY;
    for (std::uint32_t i = m_triangleStart[v]; i < m_triangleStart[v + 1]; ++i) {
        const std::uint32_t* ca = indices + 3 * static_cast<std::size_t>(m_triangles[i]);
        for (std::uint32_t j = i + 1; j < m_triangleStart[v + 1]; ++j) {
            const std::uint32_t* cb = indices + 3 * static_cast<std::size_t>(m_triangles[j]);
            // The pair is v's when v is the lowest vertex the two share.
            unsigned shared = 0;
            std::uint32_t lowest = ~0u;
            for (int a = 0; a < 3; ++a) {
                for (int b = 0; b < 3; ++b) {
                    if (ca[a] != cb[b]) continue;
                    shared |= 1u << (3 * a + b);
                    lowest = std::min(lowest, ca[a]);
                }
            }
            if (lowest != v) continue;
            const Triangle3d ta{{pointAt(positions, ca[0]), pointAt(positions, ca[1]), pointAt(positions, ca[2])}};
            const Triangle3d tb{{pointAt(positions, cb[0]), pointAt(positions, cb[1]), pointAt(positions, cb[2])}};
            const double d2 = neighbourClearanceSquared(ta, tb, shared);
            least2 = d2 < least2 || d2 != d2 ? d2 : least2;
        }
    }
    m_clearance[v] = std::sqrt(least2);
    keep(v, positions);
}

void NeighbourCull::refresh(const std::uint32_t* indices, const float* positions, int threads) {
    const auto count = static_cast<std::int64_t>(m_vertexCount);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 256) if (count >= cParallelVertices)
    for (std::int64_t i = 0; i < count; ++i) {
        const auto v = static_cast<std::uint32_t>(i);
        if (m_apart[v] != 0) continue;
        // A patch that moves fast next to its size is not worth measuring: only its positions
        // are kept (cheap), to see on the next query whether it has settled.
        if (!settled(v, positions)) {
            m_clearance[v] = NAN;
            m_wait[v] = 0;
            keep(v, positions);
            continue;
        }
        if (m_wait[v] > 0) {
            --m_wait[v];
            continue;
        }
        // The ring's move per query since its positions were kept.
        const double rate = m_reach[v] / std::max<int>(1, m_age[v]);
        measure(v, indices, positions);
        m_wait[v] = m_clearance[v] - 2 * rate > m_distance ? 0 : cHopelessWait;
    }
}

} // namespace bulletgpu
