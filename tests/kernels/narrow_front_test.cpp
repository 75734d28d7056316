// SPDX-License-Identifier: Zlib
// Bounding-volume-test-tree fronts against full traversals: over 100-frame animations of a
// folding cloth, a ball moving through a cloth and two turning tori, the kept and updated front
// equals the front generated anew, and the contacts equal the leaf walk's, the simultaneous
// descent's and (every tenth frame) the all-pairs oracle's.
#include "kernels/common/cuda_device.h"
#include "kernels/narrow/traversal/front_group_walk.h"
#include "tests/support/mesh_generators.h"
#include "kernels/narrow/engine/triangle_mesh_set.h"
#include "kernels/reference/brute_force_triangles.h"
#include "support/mesh_transforms.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

using namespace bulletgpu;
using test::rigidTransform;
using test::uprightTransform;

namespace {

/// Identical contact lists, byte for byte.
bool sameContacts(const std::vector<TriangleContact>& x, const std::vector<TriangleContact>& y) {
    return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0);
}

/// A kept front identical to a freshly walked one.
bool sameFront(const BvttFront* kept, const std::vector<FrontEntry>& walked) {
    if (kept == nullptr) return walked.empty();
    return kept->entries.size() == walked.size() &&
           (walked.empty() ||
            std::memcmp(kept->entries.data(), walked.data(), walked.size() * sizeof(FrontEntry)) == 0);
}

/// Identical front entries.
bool sameEntry(const FrontEntry& x, const FrontEntry& y) { return x.leaf == y.leaf && x.node == y.node; }

/// The oracle's view of a mesh.
OracleMesh oracleOf(const PlyMesh& mesh, std::uint32_t index, const double* transform = nullptr) {
    return OracleMesh{mesh.positions.data(), mesh.indices.data(), static_cast<std::uint32_t>(mesh.indices.size() / 3),
                      transform, index};
}

/// Which bounding volumes the meshes of a test keep.
enum class Volumes { Aabb, Obb, Mixed };

/// Three sets over the same meshes, one per traversal.
struct ThreeWays {
    TriangleMeshSet fronts{2}, walk{2}, descent{2};
    Volumes volumes;
    int runs = 0;

    explicit ThreeWays(Volumes chosen = Volumes::Aabb) : volumes(chosen) {
        fronts.setTraversal(NarrowTraversal::Fronts);
        walk.setTraversal(NarrowTraversal::LeafWalk);
        descent.setTraversal(NarrowTraversal::Descent);
    }
    /// Adds the mesh to all three, with OBBs when chosen (every other mesh when mixed).
    std::uint32_t add(const PlyMesh& mesh) {
        const auto vertices = static_cast<std::uint32_t>(mesh.positions.size() / 3);
        const auto triangles = static_cast<std::uint32_t>(mesh.indices.size() / 3);
        std::uint32_t index = 0;
        for (TriangleMeshSet* set : {&fronts, &walk, &descent}) {
            index = set->addMesh(mesh.positions.data(), vertices, mesh.indices.data(), triangles);
            if (volumes == Volumes::Obb || (volumes == Volumes::Mixed && index % 2 == 1)) {
                set->setBoundingVolume(index, BoundingVolume::Obb);
            }
        }
        return index;
    }
    /// Moves the mesh in all three.
    void setPositions(std::uint32_t index, const PlyMesh& mesh) {
        for (TriangleMeshSet* set : {&fronts, &walk, &descent}) set->setPositions(index, mesh.positions.data());
    }
    /// Sets the transform in all three.
    void setTransform(std::uint32_t index, const std::vector<double>& transform) {
        for (TriangleMeshSet* set : {&fronts, &walk, &descent}) set->setTransform(index, transform.data());
    }
    /// Runs the batch in all three; requires equal contacts and fronts equal to generated ones.
    std::vector<TriangleContact> run(const std::vector<MeshPairQuery>& queries, bool firstFrame) {
        std::vector<TriangleContact> a, b, c;
        const auto count = static_cast<std::uint32_t>(queries.size());
        fronts.findContacts(queries.data(), count, a);
        walk.findContacts(queries.data(), count, b);
        descent.findContacts(queries.data(), count, c);
        // The OBB validator visits every subtree: every third frame is enough.
        if (runs++ % 3 == 0) {
            const std::string invalid = fronts.validate();
            INFO(invalid);
            REQUIRE(invalid.empty());
        }
        REQUIRE(fronts.stats().frontsGenerated == (firstFrame ? count : 0u));
        REQUIRE(walk.stats().frontsGenerated == count);
        REQUIRE(sameContacts(a, b));
        REQUIRE(sameContacts(a, c));
        for (const MeshPairQuery& q : queries)
            REQUIRE(sameFront(detail::implOf(fronts).front(q.meshA, q.meshB),
                              detail::implOf(walk).walkedFront(q.meshA, q.meshB)));
        REQUIRE(fronts.stats().frontEntries == walk.stats().frontEntries);
        return a;
    }
};

} // namespace

