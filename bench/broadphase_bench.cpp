// SPDX-License-Identifier: Zlib
// bulletgpu-bench-broadphase: btDbvtBroadphase, bt32BitAxisSweep3 and bulletgpu::Broadphase
// (CPU, and CUDA when a device is usable) on the same work in one process:
//  (a) N moving unit cubes, setAabb on every cube and calculateOverlappingPairs every frame;
//  (b) Bullet's BenchmarkDemo test 1 ("3000 boxes"), whole stepSimulation;
//  (c) N moving cubes as rigid bodies in a btCollisionWorld: the whole frame, updateAabbs plus
//      calculateOverlappingPairs, with Bullet's updateAabbs and with the bulk update.
// Prints tables of medians and writes them, with the machine, as JSON (--json FILE).
#include "bench/benchmark_demo_scene.h"
#include "bench/machine_info.h"
#include "bench/sample_statistics.h"
#include "kernels/common/stopwatch.h"

#include <bulletgpu/Broadphase.h>
#include <bulletgpu/BulkAabbUpdater.h>

#include <BulletCollision/BroadphaseCollision/btAxisSweep3.h>
#include <BulletCollision/BroadphaseCollision/btDbvtBroadphase.h>
#include <btBulletCollisionCommon.h>

#include <nlohmann/json.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

using bulletgpu::Clock;
using bulletgpu::millisecondsSince;

using nlohmann::json;

using bulletgpu::bench::mean;
using bulletgpu::bench::median;

/// Command-line settings.
struct Options {
    std::vector<std::size_t> sizes{1000, 10000, 100000, 1000000};
    int frames = 20;
    int warmup = 40;                    ///< Past the CPU backend's first margin-box trials (MarginBoxes::Auto).
    std::size_t skipSlowAbove = 100000; ///< dbvt and the axis sweep run only up to this N (0: always).
    std::size_t sweepMax = 20000;       ///< The axis sweep runs only up to this N (0: always).
    int demoSteps = 300;
    int threads = 0;
    std::uint32_t seed = 20240611;
    double movingShare = 1.0; ///< Share of the cubes that move; the others rest but still get setAabb.
    double speed = 0.05;      ///< Distance a moving cube covers per frame.
    /// Margin-box settings the BulletGpu CPU backend runs with, one row each.
    std::vector<bulletgpu::MarginBoxes> marginSettings{bulletgpu::MarginBoxes::Auto};
    bulletgpu::MarginBoxes margins = bulletgpu::MarginBoxes::Auto; ///< The setting of the row being run.
    std::vector<std::size_t> worldSizes{100000, 1000000};          ///< Cube counts of (c); empty skips it.
    bool reverseWorldRows = false;                                 ///< Runs (c)'s rows last to first.
    bool flatPairCache = true; ///< The cache BulletGpu rows of (a) and (b) make (BroadphaseConfig::flatPairCache).
    std::string jsonPath;
};

/// The broadphases compared, in table order.
enum class Contender { Dbvt, AxisSweep, BulletGpuCpu, BulletGpuCuda };
constexpr Contender cContenders[] = {Contender::Dbvt, Contender::AxisSweep, Contender::BulletGpuCpu,
                                     Contender::BulletGpuCuda};

const char* nameOf(Contender contender) {
    constexpr const char* cNames[] = {"btDbvtBroadphase", "bt32BitAxisSweep3", "bulletgpu cpu", "bulletgpu cuda"};
    return cNames[static_cast<int>(contender)];
}

/// dbvt's time over this one as text ("-" when dbvt did not run).
std::string speedupText(double dbvtMs, double ms) {
    char text[32] = "-";
    if (dbvtMs > 0) std::snprintf(text, sizeof text, "%.3f", dbvtMs / ms);
    return text;
}

/// Whether the contender is a bulletgpu::Broadphase.
bool isBulletGpu(Contender contender) {
    return contender == Contender::BulletGpuCpu || contender == Contender::BulletGpuCuda;
}

/// A bulletgpu::Broadphase on the given backend, without the backend log line.
std::unique_ptr<bulletgpu::Broadphase> makeBulletGpu(bulletgpu::Backend backend, int threads,
                                                     bulletgpu::MarginBoxes margins = bulletgpu::MarginBoxes::Auto,
                                                     bool flatPairCache = bulletgpu::BroadphaseConfig{}.flatPairCache) {
    bulletgpu::BroadphaseConfig config;
    config.flatPairCache = flatPairCache;
    config.backend = backend;
    config.threads = threads;
    config.marginBoxes = margins;
    config.logBackendChoice = false;
    return std::make_unique<bulletgpu::Broadphase>(config);
}

/// Why the CUDA backend cannot run here, or an empty string when it can.
std::string cudaUnavailableReason(int threads) {
    try {
        makeBulletGpu(bulletgpu::Backend::Cuda, threads);
        return {};
    } catch (const std::runtime_error& error) {
        return error.what();
    }
}

