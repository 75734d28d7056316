// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/chain/chain_ops.h"

#include <cmath>
#include <cstdint>
#include <vector>

/// The all-pairs oracle of the sphere-chain engine, and the paper's two animation paths
/// (Ayala, Madera, Moo-Mena: a snake-like tube following a sinusoid, and following circles).

namespace bulletgpu {

/// One chain's spheres: x, y, z per sphere in `centres`, one radius each in `radii`.
struct ChainSpheres {
    std::vector<float> centres; ///< 3 floats per sphere.
    std::vector<float> radii;   ///< 1 float per sphere.
};

/// The oracle: every pair of spheres of `chains` that satisfies spheresTouchExact and the
/// query's filters, sorted by (chainA, sphereA, chainB, sphereB). O(n^2).
inline std::vector<ChainContact> bruteForceChainContacts(const std::vector<ChainSpheres>& chains,
                                                         const ChainQuery& query) {
    std::vector<ChainSphere> leaves;
    std::vector<std::uint32_t> sphereChain, chainStart{0};
    for (std::uint32_t c = 0; c < chains.size(); ++c) {
        for (std::size_t s = 0; s < chains[c].radii.size(); ++s) {
            const float* centre = &chains[c].centres[3 * s];
            leaves.push_back(ChainSphere{centre[0], centre[1], centre[2], chains[c].radii[s]});
            sphereChain.push_back(c);
        }
        chainStart.push_back(static_cast<std::uint32_t>(leaves.size()));
    }
    const auto total = static_cast<std::int64_t>(leaves.size());
    std::vector<std::vector<std::uint32_t>> partners(leaves.size());
#pragma omp parallel for schedule(dynamic, 64)
    for (std::int64_t i = 0; i < total; ++i) {
        for (std::int64_t j = i + 1; j < total; ++j) {
            const bool sameChain = sphereChain[i] == sphereChain[j];
            if (sameChain && (!query.selfCollision || j - i <= static_cast<std::int64_t>(query.excludedNeighbours))) {
                continue;
            }
            if (!sameChain && !query.betweenChains) continue;
            if (spheresTouchExact(leaves[i], leaves[j])) partners[i].push_back(static_cast<std::uint32_t>(j));
        }
    }
    std::vector<ChainContact> contacts;
    for (std::int64_t i = 0; i < total; ++i) {
        for (const std::uint32_t j : partners[i]) {
            contacts.push_back(makeContact(leaves.data(), sphereChain.data(), chainStart.data(),
                                           static_cast<std::uint32_t>(i), j));
        }
    }
    return contacts;
}

/// Path 1 of the paper at animation frame `frame`: `count` spheres of radius 0.5, 0.4 apart
/// along x, following y = 6 sin(x / 5) (neighbours overlap; the tube never crosses itself).
inline ChainSpheres paperSinusoidChain(std::uint32_t count, int frame) {
    ChainSpheres chain;
    for (std::uint32_t i = 0; i < count; ++i) {
        const double x = 0.4 * i + 0.1 * frame;
        chain.centres.push_back(static_cast<float>(x));
        chain.centres.push_back(static_cast<float>(6.0 * std::sin(x / 5.0)));
        chain.centres.push_back(static_cast<float>(0.2 * std::sin(0.37 * i + frame)));
        chain.radii.push_back(0.5f);
    }
    return chain;
}

/// Path 2 of the paper at animation frame `frame`: `count` spheres of radius 0.5, 0.4 apart
/// along circles of radius about 10 that rise 0.9 per turn, so each turn rests on the last
/// (about 2 contacts per sphere beyond its neighbours).
inline ChainSpheres paperCirclesChain(std::uint32_t count, int frame) {
    ChainSpheres chain;
    const double twoPi = 6.283185307179586;
    for (std::uint32_t i = 0; i < count; ++i) {
        const double angle = 0.04 * i + 0.01 * frame;
        const double radius = 10.0 + 0.3 * std::sin(0.0005 * i + 0.5 * frame);
        chain.centres.push_back(static_cast<float>(radius * std::cos(angle)));
        chain.centres.push_back(static_cast<float>(radius * std::sin(angle)));
        chain.centres.push_back(static_cast<float>(0.9 * angle / twoPi));
        chain.radii.push_back(0.5f);
    }
    return chain;
}

} // namespace bulletgpu
