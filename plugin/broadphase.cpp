// SPDX-License-Identifier: Zlib
#include <bulletgpu/Broadphase.h>

#include "bullet_adapter/proxy_table.h"
#include "bullet_adapter/vector_conversion.h"
#include "kernels/common/stopwatch.h"
#include "kernels/common/thread_tuner.h"
#include "kernels/query/box_tree.h"
#include "plugin/backend_choice.h"
#include "plugin/pair_cache_sync.h"
#include "plugin/prefetching_pair_cache.h"

#include <bulletgpu/PairCache.h>

#include <BulletCollision/BroadphaseCollision/btOverlappingPairCache.h>
#include <BulletCollision/CollisionDispatch/btCollisionObject.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace bulletgpu {
namespace {

/// Whether a proxy's client is a btGhostObject. Reads the client as a btCollisionObject: only
/// for proxies from a collision world (BroadphaseConfig::proxiesFromCollisionWorld).
bool isGhostClient(const void* clientObject) {
    const auto* object = static_cast<const btCollisionObject*>(clientObject);
    return object != nullptr && object->getInternalType() == btCollisionObject::CO_GHOST_OBJECT;
}

/// Whether a proxy made for a ghost client is that object's broadphase handle, as a world sets
/// it right after createProxy: a ghost's pairs follow its setAabb only then.
bool isHandleOfClient(const btBroadphaseProxy& proxy) {
    return static_cast<const btCollisionObject*>(proxy.m_clientObject)->getBroadphaseHandle() == &proxy;
}

/// setAabbs' per-entry marks: the box or filter changed and awaits its commit; the proxy is a ghost's.
constexpr std::uint8_t cBoxStaged = 1;
constexpr std::uint8_t cGhostProxy = 2;
/// setAabbs runs its comparisons on one thread below this many entries (as BulkAabbUpdater).
constexpr int cParallelEntries = 32768;

btOverlappingPairCache* checkedCache(btOverlappingPairCache* cache) {
    if (cache != nullptr && cache->hasDeferredRemoval()) {
        throw std::runtime_error("bulletgpu: the pair cache must remove pairs immediately (hasDeferredRemoval() == "
                                 "false), e.g. a btHashedOverlappingPairCache");
    }
    return cache;
}

} // namespace

struct Broadphase::Impl {
    explicit Impl(const BroadphaseConfig& config)
        : config(config),
          ownedFlatCache(config.pairCache == nullptr && config.flatPairCache ? new PairCache() : nullptr),
          ownedHashedCache(config.pairCache == nullptr && !config.flatPairCache ? new PrefetchingPairCache() : nullptr),
          cache(config.pairCache != nullptr ? checkedCache(config.pairCache)
                : ownedFlatCache            ? static_cast<btOverlappingPairCache*>(ownedFlatCache.get())
                                            : ownedHashedCache.get()),
          sync(table, *cache, ownedHashedCache.get(), ownedFlatCache.get(), cpuThreads(config.threads)),
          hostThreads(cpuThreads(config.threads)) {
        table.reserve(config.initialCapacity);
        choice = chooseBackend(config);
        plan = choice.plan(0, SlabPlan{});
        try {
            finder = createFinder(choice, plan);
        } catch (const std::exception& error) {
            if (choice.forceGpu) throw;
            choice.allowGpu = false;
            choice.reason += "; the CUDA device failed (" + std::string(error.what()) + "), so the CPU it is";
            plan = choice.plan(0, SlabPlan{});
            finder = createFinder(choice, plan);
        }
        finder->setLostPairSink(&sync);
        if (config.logBackendChoice) logLine(config, choice.reason);
    }

    /// Moves to another plan (backend or slab count) with a finder that starts from the cache's pairs.
    void switchTo(const SlabPlan& next) {
        std::unique_ptr<PairFinder> created;
        try {
            created = createFinder(choice, next);
        } catch (const std::exception& error) {
            if (next.backend != Backend::Cuda) throw;
            fallBackToCpu(error);
            return;
        }
        finder = std::move(created);
        finder->setLostPairSink(&sync);
        plan = next;
        sync.clearEdits();
        finder->applyEdits(sync.currentPairs(), {});
    }