/// Makes a contender's broadphase. The axis sweep covers [worldMin, worldMax] with room for
/// maxHandles proxies and keeps its raycast accelerator only when asked.
std::unique_ptr<btBroadphaseInterface> makeBroadphase(Contender contender, const Options& options,
                                                      const btVector3& worldMin, const btVector3& worldMax,
                                                      unsigned maxHandles, bool raycastAccelerator) {
    switch (contender) {
        case Contender::Dbvt:
            return std::make_unique<btDbvtBroadphase>();
        case Contender::AxisSweep:
            return std::make_unique<bt32BitAxisSweep3>(worldMin, worldMax, maxHandles, nullptr, !raycastAccelerator);
        case Contender::BulletGpuCpu:
            return makeBulletGpu(bulletgpu::Backend::Cpu, options.threads, options.margins, options.flatPairCache);
        default:
            return makeBulletGpu(bulletgpu::Backend::Cuda, options.threads, bulletgpu::MarginBoxes::Auto,
                                 options.flatPairCache);
    }
}

/// N unit cubes (half-extent 0.5) at 0.25 per unit^3 in a cube of side cbrt(N / 0.25), the
/// first movingShare of them (randomly placed, so a random subset) each moving `speed` per frame
/// in its own random direction and bouncing off the walls; the others rest.
class MovingCubes {
public:
    MovingCubes(std::size_t count, std::uint32_t seed, double movingShare, double speed)
        : m_side(std::cbrt(static_cast<double>(count) / 0.25)), m_position(3 * count), m_velocity(3 * count),
          m_min(count), m_max(count),
          m_movingCount(
              std::min(count, static_cast<std::size_t>(std::ceil(movingShare * static_cast<double>(count))))) {
        std::mt19937 random(seed);
        std::uniform_real_distribution<double> unit(0, 1);
        for (std::size_t i = 0; i < count; ++i) {
            const double z = 2 * unit(random) - 1;
            const double phi = 2 * cPi * unit(random);
            const double r = std::sqrt(1 - z * z);
            const double direction[3] = {r * std::cos(phi), r * std::sin(phi), z};
            for (int axis = 0; axis < 3; ++axis) {
                m_position[3 * i + axis] = cHalfExtent + (m_side - 2 * cHalfExtent) * unit(random);
                m_velocity[3 * i + axis] = speed * direction[axis];
            }
        }
        refreshBoxes();
    }

    /// Moves the moving cubes one frame on.
    void advance() {
        for (std::size_t k = 0; k < 3 * m_movingCount; ++k) {
            double& p = m_position[k];
            p += m_velocity[k];
            if (p < cHalfExtent || p > m_side - cHalfExtent) {
                m_velocity[k] = -m_velocity[k];
                p = std::clamp(p, cHalfExtent, m_side - cHalfExtent);
            }
        }
        refreshBoxes();
    }

    std::size_t size() const { return m_min.size(); }
    /// The centre of cube i.
    btVector3 centre(std::size_t i) const {
        return btVector3(btScalar(m_position[3 * i]), btScalar(m_position[3 * i + 1]), btScalar(m_position[3 * i + 2]));
    }
    double side() const { return m_side; }
    const btVector3& min(std::size_t i) const { return m_min[i]; }
    const btVector3& max(std::size_t i) const { return m_max[i]; }

    /// Whether cubes i and j overlap inclusively on all three axes.
    bool overlap(std::size_t i, std::size_t j) const {
        for (int axis = 0; axis < 3; ++axis) {
            if (m_min[i][axis] > m_max[j][axis] || m_min[j][axis] > m_max[i][axis]) return false;
        }
        return true;
    }

    /// The exact number of overlapping pairs, from a grid of cells of side 2 (twice the cube size,
    /// so overlapping cubes lie in the same or neighbouring cells).
    std::size_t countOverlaps() const {
        auto cellOf = [&](std::size_t i, int axis) {
            return static_cast<std::int64_t>(std::floor(m_min[i][axis] / 2)) + 1;
        };
        auto key = [](std::int64_t x, std::int64_t y, std::int64_t z) {
            return static_cast<std::uint64_t>(x) | static_cast<std::uint64_t>(y) << 21 |
                   static_cast<std::uint64_t>(z) << 42;
        };
        std::unordered_map<std::uint64_t, std::vector<std::size_t>> cells;
        cells.reserve(size());
        for (std::size_t i = 0; i < size(); ++i) cells[key(cellOf(i, 0), cellOf(i, 1), cellOf(i, 2))].push_back(i);
        std::size_t pairs = 0;
        for (std::size_t i = 0; i < size(); ++i) {
            for (int dx = -1; dx <= 1; ++dx) {
                for (int dy = -1; dy <= 1; ++dy) {
                    for (int dz = -1; dz <= 1; ++dz) {
                        const auto cell = cells.find(key(cellOf(i, 0) + dx, cellOf(i, 1) + dy, cellOf(i, 2) + dz));
                        if (cell == cells.end()) continue;
                        for (std::size_t j : cell->second) pairs += j > i && overlap(i, j);
                    }
                }
            }
        }
        return pairs;
    }

private:
    static constexpr double cHalfExtent = 0.5;
    static constexpr double cPi = 3.14159265358979323846;

