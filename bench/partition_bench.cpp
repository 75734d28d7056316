// SPDX-License-Identifier: Zlib
// bulletgpu-bench-partition: the spatial split of Avril et al. 2014 on moving cubes. For each N,
// the pair finder on one CPU thread, on all threads sharing one sweep, and split into K = 2
// and 4 slabs (one host thread per slab); on the GPU (when usable) one finder and K = 2, 4
// slabs on streams of one device; btDbvtBroadphase on the same boxes for reference.
// Every contender finds the same pairs (checked); times are medians per update. The last
// update's phases follow; for a split finder they are its own: classify is handing out the
// changed boxes, sort the slabs' sorts summed, sweep the slabs' wall time, diff the merge.
#include "bench/sample_statistics.h"
#include "kernels/common/cuda_device.h"
#include "kernels/common/stopwatch.h"
#include "kernels/partition/partitioned_pair_finder.h"

#include <BulletCollision/BroadphaseCollision/btDbvtBroadphase.h>
#include <btBulletCollisionCommon.h>

#include <nlohmann/json.hpp>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using bulletgpu::Clock;
using bulletgpu::millisecondsSince;
using nlohmann::json;

/// Command-line settings.
struct Options {
    std::vector<std::size_t> sizes{10000, 100000, 1000000};
    int frames = 10;
    int warmup = 3;
    std::size_t dbvtMax = 100000;
    std::string jsonPath;
};

/// Unit cubes moving at constant speed inside a box, bouncing off its walls, at 0.1 cubes per unit^3.
class MovingCubes {
public:
    MovingCubes(std::size_t n, std::uint32_t seed) : m_side(std::cbrt(static_cast<double>(n) / 0.1)) {
        std::mt19937 random(seed);
        std::uniform_real_distribution<double> position(0.0, m_side), velocity(-0.2, 0.2);
        m_position.resize(3 * n);
        m_velocity.resize(3 * n);
        for (auto& p : m_position) p = position(random);
        for (auto& v : m_velocity) v = velocity(random);
    }
    std::size_t size() const { return m_position.size() / 3; }
    void step() {
        for (std::size_t i = 0; i < m_position.size(); ++i) {
            m_position[i] += m_velocity[i];
            if (m_position[i] < 0 || m_position[i] > m_side) m_velocity[i] = -m_velocity[i];
        }
    }
    void box(std::size_t i, double lo[3], double hi[3]) const {
        for (int a = 0; a < 3; ++a) {
            lo[a] = m_position[3 * i + a] - 0.5;
            hi[a] = m_position[3 * i + a] + 0.5;
        }
    }

private:
    double m_side;
    std::vector<double> m_position, m_velocity;
};

/// One contender's result at one N.
struct Result {
    std::string name;
    double medianMs = 0;
    std::uint64_t pairs = 0;
    bulletgpu::PairFinderStats stats;
};

Result runFinder(const std::string& name, bulletgpu::PairFinder& finder, std::size_t n, const Options& options) {
    MovingCubes cubes(n, 2014);
    bulletgpu::BoxStore store;
    double lo[3], hi[3];
    for (std::size_t i = 0; i < n; ++i) {
        cubes.box(i, lo, hi);
        store.insert(static_cast<std::uint32_t>(i), lo, hi, 1, ~0u);
    }
    bulletgpu::PairDeltas deltas;
    finder.update(store, true, deltas);
    std::vector<double> samples;
    const int frames = n >= 1000000 ? std::max(3, options.frames / 2) : options.frames;
    for (int frame = 0; frame < options.warmup + frames; ++frame) {
        cubes.step();
        for (std::size_t i = 0; i < n; ++i) {
            cubes.box(i, lo, hi);
            store.update(static_cast<std::uint32_t>(i), lo, hi);
        }
        const auto start = Clock::now();
        finder.update(store, true, deltas);
        if (frame >= options.warmup) samples.push_back(millisecondsSince(start));
    }
    Result result;
    result.name = name;
    result.medianMs = bulletgpu::bench::median(samples);
    result.pairs = finder.pairCount();
    result.stats = finder.stats();
    return result;
}

