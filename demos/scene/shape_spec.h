// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/scene/generator.h"

#include <random>
#include <vector>

namespace bulletgpu::demo {

/// Builds a collision shape from a shape object of a scene file ({"type": "box", "halfExtents":
/// [1, 1, 1]}, see scenes/README.md for every type); the context's content owns it, and OBJ
/// files are found relative to the context's scene directory.
btCollisionShape* readShape(const JsonReader& spec, GeneratorContext& context);

/// The "mass" of a generator or variant (default 1); 0 makes bodies static, negative is an error.
btScalar readMass(const JsonReader& params);

/// One kind of body a generator can place: a shape and a mass.
struct BodyVariant {
    btCollisionShape* shape; ///< Owned by the scene content.
    btScalar mass;           ///< 0 for static bodies.
};

/// The bodies a placement generator puts at its positions: either one "shape" with "mass"
/// (default 1), or a "variants" list of {"shape", "mass"} picked in turn ("pick": "cycle") or by
/// a generator seeded from the scene seed ("pick": "random", std::mt19937, value % count).
class BodyVariants {
public:
    /// Reads "shape"/"mass" or "variants"/"pick" from the generator's parameters.
    BodyVariants(const JsonReader& params, GeneratorContext& context);
    /// The variant for the body with this index (call with 0, 1, 2, ... in order).
    const BodyVariant& pick(int index);

private:
    std::vector<BodyVariant> m_variants;
    bool m_random = false;
    std::mt19937 m_randomEngine;
};

} // namespace bulletgpu::demo
