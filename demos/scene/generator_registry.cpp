// SPDX-License-Identifier: Zlib
#include "demos/scene/generator.h"

#include <cmath>
#include <limits>
#include <map>

namespace bulletgpu::demo {

namespace {

const std::map<std::string, Generator>& registry() {
    static const std::map<std::string, Generator> generators{
        {"ground_box", generateGroundBox},
        {"ground_plane", generateGroundPlane},
        {"stacked_layers", generateStackedLayers},
        {"grid", generateGrid},
        {"pyramid", generatePyramid},
        {"wall", generateWall},
        {"tower_circle", generateTowerCircle},
        {"box_stacks", generateBoxStacks},
        {"ragdolls", generateRagdolls},
        {"landscape", generateLandscape},
        {"mesh", generateMesh},
        {"voronoi_pack", generateVoronoiPack},
        {"rays", generateRays},
        {"moving_box_field", generateMovingBoxField},
        {"cloth_patch", generateClothPatch},
        {"deformable_cloth", generateDeformableCloth},
        {"rigid_up_stack", generateRigidUpStack},
        {"ropes", generateRopes},
        {"rope_attach", generateRopeAttach},
        {"cloth_attach", generateClothAttach},
        {"soft_tori", generateSoftTori},
        {"soft_mesh", generateSoftMesh},
        {"twisted_strip", generateTwistedStrip},
    };
    return generators;
}

} // namespace

int GeneratorContext::scaled(int count, bool scalable) const {
    if (!scalable) return count;
    const double value = std::round(double(count) * options.scale);
    if (value < 1) return 1;
    return value > double(std::numeric_limits<int>::max()) ? std::numeric_limits<int>::max() : static_cast<int>(value);
}

btSoftBodyWorldInfo& GeneratorContext::softInfo(const JsonReader& params) const {
    if (content.softWorldInfo() == nullptr)
        params.at("type").fail(
            "soft-body generator in a scene whose world.type is neither \"soft\" nor \"deformable\"");
    return *content.softWorldInfo();
}

Generator findGenerator(const std::string& type) {
    const auto found = registry().find(type);
    return found == registry().end() ? nullptr : found->second;
}

std::vector<std::string> generatorTypes() {
    std::vector<std::string> names;
    for (const auto& entry : registry()) names.push_back(entry.first);
    return names;
}

} // namespace bulletgpu::demo
