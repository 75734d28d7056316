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
#include "kernels/narrow/distance/distance_kernels.cuh"
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
using namespace detail::distance_device;

/// Blocks of an expansion round per multiprocessor (each thread strides over the round's pairs).
constexpr unsigned int cBlocksPerSm = 4;

/// The round whose pairs also descend greedily (cMaxDescents of them at most).
constexpr int cDescentRound = 12;

/// Node pairs a frontier holds at first (16 bytes each; two frontiers and the leaf list).
constexpr std::uint64_t cInitialFrontier = std::uint64_t{1} << 20;

/// Most pairs a frontier may hold.
constexpr std::uint64_t cMaxFrontier = std::uint64_t{1} << 31;

/// Most passes of one query (each after an overflow, with larger buffers or a known answer).
constexpr int cMaxPasses = 40;

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
