# The report page (`--html`, trace/write/html_page.h). Host only.
#  - test_html: the escaping for HTML, JS strings and the embedded JSON against hostile names and
#    random bytes, the page's bytes, the timeline against timeline_reference.py, the bound, and
#    every command's --html beside its --json (runs the binary);
#  - html.browser: every report kind opened from file:// in headless Chromium (no console error,
#    the page's figures against its JSON, a layer row's spans highlighted, hostile names inert;
#    every committed trace's page without an error); skipped, saying why, where no Chromium is
#    installed (.ci/run installs one).
laptime_test(test_html test_html.cpp LIBS laptime_cli_host)
target_compile_definitions(test_html PRIVATE LAPTIME_BINARY="$<TARGET_FILE:laptime>")
add_dependencies(test_html laptime)
add_test(NAME html.timeline_reference_current
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/html/timeline_reference.py --check)

# A page from a JSON document on disk (the lab's: `laptime lab` runs on a GPU, its committed
# reports are pages all the same).
add_executable(write_page support/write_page.cpp)
laptime_target_defaults(write_page)
target_link_libraries(write_page PRIVATE laptime_trace)
add_test(NAME html.browser
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/browser/test_pages.py
    --laptime $<TARGET_FILE:laptime> --write-page $<TARGET_FILE:write_page>
    --work ${CMAKE_CURRENT_BINARY_DIR}/browser)
set_tests_properties(html.browser PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