    void refreshBoxes() {
        for (std::size_t i = 0; i < size(); ++i) {
            const double* p = &m_position[3 * i];
            m_min[i] =
                btVector3(btScalar(p[0] - cHalfExtent), btScalar(p[1] - cHalfExtent), btScalar(p[2] - cHalfExtent));
            m_max[i] =
                btVector3(btScalar(p[0] + cHalfExtent), btScalar(p[1] + cHalfExtent), btScalar(p[2] + cHalfExtent));
        }
    }

    double m_side;
    std::vector<double> m_position; // x, y, z per cube
    std::vector<double> m_velocity; // x, y, z per cube
    std::vector<btVector3> m_min;
    std::vector<btVector3> m_max;
    std::size_t m_movingCount;
};

/// One contender's run on one size of the moving-cubes scene.
struct MovingResult {
    double buildMs = 0; ///< createProxy for every cube and the first calculateOverlappingPairs.
    std::vector<double> frameMs, setAabbMs, calculateMs;
    std::size_t pairs = 0;      ///< Pairs in the cache after the last frame.
    std::size_t exactPairs = 0; ///< Of those, pairs whose boxes really overlap.
};

/// Empties a broadphase without its quadratic paths: pairs are removed from the back of the
/// cache, then dbvt and BulletGpu proxies are destroyed one by one (the axis sweep's handles
/// go with it, as destroying them one by one costs O(N) each).
void tearDown(Contender contender, btBroadphaseInterface& broadphase, std::vector<btBroadphaseProxy*>& proxies,
              btDispatcher& dispatcher) {
    if (contender == Contender::AxisSweep) return;
    if (!isBulletGpu(contender)) {
        btOverlappingPairCache& cache = *broadphase.getOverlappingPairCache();
        while (cache.getNumOverlappingPairs() > 0) {
            const btBroadphasePair& last = cache.getOverlappingPairArray()[cache.getNumOverlappingPairs() - 1];
            cache.removeOverlappingPair(last.m_pProxy0, last.m_pProxy1, &dispatcher);
        }
    }
    for (btBroadphaseProxy* proxy : proxies) broadphase.destroyProxy(proxy, &dispatcher);
    proxies.clear();
}

/// Times one contender on N moving cubes: build, then warm-up and timed frames of setAabb on
/// every cube plus calculateOverlappingPairs; counts the final pairs that really overlap.
MovingResult runMovingCubes(Contender contender, std::size_t count, const Options& options, btCollisionObject* objects,
                            btDispatcher& dispatcher) {
    MovingResult result;
    MovingCubes cubes(count, options.seed, options.movingShare, options.speed);
    const btScalar side = btScalar(cubes.side());
    std::unique_ptr<btBroadphaseInterface> broadphase =
        makeBroadphase(contender, options, btVector3(-1, -1, -1), btVector3(side + 1, side + 1, side + 1),
                       static_cast<unsigned>(count + 2), false);
    std::vector<btBroadphaseProxy*> proxies(count);
    const auto buildStart = Clock::now();
    for (std::size_t i = 0; i < count; ++i) {
        proxies[i] =
            broadphase->createProxy(cubes.min(i), cubes.max(i), BOX_SHAPE_PROXYTYPE, &objects[i],
                                    btBroadphaseProxy::DefaultFilter, btBroadphaseProxy::AllFilter, &dispatcher);
    }
    broadphase->calculateOverlappingPairs(&dispatcher);
    result.buildMs = millisecondsSince(buildStart);

    for (int frame = 0; frame < options.warmup + options.frames; ++frame) {
        cubes.advance();
        const auto start = Clock::now();
        for (std::size_t i = 0; i < count; ++i)
            broadphase->setAabb(proxies[i], cubes.min(i), cubes.max(i), &dispatcher);
        const double setAabbMs = millisecondsSince(start);
        broadphase->calculateOverlappingPairs(&dispatcher);
        const double frameMs = millisecondsSince(start);
        if (frame < options.warmup) continue;
        result.frameMs.push_back(frameMs);
        result.setAabbMs.push_back(setAabbMs);
        result.calculateMs.push_back(frameMs - setAabbMs);
    }

    if (isBulletGpu(contender)) broadphase->printStats(); // the last frame's phases
    const btBroadphasePairArray& pairs = broadphase->getOverlappingPairCache()->getOverlappingPairArray();
    result.pairs = static_cast<std::size_t>(pairs.size());
    for (int k = 0; k < pairs.size(); ++k) {
        const auto* a = static_cast<const btCollisionObject*>(pairs[k].m_pProxy0->m_clientObject);
        const auto* b = static_cast<const btCollisionObject*>(pairs[k].m_pProxy1->m_clientObject);
        result.exactPairs +=
            cubes.overlap(static_cast<std::size_t>(a - objects), static_cast<std::size_t>(b - objects));
    }
    tearDown(contender, *broadphase, proxies, dispatcher);
    return result;
}

/// One contender's run of BenchmarkDemo test 1.
struct DemoResult {
    std::vector<double> stepMs;
    std::size_t peakPairs = 0;
    std::size_t finalPairs = 0;
};

