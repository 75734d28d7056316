// SPDX-License-Identifier: Zlib
#pragma once

#include <bulletgpu/Backend.h>
#include <bulletgpu/MarginBoxes.h>

#include <BulletCollision/BroadphaseCollision/btBroadphaseInterface.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

class btOverlappingPairCache;

namespace bulletgpu {

/// Settings of a Broadphase, fixed at construction. Every field has a usable default; the
/// sentinels are named below so that a 0 says what it means.
struct BroadphaseConfig {
    /// `threads`: OpenMP's default team size (omp_get_max_threads(), i.e. OMP_NUM_THREADS or
    /// the processor count).
    static constexpr int cOpenMpDefaultThreads = 0;
    /// `partitions`: the backend and the slab count follow the object count (SlabCostModel).
    static constexpr int cAutomaticPartitions = 0;
    /// `cpuSlabObjects`, `gpuSlabObjects`: never split at any object count.
    static constexpr std::uint32_t cNeverSplit = 0;
    /// `threads` (or OpenMP's default) above max(cMinThreadCap, 4 x the processors OpenMP sees)
    /// is clamped to that: more threads only slow the sweep, and far more (100,000, say) exhaust
    /// the OpenMP runtime.
    static constexpr int cMinThreadCap = 256;

    /// Which backend runs the pair search. The environment variable BULLETGPU_BACKEND (cpu, cuda
    /// or auto, in any case, surrounding spaces ignored) overrides Auto; any other non-blank
    /// value makes the constructor throw std::runtime_error.
    Backend backend = Backend::Auto;
    /// CPU threads of the CPU backend and of the host-side work (pair-cache updates) on either
    /// backend. cOpenMpDefaultThreads (0) or a negative value: OpenMP's default. The result is
    /// clamped to 1..max(cMinThreadCap, 4 x omp_get_num_procs()), and the backend line of the
    /// log says when it was clamped.
    int threads = cOpenMpDefaultThreads;
    /// The CUDA device to use first, only when `devices` is empty (then it is followed by every
    /// other device the CUDA runtime sees); ignored when `devices` lists devices. Must be >= 0.
    int cudaDevice = 0;
    /// CUDA devices the scene may be split across, one slab each (several slabs on one device
    /// run on separate streams); a one-GPU plan uses the first. Empty: cudaDevice, then every
    /// other device the CUDA runtime sees. A listed device that does not exist is an error
    /// (std::runtime_error) whenever CUDA itself works.
    std::vector<int> devices;
    /// Slabs the scene is split into along its best axis (Avril et al. 2014): each slab runs
    /// on its own CPU thread or GPU, and the results merge exactly. cAutomaticPartitions (0)
    /// chooses the backend and the slabs from the object count (SlabCostModel, see the README);
    /// 1 never splits; at most 64.
    int partitions = cAutomaticPartitions;
    /// With automatic partitions: the object count from which the CPU threads each take a slab
    /// instead of sharing one sweep. cNeverSplit (0, the default) never splits on the CPU, the
    /// faster choice at every size measured on 2 cores (docs/benchmarks/partition-cpu.md).
    std::uint32_t cpuSlabObjects = cNeverSplit;
    /// With automatic partitions and several usable GPUs: the object count from which each GPU
    /// takes a slab. cNeverSplit (0, the default) never splits, the faster choice at every size
    /// measured: on one H100, K = 2 slabs on streams cost 2.7x one finder at 10^6 cubes
    /// (docs/benchmarks/partition-h100.md).
    std::uint32_t gpuSlabObjects = cNeverSplit;
    /// Whether the CPU backend sweeps boxes grown by a margin, so that boxes moving a little per
    /// frame cost one re-test per candidate pair instead of a sweep (see the README). Auto times
    /// both ways at 8,192 proxies or more and keeps the faster; smaller scenes never use margins.
    MarginBoxes marginBoxes = MarginBoxes::Auto;
    /// Proxies to reserve room for up front (grows on demand).
    std::uint32_t initialCapacity = 1024;
    /// Pair cache to fill, or null (the default) for one the broadphase owns (see
    /// flatPairCache). Yours is not owned: the broadphase never deletes it, so it
    /// must outlive the broadphase and be deleted by you afterwards (destroy the proxies first,
    /// or its pairs point at freed proxies). It must remove pairs immediately
    /// (hasDeferredRemoval() == false), else the constructor throws std::runtime_error.
    btOverlappingPairCache* pairCache = nullptr;
    /// Which cache the broadphase makes when pairCache is null: true (the default), a
    /// bulletgpu::PairCache that takes each update's lost and found pairs in one absorb(); false,
    /// Bullet's btHashedOverlappingPairCache, changed pair by pair with its buckets loaded ahead.
    /// Both hold the same pairs in the same order and give the same simulation; PairCache's
    /// frames are faster (docs/benchmarks/pair-cache-cpu.md).
    bool flatPairCache = true;
    /// Whether to log the line that says which backend was chosen and why, at construction.
    bool logBackendChoice = true;
    /// Where log lines go: the backend line above and, should a GPU fail, the line saying the
    /// broadphase carries on on the CPU. Each line starts with "bulletgpu: " and has no newline;
    /// the sink is called on the thread that called the broadphase. Empty (the default): standard
    /// error. A sink that does nothing silences the log.
    std::function<void(const char* line)> logSink;
    /// Whether every proxy's userPtr (its m_clientObject) is null or the btCollisionObject the
    /// proxy is made for, as when a btCollisionWorld creates the proxies (the default). The
    /// broadphase then reads the object to find ghost objects, whose pairs it updates in setAabb,
    /// for proxies that are their object's broadphase handle. Set it to false when you call
    /// createProxy yourself with your own userPtr: userPtr is then never read, and every proxy,
    /// ghost or not, gets its pairs at calculateOverlappingPairs.
    bool proxiesFromCollisionWorld = true;
};

/// A drop-in btBroadphaseInterface: replace `new btDbvtBroadphase()` with `new bulletgpu::Broadphase()`.
///
/// After calculateOverlappingPairs() the pair cache holds exactly the pairs of live proxies
/// whose last AABBs overlap inclusively on all three axes and pass the filter (group/mask,
/// or the installed btOverlapFilterCallback alone). Pair changes reach the cache as
/// removals then additions through the dispatcher, so persisting pairs keep their
/// collision algorithm and manifold. A NaN or inverted AABB overlaps nothing.
class Broadphase final : public btBroadphaseInterface {
public:
    /// Builds the broadphase on the configured backend. Throws std::invalid_argument for
    /// partitions outside 0..64 or a negative device, and std::runtime_error when Backend::Cuda
    /// is asked for and no CUDA device can be used, a listed device does not exist,
    /// BULLETGPU_BACKEND has an unknown value or the pair cache defers removals.
    explicit Broadphase(const BroadphaseConfig& config = {});
    ~Broadphase() override;

