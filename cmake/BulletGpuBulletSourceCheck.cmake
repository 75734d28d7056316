# bulletgpu_require_bullet_from_source(<bullet3 tree>): stops the configure when the Bullet that
# pkg-config found (BULLET_*) is not the one built from that tree, for example Debian's when
# PKG_CONFIG_PATH does not name the tree's installed lib/pkgconfig: an ExampleBrowser built from
# the tree would then link two different Bullets. Compares the version and two headers.
function(bulletgpu_require_bullet_from_source tree)
  file(STRINGS ${tree}/VERSION tree_version LIMIT_COUNT 1)
  set(found_headers "")
  foreach(header LinearMath/btScalar.h BulletCollision/CollisionDispatch/btCollisionWorld.h)
    find_file(found_header ${header} PATHS ${BULLET_INCLUDE_DIRS} NO_DEFAULT_PATH NO_CACHE)
    if(NOT found_header)
      set(same OFF)
      break()
    endif()
    file(SHA256 ${found_header} found_hash)
    file(SHA256 ${tree}/src/${header} tree_hash)
    if(NOT found_hash STREQUAL tree_hash)
      set(same OFF)
      break()
    endif()
    set(same ON)
    unset(found_header)
  endforeach()
  if(NOT same OR NOT BULLET_VERSION VERSION_EQUAL tree_version)
    message(FATAL_ERROR
      "BulletGpu: BULLETGPU_BULLET_SOURCE_DIR is the bullet3 tree ${tree} (Bullet ${tree_version}), but "
      "pkg-config found Bullet ${BULLET_VERSION} with headers in ${BULLET_INCLUDE_DIRS}, which are not that "
      "tree's: the ExampleBrowser would link two different Bullets. Build and install the tree "
      "(cmake -DBUILD_SHARED_LIBS=ON -DINSTALL_LIBS=ON -DINSTALL_EXTRA_LIBS=ON) and put "
      "<its prefix>/lib/pkgconfig first in PKG_CONFIG_PATH, or run tools/example-browser.sh ${tree}, "
      "which does both.")
  endif()
  message(STATUS "BulletGpu: Bullet ${BULLET_VERSION} in ${BULLET_INCLUDE_DIRS} is the tree ${tree}")
endfunction()
