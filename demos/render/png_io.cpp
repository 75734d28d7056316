// SPDX-License-Identifier: Zlib
// Uses libpng's simplified API, which reports errors as return values (no setjmp).
#include "demos/render/png_io.h"

#include <png.h>

#include <cstring>
#include <stdexcept>

namespace bulletgpu::demo {

namespace {

/// A png_image set up for 8-bit RGB.
png_image rgbImageHeader(int width, int height) {
    png_image header;
    std::memset(&header, 0, sizeof header);
    header.version = PNG_IMAGE_VERSION;
    header.width = static_cast<png_uint_32>(width);
    header.height = static_cast<png_uint_32>(height);
    header.format = PNG_FORMAT_RGB;
    return header;
}

} // namespace

void writePng(const std::string& path, const Image& image) {
    if (image.width <= 0 || image.height <= 0 ||
        image.rgb.size() != static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * 3) {
        throw std::runtime_error("writePng: " + path + ": the image has no pixels or a wrong buffer size");
    }
    png_image header = rgbImageHeader(image.width, image.height);
    if (png_image_write_to_file(&header, path.c_str(), 0, image.rgb.data(), image.width * 3, nullptr) == 0) {
        const std::string reason = header.message;
        png_image_free(&header);
        throw std::runtime_error("writePng: cannot write " + path + ": " + reason);
    }
}

Image readPng(const std::string& path) {
    png_image header;
    std::memset(&header, 0, sizeof header);
    header.version = PNG_IMAGE_VERSION;
    if (png_image_begin_read_from_file(&header, path.c_str()) == 0) {
        const std::string reason = header.message;
        png_image_free(&header);
        throw std::runtime_error("readPng: cannot read " + path + ": " + reason);
    }
    header.format = PNG_FORMAT_RGB;
    Image image(static_cast<int>(header.width), static_cast<int>(header.height));
    if (png_image_finish_read(&header, nullptr, image.rgb.data(), image.width * 3, nullptr) == 0) {
        const std::string reason = header.message;
        png_image_free(&header);
        throw std::runtime_error("readPng: cannot decode " + path + ": " + reason);
    }
    return image;
}

} // namespace bulletgpu::demo
