# The per-layer roofline: the layer costs (layers/layer_cost.h's formulas against hand counts and
# bench/layer_costs' writer against committed sidecars on the host; on a GPU, the built models'
# costs against those sidecars) and trace/analyses/roofline (host-only, synthetic and committed traces).
if(LAPTIME_CUDA)
  laptime_test(test_layer_costs test_layer_costs.cpp LIBS laptime_cli_gpu)
endif()
laptime_test(test_roofline test_roofline.cpp LIBS laptime_cli_host)
target_compile_definitions(test_roofline PRIVATE PYTHON_EXECUTABLE="${Python3_EXECUTABLE}")
