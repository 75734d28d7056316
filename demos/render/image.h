// SPDX-License-Identifier: Zlib
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bulletgpu::demo {

/// One 8-bit sRGB colour.
struct Rgb {
    std::uint8_t r = 0; ///< Red.
    std::uint8_t g = 0; ///< Green.
    std::uint8_t b = 0; ///< Blue.

    /// Whether both colours are the same.
    friend bool operator==(const Rgb& a, const Rgb& b) { return a.r == b.r && a.g == b.g && a.b == b.b; }
    /// Whether the colours differ.
    friend bool operator!=(const Rgb& a, const Rgb& b) { return !(a == b); }
};

/// An 8-bit RGB image, rows from top to bottom, three bytes a pixel.
struct Image {
    int width = 0;                 ///< Pixels per row.
    int height = 0;                ///< Rows.
    std::vector<std::uint8_t> rgb; ///< width * height * 3 bytes.

    /// An empty image.
    Image() = default;
    /// A width x height image filled with one colour.
    Image(int w, int h, Rgb fill = {})
        : width(w), height(h), rgb(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 3) {
        for (std::size_t i = 0; i < rgb.size(); i += 3) {
            rgb[i] = fill.r;
            rgb[i + 1] = fill.g;
            rgb[i + 2] = fill.b;
        }
    }

    /// Whether (x, y) is inside the image.
    bool contains(int x, int y) const { return x >= 0 && y >= 0 && x < width && y < height; }
    /// The colour at (x, y), which must be inside.
    Rgb at(int x, int y) const {
        const std::uint8_t* p = &rgb[offset(x, y)];
        return {p[0], p[1], p[2]};
    }
    /// Sets the colour at (x, y), which must be inside.
    void set(int x, int y, Rgb colour) {
        std::uint8_t* p = &rgb[offset(x, y)];
        p[0] = colour.r;
        p[1] = colour.g;
        p[2] = colour.b;
    }
    /// Sets the colour at (x, y) when it is inside; does nothing otherwise.
    void setClipped(int x, int y, Rgb colour) {
        if (contains(x, y)) set(x, y, colour);
    }

    /// Whether both images have the same size and pixels.
    friend bool operator==(const Image& a, const Image& b) {
        return a.width == b.width && a.height == b.height && a.rgb == b.rgb;
    }

private:
    std::size_t offset(int x, int y) const {
        return (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)) * 3;
    }
};

} // namespace bulletgpu::demo
