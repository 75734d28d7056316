// SPDX-License-Identifier: Zlib
#include "kernels/query/box_tree.h"

#include "kernels/common/morton.h"

#include <algorithm>
#include <cassert>
#include <cfloat>
#include <cmath>
#include <utility>

namespace bulletgpu {

namespace {

constexpr std::uint32_t kNoParent = 0xffffffffu;

/// Index of the highest set bit of a non-zero value.
int highestBit(std::uint32_t value) {
    int bit = 0;
    while (value >>= 1) ++bit;
    return bit;
}

/// Whether [innerLo, innerHi] lies inside [lo, hi] (false when any bound is NaN).
bool boxContains(const float lo[3], const float hi[3], const float innerLo[3], const float innerHi[3]) {
    return lo[0] <= innerLo[0] && lo[1] <= innerLo[1] && lo[2] <= innerLo[2] && innerHi[0] <= hi[0] &&
           innerHi[1] <= hi[1] && innerHi[2] <= hi[2];
}

} // namespace

void BoxTree::onErased(std::uint32_t slot) {
    if (slot < m_location.size()) detach(slot);
}

void BoxTree::clear() {
    m_scansSinceBuild = 0;
    m_pending.clear();
    m_isPending.clear();
    m_sideScanned = 0;
    m_inTreeCount = 0;
    m_nodes.clear();
    m_items.clear();
    m_side.clear();
    m_huge.clear();
    m_location.clear();
    m_leafOf.clear();
    m_listIndex.clear();
}

void BoxTree::defer(std::uint32_t slot) {
    if (slot >= m_isPending.size()) m_isPending.resize(slot + 1, 0);
    if (m_isPending[slot]) return;
    m_isPending[slot] = 1;
    m_pending.push_back(slot);
}

void BoxTree::place(const BoxStore& boxes, std::uint32_t slot) {
    if (slot >= m_location.size()) {
        m_location.resize(slot + 1, Untracked);
        m_leafOf.resize(slot + 1, kNoLeaf);
        m_listIndex.resize(slot + 1, 0);
    }
    if (!boxes.isUsable(slot)) {
        detach(slot);
        return;
    }
    const Location location = static_cast<Location>(m_location[slot]);
    if (location == InHugeList) return;
    if (leafContains(m_leafOf[slot], boxes, slot)) {
        if (location != InTree) {
            detach(slot);
            m_location[slot] = InTree;
            ++m_inTreeCount;
        }
        return;
    }
    if (location == InSideList) return;
    detach(slot);
    appendToList(m_side, slot, InSideList);
}

void BoxTree::detach(std::uint32_t slot) {
    const std::uint8_t location = m_location[slot];
    if (location == InTree) --m_inTreeCount;
    if (location == InSideList) removeFromList(m_side, slot);
    if (location == InHugeList) removeFromList(m_huge, slot);
    m_location[slot] = Untracked;
}

void BoxTree::appendToList(std::vector<std::uint32_t>& list, std::uint32_t slot, Location location) {
    m_listIndex[slot] = static_cast<std::uint32_t>(list.size());
    m_location[slot] = location;
    list.push_back(slot);
}

void BoxTree::removeFromList(std::vector<std::uint32_t>& list, std::uint32_t slot) {
    const std::uint32_t index = m_listIndex[slot];
    const std::uint32_t last = list.back();
    list[index] = last;
    m_listIndex[last] = index;
    list.pop_back();
}

bool BoxTree::leafContains(std::uint32_t leaf, const BoxStore& boxes, std::uint32_t slot) const {
    if (leaf == kNoLeaf) return false;
    const float lo[3] = {boxes.minData(0)[slot], boxes.minData(1)[slot], boxes.minData(2)[slot]};
    const float hi[3] = {boxes.maxData(0)[slot], boxes.maxData(1)[slot], boxes.maxData(2)[slot]};
    return boxContains(m_nodes[leaf].lo, m_nodes[leaf].hi, lo, hi);
}

void BoxTree::placePending(const BoxStore& boxes) {
    for (std::uint32_t slot : m_pending) {
        m_isPending[slot] = 0;
        place(boxes, slot);
    }
    m_pending.clear();
}

bool BoxTree::prepareQuery(const BoxStore& boxes) {
    // When most boxes changed since the last query (every step of a world moves them all), a
    // few queries scan the store, which costs less than a build; more queries pay for one.
    const std::size_t tracked = m_inTreeCount + m_side.size() + m_huge.size();
    const bool massChange = m_rebuildLazily && m_pending.size() > kMinSideListForRebuild &&
                            m_pending.size() * kSideListShareDivisor > tracked;
    if (massChange && m_scansSinceBuild < kScansBeforeRebuild) {
        ++m_scansSinceBuild;
        return true;
    }
    if (massChange) {
        for (std::uint32_t slot : m_pending) m_isPending[slot] = 0;
        m_pending.clear();
        rebuild(boxes);
    }
    placePending(boxes);
    if (m_rebuildLazily) {
        const std::size_t side = m_side.size();
        const std::size_t tracked = m_inTreeCount + side + m_huge.size();
        if (side > kMinSideListForRebuild &&
            (side * kSideListShareDivisor > tracked || m_sideScanned > kRebuildScanFactor * tracked)) {
            rebuild(boxes);
        }
    }
    m_sideScanned += m_side.size();
    return false;
}

void BoxTree::rebuild(const BoxStore& boxes) {
    ++m_buildCount;
    m_scansSinceBuild = 0;
    m_sideScanned = 0;
    m_inTreeCount = 0;
    const std::size_t slotCount = std::max<std::size_t>(boxes.size(), m_location.size());
    m_location.assign(slotCount, Untracked);
    m_leafOf.assign(slotCount, kNoLeaf);
    m_listIndex.assign(slotCount, 0);
    m_nodes.clear();
    m_items.clear();
    m_side.clear();
    m_huge.clear();
    const BuildBounds bounds = gatherBuildBoxes(boxes);
    separateWideBoxes(bounds);
    if (m_buildBoxes.empty()) return;
    sortByMortonCode(bounds);
    buildNodes();
    fitNodeBoxes();
}

BoxTree::BuildBounds BoxTree::gatherBuildBoxes(const BoxStore& boxes) {
    float centreLo[3] = {INFINITY, INFINITY, INFINITY};
    float centreHi[3] = {-INFINITY, -INFINITY, -INFINITY};
    float widestExtent = 0.0f;
    const std::uint8_t* state = boxes.stateData();
    const float* lo[3] = {boxes.minData(0), boxes.minData(1), boxes.minData(2)};
    const float* hi[3] = {boxes.maxData(0), boxes.maxData(1), boxes.maxData(2)};
    m_buildBoxes.resize(boxes.size());
    std::size_t count = 0;
    for (std::uint32_t slot = 0; slot < boxes.size(); ++slot) {
        if (state[slot] != BoxStore::Live) continue;
        BuildBox& box = m_buildBoxes[count]; // Filled in place; kept only when count grows.
        bool finite = true;
        for (int axis = 0; axis < 3; ++axis) {
            box.lo[axis] = lo[axis][slot];
            box.hi[axis] = hi[axis][slot];
            finite = finite && std::isfinite(box.lo[axis]) && std::isfinite(box.hi[axis]);
        }
        if (!isUsableBox(box.lo[0], box.lo[1], box.lo[2], box.hi[0], box.hi[1], box.hi[2])) continue;
        if (!finite) {
            appendToList(m_huge, slot, InHugeList);
            continue;
        }
        box.slot = slot;
        m_location[slot] = InTree;
        for (int axis = 0; axis < 3; ++axis) {
            centreLo[axis] = std::min(centreLo[axis], box.centre(axis));
            centreHi[axis] = std::max(centreHi[axis], box.centre(axis));
            widestExtent = std::max(widestExtent, box.hi[axis] - box.lo[axis]);
        }
        ++count;
    }
    m_buildBoxes.resize(count);
    return BuildBounds{{centreLo[0], centreLo[1], centreLo[2]}, {centreHi[0], centreHi[1], centreHi[2]}, widestExtent};
}

void BoxTree::separateWideBoxes(const BuildBounds& bounds) {
    // A box wider than the spread of all box centres covers the whole scene along that axis.
    // When too many boxes are that wide, scanning them all would cost more than it saves.
    constexpr std::size_t kWideShareDivisor = 8;
    constexpr std::size_t kWideAllowance = 64;
    float spread = 0.0f;
    for (int axis = 0; axis < 3; ++axis) spread = std::max(spread, bounds.centreHi[axis] - bounds.centreLo[axis]);
    if (!(spread > 0.0f && bounds.widestExtent > spread)) return;
    const auto isWide = [spread](const BuildBox& box) {
        return box.hi[0] - box.lo[0] > spread || box.hi[1] - box.lo[1] > spread || box.hi[2] - box.lo[2] > spread;
    };
    const std::size_t count = m_buildBoxes.size();
    const std::size_t wide = static_cast<std::size_t>(std::count_if(m_buildBoxes.begin(), m_buildBoxes.end(), isWide));
    if (wide > count / kWideShareDivisor + kWideAllowance) return;
    std::size_t kept = 0;
    for (const BuildBox& box : m_buildBoxes) {
        if (isWide(box)) {
            appendToList(m_huge, box.slot, InHugeList);
        } else {
            m_buildBoxes[kept++] = box;
        }
    }
    m_buildBoxes.resize(kept);
}

void BoxTree::sortByMortonCode(const BuildBounds& bounds) {
    // One cube for all axes, so that cells are cubes and flat scenes split along their wide axes.
    double extent = 0.0;
    for (int axis = 0; axis < 3; ++axis) {
        extent = std::max(extent, static_cast<double>(bounds.centreHi[axis]) - bounds.centreLo[axis]);
    }
    const float scale = extent > 0.0 ? static_cast<float>(std::min<double>(cMortonCells / extent, FLT_MAX)) : 0.0f;
    const std::size_t count = m_buildBoxes.size();
    m_sortKeys.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
        const BuildBox& box = m_buildBoxes[i];
        std::uint32_t cell[3];
        for (int axis = 0; axis < 3; ++axis)
            cell[axis] = mortonCell((box.centre(axis) - bounds.centreLo[axis]) * scale);
        m_sortKeys[i] = (static_cast<std::uint64_t>(mortonCodeOfCell(cell[0], cell[1], cell[2])) << 32) | i;
    }
    // The keys are gathered in index order and the sort is stable, so sorting the code bits alone
    // keeps equal codes in gathering order.
    m_sorter.sortKeys64(m_sortKeys, count, 0, 30);
    m_sortedBoxes.resize(count);
    for (std::size_t i = 0; i < count; ++i) m_sortedBoxes[i] = m_buildBoxes[static_cast<std::uint32_t>(m_sortKeys[i])];
}

