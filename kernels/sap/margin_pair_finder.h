// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/common/box_store.h"
#include "kernels/common/float_box.h"
#include "kernels/sap/margin_chooser.h"
#include "kernels/sap/pair_finder.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bulletgpu {

/// A CPU pair finder that can sweep each box grown by a margin, so that a box moving a little
/// per frame re-enters the sweep only when it leaves its margin box.
///
/// With margins, the inner finder sweeps the margin boxes and its pair set becomes a set of
/// candidates. Every update re-tests, on the real boxes, the candidates of the boxes that
/// changed; only the boxes that left their margin box reach the inner finder, with a new one.
/// When more of them leave than an incremental sweep takes, every box gets a new margin box at
/// once, so that the next wave comes all together a few frames later rather than some every
/// frame. A margin covers cPredictedMoves times the box's last move (the largest change of a
/// bound), at least cMinMarginShare and at most cMaxMarginShare of its largest extent; a box
/// that did not move gets none. Without margins the inner finder sweeps the real boxes. The
/// MarginBoxes policy picks the way, Auto by timing both (MarginChooser).
///
/// Margin boxes contain the real ones, so the candidates hold every pair, and the pair set is
/// exactly that of any PairFinder: the real boxes' overlaps, in the store's exact precision
/// when it keeps it, with group/mask and the ownership window. Deltas come out sorted.
class MarginPairFinder final : public PairFinder {
public:
    /// Moves of the last change a margin covers.
    static constexpr float cPredictedMoves = 4.0f;
    /// Smallest margin of a moving box, as a share of its largest extent.
    static constexpr float cMinMarginShare = 0.05f;
    /// Largest margin, as a share of the box's largest extent.
    static constexpr float cMaxMarginShare = 0.5f;

    /// Wraps `inner`, a finder that keeps its pairs on the host (PairFinder::hostPairs); threads
    /// <= 0 uses OpenMP's default. Throws std::invalid_argument for a finder without host pairs.
    MarginPairFinder(std::unique_ptr<PairFinder> inner, int threads, MarginBoxes policy);

    Backend backend() const override { return m_inner->backend(); }
    void update(BoxStore& boxes, bool filterGroups, PairDeltas& deltas) override;
    void applyEdits(const std::vector<std::uint64_t>& added, const std::vector<std::uint64_t>& removed) override;
    void setOwnership(const PairOwnership& window) override;
    /// Handed on to the inner finder while it sweeps the real boxes (no margins); updates with
    /// margins find the lost pairs by re-testing and report them in the deltas alone.
    void setLostPairSink(LostPairSink* sink) override { m_lostSink = sink; }
    void reset() override;
    std::uint64_t pairCount() const override { return m_chooser.useMargins() ? m_pairCount : m_inner->pairCount(); }
    const PairFinderStats& stats() const override { return m_stats; }
    std::string description() const override;

    /// The current pair set, sorted (for tests; builds a new vector).
    std::vector<std::uint64_t> pairs() const;

    /// Whether the next update sweeps margin boxes.
    bool usesMargins() const { return m_chooser.useMargins(); }

    /// Replaces the policy (Auto starts its trials again); switches at once when the way changes.
    void setPolicy(MarginBoxes policy);

    /// The candidates while margins are in use: pairs of overlapping margin boxes, sorted.
    const std::vector<std::uint64_t>& candidates() const { return m_keys; }

    /// Checks the invariants against the store of the last update: candidates sorted, unique
    /// and those of the inner finder, each candidate's overlap flag equal to a fresh test, every
    /// usable live box inside its margin box. Runs after every update in BULLETGPU_VALIDATE
    /// builds; tests call it too.
    bool validate(const BoxStore& boxes) const;

private:
    /// A slot that needs a new margin box (or leaves the margin store), with that box.
    struct Escape {
        std::uint32_t slot;
        FloatBox margin;
    };
    /// A stretch of the candidates, of the inner finder's found and lost lists, and where its
    /// merged candidates go, that one thread re-tests.
    struct Chunk {
        std::size_t keys, keysEnd, found, foundEnd, lost, lostEnd, out, outEnd;
    };

    /// An update that sweeps margin boxes.
    void updateWithMargins(BoxStore& boxes, bool filterGroups, PairDeltas& deltas);
    /// Starts sweeping margin boxes: the current pairs become the candidates.
    void enterMargins();
    /// Stops sweeping margin boxes: the inner finder takes the current pairs.
    void leaveMargins();
    /// Writes the candidates that overlap, the pair set while margins are in use.
    void overlappingCandidates(std::vector<std::uint64_t>& out) const;
    /// Copies the changed boxes, marks them for re-testing, and gives the boxes that left their
    /// margin box (or changed state or filter) a new one in the margin store.
    void refreshMarginBoxes(const BoxStore& boxes);
    /// Merges the inner finder's deltas into the candidates and re-tests those of changed boxes;
    /// returns the number of pair tests.
    std::uint64_t retestCandidates(const BoxStore& boxes, PairDeltas& deltas);
    /// Splits the candidates and the inner deltas into one chunk per thread, by key.
    void planChunks(int threads);
    /// Re-tests one chunk into the output arrays; returns the number of pair tests.
    std::uint64_t retestChunk(const Chunk& chunk, const BoxStore& boxes, std::uint64_t* outKeys,
                              std::uint8_t* outOverlaps, std::vector<std::uint64_t>& found,
                              std::vector<std::uint64_t>& lost) const;
    /// Whether the pair of slots a and b overlaps now, owned by the window.
    bool overlapsNow(const BoxStore& boxes, std::uint32_t a, std::uint32_t b) const;

    std::unique_ptr<PairFinder> m_inner;
    LostPairSink* m_lostSink = nullptr;
    int m_threads;
    BoxStore m_margins;                  // margin boxes, floats, swept by m_inner
    std::vector<FloatBox> m_real;        // real float boxes by slot (a re-test reads one cache line
                                         // per box); NaN for unusable or free slots
    std::vector<float> m_lastMove;       // per slot: largest change of a bound in its last change
    std::vector<std::uint8_t> m_changed; // per slot: changed in this update, so its candidates are re-tested
    std::vector<std::vector<Escape>> m_threadEscaped; // each thread's share of the changed slots, in order
    std::vector<std::uint64_t> m_keys;                // candidates, sorted
    std::vector<std::uint8_t> m_overlaps;             // per candidate: overlapping now
    std::vector<std::uint64_t> m_nextKeys;            // scratch for the merged candidates
    std::vector<std::uint8_t> m_nextOverlaps;
    std::vector<Chunk> m_chunks;
    std::vector<std::vector<std::uint64_t>> m_threadFound;
    std::vector<std::vector<std::uint64_t>> m_threadLost;
    std::vector<std::uint64_t> m_edited; // scratch for applyEdits
    std::vector<std::uint8_t> m_editedOverlaps;
    PairDeltas m_innerDeltas;
    PairOwnership m_ownership;
    std::uint64_t m_pairCount = 0;
    bool m_refreshAll = true; // every slot counts as changed in the next update with margins
    MarginChooser m_chooser;
    UpdateGate m_gate;
    PairFinderStats m_stats;
};

/// Wraps a CPU finder in a MarginPairFinder.
std::unique_ptr<PairFinder> createMarginPairFinder(std::unique_ptr<PairFinder> inner, int threads, MarginBoxes policy);

} // namespace bulletgpu