Result runDbvt(std::size_t n, const Options& options) {
    MovingCubes cubes(n, 2014);
    btDbvtBroadphase dbvt;
    btDefaultCollisionConfiguration configuration;
    btCollisionDispatcher dispatcher(&configuration);
    std::vector<btBroadphaseProxy*> proxies(n);
    double lo[3], hi[3];
    const auto vec = [](const double v[3]) { return btVector3(btScalar(v[0]), btScalar(v[1]), btScalar(v[2])); };
    for (std::size_t i = 0; i < n; ++i) {
        cubes.box(i, lo, hi);
        proxies[i] = dbvt.createProxy(vec(lo), vec(hi), BOX_SHAPE_PROXYTYPE, nullptr, 1, -1, &dispatcher);
    }
    dbvt.calculateOverlappingPairs(&dispatcher);
    std::vector<double> samples;
    for (int frame = 0; frame < options.warmup + options.frames; ++frame) {
        cubes.step();
        const auto start = Clock::now();
        for (std::size_t i = 0; i < n; ++i) {
            cubes.box(i, lo, hi);
            dbvt.setAabb(proxies[i], vec(lo), vec(hi), &dispatcher);
        }
        dbvt.calculateOverlappingPairs(&dispatcher);
        if (frame >= options.warmup) samples.push_back(millisecondsSince(start));
    }
    Result result;
    result.name = "btDbvtBroadphase (setAabb + pairs)";
    result.medianMs = bulletgpu::bench::median(samples);
    result.pairs = static_cast<std::uint64_t>(dbvt.getOverlappingPairCache()->getNumOverlappingPairs());
    for (auto* proxy : proxies) dbvt.destroyProxy(proxy, &dispatcher);
    return result;
}

std::vector<std::size_t> parseSizes(const std::string& text) {
    std::vector<std::size_t> sizes;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t comma = text.find(',', at);
        sizes.push_back(std::stoul(text.substr(at, comma - at)));
        at = comma == std::string::npos ? text.size() : comma + 1;
    }
    return sizes;
}

Options parse(int argc, char** argv) {
    Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
            return argv[++i];
        };
        if (arg == "--sizes") {
            options.sizes = parseSizes(value());
        } else if (arg == "--frames") {
            options.frames = std::stoi(value());
        } else if (arg == "--dbvt-max") {
            options.dbvtMax = std::stoul(value());
        } else if (arg == "--json") {
            options.jsonPath = value();
        } else {
            throw std::invalid_argument("usage: bulletgpu-bench-partition [--sizes N,N,...] [--frames F] "
                                        "[--dbvt-max N] [--json FILE]");
        }
    }
    return options;
}

json statsJson(const bulletgpu::PairFinderStats& s) {
    json loads = json::array();
    for (int k = 0; k < std::min(s.partitions, bulletgpu::PairFinderStats::cReportedPartitions); ++k) {
        loads.push_back(s.partitionLoads[static_cast<std::size_t>(k)]);
    }
    return json{{"slabs", s.partitions},
                {"split_axis", s.splitAxis},
                {"objects", s.objects},
                {"straddlers", s.straddlers},
                {"straddler_ratio", s.objects > 0 ? static_cast<double>(s.straddlers) / s.objects : 0.0},
                {"imbalance", s.imbalance},
                {"loads", loads},
                {"migrated", s.migrated},
                {"threads", s.threads},
                {"last_update_ms",
                 {{"classify", s.classifyMs},
                  {"sort", s.sortMs},
                  {"sweep", s.sweepMs},
                  {"diff", s.diffMs},
                  {"transfer", s.transferMs}}}};
}

} // namespace