/// Times every stepSimulation of BenchmarkDemo test 1 on one contender, in Bullet's world or,
/// with bulkAabbs, in bulletgpu::DiscreteDynamicsWorld.
DemoResult runBenchmarkDemo1(Contender contender, const Options& options, bool bulkAabbs = false) {
    DemoResult result;
    const auto [worldMin, worldMax] = bulletgpu::bench::BenchmarkDemo1::worldBounds();
    bulletgpu::bench::BenchmarkDemo1 scene(makeBroadphase(contender, options, worldMin, worldMax, 8192, true),
                                           bulkAabbs);
    if (bulkAabbs)
        static_cast<bulletgpu::DiscreteDynamicsWorld&>(scene.world()).aabbUpdater().setThreads(options.threads);
    for (int step = 0; step < options.demoSteps; ++step) {
        const auto start = Clock::now();
        scene.step();
        result.stepMs.push_back(millisecondsSince(start));
        const auto pairs = static_cast<std::size_t>(scene.world().getPairCache()->getNumOverlappingPairs());
        result.peakPairs = std::max(result.peakPairs, pairs);
        result.finalPairs = pairs;
    }
    return result;
}

/// The rows of (c): a broadphase and the way the world's boxes reach it.
/// The BulletGpu rows make Bullet's hashed cache (flatPairCache false) except BulletGpuBulkFlat,
/// BulletGpuBulk with a bulletgpu::PairCache (the library's default); the Cuda rows are the same
/// three on the CUDA backend (when a device is usable).
enum class WorldRow {
    DbvtBullet,
    BulletGpuBullet,
    BulletGpuBulk,
    BulletGpuBulkFlat,
    CudaBullet,
    CudaBulk,
    CudaBulkFlat
};
constexpr WorldRow cWorldRows[] = {WorldRow::DbvtBullet,        WorldRow::BulletGpuBullet, WorldRow::BulletGpuBulk,
                                   WorldRow::BulletGpuBulkFlat, WorldRow::CudaBullet,      WorldRow::CudaBulk,
                                   WorldRow::CudaBulkFlat};

const char* nameOf(WorldRow row) {
    constexpr const char* cNames[] = {"dbvt + updateAabbs",         "bulletgpu + updateAabbs, hashed",
                                      "bulletgpu + bulk, hashed",   "bulletgpu + bulk, PairCache",
                                      "cuda + updateAabbs, hashed", "cuda + bulk, hashed",
                                      "cuda + bulk, PairCache"};
    return cNames[static_cast<int>(row)];
}

/// Whether a row of (c) runs the CUDA backend.
bool onCuda(WorldRow row) {
    return row == WorldRow::CudaBullet || row == WorldRow::CudaBulk || row == WorldRow::CudaBulkFlat;
}

/// Whether a row of (c) updates the boxes in bulk (bulletgpu::BulkAabbUpdater).
bool inBulk(WorldRow row) {
    return row == WorldRow::BulletGpuBulk || row == WorldRow::BulletGpuBulkFlat || row == WorldRow::CudaBulk ||
           row == WorldRow::CudaBulkFlat;
}

/// One row's run of (c).
struct WorldResult {
    std::vector<double> frameMs, aabbMs, pairsMs;
    std::size_t pairs = 0; ///< Pairs in the cache after the last frame.
};

/// Times one row of (c), BulletGpu with the first --margins setting: N unit cubes as btRigidBody objects (mass 1, so
/// that Bullet unites the box at the interpolation transform, as in a dynamics world) of one btBoxShape in a
/// btCollisionWorld. Each frame, untimed, the cubes move (their interpolation transform keeps
/// the last position); timed: the world's AABB update, then computeOverlappingPairs.
WorldResult runWorldCubes(WorldRow row, std::size_t count, const Options& options) {
    WorldResult result;
    btDefaultCollisionConfiguration configuration;
    btCollisionDispatcher dispatcher(&configuration);
    const bool flat = row == WorldRow::BulletGpuBulkFlat || row == WorldRow::CudaBulkFlat;
    std::unique_ptr<btBroadphaseInterface> broadphase =
        row == WorldRow::DbvtBullet
            ? std::unique_ptr<btBroadphaseInterface>(std::make_unique<btDbvtBroadphase>())
            : makeBulletGpu(onCuda(row) ? bulletgpu::Backend::Cuda : bulletgpu::Backend::Cpu, options.threads,
                            onCuda(row) ? bulletgpu::MarginBoxes::Auto : options.marginSettings.front(), flat);
    btCollisionWorld world(&dispatcher, broadphase.get(), &configuration);
    bulletgpu::BulkAabbUpdater bulk(options.threads);
    btBoxShape cube(btVector3(btScalar(0.5), btScalar(0.5), btScalar(0.5)));
    MovingCubes cubes(count, options.seed, options.movingShare, options.speed);
    std::vector<std::unique_ptr<btRigidBody>> bodies;
    bodies.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        btVector3 inertia;
        cube.calculateLocalInertia(1, inertia);
        bodies.push_back(
            std::make_unique<btRigidBody>(btRigidBody::btRigidBodyConstructionInfo(1, nullptr, &cube, inertia)));
        bodies.back()->setWorldTransform(btTransform(btQuaternion::getIdentity(), cubes.centre(i)));
        bodies.back()->setInterpolationWorldTransform(bodies.back()->getWorldTransform());
        world.addCollisionObject(bodies.back().get());
    }
    world.computeOverlappingPairs();
    for (int frame = 0; frame < options.warmup + options.frames; ++frame) {
        cubes.advance();
        for (std::size_t i = 0; i < count; ++i) {
            btRigidBody& body = *bodies[i];
            body.setInterpolationWorldTransform(body.getWorldTransform());
            body.getWorldTransform().setOrigin(cubes.centre(i));
        }
        const auto start = Clock::now();
        if (inBulk(row)) {
            bulk.update(world);
        } else {
            world.updateAabbs();
        }
        const double aabbMs = millisecondsSince(start);
        world.computeOverlappingPairs();
        const double frameMs = millisecondsSince(start);
        if (frame < options.warmup) continue;
        result.frameMs.push_back(frameMs);
        result.aabbMs.push_back(aabbMs);
        result.pairsMs.push_back(frameMs - aabbMs);
    }
    result.pairs = static_cast<std::size_t>(world.getPairCache()->getNumOverlappingPairs());
    if (row != WorldRow::DbvtBullet) broadphase->printStats(); // the last frame's phases
    // The world's own removal scans every pair per object: destroy the proxies as tearDown does.
    std::vector<btBroadphaseProxy*> proxies;
    for (const std::unique_ptr<btRigidBody>& body : bodies) {
        proxies.push_back(body->getBroadphaseHandle());
        body->setBroadphaseHandle(nullptr);
        world.removeCollisionObject(body.get());
    }
    tearDown(row == WorldRow::DbvtBullet ? Contender::Dbvt : Contender::BulletGpuCpu, *broadphase, proxies, dispatcher);
    return result;
}

