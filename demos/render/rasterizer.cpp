// SPDX-License-Identifier: Zlib
#include "demos/render/rasterizer.h"

#include <LinearMath/btMatrix3x3.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace bulletgpu::demo {

namespace {

constexpr float kAmbient = 0.32f;
constexpr float kDiffuse = 0.68f;
constexpr double kPi = 3.14159265358979323846;

bool isFinite(const btVector3& v) { return std::isfinite(v.x()) && std::isfinite(v.y()) && std::isfinite(v.z()); }

/// Lambert plus ambient for the cosine between a normal and the light direction.
float shade(float cosine) { return kAmbient + kDiffuse * std::max(0.0f, cosine); }

/// Coefficients of a function of pixel coordinates that is linear on the screen: a*x + b*y + c.
struct ScreenPlane {
    double a, b, c;
    double at(double x, double y) const { return a * x + b * y + c; }
};

/// The edge function of the directed edge p -> q: positive on its left (in y-down pixel coordinates,
/// for counter-clockwise area), zero on the edge.
template <typename Vertex>
ScreenPlane edgeFunction(const Vertex& p, const Vertex& q) {
    const double a = -(q.y - p.y);
    const double b = q.x - p.x;
    return {a, b, -a * p.x - b * p.y};
}

/// The screen-linear interpolation of three vertex values with the triangle's edge functions.
ScreenPlane interpolation(const ScreenPlane edges[3], const double values[3], double area) {
    ScreenPlane plane{0, 0, 0};
    for (int i = 0; i < 3; ++i) {
        plane.a += edges[i].a * values[i] / area;
        plane.b += edges[i].b * values[i] / area;
        plane.c += edges[i].c * values[i] / area;
    }
    return plane;
}

/// One colour channel, 0 to 1, as a byte.
std::uint8_t toByte(float value) { return static_cast<std::uint8_t>(std::clamp(value, 0.0f, 1.0f) * 255.0f + 0.5f); }

} // namespace

Rgb toRgb(const Colour& colour) { return {toByte(colour.r), toByte(colour.g), toByte(colour.b)}; }

Rasterizer::Rasterizer(int width, int height) {
    if (width < 1 || height < 1) throw std::invalid_argument("Rasterizer: the image needs at least one pixel");
    m_image = Image(width, height);
    m_depth.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height));
}

void Rasterizer::clear(const Image& background, const Fog& fog) {
    if (background.width != m_image.width || background.height != m_image.height) {
        throw std::invalid_argument("Rasterizer::clear: the background has another size than the image");
    }
    m_image.rgb = background.rgb;
    std::fill(m_depth.begin(), m_depth.end(), 0.0f);
    m_fog = fog;
}

bool Rasterizer::setCamera(const CameraSpec& camera) {
    m_active = false;
    if (!isFinite(camera.eye) || !isFinite(camera.target) || !isFinite(camera.up) ||
        !std::isfinite(camera.fieldOfViewYDegrees)) {
        return false;
    }

    // Camera frame; a degenerate up or a zero view direction gets a fallback instead of NaNs.
    btVector3 worldUp = camera.up.length2() > 0 ? camera.up.normalized() : btVector3(0, 1, 0);
    btVector3 forward = camera.target - camera.eye;
    const double distance = forward.length();
    forward = distance > 0 ? forward / btScalar(distance) : btVector3(0, 0, -1);
    btVector3 right = forward.cross(worldUp);
    if (right.length2() < btScalar(1e-8)) {
        btVector3 other(0, 0, 0);
        btPlaneSpace1(forward, right, other);
        worldUp = other;
    }
    m_right = right.normalized();
    m_up = m_right.cross(forward);
    m_forward = forward;
    m_worldUp = worldUp;
    m_eye = camera.eye;
    m_light = (worldUp - btScalar(0.5) * m_right - btScalar(0.6) * m_forward).normalized();

    const double fov = std::clamp(camera.fieldOfViewYDegrees, 1.0, 170.0) * kPi / 180.0;
    m_focal = 0.5 * m_image.height / std::tan(0.5 * fov);
    m_tanHalfX = 0.5 * m_image.width / m_focal;
    m_tanHalfY = 0.5 * m_image.height / m_focal;
    m_near = std::clamp(1e-3 * distance, 1e-4, 0.05);
    m_active = true;
    return true;
}

btVector3 Rasterizer::viewRay(double x, double y) const {
    const double dx = (x - 0.5 * m_image.width) / m_focal;
    const double dy = (0.5 * m_image.height - y) / m_focal;
    return (m_forward + btScalar(dx) * m_right + btScalar(dy) * m_up).normalized();
}

