// The report page's script and style (trace/write/html/page.js, page.css), compiled in from
// those files by trace/write/html/embed.cmake, so the page needs nothing beside the executable.
#pragma once

namespace laptime::trace {

extern const char* const kPageJs;
extern const char* const kPageCss;

}  // namespace laptime::trace