/// Runs (c) on every size and prints its table.
void benchmarkWorldCubes(const Options& options, const std::string& cudaReason, json& report) {
    std::printf("\n(c) N unit cubes as rigid bodies in a btCollisionWorld, %g%% moving %g/frame; whole frame =\n"
                "    AABB update + computeOverlappingPairs; medians (min) over %d frames after %d warm-up;\n"
                "    speedup = dbvt ms / this ms, of the medians\n",
                100 * options.movingShare, options.speed, options.frames, options.warmup);
    std::printf("%9s  %-31s %10s %10s %10s %10s %8s %9s\n", "N", "world", "ms/frame", "min", "aabb ms", "pairs ms",
                "speedup", "pairs");
    std::vector<WorldRow> rows(std::begin(cWorldRows), std::end(cWorldRows));
    if (options.reverseWorldRows) std::reverse(rows.begin(), rows.end());
    for (std::size_t count : options.worldSizes) {
        double dbvtMs = 0;
        for (WorldRow row : rows) {
            json entry = {{"n", count}, {"world", nameOf(row)}};
            if (onCuda(row) && !cudaReason.empty()) continue;
            if (row == WorldRow::DbvtBullet && options.skipSlowAbove != 0 && count > options.skipSlowAbove) {
                std::printf("%9zu  %-31s skipped (--skip-slow)\n", count, nameOf(row));
                entry["note"] = "skipped (--skip-slow)";
                report["world"].push_back(entry);
                continue;
            }
            const WorldResult result = runWorldCubes(row, count, options);
            const double frameMs = median(result.frameMs);
            if (row == WorldRow::DbvtBullet) dbvtMs = frameMs;
            const double minMs = *std::min_element(result.frameMs.begin(), result.frameMs.end());
            std::printf("%9zu  %-31s %10.3f %10.3f %10.3f %10.3f %8s %9zu\n", count, nameOf(row), frameMs, minMs,
                        median(result.aabbMs), median(result.pairsMs), speedupText(dbvtMs, frameMs).c_str(),
                        result.pairs);
            entry.update({{"medianFrameMs", frameMs},
                          {"minFrameMs", minMs},
                          {"medianAabbMs", median(result.aabbMs)},
                          {"medianPairsMs", median(result.pairsMs)},
                          {"pairs", result.pairs}});
            report["world"].push_back(entry);
        }
    }
}

/// What the numbers were measured on.
json machineInfo(const std::string& cudaReason) {
    return {{"cpuModel", bulletgpu::cpuModel()},
            {"logicalCores", std::thread::hardware_concurrency()},
            {"openmpMaxThreads", omp_get_max_threads()},
            {"loadAverageAtStart", bulletgpu::loadAverages()},
            {"compiler", bulletgpu::compilerName()},
            {"bulletVersion", btGetVersion()},
            {"btUseDoublePrecision", sizeof(btScalar) == sizeof(double)},
            {"cuda", cudaReason.empty() ? "available" : "unavailable: " + cudaReason},
            {"date", bulletgpu::utcTimestamp()}};
}

/// Parses a comma-separated list of sizes.
std::vector<std::size_t> parseSizes(const std::string& text) {
    std::vector<std::size_t> sizes;
    std::stringstream stream(text);
    for (std::string item; std::getline(stream, item, ',');) sizes.push_back(std::stoull(item));
    return sizes;
}

