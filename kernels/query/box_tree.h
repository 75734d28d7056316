// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/aabb_ops.h"
#include "kernels/common/radix_sort_cpu.h"
#include "kernels/common/box_store.h"

#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace bulletgpu {

/// Conservative test of a segment swept by a box against axis-aligned boxes, as Bullet's
/// rayTest asks for it: a box [min, max] is met when the segment from→to meets the grown box
/// [min - castMax, max - castMin] (castMin and castMax are the cast shape's local box, zero
/// for a plain ray), touching included.
///
/// The slab test runs in double. The grown bounds are rounded outward, and the entry and exit
/// parameters are widened by a relative 4 epsilon plus the smallest normal double, more than
/// the four roundings of each parameter (Ize, "Robust BVH Ray Traversal", 2013). So the test
/// never misses a box that exact arithmetic says the segment meets; it may accept boxes a few
/// ulps away. Along an axis where the segment does not move, or moves by less than 2^-1000
/// or more than 2^1000 (an infinite end included), the test only asks that the segment's
/// extent on that axis overlaps the box's: still conservative, and never 0 * inf. A query
/// with a NaN meets nothing; one with an infinite cast box meets everything.
class SegmentBoxTest {
public:
    /// Prepares the test of the segment from→to swept by the box [castMin, castMax].
    SegmentBoxTest(const double from[3], const double to[3], const double castMin[3], const double castMax[3]) {
        for (int axis = 0; axis < 3; ++axis) {
            const double direction = to[axis] - from[axis];
            m_from[axis] = from[axis];
            m_segmentLo[axis] = from[axis] < to[axis] ? from[axis] : to[axis];
            m_segmentHi[axis] = from[axis] < to[axis] ? to[axis] : from[axis];
            m_usesSlab[axis] = std::fabs(direction) >= kSlabMinDirection && std::fabs(direction) <= kSlabMaxDirection;
            m_inverseDirection[axis] = m_usesSlab[axis] ? 1.0 / direction : 0.0;
            m_castMin[axis] = castMin[axis];
            m_castMax[axis] = castMax[axis];
            if (std::isnan(from[axis]) || std::isnan(to[axis]) || std::isnan(castMin[axis]) ||
                std::isnan(castMax[axis])) {
                m_meetsNothing = true;
            }
            if (std::isinf(castMin[axis]) || std::isinf(castMax[axis])) m_meetsEverything = true;
        }
    }

    /// Whether the query has a NaN coordinate: it meets no box.
    bool meetsNothing() const { return m_meetsNothing; }

    /// True whenever the swept segment meets the float box [lo, hi] in exact arithmetic.
    bool mayMeet(const float lo[3], const float hi[3]) const {
        if (m_meetsNothing) return false;
        if (m_meetsEverything) return true;
        double enter = 0.0;
        double exit = 1.0;
        for (int axis = 0; axis < 3; ++axis) {
            const double low = roundedDown(static_cast<double>(lo[axis]) - m_castMax[axis], kEpsilon);
            const double high = roundedUp(static_cast<double>(hi[axis]) - m_castMin[axis], kEpsilon);
            if (!m_usesSlab[axis]) {
                if (!(low <= m_segmentHi[axis] && m_segmentLo[axis] <= high)) return false;
                continue;
            }
            // The signs of the differences are exact and the inverse is a normal number, so
            // infinite bounds give infinite parameters on the right side and never NaN.
            double tLow = (low - m_from[axis]) * m_inverseDirection[axis];
            double tHigh = (high - m_from[axis]) * m_inverseDirection[axis];
            if (m_inverseDirection[axis] < 0.0) {
                const double swapped = tLow;
                tLow = tHigh;
                tHigh = swapped;
            }
            if (tLow > enter) enter = tLow;
            if (tHigh < exit) exit = tHigh;
        }
        const double tiny = std::numeric_limits<double>::min();
        return roundedDown(enter, kParameterSlack) - tiny <= roundedUp(exit, kParameterSlack) + tiny;
    }

private:
    static constexpr double kEpsilon = std::numeric_limits<double>::epsilon();
    static constexpr double kParameterSlack = 4.0 * kEpsilon;
    static constexpr double kSlabMinDirection = 0x1p-1000; // 1 / direction stays a normal number
    static constexpr double kSlabMaxDirection = 0x1p+1000; // within this range.

