// SPDX-License-Identifier: Zlib
// The CUDA engine of MeshDistance. Meshes and their RSS trees are uploaded once; a query
// uploads its transforms (with its zeroed state), runs a fixed sequence of kernels on one
// stream and copies back only its result:
//   1. greedy descents (the nearer child pair each time, as the CPU's first path) measure leaf
//      pairs for a first running bound: from the pairs of round cDescentRound (all of them
//      when nothing was pruned before), or from the root pair when the trees are shallower;
//   2. one round per level of both trees expands the pairs of the round breadth first: a pair
//      whose bound exceeds the running bound is dropped, a leaf pair listed, any other pair split
//      into its two child pairs (childPairs, the CPU's bounds), kept when within the bound; then
//      the round's leaf pairs still within the bound are measured (triangleDistance in double,
//      in a kernel of their own so that the splitting one stays small), the running bound
//      lowered by atomicMin on its bits (a non-negative double's bits order as an unsigned
//      integer);
//   3. the pair reported is the smallest (distance, triangleA, triangleB): every leaf measured
//      at or below the running bound of its moment is listed, and the list's pairs at the final
//      bound give their smallest (triangleA, triangleB) by atomicMin, the points recomputed;
//      a meeting pair (exact test) stops the query and is reported instead.
// The copies and kernels of a pass are captured once as a CUDA graph and replayed while the
// meshes and buffers stay the same (a pass is some 70 small kernels).
// A round that outgrows the frontier, or a list that overflows, is flagged: the query runs
// again with a larger frontier or with its final distance known (its ties then taken by
// atomicMin directly), starting from the bound it found, so no pair is ever silently dropped.
#include "kernels/narrow/distance/mesh_distance.h"

