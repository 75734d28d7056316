// SPDX-License-Identifier: Zlib
// BulletGpu's scene files as ExampleBrowser entries (Bullet's examples/ tree, built from source).
#include "BulletGpuExamples.h"

#include "demos/common/broadphase_factory.h"
#include "demos/scene/scene_world.h"

#include "CommonInterfaces/CommonExampleInterface.h"
#include "CommonInterfaces/CommonGUIHelperInterface.h"
#include "CommonInterfaces/CommonGraphicsAppInterface.h"
#include "CommonInterfaces/CommonRenderInterface.h"
#include "CommonInterfaces/CommonWindowInterface.h"
#include "ExampleBrowser/ExampleEntries.h"

#include <BulletCollision/CollisionShapes/btConcaveShape.h>
#include <BulletCollision/CollisionShapes/btTriangleCallback.h>
#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace {

/// The browser's instance buffer holds 128 * 1024 objects by default (max_num_object_capacity);
/// larger scenes are loaded scaled down to this many, or drawn in part.
constexpr int cMaxDrawnObjects = 100000;
/// Where the note on a scaled or partly drawn scene goes: right of the browser's explorer panel.
constexpr int cNoteLeft = 260;
constexpr int cNoteTop = 30;
constexpr float cNoteSize = 0.4f;
/// The longest frame the browser reports (it clamps its frame time to 0.1 s).
constexpr double cLongestFrameSeconds = 0.1;

/// A registered scene: the strings outlive the browser's entry table, which keeps pointers.
struct SceneEntry {
    std::string path;
    std::string name;
    std::string description;
    double scale = 1.0;
    /// Drawn on screen when the browser shows less than the scene file (empty otherwise).
    std::string note;
};

std::vector<SceneEntry>& sceneEntries() {
    static std::vector<SceneEntry> entries;
    return entries;
}

/// What setBulletGpuExampleSmokeRun asked for (nothing while reportAfterSeconds < 0).
struct SmokeRun {
    double reportAfterSeconds = -1;
    double lingerSeconds = 0;
};

SmokeRun& smokeRun() {
    static SmokeRun run;
    return run;
}

/// The folder of scene files: BULLETGPU_SCENES_DIR, else the installed one, else the source tree's.
std::filesystem::path scenesDirectory() {
    std::vector<std::filesystem::path> candidates;
    if (const char* fromEnvironment = std::getenv("BULLETGPU_SCENES_DIR")) candidates.emplace_back(fromEnvironment);
    candidates.emplace_back(BULLETGPU_INSTALLED_SCENES_DIR);
    candidates.emplace_back(BULLETGPU_SOURCE_SCENES_DIR);
    for (const std::filesystem::path& candidate : candidates) {
        std::error_code error;
        if (std::filesystem::is_directory(candidate, error)) return candidate;
    }
    return {};
}

std::string withThousands(long long value) {
    std::string digits = std::to_string(value);
    for (int at = int(digits.size()) - 3; at > 0; at -= 3) digits.insert(std::size_t(at), ",");
    return digits;
}

/// A concave shape's triangles as the browser's vertices (x, y, z, w, normal, u, v), flat-shaded:
/// three vertices of their own per triangle.
class TriangleCollector final : public btTriangleCallback {
public:
    std::vector<float> vertices; ///< Nine floats per vertex.
    std::vector<int> indices;    ///< Three per triangle.

    void processTriangle(btVector3* triangle, int, int) override {
        btVector3 normal = (triangle[1] - triangle[0]).cross(triangle[2] - triangle[0]);
        if (normal.length2() > 0) normal.normalize();
        for (int corner = 0; corner < 3; ++corner) {
            indices.push_back(static_cast<int>(vertices.size() / 9));
            const btVector3& p = triangle[corner];
            vertices.insert(vertices.end(), {float(p.x()), float(p.y()), float(p.z()), 1.0f, float(normal.x()),
                                             float(normal.y()), float(normal.z()), 0.5f, 0.5f});
        }
    }
};

/// Bullet's GUI helper draws no GImpact shape: gives each one a graphics shape of its triangles
/// (its user index), so that the helper only adds the instances.
void registerGImpactGraphics(GUIHelperInterface& helper, btCollisionWorld& world) {
    const btVector3 everywhere(BT_LARGE_FLOAT, BT_LARGE_FLOAT, BT_LARGE_FLOAT);
    for (int i = 0; i < world.getNumCollisionObjects(); ++i) {
        btCollisionShape* shape = world.getCollisionObjectArray()[i]->getCollisionShape();
        if (shape->getShapeType() != GIMPACT_SHAPE_PROXYTYPE || shape->getUserIndex() >= 0) continue;
        TriangleCollector collector;
        static_cast<btConcaveShape*>(shape)->processAllTriangles(&collector, -everywhere, everywhere);
        if (collector.indices.empty()) continue;
        shape->setUserIndex(helper.registerGraphicsShape(
            collector.vertices.data(), static_cast<int>(collector.vertices.size() / 9), collector.indices.data(),
            static_cast<int>(collector.indices.size()), B3_GL_TRIANGLES, -1));
    }
}

