# `laptime kernels` (trace/ncu/): the Nsight Compute CSV reader, the per-layer sums against
# tests/fixtures/ncu/ncu_layers.py's (Python's own csv module), the diagnosis rules at their
# thresholds, malformed reports, and the .ncu-rep conversion (a fake ncu here; the real one
# where it is on PATH). Host only.
laptime_test(test_ncu test_ncu.cpp LIBS laptime_cli_host GTest::gmock)

# The committed expected sums are what the reference script computes today.
add_test(NAME trace.ncu_fixtures_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/ncu/ncu_layers.py --check)