#include "kernels/common/cuda_check.h"
#include "kernels/common/cuda_device.h"
#include "kernels/common/cuda_resources.cuh"
#include "kernels/narrow/distance/distance_ops.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace bulletgpu {
namespace {

using detail::CudaStream;
using detail::DeviceBuffer;
using detail::DeviceScope;
using detail::PinnedBuffer;

/// Most rounds of a query (the depths of both trees plus one); median-split trees of 2^32
/// triangles need 65.
constexpr int cMaxRounds = 160;
/// Threads per block of the traversal kernels (a multiple of the warp).
constexpr unsigned int cTraversalThreads = 128;
/// Blocks of an expansion round per multiprocessor (each thread strides over the round's pairs).
constexpr unsigned int cBlocksPerSm = 4;
/// The round whose pairs also descend greedily, and the most of them that do.
constexpr int cDescentRound = 12;
constexpr std::uint32_t cMaxDescents = 4096;
/// Node pairs a frontier holds at first (16 bytes each, two frontiers).
constexpr std::uint64_t cInitialFrontier = std::uint64_t{1} << 20;
/// Most pairs a frontier may hold.
constexpr std::uint64_t cMaxFrontier = std::uint64_t{1} << 31;
/// Leaf pairs the tie list holds.
constexpr std::uint32_t cTieCapacity = 1u << 16;
/// Most passes of one query (each after an overflow, with larger buffers or a known answer).
constexpr int cMaxPasses = 40;
/// The key of no pair.
constexpr unsigned long long cNoKey = ~0ull;
/// Threads of the finishing kernel.
constexpr unsigned int cFinishThreads = 256;

/// A mesh on the device: what the kernels read of it.
struct DeviceMeshView {
    const float* positions;       ///< x, y, z per vertex (own frame).
    const std::uint32_t* indices; ///< Three per triangle.
    const RssNode* nodes;         ///< Its RSS tree, depth first.
};

/// A leaf pair measured at or below the running bound of its moment.
struct TieCandidate {
    double distance; ///< Its distance.
    std::uint32_t a; ///< Triangle of A.
    std::uint32_t b; ///< Triangle of B.
};

/// Inputs and shared state of one pass of a query, in device memory.
struct QueryState {
    double transformA[12];               ///< A to the world.
    double transformB[12];               ///< B to the world.
    double relative[12];                 ///< B's frame in A's (relativeTransform, computed on the host).
    double slack;                        ///< The query's allowance (querySlack).
    double knownFinal;                   ///< The final distance when known (its ties go to tieKey), else NaN.
    unsigned long long bestBits;         ///< Bits of the running bound (smallest distance measured).
    unsigned long long tieKey;           ///< Smallest (a << 32 | b) at the final distance.
    unsigned long long meetKey;          ///< Smallest (a << 32 | b) of the meeting pairs found.
    unsigned long long volumeTests;      ///< Lower bounds computed.
    unsigned long long triangleTests;    ///< Leaf pairs measured.
    unsigned int meeting;                ///< A meeting pair was found: every thread stops.
    unsigned int frontierOverflow;       ///< A round produced more pairs than a frontier holds.
    unsigned int tieOverflow;            ///< More leaf pairs were listed than the list holds.
    unsigned int tieCount;               ///< Leaf pairs listed (possibly past the list).
    unsigned int counts[cMaxRounds + 1]; ///< Pairs produced for each round (possibly past the frontier).
    unsigned int leafCounts[cMaxRounds]; ///< Leaf pairs listed in each round (possibly past the list).
};

/// What one pass sends back.
struct PassResult {
    double distance;                  ///< Distance of the reported pair.
    double best;                      ///< Final running bound.
    double pointA[3];                 ///< Closest (or meeting) point on A.
    double pointB[3];                 ///< Closest (or meeting) point on B.
    std::uint32_t triangleA;          ///< Reported triangle of A, or cNoNode.
    std::uint32_t triangleB;          ///< Reported triangle of B, or cNoNode.
    unsigned int intersecting;        ///< The reported pair meets.
    unsigned int frontierOverflow;    ///< See QueryState.
    unsigned int tieOverflow;         ///< See QueryState.
    unsigned int peakPairs;           ///< Most pairs produced or leaf pairs listed for one round.
    unsigned int leftover;            ///< Pairs produced past the last round (0 unless the depths are wrong).
    unsigned long long volumeTests;   ///< Lower bounds computed.
    unsigned long long triangleTests; ///< Leaf pairs measured.
};

/// The running bound.
__device__ __forceinline__ double runningBest(const QueryState* s) {
    return __longlong_as_double(static_cast<long long>(*static_cast<const volatile unsigned long long*>(&s->bestBits)));
}

/// True once a meeting pair was found.
__device__ __forceinline__ bool stopped(const QueryState* s) {
    return *static_cast<const volatile unsigned int*>(&s->meeting) != 0;
}

/// The key that orders pairs by (a, b).
__device__ __forceinline__ unsigned long long pairKey(std::uint32_t a, std::uint32_t b) {
    return (static_cast<unsigned long long>(a) << 32) | b;
}

/// A device mesh placed by `transform`.
__device__ __forceinline__ DistanceMeshView placed(const DeviceMeshView& m, const double* transform) {
    return DistanceMeshView{m.positions, m.indices, m.nodes, transform};
}

/// Measures a leaf pair: a meeting pair stops the query; else the running bound is lowered and
/// the pair listed (or keyed, when the final distance is known) if it is at or below it.
__device__ void measureLeaf(const DeviceMeshView& a, const DeviceMeshView& b, QueryState* s,
                            const DistanceNodePair& pair, TieCandidate* ties, unsigned long long& triangleTests) {
    std::uint32_t ta, tb;
    const TriangleDistance d = leafPairDistance(placed(a, s->transformA), placed(b, s->transformB), pair, &ta, &tb);
    ++triangleTests;
    if (d.intersecting) {
        atomicMin(&s->meetKey, pairKey(ta, tb));
        atomicMin(&s->bestBits, 0ull);
        atomicExch(&s->meeting, 1u);
        return;
    }
    const auto bits = static_cast<unsigned long long>(__double_as_longlong(d.distance));
    const unsigned long long before = atomicMin(&s->bestBits, bits);
    if (d.distance == s->knownFinal) {
        atomicMin(&s->tieKey, pairKey(ta, tb));
        return;
    }
    if (bits > before) return;
    const unsigned int slot = atomicAdd(&s->tieCount, 1u);
    if (slot < cTieCapacity) {
        ties[slot] = TieCandidate{d.distance, ta, tb};
    } else {
        s->tieOverflow = 1;
    }
}

/// Descends from `pair` to a leaf pair, always into the child pair of smaller bound (bounds
/// computed in full), and measures it; stops where the bound exceeds the running one.
__device__ void descend(const DeviceMeshView& a, const DeviceMeshView& b, QueryState* s, DistanceNodePair pair,
                        TieCandidate* ties, unsigned long long& volumeTests, unsigned long long& triangleTests) {
    while (!isLeafPair(a.nodes, b.nodes, pair)) {
        if (pair.bound > runningBest(s)) return;
        DistanceNodePair child[2];
        childPairs(a.nodes, b.nodes, s->relative, pair, INFINITY, s->slack, child);
        volumeTests += 2;
        pair = child[1].bound < child[0].bound ? child[1] : child[0];
    }
    if (pair.bound <= runningBest(s)) measureLeaf(a, b, s, pair, ties, triangleTests);
}

/// Adds a thread's counters to the query's.
__device__ __forceinline__ void addCounters(QueryState* s, unsigned long long volumeTests,
                                            unsigned long long triangleTests) {
    if (volumeTests != 0) atomicAdd(&s->volumeTests, volumeTests);
    if (triangleTests != 0) atomicAdd(&s->triangleTests, triangleTests);
}

/// Greedy descents from the first cMaxDescents pairs of round `round` (held in `pairs`).
__global__ void __launch_bounds__(cTraversalThreads)
    descendKernel(DeviceMeshView a, DeviceMeshView b, QueryState* s, const DistanceNodePair* pairs,
                  std::uint32_t capacity, int round, TieCandidate* ties) {
    const std::uint32_t count = min(min(s->counts[round], capacity), cMaxDescents);
    const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count || stopped(s)) return;
    unsigned long long volumeTests = 0, triangleTests = 0;
    descend(a, b, s, pairs[i], ties, volumeTests, triangleTests);
    addCounters(s, volumeTests, triangleTests);
}

