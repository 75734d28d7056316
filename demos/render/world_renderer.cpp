// SPDX-License-Identifier: Zlib
#include "demos/render/world_renderer.h"

#include "demos/render/shape_tessellation.h"

#include <BulletCollision/BroadphaseCollision/btBroadphaseProxy.h>
#include <BulletCollision/CollisionDispatch/btCollisionWorld.h>
#include <BulletSoftBody/btSoftBody.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace bulletgpu::demo {

namespace {

constexpr Colour kZenith{0.33f, 0.50f, 0.77f};
constexpr Colour kHorizon{0.83f, 0.88f, 0.93f};
constexpr Colour kBelowHorizon{0.60f, 0.62f, 0.64f};
constexpr Colour kStatic{0.64f, 0.63f, 0.60f};
constexpr float kSleepingDim = 0.62f;
constexpr double kFogStartPerDistance = 1.5; // fog starts at this many camera-target distances
constexpr double kFogEndPerDistance = 10;    // and is complete here
constexpr double kPlanePerDistance = 30;     // half side of the square drawn for an infinite plane
constexpr double kRopeHalfWidthPixels = 1;   // ropes are at least two pixels wide

Colour mix(const Colour& a, const Colour& b, float t) {
    return {a.r + t * (b.r - a.r), a.g + t * (b.g - a.g), a.b + t * (b.b - a.b)};
}

/// A colour from hue (0 to 1), saturation and value.
Colour fromHsv(float hue, float saturation, float value) {
    const float h = 6.0f * (hue - std::floor(hue));
    const float chroma = value * saturation;
    const float x = chroma * (1.0f - std::fabs(std::fmod(h, 2.0f) - 1.0f));
    const float m = value - chroma;
    const int sector = std::min(static_cast<int>(h), 5);
    const float rgb[6][3] = {{chroma, x, 0}, {x, chroma, 0}, {0, chroma, x},
                             {0, x, chroma}, {x, 0, chroma}, {chroma, 0, x}};
    return {rgb[sector][0] + m, rgb[sector][1] + m, rgb[sector][2] + m};
}

/// A well-mixed 32-bit hash of an index (the finaliser of MurmurHash3).
std::uint32_t hashIndex(std::uint32_t x) {
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    x *= 0xc2b2ae35u;
    x ^= x >> 16;
    return x;
}

/// The colour of the object at an index of the world's object array.
Colour colourOf(const btCollisionObject& object, int index) {
    if (object.isStaticObject()) return kStatic;
    const std::uint32_t hash = hashIndex(static_cast<std::uint32_t>(index));
    const float hue = static_cast<float>(hash & 0xffffu) / 65536.0f;
    const float saturation = 0.45f + 0.25f * static_cast<float>((hash >> 16) & 0xffu) / 255.0f;
    Colour colour = fromHsv(hue, saturation, 0.9f);
    if (object.getActivationState() == ISLAND_SLEEPING) {
        colour = {colour.r * kSleepingDim, colour.g * kSleepingDim, colour.b * kSleepingDim};
    }
    return colour;
}

bool isFinite(const btVector3& v) { return std::isfinite(v.x()) && std::isfinite(v.y()) && std::isfinite(v.z()); }

bool isFinite(const btTransform& t) {
    const btMatrix3x3& basis = t.getBasis();
    return isFinite(t.getOrigin()) && isFinite(basis[0]) && isFinite(basis[1]) && isFinite(basis[2]);
}

bool sameCamera(const CameraSpec& a, const CameraSpec& b) {
    return a.eye == b.eye && a.target == b.target && a.up == b.up && a.fieldOfViewYDegrees == b.fieldOfViewYDegrees;
}

} // namespace

WorldRenderer::WorldRenderer(int width, int height) : m_rasterizer(width, height), m_sky(width, height) {}