    /// x lowered by the relative amount, at least one ulp when x is normal (x itself when it is
    /// subnormal, zero or infinite).
    static double roundedDown(double x, double relative) {
        return x > 0.0 ? x * (1.0 - relative) : x * (1.0 + relative);
    }

    /// x raised by the relative amount, at least one ulp when x is normal (x itself when it is
    /// subnormal, zero or infinite).
    static double roundedUp(double x, double relative) { return x > 0.0 ? x * (1.0 + relative) : x * (1.0 - relative); }

    double m_from[3];
    double m_segmentLo[3];
    double m_segmentHi[3];
    double m_inverseDirection[3];
    double m_castMin[3];
    double m_castMax[3];
    bool m_usesSlab[3];
    bool m_meetsNothing = false;
    bool m_meetsEverything = false;
};

/// Bounding-volume tree over the boxes of a BoxStore for Bullet's aabbTest and rayTest.
///
/// Build: the centres of the finite boxes get 30-bit Morton codes in the cube around them, a
/// radix sort orders them, and the tree splits each sorted range at its highest differing
/// code bit (Karras 2012), or at the median centre along its widest axis when all codes in
/// the range are equal (clusters, identical boxes). Leaves hold up to kLeafSize boxes; node
/// boxes are float unions of the store's outward-rounded float boxes, so they are
/// conservative. Boxes with an infinite bound, or wider than the spread of all box centres
/// (unless more than an eighth of the boxes are), go to a huge list that every query scans,
/// so that a ground plane does not widen the tree.
///
/// Between builds the owner reports every change right after making it in the store; the next
/// query places the changed boxes. A box that still fits in the float box of its leaf stays in
/// the tree; any other new or moved box goes to a side list that queries scan, so a box is
/// found as soon as it is inserted. When most boxes changed since the last query (a world step
/// moves them all), the first kScansBeforeRebuild queries scan the store instead, which costs
/// less than a build when a step makes only a few queries (a character controller's ghost).
/// Queries rebuild first when the side list holds more than kMinSideListForRebuild boxes and
/// either more than an eighth of all boxes or, summed over the queries since the last build,
/// more than kRebuildScanFactor times all boxes (a build costs about that many box scans).
///
/// Queries visit each slot at most once, in an order that depends only on the sequence of
/// calls, and allocate nothing unless a rebuild falls due. Visitors must not change the tree
/// or the store.
class BoxTree {
public:
    /// Most boxes in one leaf.
    static constexpr std::uint32_t kLeafSize = 4;
    /// Side lists up to this long never cause a rebuild.
    static constexpr std::size_t kMinSideListForRebuild = 64;
    /// A rebuild is due once the side list holds more than the boxes / kSideListShareDivisor.
    static constexpr std::size_t kSideListShareDivisor = 8;
    /// A rebuild is due once the side-list scans add up to this many times the box count.
    static constexpr std::size_t kRebuildScanFactor = 4;
    /// After most boxes changed, this many queries scan the store before one rebuilds the tree.
    static constexpr std::uint32_t kScansBeforeRebuild = 4;
    /// Bound on the depth of any node (the root, 30 Morton levels, and at most 30 median levels
    /// for 2^32 boxes), and the size of the traversal stack.
    static constexpr int kMaxDepth = 64;

    /// rebuildLazily: queries rebuild when the side list grows too long; when false, only
    /// rebuild() builds (for tests).
    explicit BoxTree(bool rebuildLazily = true) : m_rebuildLazily(rebuildLazily) {}

    /// Records that the slot became live in the store with its current box.
    void onInserted(const BoxStore& boxes, std::uint32_t slot) {
        (void)boxes;
        defer(slot);
    }

    /// Records that the slot's box changed in the store (inline: setAabb calls it for every
    /// moving object, and a slot already pending needs nothing more).
    void onChanged(const BoxStore& boxes, std::uint32_t slot) {
        (void)boxes;
        if (slot < m_isPending.size() && m_isPending[slot]) return;
        defer(slot);
    }