bool Rasterizer::sphereMayBeVisible(const btVector3& centre, btScalar radius) const {
    if (!m_active) return false;
    if (!isFinite(centre) || !std::isfinite(radius)) return true;
    const btVector3 relative = centre - m_eye;
    const double x = relative.dot(m_right);
    const double y = relative.dot(m_up);
    const double z = relative.dot(m_forward);
    if (z + radius < m_near) return false;
    const double sideX = std::sqrt(1 + m_tanHalfX * m_tanHalfX);
    const double sideY = std::sqrt(1 + m_tanHalfY * m_tanHalfY);
    return std::fabs(x) - z * m_tanHalfX <= radius * sideX && std::fabs(y) - z * m_tanHalfY <= radius * sideY;
}

void Rasterizer::drawMesh(const Mesh& mesh, const btTransform& transform, const Colour& colour) {
    drawMesh(mesh, transform, colour, colour);
}

void Rasterizer::drawMesh(const Mesh& mesh, const btTransform& transform, const Colour& front, const Colour& back) {
    if (!m_active || mesh.indices.empty()) return;

    // Model to view: rows of the view rotation are right, up and forward.
    const btMatrix3x3 view(m_right.x(), m_right.y(), m_right.z(), m_up.x(), m_up.y(), m_up.z(), m_forward.x(),
                           m_forward.y(), m_forward.z());
    const btMatrix3x3 modelView = view * transform.getBasis();
    const btVector3 modelViewOrigin = view * (transform.getOrigin() - m_eye);
    const btVector3 eyeLocal = transform.invXform(m_eye);
    const btVector3 lightLocal = transform.getBasis().transpose() * m_light;

    const std::size_t vertexCount = mesh.positions.size();
    m_viewPositions.resize(vertexCount);
    m_lightDots.resize(vertexCount);
    for (std::size_t i = 0; i < vertexCount; ++i) {
        m_viewPositions[i] = modelView * mesh.positions[i] + modelViewOrigin;
        m_lightDots[i] = static_cast<float>(mesh.normals[i].dot(lightLocal));
    }

    for (std::size_t t = 0; t + 2 < mesh.indices.size(); t += 3) {
        const int corners[3] = {mesh.indices[t], mesh.indices[t + 1], mesh.indices[t + 2]};
        const btVector3& p0 = mesh.positions[corners[0]];
        // Orient the geometric normal like the vertex normals, then decide which side the eye sees.
        btVector3 geometric = (mesh.positions[corners[1]] - p0).cross(mesh.positions[corners[2]] - p0);
        if (geometric.dot(mesh.normals[corners[0]] + mesh.normals[corners[1]] + mesh.normals[corners[2]]) < 0) {
            geometric = -geometric;
        }
        const bool facesEye = geometric.dot(eyeLocal - p0) > 0;
        if (!facesEye && !mesh.twoSided) continue;
        const float side = facesEye ? 1.0f : -1.0f;

        ViewVertex vertices[3];
        for (int k = 0; k < 3; ++k) {
            const btVector3& v = m_viewPositions[corners[k]];
            vertices[k] = {v.x(), v.y(), v.z(), shade(side * m_lightDots[corners[k]])};
        }
        drawClippedTriangle(vertices[0], vertices[1], vertices[2], facesEye ? front : back);
    }
}

void Rasterizer::drawClippedTriangle(const ViewVertex& a, const ViewVertex& b, const ViewVertex& c,
                                     const Colour& colour) {
    const ViewVertex* input[3] = {&a, &b, &c};
    int inside = 0;
    for (const ViewVertex* v : input) {
        if (!std::isfinite(v->x) || !std::isfinite(v->y) || !std::isfinite(v->z)) return;
        if (v->z >= m_near) ++inside;
    }
    if (inside == 0) return;
    if (inside == 3) {
        fillTriangle(project(a), project(b), project(c), colour);
        return;
    }

    // Sutherland-Hodgman against z = near: a triangle becomes a triangle or a quad.
    ViewVertex polygon[4];
    int count = 0;
    for (int i = 0; i < 3; ++i) {
        const ViewVertex& current = *input[i];
        const ViewVertex& next = *input[(i + 1) % 3];
        const bool currentIn = current.z >= m_near;
        if (currentIn) polygon[count++] = current;
        if (currentIn != (next.z >= m_near)) {
            const double t = (m_near - current.z) / (next.z - current.z);
            polygon[count++] = {current.x + t * (next.x - current.x), current.y + t * (next.y - current.y), m_near,
                                current.intensity + static_cast<float>(t) * (next.intensity - current.intensity)};
        }
    }
    const ScreenVertex first = project(polygon[0]);
    for (int i = 1; i + 1 < count; ++i) fillTriangle(first, project(polygon[i]), project(polygon[i + 1]), colour);
}

