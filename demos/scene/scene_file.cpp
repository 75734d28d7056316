// SPDX-License-Identifier: Zlib
#include "demos/common/deformable_world_factory.h"
#include "demos/common/narrow_factory.h"
#include "demos/common/soft_solver_factory.h"
#include "demos/scene/generator.h"
#include "demos/scene/json_reader.h"
#include "demos/scene/scene_content.h"
#include "demos/scene/scene_world.h"

#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletSoftBody/btDeformableBodySolver.h>
#include <BulletSoftBody/btDeformableMultiBodyDynamicsWorld.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>

#include <fstream>
#include <stdexcept>

namespace bulletgpu::demo {

namespace {

// The "world" object of a scene file.
struct WorldSettings {
    bool soft = false;       // "type": "soft": btSoftRigidDynamicsWorld
    bool deformable = false; // "type": "deformable": btDeformableMultiBodyDynamicsWorld
    std::string narrow = "bullet";
    std::string softSolver = "bullet";
    btVector3 gravity{0, -10, 0};
    btScalar timeStep = btScalar(1) / btScalar(60);
    int maxSubSteps = 1;
    btVector3 boundsMin;
    btVector3 boundsMax;
};

int readSolverMode(const JsonReader& modes) {
    static const std::pair<const char*, int> names[] = {
        {"simd", SOLVER_SIMD},
        {"warmstarting", SOLVER_USE_WARMSTARTING},
        {"frictionDirectionCaching", SOLVER_ENABLE_FRICTION_DIRECTION_CACHING},
        {"randomizeOrder", SOLVER_RANDMIZE_ORDER},
        {"interleaveContactAndFriction", SOLVER_INTERLEAVE_CONTACT_AND_FRICTION_CONSTRAINTS},
        {"twoFrictionDirections", SOLVER_USE_2_FRICTION_DIRECTIONS},
    };
    int mode = 0;
    for (const JsonReader& flag : modes.elements()) {
        const std::string name = flag.string();
        bool found = false;
        for (const auto& [known, bit] : names) {
            if (name == known) {
                mode |= bit;
                found = true;
            }
        }
        if (!found) {
            flag.fail("unknown solver mode '" + name +
                      "' (simd, warmstarting, frictionDirectionCaching, randomizeOrder, "
                      "interleaveContactAndFriction, twoFrictionDirections)");
        }
    }
    return mode;
}

CameraSpec readCamera(const JsonReader& root) {
    CameraSpec camera;
    if (!root.has("camera")) return camera;
    const JsonReader spec = root.at("camera");
    camera.eye = spec.vec3("eye", camera.eye);
    camera.target = spec.vec3("target", camera.target);
    camera.up = spec.vec3("up", camera.up);
    camera.fieldOfViewYDegrees = spec.positiveNumber("fovY", camera.fieldOfViewYDegrees);
    spec.done();
    return camera;
}

// Skips the narrow phase for pairs of two static or kinematic objects (moving box fields).
void skipStaticPairsNearCallback(btBroadphasePair& pair, btCollisionDispatcher& dispatcher,
                                 const btDispatcherInfo& info) {
    const auto* a = static_cast<const btCollisionObject*>(pair.m_pProxy0->m_clientObject);
    const auto* b = static_cast<const btCollisionObject*>(pair.m_pProxy1->m_clientObject);
    if (a->isStaticOrKinematicObject() && b->isStaticOrKinematicObject()) return;
    btCollisionDispatcher::defaultNearCallback(pair, dispatcher, info);
}

class FileSceneWorld final : public SceneWorld {
public:
    FileSceneWorld(const nlohmann::json& document, const std::string& path, const BroadphaseFactory& makeBroadphase,
                   const SceneLoadOptions& options) {
        const JsonReader root(document, path, "");
        m_name = root.at("name").string();
        m_description = root.at("description").string();
        m_steps = root.positiveInt("steps", 300);
        const uint32_t seed = root.has("seed") ? uint32_t(root.at("seed").nonNegativeInt()) : 1u;
        m_camera = readCamera(root);
        const JsonReader worldSpec = root.at("world");
        m_settings = readWorld(worldSpec);

        if (m_settings.soft || m_settings.deformable) {
            m_configuration = std::make_unique<btSoftBodyRigidBodyCollisionConfiguration>();
        } else {
            m_configuration = std::make_unique<btDefaultCollisionConfiguration>();
        }
        if (!options.narrow.empty()) m_settings.narrow = options.narrow;
        if (!options.softSolver.empty()) m_settings.softSolver = options.softSolver;
        try {
            m_dispatcher = makeTimedDispatcher(m_settings.narrow, m_configuration.get(), m_narrowphaseClock);
        } catch (const std::exception& error) {
            throw std::runtime_error(path + ": " + error.what());
        }
        if (m_settings.soft || m_settings.deformable) {
            m_softInfo = std::make_unique<btSoftBodyWorldInfo>();
            m_softInfo->air_density = btScalar(1.2);
            m_softInfo->water_density = 0;
            m_softInfo->water_offset = 0;
            m_softInfo->water_normal = btVector3(0, 0, 0);
            m_softInfo->m_gravity = m_settings.gravity;
            m_softInfo->m_dispatcher = m_dispatcher.get();
            m_softInfo->m_sparsesdf.Initialize();
        }
        if (m_settings.deformable) {
            // As btDeformableMultiBodyDynamicsWorld sets up its own info (voxels of 0.005), then
            // DeformableSelfCollision's default of 0.25, which takes effect when the SDF resets.
            m_softInfo->m_sparsesdf.setDefaultVoxelsz(btScalar(0.005));
            m_softInfo->m_sparsesdf.Reset();
            m_softInfo->m_sparsesdf.setDefaultVoxelsz(btScalar(0.25));
        }
        m_content = std::make_unique<SceneContent>(m_softInfo.get(), m_settings.deformable);
        generateObjects(root, path, options, seed);
        root.done();
        // Bullet collides GImpact shapes only with this; BulletGpu's dispatcher keeps it as the
        // fallback for the pairs it does not take.
        if (m_content->hasGImpactShapes()) btGImpactCollisionAlgorithm::registerAlgorithm(m_dispatcher.get());

        const int maxProxies = m_content->objectCount();
        m_broadphase =
            std::make_unique<TimedBroadphase>(makeBroadphase(m_settings.boundsMin, m_settings.boundsMax, maxProxies));
        if (m_settings.deformable) {
            makeDeformableWorld(path);
        } else if (m_settings.soft) {
            m_solver = std::make_unique<TimedSolver>(m_solverClock);
            try {
                m_softSolver = makeSoftSolver(m_settings.softSolver);
            } catch (const std::exception& error) {
                throw std::runtime_error(path + ": " + error.what());
            }
            auto softWorld = std::make_unique<btSoftRigidDynamicsWorld>(
                m_dispatcher.get(), m_broadphase.get(), m_solver.get(), m_configuration.get(), m_softSolver.get());
            m_softWorld = softWorld.get();
            m_world = std::move(softWorld);
            m_softInfo->m_broadphase = m_broadphase.get();
            m_softInfo->m_sparsesdf.Reset();
        } else {
            m_solver = std::make_unique<TimedSolver>(m_solverClock);
            m_world = std::make_unique<btDiscreteDynamicsWorld>(m_dispatcher.get(), m_broadphase.get(), m_solver.get(),
                                                                m_configuration.get());
        }
        m_world->setGravity(m_settings.gravity);
        applySolverSettings(worldSpec);
        worldSpec.done();
        if (m_content->skipsStaticPairs()) m_dispatcher->setNearCallback(skipStaticPairsNearCallback);
        m_content->addTo(*m_world, m_softWorld, m_deformableWorld);
        if (!m_content->scripts().empty()) {
            m_world->setInternalTickCallback(runScriptsBeforeStep, this, true);
            m_world->setInternalTickCallback(runScriptsAfterStep, this, false);
        }
    }

