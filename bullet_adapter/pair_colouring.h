// SPDX-License-Identifier: Zlib
#pragma once

#include "bullet_adapter/self_collision_response.h"

#include <cstddef>
#include <cstdint>
#include <vector>

/// The colouring of a cloth's feature pairs that lets the projection run pairs at once: the list
/// is cut into blocks of consecutive pairs, and no two blocks of one colour share a vertex that
/// a pair of either may move. A block keeps its pairs in list order and the list's locality (near
/// pairs are mostly listed near each other), which colouring single pairs loses: each of their
/// many colours sweeps the whole mesh.

namespace bulletgpu {

/// Pairs in a block (the last block of a list may have fewer).
constexpr std::size_t cColourBlockPairs = 256;

/// A pair list's blocks in colours, and the scratch that colours them; kept by the caller between
/// steps, so that colouring allocates nothing once the sizes settle.
struct PairColouring {
    std::vector<std::uint32_t> blocks;       ///< Block numbers colour by colour, ascending within each.
    std::vector<std::uint32_t> colourStarts; ///< Where each colour begins in `blocks`, then its size.
    std::vector<std::uint32_t> colourOf;     ///< Each block's colour.
    std::vector<std::uint64_t> used;         ///< Scratch: per vertex, bits of the colours that move it.
    std::size_t words = 1;                   ///< Scratch: 64-bit words per vertex in `used`.

    /// Colours in the last colouring.
    std::size_t colours() const { return colourStarts.empty() ? 0 : colourStarts.size() - 1; }
};

/// The vertices of `pair` (VertexFace: vertex a, triangle b; EdgeEdge: edges a, b) that the
/// projection may move, those of nonzero inverse mass, into `out`; returns how many (0 to 4).
int movableVertices(const SelfCollisionMesh& mesh, const CcdFeaturePair& pair, std::uint32_t* out);

/// Colours the blocks of cColourBlockPairs consecutive pairs of the `count` pairs of `pairs`
/// greedily in list order: each takes the lowest colour that no earlier block sharing one of its
/// pairs' movable vertices took. Deterministic; fills `colouring`.
void colourPairs(const SelfCollisionMesh& mesh, const CcdFeaturePair* pairs, std::size_t count,
                 PairColouring& colouring);

} // namespace bulletgpu
