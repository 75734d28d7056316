// SPDX-License-Identifier: Zlib
// The CUDA sphere-chain solver against the CPU solver: byte-identical sorted contacts on the
// paper's paths, many chains, degenerate spheres and frames of motion. Every case skips with a
// warning when no CUDA device is usable.
#include "kernels/chain/sphere_chain.h"
#include "kernels/common/cuda_device.h"
#include "kernels/reference/brute_force_chains.h"

#include "support/cuda_skip.h"
#include "support/test_skip.h"
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

using namespace bulletgpu;
using bulletgpu::test::cudaDeviceOrSkip;

namespace {

/// A CPU set and a CUDA set holding the same chains.
struct TwinSets {
    SphereChainSet cpu{Backend::Cpu, 2};
    SphereChainSet cuda{Backend::Cuda, 0};

    void add(const ChainSpheres& chain) {
        for (SphereChainSet* set : {&cpu, &cuda}) {
            set->addChain(chain.centres.data(), chain.radii.data(), static_cast<std::uint32_t>(chain.radii.size()));
        }
    }
    void move(std::uint32_t index, const ChainSpheres& chain) {
        for (SphereChainSet* set : {&cpu, &cuda}) set->setPositions(index, chain.centres.data(), chain.radii.data());
    }
    /// Both backends' contacts for `query`, required identical; returns how many.
    std::size_t requireSame(const ChainQuery& query) {
        cpu.findContacts(query, m_cpuContacts);
        cuda.findContacts(query, m_cudaContacts);
        return requireIdentical();
    }
    /// Both backends' contacts of the listed spheres for `query`, required identical; returns how many.
    std::size_t requireSameOf(const std::vector<std::uint32_t>& listed, const ChainQuery& query) {
        const auto count = static_cast<std::uint32_t>(listed.size());
        cpu.findContactsOf(listed.data(), count, query, m_cpuContacts);
        cuda.findContactsOf(listed.data(), count, query, m_cudaContacts);
        return requireIdentical();
    }

private:
    /// The two backends' last contacts, required byte-identical; returns how many.
    std::size_t requireIdentical() const {
        REQUIRE(m_cudaContacts.size() == m_cpuContacts.size());
        std::size_t mismatches = 0;
        for (std::size_t c = 0; c < m_cpuContacts.size(); ++c) {
            mismatches += std::memcmp(&m_cpuContacts[c], &m_cudaContacts[c], sizeof(ChainContact)) != 0;
        }
        REQUIRE(mismatches == 0);
        return m_cpuContacts.size();
    }

    std::vector<ChainContact> m_cpuContacts, m_cudaContacts;
};

} // namespace

TEST_CASE("SphereChain CUDA: without a device the backend says why", "[chain][cuda]") {
    if (probeCudaDevice(0).usable) return;
    REQUIRE_THROWS_AS(SphereChainSet(Backend::Cuda, 0), std::runtime_error);
    REQUIRE(SphereChainSet(Backend::Auto, 0).backend() == Backend::Cpu);
}

TEST_CASE("SphereChain CUDA: the paper's paths match the CPU", "[chain][cuda]") {
    if (!cudaDeviceOrSkip("SphereChain CUDA test: ")) return;
    for (const std::uint32_t count : {10000u, 50000u, 150000u}) {
        CAPTURE(count);
        TwinSets sets;
        sets.add(paperSinusoidChain(count, 2));
        sets.add(paperCirclesChain(count, 2));
        REQUIRE(sets.requireSame(ChainQuery{}) > count);
        REQUIRE(sets.requireSame(ChainQuery{3, true, false}) > 0);
        // Two threads per sphere (GPU2v2) against the CPU's per-sphere walk.
        REQUIRE(sets.requireSame(ChainQuery{1, true, true, ChainTraversal::HalvesPerSphere}) > count);
        REQUIRE(sets.requireSame(ChainQuery{0, false, true, ChainTraversal::HalvesPerSphere}) > 0);
    }
}

