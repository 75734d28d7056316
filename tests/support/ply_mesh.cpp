// SPDX-License-Identifier: Zlib
// A small reader for binary PLY triangle meshes.
#include "tests/support/ply_mesh.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace bulletgpu {
namespace {

/// A scalar type of a PLY property.
enum class PlyType { Int8, Uint8, Int16, Uint16, Int32, Uint32, Float32, Float64 };

/// One property of an element: a scalar, or a list with a count type and an item type.
struct PlyProperty {
    std::string name;
    PlyType type = PlyType::Float32;
    bool list = false;
    PlyType countType = PlyType::Uint8;
};

/// One element (vertex, face, ...) of the header.
struct PlyElement {
    std::string name;
    std::size_t count = 0;
    std::vector<PlyProperty> properties;
};

PlyType parseType(const std::string& name) {
    if (name == "char" || name == "int8") return PlyType::Int8;
    if (name == "uchar" || name == "uint8") return PlyType::Uint8;
    if (name == "short" || name == "int16") return PlyType::Int16;
    if (name == "ushort" || name == "uint16") return PlyType::Uint16;
    if (name == "int" || name == "int32") return PlyType::Int32;
    if (name == "uint" || name == "uint32") return PlyType::Uint32;
    if (name == "float" || name == "float32") return PlyType::Float32;
    if (name == "double" || name == "float64") return PlyType::Float64;
    throw std::runtime_error("bulletgpu: unknown PLY type " + name);
}

std::size_t sizeOf(PlyType type) {
    switch (type) {
        case PlyType::Int8:
        case PlyType::Uint8:
            return 1;
        case PlyType::Int16:
        case PlyType::Uint16:
            return 2;
        case PlyType::Float64:
            return 8;
        default:
            return 4;
    }
}

/// Reads binary values from a byte buffer in the file's byte order.
class ByteReader {
public:
    ByteReader(const std::vector<char>& bytes, std::size_t offset, bool bigEndian)
        : m_bytes(bytes), m_offset(offset), m_swap(bigEndian) {}

    /// The next value of `type`, as a double (exact for every PLY type).
    double read(PlyType type) {
        const std::size_t size = sizeOf(type);
        if (m_offset + size > m_bytes.size()) throw std::runtime_error("bulletgpu: PLY file is truncated");
        unsigned char raw[8];
        std::memcpy(raw, m_bytes.data() + m_offset, size);
        m_offset += size;
        if (m_swap) {
            for (std::size_t i = 0; i < size / 2; ++i) std::swap(raw[i], raw[size - 1 - i]);
        }
        switch (type) {
            case PlyType::Int8:
                return static_cast<double>(static_cast<std::int8_t>(raw[0]));
            case PlyType::Uint8:
                return raw[0];
            case PlyType::Int16:
                return as<std::int16_t>(raw);
            case PlyType::Uint16:
                return as<std::uint16_t>(raw);
            case PlyType::Int32:
                return as<std::int32_t>(raw);
            case PlyType::Uint32:
                return as<std::uint32_t>(raw);
            case PlyType::Float32:
                return as<float>(raw);
            default:
                return as<double>(raw);
        }
    }

private:
    template <typename T>
    static double as(const unsigned char* raw) {
        T value;
        std::memcpy(&value, raw, sizeof(T));
        return static_cast<double>(value);
    }

    const std::vector<char>& m_bytes;
    std::size_t m_offset;
    bool m_swap;
};

/// Parses the header; returns the elements and sets the body's offset and byte order.
std::vector<PlyElement> parseHeader(const std::vector<char>& bytes, std::size_t& bodyOffset, bool& bigEndian) {
    const std::string marker = "end_header\n";
    const std::string text(bytes.data(), std::min<std::size_t>(bytes.size(), 1 << 16));
    const std::size_t end = text.find(marker);
    if (text.rfind("ply", 0) != 0 || end == std::string::npos) throw std::runtime_error("bulletgpu: not a PLY file");
    bodyOffset = end + marker.size();
    std::istringstream header(text.substr(0, end));
    std::vector<PlyElement> elements;
    std::string line;
    bool binary = false;
    while (std::getline(header, line)) {
        std::istringstream words(line);
        std::string keyword;
        words >> keyword;
        if (keyword == "format") {
            std::string format;
            words >> format;
            binary = format == "binary_little_endian" || format == "binary_big_endian";
            bigEndian = format == "binary_big_endian";
        } else if (keyword == "element") {
            PlyElement element;
            words >> element.name >> element.count;
            elements.push_back(element);
        } else if (keyword == "property" && !elements.empty()) {
            PlyProperty property;
            std::string type;
            words >> type;
            if (type == "list") {
                std::string countType, itemType;
                words >> countType >> itemType;
                property.list = true;
                property.countType = parseType(countType);
                property.type = parseType(itemType);
            } else {
                property.type = parseType(type);
            }
            words >> property.name;
            elements.back().properties.push_back(property);
        }
    }
    if (!binary) throw std::runtime_error("bulletgpu: only binary PLY files are read");
    return elements;
}

} // namespace

PlyMesh readPlyMesh(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw std::runtime_error("bulletgpu: cannot open " + path);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    std::size_t offset = 0;
    bool bigEndian = false;
    const std::vector<PlyElement> elements = parseHeader(bytes, offset, bigEndian);
    ByteReader reader(bytes, offset, bigEndian);
    PlyMesh mesh;
    for (const PlyElement& element : elements) {
        for (std::size_t item = 0; item < element.count; ++item) {
            for (const PlyProperty& property : element.properties) {
                if (!property.list) {
                    const double value = reader.read(property.type);
                    const bool coordinate = property.name == "x" || property.name == "y" || property.name == "z";
                    if (element.name != "vertex" || !coordinate) continue;
                    mesh.positions.push_back(static_cast<float>(value));
                    mesh.exactPositions.push_back(value);
                    continue;
                }
                const auto count = static_cast<std::size_t>(reader.read(property.countType));
                std::vector<std::uint32_t> polygon(count);
                for (std::uint32_t& index : polygon) index = static_cast<std::uint32_t>(reader.read(property.type));
                if (element.name != "face") continue;
                for (std::size_t k = 2; k < count; ++k) {
                    mesh.indices.insert(mesh.indices.end(), {polygon[0], polygon[k - 1], polygon[k]});
                }
            }
        }
    }
    return mesh;
}

} // namespace bulletgpu
