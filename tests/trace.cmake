# trace/ (nsys SQLite reader, analysis, Perfetto/SVG/JSON) and the `laptime analyze`
# command line. Host-only: runs without a GPU, against the synthetic traces in
# tests/fixtures (make_synthetic_trace.py) and the real captures beside them.
laptime_test(test_trace test_trace.cpp test_trace_hostile.cpp LIBS laptime_analyze)

# The committed damaged traces (make_hostile_traces.py) are what the generator writes today.
add_test(NAME trace.hostile_fixtures_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/make_hostile_traces.py --check)

# The committed synthetic fixtures' expected answers are what the generator computes today.
add_test(NAME trace.synthetic_fixtures_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/make_synthetic_trace.py --check)
