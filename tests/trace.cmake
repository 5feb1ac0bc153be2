# trace/ (nsys SQLite reader, analysis, Perfetto/SVG/JSON) and the `laptime analyze`
# command line. Host-only: runs without a GPU, against the synthetic traces in
# tests/fixtures (make_synthetic_trace.py) and the real captures beside them.
laptime_test(test_trace test_trace.cpp test_trace_hostile.cpp LIBS laptime_cli_host)

# The committed damaged traces (make_hostile_traces.py) are what the generator writes today.
add_test(NAME trace.hostile_fixtures_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/make_hostile_traces.py --check)

# The committed synthetic fixtures' expected answers are what the generator computes today.
add_test(NAME trace.synthetic_fixtures_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/make_synthetic_trace.py --check)

# `laptime diff` and the steady-state rule: synthetic trace pairs with known shifts
# (tests/fixtures/make_diff_fixtures.py) and the real captures.
laptime_test(test_diff test_diff.cpp LIBS laptime_cli_host)
# Energy per forward beside the lap, from two bench reports' blocks written by the test.
laptime_test(test_diff_energy test_diff_energy.cpp LIBS laptime_cli_host)

# Many reports of one job: each row against the single-file command's JSON, the
# straggler against the generators' labels, the pool against one worker.
laptime_test(test_job test_job.cpp LIBS laptime_cli_host)
# The nsys -> ncu handoff for any program (kernels --command --from).
laptime_test(test_ncu_handoff test_ncu_handoff.cpp LIBS laptime_trace)

# Advice in the user's terms: who made a trace, and the remedies its verdict names.
laptime_test(test_advice test_advice.cpp LIBS laptime_trace)
# The job view's scale: reports read in parallel within 2x of the largest alone x reports / cores,
# memory bounded by the reports in flight (tests/fixtures/job_scale.py; docs/history/analyzer.md has 100 of them).
add_test(NAME trace.job_scale
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/job_scale.py $<TARGET_FILE:laptime>
    ${CMAKE_CURRENT_BINARY_DIR}/job_scale --reports 24)
# A bound on wall time over the machine's cores: measured with the cores to itself, not beside
# ctest -j's other tests.
set_tests_properties(trace.job_scale PROPERTIES RUN_SERIAL TRUE)
add_test(NAME trace.job_fixtures_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/make_job_traces.py --check)
add_test(NAME trace.diff_fixtures_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/make_diff_fixtures.py --check)