    ~FileSceneWorld() override {
        if (m_world) m_content->removeFrom(*m_world, m_softWorld, m_deformableWorld);
    }

    FileSceneWorld(const FileSceneWorld&) = delete;
    FileSceneWorld& operator=(const FileSceneWorld&) = delete;

    const std::string& name() const override { return m_name; }
    const std::string& description() const override { return m_description; }
    btDiscreteDynamicsWorld& world() override { return *m_world; }
    btSoftRigidDynamicsWorld* softWorld() override { return m_softWorld; }
    btDeformableMultiBodyDynamicsWorld* deformableWorld() override { return m_deformableWorld; }
    const btSoftBodyArray* softBodies() override {
        if (m_softWorld != nullptr) return &m_softWorld->getSoftBodyArray();
        return m_deformableWorld != nullptr ? &m_deformableWorld->getSoftBodyArray() : nullptr;
    }
    TimedBroadphase& broadphase() override { return *m_broadphase; }
    btCollisionDispatcher& dispatcher() override { return *m_dispatcher; }
    PhaseClock& narrowphaseClock() override { return m_narrowphaseClock; }
    const std::string& narrowPhase() const override { return m_settings.narrow; }
    const std::string& softSolver() const override { return m_settings.softSolver; }
    SoftBodySolver* bulletgpuSoftSolver() override { return dynamic_cast<SoftBodySolver*>(m_softSolver.get()); }
    PhaseClock& solverClock() override { return m_solverClock; }
    const CameraSpec& camera() const override { return m_camera; }
    int defaultSteps() const override { return m_steps; }
    int objectCount() const override { return m_world->getNumCollisionObjects(); }