TEST_CASE("SphereChain CUDA: many chains, degenerate spheres, exclusion and filters", "[chain][cuda]") {
    if (!cudaDeviceOrSkip("SphereChain CUDA test: ")) return;
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> step(-0.6f, 0.6f), radius(0.0f, 1.0f);
    TwinSets sets;
    for (std::uint32_t c = 0; c < 40; ++c) {
        ChainSpheres chain;
        float p[3] = {0, 0, 0};
        for (std::uint32_t s = 0; s < 1 + 31 * c; ++s) {
            for (float& coordinate : p) chain.centres.push_back(coordinate += (c % 7 == 0 ? 0.0f : step(rng)));
            chain.radii.push_back(c % 5 == 0 ? 0.0f : radius(rng));
        }
        sets.add(chain);
    }
    for (const ChainQuery query : {ChainQuery{0, true, true}, ChainQuery{1, true, true}, ChainQuery{3, true, true},
                                   ChainQuery{1, false, true}, ChainQuery{1, true, false}}) {
        REQUIRE(sets.requireSame(query) > 0);
    }
}

TEST_CASE("SphereChain CUDA: refits over frames of motion match the CPU", "[chain][cuda]") {
    if (!cudaDeviceOrSkip("SphereChain CUDA test: ")) return;
    TwinSets sets;
    sets.add(paperCirclesChain(20000, 0));
    sets.add(paperSinusoidChain(20000, 0));
    for (int frame = 1; frame <= 6; ++frame) {
        CAPTURE(frame);
        sets.move(0, paperCirclesChain(20000, frame));
        sets.move(1, paperSinusoidChain(20000, frame));
        sets.requireSame(ChainQuery{});
        REQUIRE(sets.cuda.stats().refitted);
    }
}

TEST_CASE("SphereChain CUDA: sizes around the refit's 2048-leaf subtrees match the CPU", "[chain][cuda]") {
    if (!cudaDeviceOrSkip("SphereChain CUDA test: ")) return;
    for (const std::uint32_t count : {1u, 2u, 3u, 2047u, 2048u, 2049u, 4096u, 4097u, 6145u}) {
        CAPTURE(count);
        std::mt19937 rng(count);
        std::uniform_real_distribution<float> step(-0.5f, 0.5f), radius(0.1f, 0.6f);
        ChainSpheres chain;
        float p[3] = {0, 0, 0};
        for (std::uint32_t s = 0; s < count; ++s) {
            for (float& coordinate : p) chain.centres.push_back(coordinate += step(rng));
            chain.radii.push_back(radius(rng));
        }
        TwinSets sets;
        sets.add(chain);
        sets.requireSame(ChainQuery{});
        sets.requireSame(ChainQuery{0, true, true, ChainTraversal::HalvesPerSphere});
    }
}

TEST_CASE("SphereChain CUDA: the contacts of listed spheres match the CPU", "[chain][cuda]") {
    if (!cudaDeviceOrSkip("SphereChain CUDA test: ")) return;
    TwinSets sets;
    sets.add(paperCirclesChain(20000, 2));
    sets.add(paperSinusoidChain(5000, 2));
    std::mt19937 rng(5);
    for (const double share : {0.001, 0.05, 0.5}) {
        std::bernoulli_distribution pick(share);
        std::vector<std::uint32_t> listed;
        for (std::uint32_t s = 0; s < 25000; ++s)
            if (pick(rng)) listed.push_back(s);
        CAPTURE(share, listed.size());
        REQUIRE(sets.requireSameOf(listed, ChainQuery{}) > 0);
        sets.requireSameOf(listed, ChainQuery{3, true, false});
        sets.requireSameOf(listed, ChainQuery{0, false, true});
    }
    REQUIRE(sets.requireSameOf({}, ChainQuery{}) == 0);
}

TEST_CASE("SphereChain CUDA: spheres moved one by one match the CPU", "[chain][cuda]") {
    if (!cudaDeviceOrSkip("SphereChain CUDA test: ")) return;
    TwinSets sets;
    ChainSpheres chain = paperCirclesChain(20000, 2);
    sets.add(chain);
    std::mt19937 rng(9);
    std::bernoulli_distribution pick(0.01);
    std::uniform_real_distribution<float> nudge(-0.5f, 0.5f);
    for (int frame = 0; frame < 4; ++frame) {
        std::vector<std::uint32_t> moved;
        std::vector<float> centres;
        for (std::uint32_t s = 0; s < 20000; ++s) {
            if (!pick(rng)) continue;
            for (int a = 0; a < 3; ++a) centres.push_back(chain.centres[3 * s + a] += nudge(rng));
            moved.push_back(s);
        }
        for (SphereChainSet* set : {&sets.cpu, &sets.cuda})
            set->moveSpheres(moved.data(), static_cast<std::uint32_t>(moved.size()), centres.data());
        REQUIRE(sets.requireSame(ChainQuery{}) > 0);
    }
}