TEST_CASE("Fronts kept over 100 frames of a folding cloth equal full traversals", "[narrow][front]") {
    const Volumes volumes = GENERATE(Volumes::Aabb, Volumes::Obb);
    ThreeWays sets(volumes);
    PlyMesh cloth = foldedCloth(28, 0.02, 0.06, 0.0);
    const std::uint32_t mesh = sets.add(cloth);
    std::size_t total = 0;
    for (int frame = 0; frame < 100; ++frame) {
        cloth = foldedCloth(28, 0.02, 0.06 * (1 + 0.5 * std::sin(0.05 * frame)), 0.08 * frame);
        sets.setPositions(mesh, cloth);
        if (frame == 60) {
            // A rebuild mid-animation makes the front stale: it is generated again.
            for (TriangleMeshSet* set : {&sets.fronts, &sets.walk, &sets.descent}) set->requestRebuild(mesh);
        }
        const std::vector<TriangleContact> contacts = sets.run({{mesh, mesh}}, frame == 0 || frame == 60);
        if (frame % 25 == 0) REQUIRE(sameContacts(contacts, bruteForceContacts(oracleOf(cloth, mesh), nullptr)));
        total += contacts.size();
    }
    CHECK(total > 1000);
}

TEST_CASE("Fronts of a batch with moving rigid meshes equal full traversals", "[narrow][front]") {
    const Volumes volumes = GENERATE(Volumes::Aabb, Volumes::Obb, Volumes::Mixed);
    ThreeWays sets(volumes);
    const PlyMesh torus = torusMesh(40, 14, 1.0, 0.55);
    const double centre[3] = {0, 0, 0};
    const PlyMesh ball = sphereMesh(28, 14, centre, 0.3);
    PlyMesh cloth = dentedCloth(30, 0.35, 0.05);
    const std::uint32_t a = sets.add(torus), b = sets.add(torus), ballIndex = sets.add(ball),
                        clothIndex = sets.add(cloth);
    const std::vector<MeshPairQuery> queries = {{a, b}, {ballIndex, clothIndex}, {clothIndex, clothIndex}, {a, a}};
    std::size_t pairs[2] = {0, 0};
    for (int frame = 0; frame < 100; ++frame) {
        const std::vector<double> ta = rigidTransform(0.03 * frame, 0, 0, 0);
        const std::vector<double> tb = uprightTransform(1.5707963 + 0.2 * std::sin(0.1 * frame), 1.0 + 0.003 * frame);
        // The ball sinks into the cloth and slides across it; the cloth dents under it.
        const double x = -0.6 + 0.012 * frame;
        const std::vector<double> tBall = rigidTransform(0.0, x, 0.28 - 0.002 * frame, 0.1);
        cloth = dentedCloth(30, 0.35, 0.05 + 0.001 * frame);
        sets.setTransform(a, ta);
        sets.setTransform(b, tb);
        sets.setTransform(ballIndex, tBall);
        sets.setPositions(clothIndex, cloth);
        const std::vector<TriangleContact> contacts = sets.run(queries, frame == 0);
        if (frame % 25 == 0) {
            const OracleMesh oracleB = oracleOf(torus, b, tb.data()), clothOracle = oracleOf(cloth, clothIndex);
            std::vector<TriangleContact> expected = bruteForceContacts(oracleOf(torus, a), nullptr);
            const std::vector<TriangleContact> parts[] = {
                bruteForceContacts(oracleOf(torus, a, ta.data()), &oracleB),
                bruteForceContacts(oracleOf(ball, ballIndex, tBall.data()), &clothOracle),
                bruteForceContacts(clothOracle, nullptr)};
            for (const auto& part : parts) expected.insert(expected.end(), part.begin(), part.end());
            REQUIRE(sameContacts(contacts, expected));
            pairs[0] += parts[0].size();
            pairs[1] += parts[1].size();
        }
    }
    CHECK(pairs[0] > 100);
    CHECK(pairs[1] > 20);
}