    /// Places the boxes inserted or changed since the last query now (queries do this first;
    /// owners only need it to inspect the bookkeeping).
    void placePending(const BoxStore& boxes);

    /// Records that the slot was erased from the store.
    void onErased(std::uint32_t slot);

    /// Forgets every box and the tree (for a store that was cleared).
    void clear();

    /// Builds the tree from every live usable box of the store and empties the side list.
    void rebuild(const BoxStore& boxes);

    /// Calls visit(slot) once for every live usable slot whose box overlaps [min, max]
    /// inclusively, and for no other: the store's overlapExact() decides.
    template <class Visitor>
    void queryBox(const BoxStore& boxes, const double min[3], const double max[3], Visitor&& visit) {
        const bool scan = prepareQuery(boxes);
        const float queryLo[3] = {floatBelow(min[0]), floatBelow(min[1]), floatBelow(min[2])};
        const float queryHi[3] = {floatAbove(max[0]), floatAbove(max[1]), floatAbove(max[2])};
        forEachCandidate(
            boxes, scan,
            [&](const Node& node) {
                return node.lo[0] <= queryHi[0] && queryLo[0] <= node.hi[0] && node.lo[1] <= queryHi[1] &&
                       queryLo[1] <= node.hi[1] && node.lo[2] <= queryHi[2] && queryLo[2] <= node.hi[2];
            },
            [&](std::uint32_t slot) {
                if (boxes.isUsable(slot) && boxes.overlapExact(slot, min, max)) visit(slot);
            });
    }

    /// Calls visit(slot) once for every live usable slot whose box the segment from→to swept by
    /// the box [castMin, castMax] may meet (see SegmentBoxTest): never fewer than exact
    /// arithmetic finds, possibly a few that only touch within rounding.
    template <class Visitor>
    void queryRay(const BoxStore& boxes, const double from[3], const double to[3], const double castMin[3],
                  const double castMax[3], Visitor&& visit) {
        const SegmentBoxTest segment(from, to, castMin, castMax);
        if (segment.meetsNothing()) return;
        const bool scan = prepareQuery(boxes);
        forEachCandidate(
            boxes, scan, [&](const Node& node) { return segment.mayMeet(node.lo, node.hi); },
            [&](std::uint32_t slot) {
                if (!boxes.isUsable(slot)) return;
                const float lo[3] = {boxes.minData(0)[slot], boxes.minData(1)[slot], boxes.minData(2)[slot]};
                const float hi[3] = {boxes.maxData(0)[slot], boxes.maxData(1)[slot], boxes.maxData(2)[slot]};
                if (segment.mayMeet(lo, hi)) visit(slot);
            });
    }

    /// Boxes waiting in the side list for the next build.
    std::size_t sideListSize() const { return m_side.size(); }

    /// Boxes in the huge list (infinite or scene-wide boxes).
    std::size_t hugeListSize() const { return m_huge.size(); }

    /// Nodes of the built tree.
    std::size_t nodeCount() const { return m_nodes.size(); }

    /// Number of builds since construction.
    std::uint64_t buildCount() const { return m_buildCount; }

    /// Checks every invariant against the store: each node reached once from the root within
    /// kMaxDepth, links and item ranges consistent, parents containing children, each in-tree
    /// box inside its leaf, list positions consistent, and every live usable slot tracked
    /// (in the tree, the side list or the huge list) and no other.
    bool validate(const BoxStore& boxes) const;

private:
    /// Where a slot's box is found by queries.
    enum Location : std::uint8_t { Untracked = 0, InTree = 1, InSideList = 2, InHugeList = 3 };

    /// A tree node: a leaf when itemCount > 0 (items m_items[link, link + itemCount)), else an
    /// inner node whose left child is the next node and whose right child is link.
    struct Node {
        float lo[3];
        float hi[3];
        std::uint32_t link;
        std::uint32_t itemCount;
    };

    /// A finite box being built into the tree.
    struct BuildBox {
        float lo[3];
        float hi[3];
        std::uint32_t slot;
        float centre(int axis) const { return 0.5f * lo[axis] + 0.5f * hi[axis]; }
    };

