# bulletgpu-demo: its library (options, runs, comparison, reports) and the executable itself.
bulletgpu_add_test(demo_app_test SOURCES demos/demo_app_test.cpp LIBS bulletgpu_demo_app)
target_compile_definitions(demo_app_test PRIVATE BULLETGPU_SCENES_DIR="${PROJECT_SOURCE_DIR}/scenes")

# The executable end to end: reports, a rendered frame, a chart, and clear errors.
set(demo_out ${CMAKE_CURRENT_BINARY_DIR}/demo_cli)
add_test(NAME demo_cli_reports
         COMMAND bulletgpu-demo --scene ${PROJECT_SOURCE_DIR}/scenes/benchmark-2-1000-stack.json
                 --compare dbvt,bulletgpu-cpu --steps 20 --json ${demo_out}/report.json --csv ${demo_out}/steps.csv
                 --plot ${demo_out}/chart.png --render ${demo_out}/frames --render-every 10 --size 320x180)
set_tests_properties(demo_cli_reports PROPERTIES LABELS cpu
  PASS_REGULAR_EXPRESSION "bulletgpu-cpu against dbvt: step [0-9.]+x")
add_test(NAME demo_cli_files_written
         COMMAND ${CMAKE_COMMAND} -DOUT=${demo_out} -P ${CMAKE_CURRENT_SOURCE_DIR}/demos/check_demo_outputs.cmake)
set_tests_properties(demo_cli_files_written PROPERTIES LABELS cpu DEPENDS demo_cli_reports)
add_test(NAME demo_cli_missing_scene COMMAND bulletgpu-demo --scene ${demo_out}/no-such-scene.json --steps 1)
set_tests_properties(demo_cli_missing_scene PROPERTIES LABELS cpu
  PASS_REGULAR_EXPRESSION "bulletgpu-demo: .*no-such-scene.json")
add_test(NAME demo_cli_unknown_broadphase COMMAND bulletgpu-demo --broadphase octree --steps 1)
set_tests_properties(demo_cli_unknown_broadphase PROPERTIES LABELS cpu
  PASS_REGULAR_EXPRESSION "unknown broadphase 'octree'")

# Bullet's narrow phase against BulletGpu's on GImpact meshes, same broadphase.
add_test(NAME demo_cli_narrow_compare
         COMMAND bulletgpu-demo --scene ${CMAKE_CURRENT_SOURCE_DIR}/demos/scene_gimpact_fixture.json
                 --broadphase dbvt --narrow=compare --steps 60)
set_tests_properties(demo_cli_narrow_compare PROPERTIES LABELS cpu
  PASS_REGULAR_EXPRESSION "dbvt/bulletgpu against dbvt/bullet: step [0-9.]+x, broad phase [0-9.]+x, narrow phase [0-9.]+x faster")

# A soft scene of scenes/ stepped `steps` times on Bullet's solver and on bulletgpu's (CPU), its
# self-intersections counted: Bullet's run passes through itself when `bullet_intersects`, ours never.
function(bulletgpu_add_soft_compare_test name scene steps bullet_intersects)
  add_test(NAME ${name}
           COMMAND bulletgpu-demo --scene ${PROJECT_SOURCE_DIR}/scenes/${scene} --broadphase dbvt
                   --soft-solver bullet,bulletgpu-cpu --self-intersections --steps ${steps})
  if(bullet_intersects)
    set(bullet_steps "[1-9][0-9]*")
  else()
    set(bullet_steps "0")
  endif()
  set_tests_properties(${name} PROPERTIES LABELS cpu PASS_REGULAR_EXPRESSION
    "dbvt/bullet: soft self-intersections after ${bullet_steps} of ${steps} steps.*dbvt/bulletgpu-cpu: soft self-intersections after 0 of ${steps} steps")
endfunction()

# The folding curtain passes through itself with Bullet's soft-body solver (from about step 35).
bulletgpu_add_soft_compare_test(demo_cli_soft_compare soft-cloth-fold.json 60 TRUE)
# The twisted strip in Bullet's btDeformableMultiBodyDynamicsWorld (from step 288) and in
# bulletgpu::DeformableMultiBodyDynamicsWorld.
bulletgpu_add_soft_compare_test(demo_cli_deformable_compare deformable-twisted-strip.json 400 TRUE)
# Bullet's DeformableSelfCollision example in both worlds: the two cloths land, neither through itself.
bulletgpu_add_soft_compare_test(demo_cli_deformable_self_collision deformable-self-collision.json 240 FALSE)
