// SPDX-License-Identifier: Zlib
#pragma once

#include <BulletCollision/CollisionDispatch/btCollisionObject.h>

#include <cstdint>
#include <utility>

namespace bulletgpu {

/// A collision object's place in its world (btCollisionObject::getWorldArrayIndex), the key that
/// orders gathered pairs: the same on every run of the same scene, where addresses are not, so
/// contacts reach Bullet's solver in the same order every time. Objects outside a world (index
/// -1) come last, in address order.
inline std::pair<std::uint32_t, std::uintptr_t> worldOrder(const btCollisionObject* object) {
    return {static_cast<std::uint32_t>(object->getWorldArrayIndex()), reinterpret_cast<std::uintptr_t>(object)};
}

} // namespace bulletgpu