std::uint32_t BoxTree::chooseSplit(std::uint32_t begin, std::uint32_t end) {
    const std::uint32_t firstCode = static_cast<std::uint32_t>(m_sortKeys[begin] >> 32);
    const std::uint32_t lastCode = static_cast<std::uint32_t>(m_sortKeys[end - 1] >> 32);
    if (firstCode != lastCode) {
        // Split where the highest bit in which the range's codes differ turns to one.
        const int bit = highestBit(firstCode ^ lastCode);
        const std::uint64_t splitCode = ((static_cast<std::uint64_t>(firstCode) >> bit) | 1u) << bit;
        const auto first = m_sortKeys.begin() + begin;
        const auto split = std::lower_bound(first, m_sortKeys.begin() + end, splitCode << 32);
        return begin + static_cast<std::uint32_t>(split - first);
    }
    // Equal codes: split at the median centre along the axis where the centres spread most.
    // Reordering boxes of equal codes keeps the codes of the positions valid.
    float lo[3] = {INFINITY, INFINITY, INFINITY};
    float hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (std::uint32_t i = begin; i < end; ++i) {
        for (int axis = 0; axis < 3; ++axis) {
            lo[axis] = std::min(lo[axis], m_sortedBoxes[i].centre(axis));
            hi[axis] = std::max(hi[axis], m_sortedBoxes[i].centre(axis));
        }
    }
    int axis = 0;
    for (int other = 1; other < 3; ++other) {
        if (hi[other] - lo[other] > hi[axis] - lo[axis]) axis = other;
    }
    const std::uint32_t middle = begin + (end - begin) / 2;
    std::nth_element(m_sortedBoxes.begin() + begin, m_sortedBoxes.begin() + middle, m_sortedBoxes.begin() + end,
                     [axis](const BuildBox& a, const BuildBox& b) {
                         return a.centre(axis) < b.centre(axis) ||
                                (a.centre(axis) == b.centre(axis) && a.slot < b.slot);
                     });
    return middle;
}

