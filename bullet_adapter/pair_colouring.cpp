// SPDX-License-Identifier: Zlib
#include "bullet_adapter/pair_colouring.h"

#include <algorithm>

namespace bulletgpu {

namespace {

/// The lowest colour that no movable vertex of the `count` pairs of `pairs` has in `c.used`;
/// c.words * 64 when every one is taken.
std::size_t firstFreeColour(const SelfCollisionMesh& mesh, const CcdFeaturePair* pairs, std::size_t count,
                            const PairColouring& c) {
    for (std::size_t w = 0; w < c.words; ++w) {
        std::uint64_t taken = 0;
        for (std::size_t p = 0; p < count; ++p) {
            std::uint32_t vertices[4];
            const int movable = movableVertices(mesh, pairs[p], vertices);
            for (int i = 0; i < movable; ++i) taken |= c.used[vertices[i] * c.words + w];
        }
        if (~taken != 0) return 64 * w + static_cast<std::size_t>(__builtin_ctzll(~taken));
    }
    return 64 * c.words;
}

/// Marks every movable vertex of the `count` pairs of `pairs` with `colour` in `c.used`.
void takeColour(const SelfCollisionMesh& mesh, const CcdFeaturePair* pairs, std::size_t count, std::size_t colour,
                PairColouring& c) {
    const std::uint64_t bit = std::uint64_t{1} << (colour % 64);
    for (std::size_t p = 0; p < count; ++p) {
        std::uint32_t vertices[4];
        const int movable = movableVertices(mesh, pairs[p], vertices);
        for (int i = 0; i < movable; ++i) c.used[vertices[i] * c.words + colour / 64] |= bit;
    }
}

/// Gives every vertex of `c.used` one more word of colours, none taken.
void widen(PairColouring& c, std::uint32_t vertexCount) {
    const std::size_t words = c.words + 1;
    c.used.resize(vertexCount * words);
    for (std::size_t v = vertexCount; v-- > 0;) {
        std::copy_backward(c.used.begin() + v * c.words, c.used.begin() + (v + 1) * c.words,
                           c.used.begin() + v * words + c.words);
        c.used[v * words + c.words] = 0;
    }
    c.words = words;
}

/// Fills c.colourStarts and c.blocks from c.colourOf (a counting sort, stable).
void sortByColour(std::size_t colours, PairColouring& c) {
    const std::size_t blockCount = c.colourOf.size();
    c.colourStarts.assign(colours + 1, 0);
    for (std::size_t b = 0; b < blockCount; ++b) ++c.colourStarts[c.colourOf[b] + 1];
    for (std::size_t k = 0; k < colours; ++k) c.colourStarts[k + 1] += c.colourStarts[k];
    c.blocks.resize(blockCount);
    // Each colour's start walks to the next colour's, then all step back by one colour.
    for (std::size_t b = 0; b < blockCount; ++b)
        c.blocks[c.colourStarts[c.colourOf[b]]++] = static_cast<std::uint32_t>(b);
    std::copy_backward(c.colourStarts.begin(), c.colourStarts.end() - 1, c.colourStarts.end());
    c.colourStarts[0] = 0;
}

} // namespace

int movableVertices(const SelfCollisionMesh& mesh, const CcdFeaturePair& pair, std::uint32_t* out) {
    std::uint32_t all[4];
    pairVertices(mesh, pair, all);
    int count = 0;
    for (const std::uint32_t v : all)
        if (mesh.inverseMass[v] != 0) out[count++] = v;
    return count;
}

void colourPairs(const SelfCollisionMesh& mesh, const CcdFeaturePair* pairs, std::size_t count,
                 PairColouring& colouring) {
    PairColouring& c = colouring;
    c.used.assign(mesh.vertexCount * c.words, 0);
    c.colourOf.resize((count + cColourBlockPairs - 1) / cColourBlockPairs);
    std::size_t colours = 0;
    for (std::size_t b = 0; b < c.colourOf.size(); ++b) {
        const CcdFeaturePair* block = pairs + b * cColourBlockPairs;
        const std::size_t size = std::min(cColourBlockPairs, count - b * cColourBlockPairs);
        const std::size_t colour = firstFreeColour(mesh, block, size, c);
        if (colour == 64 * c.words) widen(c, mesh.vertexCount);
        takeColour(mesh, block, size, colour, c);
        c.colourOf[b] = static_cast<std::uint32_t>(colour);
        colours = std::max(colours, colour + 1);
    }
    sortByColour(colours, c);
}

} // namespace bulletgpu
