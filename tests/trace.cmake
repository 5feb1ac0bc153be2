# trace/ (nsys SQLite reader, analysis, Perfetto/SVG/JSON) and the `laptime analyze`
# command line. Host-only: runs without a GPU, against the synthetic traces in
# tests/fixtures (make_synthetic_trace.py) and the real captures beside them.
laptime_test(test_trace test_trace.cpp LIBS laptime_analyze)

# The committed synthetic fixtures' expected answers are what the generator computes today.
add_test(NAME trace.synthetic_fixtures_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/make_synthetic_trace.py --check)

# `laptime diff` and the steady-state rule (issue 9): synthetic trace pairs with known shifts
# (tests/fixtures/make_diff_fixtures.py) and the real captures.
laptime_test(test_diff test_diff.cpp LIBS laptime_analyze)
add_test(NAME trace.diff_fixtures_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/make_diff_fixtures.py --check)
