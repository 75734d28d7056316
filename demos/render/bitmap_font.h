// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/render/image.h"

#include <string_view>

namespace bulletgpu::demo {

/// Horizontal advance of the built-in 5x7 font (with one descender row), in font pixels: 5 wide
/// plus 1 of spacing.
constexpr int kGlyphAdvance = 6;
/// Height of a glyph cell in font pixels: 7 rows down to the baseline and 1 for descenders.
constexpr int kGlyphHeight = 8;

/// Width in image pixels of a text at an integer scale (each font pixel is scale x scale).
int textWidth(std::string_view text, int scale);

/// Draws a text left to right with its top-left corner at (x, y); pixels outside are dropped.
/// Characters outside ASCII 32-126 are drawn as '?'.
void drawText(Image& image, int x, int y, std::string_view text, Rgb colour, int scale);

/// Draws a text rotated a quarter turn anticlockwise (reading bottom to top), with the glyphs' left
/// edge on row `bottom` and their top on column `x`.
void drawTextUpwards(Image& image, int x, int bottom, std::string_view text, Rgb colour, int scale);

} // namespace bulletgpu::demo
