// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/aabb_ops.h"
#include "kernels/common/float_box.h"
#include "kernels/common/host_device.h"

#include <cfloat>
#include <cmath>
#include <cstdint>

/// Per-element math of the sphere-chain engine, shared by the CPU (OpenMP) and CUDA paths:
/// the enclosing sphere of two spheres, the boxes, the overlap tests, the walk of the implicit
/// hierarchy and the contact of a confirmed pair.
///
/// The conservative rule. A pair of leaf spheres is in contact when, in double precision,
/// dx^2 + dy^2 + dz^2 <= (ra + rb)^2 (inclusive: touching counts); the oracle uses the same
/// predicate (spheresTouchExact). Every test in float before it may only over-report:
///  - an enclosing sphere's centre is rounded to float, its radius is recomputed in double
///    from that rounded centre and then rounded up to the next float above (encloseSpheres),
///    so each inner node's ball contains its children's balls exactly;
///  - the float test (spheresMayTouch) accepts d^2 <= (ra + rb)^2 * (1 + 2^-16) + FLT_MIN.
///    Float differences, squares and sums err by at most about 10 ulps (2^-24 each), far
///    inside the 2^-16 relative slack; FLT_MIN covers underflow of tiny radii.
///  - boxes are grown and rounded outward at the leaves and merged exactly (boxAroundSphere,
///    parentBox).
/// A leaf that touches another leaf therefore touches every ancestor of it, passes every
/// float test on the way down, and is then confirmed in double. Centres and radii must be
/// finite with |coordinate| and radius below 1e18 (squares stay finite in float).

