// SPDX-License-Identifier: Zlib
#pragma once

#include "demos/common/camera_spec.h"
#include "demos/render/image.h"
#include "demos/render/mesh.h"
#include "demos/render/rasterizer.h"

#include <cstddef>
#include <unordered_map>
#include <vector>

class btCollisionShape;
class btCollisionWorld;

namespace bulletgpu::demo {

/// Draws Bullet collision worlds into images on the CPU: a sky gradient behind, static objects in
/// a neutral grey, dynamic objects and soft bodies each in a colour from a hash of their index in
/// the world (darker while asleep), distance fog towards the horizon. Objects with a non-finite
/// transform and objects flagged CF_DISABLE_VISUALIZE_OBJECT are skipped. The image and depth
/// buffers are reused from frame to frame.
class WorldRenderer {
public:
    /// A renderer for width x height frames (both at least 1).
    WorldRenderer(int width, int height);

    /// Draws every collision object of the world as the camera sees it. The image is the renderer's
    /// own and stays valid until the next call.
    const Image& render(const btCollisionWorld& world, const CameraSpec& camera);

private:
    /// A shape tessellated for the current frame, with its bounding sphere in its own frame.
    struct CachedShape {
        std::size_t mesh = 0;
        btVector3 centre{0, 0, 0};
        btScalar radius = 0;
    };

    const CachedShape& cachedShape(const btCollisionShape& shape);
    void paintSky(bool cameraValid);

    Rasterizer m_rasterizer;
    Image m_sky;
    CameraSpec m_skyCamera;
    bool m_skyPainted = false;
    std::vector<Mesh> m_meshes;
    std::size_t m_meshesUsed = 0;
    std::unordered_map<const btCollisionShape*, CachedShape> m_shapes;
    Mesh m_scratch;
};

} // namespace bulletgpu::demo
