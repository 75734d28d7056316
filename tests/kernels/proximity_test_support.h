// SPDX-License-Identifier: Zlib
#pragma once

#include "kernels/reference/brute_force_proximity.h"
#include "tests/support/ply_mesh.h"
#include <bulletgpu/TriangleMeshSet.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

/// What the contact query's tests share: test meshes into the engine and the oracle, and
/// contact lists compared as exact sets.

namespace bulletgpu {

/// The oracle's view of a test mesh.
inline ProximityOracleMesh oracleOf(const PlyMesh& m, std::uint32_t index, const double* transform = nullptr) {
    return ProximityOracleMesh{m.positions.data(), static_cast<std::uint32_t>(m.positions.size() / 3),
                               m.indices.data(),   static_cast<std::uint32_t>(m.indices.size() / 3),
                               transform,          index};
}

/// Adds a test mesh to a set.
inline std::uint32_t addTo(TriangleMeshSet& set, const PlyMesh& m) {
    return set.addMesh(m.positions.data(), static_cast<std::uint32_t>(m.positions.size() / 3), m.indices.data(),
                       static_cast<std::uint32_t>(m.indices.size() / 3));
}

/// A readable line for a contact.
inline std::string describe(const ProximityContact& c) {
    std::ostringstream s;
    s << "mesh " << c.meshA << "/" << c.meshB << " kind " << c.kind << " features " << c.featureA << "/" << c.featureB
      << " distance " << c.distance;
    return s.str();
}

/// Equal as exact sets: the same records, bit for bit, in the same (sorted) order; reports the
/// first difference.
inline bool sameContacts(const std::vector<ProximityContact>& actual, const std::vector<ProximityContact>& expected) {
    const std::size_t common = std::min(actual.size(), expected.size());
    for (std::size_t i = 0; i < common; ++i) {
        if (std::memcmp(&actual[i], &expected[i], sizeof(ProximityContact)) != 0) {
            UNSCOPED_INFO("contact " << i << ": " << describe(actual[i]) << " vs expected " << describe(expected[i]));
            return false;
        }
    }
    if (actual.size() != expected.size()) {
        UNSCOPED_INFO(actual.size() << " contacts, expected " << expected.size() << "; first extra: "
                                    << describe(actual.size() > common ? actual[common] : expected[common]));
        return false;
    }
    return true;
}

} // namespace bulletgpu
