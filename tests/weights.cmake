# The safetensors reader: host-only, runs anywhere (no GPU needed).
laptime_test(test_safetensors test_safetensors.cpp LIBS laptime_weights GTest::gmock)

# The reader under libFuzzer with ASan+UBSan (tests/fuzz/): off by default, needs clang.
# tests/fuzz/run.sh builds and runs it.
option(LAPTIME_FUZZ "Build the libFuzzer target for the safetensors reader (needs clang)" OFF)
if(LAPTIME_FUZZ)
  add_subdirectory(fuzz)
endif()