TEST_CASE("Degraded fronts rebuild the deformed trees; contacts still equal brute force", "[narrow][front]") {
    // Drifting triangles mix, so the tree built on the first frame degrades under refits.
    const std::uint32_t count = 4000;
    const double size = 0.06, speed = 0.02;
    TriangleMeshSet fronts(2), walk(2), never(2);
    fronts.setTraversal(NarrowTraversal::Fronts);
    never.setTraversal(NarrowTraversal::Fronts);
    walk.setTraversal(NarrowTraversal::LeafWalk);
    never.setRebuildRatio(0);
    REQUIRE(fronts.rebuildRatio() == cDefaultRebuildRatio);
    PlyMesh soup = driftingSoup(count, size, 3, speed, 0);
    for (TriangleMeshSet* set : {&fronts, &walk, &never}) {
        set->addMesh(soup.positions.data(), 3 * count, soup.indices.data(), count);
    }
    std::uint32_t rebuilds = 0;
    std::size_t total = 0;
    double worstNever = 1;
    for (int frame = 0; frame < 60; ++frame) {
        soup = driftingSoup(count, size, 3, speed, frame);
        std::vector<TriangleContact> a, b, c;
        for (TriangleMeshSet* set : {&fronts, &walk, &never}) set->setPositions(0, soup.positions.data());
        fronts.findSelfContacts(0, a);
        walk.findSelfContacts(0, b);
        never.findSelfContacts(0, c);
        REQUIRE(fronts.validate().empty());
        // The kept front and the walk's fresh one measure the same trees, so they rebuild together.
        REQUIRE(fronts.stats().rebuilt == walk.stats().rebuilt);
        REQUIRE(fronts.stats().rebuildsScheduled == walk.stats().rebuildsScheduled);
        REQUIRE(sameFront(detail::implOf(fronts).front(0, 0), detail::implOf(walk).walkedFront(0, 0)));
        REQUIRE(fronts.stats().frontsGenerated == (frame == 0 || fronts.stats().rebuilt > 0 ? 1u : 0u));
        REQUIRE(fronts.stats().worstQualityRatio < 2 * cDefaultRebuildRatio);
        REQUIRE(never.stats().rebuilt == (frame == 0 ? 1u : 0u));
        REQUIRE(sameContacts(a, b));
        REQUIRE(sameContacts(a, c));
        if (frame % 15 == 0) REQUIRE(sameContacts(a, bruteForceContacts(oracleOf(soup, 0), nullptr)));
        if (frame > 0) rebuilds += fronts.stats().rebuilt;
        total += a.size();
        worstNever = std::max(worstNever, never.stats().worstQualityRatio);
    }
    CHECK(rebuilds >= 2);
    CHECK(total > 600);
    CHECK(worstNever > 4);
}

