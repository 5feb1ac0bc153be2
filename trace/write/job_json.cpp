#include "trace/write/job_json.h"

#include <nlohmann/json.hpp>

#include "trace/write/diff_json.h"

namespace laptime::trace {

namespace {

nlohmann::json row_json(const JobRow& r) {
  using nlohmann::json;
  json iterations = json::array();
  for (const JobIteration& it : r.iterations) {
    json x{{"index", it.index}, {"steady", it.steady}, {"host_ns", it.host_ns}};
    if (it.has_gpu) {
      x["gpu_ns"] = it.gpu_ns;
      x["span_fill_pct"] = it.span_fill_pct;
    }
    iterations.push_back(std::move(x));
  }
  json layers = json::array();
  for (const JobLayer& l : r.layers) layers.push_back({{"range", l.range}, {"count", l.count}, {"time_ns", l.time_ns}});
  json j{{"file", r.file},
         {"gpu", r.gpu},
         {"program", r.program},
         {"lap_ms", r.lap_ms},
         {"lap_source", r.lap_source},
         {"span_fill_pct", r.span_fill_pct},
         {"bound", bound_name(r.bound)},
         {"verdict", r.verdict},
         {"steady_iterations", r.steady_iterations},
         {"notes", r.notes},
         {"iterations", std::move(iterations)},
         {"layers", std::move(layers)}};
  if (r.pid) {
    j["pid"] = *r.pid;
    j["process"] = r.process;
  }
  return j;
}

// A row as the summary names it.
nlohmann::json which(const Job& job, size_t i) {
  const JobRow& r = job.rows[i];
  nlohmann::json j{{"row", i}, {"file", r.file}, {"lap_ms", r.lap_ms}};
  if (r.pid) j["pid"] = *r.pid;
  return j;
}

}  // namespace

nlohmann::json job_to_json(const Job& job) {
  using nlohmann::json;
  json reports = json::array();
  for (const JobRow& r : job.rows) reports.push_back(row_json(r));
  json summary{{"inputs", job.inputs.size()}, {"rows", job.rows.size()}, {"notes", job.notes}};
  summary["spread"] = nullptr;
  summary["straggler"] = nullptr;
  if (job.spread) {
    const JobSpread& s = *job.spread;
    summary["spread"] = {{"slowest", which(job, s.slowest)},
                         {"fastest", which(job, s.fastest)},
                         {"median", which(job, s.median)},
                         {"slowest_over_median_pct", s.slowest_over_median_pct},
                         {"slowest_over_fastest_pct", s.slowest_over_fastest_pct}};
  }
  if (job.straggler) {
    const Straggler& st = *job.straggler;
    json layer = nullptr;
    if (st.layer >= 0) layer = st.diff.rows[static_cast<size_t>(st.layer)].name;
    summary["straggler"] = {
        {"slowest", which(job, st.slowest)}, {"median", which(job, st.median)}, {"layer", layer},
        {"sentence", st.sentence},           {"command", st.command},           {"diff", diff_to_json(st.diff)}};
  }
  if (job.gate_pct)
    summary["gate"] = {{"fail_if_spread_pct", *job.gate_pct}, {"failed", job.gate_failed}, {"reason", job.gate_reason}};
  return json{{"schema", "laptime.job/1"}, {"reports", std::move(reports)}, {"job", std::move(summary)}};
}

}  // namespace laptime::trace
