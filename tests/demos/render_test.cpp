// SPDX-License-Identifier: Zlib
// The software renderer and the chart writer: frames show the objects shaded, degenerate cameras
// and transforms draw nothing wrong, PNG files round-trip, charts show every series.
#include "demos/render/line_chart.h"
#include "demos/render/png_io.h"
#include "demos/render/world_renderer.h"

#include <BulletSoftBody/btSoftBodyHelpers.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#include <btBulletDynamicsCommon.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <unistd.h>

using namespace bulletgpu::demo;

namespace {

constexpr int kWidth = 320;
constexpr int kHeight = 180;

/// A collision world (no dynamics) that owns its shapes and objects.
class TestWorld {
public:
    TestWorld() = default;
    ~TestWorld() {
        for (const auto& object : m_objects) m_world.removeCollisionObject(object.get());
    }
    TestWorld(const TestWorld&) = delete;
    TestWorld& operator=(const TestWorld&) = delete;

    /// Adds an object of a shape (which the world then owns) at a position.
    btCollisionObject& add(btCollisionShape* shape, const btVector3& position, bool isStatic = false) {
        m_shapes.emplace_back(shape);
        m_objects.push_back(std::make_unique<btCollisionObject>());
        btCollisionObject& object = *m_objects.back();
        object.setCollisionShape(shape);
        object.getWorldTransform().setOrigin(position);
        if (isStatic) object.setCollisionFlags(btCollisionObject::CF_STATIC_OBJECT);
        m_world.addCollisionObject(&object);
        return object;
    }
    /// Keeps a triangle mesh alive as long as the world.
    btTriangleMesh& newTriangleMesh() {
        m_meshes.push_back(std::make_unique<btTriangleMesh>());
        return *m_meshes.back();
    }
    /// The world.
    btCollisionWorld& world() { return m_world; }

private:
    btDefaultCollisionConfiguration m_configuration;
    btCollisionDispatcher m_dispatcher{&m_configuration};
    btDbvtBroadphase m_broadphase;
    std::vector<std::unique_ptr<btTriangleMesh>> m_meshes;
    std::vector<std::unique_ptr<btCollisionShape>> m_shapes;
    std::vector<std::unique_ptr<btCollisionObject>> m_objects;
    btCollisionWorld m_world{&m_dispatcher, &m_broadphase, &m_configuration};
};

/// A 4 x 4 grid of bumpy triangles, 4 units across, around the origin.
btBvhTriangleMeshShape* makeTerrain(btTriangleMesh& mesh) {
    const auto at = [](int i, int j) { return btVector3(i - 2.0f, 0.4f * std::sin(1.3f * i + 0.7f * j), j - 2.0f); };
    for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) {
            mesh.addTriangle(at(i, j), at(i + 1, j), at(i + 1, j + 1));
            mesh.addTriangle(at(i, j), at(i + 1, j + 1), at(i, j + 1));
        }
    }
    return new btBvhTriangleMeshShape(&mesh, true);
}

/// An irregular convex hull about 2 units across.
btConvexHullShape* makeHull() {
    auto* hull = new btConvexHullShape();
    for (const btVector3& p : {btVector3(1, 0, 0), btVector3(-1, 0.2f, 0.3f), btVector3(0, 1.2f, 0),
                               btVector3(0, -1, 0.1f), btVector3(0.2f, 0, 1), btVector3(0, 0.1f, -1)}) {
        hull->addPoint(p, false);
    }
    hull->recalcLocalAabb();
    return hull;
}

/// Two boxes and a sphere.
btCompoundShape* makeCompound() {
    auto* compound = new btCompoundShape();
    btTransform child;
    child.setIdentity();
    child.setOrigin(btVector3(0, -0.5f, 0));
    compound->addChildShape(child, new btBoxShape(btVector3(0.8f, 0.3f, 0.8f)));
    child.setOrigin(btVector3(0, 0.5f, 0));
    child.setRotation(btQuaternion(btVector3(0, 1, 0), 0.6f));
    compound->addChildShape(child, new btSphereShape(0.5f));
    return compound;
}

/// Frees a compound's child shapes (btCompoundShape does not own them).
void deleteChildren(btCompoundShape& compound) {
    for (int i = compound.getNumChildShapes() - 1; i >= 0; --i) {
        btCollisionShape* child = compound.getChildShape(i);
        compound.removeChildShapeByIndex(i);
        delete child;
    }
}

/// A camera a little above the ground looking at the origin.
CameraSpec frontCamera() {
    CameraSpec camera;
    camera.eye = btVector3(2, 7, 16);
    camera.target = btVector3(0, 1, 0);
    return camera;
}

