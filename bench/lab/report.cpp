// `laptime lab`'s text and JSON (schemas laptime.lab/1, laptime.lab.list/1 and laptime.lab.all/1),
// read from the result alone (bench/lab/result.h).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "bench/bench_result.h"
#include "bench/lab/result.h"
#include "trace/model/format.h"

namespace laptime::lab {
namespace {

using trace::detail::format;

std::string bytes_text(double b) {
  return b >= 1e9 ? format("%.2f GB", b / 1e9) : b >= 1e6 ? format("%.1f MB", b / 1e6) : format("%.1f kB", b / 1e3);
}

std::string version_label(const VersionResult& v) { return v.id + (v.production ? "*" : ""); }

// The width of the version column: the longest label (a learner's file is named by it), at least `least`.
int label_width(const LabResult& r, int least) {
  size_t w = static_cast<size_t>(least);
  for (const VersionResult& v : r.versions) w = std::max(w, std::min<size_t>(version_label(v).size(), 40));
  return static_cast<int>(w);
}

// One line per version: its checks, or why it does not run.
void print_checks(const LabResult& r) {
  double bound = 0;
  for (const VersionResult& v : r.versions)
    for (const CheckRow& c : v.checks) bound = c.skipped ? bound : c.bound;
  std::printf(
      "\nchecks: against the CPU reference, relative L2 error at most %.0e (outputs poisoned and guarded, fresh "
      "inputs)\n",
      bound);
  const int w = label_width(r, 4);
  for (const VersionResult& v : r.versions) {
    std::printf("  %-*s %-58.58s ", w, version_label(v).c_str(), v.title.c_str());
    if (!v.refusal.empty()) {
      std::printf("n/a: %s\n", v.refusal.c_str());
      continue;
    }
    int run = 0;
    double worst = 0;
    const CheckRow* failed = nullptr;
    for (const CheckRow& c : v.checks) {
      if (c.skipped) continue;
      ++run;
      if (!c.passed && !failed) failed = &c;
      if (std::isfinite(c.rel_error)) worst = std::max(worst, c.rel_error);
    }
    if (failed && std::isfinite(failed->rel_error))
      std::printf("FAILED  %s, %s inputs: error %.1e > %.0e; %s\n", failed->shape.c_str(), failed->inputs.c_str(),
                  failed->rel_error, failed->bound, failed->detail.c_str());
    else if (failed)
      std::printf("FAILED  %s, %s inputs: %s\n", failed->shape.c_str(), failed->inputs.c_str(), failed->detail.c_str());
    else
      std::printf("passed  %d checks, worst %.1e\n", run, worst);
    if (v.is_file())
      std::printf("       %s, sha256 %s, compiled for %s\n", v.file.c_str(), v.sha256.c_str(), v.compiled.c_str());
    for (const CheckRow& c : v.checks)
      if (c.skipped) std::printf("       n/a at %s: %s\n", c.shape.c_str(), c.detail.c_str());
  }
}

std::string pct(double p) { return p < 0 ? "-" : format("%.1f%%", p); }
std::string times(double x) { return x > 0 ? format("%.2fx", x) : "-"; }

void print_shape(const LabResult& r, int si) {
  const ShapeResult& s = r.shapes[static_cast<size_t>(si)];
  std::printf("\n%s: %s, must move %s", s.shape.label.c_str(), s.text.c_str(), bytes_text(s.cost.bytes()).c_str());
  if (s.cost.flops > 0) std::printf(" and compute %.2f GFLOP", s.cost.flops / 1e9);
  std::printf("\n");
  if (r.once) {
    std::printf("  one call a version (--once, for a profiler): not timed\n");
    return;
  }
  const int w = label_width(r, 8);
  std::printf("  %-*s %11s  %-21s %6s %10s %7s %6s %8s %7s %6s %7s %7s %7s\n", w, "version", "cold µs", "95% interval",
              "calls", "hot µs", "GB/s", "DRAM", "TFLOP/s", "compute", "MHz", "vs prev", "vs prod", "vs best");
  bool any = false, wide = false;
  uint64_t throttled = 0;
  for (const VersionResult& v : r.versions)
    for (const TimingRow& t : v.timings) {
      if (t.shape != si) continue;
      any = true;
      wide |= !t.converged || !t.hot_converged;
      throttled |= t.throttle;
      const std::string interval = format("[%.2f, ", t.lo_us) + format("%.2f]", t.hi_us);
      const std::string mhz = t.sm_mhz > 0 ? format("%d", t.sm_mhz) + (t.throttle ? "!" : "") : "-";
      std::printf("  %-*s %10.2f  %-21s %5d%s %8.2f%s %7.0f %6s %8s %7s %6s %7s %7s %7s\n", w, version_label(v).c_str(),
                  t.median_us, interval.c_str(), t.runs, t.converged ? " " : "~", t.hot_median_us,
                  t.hot_converged ? " " : "~", t.gbps, pct(t.dram_pct).c_str(),
                  s.cost.flops > 0 ? format("%.1f", t.tflops).c_str() : "-", pct(t.compute_pct).c_str(), mhz.c_str(),
                  times(t.vs_previous).c_str(), times(t.vs_production).c_str(), times(t.vs_best).c_str());
    }
  if (!any) std::printf("  no version passed its checks here: nothing timed\n");
  if (wide)
    std::printf("  ~: the interval did not narrow to ±%.1f%% within the calls or time allowed\n", 100 * r.target);
  if (throttled)
    std::printf(
        "  !: the SM clock was held down (%s) during that version's calls: its times are slower than an idle "
        "card's\n",
        throttle_words(throttled).c_str());
}

}  // namespace

bool VersionResult::passed() const {
  if (!refusal.empty()) return false;
  for (const CheckRow& c : checks)
    if (!c.passed) return false;
  return true;
}

void print_lab(const LabResult& r) {
  std::printf("laptime lab: %s, %s, on %s (seed %llu)\n  %s\n", r.kernel.c_str(), r.precision.c_str(), r.gpu.c_str(),
              static_cast<unsigned long long>(r.seed), r.summary.c_str());
  if (r.dram_gbps > 0)
    std::printf("  roofs: DRAM %.0f GB/s, %s compute %.1f TFLOP/s, from %s\n", r.dram_gbps, r.precision.c_str(),
                r.compute_tflops, r.ceilings_source.c_str());
  else
    std::printf("  roofs: %s\n", r.ceilings_note.c_str());
  if (!r.once) {
    std::printf(
        "  timing: each call alone between two events, on inputs drawn afresh for it; cold: the L2 cache flushed\n"
        "  before it; hot: not (its inputs just written); the median and its 95%% bootstrap interval; * production\n"
        "  stopping rule: %s\n",
        r.stopping_rule.c_str());
    if (r.clock_note.empty())
      std::printf("  MHz: the SM clock (NVML) while each version was timed, the median reading\n");
    else
      std::printf("  MHz: not read (%s)\n", r.clock_note.c_str());
  }
  print_checks(r);
  for (size_t i = 0; i < r.shapes.size(); ++i) print_shape(r, static_cast<int>(i));
  for (const std::string& s : r.sidecars)
    std::printf("\nlayer costs: %s (for `laptime kernels` beside the report)\n", s.c_str());
  for (const VersionResult& v : r.versions)
    if (v.refusal.empty() && !v.passed())
      std::printf("\nlaptime lab: %s %s FAILED its checks: it was not timed.\n", r.kernel.c_str(), v.id.c_str());
}

nlohmann::json version_to_json(const VersionResult& v) {
  nlohmann::json checks = nlohmann::json::array(), timings = nlohmann::json::array();
  for (const CheckRow& c : v.checks) {
    nlohmann::json j{{"shape", c.shape},     {"inputs", c.inputs}, {"passed", c.passed},
                     {"skipped", c.skipped}, {"bound", c.bound},   {"rows_checked", c.rows_checked},
                     {"rows", c.rows},       {"detail", c.detail}};
    j["rel_error"] = std::isfinite(c.rel_error) ? nlohmann::json(c.rel_error) : nlohmann::json(nullptr);
    checks.push_back(j);
  }
  for (const TimingRow& t : v.timings) {
    auto opt = [](double x) { return x >= 0 ? nlohmann::json(x) : nlohmann::json(nullptr); };
    auto ratio = [](double x) { return x > 0 ? nlohmann::json(x) : nlohmann::json(nullptr); };
    nlohmann::json clock = nullptr;
    if (t.sm_mhz > 0)
      clock = {{"sm_mhz_median", t.sm_mhz},
               {"sm_mhz_min", t.sm_mhz_min},
               {"throttle_reasons", t.throttle},
               {"throttled_by", throttle_words(t.throttle)}};
    timings.push_back({{"shape", t.shape},
                       {"calls", t.runs},
                       {"converged", t.converged},
                       {"median_us", t.median_us},
                       {"ci95_us", {t.lo_us, t.hi_us}},
                       {"hot",
                        {{"calls", t.hot_runs},
                         {"converged", t.hot_converged},
                         {"median_us", t.hot_median_us},
                         {"ci95_us", {t.hot_lo_us, t.hot_hi_us}}}},
                       {"gbps", t.gbps},
                       {"tflops", t.tflops},
                       {"dram_pct", opt(t.dram_pct)},
                       {"compute_pct", opt(t.compute_pct)},
                       {"vs_previous", ratio(t.vs_previous)},
                       {"vs_production", ratio(t.vs_production)},
                       {"vs_best", ratio(t.vs_best)},
                       {"clock", clock}});
  }
  nlohmann::json j{{"id", v.id},
                   {"title", v.title},
                   {"reason", v.reason},
                   {"production", v.production},
                   {"status", !v.refusal.empty() ? "n/a"
                              : v.passed()       ? "passed"
                                                 : "FAILED"},
                   {"refusal", v.refusal},
                   {"checks", checks},
                   {"timings", timings}};
  if (v.is_file()) j["file"] = {{"path", v.file}, {"sha256", v.sha256}, {"compiled", v.compiled}};
  return j;
}

VersionResult version_from_json(const nlohmann::json& j) {
  VersionResult v;
  v.id = j.value("id", "");
  v.title = j.value("title", "");
  v.reason = j.value("reason", "");
  v.production = j.value("production", false);
  v.refusal = j.value("refusal", "");
  if (j.contains("file") && j["file"].is_object()) {
    v.file = j["file"].value("path", "");
    v.sha256 = j["file"].value("sha256", "");
    v.compiled = j["file"].value("compiled", "");
  }
  for (const nlohmann::json& c : j.value("checks", nlohmann::json::array())) {
    CheckRow row;
    row.shape = c.value("shape", "");
    row.inputs = c.value("inputs", "");
    row.passed = c.value("passed", false);
    row.skipped = c.value("skipped", false);
    row.bound = c.value("bound", 0.0);
    row.rows_checked = c.value("rows_checked", int64_t{0});
    row.rows = c.value("rows", int64_t{0});
    row.detail = c.value("detail", "");
    row.rel_error = c["rel_error"].is_number() ? c["rel_error"].get<double>() : NAN;
    v.checks.push_back(row);
  }
  for (const nlohmann::json& t : j.value("timings", nlohmann::json::array())) {
    TimingRow row;
    const auto num = [](const nlohmann::json& x) { return x.is_number() ? x.get<double>() : -1.0; };
    const auto ratio = [](const nlohmann::json& x) { return x.is_number() ? x.get<double>() : 0.0; };
    row.shape = t.value("shape", 0);
    row.runs = t.value("calls", 0);
    row.converged = t.value("converged", false);
    row.median_us = t.value("median_us", 0.0);
    row.lo_us = t["ci95_us"][0].get<double>(), row.hi_us = t["ci95_us"][1].get<double>();
    const nlohmann::json& hot = t["hot"];
    row.hot_runs = hot.value("calls", 0);
    row.hot_converged = hot.value("converged", false);
    row.hot_median_us = hot.value("median_us", 0.0);
    row.hot_lo_us = hot["ci95_us"][0].get<double>(), row.hot_hi_us = hot["ci95_us"][1].get<double>();
    row.gbps = t.value("gbps", 0.0);
    row.tflops = t.value("tflops", 0.0);
    row.dram_pct = num(t["dram_pct"]);
    row.compute_pct = num(t["compute_pct"]);
    row.vs_previous = ratio(t["vs_previous"]);
    row.vs_production = ratio(t["vs_production"]);
    row.vs_best = ratio(t["vs_best"]);
    if (t["clock"].is_object()) {
      row.sm_mhz = t["clock"].value("sm_mhz_median", 0);
      row.sm_mhz_min = t["clock"].value("sm_mhz_min", 0);
      row.throttle = t["clock"].value("throttle_reasons", uint64_t{0});
    }
    v.timings.push_back(row);
  }
  return v;
}

nlohmann::json lab_to_json(const LabResult& r) {
  nlohmann::json shapes = nlohmann::json::array(), versions = nlohmann::json::array();
  for (const ShapeResult& s : r.shapes)
    shapes.push_back({{"label", s.shape.label},
                      {"dims", s.text},
                      {"values", s.shape.dims},
                      {"bytes", {{"read", s.cost.read}, {"written", s.cost.written}}},
                      {"flops", s.cost.flops}});
  for (const VersionResult& v : r.versions) versions.push_back(version_to_json(v));
  nlohmann::json roofs = nullptr;
  if (r.dram_gbps > 0)
    roofs = {{"source", r.ceilings_source}, {"dram_gbps", r.dram_gbps}, {"compute_tflops", r.compute_tflops}};
  return {{"schema", "laptime.lab/1"},
          {"kernel", r.kernel},
          {"summary", r.summary},
          {"precision", r.precision},
          {"gpu", r.gpu},
          {"seed", r.seed},
          {"once", r.once},
          {"roofs", roofs},
          {"roofs_note", r.ceilings_note},
          {"timing",
           {{"method",
             "one call between two CUDA events, on inputs drawn afresh for it; cold: the L2 cache flushed before "
             "each; hot: not"},
            {"statistic", "median, 95% percentile-bootstrap interval"},
            {"target_half_width", r.target},
            {"stopping_rule", r.stopping_rule},
            {"clock", r.clock_note.empty() ? "NVML, the SM clock while each version was timed" : r.clock_note}}},
          {"shapes", shapes},
          {"versions", versions},
          {"sidecars", r.sidecars}};
}

AllResult summarize_all(std::vector<LabResult> kernels) {
  AllResult a;
  a.kernels = std::move(kernels);
  double log_sum = 0;
  for (const LabResult& r : a.kernels) {
    const VersionResult* first = r.versions.empty() ? nullptr : &r.versions.front();
    const VersionResult* production = nullptr;
    for (const VersionResult& v : r.versions)
      if (v.production) production = &v;
    if (!production) production = first;  // v1 is production (none here today)
    for (size_t si = 0; si < r.shapes.size(); ++si) {
      AllSummaryRow row;
      row.kernel = r.kernel;
      row.precision = r.precision;
      row.shape = r.shapes[si].shape.label;
      row.first = first ? first->id : "-";
      row.production = production ? production->id : "-";
      const auto median = [&](const VersionResult* v) {
        if (v)
          for (const TimingRow& t : v->timings)
            if (t.shape == static_cast<int>(si)) return t;
        return TimingRow{};
      };
      const TimingRow f = median(first), p = median(production);
      row.first_us = f.median_us;
      row.production_us = p.median_us;
      if (p.median_us > 0) {
        const bool compute = r.shapes[si].cost.flops > 0 && p.compute_pct >= 0;
        row.roof = compute ? "compute" : "DRAM";
        row.roof_pct = compute ? p.compute_pct : p.dram_pct;
      }
      if (f.median_us > 0 && p.median_us > 0) {
        row.speedup = f.median_us / p.median_us;
        log_sum += std::log(row.speedup);
        ++a.speedups;
      }
      a.rows.push_back(row);
    }
  }
  if (a.speedups > 0) a.geomean_speedup = std::exp(log_sum / a.speedups);
  return a;
}

void print_all(const AllResult& a) {
  for (const LabResult& r : a.kernels) {
    print_lab(r);
    std::printf("\n");
  }
  std::printf("laptime lab --all: every kernel's first version against its production, cold medians\n");
  std::printf("  %-19s %-5s %-44.44s %6s %11s %6s %11s %13s %8s\n", "kernel", "prec", "shape", "first", "µs", "prod",
              "µs", "% of roof", "speed-up");
  for (const AllSummaryRow& row : a.rows) {
    const auto us = [](double x) { return x > 0 ? format("%.2f", x) : std::string("-"); };
    const std::string roof = row.roof_pct >= 0 ? format("%.1f%% ", row.roof_pct) + row.roof : "-";
    std::printf("  %-19s %-5s %-44.44s %6s %11s %6s %11s %13s %8s\n", row.kernel.c_str(), row.precision.c_str(),
                row.shape.c_str(), row.first.c_str(), us(row.first_us).c_str(), row.production.c_str(),
                us(row.production_us).c_str(), roof.c_str(), times(row.speedup).c_str());
  }
  if (a.speedups > 0)
    std::printf("geometric mean of the %d speed-ups of production over the first version: %.2fx\n", a.speedups,
                a.geomean_speedup);
  else
    std::printf("no speed-up measured: no kernel had both versions timed\n");
}

nlohmann::json all_to_json(const AllResult& a) {
  nlohmann::json kernels = nlohmann::json::array(), rows = nlohmann::json::array();
  for (const LabResult& r : a.kernels) kernels.push_back(lab_to_json(r));
  for (const AllSummaryRow& row : a.rows) {
    const auto opt = [](double x, bool ok) { return ok ? nlohmann::json(x) : nlohmann::json(nullptr); };
    rows.push_back({{"kernel", row.kernel},
                    {"precision", row.precision},
                    {"shape", row.shape},
                    {"first", row.first},
                    {"first_us", opt(row.first_us, row.first_us > 0)},
                    {"production", row.production},
                    {"production_us", opt(row.production_us, row.production_us > 0)},
                    {"roof", row.roof},
                    {"roof_pct", opt(row.roof_pct, row.roof_pct >= 0)},
                    {"speedup", opt(row.speedup, row.speedup > 0)}});
  }
  return {{"schema", "laptime.lab.all/1"},
          {"kernels", kernels},
          {"summary", rows},
          {"geomean_speedup", a.speedups > 0 ? nlohmann::json(a.geomean_speedup) : nlohmann::json(nullptr)},
          {"speedups", a.speedups}};
}

void print_lab_list() {
  std::printf("laptime lab: %zu kernels, each a ladder of versions (* production; `laptime lab KERNEL` runs one)\n",
              kernels().size());
  for (const KernelInfo& k : kernels()) {
    std::string precisions;
    for (const std::string& p : k.precisions) precisions += (precisions.empty() ? "" : ", ") + p;
    std::printf("\n%s (%s): %s\n", k.name.c_str(), precisions.c_str(), k.summary.c_str());
    for (const Version& v : k.versions) {
      std::string production, only;
      for (const auto& [p, id] : k.production)
        if (id == v.id && k.has_precision(p)) production += (production.empty() ? "" : ", ") + p;
      for (const std::string& p : v.precisions) only += (only.empty() ? "" : ", ") + p;
      std::printf("  %-3s %s%s%s\n", v.id.c_str(), v.title.c_str(),
                  production.empty() ? "" : ("  * production in " + production).c_str(),
                  only.empty() ? "" : ("  (" + only + " only)").c_str());
    }
  }
  std::printf("\nyour own version of one: `laptime lab KERNEL --template FILE.cu`, then `--try FILE.cu`\n");
}

nlohmann::json lab_list_json() {
  nlohmann::json ks = nlohmann::json::array();
  for (const KernelInfo& k : kernels()) {
    nlohmann::json versions = nlohmann::json::array(), dims = nlohmann::json::array(), shapes = nlohmann::json::array(),
                   models = nlohmann::json::array();
    for (const Version& v : k.versions)
      versions.push_back({{"id", v.id},
                          {"title", v.title},
                          {"reason", v.reason},
                          {"precisions", v.precisions},
                          {"library", v.library}});
    for (const Dim& d : k.dims) dims.push_back({{"name", d.name}, {"min", d.min}, {"max", d.max}});
    for (const Shape& s : k.model_shapes) {
      const Cost c = k.cost(s.dims, k.precisions.front());
      shapes.push_back({{"label", s.label},
                        {"dims", shape_text(k, s.dims)},
                        {"precision", k.precisions.front()},
                        {"bytes", c.bytes()},
                        {"flops", c.flops}});
    }
    for (const ModelUse& m : k.models)
      models.push_back({{"model", m.model},
                        {"where", m.where},
                        {"swappable", m.swappable},
                        {"note", m.note},
                        {"precisions", m.precisions}});
    ks.push_back({{"name", k.name},
                  {"summary", k.summary},
                  {"kind", k.kind},
                  {"dims", dims},
                  {"precisions", k.precisions},
                  {"production", k.production},
                  {"tolerance", k.tolerance},
                  {"versions", versions},
                  {"model_shapes", shapes},
                  {"models", models}});
  }
  return {{"schema", "laptime.lab.list/1"}, {"kernels", ks}};
}

}  // namespace laptime::lab
