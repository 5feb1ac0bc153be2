add_library(laptime_test_support STATIC support/compare.cpp reference/gpt2_ref.cpp)
laptime_target_defaults(laptime_test_support)
target_link_libraries(laptime_test_support PUBLIC laptime_models GTest::gtest)
target_compile_definitions(laptime_test_support PUBLIC LAPTIME_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

laptime_test(test_gpt2_reference test_gpt2_reference.cpp LIBS laptime_test_support)
laptime_test(test_gpt2_layers test_gpt2_layers.cpp test_gpt2_golden.cpp LIBS laptime_test_support)
# Whether this build has sm_90 code (the LayerNorm's dependent launch waits only there).
target_compile_definitions(test_gpt2_layers PRIVATE LAPTIME_TEST_SM90=$<BOOL:${LAPTIME_SM90}>)
