// SPDX-License-Identifier: Zlib
#pragma once

#include <LinearMath/btVector3.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace bulletgpu::demo {

/// Reads one JSON value of a scene file. Every error names the file and the field path
/// ("scenes/x.json: objects[2].count: expected a positive integer, got -3"). Objects track the
/// keys read from them so that done() can reject unknown keys (typos).
class JsonReader {
public:
    /// Reads the value at the given path of the given file.
    JsonReader(const nlohmann::json& value, std::string file, std::string path);

    /// The field path ("objects[2].count"); empty for the root.
    const std::string& path() const { return m_path; }
    /// The file the value comes from.
    const std::string& file() const { return m_file; }
    /// Throws std::runtime_error "file: path: message".
    [[noreturn]] void fail(const std::string& message) const;

    /// Whether this object has the key (marks it as read).
    bool has(const std::string& key) const;
    /// The member with this key; throws when it is missing.
    JsonReader at(const std::string& key) const;
    /// The elements of this array; throws when it is not an array.
    std::vector<JsonReader> elements() const;
    /// Throws on the first key of this object that was never read.
    void done() const;

    /// This value as a finite number.
    double number() const;
    /// This value as a positive integer.
    int positiveInt() const;
    /// This value as a non-negative integer.
    int64_t nonNegativeInt() const;
    /// This value as a string.
    std::string string() const;
    /// This value as a boolean.
    bool boolean() const;
    /// This value as an array of three numbers.
    btVector3 vec3() const;
    /// This value as a positive number.
    double positiveNumber() const;

    /// The member as a number, or the default when it is absent.
    double number(const std::string& key, double fallback) const;
    /// The member as a positive number, or the default when it is absent.
    double positiveNumber(const std::string& key, double fallback) const;
    /// The member as a positive integer, or the default when it is absent.
    int positiveInt(const std::string& key, int fallback) const;
    /// The member as a boolean, or the default when it is absent.
    bool boolean(const std::string& key, bool fallback) const;
    /// The member as a vector, or the default when it is absent.
    btVector3 vec3(const std::string& key, const btVector3& fallback) const;
    /// The member as a string, or the default when it is absent.
    std::string string(const std::string& key, const std::string& fallback) const;

private:
    bool isObject() const;
    std::string describe() const;

    const nlohmann::json* m_value;
    std::string m_file;
    std::string m_path;
    std::shared_ptr<std::set<std::string>> m_readKeys;
};

} // namespace bulletgpu::demo
