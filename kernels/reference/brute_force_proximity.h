// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/narrow/geometry/proximity_contact.h"
#include "kernels/narrow/geometry/triangle_intersection.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <set>
#include <utility>
#include <vector>

/// The oracle of the contact query: every vertex-triangle, edge-edge and triangle-triangle pair
/// enumerated directly from the meshes' vertex, edge and triangle lists (no ownership, no trees),
/// with the query's exclusions, decided by the same per-element functions
/// (proximity_contact.h), so that the engine's contacts must equal its set exactly. For large
/// meshes the pairs are first culled by a sort-and-sweep over feature boxes in double, grown far
/// more than the engine's (by d (1 + 2^-20) / 2 + 2^-20 (M + d)).

namespace bulletgpu {

/// One mesh as the contact oracle reads it.
struct ProximityOracleMesh {
    const float* positions;       ///< x, y, z per vertex.
    std::uint32_t vertices;       ///< Vertex count.
    const std::uint32_t* indices; ///< Three vertex indices per triangle.
    std::uint32_t triangles;      ///< Triangle count.
    const double* transform;      ///< Row-major 3x4 [R | t], or null.
    std::uint32_t mesh;           ///< Index reported in contacts.
};

/// What the oracle derives from a mesh, independently of the engine.
struct OracleFeatures {
    std::vector<Vec3d> points;                                  ///< Each vertex in the query's frame.
    std::vector<std::uint32_t> usedVertices;                    ///< Vertices some triangle uses, ascending.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> edges; ///< Distinct (lower, higher), ascending.
    std::vector<Triangle3d> corners;                            ///< Each triangle's corners.
    std::vector<std::uint32_t> identity;                        ///< Welded (or own) id of each vertex.
};

/// The oracle's view of `m`; identities are the first vertex at each position when `weld`.
inline OracleFeatures oracleFeatures(const ProximityOracleMesh& m, bool weld) {
    OracleFeatures f;
    for (std::uint32_t v = 0; v < m.vertices; ++v) {
        const float* p = m.positions + 3 * static_cast<std::size_t>(v);
        f.points.push_back(m.transform != nullptr ? transformPoint(m.transform, p) : toVec3d(p));
    }
    std::set<std::uint32_t> used;
    std::set<std::pair<std::uint32_t, std::uint32_t>> edges;
    for (std::uint32_t t = 0; t < m.triangles; ++t) {
        const std::uint32_t* c = m.indices + 3 * static_cast<std::size_t>(t);
        for (int i = 0; i < 3; ++i) {
            used.insert(c[i]);
            edges.insert({std::min(c[i], c[(i + 1) % 3]), std::max(c[i], c[(i + 1) % 3])});
        }
        f.corners.push_back(loadTriangle(m.positions, m.indices, t, m.transform));
    }
    f.usedVertices.assign(used.begin(), used.end());
    f.edges.assign(edges.begin(), edges.end());
    std::map<std::array<float, 3>, std::uint32_t> first;
    for (std::uint32_t v = 0; v < m.vertices; ++v) {
        const float* p = m.positions + 3 * static_cast<std::size_t>(v);
        const auto inserted = first.insert({{p[0], p[1], p[2]}, v});
        f.identity.push_back(weld ? inserted.first->second : v);
    }
    return f;
}

/// A box in double.
struct OracleBox {
    double lo[3]; ///< Minimum corner.
    double hi[3]; ///< Maximum corner.
};

/// The box of `count` points grown generously for distance d.
inline OracleBox oracleGrownBox(const Vec3d* points, int count, double d) {
    OracleBox box;
    double magnitude = 0;
    for (int k = 0; k < 3; ++k) {
        box.lo[k] = box.hi[k] = points[0].v[k];
        for (int i = 0; i < count; ++i) {
            box.lo[k] = std::min(box.lo[k], points[i].v[k]);
            box.hi[k] = std::max(box.hi[k], points[i].v[k]);
            magnitude = std::max(magnitude, std::fabs(points[i].v[k]));
        }
    }
    const double growth = 0.5 * d * (1 + 0x1p-20) + 0x1p-20 * (magnitude + d);
    for (int k = 0; k < 3; ++k) {
        box.lo[k] -= growth;
        box.hi[k] += growth;
    }
    return box;
}

/// Calls visit(i, j) for every i of `first` and j of `second` whose boxes overlap (all pairs
/// when `all`), with i < j when `same` (one list against itself).
template <typename Visit>
void oraclePairs(const std::vector<OracleBox>& first, const std::vector<OracleBox>& second, bool same, bool all,
                 Visit visit) {
    if (all) {
        for (std::uint32_t i = 0; i < first.size(); ++i) {
            for (std::uint32_t j = same ? i + 1 : 0; j < second.size(); ++j) visit(i, j);
        }
        return;
    }
    std::vector<std::uint32_t> order(second.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t x, std::uint32_t y) { return second[x].lo[0] < second[y].lo[0]; });
    double widest = 0;
    for (const OracleBox& b : second) widest = std::max(widest, b.hi[0] - b.lo[0]);
    for (std::uint32_t i = 0; i < first.size(); ++i) {
        const OracleBox& box = first[i];
        auto it = std::lower_bound(order.begin(), order.end(), box.lo[0] - widest,
                                   [&](std::uint32_t s, double lo) { return second[s].lo[0] < lo; });
        for (; it != order.end() && second[*it].lo[0] <= box.hi[0]; ++it) {
            const OracleBox& other = second[*it];
            bool overlap = true;
            for (int k = 0; k < 3; ++k) overlap = overlap && box.lo[k] <= other.hi[k] && other.lo[k] <= box.hi[k];
            if (overlap && (!same || i < *it)) visit(i, *it);
        }
    }
}

