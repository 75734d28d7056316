# Narrow-phase engine tests (kernels/narrow).
bulletgpu_add_test(narrow_test
  SOURCES kernels/narrow_predicates_test.cpp kernels/narrow_phase_test.cpp kernels/narrow_front_test.cpp
          kernels/narrow_obb_test.cpp kernels/narrow_data_test.cpp kernels/narrow_ccd_test.cpp
          kernels/narrow_ccd_frame_test.cpp kernels/narrow_ccd_frames_data_test.cpp kernels/narrow_link_ccd_test.cpp
  LIBS bulletgpu_narrow bulletgpu_test_meshes)
# The contact query (issue 33): its own executable, so that the oracle's all-pairs loops build
# apart from the rest.
bulletgpu_add_test(narrow_proximity_test
  SOURCES kernels/narrow_proximity_test.cpp kernels/narrow_proximity_sort_test.cpp
          kernels/narrow_neighbour_cull_test.cpp
  LIBS bulletgpu_narrow bulletgpu_test_meshes)

# Separation distance (kernels/narrow/distance).
bulletgpu_add_test(narrow_distance_test
  SOURCES kernels/narrow_distance_elements_test.cpp kernels/narrow_distance_test.cpp
  LIBS bulletgpu_narrow bulletgpu_test_meshes)
