// SPDX-License-Identifier: Zlib
// bulletgpu::PairCache against btHashedOverlappingPairCache as the oracle: the same pair array
// (order, algorithms, user data), the same ghost events and the same answers, under seeded
// random sequences of every operation of the interface; absorb() against one-by-one calls.
#include <bulletgpu/PairCache.h>

#include <BulletCollision/BroadphaseCollision/btCollisionAlgorithm.h>
#include <BulletCollision/CollisionDispatch/btCollisionDispatcher.h>
#include <BulletCollision/CollisionDispatch/btDefaultCollisionConfiguration.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

/// An algorithm that does nothing but count its destruction.
class CountedAlgorithm final : public btCollisionAlgorithm {
public:
    CountedAlgorithm(const btCollisionAlgorithmConstructionInfo& info, int& destroyed)
        : btCollisionAlgorithm(info), m_destroyed(destroyed) {}
    ~CountedAlgorithm() override { ++m_destroyed; }
    void processCollision(const btCollisionObjectWrapper*, const btCollisionObjectWrapper*, const btDispatcherInfo&,
                          btManifoldResult*) override {}
    btScalar calculateTimeOfImpact(btCollisionObject*, btCollisionObject*, const btDispatcherInfo&,
                                   btManifoldResult*) override {
        return 1;
    }
    void getAllContactManifolds(btManifoldArray&) override {}

private:
    int& m_destroyed;
};

/// One ghost event: added or removed, and the two unique ids in the order reported.
struct GhostEvent {
    bool added;
    int uid0, uid1;
    bool operator==(const GhostEvent& other) const {
        return added == other.added && uid0 == other.uid0 && uid1 == other.uid1;
    }
};

/// Records what a cache tells its internal ghost callback.
class GhostRecorder final : public btOverlappingPairCallback {
public:
    btBroadphasePair* addOverlappingPair(btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1) override {
        events.push_back({true, proxy0->getUid(), proxy1->getUid()});
        return nullptr;
    }
    void* removeOverlappingPair(btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1, btDispatcher*) override {
        events.push_back({false, proxy0->getUid(), proxy1->getUid()});
        return nullptr;
    }
    void removeOverlappingPairsContainingProxy(btBroadphaseProxy*, btDispatcher*) override { ++bulkRemovals; }

    std::vector<GhostEvent> events; ///< Every event, in order.
    int bulkRemovals = 0;           ///< Calls a cache must never make.
};

/// Accepts a pair when the sum of its unique ids is odd, whatever the groups and masks say.
class OddSumFilter final : public btOverlapFilterCallback {
public:
    bool needBroadphaseCollision(btBroadphaseProxy* proxy0, btBroadphaseProxy* proxy1) const override {
        return (proxy0->getUid() + proxy1->getUid()) % 2 == 1;
    }
};

/// Removes pairs whose id sum is a multiple of `divisor` and records the pairs it visits.
class RemovingVisitor final : public btOverlapCallback {
public:
    explicit RemovingVisitor(int divisor) : m_divisor(divisor) {}
    bool processOverlap(btBroadphasePair& pair) override {
        const int sum = pair.m_pProxy0->getUid() + pair.m_pProxy1->getUid();
        visited.emplace_back(pair.m_pProxy0->getUid(), pair.m_pProxy1->getUid());
        return sum % m_divisor == 0;
    }

    std::vector<std::pair<int, int>> visited; ///< Pairs visited, in order.

private:
    int m_divisor;
};

/// A cache under test with its own dispatcher, ghost recorder and algorithm count.
struct Side {
    explicit Side(btOverlappingPairCache& cache) : cache(cache), dispatcher(&configuration) {
        cache.setInternalGhostPairCallback(&ghost);
    }
    ~Side() { cache.setInternalGhostPairCallback(nullptr); }
    Side(const Side&) = delete;
    Side& operator=(const Side&) = delete;

