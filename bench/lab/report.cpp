// `laptime lab`'s text and JSON (schemas laptime.lab/1 and laptime.lab.list/1), read from the
// result alone (bench/lab/result.h).
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "bench/lab/result.h"
#include "trace/model/format.h"

namespace laptime::lab {
namespace {

using trace::detail::format;

std::string bytes_text(double b) {
  return b >= 1e9 ? format("%.2f GB", b / 1e9) : b >= 1e6 ? format("%.1f MB", b / 1e6) : format("%.1f kB", b / 1e3);
}

std::string version_label(const VersionResult& v) { return v.id + (v.production ? "*" : ""); }

// One line per version: its checks, or why it does not run.
void print_checks(const LabResult& r) {
  double bound = 0;
  for (const VersionResult& v : r.versions)
    for (const CheckRow& c : v.checks) bound = c.skipped ? bound : c.bound;
  std::printf("\nchecks: against the CPU reference, relative L2 error at most %.0e (outputs poisoned, fresh inputs)\n",
              bound);
  for (const VersionResult& v : r.versions) {
    std::printf("  %-4s %-58.58s ", version_label(v).c_str(), v.title.c_str());
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
    if (failed)
      std::printf("FAILED  %s, %s inputs: error %.1e > %.0e; %s\n", failed->shape.c_str(), failed->inputs.c_str(),
                  failed->rel_error, failed->bound, failed->detail.c_str());
    else
      std::printf("passed  %d checks, worst %.1e\n", run, worst);
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
  std::printf("  %-8s %11s  %-23s %6s %8s %7s %8s %8s %8s %8s\n", "version", "median µs", "95% interval", "calls",
              "GB/s", "DRAM", "TFLOP/s", "compute", "vs prev", "vs prod");
  bool any = false, wide = false;
  for (const VersionResult& v : r.versions)
    for (const TimingRow& t : v.timings) {
      if (t.shape != si) continue;
      any = true;
      wide |= !t.converged;
      const std::string interval = format("[%.2f, ", t.lo_us) + format("%.2f]", t.hi_us);
      std::printf("  %-8s %11.2f  %-23s %5d%s %8.0f %7s %8s %8s %8s %8s\n", version_label(v).c_str(), t.median_us,
                  interval.c_str(), t.runs, t.converged ? " " : "~", t.gbps, pct(t.dram_pct).c_str(),
                  s.cost.flops > 0 ? format("%.1f", t.tflops).c_str() : "-", pct(t.compute_pct).c_str(),
                  times(t.vs_previous).c_str(), times(t.vs_production).c_str());
    }
  if (!any) std::printf("  no version passed its checks here: nothing timed\n");
  if (wide)
    std::printf("  ~: the interval did not narrow to ±%.1f%% within the calls or time allowed\n", 100 * r.target);
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
  if (!r.once)
    std::printf(
        "  timing: each call alone between two events, the L2 cache flushed before it; the median of at least\n"
        "  25 calls (5 for the slowest) and its 95%% bootstrap interval, until it is within ±%.1f%%; * production\n",
        100 * r.target);
  print_checks(r);
  for (size_t i = 0; i < r.shapes.size(); ++i) print_shape(r, static_cast<int>(i));
  for (const std::string& s : r.sidecars)
    std::printf("\nlayer costs: %s (for `laptime kernels` beside the report)\n", s.c_str());
  for (const VersionResult& v : r.versions)
    if (v.refusal.empty() && !v.passed())
      std::printf("\nlaptime lab: %s %s FAILED its checks: it was not timed.\n", r.kernel.c_str(), v.id.c_str());
}

nlohmann::json lab_to_json(const LabResult& r) {
  nlohmann::json shapes = nlohmann::json::array(), versions = nlohmann::json::array();
  for (const ShapeResult& s : r.shapes)
    shapes.push_back({{"label", s.shape.label},
                      {"dims", s.text},
                      {"values", s.shape.dims},
                      {"bytes", {{"read", s.cost.read}, {"written", s.cost.written}}},
                      {"flops", s.cost.flops}});
  for (const VersionResult& v : r.versions) {
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
      timings.push_back({{"shape", t.shape},
                         {"calls", t.runs},
                         {"converged", t.converged},
                         {"median_us", t.median_us},
                         {"ci95_us", {t.lo_us, t.hi_us}},
                         {"gbps", t.gbps},
                         {"tflops", t.tflops},
                         {"dram_pct", opt(t.dram_pct)},
                         {"compute_pct", opt(t.compute_pct)},
                         {"vs_previous", ratio(t.vs_previous)},
                         {"vs_production", ratio(t.vs_production)}});
    }
    versions.push_back({{"id", v.id},
                        {"title", v.title},
                        {"reason", v.reason},
                        {"production", v.production},
                        {"status", !v.refusal.empty() ? "n/a"
                                   : v.passed()       ? "passed"
                                                      : "FAILED"},
                        {"refusal", v.refusal},
                        {"checks", checks},
                        {"timings", timings}});
  }
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
           {{"method", "one call between two CUDA events, the L2 cache flushed before each"},
            {"statistic", "median, 95% percentile-bootstrap interval"},
            {"target_half_width", r.target}}},
          {"shapes", shapes},
          {"versions", versions},
          {"sidecars", r.sidecars}};
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
