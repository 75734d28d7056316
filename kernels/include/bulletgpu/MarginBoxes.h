// SPDX-License-Identifier: Zlib
#pragma once

namespace bulletgpu {

/// Whether the CPU broadphase sweeps boxes grown by a margin, so that a box moving a little per
/// frame is swept again only when it leaves its margin box, and otherwise costs one re-test
/// per candidate pair. Pairs stay exact either way; only the time differs.
enum class MarginBoxes {
    Auto, ///< Times both ways now and then and keeps the faster.
    On,   ///< Always: fastest when boxes move little per frame (settling piles, slow objects).
    Off,  ///< Never: every changed box is swept again each frame (fast objects everywhere).
};

/// Lower-case name of a margin setting ("auto", "on", "off").
inline const char* toString(MarginBoxes margins) {
    switch (margins) {
        case MarginBoxes::On:
            return "on";
        case MarginBoxes::Off:
            return "off";
        default:
            return "auto";
    }
}

} // namespace bulletgpu
