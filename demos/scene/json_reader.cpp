// SPDX-License-Identifier: Zlib
#include "demos/scene/json_reader.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace bulletgpu::demo {

JsonReader::JsonReader(const nlohmann::json& value, std::string file, std::string path)
    : m_value(&value), m_file(std::move(file)), m_path(std::move(path)),
      m_readKeys(std::make_shared<std::set<std::string>>()) {}

void JsonReader::fail(const std::string& message) const {
    throw std::runtime_error(m_file + ": " + (m_path.empty() ? std::string("(root)") : m_path) + ": " + message);
}

std::string JsonReader::describe() const {
    std::string text = m_value->dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return text;
}

bool JsonReader::isObject() const { return m_value->is_object(); }

bool JsonReader::has(const std::string& key) const {
    if (!isObject()) fail("expected an object, got " + describe());
    if (!m_value->contains(key)) return false;
    m_readKeys->insert(key);
    return true;
}

JsonReader JsonReader::at(const std::string& key) const {
    const std::string childPath = m_path.empty() ? key : m_path + "." + key;
    if (!has(key)) JsonReader(*m_value, m_file, childPath).fail("missing required field");
    return JsonReader((*m_value)[key], m_file, childPath);
}

std::vector<JsonReader> JsonReader::elements() const {
    if (!m_value->is_array()) fail("expected an array, got " + describe());
    std::vector<JsonReader> items;
    for (size_t i = 0; i < m_value->size(); ++i) {
        items.emplace_back((*m_value)[i], m_file, m_path + "[" + std::to_string(i) + "]");
    }
    return items;
}

void JsonReader::done() const {
    if (!isObject()) return;
    for (const auto& item : m_value->items()) {
        if (m_readKeys->count(item.key()) == 0) {
            const std::string childPath = m_path.empty() ? item.key() : m_path + "." + item.key();
            JsonReader(item.value(), m_file, childPath).fail("unknown field");
        }
    }
}

double JsonReader::number() const {
    if (!m_value->is_number()) fail("expected a number, got " + describe());
    const double value = m_value->get<double>();
    if (!std::isfinite(value)) fail("expected a finite number, got " + describe());
    return value;
}

double JsonReader::positiveNumber() const {
    const double value = m_value->is_number() ? m_value->get<double>() : 0.0;
    if (!m_value->is_number() || !(value > 0) || !std::isfinite(value)) {
        fail("expected a positive number, got " + describe());
    }
    return value;
}

int JsonReader::positiveInt() const {
    if (!m_value->is_number_integer() || m_value->get<int64_t>() <= 0 ||
        m_value->get<int64_t>() > std::numeric_limits<int>::max()) {
        fail("expected a positive integer, got " + describe());
    }
    return m_value->get<int>();
}

int64_t JsonReader::nonNegativeInt() const {
    if (!m_value->is_number_integer() || m_value->get<int64_t>() < 0) {
        fail("expected a non-negative integer, got " + describe());
    }
    return m_value->get<int64_t>();
}

std::string JsonReader::string() const {
    if (!m_value->is_string()) fail("expected a string, got " + describe());
    return m_value->get<std::string>();
}

bool JsonReader::boolean() const {
    if (!m_value->is_boolean()) fail("expected true or false, got " + describe());
    return m_value->get<bool>();
}

btVector3 JsonReader::vec3() const {
    if (!m_value->is_array() || m_value->size() != 3) fail("expected an array of 3 numbers, got " + describe());
    const std::vector<JsonReader> items = elements();
    return btVector3(btScalar(items[0].number()), btScalar(items[1].number()), btScalar(items[2].number()));
}

double JsonReader::number(const std::string& key, double fallback) const {
    return has(key) ? at(key).number() : fallback;
}

double JsonReader::positiveNumber(const std::string& key, double fallback) const {
    return has(key) ? at(key).positiveNumber() : fallback;
}

int JsonReader::positiveInt(const std::string& key, int fallback) const {
    return has(key) ? at(key).positiveInt() : fallback;
}

bool JsonReader::boolean(const std::string& key, bool fallback) const {
    return has(key) ? at(key).boolean() : fallback;
}

btVector3 JsonReader::vec3(const std::string& key, const btVector3& fallback) const {
    return has(key) ? at(key).vec3() : fallback;
}

std::string JsonReader::string(const std::string& key, const std::string& fallback) const {
    return has(key) ? at(key).string() : fallback;
}

} // namespace bulletgpu::demo
