// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/narrow/geometry/triangle_ops.h"

#include <cstdint>

/// Per-element math of the linear BVH, shared by the CPU and CUDA paths: the node layout and
/// the one-pass construction of Karras, "Maximizing Parallelism in the Construction of BVHs,
/// Octrees, and k-d Trees" (HPG 2012), where internal node i of n - 1 is built from the sorted
/// Morton codes alone, independently of every other node.

namespace bulletgpu {

/// Marks a leaf in LbvhNode::child (the low bits are then the triangle).
constexpr std::uint32_t cLeafFlag = 0x80000000u;
/// The root's parent.
constexpr std::uint32_t cNoNode = 0xffffffffu;

/// One node of a tree in depth-first order (32 bytes): an internal node's left child is the
/// next node, its right child is `child`.
struct LbvhNode {
    FloatBox box;        ///< Contains every triangle below.
    std::uint32_t child;  ///< Right child, or cLeafFlag | triangle for a leaf.
    std::uint32_t parent; ///< Parent node, cNoNode for the root.
};
static_assert(sizeof(LbvhNode) == 32, "one node is two 16-byte loads");

/// True when the node is a leaf.
BULLETGPU_HD bool isLeaf(const LbvhNode& node) { return (node.child & cLeafFlag) != 0; }

/// Triangle of a leaf.
BULLETGPU_HD std::uint32_t leafTriangle(const LbvhNode& node) { return node.child & ~cLeafFlag; }

/// Leading zero bits of a 64-bit word (64 for zero).
BULLETGPU_HD int leadingZeros64(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
    return __clzll(static_cast<long long>(x));
#else
    return x == 0 ? 64 : __builtin_clzll(x);
#endif
}

/// A box holding only the centre of `box`.
BULLETGPU_HD FloatBox centreBox(const FloatBox& box) {
    FloatBox c;
    for (int k = 0; k < 3; ++k) c.lo[k] = c.hi[k] = 0.5f * (box.lo[k] + box.hi[k]);
    return c;
}

/// The scale that maps the centres' bounds into the unit cube: one scale for all axes keeps
/// the Morton cells cubic.
BULLETGPU_HD float mortonScale(const FloatBox& centres) {
    float extent = 1e-30f;
    for (int k = 0; k < 3; ++k)
        extent = centres.hi[k] - centres.lo[k] > extent ? centres.hi[k] - centres.lo[k] : extent;
    return 1.0f / extent;
}

/// The frame Morton codes are computed in (gProximity section 4.4, for rigid meshes): points
/// are moved to `origin` and projected on the orthonormal rows of `axis`; the mesh's own axes
/// when not `present`.
struct MortonFrame {
    double origin[3] = {0, 0, 0};                          ///< The frame's origin.
    double axis[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}; ///< The frame's axes (rows).
    bool present = false;                                  ///< False: the mesh's own axes.
};

/// The point where a leaf box's Morton code is taken: its centre, in `frame` when present.
BULLETGPU_HD FloatBox mortonCentre(const FloatBox& box, const MortonFrame& frame) {
    FloatBox c = centreBox(box);
    if (!frame.present) return c;
    const double d[3] = {c.lo[0] - frame.origin[0], c.lo[1] - frame.origin[1], c.lo[2] - frame.origin[2]};
    for (int k = 0; k < 3; ++k) {
        const double* a = frame.axis[k];
        c.lo[k] = c.hi[k] = static_cast<float>((a[0] * d[0] + a[1] * d[1]) + a[2] * d[2]);
    }
    return c;
}

/// Morton code of a leaf box's centre (in `frame`) within the centres' bounds (in the same frame).
BULLETGPU_HD std::uint32_t leafMortonCode(const FloatBox& box, const MortonFrame& frame, const FloatBox& centres,
                                          float scale) {
    const FloatBox c = mortonCentre(box, frame);
    return mortonCode30((c.lo[0] - centres.lo[0]) * scale, (c.lo[1] - centres.lo[1]) * scale,
                        (c.lo[2] - centres.lo[2]) * scale);
}

/// Karras' delta: length of the common prefix of sorted keys i and j, with the index appended
/// to make keys distinct; -1 when j is outside [0, n).
BULLETGPU_HD int commonPrefix(const std::uint32_t* codes, std::int64_t n, std::int64_t i, std::int64_t j) {
    if (j < 0 || j >= n) return -1;
    const std::uint64_t a = (static_cast<std::uint64_t>(codes[i]) << 32) | static_cast<std::uint64_t>(i);
    const std::uint64_t b = (static_cast<std::uint64_t>(codes[j]) << 32) | static_cast<std::uint64_t>(j);
    return leadingZeros64(a ^ b);
}

/// Internal node i of a Karras tree over n >= 2 sorted keys: it covers sorted leaves
/// [first, last] and splits them after leaf `split` ([first, split] | [split + 1, last]).
struct KarrasNode {
    std::uint32_t first; ///< First sorted leaf covered.
    std::uint32_t last;  ///< Last sorted leaf covered.
    std::uint32_t split; ///< Last leaf of the left child.
};

/// Builds internal node i (0 <= i < n - 1) of the Karras tree over sorted `codes`. Its left
/// child is leaf `split` when first == split, else internal node `split`; its right child is
/// leaf split + 1 when split + 1 == last, else internal node split + 1. Node 0 is the root.
BULLETGPU_HD KarrasNode karrasNode(const std::uint32_t* codes, std::int64_t n, std::int64_t i) {
    const int d = commonPrefix(codes, n, i, i + 1) > commonPrefix(codes, n, i, i - 1) ? 1 : -1;
    const int minPrefix = commonPrefix(codes, n, i, i - d);
    std::int64_t maxLength = 2;
    while (commonPrefix(codes, n, i, i + maxLength * d) > minPrefix) maxLength *= 2;
    std::int64_t length = 0;
    for (std::int64_t t = maxLength / 2; t >= 1; t /= 2) {
        if (commonPrefix(codes, n, i, i + (length + t) * d) > minPrefix) length += t;
    }
    const std::int64_t j = i + length * d;
    const int nodePrefix = commonPrefix(codes, n, i, j);
    std::int64_t s = 0;
    std::int64_t t = length;
    do {
        t = (t + 1) / 2;
        if (commonPrefix(codes, n, i, i + (s + t) * d) > nodePrefix) s += t;
    } while (t > 1);
    const std::int64_t split = i + s * d + (d < 0 ? -1 : 0);
    KarrasNode node;
    node.first = static_cast<std::uint32_t>(i < j ? i : j);
    node.last = static_cast<std::uint32_t>(i < j ? j : i);
    node.split = static_cast<std::uint32_t>(split);
    return node;
}

/// A subtree of a depth-first tree: the nodes [begin, end), rooted at `begin` (end is the
/// root's escape index).
struct NodeRange {
    std::uint32_t begin; ///< The subtree's root.
    std::uint32_t end;   ///< The node after the subtree.
};

/// Leaves of the subtree rooted at `node` (its 2 * leaves - 1 nodes end at `escape`).
BULLETGPU_HD std::uint32_t subtreeLeaves(std::uint32_t node, std::uint32_t escape) { return (escape - node + 1) / 2; }

/// The range of `ranges` (count of them, sorted and disjoint) holding node n, or null.
BULLETGPU_HD const NodeRange* rangeHolding(const NodeRange* ranges, std::uint32_t count, std::uint32_t n) {
    for (std::uint32_t i = 0; i < count; ++i) {
        if (n < ranges[i].begin) return nullptr;
        if (n < ranges[i].end) return ranges + i;
    }
    return nullptr;
}

/// Depth-first index of a Karras node (internal or leaf) whose first sorted leaf is `first`
/// and whose path from the root turns left `leftTurns` times: the nodes before it are its
/// ancestors and the whole subtrees left of its path, 2 * first + leftTurns in all.
/// It is the order of Wang/Tang's histogram sort of the nodes (section 3.2), whose segments
/// are the leaves: the nodes whose first leaf is f form one segment, a chain down left children
/// to leaf f, and the segments follow in leaf order. A node's segment offset plus its rank in
/// the segment is this sum, so the layout needs neither the counting pass nor the scan.
BULLETGPU_HD std::uint32_t depthFirstIndex(std::uint32_t first, std::uint32_t leftTurns) {
    return 2 * first + leftTurns;
}

} // namespace bulletgpu