int main(int argc, char** argv) {
    try {
        const Options options = parse(argc, argv);
        const int threads = omp_get_max_threads();
        const bool gpu = bulletgpu::probeCudaDevice(0).usable;
        json report;
        report["machine"] = {{"hardware_threads", std::thread::hardware_concurrency()},
                             {"openmp_threads", threads},
                             {"gpu", gpu ? bulletgpu::probeCudaDevice(0).name : "none"}};
        report["frames"] = options.frames;
        report["results"] = json::array();
        std::printf("%-34s %10s %12s %9s %10s %10s  %s\n", "contender", "N", "ms/update", "vs 1 thr", "straddle%",
                    "imbalance", "last update ms: classify sort sweep diff transfer");
        for (std::size_t n : options.sizes) {
            std::vector<std::pair<std::string, std::function<std::unique_ptr<bulletgpu::PairFinder>()>>> contenders{
                {"cpu 1 thread", [] { return bulletgpu::createCpuPairFinder(1); }},
                {"cpu " + std::to_string(threads) + " threads, one shared sweep",
                 [=] { return bulletgpu::createCpuPairFinder(threads); }},
                {"cpu K=2 slabs", [=] { return bulletgpu::createPartitionedCpuPairFinder(2, threads); }},
                {"cpu K=4 slabs", [=] { return bulletgpu::createPartitionedCpuPairFinder(4, threads); }},
            };
            if (gpu) {
                contenders.push_back({"cuda K=1", [] { return bulletgpu::createCudaPairFinder(0); }});
                contenders.push_back(
                    {"cuda K=2 slabs (streams)", [] { return bulletgpu::createPartitionedCudaPairFinder(2, {0}); }});
                contenders.push_back(
                    {"cuda K=4 slabs (streams)", [] { return bulletgpu::createPartitionedCudaPairFinder(4, {0}); }});
            }
            double singleMs = 0;
            std::uint64_t expectedPairs = 0;
            for (std::size_t c = 0; c < contenders.size(); ++c) {
                if (n > 1000000 && contenders[c].first.rfind("cpu", 0) == 0) continue; // 10^7 only on a GPU
                auto finder = contenders[c].second();
                const Result r = runFinder(contenders[c].first, *finder, n, options);
                if (c == 0) {
                    singleMs = r.medianMs;
                    expectedPairs = r.pairs;
                } else if (r.pairs != expectedPairs && expectedPairs != 0) {
                    throw std::runtime_error(r.name + " found " + std::to_string(r.pairs) + " pairs, not " +
                                             std::to_string(expectedPairs));
                }
                const auto& s = r.stats;
                std::printf("%-34s %10zu %12.3f %9.2f %10.2f %10.3f  %.3f %.3f %.3f %.3f %.3f\n", r.name.c_str(), n,
                            r.medianMs, singleMs > 0 ? singleMs / r.medianMs : 1.0,
                            s.objects > 0 ? 100.0 * s.straddlers / s.objects : 0.0, s.imbalance, s.classifyMs, s.sortMs,
                            s.sweepMs, s.diffMs, s.transferMs);
                report["results"].push_back({{"contender", r.name},
                                             {"n", n},
                                             {"median_ms", r.medianMs},
                                             {"speedup_vs_one_thread", singleMs > 0 ? singleMs / r.medianMs : 1.0},
                                             {"pairs", r.pairs},
                                             {"split", statsJson(s)}});
            }
            if (n <= options.dbvtMax) {
                const Result r = runDbvt(n, options);
                std::printf("%-34s %10zu %12.3f %9.2f\n", r.name.c_str(), n, r.medianMs, singleMs / r.medianMs);
                report["results"].push_back({{"contender", r.name},
                                             {"n", n},
                                             {"median_ms", r.medianMs},
                                             {"speedup_vs_one_thread", singleMs / r.medianMs},
                                             {"pairs", r.pairs}});
            }
            std::fflush(stdout);
        }
        if (!options.jsonPath.empty()) std::ofstream(options.jsonPath) << report.dump(2) << "\n";
        return 0;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "bulletgpu-bench-partition: %s\n", error.what());
        return 1;
    }
}
