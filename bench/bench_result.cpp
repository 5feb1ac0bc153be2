#include "bench/bench_result.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "bench/stats.h"
#include "trace/model/text.h"

namespace laptime {

std::vector<double> BenchResult::steady_laps() const {
  std::vector<double> v;
  for (const BenchLap& l : laps)
    if (!l.warmup) v.push_back(l.ms);
  return v;
}

void summarize(BenchResult& r) {
  const std::vector<double> v = r.steady_laps();
  r.steady.reset();
  r.items_per_s = r.tflops = 0;
  if (v.empty()) return;
  r.steady = stats::summarize(v);
  r.tflops = r.flops_per_forward / (r.steady->median * 1e-3) / 1e12;
  r.items_per_s = r.items_per_forward / (r.steady->median * 1e-3);
}

std::string throttle_words(uint64_t mask) {
  std::vector<std::string> words;
  if (mask & kClockSwPowerCap) words.emplace_back("the power cap");
  if (mask & kClockHwPowerBrake) words.emplace_back("the power brake");
  if (mask & (kClockSwThermal | kClockHwThermal)) words.emplace_back("a thermal slowdown");
  if (mask & kClockHwSlowdown) words.emplace_back("a hardware slowdown");
  std::string s;
  for (std::size_t i = 0; i < words.size(); ++i) s += (i == 0 ? "" : i + 1 == words.size() ? " and " : ", ") + words[i];
  return s;
}

void assign_clocks(BenchResult& r, const std::vector<std::pair<double, double>>& spans,
                   const std::vector<ClockSample>& samples, int power_limit_w) {
  BenchClocks c;
  c.samples = samples.size();
  c.power_limit_w = power_limit_w;
  for (std::size_t i = 0; i < r.laps.size() && i < spans.size(); ++i) {
    BenchLap& lap = r.laps[i];
    const auto [start, end] = spans[i];
    double sum = 0;
    int inside = 0;
    uint64_t reasons = 0;
    for (const ClockSample& x : samples)
      if (x.t_ms >= start && x.t_ms <= end) {
        sum += x.sm_mhz;
        ++inside;
        reasons |= x.reasons & kClockThrottles;
      }
    std::optional<int> mhz;
    if (inside) mhz = static_cast<int>(std::lround(sum / inside));
    if (!inside && !samples.empty()) {  // a lap shorter than the sampling: the nearest reading
      const double mid = 0.5 * (start + end);
      const ClockSample* best = &samples.front();
      for (const ClockSample& x : samples)
        if (std::abs(x.t_ms - mid) < std::abs(best->t_ms - mid)) best = &x;
      mhz = best->sm_mhz;
      reasons = best->reasons & kClockThrottles;
    }
    lap.sm_mhz = mhz;
    lap.throttled = reasons != 0;
    lap.at_power_cap = (reasons & kClockSwPowerCap) != 0;
    if (!lap.warmup) c.reasons |= reasons;
  }
  r.clocks = c;
}

void assign_energy(BenchResult& r, const std::vector<std::pair<double, double>>& spans,
                   const std::vector<EnergyReading>& readings, const std::string& unavailable, int power_limit_w) {
  if (!unavailable.empty()) {
    BenchEnergy e;
    e.unavailable = unavailable;
    r.energy = e;
    return;
  }
  EnergyInputs in;
  in.items_per_forward = r.items_per_forward;
  in.item = r.item_name;
  in.power_limit_w = power_limit_w;
  const bool clocked = r.clocks && r.clocks->unavailable.empty();
  for (std::size_t i = 0; i < r.laps.size() && i < spans.size(); ++i) {
    if (r.laps[i].warmup) continue;
    in.steady_spans.push_back(spans[i]);
    if (clocked) in.at_cap.push_back(r.laps[i].at_power_cap);
  }
  r.energy = measure_energy(in, readings);
}

namespace {
// The clock line of the report (none for a result without clocks).
void print_clocks(const BenchResult& r, std::FILE* out) {
  if (!r.clocks) return;
  const BenchClocks& c = *r.clocks;
  if (!c.unavailable.empty()) {
    std::fprintf(out, "  clock       not read: %s\n", c.unavailable.c_str());
    return;
  }
  std::vector<double> mhz, capped_ms, free_ms;
  for (const BenchLap& l : r.laps) {
    if (l.warmup || !l.sm_mhz) continue;
    mhz.push_back(*l.sm_mhz);
    (l.throttled ? capped_ms : free_ms).push_back(l.ms);
  }
  if (mhz.empty()) return;
  const stats::Summary m = stats::summarize(mhz);
  const auto mhz_text = [](double v) { return std::to_string(std::lround(v)); };
  std::string range = m.min == m.max ? mhz_text(m.min) + " MHz in every steady lap"
                                     : mhz_text(m.min) + "-" + mhz_text(m.max) + " MHz over the steady laps (median " +
                                           mhz_text(m.median) + ")";
  std::fprintf(out, "  clock       SM %s, read by NVML %zu times\n", range.c_str(), c.samples);
  if (capped_ms.empty()) {
    std::fprintf(out, "              no lap throttled\n");
    return;
  }
  const std::string limit = c.power_limit_w ? " (the board's limit " + std::to_string(c.power_limit_w) + " W)" : "";
  std::fprintf(out, "              %zu of %zu laps throttled by %s%s", capped_ms.size(), mhz.size(),
               throttle_words(c.reasons).c_str(), limit.c_str());
  if (free_ms.empty() && m.max < r.device.sm_clock_mhz)
    std::fprintf(out, ": every lap ran below the %d MHz maximum\n", r.device.sm_clock_mhz);
  else if (free_ms.empty())
    std::fprintf(out, "\n");
  else
    std::fprintf(out, ": their median lap %.3f ms, the other %zu laps' %.3f ms\n", stats::median(capped_ms),
                 free_ms.size(), stats::median(free_ms));
}

// The energy lines of the report (none for a result without energy).
void print_energy(const BenchResult& r, std::FILE* out) {
  if (!r.energy) return;
  const BenchEnergy& e = *r.energy;
  if (!e.unavailable.empty()) {
    std::fprintf(out, "  energy      not measured: %s\n", e.unavailable.c_str());
    return;
  }
  std::fprintf(out, "  energy      %.3f J per forward (blocks' p10-p90 %.3f-%.3f), %.4g mJ per %s, mean %.0f W",
               e.joules_per_forward, e.block_p10, e.block_p90, e.mj_per_item, item_singular(e.item).c_str(),
               e.mean_watts);
  if (e.power_limit_w) std::fprintf(out, " (the board's limit %d W)", e.power_limit_w);
  std::fprintf(
      out,
      "\n              NVML's energy counter over %.0f of the %.0f ms of steady laps: %zu blocks, a step every %.0f ms",
      e.measured_ms, e.steady_ms, e.blocks.size(), e.step_interval_ms);
  if (e.laps_at_cap) std::fprintf(out, "; %zu of %zu laps at the power cap", *e.laps_at_cap, e.laps);
  std::fprintf(out, "\n");
}
}  // namespace

void print_bench_header(const BenchResult& r, std::FILE* out) {
  const BenchDevice& d = r.device;
  const BenchConfig& c = r.config;
  std::fprintf(out, "laptime bench %s\n", c.model.c_str());
  std::fprintf(out, "  device      %s, %d SMs, SM clock %d MHz, memory clock %d MHz, %.0f GiB\n", d.name.c_str(),
               d.sm_count, d.sm_clock_mhz, d.memory_clock_mhz, d.memory_gib);
  std::fprintf(out, "  software    driver %s, CUDA runtime %s, cuBLAS %s (built with %s), cuDNN %s (built with %s)\n",
               d.driver.c_str(), d.cuda_runtime.c_str(), d.cublas_loaded.c_str(), d.cublas_compiled.c_str(),
               d.cudnn_loaded.c_str(), d.cudnn_compiled.c_str());
  std::fprintf(out, "  run         %s, %s, %s, nvtx=%s, stream=%s\n", c.precision.c_str(), c.shape.c_str(),
               c.graph ? "CUDA Graph" : "eager", c.nvtx.c_str(), c.stream.c_str());
  std::fprintf(out, "  weights     %s, %.1f M parameters\n", c.weights.c_str(), c.params / 1e6);
  if (!c.variant.empty()) std::fprintf(out, "  variant     %s\n", c.variant.c_str());
  if (!c.switches.empty()) {
    std::string line;
    for (const auto& [name, value] : c.switches) line += (line.empty() ? "" : ", ") + name + "=" + value;
    std::fprintf(out, "  switches    %s\n", line.c_str());
  }
  for (const BenchConfig::KernelFile& f : c.kernel_files)
    std::fprintf(out, "  kernel file %s=%s, sha256 %s\n", f.kernel.c_str(), f.path.c_str(), f.sha256.c_str());
  for (std::size_t i = 0; i < c.plans.size(); ++i)
    std::fprintf(out, "  %-11s %s\n", i == 0 ? "plans" : "", c.plans[i].c_str());
}

void print_bench(const BenchResult& r, std::FILE* out) {
  if (!r.trace.empty())
    std::fprintf(out, "  trace       %s (CUPTI; read it with `laptime analyze %s`)\n",
                 trace::escape_name(r.trace).c_str(), trace::shell_word(r.trace).c_str());
  for (const std::string& p : r.sidecars)
    std::fprintf(out, "  layers      %s (FLOPs and bytes per NVTX range, for `laptime analyze`)\n", p.c_str());
  const bool clocked =
      std::any_of(r.laps.begin(), r.laps.end(), [](const BenchLap& l) { return l.sm_mhz.has_value(); });
  std::fprintf(out, "\n  iteration   lap (ms)%s\n", clocked ? "  SM MHz" : "");
  for (const BenchLap& l : r.laps) {
    std::fprintf(out, "  %5d %-6s %9.3f", l.index, l.warmup ? "warmup" : "", l.ms);
    if (l.sm_mhz) std::fprintf(out, "  %6d%s", *l.sm_mhz, l.throttled ? " throttled" : "");
    std::fprintf(out, "\n");
  }
  const std::vector<double> laps = r.steady_laps();
  const int done = static_cast<int>(r.laps.size());
  std::fprintf(out, "\n%s\n", steady_summary(laps, r.config.iters, r.interrupted, done).c_str());
  if (!r.steady) return;  // interrupted during warm-up: nothing steady to report
  const stats::Summary& s = *r.steady;
  std::fprintf(out, "  throughput  %.0f %s/s\n", r.items_per_s, r.item_name.c_str());
  std::fprintf(out, "  compute     %.1f GFLOP per forward, %.1f TFLOP/s achieved\n", r.flops_per_forward / 1e9,
               r.tflops);
  if (r.enqueue_ms) {
    const double e = *r.enqueue_ms;
    // --pitfall sync's hook stays installed for the probe, whose forwards then wait for the GPU
    // at every layer end: that time is no launch cost, and only a trace can tell the two apart.
    const bool waits = r.config.pitfall == "sync";
    std::fprintf(out, "  host        %.3f ms to enqueue one forward on an idle GPU (%.0f%% of the lap%s)\n", e,
                 100 * e / s.median,
                 waits                ? "; --pitfall sync's waits for the GPU are inside it, so it is no launch cost: "
                                        "`laptime analyze` on a trace tells them apart"
                 : e > 0.8 * s.median ? ": launch-bound"
                                      : ", GPU-bound");
  }
  const BenchMemory& m = r.memory;
  std::fprintf(out,
               "  memory      weights %.1f MiB, activations %.1f MiB, workspace %.1f MiB, device in use %.1f MiB\n",
               m.weights / 1048576.0, m.activations / 1048576.0, m.workspace / 1048576.0, m.device_in_use / 1048576.0);
  print_clocks(r, out);
  print_energy(r, out);
  std::fprintf(out, "\nlap time: %.3f ms (median of %zu, %s, %s)\n", s.median, laps.size(), r.config.precision.c_str(),
               r.config.graph ? "graph" : "eager");
}

namespace {
nlohmann::json device_json(const BenchDevice& d) {
  return {{"name", d.name},
          {"sm_count", d.sm_count},
          {"sm_clock_mhz", d.sm_clock_mhz},
          {"memory_clock_mhz", d.memory_clock_mhz},
          {"memory_gib", d.memory_gib},
          {"driver", d.driver},
          {"cuda_runtime", d.cuda_runtime},
          {"cublas_compiled", d.cublas_compiled},
          {"cublas_loaded", d.cublas_loaded},
          {"cudnn_compiled", d.cudnn_compiled},
          {"cudnn_loaded", d.cudnn_loaded}};
}

nlohmann::json config_json(const BenchConfig& c) {
  nlohmann::json j{{"model", c.model},
                   {"pitfall", c.pitfall},
                   {"precision", c.precision},
                   {"shape", c.shape},
                   {"weights", c.weights},
                   {"params", c.params},
                   {"mode", c.graph ? "graph" : "eager"},
                   {"nvtx", c.nvtx},
                   {"stream", c.stream},
                   {"warmup", c.warmup},
                   {"iters", c.iters}};
  if (!c.variant.empty()) j["variant"] = c.variant;
  if (!c.plans.empty()) j["plans"] = c.plans;
  // Always written (empty when none was set), so that `laptime diff` can tell "none set" from a
  // report that does not record them.
  j["switches"] = nlohmann::json::object();
  for (const auto& [name, value] : c.switches) j["switches"][name] = value;
  // Only with --kernel NAME=FILE.cu, so that every other report stays as it was.
  for (const BenchConfig::KernelFile& f : c.kernel_files)
    j["kernel_files"].push_back({{"kernel", f.kernel}, {"path", f.path}, {"sha256", f.sha256}});
  return j;
}

nlohmann::json energy_json(const BenchEnergy& e) {
  if (!e.unavailable.empty()) return {{"available", false}, {"reason", e.unavailable}};
  nlohmann::json blocks = nlohmann::json::array();
  for (const EnergyBlock& b : e.blocks)
    blocks.push_back({{"start_ms", b.start_ms}, {"end_ms", b.end_ms}, {"joules", b.joules}, {"laps", b.laps}});
  return {{"available", true},
          {"source", "NVML total-energy counter"},
          {"joules_per_forward", e.joules_per_forward},
          {"joules_per_forward_p10", e.block_p10},
          {"joules_per_forward_p90", e.block_p90},
          {"mj_per_item", e.mj_per_item},
          {"item", e.item},
          {"mean_watts", e.mean_watts},
          {"power_limit_watts", e.power_limit_w ? nlohmann::json(e.power_limit_w) : nlohmann::json(nullptr)},
          {"laps_at_cap", e.laps_at_cap ? nlohmann::json(*e.laps_at_cap) : nlohmann::json(nullptr)},
          {"laps", e.laps},
          {"measured_ms", e.measured_ms},
          {"steady_ms", e.steady_ms},
          {"counter_steps", e.steps},
          {"step_interval_ms", e.step_interval_ms},
          {"blocks", blocks}};
}
}  // namespace

nlohmann::json bench_to_json(const BenchResult& r) {
  nlohmann::json report;
  report["schema"] = "laptime.bench/1";
  report["framework"] = "laptime";
  report["device"] = device_json(r.device);
  report["config"] = config_json(r.config);
  nlohmann::json iterations = nlohmann::json::array();
  for (const BenchLap& l : r.laps) {
    nlohmann::json it{{"index", l.index}, {"warmup", l.warmup}, {"lap_ms", l.ms}};
    if (l.sm_mhz) {
      it["sm_mhz"] = *l.sm_mhz;
      it["throttled"] = l.throttled;
    }
    iterations.push_back(it);
  }
  report["iterations"] = iterations;
  if (r.clocks) {
    const BenchClocks& c = *r.clocks;
    if (!c.unavailable.empty())
      report["clocks"] = {{"unavailable", c.unavailable}};
    else
      report["clocks"] = {{"source", "NVML"},
                          {"samples", c.samples},
                          {"power_limit_w", c.power_limit_w},
                          {"throttled_by", throttle_words(c.reasons)}};
  }
  if (r.energy) report["energy"] = energy_json(*r.energy);
  if (r.interrupted) report["interrupted"] = true;
  if (!r.steady) return report;
  const stats::Summary& s = *r.steady;
  report["steady_ms"] = {{"mean", s.mean}, {"median", s.median}, {"p10", s.p10},      {"p90", s.p90},
                         {"min", s.min},   {"max", s.max},       {"stddev", s.stddev}};
  report["throughput"] = {{"items_per_s", r.items_per_s}, {"item", r.item_name}};
  report["flops_per_forward"] = r.flops_per_forward;
  report["tflops"] = r.tflops;
  report["enqueue_ms"] = r.enqueue_ms ? nlohmann::json(*r.enqueue_ms) : nlohmann::json(nullptr);
  report["memory_bytes"] = {{"weights", r.memory.weights},
                            {"activations", r.memory.activations},
                            {"workspace", r.memory.workspace},
                            {"device_in_use", r.memory.device_in_use}};
  return report;
}

}  // namespace laptime
