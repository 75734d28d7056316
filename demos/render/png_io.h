// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/render/image.h"

#include <string>

namespace bulletgpu::demo {

/// Writes an image as an 8-bit RGB PNG file. Throws std::runtime_error naming the path when the
/// file cannot be written.
void writePng(const std::string& path, const Image& image);

/// Reads a PNG file (any colour type; alpha is dropped) as 8-bit RGB. Throws std::runtime_error
/// naming the path when the file is missing or not a PNG.
Image readPng(const std::string& path);

} // namespace bulletgpu::demo