/// Number of pixels that differ between two images of one size.
int differingPixels(const Image& a, const Image& b) {
    int count = 0;
    for (int y = 0; y < a.height; ++y) {
        for (int x = 0; x < a.width; ++x) count += a.at(x, y) != b.at(x, y) ? 1 : 0;
    }
    return count;
}

/// Number of distinct colours in an image.
std::size_t distinctColours(const Image& image) {
    std::set<std::tuple<int, int, int>> colours;
    for (int y = 0; y < image.height; ++y) {
        for (int x = 0; x < image.width; ++x) {
            const Rgb c = image.at(x, y);
            colours.emplace(c.r, c.g, c.b);
        }
    }
    return colours.size();
}

/// Number of distinct colours among the pixels where an image differs from another.
std::size_t distinctChangedColours(const Image& image, const Image& before) {
    std::set<std::tuple<int, int, int>> colours;
    for (int y = 0; y < image.height; ++y) {
        for (int x = 0; x < image.width; ++x) {
            const Rgb c = image.at(x, y);
            if (c != before.at(x, y)) colours.emplace(c.r, c.g, c.b);
        }
    }
    return colours.size();
}

/// Whether an image has a pixel of exactly one colour.
bool containsColour(const Image& image, Rgb colour) {
    for (int y = 0; y < image.height; ++y) {
        for (int x = 0; x < image.width; ++x) {
            if (image.at(x, y) == colour) return true;
        }
    }
    return false;
}

/// A path in the temporary directory, unique to this test process.
std::string tempPath(const std::string& name) {
    return (std::filesystem::temp_directory_path() /
            ("bulletgpu_render_test_" + std::to_string(::getpid()) + "_" + name))
        .string();
}

/// The render of an empty world: the sky alone.
Image renderEmpty(const CameraSpec& camera) {
    TestWorld empty;
    WorldRenderer renderer(kWidth, kHeight);
    return renderer.render(empty.world(), camera);
}

} // namespace

TEST_CASE("Render: a world with every rigid shape type gives a shaded frame", "[render]") {
    TestWorld scene;
    scene.add(new btBoxShape(btVector3(250, 1, 250)), btVector3(0, -1, 0), true);
    scene.add(new btStaticPlaneShape(btVector3(0, 1, 0), -3), btVector3(0, 0, 0), true);
    scene.add(new btBoxShape(btVector3(1, 1, 1)), btVector3(-6, 1, 0));
    scene.add(new btSphereShape(1), btVector3(-3, 1, 0));
    scene.add(new btCapsuleShape(0.6f, 1.5f), btVector3(0, 1.4f, 0));
    scene.add(makeHull(), btVector3(3, 1, 0));
    btCollisionObject& compound = scene.add(makeCompound(), btVector3(6, 1, 0));
    scene.add(makeTerrain(scene.newTriangleMesh()), btVector3(0, 0.5f, 5), true);

    const CameraSpec camera = frontCamera();
    WorldRenderer renderer(kWidth, kHeight);
    const Image frame = renderer.render(scene.world(), camera);
    const Image sky = renderEmpty(camera);

    REQUIRE(frame.width == kWidth);
    REQUIRE(frame.height == kHeight);
    CHECK(distinctColours(frame) > 100);
    CHECK(differingPixels(frame, sky) > kWidth * kHeight / 3);
    // The camera looks at the capsule; the upper corners stay sky (beyond the ground's horizon).
    CHECK(frame.at(kWidth / 2, kHeight / 2) != sky.at(kWidth / 2, kHeight / 2));
    CHECK(frame.at(2, 2) == sky.at(2, 2));
    // A second frame reuses the buffers and is identical.
    CHECK(renderer.render(scene.world(), camera) == frame);

    deleteChildren(static_cast<btCompoundShape&>(*compound.getCollisionShape()));
}