TEST_CASE("Degraded subtrees are restructured in place and the fronts carried over", "[narrow][front]") {
    // Only the triangles in the corner [-1, 0]^3 drift, so the tree degrades in the subtree over it.
    const std::uint32_t count = 8000;
    const double size = 0.05, speed = 0.03, corner = 0.0;
    const Volumes volumes = GENERATE(Volumes::Aabb, Volumes::Obb);
    TriangleMeshSet fronts(2), walk(2), never(2);
    fronts.setTraversal(NarrowTraversal::Fronts);
    never.setTraversal(NarrowTraversal::Fronts);
    walk.setTraversal(NarrowTraversal::LeafWalk);
    never.setRebuildRatio(0);
    PlyMesh soup = driftingSoup(count, size, 5, speed, 0, corner);
    for (TriangleMeshSet* set : {&fronts, &walk, &never}) {
        set->addMesh(soup.positions.data(), 3 * count, soup.indices.data(), count);
        if (volumes == Volumes::Obb) set->setBoundingVolume(0, BoundingVolume::Obb);
    }
    std::uint32_t restructured = 0, rebuilds = 0;
    double worst = 1, worstNever = 1;
    for (int frame = 0; frame < 60; ++frame) {
        soup = driftingSoup(count, size, 5, speed, frame, corner);
        std::vector<TriangleContact> a, b, c;
        for (TriangleMeshSet* set : {&fronts, &walk, &never}) set->setPositions(0, soup.positions.data());
        fronts.findSelfContacts(0, a);
        walk.findSelfContacts(0, b);
        never.findSelfContacts(0, c);
        const std::string invalid = fronts.validate();
        INFO("frame " << frame << ": " << invalid);
        REQUIRE(invalid.empty());
        // The kept front and the walk's fresh one choose the same subtrees, so the trees agree.
        REQUIRE(fronts.stats().subtreesRestructured == walk.stats().subtreesRestructured);
        REQUIRE(fronts.stats().leavesRestructured == walk.stats().leavesRestructured);
        REQUIRE(fronts.stats().rebuilt == walk.stats().rebuilt);
        REQUIRE(detail::implOf(fronts).treeSnapshot(0).nodes.size() ==
                detail::implOf(walk).treeSnapshot(0).nodes.size());
        // A restructuring carries the front over: it is updated, not generated anew.
        REQUIRE(fronts.stats().frontsGenerated == (frame == 0 || fronts.stats().rebuilt > 0 ? 1u : 0u));
        REQUIRE(sameFront(detail::implOf(fronts).front(0, 0), detail::implOf(walk).walkedFront(0, 0)));
        REQUIRE(sameContacts(a, b));
        REQUIRE(sameContacts(a, c));
        if (frame % 20 == 0) REQUIRE(sameContacts(a, bruteForceContacts(oracleOf(soup, 0), nullptr)));
        // Each restructuring touches at most half of the tree.
        REQUIRE(2 * fronts.stats().leavesRestructured <= count);
        if (frame > 0) {
            restructured += fronts.stats().subtreesRestructured;
            rebuilds += fronts.stats().rebuilt;
        }
        worst = std::max(worst, fronts.stats().worstQualityRatio);
        worstNever = std::max(worstNever, never.stats().worstQualityRatio);
    }
    INFO("subtrees restructured " << restructured << ", rebuilds " << rebuilds << ", worst ratio " << worst
                                  << " (never: " << worstNever << ")");
    CHECK(restructured >= 2);
    CHECK(worst < 2 * cDefaultRebuildRatio);
    CHECK(worstNever > 2 * cDefaultRebuildRatio);
}

TEST_CASE("Fronts between meshes are carried over when either mesh is restructured", "[narrow][front]") {
    // Two soups whose corners drift: each self front restructures its mesh, and the front between
    // them is carried over as a query tree (mesh 0) and as the other tree (mesh 1) changes.
    const std::uint32_t count = 6000;
    TriangleMeshSet fronts(2), walk(2);
    fronts.setTraversal(NarrowTraversal::Fronts);
    walk.setTraversal(NarrowTraversal::LeafWalk);
    const auto soupAt = [&](std::uint32_t seed, int frame) {
        return driftingSoup(count, 0.05, seed, 0.03, frame, 0.0);
    };
    for (TriangleMeshSet* set : {&fronts, &walk}) {
        for (std::uint32_t seed : {11u, 12u}) {
            const PlyMesh soup = soupAt(seed, 0);
            set->addMesh(soup.positions.data(), 3 * count, soup.indices.data(), count);
        }
    }
    const std::vector<MeshPairQuery> queries{{0, 0}, {1, 1}, {0, 1}};
    std::uint32_t restructured = 0;
    for (int frame = 0; frame < 60; ++frame) {
        const PlyMesh first = soupAt(11, frame), second = soupAt(12, frame);
        std::vector<TriangleContact> a, b;
        for (TriangleMeshSet* set : {&fronts, &walk}) {
            set->setPositions(0, first.positions.data());
            set->setPositions(1, second.positions.data());
        }
        fronts.findContacts(queries.data(), 3, a);
        walk.findContacts(queries.data(), 3, b);
        INFO("frame " << frame);
        REQUIRE(fronts.validate().empty());
        REQUIRE(fronts.stats().subtreesRestructured == walk.stats().subtreesRestructured);
        REQUIRE(sameContacts(a, b));
        for (const MeshPairQuery& q : queries)
            REQUIRE(sameFront(detail::implOf(fronts).front(q.meshA, q.meshB),
                              detail::implOf(walk).walkedFront(q.meshA, q.meshB)));
        if (frame % 20 == 0) {
            const OracleMesh x = oracleOf(first, 0), y = oracleOf(second, 1);
            std::vector<TriangleContact> oracle = bruteForceContacts(x, nullptr);
            const std::vector<TriangleContact> other = bruteForceContacts(y, nullptr);
            const std::vector<TriangleContact> between = bruteForceContacts(x, &y);
            oracle.insert(oracle.end(), between.begin(), between.end());
            oracle.insert(oracle.end(), other.begin(), other.end());
            REQUIRE(sameContacts(a, oracle));
        }
        if (frame > 0) restructured += fronts.stats().subtreesRestructured;
    }
    CHECK(restructured >= 2);
}