    /// Gives the pair an algorithm (counted) and a user value, as a dispatcher would.
    void equip(btBroadphasePair& pair, void* user) {
        btCollisionAlgorithmConstructionInfo info(&dispatcher, 0);
        void* memory = dispatcher.allocateCollisionAlgorithm(sizeof(CountedAlgorithm));
        pair.m_algorithm = new (memory) CountedAlgorithm(info, destroyed);
        pair.m_internalInfo1 = user;
        ++created;
    }

    btOverlappingPairCache& cache;
    btDefaultCollisionConfiguration configuration;
    btCollisionDispatcher dispatcher;
    GhostRecorder ghost;
    int created = 0;   ///< Algorithms given to pairs.
    int destroyed = 0; ///< Algorithms the cache freed.
};

/// Fails unless both caches hold the same pairs in the same order, with the same proxies'
/// algorithms present and the same user values; both ghost logs and algorithm counts agree.
void requireSame(Side& oracle, Side& tested) {
    const btBroadphasePairArray& expected = oracle.cache.getOverlappingPairArray();
    const btBroadphasePairArray& actual = tested.cache.getOverlappingPairArray();
    REQUIRE(actual.size() == expected.size());
    REQUIRE(tested.cache.getNumOverlappingPairs() == oracle.cache.getNumOverlappingPairs());
    for (int i = 0; i < expected.size(); ++i) {
        CAPTURE(i);
        REQUIRE(actual[i].m_pProxy0 == expected[i].m_pProxy0);
        REQUIRE(actual[i].m_pProxy1 == expected[i].m_pProxy1);
        REQUIRE((actual[i].m_algorithm != nullptr) == (expected[i].m_algorithm != nullptr));
        REQUIRE(actual[i].m_internalInfo1 == expected[i].m_internalInfo1);
    }
    REQUIRE(tested.ghost.events == oracle.ghost.events);
    REQUIRE(tested.ghost.bulkRemovals == 0);
    REQUIRE(tested.created - tested.destroyed == oracle.created - oracle.destroyed);
    REQUIRE(static_cast<bulletgpu::PairCache&>(tested.cache).isConsistent());
}

/// Proxies with distinct, shuffled unique ids and a few filter groups.
std::vector<btBroadphaseProxy> makeProxies(std::size_t count, std::mt19937& random) {
    std::vector<int> uids(count);
    for (std::size_t i = 0; i < count; ++i) uids[i] = static_cast<int>(3 * i + 1);
    std::shuffle(uids.begin(), uids.end(), random);
    std::vector<btBroadphaseProxy> proxies(count);
    for (std::size_t i = 0; i < count; ++i) {
        proxies[i].m_uniqueId = uids[i];
        // One in eight is "static": it pairs with no other static proxy.
        const bool isStatic = random() % 8 == 0;
        proxies[i].m_collisionFilterGroup =
            isStatic ? btBroadphaseProxy::StaticFilter : btBroadphaseProxy::DefaultFilter;
        proxies[i].m_collisionFilterMask =
            isStatic ? btBroadphaseProxy::AllFilter ^ btBroadphaseProxy::StaticFilter : btBroadphaseProxy::AllFilter;
    }
    return proxies;
}

/// A user value unique to a pair of proxies.
void* userValue(const btBroadphaseProxy* a, const btBroadphaseProxy* b) {
    return reinterpret_cast<void*>(static_cast<std::uintptr_t>(bulletgpu::PairIndex::keyOf(a->getUid(), b->getUid())));
}

} // namespace

TEST_CASE("PairIndex: finds, inserts, takes and erases like a hash map through many growths", "[pair_cache]") {
    bulletgpu::PairIndex index;
    std::unordered_map<std::uint64_t, int> oracle;
    std::mt19937 random(11);
    std::uniform_int_distribution<int> uid(1, 400);
    for (int step = 0; step < 200000; ++step) {
        const std::uint64_t key = bulletgpu::PairIndex::keyOf(uid(random), uid(random));
        const auto it = oracle.find(key);
        REQUIRE(index.find(key) == (it == oracle.end() ? -1 : it->second));
        if (random() % 3 != 0 && it == oracle.end()) {
            REQUIRE(index.findOrInsert(key, step) == -1);
            oracle.emplace(key, step);
        } else if (random() % 4 == 0) {
            REQUIRE(index.findOrInsert(key, step) == (it == oracle.end() ? -1 : it->second));
            if (it == oracle.end()) oracle.emplace(key, step);
        } else if (it == oracle.end()) {
            REQUIRE(index.take(key) == -1);
        } else if (random() % 2 == 0) {
            index.erase(key);
            oracle.erase(it);
        } else if (random() % 2 == 0) {
            REQUIRE(index.take(key) == it->second);
            oracle.erase(it);
        } else {
            index.reposition(key, step);
            it->second = step;
        }
        REQUIRE(index.size() == oracle.size());
    }
    for (const auto& [key, position] : oracle) REQUIRE(index.find(key) == position);
}