Rasterizer::ScreenVertex Rasterizer::project(const ViewVertex& v) const {
    const double invZ = 1.0 / v.z;
    return {0.5 * m_image.width + v.x * m_focal * invZ, 0.5 * m_image.height - v.y * m_focal * invZ, invZ, v.intensity};
}

void Rasterizer::fillTriangle(const ScreenVertex& a, const ScreenVertex& b, const ScreenVertex& c,
                              const Colour& colour) {
    const double signedArea = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
    if (!(std::fabs(signedArea) > 1e-12)) return; // degenerate or NaN
    const ScreenVertex& second = signedArea > 0 ? b : c;
    const ScreenVertex& third = signedArea > 0 ? c : b;
    const double area = std::fabs(signedArea);

    // Pixels whose centres (i + 0.5) can lie inside, clamped to the image.
    const double minX = std::min({a.x, b.x, c.x}) - 0.5;
    const double maxX = std::max({a.x, b.x, c.x}) - 0.5;
    const double minY = std::min({a.y, b.y, c.y}) - 0.5;
    const double maxY = std::max({a.y, b.y, c.y}) - 0.5;
    const int width = m_image.width;
    const int height = m_image.height;
    if (maxX < 0 || maxY < 0 || minX > width - 1 || minY > height - 1) return;
    const int x0 = static_cast<int>(std::ceil(std::max(minX, 0.0)));
    const int x1 = static_cast<int>(std::floor(std::min(maxX, width - 1.0)));
    const int y0 = static_cast<int>(std::ceil(std::max(minY, 0.0)));
    const int y1 = static_cast<int>(std::floor(std::min(maxY, height - 1.0)));

    // Edge functions, each the weight of the vertex opposite its edge, and the attribute planes.
    const ScreenPlane edges[3] = {edgeFunction(second, third), edgeFunction(third, a), edgeFunction(a, second)};
    const double invZs[3] = {a.invZ, second.invZ, third.invZ};
    const double intensities[3] = {a.intensity, second.intensity, third.intensity};
    const ScreenPlane depth = interpolation(edges, invZs, area);
    const ScreenPlane light = interpolation(edges, intensities, area);

    const bool fogged = m_fog.end > m_fog.start;
    const double fogScale = fogged ? 1.0 / (m_fog.end - m_fog.start) : 0.0;
    for (int y = y0; y <= y1; ++y) {
        const double px = x0 + 0.5;
        const double py = y + 0.5;
        double e0 = edges[0].at(px, py);
        double e1 = edges[1].at(px, py);
        double e2 = edges[2].at(px, py);
        double invZ = depth.at(px, py);
        double intensity = light.at(px, py);
        float* depthRow = &m_depth[static_cast<std::size_t>(y) * static_cast<std::size_t>(width)];
        std::uint8_t* rgbRow = &m_image.rgb[static_cast<std::size_t>(y) * static_cast<std::size_t>(width) * 3];
        for (int x = x0; x <= x1; ++x) {
            const float pixelInvZ = static_cast<float>(invZ);
            if (e0 >= 0 && e1 >= 0 && e2 >= 0 && pixelInvZ > depthRow[x]) {
                depthRow[x] = pixelInvZ;
                const float lit = static_cast<float>(intensity);
                float r = colour.r * lit;
                float g = colour.g * lit;
                float b = colour.b * lit;
                if (fogged) {
                    const float f = static_cast<float>(std::clamp((1.0 / invZ - m_fog.start) * fogScale, 0.0, 1.0));
                    r += f * (m_fog.colour.r - r);
                    g += f * (m_fog.colour.g - g);
                    b += f * (m_fog.colour.b - b);
                }
                rgbRow[3 * x] = toByte(r);
                rgbRow[3 * x + 1] = toByte(g);
                rgbRow[3 * x + 2] = toByte(b);
            }
            e0 += edges[0].a;
            e1 += edges[1].a;
            e2 += edges[2].a;
            invZ += depth.a;
            intensity += light.a;
        }
    }
}

} // namespace bulletgpu::demo