namespace {

/// A mesh, its boxes and its tree, for driving FrontTraversal directly.
struct TreeMesh {
    PlyMesh mesh;
    std::vector<FloatBox> boxes;
    Lbvh tree;

    /// Builds the tree over `built`, then moves the mesh to `moved` and refits it.
    TreeMesh(const PlyMesh& built, const PlyMesh& moved) : mesh(moved) {
        tree.build(boxesOf(built).data(), static_cast<std::uint32_t>(built.indices.size() / 3), 2);
        boxes = boxesOf(moved);
        tree.refit(boxes.data(), 2);
    }
    static std::vector<FloatBox> boxesOf(const PlyMesh& m) {
        std::vector<FloatBox> out;
        for (std::uint32_t t = 0; t < m.indices.size() / 3; ++t)
            out.push_back(triangleBox(loadTriangle(m.positions.data(), m.indices.data(), t, nullptr)));
        return out;
    }
    MeshView view(std::uint32_t index) const {
        return MeshView{tree.nodes().data(),
                        mesh.positions.data(),
                        mesh.indices.data(),
                        nullptr,
                        index,
                        tree.escapes().data(),
                        tree.leafNodes().data(),
                        static_cast<std::uint32_t>(tree.nodes().size()),
                        tree.leafCount(),
                        nullptr,
                        nullptr,
                        nullptr,
                        nullptr};
    }
    /// Random disjoint internal subtrees, in node order.
    std::vector<NodeRange> randomSubtrees(std::mt19937& rng, double chance) const {
        std::bernoulli_distribution pick(chance);
        std::vector<NodeRange> ranges;
        std::uint32_t n = 0;
        while (n < tree.nodes().size()) {
            if (!isLeaf(tree.nodes()[n]) && pick(rng)) {
                ranges.push_back(NodeRange{n, tree.escapes()[n]});
                n = tree.escapes()[n];
            } else {
                ++n;
            }
        }
        return ranges;
    }
};

} // namespace

