// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/common/camera_spec.h"
#include "demos/render/image.h"
#include "demos/render/mesh.h"

#include <vector>

namespace bulletgpu::demo {

/// A linear colour, each channel from 0 to 1.
struct Colour {
    float r = 0; ///< Red.
    float g = 0; ///< Green.
    float b = 0; ///< Blue.
};

/// A colour as 8-bit RGB, each channel clamped to 0..1 first.
Rgb toRgb(const Colour& colour);

/// Distance fog: surfaces fade linearly towards a colour between two distances from the eye.
struct Fog {
    Colour colour;      ///< The colour far surfaces fade to.
    double start = 1e9; ///< Distance where fading begins.
    double end = 2e9;   ///< Distance where surfaces have the fog colour.
};

/// A z-buffered software rasterizer: perspective camera, clipping against the near plane, and
/// Lambert plus ambient shading (interpolated per vertex) under one directional light that is
/// fixed relative to the camera: from above, over the viewer's left shoulder.
class Rasterizer {
public:
    /// A rasterizer drawing into a width x height image (both at least 1).
    Rasterizer(int width, int height);

    /// Sets the camera. Returns false when it has a non-finite value; then nothing is drawn until a
    /// valid camera is set.
    bool setCamera(const CameraSpec& camera);
    /// Starts a frame: copies the background (the image's size) into the image, clears the depth
    /// buffer and sets the fog.
    void clear(const Image& background, const Fog& fog);

    /// Whether a world-space sphere may be visible (conservative).
    bool sphereMayBeVisible(const btVector3& centre, btScalar radius) const;
    /// Draws a mesh placed in the world by a transform, in one colour.
    void drawMesh(const Mesh& mesh, const btTransform& transform, const Colour& colour);
    /// Draws a mesh with the sides its vertex normals point to in `front` and, for a two-sided
    /// mesh, the other sides in `back` (a cloth passing through itself shows both).
    void drawMesh(const Mesh& mesh, const btTransform& transform, const Colour& front, const Colour& back);

    /// The unit world-space direction of the ray through pixel coordinates (x, y) (pixel centres
    /// are at +0.5); defined after a successful setCamera.
    btVector3 viewRay(double x, double y) const;
    /// The world-space distance one pixel spans at distance 1 from the eye.
    double pixelAngle() const { return 1.0 / m_focal; }
    /// The camera's unit up direction (the one given, or a stand-in when it was degenerate).
    const btVector3& worldUp() const { return m_worldUp; }
    /// The image drawn so far.
    const Image& image() const { return m_image; }

private:
    /// A vertex in view space (x right, y up, z forward) with its shading intensity.
    struct ViewVertex {
        double x, y, z;
        float intensity;
    };
    /// A vertex on screen: pixel coordinates, 1/z and intensity.
    struct ScreenVertex {
        double x, y, invZ;
        float intensity;
    };

    void drawClippedTriangle(const ViewVertex& a, const ViewVertex& b, const ViewVertex& c, const Colour& colour);
    ScreenVertex project(const ViewVertex& v) const;
    void fillTriangle(const ScreenVertex& a, const ScreenVertex& b, const ScreenVertex& c, const Colour& colour);

    Image m_image;
    std::vector<float> m_depth; // 1/z per pixel; 0 is empty.
    std::vector<btVector3> m_viewPositions;
    std::vector<float> m_lightDots;
    bool m_active = false;
    btVector3 m_eye{0, 0, 0};
    btVector3 m_right{1, 0, 0};
    btVector3 m_up{0, 1, 0};
    btVector3 m_forward{0, 0, -1};
    btVector3 m_worldUp{0, 1, 0};
    btVector3 m_light{0, 1, 0};
    double m_focal = 1;
    double m_near = 0.01;
    double m_tanHalfX = 1;
    double m_tanHalfY = 1;
    Fog m_fog;
};

} // namespace bulletgpu::demo
