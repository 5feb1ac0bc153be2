#include "bench/energy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/stats.h"

namespace laptime {

namespace {

// The blocks a short run's advice asks for: enough that their spread means something.
constexpr int kBlocksAdvised = 10;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The laps of `spans` inside [a, b], each by the fraction of its span that lies there.
double laps_inside(const std::vector<std::pair<double, double>>& spans, double a, double b) {
  double n = 0;
  for (const auto& [start, end] : spans) {
    if (!(end > start)) continue;
    const double overlap = std::min(end, b) - std::max(start, a);
    if (overlap > 0) n += overlap / (end - start);
  }
  return n;
}

// Why a run too short for two steps has no figure, and how many laps would have one.
std::string too_short(std::size_t steps, double window_ms, std::size_t laps, double interval_ms) {
  std::string s = "NVML's energy counter stepped " + std::to_string(steps) + (steps == 1 ? " time" : " times") +
                  " in the " + fmt("%.0f", window_ms) + " ms of steady laps, and a measurement needs two steps";
  const double lap_ms = laps ? window_ms / double(laps) : 0;
  if (interval_ms > 0 && lap_ms > 0) {
    const double want = std::ceil((kBlocksAdvised + 1) * interval_ms / lap_ms);
    return s + " (it stepped every " + fmt("%.0f", interval_ms) + " ms over the loop): --iters " + fmt("%.0f", want) +
           " gives about " + std::to_string(kBlocksAdvised) + " blocks";
  }
  if (lap_ms > 0) return s + ": run at least a second of laps (--iters " + fmt("%.0f", std::ceil(1000 / lap_ms)) + ")";
  return s;
}

}  // namespace

std::string item_singular(const std::string& item) {
  return !item.empty() && item.back() == 's' ? item.substr(0, item.size() - 1) : item;
}

BenchEnergy measure_energy(const EnergyInputs& in, const std::vector<EnergyReading>& readings) {
  BenchEnergy e;
  e.item = in.item;
  e.power_limit_w = in.power_limit_w;
  e.laps = in.steady_spans.size();
  e.steps = readings.size();
  if (in.steady_spans.empty()) {
    e.unavailable = "no steady lap to measure";
    return e;
  }
  // When each step happened: halfway between the poll that saw it and the one before.
  std::vector<double> when;
  for (std::size_t i = 0; i < readings.size(); ++i) {
    if (i > 0 && readings[i].mj < readings[i - 1].mj) {
      e.unavailable = "NVML's energy counter went backwards during the loop (the driver reloaded?)";
      return e;
    }
    when.push_back(0.5 * (readings[i].before_ms + readings[i].seen_ms));
  }
  std::vector<double> spacing;
  for (std::size_t i = 1; i < when.size(); ++i) spacing.push_back(when[i] - when[i - 1]);
  e.step_interval_ms = spacing.empty() ? 0 : stats::median(spacing);

  const double w0 = in.steady_spans.front().first, w1 = in.steady_spans.back().second;
  e.steady_ms = w1 - w0;
  std::vector<std::size_t> inside;  // the steps within the steady laps
  for (std::size_t i = 0; i < when.size(); ++i)
    if (when[i] >= w0 && when[i] <= w1) inside.push_back(i);
  if (inside.size() < 2) {
    e.unavailable = too_short(inside.size(), e.steady_ms, e.laps, e.step_interval_ms);
    return e;
  }
  double joules = 0, laps = 0;
  std::vector<double> per_block;
  for (std::size_t k = 0; k + 1 < inside.size(); ++k) {
    const std::size_t i = inside[k], j = inside[k + 1];
    EnergyBlock b;
    b.start_ms = when[i];
    b.end_ms = when[j];
    b.joules = double(readings[j].mj - readings[i].mj) / 1000;
    b.laps = laps_inside(in.steady_spans, b.start_ms, b.end_ms);
    joules += b.joules;
    laps += b.laps;
    if (b.laps > 0) per_block.push_back(b.joules / b.laps);
    e.blocks.push_back(b);
  }
  e.measured_ms = e.blocks.back().end_ms - e.blocks.front().start_ms;
  if (!(laps > 0) || !(e.measured_ms > 0)) {
    e.unavailable = "no lap ran between the energy counter's steps";
    return e;
  }
  e.joules_per_forward = joules / laps;
  e.block_p10 = stats::percentile(per_block, 0.1);
  e.block_p90 = stats::percentile(per_block, 0.9);
  e.mean_watts = joules / (e.measured_ms / 1000);
  if (in.items_per_forward > 0) e.mj_per_item = e.joules_per_forward * 1000 / double(in.items_per_forward);
  if (!in.at_cap.empty())
    e.laps_at_cap = static_cast<std::size_t>(std::count(in.at_cap.begin(), in.at_cap.end(), true));
  return e;
}

}  // namespace laptime
