// SPDX-License-Identifier: Zlib
#pragma once

#include <LinearMath/btVector3.h>

namespace bulletgpu::demo {

/// A fixed camera for rendered frames.
struct CameraSpec {
    btVector3 eye{30, 30, 30};       ///< Camera position.
    btVector3 target{0, 0, 0};       ///< Point at the image centre.
    btVector3 up{0, 1, 0};           ///< Up direction.
    double fieldOfViewYDegrees = 45; ///< Vertical field of view.
};

} // namespace bulletgpu::demo