    Broadphase(const Broadphase&) = delete;
    Broadphase& operator=(const Broadphase&) = delete;

    /// The backend in use (Cpu or Cuda, never Auto).
    Backend backend() const;

    // btBroadphaseInterface; see Bullet's btBroadphaseInterface.h for the contract of each.
    btBroadphaseProxy* createProxy(const btVector3& aabbMin, const btVector3& aabbMax, int shapeType, void* userPtr,
                                   int collisionFilterGroup, int collisionFilterMask,
                                   btDispatcher* dispatcher) override;
    void destroyProxy(btBroadphaseProxy* proxy, btDispatcher* dispatcher) override;
    void setAabb(btBroadphaseProxy* proxy, const btVector3& aabbMin, const btVector3& aabbMax,
                 btDispatcher* dispatcher) override;
    void getAabb(btBroadphaseProxy* proxy, btVector3& aabbMin, btVector3& aabbMax) const override;
    void rayTest(const btVector3& rayFrom, const btVector3& rayTo, btBroadphaseRayCallback& rayCallback,
                 const btVector3& aabbMin = btVector3(0, 0, 0), const btVector3& aabbMax = btVector3(0, 0, 0)) override;
    void aabbTest(const btVector3& aabbMin, const btVector3& aabbMax, btBroadphaseAabbCallback& callback) override;
    void calculateOverlappingPairs(btDispatcher* dispatcher) override;
    btOverlappingPairCache* getOverlappingPairCache() override;
    const btOverlappingPairCache* getOverlappingPairCache() const override;
    void getBroadphaseAabb(btVector3& aabbMin, btVector3& aabbMax) const override;
    void resetPool(btDispatcher* dispatcher) override;
    void printStats() override;

    /// setAabb for many proxies in one call, with the same result as calling setAabb(proxies[i],
    /// mins[i], maxs[i], dispatcher) for each i in turn: boxes whose bits did not change are
    /// skipped, and the pairs of ghost objects are brought up to date (after every box is stored,
    /// so a ghost meets the others' new boxes). Null entries are skipped. A proxy may appear at
    /// most once: from 32,768 entries the boxes are compared and written on several threads
    /// (BroadphaseConfig::threads, or one when that timed faster).
    void setAabbs(btBroadphaseProxy* const* proxies, const btVector3* mins, const btVector3* maxs, int count,
                  btDispatcher* dispatcher);

    /// Number of live proxies.
    int proxyCount() const;

    /// Slabs the last update split the scene into (1: not split).
    int partitions() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace bulletgpu
