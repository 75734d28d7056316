// SPDX-License-Identifier: Zlib
// bulletgpu-bench-chains: the tables of Ayala, Madera and Moo-Mena re-run. A snake-like chain
// of 10,000 to 150,000 spheres follows the paper's two paths (a sinusoid, circles); every frame
// moves every sphere, refits the hierarchy and finds all contacts (neighbours within one link
// excluded) on the CPU (the descent, and one walk per sphere as in the paper) and, when a device
// is usable, on CUDA (one thread per sphere, GPU2, and two, GPU2v2). The all-pairs oracle runs for
// reference at the small sizes. Prints medians and writes them as JSON (--json FILE).
#include "bench/sample_statistics.h"
#include "kernels/common/stopwatch.h"
#include "kernels/chain/sphere_chain.h"
#include "kernels/common/cuda_device.h"
#include "kernels/reference/brute_force_chains.h"

#include <nlohmann/json.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using bulletgpu::ChainSpheres;
using bulletgpu::Clock;
using bulletgpu::millisecondsSince;
using nlohmann::json;

using bulletgpu::bench::median;

/// Command-line settings.
struct Options {
    std::vector<std::uint32_t> sizes{10000, 20000, 30000, 40000, 50000, 100000, 150000};
    int frames = 10;
    int warmup = 2;
    int threads = 2;
    std::uint32_t bruteForceMax = 20000; ///< The oracle runs only up to this many spheres.
    std::string jsonPath;
};

Options parseOptions(int argc, char** argv) {
    Options options;
    for (int a = 1; a < argc; ++a) {
        const std::string arg = argv[a];
        const auto value = [&]() -> std::string {
            if (a + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
            return argv[++a];
        };
        if (arg == "--json") {
            options.jsonPath = value();
        } else if (arg == "--frames") {
            options.frames = std::stoi(value());
        } else if (arg == "--threads") {
            options.threads = std::stoi(value());
        } else if (arg == "--brute-force-max") {
            options.bruteForceMax = static_cast<std::uint32_t>(std::stoul(value()));
        } else if (arg == "--sizes") {
            options.sizes.clear();
            std::stringstream list(value());
            for (std::string item; std::getline(list, item, ',');) options.sizes.push_back(std::stoul(item));
        } else {
            throw std::invalid_argument("usage: bulletgpu-bench-chains [--sizes N,N,...] [--frames F] [--threads T] "
                                        "[--brute-force-max N] [--json FILE]");
        }
    }
    return options;
}

/// The chain of a path at a frame.
ChainSpheres pathChain(bool circles, std::uint32_t count, int frame) {
    return circles ? bulletgpu::paperCirclesChain(count, frame) : bulletgpu::paperSinusoidChain(count, frame);
}

/// Medians of one backend on one path and size.
struct BackendTimes {
    double refitMs = 0, traverseMs = 0, contactMs = 0;
    std::uint64_t contacts = 0;
};

/// Moves the chain and finds its contacts every frame on `backend`; medians after the warm-up.
BackendTimes runBackend(bulletgpu::Backend backend, bulletgpu::ChainTraversal traversal, const Options& options,
                        std::uint32_t count, const std::vector<ChainSpheres>& frames) {
    bulletgpu::ChainQuery query;
    query.traversal = traversal;
    bulletgpu::SphereChainSet set(backend, backend == bulletgpu::Backend::Cpu ? options.threads : 0);
    set.addChain(frames[0].centres.data(), frames[0].radii.data(), count);
    std::vector<bulletgpu::ChainContact> contacts;
    std::vector<double> refit, traverse, contact;
    for (std::size_t f = 0; f < frames.size(); ++f) {
        set.setPositions(0, frames[f].centres.data());
        set.findContacts(query, contacts);
        if (static_cast<int>(f) < options.warmup) continue;
        refit.push_back(set.stats().refitMs);
        traverse.push_back(set.stats().traverseMs);
        contact.push_back(set.stats().contactMs);
    }
    return BackendTimes{median(refit), median(traverse), median(contact), contacts.size()};
}

json timesJson(const BackendTimes& times) {
    return json{{"refit_ms", times.refitMs},
                {"traverse_ms", times.traverseMs},
                {"contacts_ms", times.contactMs},
                {"contacts", times.contacts}};
}

} // namespace

