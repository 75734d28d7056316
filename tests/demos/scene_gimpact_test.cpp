// SPDX-License-Identifier: Zlib
#include "demos/common/broadphase_factory.h"
#include "demos/scene/scene_world.h"

#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <bulletgpu/CollisionDispatcher.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace {

using bulletgpu::demo::SceneLoadOptions;
using bulletgpu::demo::SceneWorld;

const std::string cScenes = BULLETGPU_SCENES_DIR;
const std::string cFixtures = BULLETGPU_SCENE_FIXTURES_DIR;

std::unique_ptr<SceneWorld> loadWith(const std::string& path, const std::string& narrow, double scale = 1) {
    SceneLoadOptions options;
    options.narrow = narrow;
    options.scale = scale;
    return bulletgpu::demo::loadSceneFile(
        path,
        [](const btVector3& min, const btVector3& max, int maxProxies) {
            return bulletgpu::demo::makeBroadphase("dbvt", min, max, maxProxies);
        },
        options);
}

int gimpactTriangles(const btCollisionShape& shape) {
    const auto& mesh = static_cast<const btGImpactMeshShape&>(shape);
    int triangles = 0;
    for (int part = 0; part < mesh.getMeshPartCount(); ++part) triangles += mesh.getMeshPart(part)->getNumChildShapes();
    return triangles;
}

int contactCount(btDispatcher& dispatcher) {
    int contacts = 0;
    for (int i = 0; i < dispatcher.getNumManifolds(); ++i)
        contacts += dispatcher.getManifoldByIndexInternal(i)->getNumContacts();
    return contacts;
}

std::string loadError(const std::string& name, const std::string& text) {
    const std::filesystem::path path = std::filesystem::temp_directory_path() / ("bulletgpu_gimpact_test_" + name);
    std::ofstream(path) << text;
    std::string message = "no error";
    try {
        loadWith(path.string(), "");
    } catch (const std::runtime_error& error) {
        message = error.what();
    }
    std::filesystem::remove(path);
    return message;
}

} // namespace

TEST_CASE("the GImpact demo scene holds GImpact tori and bunnies on a static mesh", "[scene][gimpact]") {
    const std::unique_ptr<SceneWorld> scene = loadWith(cScenes + "/gimpact-demo.json", "");
    CHECK(scene->narrowPhase() == "bullet");
    CHECK(dynamic_cast<bulletgpu::CollisionDispatcher*>(&scene->dispatcher()) == nullptr);
    CHECK(scene->objectCount() == 8 + 8 + 8 + 4);
    int tori = 0;
    int bunnies = 0;
    const btCollisionObjectArray& objects = scene->world().getCollisionObjectArray();
    for (int i = 0; i < objects.size(); ++i) {
        const btCollisionShape& shape = *objects[i]->getCollisionShape();
        if (shape.getShapeType() != GIMPACT_SHAPE_PROXYTYPE) continue;
        const int triangles = gimpactTriangles(shape);
        tori += triangles == 600;
        bunnies += triangles == 902;
    }
    CHECK(tori == 8);
    CHECK(bunnies == 4);
}

TEST_CASE("the mesh piles: 256 meshes of 1,000 to 5,000 triangles, and 4,096 that scale", "[scene][gimpact]") {
    const std::unique_ptr<SceneWorld> pile = loadWith(cScenes + "/gimpact-pile-256.json", "");
    CHECK(pile->objectCount() == 8 + 256);
    const btCollisionObjectArray& objects = pile->world().getCollisionObjectArray();
    for (int i = 8; i < objects.size(); ++i) {
        REQUIRE(objects[i]->getCollisionShape()->getShapeType() == GIMPACT_SHAPE_PROXYTYPE);
        const int triangles = gimpactTriangles(*objects[i]->getCollisionShape());
        CHECK(triangles >= 1000);
        CHECK(triangles <= 5000);
    }
    const std::unique_ptr<SceneWorld> large = loadWith(cScenes + "/gimpact-pile-4096.json", "", 1.0 / 64);
    CHECK(large->objectCount() == 8 + 64);
    CHECK(large->narrowPhase() == "bulletgpu");
    CHECK(dynamic_cast<bulletgpu::CollisionDispatcher*>(&large->dispatcher()) != nullptr);
}

TEST_CASE("GImpact meshes rest on a static mesh alike with Bullet's and BulletGpu's narrow phase", "[scene][gimpact]") {
    const std::string fixture = cFixtures + "/scene_gimpact_fixture.json";
    std::vector<double> heights[2];
    const char* const narrows[2] = {"bullet", "bulletgpu-cpu"};
    for (int run = 0; run < 2; ++run) {
        INFO("narrow phase " << narrows[run]);
        const std::unique_ptr<SceneWorld> scene = loadWith(fixture, narrows[run]);
        CHECK(scene->narrowPhase() == narrows[run]);
        for (int step = 0; step < scene->defaultSteps(); ++step) scene->step();
        CHECK(contactCount(scene->dispatcher()) > 0);
        const btCollisionObjectArray& objects = scene->world().getCollisionObjectArray();
        for (int i = 1; i < objects.size(); ++i) {
            const double y = objects[i]->getWorldTransform().getOrigin().y();
            CHECK(y > 0.1); // above the ramp's floor at y = 0: nothing fell through
            CHECK(y < 1.0); // and it came down
            heights[run].push_back(y);
        }
    }
    REQUIRE(heights[0].size() == heights[1].size());
    for (size_t i = 0; i < heights[0].size(); ++i) CHECK(heights[1][i] == Approx(heights[0][i]).margin(0.1));
}

TEST_CASE("GImpact shapes and the narrow-phase option name the field on errors", "[scene][gimpact]") {
    const std::string head = R"({"name": "x", "description": "y", "world": {"bounds": {"min": [-9, -9, -9], )"
                             R"("max": [9, 9, 9]})";
    CHECK_THAT(loadError("narrow.json", head + R"(, "narrow": "gjk"}, "objects": []})"),
               Catch::Contains("world.narrow: unknown narrow phase 'gjk' (bullet, bulletgpu"));
    const std::string grid =
        R"(}, "objects": [{"type": "grid", "count": 1, "columns": 1, "rows": 1, "center": [0, 0, 0],
                                "spacing": [1, 1, 1], "shape": )";
    CHECK_THAT(loadError("both.json", head + grid + R"({"type": "gimpact_mesh", "file": "a.obj", "torus": {}}}]})"),
               Catch::Contains("objects[0].shape: expected exactly one of \"torus\" and \"file\""));
    CHECK_THAT(loadError("torus.json",
                         head + grid + R"({"type": "gimpact_mesh", "torus": {"majorRadius": 1, "minor": 1}}}]})"),
               Catch::Contains("objects[0].shape.torus.minorRadius: missing required field"));
    CHECK_THAT(loadError("segments.json", head + grid + R"({"type": "gimpact_mesh", "torus": {"majorRadius": 1,
                                          "minorRadius": 0.5, "minorSegments": 2}}}]})"),
               Catch::Contains("objects[0].shape.torus.minorSegments: expected at least 3 segments"));
    CHECK_THROWS_WITH(loadWith(cScenes + "/gimpact-demo.json", "gjk"), Catch::Contains("unknown narrow phase 'gjk'"));
}