TEST_CASE("Group walks emit what each leaf's own walk emits", "[narrow][front]") {
    // Drifted soup (a refitted tree whose boxes overlap much) and a folded cloth, self and
    // pair queries, every group size up to cWalkLanes, front entries kept or counted.
    const auto seed = GENERATE(1u, 2u);
    const bool self = GENERATE(true, false);
    TreeMesh soup(driftingSoup(2000, 0.15, seed, 0.03, 0), driftingSoup(2000, 0.15, seed, 0.03, 9));
    TreeMesh cloth(foldedCloth(20, 0.02, 0.06, 0.3), foldedCloth(20, 0.02, 0.06, 0.3));
    const FrontTree a = frontTreeOf(soup.view(0)), b = frontTreeOf(self ? soup.view(0) : cloth.view(1));
    struct Collector {
        std::vector<FrontEntry> fronts, candidates;
        std::uint64_t boxTests = 0;
        void front(std::uint32_t leaf, std::uint32_t node) { fronts.push_back(FrontEntry{leaf, node}); }
        void candidate(std::uint32_t leaf, std::uint32_t node) { candidates.push_back(FrontEntry{leaf, node}); }
        void boxTest() { ++boxTests; }
    };
    GroupWalkScratch scratch;
    std::uint64_t candidates = 0;
    for (const bool keep : {true, false}) {
        for (std::uint32_t lanes = 1; lanes <= cWalkLanes; ++lanes) {
            Collector single;
            std::vector<FrontEntry> fronts, pairs;
            GroupWalkOutput group{fronts, pairs, keep};
            for (std::uint32_t first = 0; first < a.leafCount; first += lanes) {
                const std::uint32_t count = std::min(lanes, a.leafCount - first);
                for (std::uint32_t i = first; i < first + count; ++i) generateFront(a, b, self, i, single);
                generateFrontGroup(a, b, self, first, count, scratch, group);
            }
            INFO("lanes " << lanes << ", kept " << keep);
            REQUIRE(group.boxTests == single.boxTests);
            REQUIRE(group.frontEntries == single.fronts.size());
            REQUIRE(fronts.size() == (keep ? single.fronts.size() : 0u));
            if (keep) REQUIRE(std::equal(fronts.begin(), fronts.end(), single.fronts.begin(), sameEntry));
            REQUIRE(pairs.size() == single.candidates.size());
            REQUIRE(std::equal(pairs.begin(), pairs.end(), single.candidates.begin(), sameEntry));
            candidates = pairs.size();
        }
    }
    CHECK(candidates > 1000);
}

TEST_CASE("Fronts carried over random restructurings equal fresh walks", "[narrow][front]") {
    // Subtrees picked at random (deep and shallow, one or many) rather than by the front log:
    // after the carry-over and one update, every front equals the one walked anew.
    const auto seed = GENERATE(1u, 2u, 3u, 4u);
    const bool self = GENERATE(true, false);
    std::mt19937 rng(seed);
    TreeMesh a(driftingSoup(2500, 0.05, seed, 0.03, 0), driftingSoup(2500, 0.05, seed, 0.03, 12));
    TreeMesh b(driftingSoup(2000, 0.05, seed + 10, 0.03, 0), driftingSoup(2000, 0.05, seed + 10, 0.03, 12));
    FrontTraversal traversal, fresh;
    for (const double chance : {0.002, 0.02, 0.2}) {
        TreeMesh& other = self ? a : b;
        BvttFront front, walked;
        std::vector<TriangleContact> kept, anew;
        traversal.run(BvttQuery{a.view(0), other.view(self ? 0 : 1), self}, front, FrontRun::Update, 2, kept);
        const std::vector<NodeRange> inA = a.randomSubtrees(rng, chance);
        const std::vector<NodeRange> inB = self ? inA : b.randomSubtrees(rng, chance);
        a.tree.restructure(a.boxes.data(), inA, 2);
        if (!self) b.tree.restructure(b.boxes.data(), inB, 2);
        REQUIRE(a.tree.validate(a.tree.nodes(), a.boxes.data()).empty());
        REQUIRE(b.tree.validate(b.tree.nodes(), b.boxes.data()).empty());
        const BvttQuery query{a.view(0), other.view(self ? 0 : 1), self};
        traversal.carryOver(frontTreeOf(query.a), frontTreeOf(query.b), self,
                            RestructuredRanges{inA.data(), static_cast<std::uint32_t>(inA.size())},
                            RestructuredRanges{inB.data(), static_cast<std::uint32_t>(inB.size())}, front, 2);
        // The carried front is sorted by leaf, then node.
        REQUIRE(
            std::is_sorted(front.entries.begin(), front.entries.end(), [](const FrontEntry& x, const FrontEntry& y) {
                return x.leaf != y.leaf ? x.leaf < y.leaf : x.node < y.node;
            }));
        kept.clear();
        traversal.run(query, front, FrontRun::Update, 2, kept);
        fresh.run(query, walked, FrontRun::Update, 2, anew); // a new front: generated
        INFO("chance " << chance << ", subtrees " << inA.size() << " / " << inB.size());
        REQUIRE(sameFront(&front, walked.entries));
        REQUIRE(sameContacts(kept, anew));
    }
}