# The lesson's own PyTorch loop (tests/fixtures/lesson), analyzed with no flags and checked
# against the `nsys stats` CSVs captured beside it; the rules that find iteration ranges, on the
# traces make_pattern_traces.py writes with its own answers; laptime's own --pitfall captures
# (scripts/dev/captures.sh pitfalls; skipped, with the reason, until committed).
laptime_test(test_trace_lesson test_trace_lesson.cpp test_trace_patterns.cpp test_trace_pitfalls.cpp LIBS laptime_trace)
target_include_directories(test_trace_lesson PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
add_test(NAME trace.pattern_fixtures_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/make_pattern_traces.py --check)

# Several processes in one capture: each process's loop against the figures
# process_reference.py computes from the SQLite of the traces make_process_traces.py writes; the
# command's sections, JSON, --pid, and diff's refusal and pairing.
laptime_test(test_trace_processes test_trace_processes.cpp LIBS laptime_cli_host)
add_test(NAME trace.process_fixtures_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/make_process_traces.py --check)

# The verdict's heading and where the syncs sit: the traces make_verdict_traces.py
# writes and the real captures, against what verdict_reference.py computes from their tables.
laptime_test(test_trace_verdict test_trace_verdict.cpp LIBS laptime_trace)
target_include_directories(test_trace_verdict PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
add_test(NAME trace.verdict_reference_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/verdict_reference.py --check)

# CUDA Graph replays: the H200 captures in tests/fixtures/graph against the figures
# graph/reference.py computes from their tables, and the edge cases make_graph_traces.py writes
# with its answers.
add_test(NAME trace.graph_reference_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/graph/reference.py --check)
add_test(NAME trace.graph_fixtures_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/make_graph_traces.py --check)
laptime_test(test_trace_graph test_trace_graph.cpp LIBS laptime_trace)
target_include_directories(test_trace_graph PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})

# The steady state chosen from the data: every graph, compiled and
# several-process capture's headline against the GPU's own lap, and the torch.compile
# reduce-overhead captures (tests/fixtures/compiled) against their independent reference.
add_test(NAME trace.compiled_reference_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/compiled/reference.py --check)
laptime_test(test_trace_steady test_trace_steady.cpp LIBS laptime_trace)

# Reports that never contradict themselves on the committed captures (one busy, one steady, the
# syncs costliest first, SAME within, the timeline of one iteration, the diff picture's marks), the
# refusals that come before any work (the binary: nothing printed, nothing written), the progress
# line (a fake clock, and a pseudo-terminal) and the Perfetto window.
laptime_test(test_trace_semantics test_trace_semantics.cpp LIBS laptime_cli_host util)
target_compile_definitions(test_trace_semantics PRIVATE LAPTIME_BINARY="$<TARGET_FILE:laptime>")
add_dependencies(test_trace_semantics laptime)


# The analyzer at scale and on traces built to cost it memory or time:
# make_scale_hostile.py's small hostile traces and a capture grown to 10^5 kernels
# (grow_trace.py), written into the build folder first, then analyzed under RLIMIT_AS.
set(LAPTIME_SCALE_TRACES ${CMAKE_CURRENT_BINARY_DIR}/scale_traces)
add_test(NAME trace.scale_traces_hostile
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/make_scale_hostile.py ${LAPTIME_SCALE_TRACES})
add_test(NAME trace.scale_traces_grown
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/grow_trace.py
    ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/lesson/gpt2_max.sqlite ${LAPTIME_SCALE_TRACES}/grown_1e5.sqlite
    --kernels 100000)
# ... and with a range per op as PyTorch's emit_nvtx writes them, for diff's linearity.
add_test(NAME trace.scale_traces_grown_emit
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/grow_trace.py
    ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/lesson/gpt2_max.sqlite ${LAPTIME_SCALE_TRACES}/grown_emit_1e5.sqlite
    --kernels 100000 --emit-nvtx)
set_tests_properties(trace.scale_traces_hostile trace.scale_traces_grown trace.scale_traces_grown_emit
  PROPERTIES FIXTURES_SETUP scale_traces)
add_executable(test_trace_scale test_trace_scale.cpp)
laptime_target_defaults(test_trace_scale)
target_link_libraries(test_trace_scale PRIVATE GTest::gtest GTest::gtest_main laptime_trace)
target_compile_definitions(test_trace_scale PRIVATE LAPTIME_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_include_directories(test_trace_scale PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/..)
gtest_discover_tests(test_trace_scale DISCOVERY_MODE PRE_TEST
  # One variable: gtest_discover_tests splits a ';' list into arguments, and the second one then
  # swallowed FIXTURES_REQUIRED and SKIP_REGULAR_EXPRESSION (the scale tests ran before their
  # traces existed and a skip read as a pass). LAPTIME_SOURCE_DIR is compiled in.
  PROPERTIES ENVIRONMENT "LAPTIME_SCALE_TRACES=${LAPTIME_SCALE_TRACES}"
             FIXTURES_REQUIRED scale_traces
             SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")

# The PyTorch profiler's (Kineto) traces: the reader against tests/fixtures/kineto/reference.py's
# figures on real traces (HTA's and TraceLens's test data, trimmed) and synthetic ones, what a file
# is by its content, exact times, and hostile files.
find_package(ZLIB REQUIRED)  # the tests gzip their hostile files
laptime_test(test_kineto test_kineto.cpp LIBS laptime_trace ZLIB::ZLIB)
target_include_directories(test_kineto PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/..)
add_test(NAME trace.kineto_reference_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/kineto/reference.py --check)
add_test(NAME trace.kineto_synthetic_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/kineto/make_synthetic.py --check)