TEST_CASE("Render: each shape type covers the image centre, shaded", "[render]") {
    const std::vector<std::pair<std::string, std::function<btCollisionShape*(TestWorld&)>>> shapes = {
        {"box", [](TestWorld&) { return new btBoxShape(btVector3(1, 1, 1)); }},
        {"sphere", [](TestWorld&) { return new btSphereShape(1); }},
        {"capsule x", [](TestWorld&) { return new btCapsuleShapeX(0.5f, 2); }},
        {"capsule z", [](TestWorld&) { return new btCapsuleShapeZ(0.5f, 2); }},
        {"cylinder", [](TestWorld&) { return new btCylinderShape(btVector3(1, 1, 1)); }},
        {"cylinder x", [](TestWorld&) { return new btCylinderShapeX(btVector3(1, 0.7f, 0.7f)); }},
        {"cone", [](TestWorld&) { return new btConeShape(1, 2); }},
        {"convex hull", [](TestWorld&) { return makeHull(); }},
        {"convex hull with polyhedron",
         [](TestWorld&) {
             btConvexHullShape* hull = makeHull();
             hull->initializePolyhedralFeatures();
             return hull;
         }},
        {"multi-sphere",
         [](TestWorld&) {
             const btVector3 centres[2] = {btVector3(-0.7f, 0, 0), btVector3(0.7f, 0, 0)};
             const btScalar radii[2] = {0.6f, 0.9f};
             return new btMultiSphereShape(centres, radii, 2);
         }},
        {"triangle mesh", [](TestWorld& world) { return makeTerrain(world.newTriangleMesh()); }},
        {"static plane", [](TestWorld&) { return new btStaticPlaneShape(btVector3(0, 1, 0), 0); }},
    };
    CameraSpec camera;
    camera.eye = btVector3(3, 4, 6);
    camera.target = btVector3(0, 0, 0);
    const Image sky = renderEmpty(camera);
    for (const auto& [name, make] : shapes) {
        INFO(name);
        TestWorld scene;
        scene.add(make(scene), btVector3(0, 0, 0));
        WorldRenderer renderer(kWidth, kHeight);
        const Image& frame = renderer.render(scene.world(), camera);
        CHECK(frame.at(kWidth / 2, kHeight / 2) != sky.at(kWidth / 2, kHeight / 2));
        CHECK(differingPixels(frame, sky) > kWidth * kHeight / 50);
        CHECK(distinctChangedColours(frame, sky) >= 3);
    }
}

TEST_CASE("Render: an empty world and objects behind the camera give only the sky", "[render]") {
    const CameraSpec camera = frontCamera();
    const Image sky = renderEmpty(camera);
    // The sky is a gradient: blue overhead, lighter towards the horizon.
    CHECK(sky.at(kWidth / 2, 0).b > sky.at(kWidth / 2, 0).r);
    CHECK(sky.at(kWidth / 2, 0) != sky.at(kWidth / 2, kHeight - 1));

    TestWorld behind;
    behind.add(new btBoxShape(btVector3(1, 1, 1)), camera.eye + (camera.eye - camera.target));
    behind.add(new btSphereShape(2), btVector3(0, 0, 40));
    WorldRenderer renderer(kWidth, kHeight);
    CHECK(renderer.render(behind.world(), camera) == sky);
}

TEST_CASE("Render: degenerate cameras and transforms draw what they can without crashing", "[render]") {
    TestWorld scene;
    scene.add(new btBoxShape(btVector3(250, 1, 250)), btVector3(0, -1, 0), true);
    scene.add(new btBoxShape(btVector3(2, 2, 2)), btVector3(0, 2, 0));
    btCollisionObject& broken = scene.add(new btSphereShape(1), btVector3(3, 1, 0));
    broken.getWorldTransform().setOrigin(btVector3(std::numeric_limits<btScalar>::quiet_NaN(), 0, 0));
    WorldRenderer renderer(kWidth, kHeight);

    SECTION("camera inside a box, close to the ground") {
        CameraSpec camera;
        camera.eye = btVector3(0.5f, 2, 0.5f);
        camera.target = btVector3(10, 0, 10);
        const Image& frame = renderer.render(scene.world(), camera);
        CHECK(frame.width == kWidth);
        // The ground crosses the near plane and still fills the lower half.
        CHECK(frame.at(kWidth / 2, kHeight - 1) != renderEmpty(camera).at(kWidth / 2, kHeight - 1));
    }
    SECTION("eye at the target, up along the view, or a non-finite camera") {
        CameraSpec same;
        same.eye = same.target = btVector3(0, 10, 0);
        CameraSpec straightDown;
        straightDown.eye = btVector3(0, 30, 0);
        CameraSpec broken;
        broken.eye = btVector3(std::numeric_limits<btScalar>::infinity(), 0, 0);
        CHECK(renderer.render(scene.world(), same).width == kWidth);
        const Image& down = renderer.render(scene.world(), straightDown);
        CHECK(down.at(kWidth / 2, kHeight / 2) != renderEmpty(straightDown).at(kWidth / 2, kHeight / 2));
        CHECK(renderer.render(scene.world(), broken).height == kHeight);
    }
}