TEST_CASE("PairCache: random operation sequences match btHashedOverlappingPairCache", "[pair_cache]") {
    const unsigned seed = GENERATE(1u, 2u, 3u, 4u);
    CAPTURE(seed);
    std::mt19937 random(seed);
    std::vector<btBroadphaseProxy> proxies = makeProxies(60, random);
    btHashedOverlappingPairCache oracleCache;
    bulletgpu::PairCache testedCache;
    Side oracle(oracleCache), tested(testedCache);
    OddSumFilter filter;
    std::uniform_int_distribution<std::size_t> pick(0, proxies.size() - 1);
    const auto some = [&]() { return &proxies[pick(random)]; };

    for (int step = 0; step < 6000; ++step) {
        CAPTURE(step);
        const unsigned operation = random() % 100;
        btBroadphaseProxy* a = some();
        btBroadphaseProxy* b = some();
        if (a == b) continue;
        if (operation < 45) {
            btBroadphasePair* expected = oracleCache.addOverlappingPair(a, b);
            btBroadphasePair* actual = testedCache.addOverlappingPair(a, b);
            REQUIRE((actual == nullptr) == (expected == nullptr));
            // Half of the new pairs get an algorithm and a user value.
            if (expected != nullptr && expected->m_algorithm == nullptr && random() % 2 == 0) {
                oracle.equip(*expected, userValue(a, b));
                tested.equip(*actual, userValue(a, b));
            }
        } else if (operation < 75) {
            REQUIRE(testedCache.removeOverlappingPair(a, b, &tested.dispatcher) ==
                    oracleCache.removeOverlappingPair(a, b, &oracle.dispatcher));
        } else if (operation < 85) {
            const btBroadphasePair* expected = oracleCache.findPair(a, b);
            const btBroadphasePair* actual = testedCache.findPair(b, a);
            REQUIRE((actual == nullptr) == (expected == nullptr));
            if (actual != nullptr) {
                REQUIRE(actual->m_pProxy0 == expected->m_pProxy0);
                REQUIRE(actual->m_pProxy1 == expected->m_pProxy1);
            }
        } else if (operation < 89) {
            oracleCache.cleanProxyFromPairs(a, &oracle.dispatcher);
            testedCache.cleanProxyFromPairs(a, &tested.dispatcher);
        } else if (operation < 92) {
            oracleCache.removeOverlappingPairsContainingProxy(a, &oracle.dispatcher);
            testedCache.removeOverlappingPairsContainingProxy(a, &tested.dispatcher);
        } else if (operation < 96) {
            btDispatcherInfo info;
            // Bullet's deterministic walk revisits stale positions after a removal (and can loop
            // forever), so it is compared only with a visitor that removes nothing.
            info.m_deterministicOverlappingPairs = random() % 2 == 0;
            const int divisor = info.m_deterministicOverlappingPairs ? 1 << 30 : 3 + static_cast<int>(random() % 5);
            RemovingVisitor expected(divisor), actual(divisor);
            oracleCache.processAllOverlappingPairs(&expected, &oracle.dispatcher, info);
            testedCache.processAllOverlappingPairs(&actual, &tested.dispatcher, info);
            REQUIRE(actual.visited == expected.visited);
        } else if (operation < 97) {
            oracle.cache.sortOverlappingPairs(&oracle.dispatcher);
            tested.cache.sortOverlappingPairs(&tested.dispatcher);
        } else {
            btOverlapFilterCallback* callback = oracleCache.getOverlapFilterCallback() == nullptr ? &filter : nullptr;
            oracleCache.setOverlapFilterCallback(callback);
            testedCache.setOverlapFilterCallback(callback);
            REQUIRE(testedCache.getOverlapFilterCallback() == callback);
        }
        REQUIRE(testedCache.needsBroadphaseCollision(a, b) == oracleCache.needsBroadphaseCollision(a, b));
        requireSame(oracle, tested);
    }
    // Both freed their algorithms the same number of times, and the tested cache frees the rest.
    CHECK(tested.destroyed > 0);
    CHECK(tested.destroyed == oracle.destroyed);
    for (int proxy = 0; proxy < static_cast<int>(proxies.size()); ++proxy) {
        oracleCache.removeOverlappingPairsContainingProxy(&proxies[proxy], &oracle.dispatcher);
        testedCache.removeOverlappingPairsContainingProxy(&proxies[proxy], &tested.dispatcher);
    }
    requireSame(oracle, tested);
    CHECK(testedCache.getNumOverlappingPairs() == 0);
    CHECK(tested.destroyed == tested.created);
}

