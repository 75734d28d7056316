// SPDX-License-Identifier: Zlib
// Lbvh on OpenMP threads: Morton codes, radix sort, Karras nodes in parallel, a depth-first
// layout, and a bottom-up refit that sweeps subtrees from their last node back to their root
// (children follow their parent in depth-first order).
#include "kernels/narrow/hierarchy/lbvh.h"

#include <algorithm>
#include <cmath>

namespace bulletgpu {
namespace {

/// Below this many leaves a step runs on one thread.
constexpr std::int64_t cParallelLeaves = 4096;

/// The principal frame is used when the centroids' box in it has at most this share of the
/// surface of their box in the mesh's own axes.
constexpr double cPrincipalFrameGain = 0.9;

/// Subtrees per thread that a parallel refit sweeps (taken as threads finish, so that
/// unequal subtrees even out).
constexpr std::uint32_t cSubtreesPerThread = 8;

/// Threads for a step over `count` leaves.
int threadsFor(std::int64_t count, int threads) { return count >= cParallelLeaves ? std::max(1, threads) : 1; }

} // namespace

void Lbvh::sortLeaves(const FloatBox* leafBoxes, std::uint32_t count, int threads) {
    const auto n = static_cast<std::int64_t>(count);
    float lx = INFINITY, ly = INFINITY, lz = INFINITY, hx = -INFINITY, hy = -INFINITY, hz = -INFINITY;
#pragma omp parallel for num_threads(threadsFor(n, threads)) reduction(min : lx, ly, lz) reduction(max : hx, hy, hz)
    for (std::int64_t t = 0; t < n; ++t) {
        const FloatBox c = mortonCentre(leafBoxes[t], m_frame);
        lx = std::min(lx, c.lo[0]), ly = std::min(ly, c.lo[1]), lz = std::min(lz, c.lo[2]);
        hx = std::max(hx, c.hi[0]), hy = std::max(hy, c.hi[1]), hz = std::max(hz, c.hi[2]);
    }
    const FloatBox centres{{lx, ly, lz}, {hx, hy, hz}};
    const float scale = mortonScale(centres);
    m_codes.resize(count);
    m_order.resize(count);
#pragma omp parallel for num_threads(threadsFor(n, threads))
    for (std::int64_t t = 0; t < n; ++t) {
        m_codes[t] = leafMortonCode(leafBoxes[t], m_frame, centres, scale);
        m_order[t] = static_cast<std::uint32_t>(t);
    }
    m_sorter.sortPairs(m_codes, m_order, count, threads);
}

void Lbvh::build(const FloatBox* leafBoxes, std::uint32_t count, int threads, const MortonFrame& frame) {
    m_frame = frame;
    m_leafCount = count;
    ++m_buildCount;
    m_leafNode.resize(count);
    m_nodes.resize(count == 0 ? 0 : 2 * static_cast<std::size_t>(count) - 1);
    m_escape.resize(m_nodes.size());
    m_leafOrder.resize(count);
    if (count == 0) return;
    sortLeaves(leafBoxes, count, threads);
    layOutDepthFirst(count, 0, 0, cNoNode, threads);
    refit(leafBoxes, threads);
}

void Lbvh::restructure(const FloatBox* leafBoxes, const std::vector<NodeRange>& subtrees, int threads) {
    for (const NodeRange& subtree : subtrees) {
        const std::uint32_t count = subtreeLeaves(subtree.begin, subtree.end);
        const auto first = static_cast<std::uint32_t>(
            std::lower_bound(m_leafOrder.begin(), m_leafOrder.end(), subtree.begin) - m_leafOrder.begin());
        m_subtreeBoxes.resize(count);
        m_subtreeTriangles.resize(count);
        for (std::uint32_t j = 0; j < count; ++j) {
            const std::uint32_t triangle = leafTriangle(m_nodes[m_leafOrder[first + j]]);
            m_subtreeTriangles[j] = triangle;
            m_subtreeBoxes[j] = leafBoxes[triangle];
        }
        sortLeaves(m_subtreeBoxes.data(), count, threads);
        for (std::uint32_t j = 0; j < count; ++j) m_order[j] = m_subtreeTriangles[m_order[j]];
        layOutDepthFirst(count, subtree.begin, first, m_nodes[subtree.begin].parent, threads);
    }
    refit(leafBoxes, threads);
}

void Lbvh::layOutDepthFirst(std::uint32_t count, std::uint32_t base, std::uint32_t firstLeaf, std::uint32_t rootParent,
                            int threads) {
    if (count == 1) {
        m_nodes[base] = LbvhNode{emptyBox(), cLeafFlag | m_order[0], rootParent};
        m_leafNode[m_order[0]] = base;
        m_escape[base] = base + 1;
        m_leafOrder[firstLeaf] = base;
        return;
    }
    const auto n = static_cast<std::int64_t>(count);
    m_karras.resize(count - 1);
#pragma omp parallel for num_threads(threadsFor(n, threads))
    for (std::int64_t i = 0; i < n - 1; ++i) m_karras[i] = karrasNode(m_codes.data(), n, i);
    // Work items: (Karras id, with cLeafFlag for a leaf) << 32 | parent node.
    m_stack.clear();
    m_stack.push_back(static_cast<std::uint64_t>(rootParent));
    std::uint32_t next = base, leaf = firstLeaf;
    while (!m_stack.empty()) {
        const std::uint64_t item = m_stack.back();
        m_stack.pop_back();
        const auto id = static_cast<std::uint32_t>(item >> 32);
        const std::uint32_t index = next++;
        LbvhNode& node = m_nodes[index];
        node.box = emptyBox();
        node.parent = static_cast<std::uint32_t>(item);
        if ((id & cLeafFlag) != 0) {
            const std::uint32_t triangle = m_order[id & ~cLeafFlag];
            node.child = cLeafFlag | triangle;
            m_leafNode[triangle] = index;
            m_escape[index] = index + 1;
            m_leafOrder[leaf++] = index;
            continue;
        }
        const KarrasNode& k = m_karras[id];
        const std::uint32_t left = k.first == k.split ? (cLeafFlag | k.split) : k.split;
        const std::uint32_t right = k.split + 1 == k.last ? (cLeafFlag | (k.split + 1)) : k.split + 1;
        // The left subtree's 2 * leaves - 1 nodes follow this one.
        node.child = index + 2 * (k.split - k.first + 1);
        m_escape[index] = index + 2 * (k.last - k.first + 1) - 1;
        m_stack.push_back(static_cast<std::uint64_t>(right) << 32 | index);
        m_stack.push_back(static_cast<std::uint64_t>(left) << 32 | index);
    }
}

void Lbvh::cutTop(std::uint32_t subtrees) {
    m_cutRoots.assign(1, 0);
    m_cutAbove.clear();
    while (m_cutRoots.size() < subtrees) {
        // Split the largest subtree of the cut into its children.
        std::size_t largest = 0;
        for (std::size_t i = 1; i < m_cutRoots.size(); ++i) {
            if (m_escape[m_cutRoots[i]] - m_cutRoots[i] > m_escape[m_cutRoots[largest]] - m_cutRoots[largest])
                largest = i;
        }
        const std::uint32_t root = m_cutRoots[largest];
        if (isLeaf(m_nodes[root])) break;
        m_cutAbove.push_back(root);
        m_cutRoots[largest] = root + 1;
        m_cutRoots.push_back(m_nodes[root].child);
    }
    std::sort(m_cutAbove.begin(), m_cutAbove.end());
}

template <typename SetLeaf, typename MergeInto>
void Lbvh::sweepUp(SetLeaf setLeaf, MergeInto mergeInto, int threads) {
    if (m_nodes.empty()) return;
    const LbvhNode* nodes = m_nodes.data();
    const auto visit = [&](std::uint32_t index) {
        const LbvhNode& node = nodes[index];
        if (isLeaf(node)) {
            setLeaf(leafTriangle(node), index);
        } else {
            mergeInto(index, index + 1, node.child);
        }
    };
    const int team = threadsFor(static_cast<std::int64_t>(m_leafCount), threads);
    cutTop(team == 1 ? 1 : cSubtreesPerThread * static_cast<std::uint32_t>(team));
    const auto roots = static_cast<std::int64_t>(m_cutRoots.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
    for (std::int64_t i = 0; i < roots; ++i) {
        const std::uint32_t root = m_cutRoots[static_cast<std::size_t>(i)];
        for (std::uint32_t index = m_escape[root]; index-- > root;) visit(index);
    }
    for (auto above = m_cutAbove.rbegin(); above != m_cutAbove.rend(); ++above) visit(*above);
}

void Lbvh::refitInto(const FloatBox* leafBoxes, std::vector<LbvhNode>& out, int threads) {
    // Every node is written whole as the sweep passes it: a copy's links come with its box, with
    // no separate pass copying the tree first.
    out.resize(m_nodes.size());
    const LbvhNode* tree = m_nodes.data();
    LbvhNode* nodes = out.data();
    sweepUp(
        [&](std::uint32_t t, std::uint32_t node) {
            nodes[node] = LbvhNode{leafBoxes[t], tree[node].child, tree[node].parent};
        },
        [&](std::uint32_t parent, std::uint32_t left, std::uint32_t right) {
            nodes[parent] =
                LbvhNode{mergeBoxes(nodes[left].box, nodes[right].box), tree[parent].child, tree[parent].parent};
        },
        threads);
}

void Lbvh::refitObbs(const Triangle3d* triangles, std::vector<NarrowObb>& out, bool keepAxes,
                     const std::vector<NodeRange>& fitAnew, int threads) {
    keepAxes = keepAxes && out.size() == m_nodes.size();
    out.resize(m_nodes.size());
    NarrowObb* obbs = out.data();
    const auto fresh = static_cast<std::uint32_t>(fitAnew.size());
    sweepUp([&](std::uint32_t t, std::uint32_t node) { obbs[node] = triangleObb(triangles[t]); },
            [&](std::uint32_t parent, std::uint32_t left, std::uint32_t right) {
                obbs[parent] = keepAxes && rangeHolding(fitAnew.data(), fresh, parent) == nullptr
                                   ? mergeObbsAlong(obbs[parent].axis, obbs[left], obbs[right])
                                   : mergeObbs(obbs[left], obbs[right]);
            },
            threads);
}

std::string Lbvh::validateObbs(const std::vector<NarrowObb>& obbs, const Triangle3d* triangles) const {
    if (obbs.size() != m_nodes.size()) return "one OBB per node is expected";
    // Every node's OBB holds the corners of every triangle below it (its subtree is the node
    // range up to its escape index).
    for (std::size_t index = 0; index < m_nodes.size(); ++index) {
        for (std::size_t below = index; below < m_escape[index]; ++below) {
            if (!isLeaf(m_nodes[below])) continue;
            const std::uint32_t t = leafTriangle(m_nodes[below]);
            for (int c = 0; c < 3; ++c) {
                if (!obbContainsPoint(obbs[index], triangles[t].p[c])) {
                    return "the OBB of node " + std::to_string(index) + " misses a corner of triangle " +
                           std::to_string(t);
                }
            }
        }
    }
    return {};
}

std::string Lbvh::validate(const std::vector<LbvhNode>& nodes, const FloatBox* leafBoxes) const {
    const std::size_t expected = m_leafCount == 0 ? 0 : 2 * static_cast<std::size_t>(m_leafCount) - 1;
    if (nodes.size() != expected) return "node count is not 2 * leaves - 1";
    if (expected == 0) return {};
    if (nodes[0].parent != cNoNode) return "the root has a parent";
    std::vector<char> seen(m_leafCount, 0);
    std::vector<std::uint32_t> stack{0};
    std::uint32_t next = 0;
    while (!stack.empty()) {
        const std::uint32_t index = stack.back();
        stack.pop_back();
        if (index != next++) return "nodes are not in depth-first order at node " + std::to_string(index);
        const LbvhNode& node = nodes[index];
        if (isLeaf(node)) {
            const std::uint32_t t = leafTriangle(node);
            if (t >= m_leafCount || seen[t]) return "leaf " + std::to_string(index) + " repeats or is out of range";
            seen[t] = 1;
            if (m_leafNode[t] != index) return "leaf index of triangle " + std::to_string(t) + " is stale";
            if (m_escape[index] != index + 1) return "escape index of leaf " + std::to_string(index) + " is wrong";
            if (leafBoxes != nullptr && !boxContains(node.box, leafBoxes[t])) {
                return "leaf " + std::to_string(index) + " misses its triangle's box";
            }
            continue;
        }
        const std::uint32_t left = index + 1, right = node.child;
        if (right <= left || right >= nodes.size()) return "bad right child at node " + std::to_string(index);
        if (m_escape[index] != m_escape[right] || m_escape[left] != right) {
            return "escape index of node " + std::to_string(index) + " or its left child is wrong";
        }
        if (nodes[left].parent != index || nodes[right].parent != index) {
            return "child links of node " + std::to_string(index) + " disagree with parent links";
        }
        if (!boxContains(node.box, nodes[left].box) || !boxContains(node.box, nodes[right].box)) {
            return "node " + std::to_string(index) + " does not contain its children";
        }
        stack.push_back(right);
        stack.push_back(left);
    }
    if (next != nodes.size()) return "nodes unreachable from the root";
    if (m_escape[0] != nodes.size()) return "the root's escape index is not the node count";
    if (m_leafOrder.size() != m_leafCount) return "the depth-first leaf list has the wrong length";
    for (std::size_t i = 0; i < m_leafOrder.size(); ++i) {
        if (!isLeaf(nodes[m_leafOrder[i]]) || (i > 0 && m_leafOrder[i] <= m_leafOrder[i - 1])) {
            return "the depth-first leaf list is out of order at " + std::to_string(i);
        }
    }
    if (std::find(seen.begin(), seen.end(), 0) != seen.end()) return "a leaf is missing";
    return {};
}

MortonFrame principalFrame(const float* positions, const std::uint32_t* indices, std::uint32_t triangleCount) {
    MortonFrame frame;
    if (triangleCount < 2) return frame;
    const auto centroid = [&](std::uint32_t t, double* c) {
        for (int k = 0; k < 3; ++k) {
            c[k] = (double(positions[3 * indices[3 * t] + k]) + positions[3 * indices[3 * t + 1] + k] +
                    positions[3 * indices[3 * t + 2] + k]) /
                   3;
        }
    };
    double mean[3] = {0, 0, 0};
    for (std::uint32_t t = 0; t < triangleCount; ++t) {
        double c[3];
        centroid(t, c);
        for (int k = 0; k < 3; ++k) mean[k] += c[k];
    }
    for (double& m : mean) m /= triangleCount;
    double covariance[3][3] = {};
    for (std::uint32_t t = 0; t < triangleCount; ++t) {
        double c[3];
        centroid(t, c);
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) covariance[i][j] += (c[i] - mean[i]) * (c[j] - mean[j]);
        }
    }
    symmetricEigenvectors(covariance, frame.axis);
    orthonormalize(frame.axis);
    std::copy(mean, mean + 3, frame.origin);
    // The frame serves only when the centroids' box in it is smaller than in the mesh's axes
    // (an axis-aligned square has no preferred axes in its plane, and a turn would only hurt).
    double lo[2][3], hi[2][3];
    for (int f = 0; f < 2; ++f) {
        std::fill(lo[f], lo[f] + 3, INFINITY);
        std::fill(hi[f], hi[f] + 3, -INFINITY);
    }
    for (std::uint32_t t = 0; t < triangleCount; ++t) {
        double c[3];
        centroid(t, c);
        const double d[3] = {c[0] - mean[0], c[1] - mean[1], c[2] - mean[2]};
        for (int k = 0; k < 3; ++k) {
            const double turned = dot3(frame.axis[k], d);
            lo[0][k] = std::min(lo[0][k], c[k]), hi[0][k] = std::max(hi[0][k], c[k]);
            lo[1][k] = std::min(lo[1][k], turned), hi[1][k] = std::max(hi[1][k], turned);
        }
    }
    double area[2];
    for (int f = 0; f < 2; ++f) {
        const double x = hi[f][0] - lo[f][0], y = hi[f][1] - lo[f][1], z = hi[f][2] - lo[f][2];
        area[f] = x * y + y * z + z * x;
    }
    frame.present = area[1] < cPrincipalFrameGain * area[0];
    return frame;
}

} // namespace bulletgpu
