# Scene-file tests (demos/scene).
bulletgpu_add_test(scene_test SOURCES demos/scene_test.cpp demos/scene_gimpact_test.cpp demos/scene_soft_solver_test.cpp demos/scene_deformable_test.cpp LIBS bulletgpu_demo_scene)
target_compile_definitions(scene_test PRIVATE BULLETGPU_SCENES_DIR="${PROJECT_SOURCE_DIR}/scenes"
                                              BULLETGPU_SCENE_FIXTURES_DIR="${CMAKE_CURRENT_SOURCE_DIR}/demos")
