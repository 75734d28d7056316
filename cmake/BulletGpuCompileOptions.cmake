# Warnings, sanitizers and validators shared by every BulletGpu target.
add_library(bulletgpu_options INTERFACE)
target_compile_options(bulletgpu_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -ffp-contract=off>
  $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false -Xcompiler=-Wall,-ffp-contract=off>)
if(BULLETGPU_SANITIZE)
  target_compile_options(bulletgpu_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fsanitize=address,undefined,-fno-omit-frame-pointer>)
  target_link_options(bulletgpu_options INTERFACE -fsanitize=address,undefined)
endif()
if(BULLETGPU_VALIDATE OR CMAKE_BUILD_TYPE STREQUAL "Debug")
  target_compile_definitions(bulletgpu_options INTERFACE BULLETGPU_VALIDATE=1)
endif()
if(BULLETGPU_CUDA_DEBUG_SYNC)
  target_compile_definitions(bulletgpu_options INTERFACE BULLETGPU_CUDA_DEBUG_SYNC=1)
endif()