/// One round: every pair of `in` within the running bound is listed in `leaves` (two leaves)
/// or split into its child pairs within the bound, appended to `out` (a warp reserves its room
/// in each with one atomicAdd). Pairs past `capacity` are counted, not stored, and flag the
/// pass.
__global__ void __launch_bounds__(cTraversalThreads)
    expandKernel(DeviceMeshView a, DeviceMeshView b, QueryState* s, const DistanceNodePair* in, DistanceNodePair* out,
                 DistanceNodePair* leaves, std::uint32_t capacity, int round) {
    const std::uint32_t total = min(s->counts[round], capacity);
    const std::uint32_t lane = threadIdx.x & 31u;
    const std::uint32_t stride = gridDim.x * blockDim.x;
    unsigned long long volumeTests = 0;
    // The loop runs alike on every lane of a warp (it steps by whole warps), so the ballots and
    // shuffles below see all 32 lanes.
    for (std::uint32_t first = blockIdx.x * blockDim.x + threadIdx.x - lane; first < total; first += stride) {
        const std::uint32_t i = first + lane;
        DistanceNodePair child[2];
        int pushes = 0;
        bool leaf = false;
        if (i < total && !stopped(s)) {
            const DistanceNodePair pair = in[i];
            if (pair.bound <= runningBest(s)) {
                if (isLeafPair(a.nodes, b.nodes, pair)) {
                    leaf = true;
                    child[0] = pair;
                } else {
                    DistanceNodePair split[2];
                    childPairs(a.nodes, b.nodes, s->relative, pair, runningBest(s) + s->slack, s->slack, split);
                    volumeTests += 2;
                    const double best = runningBest(s);
                    for (const DistanceNodePair& c : split) {
                        if (c.bound <= best) child[pushes++] = c;
                    }
                }
            }
        }
        const unsigned int leafLanes = __ballot_sync(0xffffffffu, leaf);
        if (leafLanes != 0) {
            unsigned int leafBase = 0;
            if (lane == 0) leafBase = atomicAdd(&s->leafCounts[round], static_cast<unsigned int>(__popc(leafLanes)));
            leafBase = __shfl_sync(0xffffffffu, leafBase, 0);
            const unsigned int at = leafBase + static_cast<unsigned int>(__popc(leafLanes & ((1u << lane) - 1u)));
            if (leaf && at < capacity) {
                leaves[at] = child[0];
            } else if (leaf) {
                s->frontierOverflow = 1;
            }
        }
        int end = pushes; // inclusive prefix sum of the lanes' pushes
        for (int d = 1; d < 32; d <<= 1) {
            const int below = __shfl_up_sync(0xffffffffu, end, d);
            if (lane >= static_cast<std::uint32_t>(d)) end += below;
        }
        unsigned int base = 0;
        if (lane == 31 && end > 0) base = atomicAdd(&s->counts[round + 1], static_cast<unsigned int>(end));
        base = __shfl_sync(0xffffffffu, base, 31);
        for (int k = 0; k < pushes; ++k) {
            const unsigned int at = base + static_cast<unsigned int>(end - pushes + k);
            if (at < capacity) {
                out[at] = child[k];
            } else {
                s->frontierOverflow = 1;
            }
        }
    }
    addCounters(s, volumeTests, 0);
}