const Image& WorldRenderer::render(const btCollisionWorld& world, const CameraSpec& camera) {
    const bool cameraValid = m_rasterizer.setCamera(camera);
    if (!m_skyPainted || !sameCamera(camera, m_skyCamera)) {
        paintSky(cameraValid);
        m_skyCamera = camera;
        m_skyPainted = true;
    }
    const double viewDistance = cameraValid ? std::max(1.0, double((camera.target - camera.eye).length())) : 1.0;
    m_rasterizer.clear(m_sky, {kHorizon, kFogStartPerDistance * viewDistance, kFogEndPerDistance * viewDistance});
    if (!cameraValid) return m_rasterizer.image();

    // Shapes shared by many objects are tessellated once per frame.
    m_shapes.clear();
    m_meshesUsed = 0;
    btTransform identity;
    identity.setIdentity();
    const btCollisionObjectArray& objects = world.getCollisionObjectArray();
    for (int i = 0; i < objects.size(); ++i) {
        const btCollisionObject& object = *objects[i];
        if (object.getCollisionFlags() & btCollisionObject::CF_DISABLE_VISUALIZE_OBJECT) continue;
        const Colour colour = colourOf(object, i);
        if (const btSoftBody* softBody = btSoftBody::upcast(&object)) {
            tessellateSoftBody(*softBody, camera.eye, kRopeHalfWidthPixels * m_rasterizer.pixelAngle(), m_scratch);
            // A cloth's two sides in different colours, so that where it passes through itself
            // the other side shows.
            const Colour back{colour.b, colour.r, colour.g};
            m_rasterizer.drawMesh(m_scratch, identity, colour, back);
            continue;
        }
        const btCollisionShape* shape = object.getCollisionShape();
        const btTransform& transform = object.getWorldTransform();
        if (shape == nullptr || !isFinite(transform)) continue;
        if (shape->getShapeType() == STATIC_PLANE_PROXYTYPE) {
            // Infinite: a square around the point the camera looks at, fading into the fog.
            m_scratch.clear();
            tessellateShape(*shape, {transform.invXform(camera.target), btScalar(kPlanePerDistance * viewDistance)},
                            m_scratch);
            m_rasterizer.drawMesh(m_scratch, transform, colour);
            continue;
        }
        const CachedShape& cached = cachedShape(*shape);
        if (!m_rasterizer.sphereMayBeVisible(transform * cached.centre, cached.radius)) continue;
        m_rasterizer.drawMesh(m_meshes[cached.mesh], transform, colour);
    }
    return m_rasterizer.image();
}

const WorldRenderer::CachedShape& WorldRenderer::cachedShape(const btCollisionShape& shape) {
    const auto [entry, inserted] = m_shapes.try_emplace(&shape);
    if (inserted) {
        if (m_meshesUsed == m_meshes.size()) m_meshes.emplace_back();
        Mesh& mesh = m_meshes[m_meshesUsed];
        mesh.clear();
        tessellateShape(shape, {}, mesh);
        entry->second.mesh = m_meshesUsed++;
        shape.getBoundingSphere(entry->second.centre, entry->second.radius);
    }
    return entry->second;
}

void WorldRenderer::paintSky(bool cameraValid) {
    // The colour depends on each pixel ray's elevation above the horizon.
    for (int y = 0; y < m_sky.height; ++y) {
        for (int x = 0; x < m_sky.width; ++x) {
            const double elevation = cameraValid
                                         ? double(m_rasterizer.viewRay(x + 0.5, y + 0.5).dot(m_rasterizer.worldUp()))
                                         : 0.5 - (y + 0.5) / m_sky.height;
            const Colour colour = elevation >= 0
                                      ? mix(kHorizon, kZenith, static_cast<float>(std::sqrt(elevation)))
                                      : mix(kHorizon, kBelowHorizon, static_cast<float>(std::sqrt(-elevation)));
            m_sky.set(x, y, toRgb(colour));
        }
    }
}

} // namespace bulletgpu::demo