    /// Replaces a failed CUDA finder by a CPU finder that starts from the cache's pairs.
    void fallBackToCpu(const std::exception& error) {
        logLine(config, std::string("the CUDA backend failed, continuing on the CPU: ") + error.what());
        choice.allowGpu = choice.forceGpu = false;
        switchTo(choice.plan(table.liveCount(), SlabPlan{}));
    }

    /// Brings a ghost's pairs up to date with its box at once.
    void refreshGhostPairs(SlotProxy& proxy, btDispatcher* dispatcher) {
        ghostPartners.clear();
        if (table.boxes().isUsable(proxy.slot())) {
            double lo[3], hi[3];
            toDoubles(proxy.m_aabbMin, lo);
            toDoubles(proxy.m_aabbMax, hi);
            tree.queryBox(table.boxes(), lo, hi, [&](std::uint32_t slot) {
                if (slot != proxy.slot()) ghostPartners.push_back(slot);
            });
            std::sort(ghostPartners.begin(), ghostPartners.end());
        }
        sync.setPairsOf(proxy, ghostPartners, dispatcher);
    }

    BroadphaseConfig config;
    BackendChoice choice;
    SlabPlan plan;
    std::unique_ptr<PairCache> ownedFlatCache;              // the cache made when none is given ...
    std::unique_ptr<PrefetchingPairCache> ownedHashedCache; // ... or this one (flatPairCache false)
    btOverlappingPairCache* cache;
    ProxyTable table;
    PairCacheSync sync;
    BoxTree tree;
    std::unique_ptr<PairFinder> finder;
    PairDeltas deltas;
    std::vector<std::uint32_t> ghostPartners;
    int hostThreads;
    ThreadTuner bulkTuner{hostThreads};    // setAabbs' threads
    std::vector<std::uint8_t> bulkChanges; // per setAabbs entry: cBoxStaged | cGhostProxy
    double lastUpdateMs = 0;
    double lastSyncMs = 0;
};

Broadphase::Broadphase(const BroadphaseConfig& config) : m_impl(std::make_unique<Impl>(config)) {}

Broadphase::~Broadphase() = default;

Backend Broadphase::backend() const { return m_impl->finder->backend(); }

int Broadphase::proxyCount() const { return static_cast<int>(m_impl->table.liveCount()); }

int Broadphase::partitions() const { return m_impl->plan.slabs; }

btBroadphaseProxy* Broadphase::createProxy(const btVector3& aabbMin, const btVector3& aabbMax, int /*shapeType*/,
                                           void* userPtr, int collisionFilterGroup, int collisionFilterMask,
                                           btDispatcher* /*dispatcher*/) {
    const bool ghost = m_impl->config.proxiesFromCollisionWorld && isGhostClient(userPtr);
    SlotProxy* proxy =
        m_impl->table.create(aabbMin, aabbMax, userPtr, collisionFilterGroup, collisionFilterMask, ghost);
    m_impl->tree.onInserted(m_impl->table.boxes(), proxy->slot());
    return proxy;
}

void Broadphase::destroyProxy(btBroadphaseProxy* proxy, btDispatcher* dispatcher) {
    auto* slotProxy = static_cast<SlotProxy*>(proxy);
    m_impl->sync.removePairsOf(*slotProxy, dispatcher);
    m_impl->tree.onErased(slotProxy->slot());
    m_impl->table.destroy(slotProxy);
}

void Broadphase::setAabb(btBroadphaseProxy* proxy, const btVector3& aabbMin, const btVector3& aabbMax,
                         btDispatcher* dispatcher) {
    auto* slotProxy = static_cast<SlotProxy*>(proxy);
    const std::uint32_t slot = slotProxy->slot();
    if (m_impl->table.update(slotProxy, aabbMin, aabbMax)) m_impl->tree.onChanged(m_impl->table.boxes(), slot);
    if (m_impl->table.isGhost(slot) && isHandleOfClient(*slotProxy)) m_impl->refreshGhostPairs(*slotProxy, dispatcher);
}