/// One scene file shown in the browser: the browser's GUI helper draws the world (GImpact meshes
/// from graphics shapes given beforehand), ropes (soft bodies without faces, which the helper does
/// not draw) are drawn as lines, and the scene steps
/// in real time with Bullet's fixed substeps.
class SceneExample final : public CommonExampleInterface {
public:
    SceneExample(GUIHelperInterface* guiHelper, const SceneEntry& entry) : m_guiHelper(guiHelper), m_entry(entry) {}

    void initPhysics() override {
        auto factory = [](const btVector3& worldMin, const btVector3& worldMax, int maxProxies) {
            return bulletgpu::demo::makeBroadphase("bulletgpu", worldMin, worldMax, maxProxies);
        };
        bulletgpu::demo::SceneLoadOptions options;
        options.scale = m_entry.scale;
        m_scene = bulletgpu::demo::loadSceneFile(m_entry.path, factory, options);
        m_note = m_entry.note;
        const double frameSteps = cLongestFrameSeconds / m_scene->timeStep();
        m_maxSubSteps = std::max(1, int(std::ceil(frameSteps)) + 1);
        m_guiHelper->setUpAxis(1);
        m_guiHelper->createPhysicsDebugDrawer(&m_scene->world());
        createGraphics();
        m_started = std::chrono::steady_clock::now();
        m_heightAtStart = m_scene->meanHeight();
    }

    void exitPhysics() override {
        m_guiHelper->removeAllGraphicsInstances();
        m_scene.reset();
    }

    void stepSimulation(float deltaTime) override {
        if (m_scene) m_substeps += m_scene->advance(deltaTime, m_maxSubSteps);
    }

    void renderScene() override {
        if (!m_scene) return;
        m_guiHelper->syncPhysicsToGraphics(&m_scene->world());
        m_guiHelper->render(&m_scene->world());
        drawRopes();
        CommonGraphicsApp* app = m_guiHelper->getAppInterface();
        if (app != nullptr && !m_note.empty()) app->drawText(m_note.c_str(), cNoteLeft, cNoteTop, cNoteSize);
        if (app != nullptr) continueSmokeRun(*app);
    }

    void physicsDebugDraw(int debugFlags) override {
        if (!m_scene || m_scene->world().getDebugDrawer() == nullptr) return;
        m_scene->world().getDebugDrawer()->setDebugMode(debugFlags);
        m_scene->world().debugDrawWorld();
    }

    void resetCamera() override {
        if (!m_scene) return;
        const bulletgpu::demo::CameraSpec& camera = m_scene->camera();
        const btVector3 offset = camera.eye - camera.target;
        const float distance = static_cast<float>(offset.length());
        const float yaw = static_cast<float>(std::atan2(offset.x(), offset.z()) * 180.0 / SIMD_PI);
        const float pitch =
            -static_cast<float>(std::asin(offset.y() / std::max(btScalar(1e-6), offset.length())) * 180.0 / SIMD_PI);
        m_guiHelper->resetCamera(distance, yaw, pitch, static_cast<float>(camera.target.x()),
                                 static_cast<float>(camera.target.y()), static_cast<float>(camera.target.z()));
    }

    bool mouseMoveCallback(float, float) override { return false; }
    bool mouseButtonCallback(int, int, float, float) override { return false; }
    bool keyboardCallback(int, int) override { return false; }

private:
    /// All objects through the helper's own path when they fit the browser's instance buffer;
    /// otherwise the first cMaxDrawnObjects, with a note on screen.
    void createGraphics() {
        btDiscreteDynamicsWorld& world = m_scene->world();
        registerGImpactGraphics(*m_guiHelper, world);
        const int objects = world.getNumCollisionObjects();
        if (objects <= cMaxDrawnObjects) {
            m_guiHelper->autogenerateGraphicsObjects(&world);
            return;
        }
        for (int i = 0; i < cMaxDrawnObjects; ++i) {
            btCollisionObject* object = world.getCollisionObjectArray()[i];
            if (btSoftBody::upcast(object) != nullptr) continue;
            m_guiHelper->createCollisionShapeGraphicsObject(object->getCollisionShape());
            m_guiHelper->createCollisionObjectGraphicsObject(object, btVector3(0.6f, 0.7f, 0.9f));
        }
        if (!m_note.empty()) m_note += "; ";
        m_note += "drawn: the first " + withThousands(cMaxDrawnObjects) + " of " + withThousands(objects) + " objects";
    }

