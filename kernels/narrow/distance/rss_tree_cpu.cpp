// SPDX-License-Identifier: Zlib
// RssTree built top down: per node a covariance pass, a span pass and a radius pass over the
// corners below it, then a median split of the centroids; subtrees as OpenMP tasks.
#include "kernels/narrow/distance/rss_tree.h"

#include <algorithm>
#include <sstream>

namespace bulletgpu {
namespace {

/// Nodes with more triangles than this build their children as separate tasks.
constexpr std::uint32_t cTaskTriangles = 2048;

/// The principal axes of the corners of `order[begin, end)`'s triangles, ordered by the
/// corners' spread along them (largest first), rounded to float (roundFrame).
void principalAxes(const std::vector<Triangle3d>& corners, const std::uint32_t* order, std::uint32_t count,
                   double axis[3][3]) {
    // Sums about the first corner, so that a mesh far from the origin loses no precision.
    const Vec3d origin = corners[order[0]].p[0];
    double sum[3] = {0, 0, 0}, products[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    for (std::uint32_t i = 0; i < count; ++i) {
        for (const Vec3d& p : corners[order[i]].p) {
            const double d[3] = {p[0] - origin[0], p[1] - origin[1], p[2] - origin[2]};
            for (int r = 0; r < 3; ++r) {
                sum[r] += d[r];
                for (int c = 0; c < 3; ++c) products[r][c] += d[r] * d[c];
            }
        }
    }
    const double n = 3.0 * count;
    double covariance[3][3];
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) covariance[r][c] = products[r][c] / n - (sum[r] / n) * (sum[c] / n);
    }
    double eigen[3][3];
    symmetricEigenvectors(covariance, eigen);
    orthonormalize(eigen);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (std::uint32_t i = 0; i < count; ++i) {
        for (const Vec3d& p : corners[order[i]].p) spanAdd(eigen, p.v, lo, hi);
    }
    int rank[3] = {0, 1, 2};
    std::sort(rank, rank + 3, [&](int a, int b) { return hi[a] - lo[a] > hi[b] - lo[b]; });
    for (int r = 0; r < 3; ++r) {
        for (int k = 0; k < 3; ++k) axis[r][k] = eigen[rank[r]][k];
    }
    roundFrame(axis);
}

/// The RSS along `axis` around the corners of `order[begin, end)`'s triangles.
NarrowRss cornersRss(const std::vector<Triangle3d>& corners, const std::uint32_t* order, std::uint32_t count,
                     const double axis[3][3]) {
    return rssAround(axis, 3 * count, [&](std::uint32_t i) -> const Vec3d& { return corners[order[i / 3]].p[i % 3]; });
}

} // namespace

void RssTree::build(const float* positions, const std::uint32_t* indices, std::uint32_t triangleCount, int threads) {
    m_nodes.resize(triangleCount == 0 ? 0 : 2 * static_cast<std::size_t>(triangleCount) - 1);
    if (triangleCount == 0) return;
    m_corners.resize(triangleCount);
    m_centroids.resize(triangleCount);
    m_order.resize(triangleCount);
    const auto n = static_cast<std::int64_t>(triangleCount);
#pragma omp parallel for num_threads(std::max(1, threads))
    for (std::int64_t t = 0; t < n; ++t) {
        const Triangle3d tri = loadTriangle(positions, indices, static_cast<std::uint32_t>(t), nullptr);
        m_corners[t] = tri;
        for (int k = 0; k < 3; ++k) m_centroids[t].v[k] = (tri.p[0][k] + tri.p[1][k] + tri.p[2][k]) / 3.0;
        m_order[t] = static_cast<std::uint32_t>(t);
    }
#pragma omp parallel num_threads(std::max(1, threads))
#pragma omp single
    buildNode(0, 0, triangleCount);
    m_corners = {};
    m_centroids = {};
}

