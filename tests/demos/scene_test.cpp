// SPDX-License-Identifier: Zlib
#include "demos/common/broadphase_factory.h"
#include "demos/scene/procedural_meshes.h"
#include "demos/scene/scene_world.h"

#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using bulletgpu::demo::SceneLoadOptions;
using bulletgpu::demo::SceneWorld;

const std::string cScenes = BULLETGPU_SCENES_DIR;
const std::string cFixtures = BULLETGPU_SCENE_FIXTURES_DIR;

bulletgpu::demo::BroadphaseFactory factoryFor(const std::string& name) {
    return [name](const btVector3& min, const btVector3& max, int maxProxies) {
        return bulletgpu::demo::makeBroadphase(name, min, max, maxProxies);
    };
}

std::unique_ptr<SceneWorld> load(const std::string& file, const std::string& broadphase = "dbvt", double scale = 1) {
    SceneLoadOptions options;
    options.scale = scale;
    return bulletgpu::demo::loadSceneFile(cScenes + "/" + file, factoryFor(broadphase), options);
}

std::vector<std::string> sceneFiles() {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(cScenes)) {
        if (entry.path().extension() == ".json") files.push_back(entry.path().filename().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

// A scale that keeps the scalable generators of a scene file to about 2,000 objects in all (the
// suite also runs under AddressSanitizer on two cores, and btSimpleBroadphase is quadratic).
double ciScale(const std::string& file) {
    const double scalable = bulletgpu::demo::scalableObjectCount(cScenes + "/" + file);
    return scalable > 2000 ? 2000 / scalable : 1.0;
}

std::vector<btVector3> positions(SceneWorld& scene) {
    std::vector<btVector3> result;
    const btCollisionObjectArray& objects = scene.world().getCollisionObjectArray();
    for (int i = 0; i < objects.size(); ++i) result.push_back(objects[i]->getWorldTransform().getOrigin());
    if (btSoftRigidDynamicsWorld* soft = scene.softWorld()) {
        for (int b = 0; b < soft->getSoftBodyArray().size(); ++b) {
            const btSoftBody* body = soft->getSoftBodyArray()[b];
            for (int n = 0; n < body->m_nodes.size(); ++n) result.push_back(body->m_nodes[n].m_x);
        }
    }
    return result;
}

// Writes text to a fresh file in the temporary directory and returns its path.
std::string writeTemp(const std::string& name, const std::string& text) {
    const std::filesystem::path path = std::filesystem::temp_directory_path() / ("bulletgpu_scene_test_" + name);
    std::ofstream(path) << text;
    return path.string();
}

std::string loadError(const std::string& path) {
    try {
        bulletgpu::demo::loadSceneFile(path, factoryFor("dbvt"));
    } catch (const std::runtime_error& error) {
        return error.what();
    }
    return "no error";
}

// Triangles of a btBvhTriangleMeshShape built by the scene loader (one indexed mesh).
int meshTriangles(const btCollisionShape& shape) {
    const btStridingMeshInterface* mesh = static_cast<const btBvhTriangleMeshShape&>(shape).getMeshInterface();
    return static_cast<const btTriangleIndexVertexArray*>(mesh)->getIndexedMeshArray()[0].m_numTriangles;
}

const char* const cMinimalWorld = R"("world": {"bounds": {"min": [-10, -10, -10], "max": [10, 10, 10]}})";

} // namespace

TEST_CASE("every scene file loads and steps on every CPU broadphase", "[scene]") {
    const std::vector<std::string> files = sceneFiles();
    REQUIRE(files.size() >= 25);
    for (const std::string& file : files) {
        for (const std::string& broadphase : bulletgpu::demo::cpuBroadphaseNames()) {
            DYNAMIC_SECTION(file << " on " << broadphase) {
                const std::unique_ptr<SceneWorld> scene = load(file, broadphase, ciScale(file));
                CHECK(!scene->name().empty());
                CHECK(!scene->description().empty());
                CHECK(scene->defaultSteps() > 0);
                CHECK(scene->objectCount() > 0);
                CHECK(scene->objectCount() <= 4100);
                for (int step = 0; step < 10; ++step) scene->step();
                CHECK(std::isfinite(scene->meanHeight()));
            }
        }
    }
}

TEST_CASE("scene files create the contract's object counts", "[scene]") {
    CHECK(load("benchmark-1-3000-boxes.json")->objectCount() == 3008 + 1);
    CHECK(load("benchmark-2-1000-stack.json")->objectCount() == 1076 + 1);
    const std::unique_ptr<SceneWorld> ragdolls = load("benchmark-3-ragdolls.json");
    CHECK(ragdolls->objectCount() == 1496 + 1);
    CHECK(ragdolls->world().getNumConstraints() == 1360);
    CHECK(load("benchmark-4-convex-stack.json")->objectCount() == 960 + 1);
    CHECK(load("benchmark-5-prim-vs-mesh.json")->objectCount() == 1000 + 8);
    CHECK(load("benchmark-6-convex-vs-mesh.json")->objectCount() == 1000 + 8);
    CHECK(load("benchmark-8-convex-pack.json")->objectCount() == 90 + 1);
    CHECK(load("multithreaded-stacks.json")->objectCount() == 960 + 1);
    CHECK(load("soft-cloth.json")->objectCount() == 1 + 1 + 10);
    CHECK(load("avril-260-mixed.json")->objectCount() == 260 + 1);
}

TEST_CASE("the raycast scene casts 500 rays after each step and they hit", "[scene]") {
    const std::unique_ptr<SceneWorld> scene = load("benchmark-7-raycast.json");
    CHECK(scene->lastRayHits() == 0);
    scene->step();
    CHECK(scene->lastRayHits() == 500);
    CHECK(load("benchmark-6-convex-vs-mesh.json")->lastRayHits() == 0);
}

TEST_CASE("procedural geometry has the counts of Bullet's data", "[scene]") {
    CHECK(bulletgpu::demo::taruHullPoints().size() == 43);
    const bulletgpu::demo::TriMesh torus = bulletgpu::demo::torusMesh(2, btScalar(0.5), 30, 10);
    CHECK(torus.vertexCount() == 300);
    CHECK(torus.triangleCount() == 600);
    const std::vector<int> expected{3906, 3770, 3906, 4032, 4290, 4420, 4284, 4160};
    const std::vector<bulletgpu::demo::TriMesh> tiles = bulletgpu::demo::landscapeTiles(500, 1);
    REQUIRE(tiles.size() == expected.size());
    int triangles = 0;
    int vertices = 0;
    for (size_t i = 0; i < tiles.size(); ++i) {
        CHECK(tiles[i].triangleCount() == expected[i]);
        triangles += tiles[i].triangleCount();
        vertices += tiles[i].vertexCount();
    }
    CHECK(triangles == 32768);
    CHECK(vertices == 17160);
}

TEST_CASE("scene worlds hold the contract's shapes and soft bodies", "[scene]") {
    SECTION("landscape tiles are BVH triangle meshes with 32,768 triangles") {
        const std::unique_ptr<SceneWorld> scene = load("benchmark-5-prim-vs-mesh.json");
        int triangles = 0;
        int tiles = 0;
        const btCollisionObjectArray& objects = scene->world().getCollisionObjectArray();
        for (int i = 0; i < objects.size(); ++i) {
            if (objects[i]->getCollisionShape()->getShapeType() != TRIANGLE_MESH_SHAPE_PROXYTYPE) continue;
            triangles += meshTriangles(*objects[i]->getCollisionShape());
            ++tiles;
        }
        CHECK(tiles == 8);
        CHECK(triangles == 32768);
    }
    SECTION("the convex stack uses a 43-vertex hull") {
        const std::unique_ptr<SceneWorld> scene = load("benchmark-4-convex-stack.json");
        const btCollisionShape* shape = scene->world().getCollisionObjectArray()[1]->getCollisionShape();
        REQUIRE(shape->getShapeType() == CONVEX_HULL_SHAPE_PROXYTYPE);
        CHECK(static_cast<const btConvexHullShape*>(shape)->getNumPoints() == 43);
    }
    SECTION("ropes: 15 ropes of 18 nodes") {
        const std::unique_ptr<SceneWorld> scene = load("soft-ropes.json");
        REQUIRE(scene->softWorld() != nullptr);
        const btSoftBodyArray& bodies = scene->softWorld()->getSoftBodyArray();
        REQUIRE(bodies.size() == 15);
        for (int i = 0; i < bodies.size(); ++i) CHECK(bodies[i]->m_nodes.size() == 18);
    }
    SECTION("collide: three tori of 300 nodes and 600 faces") {
        const std::unique_ptr<SceneWorld> scene = load("soft-collide-tori.json");
        const btSoftBodyArray& bodies = scene->softWorld()->getSoftBodyArray();
        REQUIRE(bodies.size() == 3);
        for (int i = 0; i < bodies.size(); ++i) {
            CHECK(bodies[i]->m_nodes.size() == 300);
            CHECK(bodies[i]->m_faces.size() == 600);
        }
    }
    SECTION("the convex pack's cells fill the 2 x 2 x 2 cube: masses add up to its volume") {
        const std::unique_ptr<SceneWorld> scene = load("benchmark-8-convex-pack.json");
        double mass = 0;
        const btCollisionObjectArray& objects = scene->world().getCollisionObjectArray();
        for (int i = 0; i < objects.size(); ++i) {
            const btRigidBody* body = btRigidBody::upcast(objects[i]);
            if (body != nullptr && body->getInvMass() > 0) mass += 1 / double(body->getInvMass());
        }
        CHECK(mass == Approx(8.0).epsilon(1e-3));
    }
}

TEST_CASE("only scalable generators scale", "[scene]") {
    CHECK(load("avril-20000-cubes.json", "dbvt", 0.01)->objectCount() == 200 + 1);
    CHECK(load("box-field-10m.json", "dbvt", 1e-4)->objectCount() == 1000);
    CHECK(load("avril-260-mixed.json", "dbvt", 1e-6)->objectCount() == 1 + 1);
    CHECK(load("benchmark-1-3000-boxes.json", "dbvt", 0.01)->objectCount() == 3009);
}

TEST_CASE("the moving box field moves kinematic boxes inside its walls", "[scene]") {
    const std::unique_ptr<SceneWorld> scene = load("box-field-100k.json", "bulletgpu-cpu", 0.01);
    const std::vector<btVector3> before = positions(*scene);
    for (int step = 0; step < 10; ++step) scene->step();
    const std::vector<btVector3> after = positions(*scene);
    REQUIRE(before.size() == after.size());
    const btScalar side = btScalar(std::cbrt(1000 / 0.25));
    size_t straight = 0;
    for (size_t i = 0; i < before.size(); ++i) {
        // 10 frames of 0.05: exactly 0.5 unless the box bounced off a wall on the way.
        CHECK(before[i].distance(after[i]) <= btScalar(0.5001));
        if (before[i].distance(after[i]) > btScalar(0.4999)) ++straight;
        for (int axis = 0; axis < 3; ++axis) CHECK(std::abs(after[i][axis]) <= side / 2);
    }
    CHECK(straight > before.size() * 8 / 10);
    CHECK(scene->meanHeight() == 0);
}

TEST_CASE("advance steps in real time with Bullet's fixed substeps and the scripts around each", "[scene]") {
    const std::unique_ptr<SceneWorld> scene = load("box-field-100k.json", "bulletgpu-cpu", 0.01);
    const double timeStep = 1.0 / 60.0;
    // The distance every box travelled, given that a straight substep moves it exactly 0.05.
    auto stepsTaken = [&](const std::vector<btVector3>& before) {
        const std::vector<btVector3> after = positions(*scene);
        std::vector<double> moved(before.size());
        for (size_t i = 0; i < before.size(); ++i) moved[i] = before[i].distance(after[i]);
        std::nth_element(moved.begin(), moved.begin() + long(moved.size() / 2), moved.end());
        return int(std::lround(moved[moved.size() / 2] / 0.05));
    };
    std::vector<btVector3> before = positions(*scene);
    scene->advance(0.4 * timeStep, 4);
    CHECK(stepsTaken(before) == 0);
    scene->advance(2.7 * timeStep, 4); // 3.1 steps have elapsed: three substeps
    CHECK(stepsTaken(before) == 3);
    before = positions(*scene);
    scene->advance(100 * timeStep, 4); // at most maxSubSteps; the rest of the time is dropped
    CHECK(stepsTaken(before) == 4);
    before = positions(*scene);
    scene->advance(0, 4);
    CHECK(stepsTaken(before) == 0);
}

TEST_CASE("a scene file's scalable object count is read without building it", "[scene]") {
    CHECK(bulletgpu::demo::scalableObjectCount(cScenes + "/box-field-10m.json") == 1e7);
    CHECK(bulletgpu::demo::scalableObjectCount(cScenes + "/benchmark-1-3000-boxes.json") == 0);
    CHECK_THROWS_WITH(bulletgpu::demo::scalableObjectCount(cScenes + "/missing.json"),
                      Catch::Contains("cannot open the file"));
}

TEST_CASE("OBJ meshes load relative to the scene file as static meshes and soft bodies", "[scene]") {
    const std::unique_ptr<SceneWorld> scene =
        bulletgpu::demo::loadSceneFile(cFixtures + "/scene_mesh_fixture.json", factoryFor("dbvt"));
    CHECK(scene->objectCount() == 3);
    const btCollisionShape* mesh = scene->world().getCollisionObjectArray()[1]->getCollisionShape();
    REQUIRE(mesh->getShapeType() == TRIANGLE_MESH_SHAPE_PROXYTYPE);
    CHECK(meshTriangles(*mesh) == 4);
    REQUIRE(scene->softWorld()->getSoftBodyArray().size() == 1);
    CHECK(scene->softWorld()->getSoftBodyArray()[0]->m_nodes.size() == 6);
    CHECK(scene->softWorld()->getSoftBodyArray()[0]->m_faces.size() == 4);
    for (int step = 0; step < 10; ++step) scene->step();
    CHECK(std::isfinite(scene->meanHeight()));
}

TEST_CASE("malformed scene files name the file and the field", "[scene]") {
    const std::string head = R"({"name": "x", "description": "y", )" + std::string(cMinimalWorld) + ", ";
    struct Case {
        const char* file;
        std::string text;
        const char* message;
    };
    const std::vector<Case> cases{
        {"syntax.json", R"({"name": "x", )", "invalid JSON"},
        {"missing.json", R"({"name": "x", "description": "y", "objects": []})", "world: missing required field"},
        {"type.json", head + R"("steps": "ten", "objects": []})", "steps: expected a positive integer, got \"ten\""},
        {"unknown_type.json",
         head + R"("objects": [{"type": "ground_plane"}, {"type": "pyramidd", "size": 3, "position": [0, 0, 0]}]})",
         "objects[1].type: unknown generator type 'pyramidd'"},
        {"count.json", head + R"("objects": [{"type": "grid", "count": -3, "columns": 2, "rows": 2, "center": [0, 0, 0],
                   "spacing": [1, 1, 1], "shape": {"type": "sphere", "radius": 1}}]})",
         "objects[0].count: expected a positive integer, got -3"},
        {"typo.json", head + R"("objects": [{"type": "ground_plane", "frcition": 1}]})",
         "objects[0].frcition: unknown field"},
        {"shape.json",
         head + R"("objects": [{"type": "pyramid", "size": 2, "position": [0, 0, 0], "halfExtents": [1, 1]}]})",
         "objects[0].halfExtents: expected an array of 3 numbers"},
        {"nested.json", head + R"("objects": [{"type": "grid", "count": 2, "columns": 2, "rows": 2, "center": [0, 0, 0],
                   "spacing": [1, 1, 1], "shape": {"type": "sphere", "radius": 0}}]})",
         "objects[0].shape.radius: expected a positive number, got 0"},
        {"obj.json", head + R"("objects": [{"type": "mesh", "file": "no_such_mesh.obj"}]})",
         "objects[0].file: cannot read OBJ file"},
        {"soft.json", head + R"("objects": [{"type": "ropes"}]})", "objects[0].type: soft-body generator"},
        {"soft_solver.json",
         R"({"name": "x", "description": "y", "world": {"type": "soft", "softSolver": "verlet",
            "bounds": {"min": [-1, -1, -1], "max": [1, 1, 1]}}, "objects": []})",
         "world.softSolver: unknown soft-body solver 'verlet'"},
        {"corners.json",
         R"({"name": "x", "description": "y", "world": {"type": "soft", "bounds": {"min": [-1, -1, -1], "max": [1, 1, 1]}},
            "objects": [{"type": "cloth_patch", "corners": [[0, 0, 0], [1, 0, 0], [0, 0, 1]]}]})",
         "objects[0].corners: expected 4 corners"},
        {"deformable.json",
         R"({"name": "x", "description": "y", "world": {"type": "soft", "bounds": {"min": [-1, -1, -1], "max": [1, 1, 1]}},
            "objects": [{"type": "deformable_cloth", "corners": [[0, 0, 0], [1, 0, 0], [0, 0, 1], [1, 0, 1]]}]})",
         "objects[0].type: deformable cloth in a scene whose world.type is not \"deformable\""},
        {"bounds.json",
         R"({"name": "x", "description": "y", "world": {"bounds": {"min": [0, 0, 0], "max": [0, 1, 1]}}, "objects": []})",
         "world.bounds: expected min < max"},
    };
    for (const Case& item : cases) {
        const std::string path = writeTemp(item.file, item.text);
        const std::string message = loadError(path);
        INFO(message);
        CHECK(message.rfind(path + ": ", 0) == 0);
        CHECK(message.find(item.message) != std::string::npos);
        std::filesystem::remove(path);
    }
    CHECK(loadError(cScenes + "/no-such-scene.json").find("cannot open") != std::string::npos);
}

TEST_CASE("loading a scene twice gives the same world after 10 steps", "[scene]") {
    for (const char* file : {"benchmark-1-3000-boxes.json", "benchmark-5-prim-vs-mesh.json", "soft-cloth.json",
                             "avril-260-mixed.json", "box-field-100k.json"}) {
        for (const char* broadphase : {"dbvt", "bulletgpu-cpu"}) {
            INFO(file << " on " << broadphase);
            const std::unique_ptr<SceneWorld> first = load(file, broadphase, ciScale(file) / 4);
            const std::unique_ptr<SceneWorld> second = load(file, broadphase, ciScale(file) / 4);
            for (int step = 0; step < 10; ++step) {
                first->step();
                second->step();
            }
            CHECK(positions(*first) == positions(*second));
        }
    }
}
