// SPDX-License-Identifier: Zlib
#include "plugin/prefetching_pair_cache.h"

#include <catch2/catch.hpp>

#include <random>
#include <vector>

TEST_CASE("PrefetchingPairCache: loads the bucket Bullet's cache hashes each pair into", "[broadphase]") {
    bulletgpu::PrefetchingPairCache cache;
    std::vector<btBroadphaseProxy> proxies(3000);
    for (std::size_t i = 0; i < proxies.size(); ++i) {
        proxies[i].m_uniqueId = static_cast<int>(i) + 1;
        proxies[i].m_collisionFilterGroup = btBroadphaseProxy::AllFilter;
        proxies[i].m_collisionFilterMask = btBroadphaseProxy::AllFilter;
    }
    std::mt19937 random(7);
    std::uniform_int_distribution<std::size_t> pick(0, proxies.size() - 1);
    std::vector<std::pair<btBroadphaseProxy*, btBroadphaseProxy*>> added;
    // Enough pairs that the cache's tables grow several times; both argument orders.
    while (added.size() < 5000) {
        btBroadphaseProxy* a = &proxies[pick(random)];
        btBroadphaseProxy* b = &proxies[pick(random)];
        if (a == b || cache.findPair(a, b) != nullptr) continue;
        REQUIRE(cache.addOverlappingPair(a, b) != nullptr);
        added.emplace_back(a, b);
    }
    for (const auto& [a, b] : added) {
        REQUIRE(cache.bucketOf(a, b) == cache.bucketOf(b, a));
        REQUIRE(cache.bucketHolds(a, b));
        REQUIRE(cache.bucketHolds(b, a));
        cache.prefetchBucket(a, b);
        cache.prefetchChain(a, b);
        cache.prefetchChainProxies(a, b);
    }
    // A pair that is not there is in no bucket.
    CHECK_FALSE(cache.bucketHolds(&proxies[0], &proxies[0]));
}
