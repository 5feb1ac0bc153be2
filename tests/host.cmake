# The `laptime` executable in both builds: its own command line, that it maps no CUDA library
# until a GPU subcommand runs, reading .nsys-rep reports (a stand-in nsys on PATH; the real one
# where installed), `laptime scrub` (no committed trace holds an environment), and the runnable
# rows of docs/ERRORS.md run as printed (test_errors_table.cpp), and every list of commands in the
# docs checked against cli/commands.h (test_commands_lists.cpp). Host only: runs the binary, needs
# no GPU.
laptime_test(test_host_cli test_host_cli.cpp test_nsys_report.cpp test_scrub.cpp
             test_errors_table.cpp test_commands_lists.cpp LIBS laptime_cli_host GTest::gmock)
target_compile_definitions(test_host_cli PRIVATE LAPTIME_BINARY="$<TARGET_FILE:laptime>"
                           $<$<NOT:$<BOOL:${LAPTIME_CUDA}>>:LAPTIME_HOST_ONLY>)
add_dependencies(test_host_cli laptime)

# Every JSON report the executable writes on the committed fixtures, and every committed report of
# the GPU commands (results/, tests/fixtures/), validates against its schema under docs/schema/
# (jsonschema, which scripts/setup.sh installs).
add_test(NAME python.schemas
  COMMAND ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/schema
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(python.schemas PROPERTIES ENVIRONMENT "LAPTIME_BINARY=$<TARGET_FILE:laptime>")
