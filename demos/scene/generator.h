// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/scene/json_reader.h"
#include "demos/scene/scene_content.h"
#include "demos/scene/scene_world.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bulletgpu::demo {

/// What a generator needs besides its parameters.
struct GeneratorContext {
    SceneContent& content;           ///< Where the generator puts what it creates.
    const SceneLoadOptions& options; ///< The load options (scale).
    std::string sceneDirectory;      ///< Directory of the scene file (OBJ paths are relative to it).
    uint32_t seed;                   ///< The scene's seed mixed with the generator's index.

    /// A count scaled by options.scale (at least 1), for generators marked "scalable".
    int scaled(int count, bool scalable) const;
    /// The soft-body world info; fails on params when the scene is neither soft nor deformable.
    btSoftBodyWorldInfo& softInfo(const JsonReader& params) const;
};

/// The triangles of the OBJ file named by params "file" (relative to the scene file), scaled by
/// params "scale" (default [1, 1, 1]); an unreadable file fails on the "file" field.
TriMesh readObjParam(const JsonReader& params, const GeneratorContext& context);

/// Reads one entry of a scene file's "objects" list and creates its objects.
using Generator = void (*)(const JsonReader& params, GeneratorContext& context);

/// The generator for a type name, or nullptr when there is none.
Generator findGenerator(const std::string& type);
/// Every generator type name, sorted.
std::vector<std::string> generatorTypes();

/// A static, kinematic or plain-collision-object box (the ground).
void generateGroundBox(const JsonReader& params, GeneratorContext& context);
/// A static plane (btStaticPlaneShape, infinite AABB).
void generateGroundPlane(const JsonReader& params, GeneratorContext& context);
/// BenchmarkDemo's layered grids (tests 1, 4, 5, 6).
void generateStackedLayers(const JsonReader& params, GeneratorContext& context);
/// A plain grid filled row by row, layer by layer (the large scenes).
void generateGrid(const JsonReader& params, GeneratorContext& context);
/// BenchmarkDemo::createPyramid.
void generatePyramid(const JsonReader& params, GeneratorContext& context);
/// BenchmarkDemo::createWall.
void generateWall(const JsonReader& params, GeneratorContext& context);
/// BenchmarkDemo::createTowerCircle.
void generateTowerCircle(const JsonReader& params, GeneratorContext& context);
/// MultiThreadedDemo's stacks of triangular walls.
void generateBoxStacks(const JsonReader& params, GeneratorContext& context);
/// BenchmarkDemo test 3's rows of ragdolls.
void generateRagdolls(const JsonReader& params, GeneratorContext& context);
/// BenchmarkDemo's eight static landscape tiles.
void generateLandscape(const JsonReader& params, GeneratorContext& context);
/// A static triangle mesh read from an OBJ file.
void generateMesh(const JsonReader& params, GeneratorContext& context);
/// BenchmarkDemo test 8's Voronoi convex pack.
void generateVoronoiPack(const JsonReader& params, GeneratorContext& context);
/// BenchmarkDemo test 7's rays, cast after every step.
void generateRays(const JsonReader& params, GeneratorContext& context);
/// A field of kinematic boxes moving along fixed directions.
void generateMovingBoxField(const JsonReader& params, GeneratorContext& context);
/// SoftDemo's cloth patch.
void generateClothPatch(const JsonReader& params, GeneratorContext& context);
/// SoftDemo's Ctor_RbUpStack.
void generateRigidUpStack(const JsonReader& params, GeneratorContext& context);
/// SoftDemo's ropes.
void generateRopes(const JsonReader& params, GeneratorContext& context);
/// SoftDemo's rope attach.
void generateRopeAttach(const JsonReader& params, GeneratorContext& context);
/// SoftDemo's cloth attach.
void generateClothAttach(const JsonReader& params, GeneratorContext& context);
/// SoftDemo's collide (soft tori).
void generateSoftTori(const JsonReader& params, GeneratorContext& context);
/// A soft body from an OBJ file.
void generateSoftMesh(const JsonReader& params, GeneratorContext& context);
/// A cloth strip held at both short edges, one of them turning and closing in (the twist test).
void generateTwistedStrip(const JsonReader& params, GeneratorContext& context);
/// A cloth patch of Bullet's deformable world (DeformableSelfCollision's).
void generateDeformableCloth(const JsonReader& params, GeneratorContext& context);

} // namespace bulletgpu::demo