/// Measures the leaf pairs that round `round` listed, those still within the running bound.
__global__ void __launch_bounds__(cTraversalThreads)
    measureKernel(DeviceMeshView a, DeviceMeshView b, QueryState* s, const DistanceNodePair* leaves,
                  std::uint32_t capacity, int round, TieCandidate* ties) {
    const std::uint32_t total = min(s->leafCounts[round], capacity);
    unsigned long long triangleTests = 0;
    for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        if (stopped(s)) break;
        const DistanceNodePair pair = leaves[i];
        if (pair.bound <= runningBest(s)) measureLeaf(a, b, s, pair, ties, triangleTests);
    }
    addCounters(s, 0, triangleTests);
}

/// Picks the reported pair (a meeting one, else the smallest (a, b) of the listed pairs at the
/// final bound), recomputes its points and writes the pass's result (one block).
__global__ void __launch_bounds__(cFinishThreads)
    finishKernel(DeviceMeshView a, DeviceMeshView b, QueryState* s, const TieCandidate* ties, int rounds,
                 PassResult* result) {
    const double best = runningBest(s);
    const std::uint32_t listed = min(s->tieCount, cTieCapacity);
    for (std::uint32_t i = threadIdx.x; i < listed; i += blockDim.x) {
        if (ties[i].distance == best) atomicMin(&s->tieKey, pairKey(ties[i].a, ties[i].b));
    }
    __syncthreads();
    if (threadIdx.x != 0) return;
    PassResult r{};
    r.best = best;
    r.distance = INFINITY;
    r.triangleA = r.triangleB = cNoNode;
    const bool meeting = s->meetKey != cNoKey;
    const unsigned long long key = meeting ? s->meetKey : *static_cast<const volatile unsigned long long*>(&s->tieKey);
    if (key != cNoKey) {
        r.triangleA = static_cast<std::uint32_t>(key >> 32);
        r.triangleB = static_cast<std::uint32_t>(key & 0xffffffffu);
        const TriangleDistance d =
            leafPairDistance(placed(a, s->transformA), r.triangleA, placed(b, s->transformB), r.triangleB, meeting);
        r.distance = d.distance;
        r.intersecting = d.intersecting ? 1u : 0u;
        for (int k = 0; k < 3; ++k) {
            r.pointA[k] = d.a[k];
            r.pointB[k] = d.b[k];
        }
    }
    for (int k = 0; k < rounds; ++k) r.peakPairs = max(r.peakPairs, max(s->counts[k], s->leafCounts[k]));
    r.leftover = s->counts[rounds];
    r.frontierOverflow = s->frontierOverflow;
    r.tieOverflow = s->tieOverflow;
    r.volumeTests = s->volumeTests;
    r.triangleTests = s->triangleTests;
    *result = r;
}

/// Levels of a depth-first tree (0 when empty): children follow their parent.
int treeLevels(const std::vector<RssNode>& nodes) {
    std::vector<int> depth(nodes.size(), 0);
    int levels = nodes.empty() ? 0 : 1;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        levels = std::max(levels, depth[i] + 1);
        if ((nodes[i].child & cLeafFlag) != 0) continue;
        depth[i + 1] = depth[i] + 1;
        depth[nodes[i].child] = depth[i] + 1;
    }
    return levels;
}