TEST_CASE("Render: cloth and rope soft bodies are drawn", "[render][soft]") {
    btSoftBodyRigidBodyCollisionConfiguration configuration;
    btCollisionDispatcher dispatcher(&configuration);
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btSoftRigidDynamicsWorld world(&dispatcher, &broadphase, &solver, &configuration);
    btSoftBodyWorldInfo& info = world.getWorldInfo();
    info.m_broadphase = &broadphase;
    info.m_dispatcher = &dispatcher;
    info.m_sparsesdf.Initialize();
    std::unique_ptr<btSoftBody> cloth(btSoftBodyHelpers::CreatePatch(
        info, btVector3(-4, 0, -4), btVector3(4, 0, -4), btVector3(-4, 0, 4), btVector3(4, 0, 4), 9, 9, 0, true));
    std::unique_ptr<btSoftBody> rope(
        btSoftBodyHelpers::CreateRope(info, btVector3(-4, 3, 2), btVector3(4, 3, 2), 10, 0));

    CameraSpec camera;
    camera.eye = btVector3(0, 8, 12);
    const Image sky = renderEmpty(camera);
    WorldRenderer renderer(kWidth, kHeight);

    world.addSoftBody(cloth.get());
    const Image clothOnly = renderer.render(world, camera);
    CHECK(differingPixels(clothOnly, sky) > kWidth * kHeight / 10);
    CHECK(clothOnly.at(kWidth / 2, kHeight / 2) != sky.at(kWidth / 2, kHeight / 2));

    // Seen from below, the cloth shows its other side in another colour.
    CameraSpec below = camera;
    below.eye = btVector3(0, -8, 12);
    const Image underside = renderer.render(world, below);
    // Not only shaded differently: the colour's hue differs (its channels in other proportions).
    const auto proportions = [](const Rgb& pixel) {
        const double sum = std::max(1.0, double(pixel.r) + pixel.g + pixel.b);
        return std::array<double, 3>{pixel.r / sum, pixel.g / sum, pixel.b / sum};
    };
    const std::array<double, 3> top = proportions(clothOnly.at(kWidth / 2, kHeight / 2));
    const std::array<double, 3> under = proportions(underside.at(kWidth / 2, kHeight / 2));
    CHECK(std::max({std::abs(top[0] - under[0]), std::abs(top[1] - under[1]), std::abs(top[2] - under[2])}) > 0.1);

    world.addSoftBody(rope.get());
    const Image& both = renderer.render(world, camera);
    CHECK(differingPixels(both, clothOnly) > 100);

    world.removeSoftBody(rope.get());
    world.removeSoftBody(cloth.get());
}

TEST_CASE("PNG: a written frame reads back identical", "[render][png]") {
    TestWorld scene;
    scene.add(new btBoxShape(btVector3(250, 1, 250)), btVector3(0, -1, 0), true);
    scene.add(new btSphereShape(1), btVector3(0, 1, 0));
    WorldRenderer renderer(kWidth, kHeight);
    const Image& frame = renderer.render(scene.world(), frontCamera());
    const std::string path = tempPath("frame.png");
    writePng(path, frame);
    CHECK(readPng(path) == frame);
    std::filesystem::remove(path);
}

TEST_CASE("PNG: failures name the path", "[render][png]") {
    const std::string unwritable = "/nonexistent-bulletgpu-dir/frame.png";
    CHECK_THROWS_WITH(writePng(unwritable, Image(4, 4)), Catch::Contains(unwritable));
    const std::string missing = tempPath("missing.png");
    CHECK_THROWS_WITH(readPng(missing), Catch::Contains(missing));
    CHECK_THROWS_AS(writePng(tempPath("empty.png"), Image()), std::runtime_error);
}

TEST_CASE("Chart: both series appear in their colours in the written PNG", "[render][chart]") {
    std::vector<ChartSeries> series(2);
    series[0].label = "cpu broadphase";
    series[1].label = "gpu broadphase";
    for (int i = 0; i < 120; ++i) {
        series[0].values.push_back(3.0 + 0.02 * i);
        series[1].values.push_back(1.0 + 0.5 * std::sin(i * 0.1));
    }
    const Image chart = drawLineChart("Broadphase time", "step", "ms", series);
    CHECK(chart.width == 960);
    CHECK(chart.height == 540);
    const std::string path = tempPath("chart.png");
    writePng(path, chart);
    const Image read = readPng(path);
    std::filesystem::remove(path);
    CHECK(containsColour(read, seriesColour(0)));
    CHECK(containsColour(read, seriesColour(1)));
    CHECK(seriesColour(0) != seriesColour(1));
}

TEST_CASE("Chart: empty, single-point and non-finite series draw without crashing", "[render][chart]") {
    const Image empty = drawLineChart("Nothing yet", "step", "ms", {});
    CHECK(empty.width == 960);
    CHECK(distinctColours(empty) > 1);

    const Image single = drawLineChart("One point", "step", "ms", {{"only", {2.5}}}, 400, 300);
    CHECK(containsColour(single, seriesColour(0)));

    const double nan = std::numeric_limits<double>::quiet_NaN();
    const Image gaps = drawLineChart("Gaps", "x", "y", {{"a", {}}, {"b", {nan, -5, 1e300, nan, 0}}}, 200, 120);
    CHECK(gaps.height == 120);
    CHECK(drawLineChart("Tiny", "", "", {{"a", {1, 2}}}, 8, 8).width == 8);
}