/// Parses a comma-separated list of margin-box settings (auto, on, off).
std::vector<bulletgpu::MarginBoxes> parseMarginSettings(const std::string& text) {
    std::vector<bulletgpu::MarginBoxes> settings;
    std::stringstream stream(text);
    for (std::string item; std::getline(stream, item, ',');) {
        if (item == "auto")
            settings.push_back(bulletgpu::MarginBoxes::Auto);
        else if (item == "on")
            settings.push_back(bulletgpu::MarginBoxes::On);
        else if (item == "off")
            settings.push_back(bulletgpu::MarginBoxes::Off);
        else
            throw std::invalid_argument("--margins takes auto, on or off, not " + item);
    }
    if (settings.empty()) throw std::invalid_argument("--margins needs at least one setting");
    return settings;
}

const char* cUsage =
    "usage: bulletgpu-bench-broadphase [--sizes N,N,...] [--frames F] [--warmup W] [--skip-slow N]\n"
    "                                  [--sweep-max N] [--demo-steps S] [--threads T] [--seed S]\n"
    "                                  [--moving-share F] [--speed S] [--margins M,M,...]\n"
    "                                  [--world-sizes N,N,...] [--pair-cache C] [--reverse-world-rows]\n"
    "                                  [--json FILE]\n"
    "  --sizes       cube counts of the moving-cubes scene (default 1000,10000,100000,1000000)\n"
    "  --frames      timed frames per size (default 20), after --warmup frames (default 40, past the\n"
    "                first margin-box trials of the CPU backend's Auto setting)\n"
    "  --skip-slow   run btDbvtBroadphase and bt32BitAxisSweep3 only up to this N; 0 = always\n"
    "                (default 100000: dbvt needs ~13 s/frame at 1M)\n"
    "  --sweep-max   run bt32BitAxisSweep3 only up to this N; 0 = always (default 20000: creating\n"
    "                N proxies one by one is O(N^2), about 9 minutes at 100000)\n"
    "  --demo-steps  BenchmarkDemo test 1 steps (default 300; 0 skips it)\n"
    "  --threads     BulletGpu CPU threads (default 0: OpenMP's default)\n"
    "  --moving-share  share of the cubes that move (default 1); the others rest, and get setAabb\n"
    "                with an unchanged box every frame, as Bullet's default updateAabbs does\n"
    "  --speed       distance a moving cube covers per frame (default 0.05)\n"
    "  --margins     margin-box settings of the BulletGpu CPU rows: auto, on, off, or a list\n"
    "                (default auto; a list runs one row each)\n"
    "  --world-sizes cube counts of (c), a btCollisionWorld's whole frame with Bullet's updateAabbs\n"
    "                and with the bulk update (default 100000,1000000; an empty list skips it)\n"
    "                (rows marked hashed make Bullet's hashed cache, the PairCache row the\n"
    "                library's default; with a usable CUDA device the BulletGpu rows run again on\n"
    "                the CUDA backend)\n"
    "  --pair-cache  flat (default: bulletgpu::PairCache, the library's default) or hashed: the pair\n"
    "                cache BulletGpu makes in (a) and (b)\n"
    "  --reverse-world-rows  run (c)'s rows last to first (alternate runs on a busy machine)\n"
    "  --json        also write the results as JSON to FILE\n";

/// Parses the command line; throws std::invalid_argument on a bad flag.
Options parseOptions(int argc, char** argv) {
    Options options;
    using Setter = std::function<void(const std::string&)>;
    const std::unordered_map<std::string, Setter> setters = {
        {"--sizes", [&](const std::string& v) { options.sizes = parseSizes(v); }},
        {"--frames", [&](const std::string& v) { options.frames = std::max(1, std::stoi(v)); }},
        {"--warmup", [&](const std::string& v) { options.warmup = std::max(0, std::stoi(v)); }},
        {"--skip-slow", [&](const std::string& v) { options.skipSlowAbove = std::stoull(v); }},
        {"--sweep-max", [&](const std::string& v) { options.sweepMax = std::stoull(v); }},
        {"--demo-steps", [&](const std::string& v) { options.demoSteps = std::max(0, std::stoi(v)); }},
        {"--threads", [&](const std::string& v) { options.threads = std::stoi(v); }},
        {"--seed", [&](const std::string& v) { options.seed = static_cast<std::uint32_t>(std::stoul(v)); }},
        {"--moving-share", [&](const std::string& v) { options.movingShare = std::clamp(std::stod(v), 0.0, 1.0); }},
        {"--speed", [&](const std::string& v) { options.speed = std::max(0.0, std::stod(v)); }},
        {"--margins", [&](const std::string& v) { options.marginSettings = parseMarginSettings(v); }},
        {"--world-sizes", [&](const std::string& v) { options.worldSizes = parseSizes(v); }},
        {"--json", [&](const std::string& v) { options.jsonPath = v; }},
        {"--pair-cache", [&](const std::string& v) {
             if (v != "flat" && v != "hashed") throw std::invalid_argument("--pair-cache takes flat or hashed");
             options.flatPairCache = v == "flat";
         }}};
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag == "--reverse-world-rows") {
            options.reverseWorldRows = true;
            continue;
        }
        if (flag == "--help" || flag == "-h") {
            std::fputs(cUsage, stdout);
            std::exit(0);
        }
        const auto setter = setters.find(flag);
        if (setter == setters.end()) throw std::invalid_argument("unknown flag " + flag);
        if (i + 1 >= argc) throw std::invalid_argument("missing value after " + flag);
        setter->second(argv[++i]);
    }
    return options;
}

