// SPDX-License-Identifier: Zlib
// bulletgpu-bench-pair-cache: one broadphase update's lost and found pairs applied to
//  - bulletgpu::PairCache in one absorb(),
//  - Bullet's btHashedOverlappingPairCache pair by pair with the buckets loaded ahead (the
//    broadphase's default cache, PrefetchingPairCache, as PairCacheSync drives it),
//  - btHashedOverlappingPairCache pair by pair as dbvt drives it.
// The three caches get the same changes each frame, in rotating order; prints medians and mins.
#include "bench/machine_info.h"
#include "bench/sample_statistics.h"
#include "plugin/prefetching_pair_cache.h"

#include <bulletgpu/PairCache.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

/// Proxy pointers, two per pair.
using PairList = std::vector<btBroadphaseProxy*>;

/// Milliseconds a call takes.
template <typename Work>
double timeMs(Work&& work) {
    const auto start = Clock::now();
    work();
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// Pair by pair, loading ahead as PairCacheSync does: proxies' bucket 3 strides ahead, the
/// chain's first pair 2, its proxies 1.
void applyPrefetching(bulletgpu::PrefetchingPairCache& cache, const PairList& lost, const PairList& found) {
    constexpr std::size_t cStride = 6;
    const auto ahead = [&](const PairList& pairs, std::size_t i) {
        const std::size_t n = pairs.size() / 2;
        if (i + 3 * cStride < n) cache.prefetchBucket(pairs[2 * (i + 3 * cStride)], pairs[2 * (i + 3 * cStride) + 1]);
        if (i + 2 * cStride < n) cache.prefetchChain(pairs[2 * (i + 2 * cStride)], pairs[2 * (i + 2 * cStride) + 1]);
        if (i + cStride < n) cache.prefetchChainProxies(pairs[2 * (i + cStride)], pairs[2 * (i + cStride) + 1]);
    };
    for (std::size_t i = 0; i < lost.size() / 2; ++i) {
        ahead(lost, i);
        cache.removeOverlappingPair(lost[2 * i], lost[2 * i + 1], nullptr);
    }
    for (std::size_t i = 0; i < found.size() / 2; ++i) {
        ahead(found, i);
        cache.addOverlappingPair(found[2 * i], found[2 * i + 1]);
    }
}

/// Pair by pair, nothing loaded ahead.
void applyPlain(btHashedOverlappingPairCache& cache, const PairList& lost, const PairList& found) {
    for (std::size_t i = 0; i < lost.size() / 2; ++i)
        cache.removeOverlappingPair(lost[2 * i], lost[2 * i + 1], nullptr);
    for (std::size_t i = 0; i < found.size() / 2; ++i) cache.addOverlappingPair(found[2 * i], found[2 * i + 1]);
}

} // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "--help") {
        std::puts("usage: bulletgpu-bench-pair-cache [PAIRS CHURN FRAMES]  (default 122000 5700 1000)\n"
                  "  PAIRS pairs among 100,000 proxies, each frame CHURN of them lost and CHURN new ones found");
        return 0;
    }
    const std::size_t pairCount = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 122000;
    const std::size_t churn = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 5700;
    const int frames = argc > 3 ? std::atoi(argv[3]) : 1000;
    constexpr int cProxies = 100000;
    constexpr int cWarmup = 20;
    std::printf("machine: %s, load %s\n", bulletgpu::cpuModel().c_str(), bulletgpu::loadAverages().c_str());

    // Proxies whose partners have nearby ids, as neighbours in a sorted sweep would.
    std::vector<btBroadphaseProxy> proxies(cProxies);
    for (int i = 0; i < cProxies; ++i) {
        proxies[i].m_uniqueId = i + 1;
        proxies[i].m_collisionFilterGroup = btBroadphaseProxy::DefaultFilter;
        proxies[i].m_collisionFilterMask = btBroadphaseProxy::AllFilter;
    }
    std::mt19937 random(20240611);
    const auto randomPair = [&](btBroadphaseProxy*& a, btBroadphaseProxy*& b) {
        const int i = static_cast<int>(random() % cProxies);
        int j = std::clamp(i + static_cast<int>(random() % 81) - 40, 0, cProxies - 1);
        if (j == i) j = (i + 1) % cProxies;
        a = &proxies[i];
        b = &proxies[j];
    };
    bulletgpu::PairCache flat;
    bulletgpu::PrefetchingPairCache prefetching;
    btHashedOverlappingPairCache plain;
    while (static_cast<std::size_t>(flat.getNumOverlappingPairs()) < pairCount) {
        btBroadphaseProxy *a, *b;
        randomPair(a, b);
        flat.addOverlappingPair(a, b);
        prefetching.addOverlappingPair(a, b);
        plain.addOverlappingPair(a, b);
    }

    std::vector<double> flatMs, prefetchingMs, plainMs;
    PairList lost, found;
    std::unordered_set<std::uint64_t> chosen;
    for (int frame = 0; frame < cWarmup + frames; ++frame) {
        lost.clear();
        found.clear();
        chosen.clear();
        const btBroadphasePairArray& pairs = flat.getOverlappingPairArray();
        while (lost.size() < 2 * churn) {
            const btBroadphasePair& pair = pairs[static_cast<int>(random() % pairs.size())];
            if (!chosen.insert(bulletgpu::PairIndex::keyOf(pair.m_pProxy0->getUid(), pair.m_pProxy1->getUid()))
                     .second) {
                continue;
            }
            lost.push_back(pair.m_pProxy0);
            lost.push_back(pair.m_pProxy1);
        }
        while (found.size() < 2 * churn) {
            btBroadphaseProxy *a, *b;
            randomPair(a, b);
            if (!chosen.insert(bulletgpu::PairIndex::keyOf(a->getUid(), b->getUid())).second) continue;
            if (flat.findPair(a, b) != nullptr) continue;
            found.push_back(a);
            found.push_back(b);
        }
        double times[3];
        for (int k = 0; k < 3; ++k) {
            const int which = (frame + k) % 3;
            if (which == 0) times[0] = timeMs([&] { flat.absorb(lost.data(), churn, found.data(), churn, nullptr); });
            if (which == 1) times[1] = timeMs([&] { applyPrefetching(prefetching, lost, found); });
            if (which == 2) times[2] = timeMs([&] { applyPlain(plain, lost, found); });
        }
        if (flat.getNumOverlappingPairs() != prefetching.getNumOverlappingPairs() ||
            flat.getNumOverlappingPairs() != plain.getNumOverlappingPairs()) {
            std::fprintf(stderr, "the caches disagree\n");
            return 1;
        }
        if (frame < cWarmup) continue;
        flatMs.push_back(times[0]);
        prefetchingMs.push_back(times[1]);
        plainMs.push_back(times[2]);
    }
    std::printf("%d proxies, %zu pairs, %zu lost + %zu found per frame, %d frames after %d warm-up\n", cProxies,
                pairCount, churn, churn, frames, cWarmup);
    std::printf("%-44s %10s %10s\n", "cache", "median ms", "min ms");
    const auto row = [](const char* name, const std::vector<double>& ms) {
        std::printf("%-44s %10.3f %10.3f\n", name, bulletgpu::bench::median(ms),
                    *std::min_element(ms.begin(), ms.end()));
    };
    row("bulletgpu::PairCache::absorb", flatMs);
    row("btHashedOverlappingPairCache + prefetches", prefetchingMs);
    row("btHashedOverlappingPairCache", plainMs);
    return 0;
}