void Broadphase::setAabbs(btBroadphaseProxy* const* proxies, const btVector3* mins, const btVector3* maxs, int count,
                          btDispatcher* dispatcher) {
    Impl& impl = *m_impl;
    ProxyTable& table = impl.table;
    impl.bulkChanges.resize(static_cast<std::size_t>(std::max(count, 0)));
    std::uint8_t* changes = impl.bulkChanges.data();
    const bool tuned = count >= cParallelEntries;
    const int threads = tuned ? impl.bulkTuner.threadsForNextUpdate() : 1;
    const auto start = Clock::now();
    int ghosts = 0;
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static) reduction(+ : ghosts)
    for (int i = 0; i < count; ++i) {
        auto* proxy = static_cast<SlotProxy*>(proxies[i]);
        if (proxy == nullptr) {
            changes[i] = 0;
            continue;
        }
        const bool ghost = table.isGhost(proxy->slot());
        changes[i] = static_cast<std::uint8_t>((table.stage(proxy, mins[i], maxs[i]) ? cBoxStaged : 0) |
                                               (ghost ? cGhostProxy : 0));
        ghosts += ghost ? 1 : 0;
    }
    if (tuned) impl.bulkTuner.record(millisecondsSince(start));
    // The store's dirty list and the query tree are not thread-safe: their share runs here, in order.
    for (int i = 0; i < count; ++i) {
        if ((changes[i] & cBoxStaged) == 0) continue;
        auto* proxy = static_cast<SlotProxy*>(proxies[i]);
        if (table.commit(proxy)) impl.tree.onChanged(table.boxes(), proxy->slot());
    }
    for (int i = 0; i < count && ghosts > 0; ++i) {
        if ((changes[i] & cGhostProxy) == 0) continue;
        auto* proxy = static_cast<SlotProxy*>(proxies[i]);
        if (isHandleOfClient(*proxy)) impl.refreshGhostPairs(*proxy, dispatcher);
        --ghosts;
    }
}

void Broadphase::getAabb(btBroadphaseProxy* proxy, btVector3& aabbMin, btVector3& aabbMax) const {
    aabbMin = proxy->m_aabbMin;
    aabbMax = proxy->m_aabbMax;
}

void Broadphase::rayTest(const btVector3& rayFrom, const btVector3& rayTo, btBroadphaseRayCallback& rayCallback,
                         const btVector3& aabbMin, const btVector3& aabbMax) {
    double from[3], to[3], castMin[3], castMax[3];
    toDoubles(rayFrom, from);
    toDoubles(rayTo, to);
    toDoubles(aabbMin, castMin);
    toDoubles(aabbMax, castMax);
    ProxyTable& table = m_impl->table;
    m_impl->tree.queryRay(table.boxes(), from, to, castMin, castMax,
                          [&](std::uint32_t slot) { rayCallback.process(table.proxy(slot)); });
}

void Broadphase::aabbTest(const btVector3& aabbMin, const btVector3& aabbMax, btBroadphaseAabbCallback& callback) {
    double lo[3], hi[3];
    toDoubles(aabbMin, lo);
    toDoubles(aabbMax, hi);
    ProxyTable& table = m_impl->table;
    m_impl->tree.queryBox(table.boxes(), lo, hi, [&](std::uint32_t slot) { callback.process(table.proxy(slot)); });
}

void Broadphase::calculateOverlappingPairs(btDispatcher* dispatcher) {
    Impl& impl = *m_impl;
    const auto start = Clock::now();
    const bool filterGroups = impl.cache->getOverlapFilterCallback() == nullptr;
    try {
        const SlabPlan next = impl.choice.plan(impl.table.liveCount(), impl.plan);
        if (next != impl.plan) impl.switchTo(next);
        impl.sync.flushEdits(*impl.finder);
        impl.sync.beginUpdate(dispatcher);
        impl.finder->update(impl.table.boxes(), filterGroups, impl.deltas);
    } catch (const std::exception& error) {
        if (impl.finder->backend() != Backend::Cuda) throw;
        impl.fallBackToCpu(error);
        impl.finder->update(impl.table.boxes(), filterGroups, impl.deltas);
    }
    impl.lastUpdateMs = millisecondsSince(start);
    const auto syncStart = Clock::now();
    impl.sync.applyDeltas(impl.deltas, dispatcher);
    impl.lastSyncMs = millisecondsSince(syncStart);
}