/// Why a contender does not run at this size, or an empty string when it does.
std::string skipReason(Contender contender, std::size_t count, const Options& options, const std::string& cudaReason) {
    if (contender == Contender::BulletGpuCuda && !cudaReason.empty()) return "unavailable";
    const bool slow = contender == Contender::Dbvt || contender == Contender::AxisSweep;
    if (slow && options.skipSlowAbove != 0 && count > options.skipSlowAbove) return "skipped (--skip-slow)";
    if (contender == Contender::AxisSweep && options.sweepMax != 0 && count > options.sweepMax) {
        return "skipped (--sweep-max)";
    }
    return {};
}

/// Runs the moving-cubes sizes; returns false when a pair check failed.
bool benchmarkMovingCubes(const Options& options, const std::string& cudaReason, json& report) {
    btDefaultCollisionConfiguration configuration;
    btCollisionDispatcher dispatcher(&configuration);
    bool allExact = true;
    std::printf("(a) N unit cubes, density 0.25/unit^3, %g%% of them moving %g/frame; medians (and the mean frame)\n"
                "    over %d frames after %d warm-up;\n"
                "    speedup = dbvt ms / this ms, of the medians; exact = cached pairs whose boxes overlap;\n"
                "    bt32BitAxisSweep3 without its raycast accelerator; margins = BulletGpu CPU's margin boxes\n",
                100 * options.movingShare, options.speed, options.frames, options.warmup);
    std::printf("%9s  %-22s %10s %10s %9s %9s %9s %8s %9s %9s  %s\n", "N", "broadphase", "build ms", "ms/frame", "mean",
                "setAabb", "calc", "speedup", "pairs", "exact", "check");
    for (std::size_t count : options.sizes) {
        const std::unique_ptr<btCollisionObject[]> objects(new btCollisionObject[count]);
        MovingCubes finalState(count, options.seed, options.movingShare, options.speed);
        for (int frame = 0; frame < options.warmup + options.frames; ++frame) finalState.advance();
        const std::size_t expected = finalState.countOverlaps();
        double dbvtMs = 0, dbvtMeanMs = 0;
        for (Contender contender : cContenders) {
            const std::vector<bulletgpu::MarginBoxes> settings =
                contender == Contender::BulletGpuCpu
                    ? options.marginSettings
                    : std::vector<bulletgpu::MarginBoxes>{bulletgpu::MarginBoxes::Auto};
            for (bulletgpu::MarginBoxes margins : settings) {
                Options run = options;
                run.margins = margins;
                std::string name = nameOf(contender);
                if (contender == Contender::BulletGpuCpu && settings.size() > 1) {
                    name += std::string(" margins ") + bulletgpu::toString(margins);
                }
                json entry = {{"n", count}, {"broadphase", name}};
                if (contender == Contender::BulletGpuCpu) entry["margins"] = bulletgpu::toString(margins);
                const std::string reason = skipReason(contender, count, options, cudaReason);
                if (!reason.empty()) {
                    std::printf("%9zu  %-22s %s\n", count, name.c_str(), reason.c_str());
                    entry["note"] = reason;
                    report["moving"].push_back(entry);
                    continue;
                }
                const MovingResult result = runMovingCubes(contender, count, run, objects.get(), dispatcher);
                const double frameMs = median(result.frameMs);
                if (contender == Contender::Dbvt) {
                    dbvtMs = frameMs;
                    dbvtMeanMs = mean(result.frameMs);
                }
                const bool exact =
                    result.exactPairs == expected && (!isBulletGpu(contender) || result.pairs == expected);
                allExact = allExact && exact;
                const std::string check = !exact ? "FAILED (expected " + std::to_string(expected) + ")"
                                          : result.pairs == expected
                                              ? "exact"
                                              : "superset +" + std::to_string(result.pairs - expected);
                std::printf("%9zu  %-22s %10.2f %10.3f %9.3f %9.3f %9.3f %8s %9zu %9zu  %s\n", count, name.c_str(),
                            result.buildMs, frameMs, mean(result.frameMs), median(result.setAabbMs),
                            median(result.calculateMs), speedupText(dbvtMs, frameMs).c_str(), result.pairs,
                            result.exactPairs, check.c_str());
                entry.update(
                    {{"buildMs", result.buildMs},
                     {"medianFrameMs", frameMs},
                     {"meanFrameMs", mean(result.frameMs)},
                     {"medianSetAabbMs", median(result.setAabbMs)},
                     {"medianCalculateMs", median(result.calculateMs)},
                     {"speedupVsDbvt", dbvtMs > 0 ? json(dbvtMs / frameMs) : json(nullptr)},
                     {"meanSpeedupVsDbvt", dbvtMeanMs > 0 ? json(dbvtMeanMs / mean(result.frameMs)) : json(nullptr)},
                     {"pairs", result.pairs},
                     {"exactPairs", result.exactPairs},
                     {"expectedPairs", expected},
                     {"check", check}});
                report["moving"].push_back(entry);
            }
        }
    }
    return allExact;
}