void BoxTree::buildNodes() {
    // Ranges of sorted boxes still to split; each pending one is the right child of a node
    // on the current path, so there are fewer than kMaxDepth.
    struct Range {
        std::uint32_t begin, end, parent;
    };
    Range pending[kMaxDepth];
    int pendingCount = 0;
    const std::uint32_t count = static_cast<std::uint32_t>(m_sortedBoxes.size());
    m_nodes.reserve(2 * static_cast<std::size_t>(count));
    pending[pendingCount++] = Range{0, count, kNoParent};
    while (pendingCount > 0) {
        Range range = pending[--pendingCount];
        for (;;) {
            const std::uint32_t index = static_cast<std::uint32_t>(m_nodes.size());
            m_nodes.push_back(Node{});
            if (range.parent != kNoParent) m_nodes[range.parent].link = index;
            if (range.end - range.begin <= kLeafSize) {
                m_nodes[index].link = range.begin;
                m_nodes[index].itemCount = range.end - range.begin;
                break;
            }
            const std::uint32_t split = chooseSplit(range.begin, range.end);
            assert(pendingCount < kMaxDepth);
            pending[pendingCount++] = Range{split, range.end, index};
            range = Range{range.begin, split, kNoParent};
        }
    }
}

void BoxTree::fitNodeBoxes() {
    m_items.resize(m_sortedBoxes.size());
    m_inTreeCount = m_sortedBoxes.size();
    // Children follow their parents, so a backward pass sees children first.
    for (std::size_t index = m_nodes.size(); index-- > 0;) {
        Node& node = m_nodes[index];
        if (node.itemCount == 0) {
            const Node& left = m_nodes[index + 1];
            const Node& right = m_nodes[node.link];
            for (int axis = 0; axis < 3; ++axis) {
                node.lo[axis] = std::min(left.lo[axis], right.lo[axis]);
                node.hi[axis] = std::max(left.hi[axis], right.hi[axis]);
            }
            continue;
        }
        std::copy(m_sortedBoxes[node.link].lo, m_sortedBoxes[node.link].lo + 3, node.lo);
        std::copy(m_sortedBoxes[node.link].hi, m_sortedBoxes[node.link].hi + 3, node.hi);
        for (std::uint32_t item = node.link; item < node.link + node.itemCount; ++item) {
            const BuildBox& box = m_sortedBoxes[item];
            for (int axis = 0; axis < 3; ++axis) {
                node.lo[axis] = std::min(node.lo[axis], box.lo[axis]);
                node.hi[axis] = std::max(node.hi[axis], box.hi[axis]);
            }
            m_items[item] = box.slot;
            m_leafOf[box.slot] = static_cast<std::uint32_t>(index);
        }
    }
}

