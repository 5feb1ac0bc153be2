# The laptime CLI: parsing and error messages (host only), plus runs of the real binary.
laptime_test(test_cli test_cli.cpp LIBS laptime_bench GTest::gmock)
target_compile_definitions(test_cli PRIVATE LAPTIME_BINARY="$<TARGET_FILE:laptime>")
add_dependencies(test_cli laptime)