/// A mesh's arrays on the device.
struct DeviceMesh {
    DeviceBuffer<float> positions;       ///< x, y, z per vertex.
    DeviceBuffer<std::uint32_t> indices; ///< Three per triangle.
    DeviceBuffer<RssNode> nodes;         ///< The RSS tree.
    int levels = 0;                      ///< Levels of the tree.

    /// What the kernels read.
    DeviceMeshView view() const { return DeviceMeshView{positions.data(), indices.data(), nodes.data()}; }
};

/// A stream's work captured as a graph, replayed by one launch.
class CapturedWork {
public:
    CapturedWork() = default;
    CapturedWork(const CapturedWork&) = delete;
    CapturedWork& operator=(const CapturedWork&) = delete;
    /// Destroys the graph.
    ~CapturedWork() { reset(); }

    /// Captures what `enqueue` puts on `stream` (nothing runs) and instantiates it.
    template <typename Enqueue>
    void capture(cudaStream_t stream, Enqueue enqueue) {
        reset();
        BULLETGPU_CUDA_TRY(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        cudaGraph_t graph = nullptr;
        try {
            enqueue();
        } catch (...) {
            cudaStreamEndCapture(stream, &graph);
            if (graph != nullptr) cudaGraphDestroy(graph);
            throw;
        }
        BULLETGPU_CUDA_TRY(cudaStreamEndCapture(stream, &graph));
        const cudaError_t status = cudaGraphInstantiate(&m_exec, graph, 0);
        cudaGraphDestroy(graph);
        if (status != cudaSuccess) m_exec = nullptr;
        BULLETGPU_CUDA_TRY(status);
    }

    /// Runs the captured work on `stream`.
    void launch(cudaStream_t stream) const { BULLETGPU_CUDA_TRY(cudaGraphLaunch(m_exec, stream)); }

    /// Forgets the captured work.
    void reset() {
        if (m_exec != nullptr) cudaGraphExecDestroy(m_exec);
        m_exec = nullptr;
    }

private:
    cudaGraphExec_t m_exec = nullptr;
};

/// What a captured pass depends on: the meshes' arrays, the rounds, the frontier's capacity and
/// every buffer the pass reads or writes.
using PassShape = std::array<std::uintptr_t, 17>;

/// Copies `count` elements to a device buffer made large enough (nothing when empty).
template <typename T>
void upload(DeviceBuffer<T>& buffer, const T* data, std::size_t count, cudaStream_t stream) {
    if (count == 0) return;
    buffer.reserve(count, stream);
    BULLETGPU_CUDA_TRY(cudaMemcpyAsync(buffer.data(), data, count * sizeof(T), cudaMemcpyHostToDevice, stream));
}

/// The CUDA distance engine (see the file comment).
class CudaDistanceEngine final : public detail::DistanceDeviceEngine {
public:
    explicit CudaDistanceEngine(int device) : m_name(usableCudaDeviceName(device)), m_device(device), m_stream(device) {
        const DeviceScope scope(m_device);
        int sms = 0;
        BULLETGPU_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, m_device));
        m_expandBlocks = static_cast<unsigned int>(std::max(1, sms)) * cBlocksPerSm;
    }

    void addMesh(const detail::DistanceMesh& mesh) override {
        const DeviceScope scope(m_device);
        auto device = std::make_unique<DeviceMesh>();
        const cudaStream_t stream = m_stream.get();
        upload(device->positions, mesh.positions.data(), mesh.positions.size(), stream);
        upload(device->indices, mesh.indices.data(), mesh.indices.size(), stream);
        upload(device->nodes, mesh.tree.nodes().data(), mesh.tree.nodes().size(), stream);
        device->levels = treeLevels(mesh.tree.nodes());
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
        m_meshes.push_back(std::move(device));
    }

    DistanceResult distance(const detail::DistanceQuery& query, const DistanceOptions& options) override {
        const DeviceScope scope(m_device);
        const DeviceMesh& ma = *m_meshes[query.meshA];
        const DeviceMesh& mb = *m_meshes[query.meshB];
        const int rounds = ma.levels + mb.levels - 1;
        if (rounds > cMaxRounds) throw std::length_error("bulletgpu: RSS trees too deep for the CUDA distance query");
        double initialBest = INFINITY, knownFinal = NAN;
        std::uint64_t capacity = options.cudaFrontierLimit != 0
                                     ? std::min(options.cudaFrontierLimit, m_frontierCapacity)
                                     : m_frontierCapacity;
        DistanceResult out;
        for (int pass = 0;; ++pass) {
            const PassResult r = runPass(query, ma, mb, rounds, capacity, initialBest, knownFinal);
            if (r.leftover != 0)
                throw std::logic_error("bulletgpu: CUDA distance query left pairs after its last round");
            out.volumeTests += r.volumeTests;
            out.triangleTests += r.triangleTests;
            if (r.intersecting != 0 || (r.frontierOverflow == 0 && r.tieOverflow == 0)) {
                out.distance = r.distance;
                out.triangleA = r.triangleA;
                out.triangleB = r.triangleB;
                out.intersecting = r.intersecting != 0;
                for (int k = 0; k < 3; ++k) {
                    out.pointA[k] = r.pointA[k];
                    out.pointB[k] = r.pointB[k];
                }
                return out;
            }
            if (pass + 1 == cMaxPasses) throw std::runtime_error("bulletgpu: CUDA distance query did not settle");
            if (r.frontierOverflow != 0) {
                // The bound found is some pair's distance: an upper bound that prunes nothing the
                // answer needs. The frontier grows past the largest round seen, and stays grown.
                capacity = std::min(cMaxFrontier, std::max(2 * capacity, 2 * static_cast<std::uint64_t>(r.peakPairs)));
                m_frontierCapacity = std::max(m_frontierCapacity, capacity);
                knownFinal = NAN;
            } else {
                knownFinal = r.best; // complete pass: its bound is the answer's distance
            }
            initialBest = r.best;
        }
    }

    std::string description() const override { return "cuda (" + m_name + ")"; }