TEST_CASE("Restructuring the root's range equals a fresh build; other subtrees keep their nodes", "[narrow][front]") {
    const PlyMesh soup = driftingSoup(3000, 0.05, 9, 0.03, 0);
    const PlyMesh later = driftingSoup(3000, 0.05, 9, 0.03, 40);
    const auto boxesOf = [](const PlyMesh& mesh) {
        std::vector<FloatBox> boxes;
        for (std::uint32_t t = 0; t < mesh.indices.size() / 3; ++t)
            boxes.push_back(triangleBox(loadTriangle(mesh.positions.data(), mesh.indices.data(), t, nullptr)));
        return boxes;
    };
    const std::vector<FloatBox> before = boxesOf(soup), after = boxesOf(later);
    const auto count = static_cast<std::uint32_t>(before.size());
    Lbvh refitted, fresh;
    refitted.build(before.data(), count, 2);
    refitted.refit(after.data(), 2);
    fresh.build(after.data(), count, 2);
    const std::vector<LbvhNode> old = refitted.nodes();

    // One subtree two levels down: the nodes outside it keep their topology and boxes.
    const std::uint32_t root = old[1].child + 1;
    REQUIRE(!isLeaf(old[root]));
    const NodeRange subtree{root, refitted.escapes()[root]};
    refitted.restructure(after.data(), {subtree}, 2);
    REQUIRE(refitted.validate(refitted.nodes(), after.data()).empty());
    for (std::uint32_t n = 0; n < old.size(); ++n) {
        if (n >= subtree.begin && n < subtree.end) continue;
        REQUIRE(std::memcmp(&old[n], &refitted.nodes()[n], sizeof(LbvhNode)) == 0);
    }
    REQUIRE(refitted.nodes()[root].parent == old[root].parent);

    // The whole tree restructured is the tree built anew over the same boxes.
    refitted.restructure(after.data(), {NodeRange{0, static_cast<std::uint32_t>(old.size())}}, 2);
    REQUIRE(refitted.validate(refitted.nodes(), after.data()).empty());
    REQUIRE(std::memcmp(refitted.nodes().data(), fresh.nodes().data(), old.size() * sizeof(LbvhNode)) == 0);
    REQUIRE(refitted.escapes() == fresh.escapes());
    REQUIRE(refitted.leafNodes() == fresh.leafNodes());
}

TEST_CASE("Rigid meshes are never rebuilt on quality, and the ratio is checked", "[narrow][front]") {
    TriangleMeshSet set(2);
    const PlyMesh torus = torusMesh(40, 14, 1.0, 0.55);
    const auto vertices = static_cast<std::uint32_t>(torus.positions.size() / 3);
    const auto triangles = static_cast<std::uint32_t>(torus.indices.size() / 3);
    const std::uint32_t a = set.addMesh(torus.positions.data(), vertices, torus.indices.data(), triangles);
    const std::uint32_t b = set.addMesh(torus.positions.data(), vertices, torus.indices.data(), triangles);
    std::vector<TriangleContact> contacts;
    for (int frame = 0; frame < 40; ++frame) {
        // Turning boxes swell in the world frame, but a rebuild in the own frame cannot help.
        if (frame == 20) {
            // A change of volumes is no deformation either.
            set.setBoundingVolume(a, BoundingVolume::Obb);
            set.setBoundingVolume(b, BoundingVolume::Obb);
        }
        set.setTransform(a, rigidTransform(0.05 * frame, 0, 0, 0).data());
        set.setTransform(b, uprightTransform(0.7 + 0.05 * frame, 1.0).data());
        set.findPairContacts(a, b, contacts);
        REQUIRE(set.stats().rebuilt == (frame == 0 ? 2u : 0u));
        REQUIRE(set.stats().rebuildsScheduled == 0);
    }
    for (const double bad : {-1.0, 0.5, 1.0, std::nan("")})
        REQUIRE_THROWS_AS(set.setRebuildRatio(bad), std::invalid_argument);
    set.setRebuildRatio(0);
    REQUIRE(set.rebuildRatio() == 0);
}