    /// What the gathering pass learns about the finite boxes.
    struct BuildBounds {
        float centreLo[3];
        float centreHi[3];
        float widestExtent; // Largest extent of any box along any axis.
    };

    static constexpr std::uint32_t kNoLeaf = 0xffffffffu;

    void defer(std::uint32_t slot);
    void place(const BoxStore& boxes, std::uint32_t slot);
    void detach(std::uint32_t slot);
    void appendToList(std::vector<std::uint32_t>& list, std::uint32_t slot, Location location);
    void removeFromList(std::vector<std::uint32_t>& list, std::uint32_t slot);
    bool leafContains(std::uint32_t leaf, const BoxStore& boxes, std::uint32_t slot) const;
    bool prepareQuery(const BoxStore& boxes);
    BuildBounds gatherBuildBoxes(const BoxStore& boxes);
    void separateWideBoxes(const BuildBounds& bounds);
    void sortByMortonCode(const BuildBounds& bounds);
    std::uint32_t chooseSplit(std::uint32_t begin, std::uint32_t end);
    void buildNodes();
    void fitNodeBoxes();

    /// Visits the in-tree slots of the leaves whose node passes nodeTest, then the huge and the
    /// side list, calling slotTest(slot) on each; or, when scanning, every live slot in order.
    template <class NodeTest, class SlotTest>
    void forEachCandidate(const BoxStore& boxes, bool scan, NodeTest&& nodeTest, SlotTest&& slotTest) const {
        if (scan) {
            for (std::uint32_t slot = 0; slot < boxes.size(); ++slot) {
                if (boxes.isLive(slot)) slotTest(slot);
            }
            return;
        }
        if (!m_nodes.empty()) {
            std::uint32_t stack[kMaxDepth];
            int top = 0;
            std::uint32_t index = 0;
            for (;;) {
                const Node& node = m_nodes[index];
                if (nodeTest(node)) {
                    if (node.itemCount == 0) {
                        assert(top < kMaxDepth);
                        stack[top++] = node.link;
                        ++index;
                        continue;
                    }
                    for (std::uint32_t item = node.link; item < node.link + node.itemCount; ++item) {
                        const std::uint32_t slot = m_items[item];
                        if (m_location[slot] == InTree) slotTest(slot);
                    }
                }
                if (top == 0) break;
                index = stack[--top];
            }
        }
        for (std::uint32_t slot : m_huge) slotTest(slot);
        for (std::uint32_t slot : m_side) slotTest(slot);
    }

    bool m_rebuildLazily;
    std::uint64_t m_buildCount = 0;
    std::size_t m_sideScanned = 0;          // Side-list entries scanned since the last build.
    std::size_t m_inTreeCount = 0;          // Slots whose location is InTree.
    std::vector<Node> m_nodes;              // Depth-first order, root first.
    std::vector<std::uint32_t> m_items;     // Slots of the leaves, in leaf order.
    std::vector<std::uint32_t> m_side;      // Slots found by a linear scan until the next build.
    std::vector<std::uint32_t> m_huge;      // Infinite or scene-wide boxes, scanned by every query.
    std::vector<std::uint8_t> m_location;   // Location per slot.
    std::vector<std::uint32_t> m_pending;   // Slots inserted or changed since the last query, placed by the next one.
    std::uint32_t m_scansSinceBuild = 0;    // Queries answered by scanning the store since the last build.
    std::vector<std::uint8_t> m_isPending;  // Whether a slot is in m_pending.
    std::vector<std::uint32_t> m_leafOf;    // Leaf holding the slot in the built tree, or kNoLeaf.
    std::vector<std::uint32_t> m_listIndex; // Position of the slot in the side or huge list.
    // Build scratch, kept to avoid reallocations.
    std::vector<BuildBox> m_buildBoxes;    // Gathering order.
    std::vector<BuildBox> m_sortedBoxes;   // Morton order.
    std::vector<std::uint64_t> m_sortKeys; // Morton code << 32 | gathering index.
    RadixSorterCpu m_sorter;
};

} // namespace bulletgpu