bool BoxTree::validate(const BoxStore& boxes) const {
    const std::size_t slotCount = m_location.size();
    if (m_leafOf.size() != slotCount || m_listIndex.size() != slotCount) return false;
    for (const auto& [list, location] : {std::make_pair(&m_side, InSideList), std::make_pair(&m_huge, InHugeList)}) {
        for (std::size_t i = 0; i < list->size(); ++i) {
            const std::uint32_t slot = (*list)[i];
            if (slot >= slotCount || m_location[slot] != location || m_listIndex[slot] != i) return false;
        }
    }
    // Every node and every slot of the items reached once from the root; in-tree boxes inside their leaf.
    std::vector<std::uint8_t> nodeSeen(m_nodes.size(), 0);
    std::vector<std::uint8_t> slotSeen(slotCount, 0);
    std::vector<std::pair<std::uint32_t, int>> stack; // Node and depth.
    if (!m_nodes.empty()) stack.emplace_back(0u, 1);
    std::size_t itemsSeen = 0;
    std::size_t inTreeItems = 0;
    while (!stack.empty()) {
        const auto [index, depth] = stack.back();
        stack.pop_back();
        if (index >= m_nodes.size() || nodeSeen[index] || depth > kMaxDepth) return false;
        nodeSeen[index] = 1;
        const Node& node = m_nodes[index];
        if (!(node.lo[0] <= node.hi[0] && node.lo[1] <= node.hi[1] && node.lo[2] <= node.hi[2])) return false;
        if (node.itemCount == 0) {
            const std::uint32_t children[2] = {index + 1, node.link};
            if (children[1] <= children[0] || children[1] >= m_nodes.size()) return false;
            for (std::uint32_t child : children) {
                if (!boxContains(node.lo, node.hi, m_nodes[child].lo, m_nodes[child].hi)) return false;
                stack.emplace_back(child, depth + 1);
            }
            continue;
        }
        if (node.itemCount > kLeafSize || node.link > m_items.size() || node.itemCount > m_items.size() - node.link) {
            return false;
        }
        itemsSeen += node.itemCount;
        for (std::uint32_t item = node.link; item < node.link + node.itemCount; ++item) {
            const std::uint32_t slot = m_items[item];
            if (slot >= slotCount || slotSeen[slot] || m_leafOf[slot] != index) return false;
            slotSeen[slot] = 1;
            if (m_location[slot] != InTree) continue;
            ++inTreeItems;
            if (!(boxes.isUsable(slot) && leafContains(index, boxes, slot))) return false;
        }
    }
    const auto isSet = [](std::uint8_t flag) { return flag != 0; };
    if (!std::all_of(nodeSeen.begin(), nodeSeen.end(), isSet) || itemsSeen != m_items.size()) return false;
    // Exactly the live usable slots are tracked, and the in-tree ones are all in leaves.
    std::size_t inTreeSlots = 0;
    for (std::uint32_t slot = 0; slot < std::max<std::size_t>(slotCount, boxes.size()); ++slot) {
        const std::uint8_t location = slot < slotCount ? m_location[slot] : std::uint8_t{Untracked};
        if ((location != Untracked) != boxes.isUsable(slot)) return false;
        if (location == InTree) ++inTreeSlots;
    }
    return inTreeSlots == m_inTreeCount && inTreeItems == m_inTreeCount;
}

} // namespace bulletgpu
