# Renderer and chart tests (demos/render).
bulletgpu_add_test(render_test SOURCES demos/render_test.cpp LIBS bulletgpu_demo_render)