TEST_CASE("PairCache: the overlap filter callback alone decides, as in Bullet's cache", "[pair_cache]") {
    btBroadphaseProxy a, b, c;
    a.m_uniqueId = 1;
    b.m_uniqueId = 2;
    c.m_uniqueId = 4;
    // Groups and masks that refuse every pair.
    for (btBroadphaseProxy* proxy : {&a, &b, &c}) {
        proxy->m_collisionFilterGroup = btBroadphaseProxy::StaticFilter;
        proxy->m_collisionFilterMask = btBroadphaseProxy::DefaultFilter;
    }
    bulletgpu::PairCache cache;
    CHECK(cache.addOverlappingPair(&a, &b) == nullptr);
    OddSumFilter filter;
    cache.setOverlapFilterCallback(&filter);
    CHECK(cache.addOverlappingPair(&a, &b) != nullptr); // 1 + 2 is odd
    CHECK(cache.addOverlappingPair(&b, &c) == nullptr); // 2 + 4 is even
    CHECK(cache.addOverlappingPair(&c, &a) != nullptr);
    CHECK(cache.getNumOverlappingPairs() == 2);
    // findPair does not filter; removing the filter later keeps the pairs.
    cache.setOverlapFilterCallback(nullptr);
    CHECK(cache.findPair(&b, &a) != nullptr);
    CHECK(cache.getNumOverlappingPairs() == 2);
}

