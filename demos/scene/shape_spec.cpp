// SPDX-License-Identifier: Zlib
#include "demos/scene/shape_spec.h"

#include "demos/scene/procedural_meshes.h"

#include <BulletCollision/Gimpact/btGImpactShape.h>

namespace bulletgpu::demo {

namespace {

std::unique_ptr<btCollisionShape> makeTaruHull(const JsonReader& spec) {
    const btScalar scale = btScalar(spec.positiveNumber("scale", 1));
    auto hull = std::make_unique<btConvexHullShape>();
    for (const btVector3& point : taruHullPoints()) hull->addPoint(point * scale, false);
    hull->recalcLocalAabb();
    if (spec.boolean("polyhedral", false)) hull->initializePolyhedralFeatures();
    return hull;
}

std::unique_ptr<btCollisionShape> makeConvexHull(const JsonReader& spec) {
    auto hull = std::make_unique<btConvexHullShape>();
    const std::vector<JsonReader> points = spec.at("points").elements();
    if (points.size() < 4) spec.at("points").fail("expected at least 4 points");
    for (const JsonReader& point : points) hull->addPoint(point.vec3(), false);
    hull->recalcLocalAabb();
    if (spec.boolean("polyhedral", false)) hull->initializePolyhedralFeatures();
    return hull;
}

// A ring of capsules around the y axis: a concave torus Bullet can collide as a compound.
std::unique_ptr<btCollisionShape> makeTorus(const JsonReader& spec, SceneContent& content) {
    const btScalar major = btScalar(spec.at("majorRadius").positiveNumber());
    const btScalar minor = btScalar(spec.at("minorRadius").positiveNumber());
    const int segments = spec.positiveInt("segments", 12);
    if (segments < 3) spec.at("segments").fail("expected at least 3 segments");
    const btScalar chord = 2 * major * btSin(SIMD_PI / btScalar(segments));
    btCollisionShape* capsule = content.addShape(std::make_unique<btCapsuleShapeX>(minor, chord));
    const btScalar middle = major * btCos(SIMD_PI / btScalar(segments));
    auto compound = std::make_unique<btCompoundShape>();
    for (int i = 0; i < segments; ++i) {
        // Capsule i lies along the chord between points i and i + 1 of the circle.
        const btScalar angle = SIMD_2_PI * (btScalar(i) + btScalar(0.5)) / btScalar(segments);
        const btTransform child(btQuaternion(btVector3(0, 1, 0), angle),
                                btVector3(middle * btSin(angle), 0, middle * btCos(angle)));
        compound->addChildShape(child, capsule);
    }
    return compound;
}

// A dynamic concave triangle mesh: a procedural torus or an OBJ file (exactly one of the two).
std::unique_ptr<btCollisionShape> makeGImpactMesh(const JsonReader& spec, GeneratorContext& context) {
    if (spec.has("torus") == spec.has("file")) spec.fail("expected exactly one of \"torus\" and \"file\"");
    TriMesh mesh;
    if (spec.has("torus")) {
        const JsonReader torus = spec.at("torus");
        const int majorSegments = torus.positiveInt("majorSegments", 30);
        const int minorSegments = torus.positiveInt("minorSegments", 10);
        if (majorSegments < 3) torus.at("majorSegments").fail("expected at least 3 segments");
        if (minorSegments < 3) torus.at("minorSegments").fail("expected at least 3 segments");
        mesh = torusMesh(btScalar(torus.at("majorRadius").positiveNumber()),
                         btScalar(torus.at("minorRadius").positiveNumber()), majorSegments, minorSegments);
        torus.done();
    } else {
        mesh = readObjParam(spec, context);
    }
    return std::make_unique<btGImpactMeshShape>(context.content.addMesh(std::move(mesh)));
}

} // namespace

btScalar readMass(const JsonReader& params) {
    if (!params.has("mass")) return 1;
    const JsonReader mass = params.at("mass");
    if (mass.number() < 0) mass.fail("expected a mass of 0 (static) or more");
    return btScalar(mass.number());
}

btCollisionShape* readShape(const JsonReader& spec, GeneratorContext& context) {
    SceneContent& content = context.content;
    const std::string type = spec.at("type").string();
    std::unique_ptr<btCollisionShape> shape;
    if (type == "box") {
        shape = std::make_unique<btBoxShape>(spec.at("halfExtents").vec3());
    } else if (type == "sphere") {
        shape = std::make_unique<btSphereShape>(btScalar(spec.at("radius").positiveNumber()));
    } else if (type == "capsule") {
        shape = std::make_unique<btCapsuleShape>(btScalar(spec.at("radius").positiveNumber()),
                                                 btScalar(spec.at("height").positiveNumber()));
    } else if (type == "cylinder") {
        shape = std::make_unique<btCylinderShape>(spec.at("halfExtents").vec3());
    } else if (type == "cylinder_x") {
        shape = std::make_unique<btCylinderShapeX>(spec.at("halfExtents").vec3());
    } else if (type == "cone") {
        shape = std::make_unique<btConeShape>(btScalar(spec.at("radius").positiveNumber()),
                                              btScalar(spec.at("height").positiveNumber()));
    } else if (type == "taru_hull") {
        shape = makeTaruHull(spec);
    } else if (type == "convex_hull") {
        shape = makeConvexHull(spec);
    } else if (type == "torus") {
        shape = makeTorus(spec, content);
    } else if (type == "gimpact_mesh") {
        shape = makeGImpactMesh(spec, context);
    } else if (type == "compound") {
        auto compound = std::make_unique<btCompoundShape>();
        for (const JsonReader& child : spec.at("children").elements()) {
            const btVector3 position = child.vec3("position", btVector3(0, 0, 0));
            const btVector3 yawPitchRoll = child.vec3("rotation", btVector3(0, 0, 0));
            btTransform transform(btQuaternion(yawPitchRoll.x(), yawPitchRoll.y(), yawPitchRoll.z()), position);
            compound->addChildShape(transform, readShape(child.at("shape"), context));
            child.done();
        }
        if (compound->getNumChildShapes() == 0) spec.at("children").fail("expected at least one child");
        shape = std::move(compound);
    } else {
        spec.at("type").fail("unknown shape type '" + type +
                             "' (box, sphere, capsule, cylinder, cylinder_x, cone, taru_hull, convex_hull, torus, "
                             "gimpact_mesh, compound)");
    }
    if (spec.has("margin")) shape->setMargin(btScalar(spec.at("margin").number()));
    // GImpact boxes its triangles with the margin: refit after setting it.
    if (auto* gimpact = dynamic_cast<btGImpactShapeInterface*>(shape.get())) gimpact->updateBound();
    spec.done();
    return content.addShape(std::move(shape));
}

BodyVariants::BodyVariants(const JsonReader& params, GeneratorContext& context) : m_randomEngine(context.seed) {
    if (params.has("variants")) {
        for (const JsonReader& variant : params.at("variants").elements()) {
            m_variants.push_back({readShape(variant.at("shape"), context), readMass(variant)});
            variant.done();
        }
        if (m_variants.empty()) params.at("variants").fail("expected at least one variant");
        const std::string pick = params.string("pick", "cycle");
        if (pick != "cycle" && pick != "random") params.at("pick").fail("expected \"cycle\" or \"random\"");
        m_random = pick == "random";
    } else {
        m_variants.push_back({readShape(params.at("shape"), context), readMass(params)});
    }
}

const BodyVariant& BodyVariants::pick(int index) {
    if (m_random) return m_variants[m_randomEngine() % m_variants.size()];
    return m_variants[static_cast<size_t>(index) % m_variants.size()];
}

} // namespace bulletgpu::demo
