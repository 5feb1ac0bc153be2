# The laptime CLI: parsing and error messages (host only), plus runs of the real binary.
if(LAPTIME_CUDA)
  laptime_test(test_cli test_cli.cpp LIBS laptime_cli_gpu GTest::gmock)
  target_compile_definitions(test_cli PRIVATE LAPTIME_BINARY="$<TARGET_FILE:laptime>")
  add_dependencies(test_cli laptime)
  # bench/bench_result: the bench's text and JSON from a result made by hand or read from a
  # committed report (host only).
  laptime_test(test_bench_report test_bench_report.cpp LIBS laptime_bench)
  # bench/energy and the clock sampler's NVML reads over a fake NVML (host only).
  laptime_test(test_bench_energy test_bench_energy.cpp LIBS laptime_bench)
endif()

# core/output_file (how every output is written; the rules for one output from
# tests/fixtures/output_rules.json, the table convert.py is held to too): host only, no CUDA.
laptime_test(test_output_file test_output_file.cpp LIBS laptime_host GTest::gmock nlohmann_json::nlohmann_json)
# core/stats: the statistics bench, analyze and diff all report (host only).
laptime_test(test_stats test_stats.cpp LIBS laptime_host)
