# ResNet-50's suites (included by tests/CMakeLists.txt). The CPU oracle is its own small
# library so both suites share it; laptime_test_support (tests/gpt2.cmake) brings compare.h's
# device helpers.
add_library(laptime_resnet50_ref STATIC reference/resnet50_ref.cpp)
laptime_target_defaults(laptime_resnet50_ref)
target_link_libraries(laptime_resnet50_ref PUBLIC laptime_models)

# Host only (CI): the oracle against PyTorch's goldens, config, loading and folding.
laptime_test(test_resnet50_reference test_resnet50_reference.cpp LIBS laptime_resnet50_ref laptime_test_support)
# GPU (skips without one): every layer against the oracle and the goldens, in every precision.
laptime_test(test_resnet50_layers test_resnet50_layers.cpp LIBS laptime_resnet50_ref laptime_test_support)
