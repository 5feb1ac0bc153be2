#include "trace/write/job_text.h"

#include <string>
#include <vector>

#include "trace/model/format.h"
#include "trace/model/text.h"
#include "trace/analyses/top.h"

namespace laptime::trace {

using detail::format;
using detail::print_wrapped;

namespace {

// The table of every row, the slowest, fastest and median marked.
void print_rows(const Job& job, std::FILE* out) {
  bool processes = false;
  for (const JobRow& r : job.rows) processes = processes || r.pid.has_value();
  std::vector<std::vector<std::string>> rows{{"report"}};
  if (processes) rows[0].push_back("process");
  for (const char* h : {"lap (ms)", "fill", "verdict", "steady", ""}) rows[0].push_back(h);
  for (size_t i = 0; i < job.rows.size(); ++i) {
    const JobRow& r = job.rows[i];
    std::string mark;
    if (job.spread) {
      const JobSpread& s = *job.spread;
      mark = i == s.slowest ? "slowest" : i == s.fastest ? "fastest" : "";
      if (i == s.median) mark += mark.empty() ? "median" : ", median";
    }
    std::vector<std::string> row{detail::clip(escape_name(r.file))};
    if (processes)
      row.push_back(r.pid ? std::to_string(*r.pid) +
                                (r.process.empty() ? "" : " (" + detail::clip(escape_name(r.process)) + ")")
                          : "-");
    for (std::string cell : {format("%.3f", r.lap_ms), format("%.1f%%", r.span_fill_pct),
                             std::string(bound_name(r.bound)), std::to_string(r.steady_iterations), mark})
      row.push_back(std::move(cell));
    rows.push_back(std::move(row));
  }
  detail::print_table(out, rows, processes ? "llrrlrl" : "lrrlrl", 2);
  std::fprintf(out,
               "  (lap: each report's steady-state lap, as `laptime analyze FILE` gives it; fill: median share of "
               "each iteration's GPU span the GPU is busy)\n");
}

void print_straggler(const Straggler& st, std::optional<int> top, std::FILE* out) {
  const Diff& d = st.diff;
  std::fprintf(out,
               "\nThe straggler against the median report (per layer: medians over steady iterations, 95%% "
               "bootstrap interval of the change)\n");
  std::vector<std::vector<std::string>> rows{
      {"layer", "median (us)", "slowest (us)", "change (us)", "change", "95% interval", "label"}};
  const size_t shown = 1 + text_rows(top, d.rows.size() - 1);
  for (size_t i = 0; i < shown && i < d.rows.size(); ++i) {
    const DiffRow& r = d.rows[i];
    const bool both = r.label != Label::OnlyBefore && r.label != Label::OnlyAfter;
    rows.push_back({detail::clip(r.name), r.label == Label::OnlyAfter ? "-" : format("%.1f", r.before_ns / 1e3),
                    r.label == Label::OnlyBefore ? "-" : format("%.1f", r.after_ns / 1e3),
                    format("%+.1f", r.change_ns / 1e3), both ? format("%+.1f%%", r.change_pct) : "",
                    both && r.before_ns > 0
                        ? format("%+.1f%% .. %+.1f%%", 100 * r.ci.lo / r.before_ns, 100 * r.ci.hi / r.before_ns)
                        : "",
                    std::string(label_name(r.label)) + (static_cast<int>(i) == st.layer ? "  <- the difference" : "")});
  }
  detail::print_table(out, rows, "lrrrrrl", 2);
  detail::print_more_rows(out, d.rows.size() - std::min(shown, d.rows.size()), 2);
  std::fprintf(out, "\n");
  print_wrapped(out, st.sentence, 2);
  // On one line, never wrapped: a line break inside a command pasted into a shell ends it there.
  std::fprintf(out, "  In full: %s\n", escape_name(st.command).c_str());
}

}  // namespace

void print_job(const Job& job, std::FILE* out) {
  size_t processes = 0;
  for (const JobRow& r : job.rows) processes += r.pid.has_value();
  std::fprintf(out, "laptime analyze: %s", detail::plural(job.inputs.size(), "report", "reports").c_str());
  if (processes) std::fprintf(out, ", %s", detail::plural(job.rows.size(), "loop", "loops").c_str());
  std::fprintf(out, "\n");
  std::fprintf(out, "  read        %s at a time, each analyzed as `laptime analyze FILE` would\n",
               detail::plural(job.workers, "report", "reports").c_str());
  for (const std::string& n : job.notes) {
    std::fprintf(out, "  note\n");
    print_wrapped(out, n, 4);
  }
  std::fprintf(out, "\n");
  print_rows(job, out);
  if (job.spread) {
    const JobSpread& s = *job.spread;
    const JobRow &slow = job.rows[s.slowest], &med = job.rows[s.median], &fast = job.rows[s.fastest];
    std::fprintf(out,
                 "\nSpread: slowest %.3f ms, median %.3f ms, fastest %.3f ms; the slowest is %.1f%% above the "
                 "median, %.1f%% above the fastest\n",
                 slow.lap_ms, med.lap_ms, fast.lap_ms, s.slowest_over_median_pct, s.slowest_over_fastest_pct);
  }
  if (job.straggler) print_straggler(*job.straggler, job.top, out);
  if (job.gate_pct) {
    if (job.gate_failed)
      std::fprintf(out, "\nGate: FAILED: %s\n", job.gate_reason.c_str());
    else
      std::fprintf(out, "\nGate: passed (--fail-if-spread %g%%%s).\n", *job.gate_pct,
                   job.spread ? "" : ": one loop, no spread");
  }
}

}  // namespace laptime::trace
