// SPDX-License-Identifier: Zlib
// BulletGpu's scene files as ExampleBrowser entries (Bullet's examples/ tree, built from source).
#include "BulletGpuExamples.h"

#include "demos/common/broadphase_factory.h"
#include "demos/scene/scene_world.h"

#include "CommonInterfaces/CommonExampleInterface.h"
#include "CommonInterfaces/CommonGUIHelperInterface.h"
#include "ExampleBrowser/ExampleEntries.h"

#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace {

/// A registered scene: the strings outlive the browser's entry table, which keeps pointers.
struct SceneEntry {
    std::string path;
    std::string name;
    std::string description;
};

std::vector<SceneEntry>& sceneEntries() {
    static std::vector<SceneEntry> entries;
    return entries;
}

/// One scene file shown in the browser: the browser's GUI helper draws the world.
class SceneExample final : public CommonExampleInterface {
public:
    SceneExample(GUIHelperInterface* guiHelper, const SceneEntry& entry) : m_guiHelper(guiHelper), m_entry(entry) {}

    void initPhysics() override {
        auto factory = [](const btVector3& worldMin, const btVector3& worldMax, int maxProxies) {
            return bulletgpu::demo::makeBroadphase("bulletgpu", worldMin, worldMax, maxProxies);
        };
        m_scene = bulletgpu::demo::loadSceneFile(m_entry.path, factory);
        m_guiHelper->setUpAxis(1);
        m_guiHelper->createPhysicsDebugDrawer(&m_scene->world());
        m_guiHelper->autogenerateGraphicsObjects(&m_scene->world());
    }

    void exitPhysics() override {
        m_guiHelper->removeAllGraphicsInstances();
        m_scene.reset();
    }

    void stepSimulation(float) override {
        if (m_scene) m_scene->step();
    }

    void renderScene() override {
        if (!m_scene) return;
        m_guiHelper->syncPhysicsToGraphics(&m_scene->world());
        m_guiHelper->render(&m_scene->world());
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
    GUIHelperInterface* m_guiHelper;
    const SceneEntry& m_entry;
    std::unique_ptr<bulletgpu::demo::SceneWorld> m_scene;
};

CommonExampleInterface* createSceneExample(CommonExampleOptions& options) {
    const std::vector<SceneEntry>& entries = sceneEntries();
    const std::size_t index = static_cast<std::size_t>(std::max(0, options.m_option));
    return new SceneExample(options.m_guiHelper, entries.at(std::min(index, entries.size() - 1)));
}

} // namespace

void registerBulletGpuExamples() {
    std::vector<SceneEntry>& entries = sceneEntries();
    if (!entries.empty()) return;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(BULLETGPU_SCENES_DIR)) {
        if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const std::filesystem::path& file : files) {
        entries.push_back({file.string(), file.stem().string(), "BulletGpu scene " + file.filename().string()});
    }
    ExampleEntriesAll::registerExampleEntry(0, "BulletGpu", nullptr, nullptr, 0);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        ExampleEntriesAll::registerExampleEntry(1, entries[i].name.c_str(), entries[i].description.c_str(),
                                                createSceneExample, static_cast<int>(i));
    }
}
