# The per-layer roofline: bench/layer_costs (the formulas, against hand counts; links the
# bench, runs on the host) and trace/roofline (host-only, synthetic and committed traces).
laptime_test(test_layer_costs test_layer_costs.cpp LIBS laptime_bench)
laptime_test(test_roofline test_roofline.cpp LIBS laptime_analyze)
target_compile_definitions(test_roofline PRIVATE PYTHON_EXECUTABLE="${Python3_EXECUTABLE}")