private:
    /// One pass of a query from the running bound `initialBest`, its rounds keeping at most
    /// `frontierPairs` pairs (see the file comment).
    PassResult runPass(const detail::DistanceQuery& query, const DeviceMesh& ma, const DeviceMesh& mb, int rounds,
                       std::uint64_t frontierPairs, double initialBest, double knownFinal) {
        const cudaStream_t stream = m_stream.get();
        for (DeviceBuffer<DistanceNodePair>& frontier : m_frontier) frontier.reserve(frontierPairs, stream);
        m_leaves.reserve(frontierPairs, stream);
        m_ties.reserve(cTieCapacity, stream);
        m_state.reserve(1, stream);
        m_result.reserve(1, stream);
        m_hostState.reserve(1, stream);
        m_hostRoot.reserve(1, stream);
        m_hostResult.reserve(1, stream);
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream)); // the pinned state may still be read by the last pass

        QueryState& h = *m_hostState.data();
        std::memset(&h, 0, sizeof h);
        std::memcpy(h.transformA, query.transformA, sizeof h.transformA);
        std::memcpy(h.transformB, query.transformB, sizeof h.transformB);
        relativeTransform(query.transformA, query.transformB, h.relative);
        h.slack = query.slack;
        h.knownFinal = knownFinal;
        std::memcpy(&h.bestBits, &initialBest, sizeof initialBest);
        h.tieKey = cNoKey;
        h.meetKey = cNoKey;
        h.counts[0] = 1;
        *m_hostRoot.data() = DistanceNodePair{0, 0, -INFINITY};

        const DeviceMeshView a = ma.view(), b = mb.view();
        const auto capacity = static_cast<std::uint32_t>(frontierPairs);
#if defined(BULLETGPU_CUDA_DEBUG_SYNC)
        enqueuePass(a, b, rounds, capacity); // every launch checked as it runs
#else
        const auto at = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };
        const PassShape shape{at(a.positions),
                              at(a.indices),
                              at(a.nodes),
                              at(b.positions),
                              at(b.indices),
                              at(b.nodes),
                              static_cast<std::uintptr_t>(rounds),
                              capacity,
                              at(m_frontier[0].data()),
                              at(m_frontier[1].data()),
                              at(m_leaves.data()),
                              at(m_ties.data()),
                              at(m_state.data()),
                              at(m_result.data()),
                              at(m_hostState.data()),
                              at(m_hostRoot.data()),
                              at(m_hostResult.data())};
        if (shape != m_passShape) {
            m_passShape = PassShape{};
            m_pass.capture(stream, [&] { enqueuePass(a, b, rounds, capacity); });
            m_passShape = shape;
        }
        m_pass.launch(stream);