    void drawRopes() {
        btSoftRigidDynamicsWorld* softWorld = m_scene->softWorld();
        CommonRenderInterface* renderer = m_guiHelper->getRenderInterface();
        if (softWorld == nullptr || renderer == nullptr) return;
        static const float cRopeColor[4] = {0.9f, 0.3f, 0.1f, 1.0f};
        for (int b = 0; b < softWorld->getSoftBodyArray().size(); ++b) {
            const btSoftBody& body = *softWorld->getSoftBodyArray()[b];
            if (body.m_faces.size() > 0 || body.m_links.size() == 0) continue;
            m_linePoints.resize(std::size_t(body.m_nodes.size()) * 4);
            for (int n = 0; n < body.m_nodes.size(); ++n) {
                for (int axis = 0; axis < 3; ++axis)
                    m_linePoints[std::size_t(n) * 4 + axis] = float(body.m_nodes[n].m_x[axis]);
                m_linePoints[std::size_t(n) * 4 + 3] = 1.0f;
            }
            m_lineIndices.resize(std::size_t(body.m_links.size()) * 2);
            for (int l = 0; l < body.m_links.size(); ++l) {
                m_lineIndices[std::size_t(l) * 2] = unsigned(body.m_links[l].m_n[0] - &body.m_nodes[0]);
                m_lineIndices[std::size_t(l) * 2 + 1] = unsigned(body.m_links[l].m_n[1] - &body.m_nodes[0]);
            }
            renderer->drawLines(m_linePoints.data(), cRopeColor, body.m_nodes.size(), int(4 * sizeof(float)),
                                m_lineIndices.data(), int(m_lineIndices.size()), 3.0f);
        }
    }

    /// With a smoke run asked for: report once the entry has run long enough and stepped, exit
    /// after the linger.
    void continueSmokeRun(CommonGraphicsApp& app) {
        const SmokeRun& run = smokeRun();
        if (run.reportAfterSeconds < 0) return;
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
        if (m_smokeReportedAt < 0 && elapsed >= run.reportAfterSeconds && m_substeps > 0) {
            m_smokeReportedAt = elapsed;
            std::printf("bulletgpu-example: %s: %d objects, %ld substeps (%.2f s simulated) in %.2f s, mean height "
                        "%.3f -> %.3f\n",
                        m_entry.name.c_str(), m_scene->objectCount(), m_substeps,
                        double(m_substeps) * m_scene->timeStep(), elapsed, m_heightAtStart, m_scene->meanHeight());
            std::fflush(stdout);
        }
        if (m_smokeReportedAt >= 0 && elapsed >= m_smokeReportedAt + run.lingerSeconds && app.m_window != nullptr) {
            app.m_window->setRequestExit();
        }
    }

    GUIHelperInterface* m_guiHelper;
    const SceneEntry& m_entry;
    std::unique_ptr<bulletgpu::demo::SceneWorld> m_scene;
    std::string m_note;
    int m_maxSubSteps = 1;
    long m_substeps = 0;
    std::chrono::steady_clock::time_point m_started;
    double m_heightAtStart = 0;
    double m_smokeReportedAt = -1; ///< Seconds after the start at which the smoke run reported.
    std::vector<float> m_linePoints;
    std::vector<unsigned> m_lineIndices;
};

CommonExampleInterface* createSceneExample(CommonExampleOptions& options) {
    const std::vector<SceneEntry>& entries = sceneEntries();
    const std::size_t index = static_cast<std::size_t>(std::max(0, options.m_option));
    return new SceneExample(options.m_guiHelper, entries.at(std::min(index, entries.size() - 1)));
}

/// A scene whose scalable generators make more objects than the browser draws is loaded scaled
/// down to cMaxDrawnObjects of them, and says so on screen.
SceneEntry entryFor(const std::filesystem::path& file) {
    SceneEntry entry;
    entry.path = file.string();
    entry.name = file.stem().string();
    entry.description = "BulletGpu scene " + file.filename().string();
    const double scalable = bulletgpu::demo::scalableObjectCount(entry.path);
    if (scalable > cMaxDrawnObjects) {
        entry.scale = cMaxDrawnObjects / scalable;
        entry.note = "shown at " + withThousands(cMaxDrawnObjects) + " of the file's " +
                     withThousands(std::llround(scalable)) + " objects: the browser draws at most " +
                     withThousands(128 * 1024);
    }
    return entry;
}

} // namespace

void registerBulletGpuExamples() {
    std::vector<SceneEntry>& entries = sceneEntries();
    if (!entries.empty()) return;
    const std::filesystem::path directory = scenesDirectory();
    if (directory.empty()) {
        std::fprintf(stderr, "bulletgpu-example: no scenes folder (set BULLETGPU_SCENES_DIR); no BulletGpu entries\n");
        return;
    }
    std::vector<std::filesystem::path> files;
    for (const auto& file : std::filesystem::directory_iterator(directory)) {
        if (file.path().extension() == ".json") files.push_back(file.path());
    }
    std::sort(files.begin(), files.end());
    for (const std::filesystem::path& file : files) {
        try {
            entries.push_back(entryFor(file));
        } catch (const std::exception& error) {
            std::fprintf(stderr, "bulletgpu-example: skipping %s\n", error.what());
        }
    }
    ExampleEntriesAll::registerExampleEntry(0, "BulletGpu", nullptr, nullptr, 0);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        ExampleEntriesAll::registerExampleEntry(1, entries[i].name.c_str(), entries[i].description.c_str(),
                                                createSceneExample, static_cast<int>(i));
    }
}

void setBulletGpuExampleSmokeRun(double reportAfterSeconds, double lingerSeconds) {
    smokeRun().reportAfterSeconds = reportAfterSeconds;
    smokeRun().lingerSeconds = lingerSeconds;
}
