# The safetensors reader: host-only, runs anywhere (no GPU needed).
laptime_test(test_safetensors test_safetensors.cpp LIBS laptime_weights GTest::gmock)