#endif
        BULLETGPU_CUDA_TRY(cudaStreamSynchronize(stream));
        return *m_hostResult.data();
    }

    /// Puts a pass on the stream: the state and root pair up, the descent, the rounds, the
    /// finishing kernel and the result back (see the file comment).
    void enqueuePass(const DeviceMeshView& a, const DeviceMeshView& b, int rounds, std::uint32_t capacity) {
        const cudaStream_t stream = m_stream.get();
        BULLETGPU_CUDA_TRY(
            cudaMemcpyAsync(m_state.data(), m_hostState.data(), sizeof(QueryState), cudaMemcpyHostToDevice, stream));
        BULLETGPU_CUDA_TRY(cudaMemcpyAsync(m_frontier[0].data(), m_hostRoot.data(), sizeof(DistanceNodePair),
                                           cudaMemcpyHostToDevice, stream));
        QueryState* s = m_state.data();
        const int descentRound = rounds > cDescentRound ? cDescentRound : 0;
        for (int round = 0; round < rounds; ++round) {
            const DistanceNodePair* in = m_frontier[round % 2].data();
            if (round == descentRound) {
                descendKernel<<<(cMaxDescents + cTraversalThreads - 1) / cTraversalThreads, cTraversalThreads, 0,
                                stream>>>(a, b, s, in, capacity, round, m_ties.data());
                BULLETGPU_CUDA_CHECK_LAUNCH(stream);
            }
            expandKernel<<<m_expandBlocks, cTraversalThreads, 0, stream>>>(
                a, b, s, in, m_frontier[(round + 1) % 2].data(), m_leaves.data(), capacity, round);
            BULLETGPU_CUDA_CHECK_LAUNCH(stream);
            measureKernel<<<m_expandBlocks, cTraversalThreads, 0, stream>>>(a, b, s, m_leaves.data(), capacity, round,
                                                                            m_ties.data());
            BULLETGPU_CUDA_CHECK_LAUNCH(stream);
        }
        finishKernel<<<1, cFinishThreads, 0, stream>>>(a, b, s, m_ties.data(), rounds, m_result.data());
        BULLETGPU_CUDA_CHECK_LAUNCH(stream);
        BULLETGPU_CUDA_TRY(
            cudaMemcpyAsync(m_hostResult.data(), m_result.data(), sizeof(PassResult), cudaMemcpyDeviceToHost, stream));
    }

    std::string m_name;
    int m_device;
    CudaStream m_stream;
    unsigned int m_expandBlocks = 1;
    std::vector<std::unique_ptr<DeviceMesh>> m_meshes;
    std::uint64_t m_frontierCapacity = cInitialFrontier; ///< Pairs a round may keep (grows on overflow).
    DeviceBuffer<DistanceNodePair> m_frontier[2];        ///< The pairs of the even and odd rounds.
    DeviceBuffer<DistanceNodePair> m_leaves;             ///< The leaf pairs of the round.
    DeviceBuffer<TieCandidate> m_ties;                   ///< Leaf pairs listed at or below the bound.
    DeviceBuffer<QueryState> m_state;                    ///< The pass's state.
    DeviceBuffer<PassResult> m_result;                   ///< The pass's result.
    PinnedBuffer<QueryState> m_hostState;                ///< Staging of the state.
    PinnedBuffer<DistanceNodePair> m_hostRoot;           ///< Staging of the root pair.
    PinnedBuffer<PassResult> m_hostResult;               ///< The result, copied back.
    CapturedWork m_pass;                                 ///< The last pass, captured.
    PassShape m_passShape{};                             ///< What m_pass was captured for.
};

} // namespace

std::unique_ptr<detail::DistanceDeviceEngine> detail::createCudaDistanceEngine(int device) {
    return std::make_unique<CudaDistanceEngine>(device);
}

} // namespace bulletgpu
