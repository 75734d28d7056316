// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/chain/chain_descent.h"

#include <cfloat>
#include <cmath>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/// The leaves of each bucket of the CPU descent laid out lane by lane (x[8], y[8], z[8], r[8]),
/// so that the float test of one sphere against a whole bucket compiles to a few vector
/// instructions instead of eight scalar tests.

namespace bulletgpu {

/// Leaves in a tile: those of one bucket of the descent.
constexpr std::uint32_t cChainTileLanes = 1u << cChainBucketLevel;
static_assert(cChainTileLanes % 4 == 0 && cChainTileLanes <= 32, "tiles are tested four lanes at a time into one word");

/// The leaves [tile * cChainTileLanes, (tile + 1) * cChainTileLanes), lane by lane; lanes past
/// the last leaf hold NaN, which no test accepts.
struct alignas(32) ChainLeafTile {
    float x[cChainTileLanes]; ///< Centres' x.
    float y[cChainTileLanes]; ///< Centres' y.
    float z[cChainTileLanes]; ///< Centres' z.
    float r[cChainTileLanes]; ///< Radii.
};

/// Writes tile `tile` from the leaves (`leafCount` of them).
inline void fillLeafTile(const ChainSphere* leaves, std::uint32_t leafCount, std::uint32_t tile, ChainLeafTile& out) {
    for (std::uint32_t lane = 0; lane < cChainTileLanes; ++lane) {
        const std::uint32_t leaf = tile * cChainTileLanes + lane;
        const ChainSphere s = leaf < leafCount ? leaves[leaf] : ChainSphere{NAN, NAN, NAN, NAN};
        out.x[lane] = s.x;
        out.y[lane] = s.y;
        out.z[lane] = s.z;
        out.r[lane] = s.r;
    }
}

/// Bit `lane` set when the tile's leaf in that lane may touch `query`: spheresMayTouch lane by
/// lane, the same float operations, so just as conservative (SSE where the compiler has it).
inline std::uint32_t tileMayTouch(const ChainLeafTile& tile, const ChainSphere& query) {
#if defined(__SSE2__)
    const __m128 qx = _mm_set1_ps(query.x);
    const __m128 qy = _mm_set1_ps(query.y);
    const __m128 qz = _mm_set1_ps(query.z);
    const __m128 qr = _mm_set1_ps(query.r);
    const __m128 slack = _mm_set1_ps(1.0f + cChainFloatSlack);
    const __m128 floor = _mm_set1_ps(FLT_MIN);
    std::uint32_t bits = 0;
    for (std::uint32_t lane = 0; lane < cChainTileLanes; lane += 4) {
        const __m128 dx = _mm_sub_ps(qx, _mm_load_ps(tile.x + lane));
        const __m128 dy = _mm_sub_ps(qy, _mm_load_ps(tile.y + lane));
        const __m128 dz = _mm_sub_ps(qz, _mm_load_ps(tile.z + lane));
        const __m128 reach = _mm_add_ps(qr, _mm_load_ps(tile.r + lane));
        const __m128 distance2 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(dx, dx), _mm_mul_ps(dy, dy)), _mm_mul_ps(dz, dz));
        const __m128 limit = _mm_add_ps(_mm_mul_ps(_mm_mul_ps(reach, reach), slack), floor);
        bits |= static_cast<std::uint32_t>(_mm_movemask_ps(_mm_cmple_ps(distance2, limit))) << lane;
    }
    return bits;
#else
    std::uint32_t bits = 0;
    for (std::uint32_t lane = 0; lane < cChainTileLanes; ++lane) {
        const ChainSphere leaf{tile.x[lane], tile.y[lane], tile.z[lane], tile.r[lane]};
        bits |= static_cast<std::uint32_t>(spheresMayTouch(query, leaf)) << lane;
    }
    return bits;
#endif
}

} // namespace bulletgpu