void RssTree::buildNode(std::uint32_t node, std::uint32_t begin, std::uint32_t end) {
    const std::uint32_t count = end - begin;
    if (count == 1) {
        m_nodes[node].rss = triangleRss(m_corners[m_order[begin]]);
        m_nodes[node].child = cLeafFlag | m_order[begin];
        m_nodes[node].span = rssSpan(m_nodes[node].rss);
        return;
    }
    double axis[3][3];
    principalAxes(m_corners, m_order.data() + begin, count, axis);
    m_nodes[node].rss = cornersRss(m_corners, m_order.data() + begin, count, axis);
    m_nodes[node].span = rssSpan(m_nodes[node].rss);
    // Split at the mean of the centroids along the longest axis (as FCL does), or at their
    // median when the mean leaves one side empty; ties in projection are broken by triangle
    // index, so the tree does not depend on the sort's implementation.
    const auto key = [&](std::uint32_t t) { return dot3(axis[0], m_centroids[t].v); };
    double mean = 0;
    for (std::uint32_t i = begin; i < end; ++i) mean += key(m_order[i]);
    mean /= count;
    std::uint32_t middle = static_cast<std::uint32_t>(
        std::partition(m_order.begin() + begin, m_order.begin() + end, [&](std::uint32_t t) { return key(t) < mean; }) -
        m_order.begin());
    if (middle == begin || middle == end) {
        middle = begin + count / 2;
        std::nth_element(m_order.begin() + begin, m_order.begin() + middle, m_order.begin() + end,
                         [&](std::uint32_t a, std::uint32_t b) {
                             const double ka = key(a), kb = key(b);
                             return ka < kb || (ka == kb && a < b);
                         });
    }
    const std::uint32_t right = node + 2 * (middle - begin);
    m_nodes[node].child = right;
    if (count > cTaskTriangles) {
#pragma omp task default(shared) firstprivate(node, begin, middle)
        buildNode(node + 1, begin, middle);
        buildNode(right, middle, end);
#pragma omp taskwait
    } else {
        buildNode(node + 1, begin, middle);
        buildNode(right, middle, end);
    }
}

std::string RssTree::validate(const float* positions, const std::uint32_t* indices) const {
    std::ostringstream error;
    if (m_nodes.empty()) return {};
    const std::size_t triangles = (m_nodes.size() + 1) / 2;
    std::vector<int> seen(triangles, 0);
    // Depth-first walk with the escape (end of subtree) of each node.
    struct Item {
        std::uint32_t node, end;
    };
    std::vector<Item> stack{{0, static_cast<std::uint32_t>(m_nodes.size())}};
    std::vector<std::uint32_t> below;
    while (!stack.empty() && error.tellp() == 0) {
        const Item item = stack.back();
        stack.pop_back();
        const RssNode& node = m_nodes[item.node];
        // The triangles below: the leaves in [node, end).
        below.clear();
        for (std::uint32_t n = item.node; n < item.end; ++n) {
            if ((m_nodes[n].child & cLeafFlag) != 0) below.push_back(m_nodes[n].child & ~cLeafFlag);
        }
        if (below.size() * 2 - 1 != item.end - item.node) error << "node " << item.node << ": not depth-first";
        const PlacedRss placed = placeRss(node.rss, nullptr);
        for (const std::uint32_t t : below) {
            const Triangle3d tri = loadTriangle(positions, indices, t, nullptr);
            for (const Vec3d& p : tri.p) {
                if (!(rectangleDistance(placed, p.v) <= node.rss.radius)) {
                    error << "node " << item.node << ": triangle " << t << " outside its RSS";
                }
            }
        }
        if ((node.child & cLeafFlag) != 0) {
            const std::uint32_t t = node.child & ~cLeafFlag;
            if (t >= triangles || seen[t]++ != 0) error << "leaf " << item.node << ": triangle " << t << " repeated";
        } else if (node.child <= item.node + 1 || node.child >= item.end) {
            error << "node " << item.node << ": bad right child " << node.child;
        } else {
            stack.push_back({item.node + 1, node.child});
            stack.push_back({node.child, item.end});
        }
    }
    return error.str();
}

} // namespace bulletgpu