TEST_CASE("The leaf walk counts the reference front log that the kept front records", "[narrow][front]") {
    // The leaf walk keeps no entries: it counts its first query's log per node as it walks. The
    // fronts record theirs from the kept entries and candidates; the two logs are equal.
    const BoundingVolume volume = GENERATE(BoundingVolume::Aabb, BoundingVolume::Obb);
    const PlyMesh cloth = foldedCloth(60, 0.02, 0.06, 0.3);
    const PlyMesh torus = torusMesh(40, 14, 1.0, 0.55);
    TriangleMeshSet walk(2), fronts(2);
    walk.setTraversal(NarrowTraversal::LeafWalk);
    fronts.setTraversal(NarrowTraversal::Fronts);
    for (TriangleMeshSet* set : {&walk, &fronts}) {
        for (const PlyMesh* mesh : {&cloth, &torus}) {
            const std::uint32_t m =
                set->addMesh(mesh->positions.data(), static_cast<std::uint32_t>(mesh->positions.size() / 3),
                             mesh->indices.data(), static_cast<std::uint32_t>(mesh->indices.size() / 3));
            set->setBoundingVolume(m, volume);
        }
        set->setTransform(1, uprightTransform(0.7, 0.5).data());
    }
    const std::vector<MeshPairQuery> queries = {{0, 0}, {0, 1}, {1, 1}};
    std::vector<TriangleContact> walked, kept;
    walk.findContacts(queries.data(), 3, walked);
    fronts.findContacts(queries.data(), 3, kept);
    REQUIRE(sameContacts(walked, kept));
    for (const MeshPairQuery& q : queries) {
        const FrontLog& counted = detail::implOf(walk).front(q.meshA, q.meshB)->referenceLog;
        const FrontLog& recorded = detail::implOf(fronts).front(q.meshA, q.meshB)->referenceLog;
        REQUIRE(counted.entryOffsets.size() == detail::implOf(walk).tree(q.meshB).nodes().size() + 1);
        REQUIRE(counted.entryOffsets.back() > 0);
        REQUIRE(counted.entryOffsets == recorded.entryOffsets);
        REQUIRE(counted.hitOffsets == recorded.hitOffsets);
    }
}

TEST_CASE("Fronts handle empty, one-triangle and disjoint meshes", "[narrow][front]") {
    const Volumes volumes = GENERATE(Volumes::Aabb, Volumes::Obb);
    ThreeWays sets(volumes);
    const PlyMesh empty;
    const PlyMesh one = triangleSoup(1, 0.1, 1);
    const PlyMesh soup = triangleSoup(300, 0.1, 2);
    const std::uint32_t e = sets.add(empty), o = sets.add(one), s = sets.add(soup);
    const std::vector<MeshPairQuery> queries = {{e, e}, {o, o}, {e, s}, {s, e}, {o, s}, {s, o}, {s, s}};
    for (int frame = 0; frame < 3; ++frame) {
        const std::vector<TriangleContact> contacts = sets.run(queries, frame == 0);
        const OracleMesh soupOracle = oracleOf(soup, s), oneOracle = oracleOf(one, o);
        std::vector<TriangleContact> expected = bruteForceContacts(oneOracle, &soupOracle);
        const std::vector<TriangleContact> parts[] = {bruteForceContacts(soupOracle, &oneOracle),
                                                      bruteForceContacts(soupOracle, nullptr)};
        for (const auto& part : parts) expected.insert(expected.end(), part.begin(), part.end());
        REQUIRE(sameContacts(contacts, expected));
    }
    REQUIRE(detail::implOf(sets.fronts).front(e, e)->entries.empty());
    REQUIRE(detail::implOf(sets.fronts).front(o, o)->entries.empty());
}

TEST_CASE("The narrow phase picks its backend like the broad phase", "[narrow][api]") {
    const CudaDeviceProbe probe = probeCudaDevice(0);
    REQUIRE(TriangleMeshSet(Backend::Cpu, 1).backend() == Backend::Cpu);
    REQUIRE(TriangleMeshSet(Backend::Auto, 0).backend() == (probe.usable ? Backend::Cuda : Backend::Cpu));
    if (!probe.usable) {
        try {
            TriangleMeshSet set(Backend::Cuda, 0);
            FAIL("Backend::Cuda without a device must throw");
        } catch (const std::runtime_error& error) {
            REQUIRE(std::string(error.what()).find(probe.reason) != std::string::npos);
        }
    }
}
