// One self-contained HTML report page: `--html FILE` of analyze (one report, or the job view),
// diff, kernels and lab. The page is a view of the JSON document `--json` writes for the same
// command line: those bytes are embedded once, in a <script type="application/json"> element
// (script_json, trace/model/text.h, makes them inert there), and the page's script
// (trace/write/html/page.js) reads them with JSON.parse and builds every element with
// textContent, never markup from data, so a kernel named `<img src=x onerror=...>` is shown as
// those characters. The script and its style (page.css) are inline: the file opens from disk with
// no server and no network. Same JSON, same title: the same bytes.
//
// Which view the page draws is the JSON's `schema`: laptime.analyze/1 (the verdict and its four
// answers, the median steady iteration on a timeline, the tables, the roofline), laptime.job/1,
// laptime.diff/1, laptime.kernels/1 and laptime.kernels.diff/1, laptime.lab/1.
#pragma once

#include <string>

namespace laptime::trace {

// The page for `json_document` (the exact text `--json` writes), titled `title` ("laptime analyze
// run.sqlite"; shown as text).
std::string html_page(const std::string& json_document, const std::string& title);

// Writes html_page() to `path` (trace/model/text.h's write_output: a temporary renamed when
// complete). Throws TraceError when it cannot.
void write_html(const std::string& path, const std::string& json_document, const std::string& title);

}  // namespace laptime::trace
