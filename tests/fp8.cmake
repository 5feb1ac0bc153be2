# fp8 (Precision::FP8). Host only (CI): the e4m3 reference against its definition and CUDA's
# conversion, and the numbers the recipe and the tolerances come from. GPU (skips without one,
# or where fp8 cannot run): the kernels, the fp8 linear layer and GPT-2 against the references.
# The e4m3 rounding (fp8_ref) and GPT-2's fp8 recipe emulated on the oracle (gpt2_fp8_ref).
add_library(laptime_fp8_ref STATIC reference/fp8_ref.cpp reference/gpt2_fp8_ref.cpp)
laptime_target_defaults(laptime_fp8_ref)
target_link_libraries(laptime_fp8_ref PUBLIC laptime_test_support)
laptime_test(test_fp8_reference test_fp8_reference.cpp LIBS laptime_fp8_ref laptime_models)
laptime_test(test_fp8_layers test_fp8_layers.cpp LIBS laptime_fp8_ref laptime_test_support)
# fp8 ResNet-50's e4m3 stream (layers/resnet50/e4m3_block.h): its kernels, two blocks against the recipe, the tiny model in a graph.
laptime_test(test_e4m3_stream test_e4m3_stream.cpp LIBS laptime_fp8_ref laptime_test_support)
