// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/cache_line.h"
#include "kernels/narrow/hierarchy/lbvh_ops.h"
#include "kernels/narrow/hierarchy/obb_ops.h"
#include "kernels/narrow/geometry/triangle_contact.h"

#include <cstdint>
#include <vector>

/// Simultaneous traversal of two trees (or of one tree with itself) over the bounding-volume
/// test tree, on OpenMP threads, ending in the exact triangle test.

namespace bulletgpu {

/// What a query reads of one mesh: its tree in the query's frame and its triangles.
struct MeshView {
    const LbvhNode* nodes;        ///< Tree in depth-first order, boxes in the query's frame; null when empty.
    const float* positions;       ///< x, y, z per vertex (the mesh's own frame).
    const std::uint32_t* indices; ///< Three vertex indices per triangle.
    const double* transform;      ///< Row-major 3x4 [R | t] to the query's frame, or null.
    std::uint32_t mesh;           ///< Index reported in contacts.
    const std::uint32_t* escape;  ///< Node after each node's subtree (Lbvh::escapes).
    const std::uint32_t* leaves;  ///< Leaf nodes in depth-first order (Lbvh::leafNodes).
    std::uint32_t nodeCount;      ///< Nodes of the tree.
    std::uint32_t leafCount;      ///< Leaves of the tree.
    const NarrowObb* obbs;        ///< OBB of each node in the query's frame, or null (boxes only).
    const Triangle3d* corners;    ///< Corners of each triangle in the query's frame, or null.
    const PlaneMinors* planes;    ///< Plane minors of each triangle's corners, or null.
    const double* moved;          ///< Vertices in the query's frame in double (TriangleSource::moved), or null.
};

/// Where the exact test reads the view's triangles.
inline TriangleSource sourceOf(const MeshView& view) {
    return TriangleSource{view.corners, view.positions, view.indices, view.transform, view.planes, view.moved};
}

/// One query: two meshes, or one mesh against itself (self: pairs sharing a vertex skipped).
struct BvttQuery {
    MeshView a; ///< First mesh.
    MeshView b; ///< Second mesh (the same as a for self-collision).
    bool self;  ///< Self-collision of a.
};

/// Counters of the last traversal.
struct BvttCounters {
    std::uint64_t boxTests = 0;      ///< Node pairs whose boxes were compared.
    std::uint64_t triangleTests = 0; ///< Triangle pairs given to the exact test.
    std::uint32_t tasks = 0;         ///< Subtree pairs the threads shared.
};

/// Runs queries on OpenMP threads: the test tree is first expanded breadth-first into enough
/// subtree pairs for the threads, then each pair is traversed depth-first with a stack (the
/// larger box descended first). Contacts are sorted by (meshA, meshB, triangleA, triangleB),
/// so the result does not depend on the threads. Buffers are reused between calls.
class BvttTraversal {
public:
    /// Appends the contacts of every query to `contacts` (cleared first), sorted.
    void run(const BvttQuery* queries, std::uint32_t count, int threads, std::vector<TriangleContact>& contacts);

    /// Counters of the last run.
    const BvttCounters& counters() const { return m_counters; }

private:
    /// A node pair of one query; a == b in a self query stands for a subtree against itself.
    struct Task {
        std::uint32_t a, b, query;
    };

    /// Expands the roots of every query into at least `target` tasks where the tree allows.
    void expandTasks(const BvttQuery* queries, std::uint32_t count, std::size_t target);
    /// Traverses one task depth-first, appending its contacts to `out`.
    void traverseTask(const BvttQuery& query, const Task& task, std::vector<Task>& stack,
                      std::vector<TriangleContact>& out, BvttCounters& counters) const;
    /// One step of the test tree: pushes the task's children pairs to `out` (none when the boxes
    /// are disjoint or the task is a self leaf) and returns true, or returns false for two leaves.
    static bool splitTask(const BvttQuery& query, const Task& task, std::vector<Task>& out, BvttCounters& counters);
    /// The exact test of leaves a and b, appending a contact when they meet.
    static void testLeaves(const BvttQuery& query, std::uint32_t a, std::uint32_t b, std::vector<TriangleContact>& out,
                           BvttCounters& counters);

    std::vector<Task> m_tasks;
    std::vector<Task> m_nextTasks;
    std::vector<CacheLinePadded<std::vector<Task>>> m_threadStacks;
    std::vector<CacheLinePadded<std::vector<TriangleContact>>> m_threadContacts;
    std::vector<CacheLinePadded<BvttCounters>> m_threadCounters;
    BvttCounters m_counters;
};

} // namespace bulletgpu