TEST_CASE("PairCache: absorb equals removing the lost pairs and then adding the found ones", "[pair_cache]") {
    const unsigned seed = GENERATE(5u, 6u, 7u);
    CAPTURE(seed);
    std::mt19937 random(seed);
    std::vector<btBroadphaseProxy> proxies = makeProxies(300, random);
    bulletgpu::PairCache bulkCache, singleCache;
    Side bulk(bulkCache), single(singleCache);
    std::uniform_int_distribution<std::size_t> pick(0, proxies.size() - 1);
    std::vector<btBroadphaseProxy*> lost, found;
    std::vector<std::size_t> refused;
    for (int update = 0; update < 60; ++update) {
        CAPTURE(update);
        lost.clear();
        found.clear();
        // Lost: mostly pairs held (some twice), some absent. Found: new, held, repeated, refused.
        const btBroadphasePairArray& pairs = singleCache.getOverlappingPairArray();
        const int lostCount = pairs.size() == 0 ? 0 : static_cast<int>(random() % (pairs.size() / 3 + 2));
        for (int i = 0; i < lostCount; ++i) {
            const btBroadphasePair& pair = pairs[static_cast<int>(random() % pairs.size())];
            lost.push_back(random() % 2 == 0 ? pair.m_pProxy0 : pair.m_pProxy1);
            lost.push_back(lost.back() == pair.m_pProxy0 ? pair.m_pProxy1 : pair.m_pProxy0);
            if (random() % 10 == 0) {
                lost.push_back(&proxies[pick(random)]);
                lost.push_back(&proxies[pick(random)]);
                if (lost[lost.size() - 1] == lost[lost.size() - 2]) lost.resize(lost.size() - 2);
            }
        }
        const int foundCount = static_cast<int>(random() % 2000);
        for (int i = 0; i < foundCount; ++i) {
            btBroadphaseProxy* a = &proxies[pick(random)];
            btBroadphaseProxy* b = &proxies[pick(random)];
            if (a == b) continue;
            found.push_back(a);
            found.push_back(b);
        }
        if (update == 30) {
            static OddSumFilter filter;
            bulkCache.setOverlapFilterCallback(&filter);
            singleCache.setOverlapFilterCallback(&filter);
        }

        refused.clear();
        const std::size_t refusals =
            bulkCache.absorb(lost.data(), lost.size() / 2, found.data(), found.size() / 2, &bulk.dispatcher, &refused);
        std::vector<std::size_t> expectedRefused;
        for (std::size_t i = 0; i < lost.size() / 2; ++i) {
            singleCache.removeOverlappingPair(lost[2 * i], lost[2 * i + 1], &single.dispatcher);
        }
        for (std::size_t i = 0; i < found.size() / 2; ++i) {
            if (singleCache.addOverlappingPair(found[2 * i], found[2 * i + 1]) == nullptr) expectedRefused.push_back(i);
        }
        REQUIRE(refusals == expectedRefused.size());
        REQUIRE(refused == expectedRefused);
        requireSame(single, bulk);
        // Algorithms on the new pairs, so later removals free them.
        btBroadphasePairArray& bulkPairs = bulkCache.getOverlappingPairArray();
        btBroadphasePairArray& singlePairs = singleCache.getOverlappingPairArray();
        for (int i = 0; i < bulkPairs.size(); ++i) {
            if (bulkPairs[i].m_algorithm != nullptr) continue;
            bulk.equip(bulkPairs[i], userValue(bulkPairs[i].m_pProxy0, bulkPairs[i].m_pProxy1));
            single.equip(singlePairs[i], userValue(singlePairs[i].m_pProxy0, singlePairs[i].m_pProxy1));
        }
    }
    CHECK(bulk.destroyed == single.destroyed);
    CHECK(bulk.destroyed > 0);
    for (btBroadphaseProxy& proxy : proxies) {
        bulkCache.removeOverlappingPairsContainingProxy(&proxy, &bulk.dispatcher);
        singleCache.removeOverlappingPairsContainingProxy(&proxy, &single.dispatcher);
    }
    requireSame(single, bulk);
}

TEST_CASE("PairCache: the deterministic walk visits each pair once, by descending ids, and removes", "[pair_cache]") {
    std::mt19937 random(9);
    std::vector<btBroadphaseProxy> proxies = makeProxies(40, random);
    for (btBroadphaseProxy& proxy : proxies) proxy.m_collisionFilterMask = btBroadphaseProxy::AllFilter;
    bulletgpu::PairCache cache;
    for (int i = 0; i < 300; ++i) cache.addOverlappingPair(&proxies[random() % 40], &proxies[random() % 40]);
    std::vector<std::pair<int, int>> before;
    const btBroadphasePairArray& pairs = cache.getOverlappingPairArray();
    for (int i = 0; i < pairs.size(); ++i)
        before.emplace_back(pairs[i].m_pProxy0->getUid(), pairs[i].m_pProxy1->getUid());
    std::sort(before.rbegin(), before.rend());
    btDispatcherInfo info;
    info.m_deterministicOverlappingPairs = true;
    RemovingVisitor visitor(3);
    cache.processAllOverlappingPairs(&visitor, nullptr, info);
    CHECK(visitor.visited == before);
    std::size_t kept = 0;
    for (const auto& [uid0, uid1] : before) kept += (uid0 + uid1) % 3 != 0 ? 1 : 0;
    CHECK(static_cast<std::size_t>(cache.getNumOverlappingPairs()) == kept);
    CHECK(cache.isConsistent());
}
