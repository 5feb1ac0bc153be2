# The trace layer (bench/trace: nsys SQLite reader, analysis, Perfetto/SVG/JSON) and the
# `laptime analyze` command line. Host-only: runs without a GPU, against the synthetic
# traces in tests/fixtures (make_synthetic_trace.py). bench/analyze.cpp is compiled in
# directly so the test needn't link the models; laptime_core only lends its headers
# (laptime::Error) and CUDA include paths.
if(TARGET laptime_trace)  # bench/CMakeLists.txt: add_subdirectory(trace)
  laptime_test(test_trace test_trace.cpp ${PROJECT_SOURCE_DIR}/bench/analyze.cpp LIBS laptime_trace laptime_core)
endif()

# The committed synthetic fixtures' expected answers are what the generator computes today.
add_test(NAME trace.synthetic_fixtures_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/make_synthetic_trace.py --check)