/// Runs BenchmarkDemo test 1 on every contender and prints its table.
void benchmarkDemo1(const Options& options, const std::string& cudaReason, json& report) {
    std::printf("\n(b) BenchmarkDemo test 1 \"3000 boxes\" (3,008 boxes), %d steps of 1/60, whole stepSimulation\n",
                options.demoSteps);
    std::printf("%-18s %14s %12s %8s %11s %11s\n", "broadphase", "median ms/step", "mean ms/step", "speedup",
                "peak pairs", "final pairs");
    double dbvtMs = 0;
    for (Contender contender : cContenders) {
        json entry = {{"broadphase", nameOf(contender)}, {"steps", options.demoSteps}};
        if (contender == Contender::BulletGpuCuda && !cudaReason.empty()) {
            std::printf("%-18s unavailable\n", nameOf(contender));
            entry["note"] = "unavailable";
            report["benchmarkDemo1"].push_back(entry);
            continue;
        }
        const DemoResult result = runBenchmarkDemo1(contender, options);
        const double stepMs = median(result.stepMs);
        if (contender == Contender::Dbvt) dbvtMs = stepMs;
        std::printf("%-18s %14.3f %12.3f %8.3f %11zu %11zu\n", nameOf(contender), stepMs, mean(result.stepMs),
                    dbvtMs / stepMs, result.peakPairs, result.finalPairs);
        entry.update({{"medianStepMs", stepMs},
                      {"meanStepMs", mean(result.stepMs)},
                      {"speedupVsDbvt", dbvtMs / stepMs},
                      {"peakPairs", result.peakPairs},
                      {"finalPairs", result.finalPairs}});
        report["benchmarkDemo1"].push_back(entry);
    }
    const DemoResult bulk = runBenchmarkDemo1(Contender::BulletGpuCpu, options, true);
    const double bulkMs = median(bulk.stepMs);
    std::printf("%-18s %14.3f %12.3f %8.3f %11zu %11zu\n", "bulletgpu cpu bulk", bulkMs, mean(bulk.stepMs),
                dbvtMs / bulkMs, bulk.peakPairs, bulk.finalPairs);
    report["benchmarkDemo1"].push_back({{"broadphase", "bulletgpu cpu bulk"},
                                        {"steps", options.demoSteps},
                                        {"medianStepMs", bulkMs},
                                        {"meanStepMs", mean(bulk.stepMs)},
                                        {"speedupVsDbvt", dbvtMs / bulkMs},
                                        {"peakPairs", bulk.peakPairs},
                                        {"finalPairs", bulk.finalPairs}});
}

} // namespace

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0); // rows appear as they are measured, also in a file
    Options options;
    try {
        options = parseOptions(argc, argv);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "%s\n%s", error.what(), cUsage);
        return 2;
    }
    const std::string cudaReason = cudaUnavailableReason(options.threads);
    json report;
    report["machine"] = machineInfo(cudaReason);
    report["settings"] = {{"sizes", options.sizes},
                          {"frames", options.frames},
                          {"warmup", options.warmup},
                          {"skipSlowAbove", options.skipSlowAbove},
                          {"sweepMax", options.sweepMax},
                          {"demoSteps", options.demoSteps},
                          {"threads", options.threads},
                          {"seed", options.seed},
                          {"movingShare", options.movingShare},
                          {"speed", options.speed},
                          {"worldSizes", options.worldSizes},
                          {"axisSweepRaycastAccelerator", {{"movingCubes", false}, {"benchmarkDemo1", true}}}};
    report["moving"] = json::array();
    report["benchmarkDemo1"] = json::array();
    report["world"] = json::array();
    const json& machine = report["machine"];
    std::printf("%s, %u logical cores, load average %s, Bullet %d (%s), CUDA %s\n\n",
                machine["cpuModel"].get<std::string>().c_str(), std::thread::hardware_concurrency(),
                machine["loadAverageAtStart"].get<std::string>().c_str(), btGetVersion(),
                machine["btUseDoublePrecision"].get<bool>() ? "double" : "float",
                machine["cuda"].get<std::string>().c_str());

    const bool exact = benchmarkMovingCubes(options, cudaReason, report);
    if (options.demoSteps > 0) benchmarkDemo1(options, cudaReason, report);
    if (!options.worldSizes.empty()) benchmarkWorldCubes(options, cudaReason, report);
    if (!options.jsonPath.empty()) {
        std::ofstream(options.jsonPath) << report.dump(2) << '\n';
        std::printf("\nwrote %s\n", options.jsonPath.c_str());
    }
    if (!exact) std::fprintf(stderr, "pair check FAILED: see the check column\n");
    return exact ? 0 : 1;
}
