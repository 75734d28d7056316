# Installs the library, its public headers, the CMake package BulletGpu and bulletgpu.pc.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS BulletGpu bulletgpu_adapter bulletgpu_narrow bulletgpu_kernels EXPORT BulletGpuTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/plugin/include/bulletgpu ${PROJECT_SOURCE_DIR}/kernels/include/bulletgpu
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT BulletGpuTargets NAMESPACE BulletGpu:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/BulletGpu)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/BulletGpuConfig.cmake.in
  ${PROJECT_BINARY_DIR}/BulletGpuConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/BulletGpu)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/BulletGpuConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/BulletGpuConfig.cmake ${PROJECT_BINARY_DIR}/BulletGpuConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/BulletGpu)

set(BULLETGPU_PC_CFLAGS "")
if(BULLETGPU_DOUBLE_PRECISION)
  set(BULLETGPU_PC_CFLAGS "-DBT_USE_DOUBLE_PRECISION")
endif()
set(BULLETGPU_PC_CUDA_LIBS "")
if(BULLETGPU_WITH_CUDA)
  set(BULLETGPU_PC_CUDA_LIBS "-L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/bulletgpu.pc.in ${PROJECT_BINARY_DIR}/bulletgpu.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/bulletgpu.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