int main(int argc, char** argv) {
    try {
        const Options options = parseOptions(argc, argv);
        const bulletgpu::CudaDeviceProbe probe = bulletgpu::probeCudaDevice(0);
        json report{{"benchmark", "sphere chains (Ayala, Madera, Moo-Mena tables 3 and 4)"},
                    {"cpu_threads", options.threads},
                    {"hardware_threads", omp_get_num_procs()},
                    {"cuda", probe.usable ? probe.name : "unavailable: " + probe.reason},
                    {"frames", options.frames},
                    {"warmup", options.warmup},
                    {"rows", json::array()}};
        std::printf("CPU: %d OpenMP threads; CUDA: %s\n", options.threads,
                    probe.usable ? probe.name.c_str() : probe.reason.c_str());
        std::printf("%-8s %8s %9s | %9s %11s %11s %11s | %9s %11s %11s %11s | %10s\n", "path", "spheres", "contacts",
                    "cpu refit", "cpu descent", "cpu walks", "cpu contact", "gpu refit", "gpu GPU2", "gpu GPU2v2",
                    "gpu contact", "brute ms");
        for (const bool circles : {false, true}) {
            for (const std::uint32_t count : options.sizes) {
                std::vector<ChainSpheres> frames;
                for (int f = 0; f < options.warmup + options.frames; ++f)
                    frames.push_back(pathChain(circles, count, f));
                using bulletgpu::Backend;
                using bulletgpu::ChainTraversal;
                const BackendTimes cpu = runBackend(Backend::Cpu, ChainTraversal::Default, options, count, frames);
                const BackendTimes cpuWalks =
                    runBackend(Backend::Cpu, ChainTraversal::PerSphere, options, count, frames);
                BackendTimes cuda, cudaHalves;
                if (probe.usable) {
                    cuda = runBackend(Backend::Cuda, ChainTraversal::PerSphere, options, count, frames);
                    cudaHalves = runBackend(Backend::Cuda, ChainTraversal::HalvesPerSphere, options, count, frames);
                }
                const BackendTimes* const others[] = {&cpuWalks, &cuda, &cudaHalves};
                for (const BackendTimes* other : others) {
                    if (other->contacts != 0 && other->contacts != cpu.contacts) {
                        throw std::runtime_error("traversals report different contact counts");
                    }
                }
                double bruteMs = 0;
                if (count <= options.bruteForceMax) {
                    const Clock::time_point start = Clock::now();
                    const auto expected = bulletgpu::bruteForceChainContacts({frames.back()}, bulletgpu::ChainQuery{});
                    bruteMs = millisecondsSince(start);
                    if (expected.size() != cpu.contacts) throw std::runtime_error("contacts differ from brute force");
                }
                const char* path = circles ? "circles" : "sinusoid";
                std::printf("%-8s %8u %9llu | %9.2f %11.2f %11.2f %11.2f | %9.2f %11.2f %11.2f %11.2f | %10.1f\n", path,
                            count, static_cast<unsigned long long>(cpu.contacts), cpu.refitMs, cpu.traverseMs,
                            cpuWalks.traverseMs, cpu.contactMs, cuda.refitMs, cuda.traverseMs, cudaHalves.traverseMs,
                            cuda.contactMs, bruteMs);
                json row{{"path", path},
                         {"spheres", count},
                         {"cpu", timesJson(cpu)},
                         {"cpu_per_sphere_walks", timesJson(cpuWalks)}};
                if (probe.usable) {
                    row["cuda"] = timesJson(cuda);
                    row["cuda_two_threads_per_sphere"] = timesJson(cudaHalves);
                }
                if (count <= options.bruteForceMax) row["brute_force_ms"] = bruteMs;
                report["rows"].push_back(row);
            }
        }
        if (!options.jsonPath.empty()) std::ofstream(options.jsonPath) << report.dump(2) << '\n';
        return 0;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "bulletgpu-bench-chains: %s\n", error.what());
        return 1;
    }
}