namespace bulletgpu {

/// One sphere, a leaf or an inner node of the hierarchy (16 bytes: one float4 load).
struct ChainSphere {
    float x, y, z, r;
};

/// One contact between two spheres; pairs are reported once with (chainA, sphereA) before
/// (chainB, sphereB) in (chain, sphere) order.
struct ChainContact {
    std::uint32_t chainA;  ///< Chain of the first sphere.
    std::uint32_t sphereA; ///< Index of the first sphere in its chain.
    std::uint32_t chainB;  ///< Chain of the second sphere.
    std::uint32_t sphereB; ///< Index of the second sphere in its chain.
    double depth;          ///< Penetration depth rA + rB - distance (0 when touching).
    double normal[3]; ///< Unit vector from the second sphere's centre to the first's; (0, 0, 1) when they coincide.
};

/// How the hierarchy is searched; every choice reports the same contacts.
enum class ChainTraversal : std::uint8_t {
    Default,         ///< The backend's own: the descent on the CPU; on CUDA two threads per sphere up to
                     ///< 32,768 spheres and one thread per sphere above, as measured fastest on an H100.
    PerSphere,       ///< Every sphere walks the hierarchy on its own (the paper's GPU2).
    HalvesPerSphere, ///< CUDA: two threads per sphere, each walking one half of the hierarchy (the
                     ///< paper's GPU2v2); the CPU walks both halves in one thread (PerSphere).
};

/// What a contact query reports, and how it searches.
struct ChainQuery {
    std::uint32_t excludedNeighbours = 1; ///< Same-chain pairs with |i - j| <= this are skipped (0: none).
    bool selfCollision = true;            ///< Report pairs within one chain.
    bool betweenChains = true;            ///< Report pairs of spheres of different chains.
    ChainTraversal traversal = ChainTraversal::Default; ///< How the hierarchy is searched.
};

/// Levels the implicit hierarchy can have: enough for 2^32 leaves.
constexpr int cMaxChainLevels = 33;

/// The implicit bottom-up hierarchy over all spheres of all chains in order. Level 0 holds the
/// leaves; node k of level l encloses nodes 2k and 2k + 1 of level l - 1 (a node with one child
/// is that child) and covers leaves [k * 2^l, (k + 1) * 2^l). The top level has one node.
struct ChainLevels {
    std::uint32_t count[cMaxChainLevels];  ///< Nodes on each level.
    std::uint32_t offset[cMaxChainLevels]; ///< Index of each level's first node in the node array.
    int levels;                            ///< Levels in use (0 when there are no spheres).
};

/// The half-open range [begin, end) of global sphere indices that a sphere is tested against.
struct ChainCandidates {
    std::uint32_t begin, end;
};

/// Relative slack of the float test (2^-16).
constexpr float cChainFloatSlack = 1.52587890625e-5f;
/// Relative growth of a leaf's radius in its box (2^-20).
constexpr float cChainBoxGrowth = 9.5367431640625e-7f;
/// Relative margin of the double containment test in encloseSpheres (2^-48).
constexpr double cChainContainMargin = 3.552713678800501e-15;

/// The double-precision contact predicate (inclusive), the definition of a contact.
BULLETGPU_HD bool spheresTouchExact(const ChainSphere& a, const ChainSphere& b) {
    const double dx = static_cast<double>(a.x) - b.x;
    const double dy = static_cast<double>(a.y) - b.y;
    const double dz = static_cast<double>(a.z) - b.z;
    const double reach = static_cast<double>(a.r) + b.r;
    return dx * dx + dy * dy + dz * dz <= reach * reach;
}

/// The conservative float test: true whenever spheresTouchExact would be (see the rule above).
BULLETGPU_HD bool spheresMayTouch(const ChainSphere& a, const ChainSphere& b) {
    const float dx = a.x - b.x;
    const float dy = a.y - b.y;
    const float dz = a.z - b.z;
    const float reach = a.r + b.r;
    return dx * dx + dy * dy + dz * dz <= reach * reach * (1.0f + cChainFloatSlack) + FLT_MIN;
}

/// Distance in double from a centre to a sphere's centre.
BULLETGPU_HD double centreDistance(double x, double y, double z, const ChainSphere& s) {
    const double dx = x - s.x;
    const double dy = y - s.y;
    const double dz = z - s.z;
    return ::sqrt(dx * dx + dy * dy + dz * dz);
}

/// The smallest sphere enclosing `a` and `b`, with its centre rounded to float and its radius
/// rounded up so that it contains both exactly. Returns the larger sphere unchanged when it
/// contains the other (coincident spheres included).
BULLETGPU_HD ChainSphere encloseSpheres(const ChainSphere& a, const ChainSphere& b) {
    const bool aLarger = a.r >= b.r;
    const ChainSphere& large = aLarger ? a : b;
    const ChainSphere& small = aLarger ? b : a;
    const double d = centreDistance(a.x, a.y, a.z, b);
    const double radiusGap = static_cast<double>(large.r) - small.r;
    if (d * (1.0 + cChainContainMargin) <= radiusGap * (1.0 - cChainContainMargin)) return large;
    // d > 0 here: coincident centres pass the containment test above.
    const double radius = 0.5 * (d + a.r + b.r);
    const double t = (radius - a.r) / d;
    const float cx = static_cast<float>(a.x + t * (static_cast<double>(b.x) - a.x));
    const float cy = static_cast<float>(a.y + t * (static_cast<double>(b.y) - a.y));
    const float cz = static_cast<float>(a.z + t * (static_cast<double>(b.z) - a.z));
    const double reachA = centreDistance(cx, cy, cz, a) + a.r;
    const double reachB = centreDistance(cx, cy, cz, b) + b.r;
    const float rounded = static_cast<float>(reachA > reachB ? reachA : reachB);
    return ChainSphere{cx, cy, cz, nextafterf(rounded, FLT_MAX)};
}

/// A node's second bounding volume is a box around its leaves, rounded outward. A sphere that
/// encloses an arc of a coiled chain is far larger than the arc; the box of a flat arc is not, so
/// testing both culls most of the pairs of neighbouring turns.
///
/// The box around a leaf sphere: the radius grown by 2^-20 of itself (far more than the double
/// predicate's rounding, which may accept centres up to about 2^-50 of (ra + rb) too far apart),
/// and each bound rounded one float outward, so that every pair the double predicate accepts
/// has overlapping boxes.
BULLETGPU_HD FloatBox boxAroundSphere(const ChainSphere& s) {
    const float reach = s.r + s.r * cChainBoxGrowth;
    return FloatBox{{floatStepDown(s.x - reach), floatStepDown(s.y - reach), floatStepDown(s.z - reach)},
                    {floatStepUp(s.x + reach), floatStepUp(s.y + reach), floatStepUp(s.z + reach)}};
}

/// Node k of level `level` (>= 1) from its children on the level below.
BULLETGPU_HD ChainSphere parentNode(const ChainSphere* nodes, const ChainLevels& tree, int level, std::uint32_t k) {
    const ChainSphere* below = nodes + tree.offset[level - 1];
    const std::uint32_t left = 2 * k;
    if (left + 1 == tree.count[level - 1]) return below[left];
    return encloseSpheres(below[left], below[left + 1]);
}

/// The box of node k of level `level` (>= 1): the union of its children's boxes.
BULLETGPU_HD FloatBox parentBox(const FloatBox* boxes, const ChainLevels& tree, int level, std::uint32_t k) {
    const FloatBox* below = boxes + tree.offset[level - 1];
    const std::uint32_t left = 2 * k;
    if (left + 1 == tree.count[level - 1]) return below[left];
    const FloatBox& a = below[left];
    const FloatBox& b = below[left + 1];
    FloatBox box;
    for (int axis = 0; axis < 3; ++axis) {
        box.lo[axis] = a.lo[axis] < b.lo[axis] ? a.lo[axis] : b.lo[axis];
        box.hi[axis] = a.hi[axis] > b.hi[axis] ? a.hi[axis] : b.hi[axis];
    }
    return box;
}

/// The spheres that global sphere `i`, of a chain ending before global index `chainEnd`, is
/// tested against among `total`: only later spheres (each pair once), past the excluded neighbours.
BULLETGPU_HD ChainCandidates candidatesOf(std::uint32_t i, std::uint32_t chainEnd, std::uint32_t total,
                                          const ChainQuery& query) {
    const std::uint64_t afterNeighbours = static_cast<std::uint64_t>(i) + 1 + query.excludedNeighbours;
    const std::uint32_t selfBegin = afterNeighbours < chainEnd ? static_cast<std::uint32_t>(afterNeighbours) : chainEnd;
    const std::uint32_t begin = query.selfCollision ? selfBegin : chainEnd;
    const std::uint32_t end = query.betweenChains ? total : chainEnd;
    return ChainCandidates{begin, end > begin ? end : begin};
}

/// The spheres before global sphere `i`, of a chain starting at global index `chainBegin`, that
/// pair with it: those whose candidatesOf holds i (same-chain ones past the excluded neighbours,
/// those of earlier chains when the query pairs chains).
BULLETGPU_HD ChainCandidates earlierCandidatesOf(std::uint32_t i, std::uint32_t chainBegin, const ChainQuery& query) {
    const std::uint32_t selfEnd = i - chainBegin > query.excludedNeighbours ? i - query.excludedNeighbours : chainBegin;
    const std::uint32_t end = query.selfCollision ? selfEnd : chainBegin;
    const std::uint32_t begin = query.betweenChains ? 0 : chainBegin;
    return ChainCandidates{begin, end > begin ? end : begin};
}

/// The part of `range` under one half of the hierarchy: half 0 keeps the leaves under the top
/// node's first child, half 1 those under its second (GPU2v2 gives each half its own thread).
BULLETGPU_HD ChainCandidates halfOfCandidates(ChainCandidates range, const ChainLevels& tree, std::uint32_t half) {
    const std::uint32_t middle = tree.levels >= 2 ? 1u << (tree.levels - 2) : tree.count[0];
    if (half == 0) return ChainCandidates{range.begin, range.end < middle ? range.end : middle};
    const std::uint32_t begin = range.begin > middle ? range.begin : middle;
    return ChainCandidates{begin, range.end > begin ? range.end : begin};
}

/// Walks the hierarchy stacklessly, left to right, for the leaves in `range` that touch leaf
/// `query` (confirmed in double), calling visit(leaf) in increasing leaf order. A node is entered
/// when both its box and its sphere meet the query's.
template <typename Visit>
BULLETGPU_HD void visitTouchingLeaves(const ChainSphere* nodes, const FloatBox* boxes, const ChainLevels& tree,
                                      std::uint32_t queryLeaf, ChainCandidates range, Visit& visit) {
    const ChainSphere query = nodes[queryLeaf];
    const FloatBox queryBox = boxes[queryLeaf];
    if (range.begin >= range.end) return;
    const int top = tree.levels - 1;
    const std::uint64_t leafCount = tree.count[0];
    int level = top;
    std::uint32_t k = 0;
    for (;;) {
        const std::uint64_t first = static_cast<std::uint64_t>(k) << level;
        if (first >= range.end) return;
        const std::uint64_t next = (static_cast<std::uint64_t>(k) + 1) << level;
        const std::uint64_t last = next < leafCount ? next : leafCount;
        if (last > range.begin) {
            const std::uint32_t index = tree.offset[level] + k;
            const ChainSphere& node = nodes[index];
            if (boxesOverlap(queryBox, boxes[index]) && spheresMayTouch(query, node)) {
                if (level > 0) {
                    --level;
                    k *= 2;
                    continue;
                }
                if (spheresTouchExact(query, node)) visit(k);
            }
        }
        while (level < top && ((k & 1u) != 0 || k + 1 == tree.count[level])) {
            k >>= 1;
            ++level;
        }
        if (level == top) return;
        ++k;
    }
}

/// Reports, for listed sphere `leaf`, the pairs (i, j), i < j, that hold it among those the
/// whole query reports: each touching later candidate as (leaf, j), each touching earlier one
/// that `listed` says is not listed as (j, leaf) (a listed one reports the pair itself), so a
/// pass over the listed spheres reports each such pair once.
template <typename Listed, typename Report>
BULLETGPU_HD void visitPairsOfListed(const ChainSphere* nodes, const FloatBox* boxes, const ChainLevels& tree,
                                     const std::uint32_t* sphereChain, const std::uint32_t* chainStart,
                                     const ChainQuery& query, std::uint32_t leaf, const Listed& listed,
                                     Report& report) {
    struct Later {
        Report& report;
        std::uint32_t leaf;
        BULLETGPU_HD void operator()(std::uint32_t j) { report(leaf, j); }
    };
    struct Earlier {
        Report& report;
        const Listed& listed;
        std::uint32_t leaf;
        BULLETGPU_HD void operator()(std::uint32_t j) {
            if (!listed(j)) report(j, leaf);
        }
    };
    const std::uint32_t chain = sphereChain[leaf];
    Later later{report, leaf};
    visitTouchingLeaves(nodes, boxes, tree, leaf, candidatesOf(leaf, chainStart[chain + 1], tree.count[0], query),
                        later);
    Earlier earlier{report, listed, leaf};
    visitTouchingLeaves(nodes, boxes, tree, leaf, earlierCandidatesOf(leaf, chainStart[chain], query), earlier);
}

/// The contact of confirmed pair (i, j), i < j, of global sphere indices.
BULLETGPU_HD ChainContact makeContact(const ChainSphere* leaves, const std::uint32_t* sphereChain,
                                      const std::uint32_t* chainStart, std::uint32_t i, std::uint32_t j) {
    const ChainSphere& a = leaves[i];
    const ChainSphere& b = leaves[j];
    ChainContact contact;
    contact.chainA = sphereChain[i];
    contact.sphereA = i - chainStart[contact.chainA];
    contact.chainB = sphereChain[j];
    contact.sphereB = j - chainStart[contact.chainB];
    const double dx = static_cast<double>(a.x) - b.x;
    const double dy = static_cast<double>(a.y) - b.y;
    const double dz = static_cast<double>(a.z) - b.z;
    const double d = ::sqrt(dx * dx + dy * dy + dz * dz);
    contact.depth = static_cast<double>(a.r) + b.r - d;
    if (d > 0) {
        contact.normal[0] = dx / d;
        contact.normal[1] = dy / d;
        contact.normal[2] = dz / d;
    } else {
        contact.normal[0] = 0;
        contact.normal[1] = 0;
        contact.normal[2] = 1;
    }
    return contact;
}

} // namespace bulletgpu