btOverlappingPairCache* Broadphase::getOverlappingPairCache() { return m_impl->cache; }

const btOverlappingPairCache* Broadphase::getOverlappingPairCache() const { return m_impl->cache; }

void Broadphase::getBroadphaseAabb(btVector3& aabbMin, btVector3& aabbMax) const {
    const ProxyTable& table = m_impl->table;
    bool any = false;
    for (std::uint32_t slot = 0; slot < table.boxes().size(); ++slot) {
        if (!table.boxes().isUsable(slot)) continue;
        const SlotProxy* proxy = table.proxy(slot);
        if (!any) {
            aabbMin = proxy->m_aabbMin;
            aabbMax = proxy->m_aabbMax;
            any = true;
        } else {
            aabbMin.setMin(proxy->m_aabbMin);
            aabbMax.setMax(proxy->m_aabbMax);
        }
    }
    if (!any) aabbMin = aabbMax = btVector3(0, 0, 0);
}

void Broadphase::resetPool(btDispatcher* /*dispatcher*/) {
    Impl& impl = *m_impl;
    if (impl.table.liveCount() != 0) return; // like btDbvtBroadphase: only an empty broadphase resets
    impl.table.resetSlots();
    impl.finder->reset();
    impl.sync.clearEdits();
    impl.tree.clear();
}

void Broadphase::printStats() {
    const Impl& impl = *m_impl;
    const PairFinderStats& s = impl.finder->stats();
    std::printf("bulletgpu::Broadphase: %s\n", impl.finder->description().c_str());
    std::printf("  proxies %u, pairs %llu, huge %u, sweep axis %d, cells %u, entries %u, candidates %llu\n",
                impl.table.liveCount(), static_cast<unsigned long long>(impl.sync.pairCount()), s.hugeObjects,
                s.sweepAxis, s.cells, s.entries, static_cast<unsigned long long>(s.candidates));
    std::printf("  last update %.3f ms%s on %d thread(s): classify %.3f, %s %.3f, sweep %.3f, diff %.3f, "
                "transfer %.3f; cache sync %.3f ms (%zu found, %zu lost)\n",
                impl.lastUpdateMs, s.skipped ? " (nothing changed)" : "", s.threads, s.classifyMs,
                s.cellsRefilled ? "refill" : "sort", s.sortMs, s.sweepMs, s.diffMs, s.transferMs, impl.lastSyncMs,
                impl.deltas.found.size(), impl.deltas.lost.size());
    if (s.movingObjects > 0) {
        std::printf("  incremental: only the pairs of the %u boxes changed since the last full sweep were recomputed "
                    "(in sweep)\n",
                    s.movingObjects);
    }
    if (s.margins) {
        std::printf(
            "  margin boxes: %u boxes got new ones, %llu candidates, %llu re-tested, %.3f ms besides the sweep\n",
            s.marginEscapes, static_cast<unsigned long long>(s.marginCandidates),
            static_cast<unsigned long long>(s.retests), s.marginMs);
    }
    if (s.partitions > 1) {
        std::printf("  %d slabs on axis %d: straddlers %u (%.1f%% of %u objects), imbalance %.3f, migrated %u%s; loads",
                    s.partitions, s.splitAxis, s.straddlers, s.objects > 0 ? 100.0 * s.straddlers / s.objects : 0.0,
                    s.objects, s.imbalance, s.migrated, s.rebalanced ? ", cuts moved" : "");
        for (int k = 0; k < std::min(s.partitions, PairFinderStats::cReportedPartitions); ++k) {
            std::printf(" %u", s.partitionLoads[static_cast<std::size_t>(k)]);
        }
        std::printf("%s\n", s.partitions > PairFinderStats::cReportedPartitions ? " ..." : "");
    }
}

} // namespace bulletgpu
