#include "trace/write/analysis_json.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "trace/analyses/top.h"
#include "trace/model/validate.h"
#include "trace/write/timeline_json.h"

namespace laptime::trace {

namespace {

// The first rows of a table that the JSON holds (trace/analyses/top.h), as a range to loop over.
template <class Row>
struct FirstRows {
  const std::vector<Row>& rows;
  size_t n;
  auto begin() const { return rows.begin(); }
  auto end() const { return rows.begin() + static_cast<std::ptrdiff_t>(n); }
};
template <class Row>
FirstRows<Row> first_rows(const std::vector<Row>& rows, std::optional<int> top) {
  return {rows, json_rows(top, rows.size())};
}
// The same for a list that grows with the trace's length.
template <class Row>
FirstRows<Row> first_of_list(const std::vector<Row>& rows, std::optional<int> top) {
  return {rows, json_list_rows(top, rows.size())};
}

// Section 3: the categories, the top kernels, the by-layer tables and what CUDA Graphs ran.
nlohmann::json kernel_mix_json(const Analysis& a) {
  using nlohmann::json;
  json cats = json::array();
  for (const CategoryRow& c : a.categories)
    cats.push_back({{"category", category_name(c.category)}, {"count", c.count}, {"time_ns", c.time}});
  json kernels = json::array();
  for (const KernelRow& k : first_rows(a.kernels, a.top))
    kernels.push_back({{"name", k.name},
                       {"category", category_name(k.category)},
                       {"count", k.count},
                       {"time_ns", k.time},
                       {"min_ns", k.min},
                       {"max_ns", k.max}});
  auto range_rows = [&a](const std::vector<RangeRow>& rows, auto first) {
    json out = json::array();
    for (const RangeRow& r : first(rows, a.top)) {
      json by = json::object();
      for (int c = 0; c < kCategoryCount; ++c)
        if (r.time_by_category[c]) by[category_name(static_cast<Category>(c))] = r.time_by_category[c];
      out.push_back({{"range", r.range}, {"count", r.count}, {"time_ns", r.time}, {"by_category_ns", by}});
      if (r.graph_replay_time) out.back()["graph_replay_ns"] = r.graph_replay_time;
    }
    return out;
  };
  nlohmann::json mix = {{"gpu_time_ns", a.gpu_time},
                        {"categories", cats},
                        {"kernels", kernels},
                        {"ranges", range_rows(a.ranges, first_of_list<RangeRow>)},
                        {"range_patterns", range_rows(a.range_patterns, first_rows<RangeRow>)}};
  for (const auto& [key, total, held] :
       {std::tuple<const char*, size_t, size_t>{"kernels", a.kernels.size(), json_rows(a.top, a.kernels.size())},
        {"ranges", a.ranges.size(), json_list_rows(a.top, a.ranges.size())},
        {"range_patterns", a.range_patterns.size(), json_rows(a.top, a.range_patterns.size())}})
    if (held < total) mix[std::string(key) + "_omitted"] = total - held;
  if (a.graphs.any()) {  // only for captures of CUDA Graphs: other reports keep their shape
    const GraphSummary& g = a.graphs;
    mix["graphs"] = {{"replays", g.replays},
                     {"replay_ns", g.replay_time},
                     {"graph_ids", g.graphs},
                     {"node_ops", g.node_ops},
                     {"node_ops_named_by_creation", g.node_ops_named},
                     {"node_ns", g.node_time},
                     {"launches", g.launches},
                     {"exec_updates", g.updates},
                     {"kernels_traced", g.replays == 0}};
  }
  return mix;
}

// Section 4: the synchronization calls inside and outside the steady iterations, costliest first
// and bounded as lists that grow with the trace (top.h), and their sums over every call.
nlohmann::json sync_json(const Analysis& a) {
  using nlohmann::json;
  auto sync_call = [](const SyncCall& s) {
    return json{{"kind", sync_kind_name(s.kind)},
                {"api", s.api.str()},
                {"iteration", s.iteration},
                {"warmup", s.warmup},
                {"where", sync_where_name(s.where)},
                {"range", s.range.str()},
                {"start_ns", s.start},
                {"duration_ns", s.duration},
                {"copy", s.detail},
                {"stream", s.stream},
                {"effect", sync_effect_name(s.effect)},
                {"pending_ns", s.pending}};
  };
  // The calls a list holds, and what it left out ({count, host_wait_ns}) or null.
  auto list = [&](const std::vector<SyncCall>& all) {
    json held = json::array();
    for (const SyncCall& s : first_of_list(all, a.top)) held.push_back(sync_call(s));
    json omitted = nullptr;
    if (held.size() < all.size()) {
      Ns wait = 0;
      for (size_t i = held.size(); i < all.size(); ++i) wait += all[i].duration;
      omitted = {{"count", all.size() - held.size()}, {"host_wait_ns", wait}};
    }
    return std::make_pair(std::move(held), std::move(omitted));
  };
  auto [calls, calls_omitted] = list(a.syncs);
  auto [elsewhere, elsewhere_omitted] = list(a.syncs_elsewhere);
  json sums = json::array();
  for (const SyncSummary& s : a.sync_summary)
    sums.push_back({{"kind", sync_kind_name(s.kind)},
                    {"count", s.count},
                    {"per_iteration", a.steady_count ? double(s.count) / a.steady_count : 0.0},
                    {"blocked_ns", s.blocked},
                    {"stalled_ns", s.stalled},
                    {"stalls", s.stalls},
                    {"returned_at_once", s.returned_at_once},
                    {"ranges", s.ranges}});
  json out = {{"api_trace", a.has_api_trace},
              {"compute_stream", a.compute_stream},
              {"host_wait_ns", a.sync_wait},
              {"stall_ns", a.sync_stall},
              {"gpu_floor_ms", a.gpu_floor_ms},
              {"lap_without_ms", a.lap_without_syncs_ms},
              {"summary", sums}};
  out["calls"] = std::move(calls);  // an initializer list would copy them
  if (!calls_omitted.is_null()) out["calls_omitted"] = std::move(calls_omitted);
  out["outside_steady"] = std::move(elsewhere);
  if (!elsewhere_omitted.is_null()) out["outside_steady_omitted"] = std::move(elsewhere_omitted);
  return out;
}

}  // namespace

// --- JSON ----------------------------------------------------------------------------------------

nlohmann::json to_json(const Analysis& a) {
  using nlohmann::json;
  auto summary = [](const stats::Summary& s) {
    return json{{"n", s.n}, {"mean", s.mean}, {"median", s.median}, {"min", s.min}, {"max", s.max}};
  };
  json j;
  j["schema"] = "laptime.analyze/1";
  j["source"] = a.source;
  j["gpu"] = a.gpu;
  j["program"] = program_name(a.program);
  j["notes"] = a.notes;
  j["range"] = a.range_name;
  j["dropped_rows"] = dropped_json(a.dropped);
  j["range_rule"] = a.range_rule;
  j["warmup_rule"] = a.warmup_rule;
  j["steady_rule"] = a.steady_rule;
  j["gap_threshold_us"] = a.gap_threshold_us;
  j["steady_iterations"] = a.steady_count;
  json iters = json::array();
  for (const Iteration& it : a.iterations) {
    json x{{"index", it.index},    {"warmup", it.warmup},      {"host_ahead", it.host_ahead}, {"steady", it.steady()},
           {"start_ns", it.start}, {"host_ns", it.duration()}, {"kernels", it.kernels}};
    if (it.has_gpu) {
      x["gpu_start_ns"] = it.gpu_start;
      x["gpu_ns"] = it.gpu_span();
      x["busy_ns"] = it.busy;
      x["span_fill_pct"] = it.span_fill_pct();
      x["gaps"] = it.gaps;
      x["gap_ns"] = it.gap_time;
      x["host_wait_ns"] = it.host_wait;
    }
    iters.push_back(std::move(x));
  }
  // Moved, not copied, here and below: a million-kernel trace's iterations and calls are tens of
  // megabytes of objects.
  j["iterations"] = std::move(iters);
  j["time_ms"] = {{"host", summary(a.host_ms)}, {"gpu", summary(a.gpu_ms)}, {"period", summary(a.period_ms)},
                  {"busy", summary(a.busy_ms)}, {"lap", a.lap_ms},          {"lap_source", a.lap_source}};
  if (!a.lap_reason.empty()) j["time_ms"]["lap_reason"] = a.lap_reason;
  Ns gap_time = 0, host_wait = 0;
  for (const Gap& g : a.gaps) {
    gap_time += g.duration();
    host_wait += g.cause == GapCause::HostWait ? g.duration() : 0;
  }
  json gaps = json::array();
  for (size_t i = 0; i < text_rows(a.top, a.gaps.size()); ++i) {  // the text's cut (trace/analyses/top.h)
    const Gap& g = a.gaps[i];
    gaps.push_back({{"iteration", g.iteration},
                    {"start_ns", g.start},
                    {"duration_ns", g.duration()},
                    {"cause", gap_cause_name(g.cause)},
                    {"before", g.before.str()},
                    {"after", g.after.str()},
                    {"launch", g.launch.str()},
                    {"launch_start_ns", g.launch_start},
                    {"cpu_api", g.cpu_api.str()},
                    {"cpu_in_cuda_ns", g.cpu_in_cuda},
                    {"cpu_range", g.cpu_range.str()}});
  }
  j["utilization"] = {{"span_fill_pct", summary(a.span_fill_pct)},
                      {"idle_in_iterations_ns", a.idle_in_iterations},
                      {"between_iterations_ns", a.between_iterations},
                      {"input_wait_ns", a.input_wait},
                      {"htod_ns", a.htod_time},
                      {"gap_count", a.gaps.size()},
                      {"gap_ns", gap_time},
                      {"host_wait_gap_ns", host_wait},
                      {"host_wait_idle_ns", a.host_wait_idle},
                      {"largest_gaps", gaps}};
  j["kernel_mix"] = kernel_mix_json(a);
  j["synchronization"] = sync_json(a);
  const VerdictFigures& f = a.figures;
  j["verdict"] = {{"bound", bound_name(a.bound)},
                  {"text", a.verdict},
                  {"lap_ns", f.lap_ns},
                  {"idle_ns", f.idle_ns},
                  {"busy_pct", f.busy_pct},
                  {"idle_pct", f.idle_pct},
                  {"input_pct", f.input_pct},
                  {"idle_shares",
                   {{"launch_pct", f.idle_launch_pct},
                    {"after_sync_stall_pct", f.idle_sync_pct},
                    {"input_pct", f.idle_input_pct},
                    {"queued_pct", f.idle_queued_pct}}},
                  {"lap_ms", a.lap_ms},
                  {"lap_without_syncs_ms", a.lap_without_syncs_ms},
                  {"saving_ms", f.saving_ms},
                  {"saving_pct", f.saving_pct}};
  j["timeline"] = timeline_to_json(a.timeline);
  return j;
}

nlohmann::json settling_json(const stats::Settling& s, size_t warmup, const std::function<uint64_t(size_t)>& index_of) {
  nlohmann::json shifts = nlohmann::json::array();
  for (const stats::LevelShift& shift : s.shifts)
    shifts.push_back(
        {{"at", shift.at}, {"iteration", index_of(shift.at)}, {"before_ns", shift.before}, {"after_ns", shift.after}});
  return nlohmann::json{
      {"start", s.start},
      {"settles", s.settles},
      {"level_ns", s.level},
      {"band_ns", s.band},
      {"noise_ns", s.noise},
      {"run", s.run},
      {"spikes", s.spikes},
      {"shifts", std::move(shifts)},
      {"warmup", warmup},
      {"warmup_too_short", s.start > warmup},
      {"rule",
       "noise = 1.4826 x median |difference of consecutive iterations| / sqrt(2) over the last half; band = "
       "max(5 x noise, 2% of the level); the initial transient ends at the first iteration, in the first half, "
       "from which `run` iterations in a row lie within the band of their median; later steps between runs "
       "beyond the band are level shifts, not warm-up"}};
}

nlohmann::json settling_json(const IterationSettling& s, const Iterations& a) {
  return settling_json(s.settling, s.warmup, [&a](size_t i) { return a.iterations[i].index; });
}

}  // namespace laptime::trace