/// The contact query's oracle: `a` against itself when `b` is null, else a against b, at
/// distance d; sorted like the engine's contacts. `all` tests every pair (small meshes), else
/// the pairs the sweep keeps.
inline std::vector<ProximityContact> oracleProximity(const ProximityOracleMesh& a, const ProximityOracleMesh* b,
                                                     double d, bool excludeWelded, bool all) {
    const bool self = b == nullptr;
    const ProximityOracleMesh& mb = self ? a : *b;
    const OracleFeatures fa = oracleFeatures(a, self && excludeWelded);
    const OracleFeatures fb = self ? fa : oracleFeatures(mb, false);
    const auto vertexBoxes = [d](const OracleFeatures& f) {
        std::vector<OracleBox> boxes;
        for (std::uint32_t v : f.usedVertices) boxes.push_back(oracleGrownBox(&f.points[v], 1, d));
        return boxes;
    };
    const auto edgeBoxes = [d](const OracleFeatures& f) {
        std::vector<OracleBox> boxes;
        for (const auto& e : f.edges) {
            const Vec3d ends[2] = {f.points[e.first], f.points[e.second]};
            boxes.push_back(oracleGrownBox(ends, 2, d));
        }
        return boxes;
    };
    const auto triangleBoxes = [d](const OracleFeatures& f) {
        std::vector<OracleBox> boxes;
        for (const Triangle3d& t : f.corners) boxes.push_back(oracleGrownBox(t.p, 3, d));
        return boxes;
    };
    const std::vector<OracleBox> verticesA = vertexBoxes(fa), verticesB = vertexBoxes(fb);
    const std::vector<OracleBox> edgesA = edgeBoxes(fa), edgesB = edgeBoxes(fb);
    const std::vector<OracleBox> trianglesA = triangleBoxes(fa), trianglesB = triangleBoxes(fb);
    const auto isCorner = [&](std::uint32_t v, std::uint32_t t) {
        const std::uint32_t* c = a.indices + 3 * static_cast<std::size_t>(t);
        return fa.identity[v] == fa.identity[c[0]] || fa.identity[v] == fa.identity[c[1]] ||
               fa.identity[v] == fa.identity[c[2]];
    };
    std::vector<ProximityContact> out;
    ProximityContact c;
    oraclePairs(verticesA, trianglesB, false, all, [&](std::uint32_t i, std::uint32_t t) {
        const std::uint32_t v = fa.usedVertices[i];
        if (self && isCorner(v, t)) return;
        if (vertexFaceContact(a.mesh, v, fa.points[v], mb.mesh, t, fb.corners[t], d, c)) out.push_back(c);
    });
    if (!self) {
        oraclePairs(trianglesA, verticesB, false, all, [&](std::uint32_t t, std::uint32_t j) {
            const std::uint32_t v = fb.usedVertices[j];
            if (faceVertexContact(a.mesh, t, fa.corners[t], mb.mesh, v, fb.points[v], d, c)) out.push_back(c);
        });
    }
    oraclePairs(edgesA, edgesB, self, all, [&](std::uint32_t i, std::uint32_t j) {
        const auto ea = fa.edges[i], eb = fb.edges[j];
        if (self) {
            const std::uint32_t a0 = fa.identity[ea.first], a1 = fa.identity[ea.second];
            const std::uint32_t b0 = fa.identity[eb.first], b1 = fa.identity[eb.second];
            if (a0 == b0 || a0 == b1 || a1 == b0 || a1 == b1) return;
        }
        if (edgeEdgeContact(a.mesh, i, fa.points[ea.first], fa.points[ea.second], mb.mesh, j, fb.points[eb.first],
                            fb.points[eb.second], d, c)) {
            out.push_back(c);
        }
    });
    oraclePairs(trianglesA, trianglesB, self, all, [&](std::uint32_t s, std::uint32_t t) {
        if (self) {
            const std::uint32_t* cs = a.indices + 3 * static_cast<std::size_t>(s);
            if (isCorner(cs[0], t) || isCorner(cs[1], t) || isCorner(cs[2], t)) return;
        }
        if (trianglesIntersect(fa.corners[s], fb.corners[t])) {
            out.push_back(intersectionContact(a.mesh, s, fa.corners[s], mb.mesh, t, fb.corners[t]));
        }
    });
    std::sort(out.begin(), out.end(), proximityBefore);
    return out;
}

/// The points-against-mesh oracle: every point against every triangle of `m`.
inline std::vector<PointContact> oraclePointContacts(const float* points, std::uint32_t count,
                                                     const ProximityOracleMesh& m, double d) {
    std::vector<PointContact> out;
    PointContact c;
    for (std::uint32_t i = 0; i < count; ++i) {
        for (std::uint32_t t = 0; t < m.triangles; ++t) {
            if (pointTriangleContact(i, toVec3d(points + 3 * static_cast<std::size_t>(i)), t,
                                     loadTriangle(m.positions, m.indices, t, m.transform), d, c)) {
                out.push_back(c);
            }
        }
    }
    return out;
}

} // namespace bulletgpu
