// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/sap/sap_ops.h"

#include <cstdint>
#include <vector>

namespace bulletgpu {

class BoxStore;

/// One axis cut into slabs: slab k holds the coordinates in [cuts[k-1], cuts[k]), the first
/// slab reaches down to -infinity and the last up to +infinity.
struct SlabCuts {
    int axis = 0;            ///< Axis the cuts lie on.
    std::vector<float> cuts; ///< Ascending cut coordinates, one fewer than slabs.

    /// Number of slabs.
    int slabCount() const { return static_cast<int>(cuts.size()) + 1; }

    /// The slab holding a coordinate: the number of cuts at or below it (0 for NaN).
    int slabOf(float x) const;

    /// The ownership window of a slab: the pairs whose reference point lies in it.
    PairOwnership ownership(int slab) const;
};

/// Chooses and keeps the cuts of a K-way spatial split (Avril et al. 2014, section 5.2): cuts at
/// quantiles of the box centres, so slabs hold equal numbers of boxes, on the axis where those
/// cuts duplicate the fewest boxes. A box crossing a cut goes to every slab it touches, so the
/// fewest straddlers is the least total work; the paper's "axis with the most overlapping
/// pairs" would cut a floor scene across its stacking axis and duplicate nearly every box.
///
/// The cuts stay put while the loads stay within cImbalanceTolerance of the mean (hysteresis:
/// boxes only migrate when the balance has drifted), and the axis is re-examined every
/// cAxisCheckPeriod updates and changed only when another axis duplicates far fewer boxes.
/// Everything is computed from a deterministic sample, so the same scene gives the same cuts.
class SlabSplitter {
public:
    /// Load over mean load above which the cuts are moved.
    static constexpr double cImbalanceTolerance = 0.15;
    /// Updates between two checks of the split axis.
    static constexpr std::uint32_t cAxisCheckPeriod = 64;
    /// Updates after a re-cut during which the cuts stay put whatever the loads.
    static constexpr std::uint32_t cSettleUpdates = 8;
    /// Boxes sampled to place the cuts.
    static constexpr std::uint32_t cSampleSize = 4096;

    /// A splitter into this many slabs (at least 1).
    explicit SlabSplitter(int slabs);

    /// Looks at the store and the loads the last update produced (boxes per slab; empty before
    /// the first update) and moves the cuts when needed. Returns whether they moved.
    bool update(const BoxStore& boxes, const std::vector<std::uint32_t>& loads);

    /// The current cuts.
    const SlabCuts& cuts() const { return m_cuts; }

    /// Forgets the cuts: the next update places them afresh.
    void reset();

private:
    /// Cuts at the centre quantiles of the sample on one axis, and how many sampled boxes they split.
    SlabCuts cutsOnAxis(int axis, std::uint32_t& straddlers) const;
    void takeSample(const BoxStore& boxes);

    int m_slabs;
    bool m_placed = false;
    std::uint32_t m_updates = 0;
    std::uint32_t m_lastCut = 0;
    std::uint32_t m_usableAtCut = 0;
    SlabCuts m_cuts;
    std::vector<float> m_sampleMin[3]; // sampled usable boxes, per axis
    std::vector<float> m_sampleMax[3];
    mutable std::vector<float> m_centres;
};

} // namespace bulletgpu