    void step() override { advance(m_settings.timeStep, m_settings.maxSubSteps); }

    int advance(double elapsedSeconds, int maxSubSteps) override {
        const int substeps = m_world->stepSimulation(btScalar(elapsedSeconds), maxSubSteps, m_settings.timeStep);
        // As SoftDemo does; Bullet's deformable example does not.
        if (m_softWorld != nullptr) m_softInfo->m_sparsesdf.GarbageCollect();
        return substeps;
    }

    double timeStep() const override { return m_settings.timeStep; }

    double meanHeight() const override {
        double sum = 0;
        long long count = 0;
        for (const std::unique_ptr<btRigidBody>& body : m_content->rigidBodies()) {
            if (body->getInvMass() > 0) {
                sum += body->getWorldTransform().getOrigin().y();
                ++count;
            }
        }
        for (const std::unique_ptr<btSoftBody>& body : m_content->softBodies()) {
            for (int i = 0; i < body->m_nodes.size(); ++i) sum += body->m_nodes[i].m_x.y();
            count += body->m_nodes.size();
        }
        return count == 0 ? 0.0 : sum / double(count);
    }

    int lastRayHits() const override {
        int hits = 0;
        for (const std::unique_ptr<SceneScript>& script : m_content->scripts()) hits += script->rayHits();
        return hits;
    }

private:
    static void runScriptsBeforeStep(btDynamicsWorld* world, btScalar timeStep) {
        auto* self = static_cast<FileSceneWorld*>(world->getWorldUserInfo());
        for (const std::unique_ptr<SceneScript>& script : self->m_content->scripts())
            script->beforeStep(*self->m_world, timeStep);
    }

    static void runScriptsAfterStep(btDynamicsWorld* world, btScalar) {
        auto* self = static_cast<FileSceneWorld*>(world->getWorldUserInfo());
        for (const std::unique_ptr<SceneScript>& script : self->m_content->scripts()) script->afterStep(*self->m_world);
    }

    static WorldSettings readWorld(const JsonReader& spec) {
        WorldSettings settings;
        const std::string type = spec.string("type", "rigid");
        if (type != "rigid" && type != "soft" && type != "deformable")
            spec.at("type").fail("expected \"rigid\", \"soft\" or \"deformable\", got \"" + type + "\"");
        settings.soft = type == "soft";
        settings.deformable = type == "deformable";
        settings.narrow = spec.string("narrow", settings.narrow);
        if (!isNarrowPhaseName(settings.narrow)) {
            spec.at("narrow").fail("unknown narrow phase '" + settings.narrow + "' (" + narrowPhaseNameList() + ")");
        }
        settings.softSolver = spec.string("softSolver", settings.softSolver);
        if (!isSoftSolverName(settings.softSolver)) {
            spec.at("softSolver")
                .fail("unknown soft-body solver '" + settings.softSolver + "' (" + softSolverNameList() + ")");
        }
        settings.gravity = spec.vec3("gravity", settings.gravity);
        settings.timeStep = btScalar(spec.positiveNumber("timeStep", settings.timeStep));
        if (spec.has("maxSubSteps")) settings.maxSubSteps = int(spec.at("maxSubSteps").nonNegativeInt());
        const JsonReader bounds = spec.at("bounds");
        settings.boundsMin = bounds.at("min").vec3();
        settings.boundsMax = bounds.at("max").vec3();
        for (int axis = 0; axis < 3; ++axis) {
            if (!(settings.boundsMin[axis] < settings.boundsMax[axis])) bounds.fail("expected min < max on every axis");
        }
        bounds.done();
        return settings;
    }

    // Bullet's deformable world (or ours, by the soft-body solver's name) set up as its
    // DeformableSelfCollision example does: explicit integration, no line search, projection.
    void makeDeformableWorld(const std::string& path) {
        m_deformableSolver = std::make_unique<btDeformableBodySolver>();
        auto solver = std::make_unique<TimedDeformableSolver>(m_solverClock);
        solver->setDeformableSolver(m_deformableSolver.get());
        std::unique_ptr<btDeformableMultiBodyDynamicsWorld> world;
        try {
            world = bulletgpu::demo::makeDeformableWorld(m_settings.softSolver, m_dispatcher.get(), m_broadphase.get(),
                                                         solver.get(), m_configuration.get(), m_deformableSolver.get());
        } catch (const std::exception& error) {
            throw std::runtime_error(path + ": " + error.what());
        }
        world->setImplicit(false);
        world->setLineSearch(false);
        world->setUseProjection(true);
        m_deformableWorld = world.get();
        m_world = std::move(world);
        m_solver = std::move(solver);
        m_softInfo->m_broadphase = m_broadphase.get();
    }

    void applySolverSettings(const JsonReader& spec) {
        btContactSolverInfo& info = m_world->getSolverInfo();
        info.m_numIterations = spec.positiveInt("solverIterations", info.m_numIterations);
        if (spec.has("solverMode")) info.m_solverMode = readSolverMode(spec.at("solverMode"));
        info.m_erp = btScalar(spec.number("erp", info.m_erp));
        info.m_erp2 = btScalar(spec.number("erp2", info.m_erp2));
        info.m_globalCfm = btScalar(spec.number("globalCfm", info.m_globalCfm));
    }

    void generateObjects(const JsonReader& root, const std::string& path, const SceneLoadOptions& options,
                         uint32_t seed) {
        const size_t slash = path.find_last_of('/');
        const std::string directory = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
        const std::vector<JsonReader> objects = root.at("objects").elements();
        for (size_t i = 0; i < objects.size(); ++i) {
            const JsonReader& params = objects[i];
            const std::string type = params.at("type").string();
            const Generator generator = findGenerator(type);
            if (generator == nullptr) {
                std::string known;
                for (const std::string& name : generatorTypes()) known += (known.empty() ? "" : ", ") + name;
                params.at("type").fail("unknown generator type '" + type + "' (" + known + ")");
            }
            GeneratorContext context{*m_content, options, directory, seed * 1000003u + uint32_t(i)};
            generator(params, context);
            params.done();
        }
    }

    std::string m_name;
    std::string m_description;
    int m_steps = 300;
    CameraSpec m_camera;
    WorldSettings m_settings;
    // Declaration order is the reverse of destruction order: the world goes first.
    PhaseClock m_narrowphaseClock;
    PhaseClock m_solverClock;
    std::unique_ptr<btCollisionConfiguration> m_configuration;
    std::unique_ptr<btCollisionDispatcher> m_dispatcher;
    std::unique_ptr<btSoftBodyWorldInfo> m_softInfo;
    std::unique_ptr<SceneContent> m_content;
    std::unique_ptr<TimedBroadphase> m_broadphase;
    std::unique_ptr<btConstraintSolver> m_solver;
    std::unique_ptr<btDeformableBodySolver> m_deformableSolver; // deformable scenes only
    std::unique_ptr<btSoftBodySolver> m_softSolver;             // null: the world's own btDefaultSoftBodySolver
    std::unique_ptr<btDiscreteDynamicsWorld> m_world;
    btSoftRigidDynamicsWorld* m_softWorld = nullptr;
    btDeformableMultiBodyDynamicsWorld* m_deformableWorld = nullptr;
};

} // namespace

namespace {

nlohmann::json readSceneDocument(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot open the file");
    try {
        return nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& error) {
        throw std::runtime_error(path + ": invalid JSON: " + error.what());
    }
}

} // namespace

std::unique_ptr<SceneWorld> loadSceneFile(const std::string& path, const BroadphaseFactory& makeBroadphase,
                                          const SceneLoadOptions& options) {
    if (!(options.scale > 0)) throw std::runtime_error(path + ": scale: expected a positive number");
    return std::make_unique<FileSceneWorld>(readSceneDocument(path), path, makeBroadphase, options);
}

double scalableObjectCount(const std::string& path) {
    const nlohmann::json document = readSceneDocument(path);
    double count = 0;
    const auto objects = document.find("objects");
    if (objects == document.end() || !objects->is_array()) return 0;
    for (const nlohmann::json& object : *objects) {
        if (!object.is_object() || !object.value("scalable", false)) continue;
        const auto objectCount = object.find("count");
        if (objectCount != object.end() && objectCount->is_number()) count += objectCount->get<double>();
    }
    return count;
}

} // namespace bulletgpu::demo
