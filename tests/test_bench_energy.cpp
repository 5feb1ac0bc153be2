// bench/energy and the sampler's NVML reads: the energy per forward from the counter's steps, the
// laps at the power cap, the report's lines and JSON, and the sampler over a fake NVML (its
// function table filled here). Host only: no GPU, no NVML.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench/bench_result.h"
#include "bench/clocks.h"
#include "bench/energy.h"
#include "tests/support/golden.h"
#include "tests/support/trace_testing.h"

namespace laptime {
namespace {

// What print_bench writes.
std::string text_of(const BenchResult& r) {
  return trace::testing_support::printed([&r](std::FILE* out) { print_bench(r, out); });
}

// Back-to-back laps of `lap_ms` from `t0`.
std::vector<std::pair<double, double>> laps_from(double t0, double lap_ms, int n) {
  std::vector<std::pair<double, double>> s;
  for (int i = 0; i < n; ++i) s.emplace_back(t0 + i * lap_ms, t0 + (i + 1) * lap_ms);
  return s;
}

// A board at constant power: the counter steps every `period` ms from `phase` (the first step,
// which may fall before the laps), each step seen between two polls `half_poll` ms either side
// of it; the counter's value is the energy to that moment, rounded to the millijoule.
std::vector<EnergyReading> steps_at(double watts, double phase, double period, double until, double half_poll) {
  std::vector<EnergyReading> r;
  for (double t = phase; t <= until; t += period)
    r.push_back({t - half_poll, t + half_poll, static_cast<uint64_t>(std::llround(5e6 + watts * t))});
  return r;
}

// Fresh draws each run: a power, a lap, the counter's period and phase. The reference is the
// whole span's arithmetic (first and last step inside the laps: energy over laps, laps being
// the span over one lap's length when laps are back to back), not the blocks' sums.
TEST(BenchEnergy, ConstantPowerGivesPowerTimesLap) {
  std::mt19937_64 rng(std::random_device{}());
  for (int trial = 0; trial < 20; ++trial) {
    const double watts = std::uniform_real_distribution<double>(150, 700)(rng);
    const double lap = std::uniform_real_distribution<double>(0.25, 9.0)(rng);
    const double period = std::uniform_real_distribution<double>(10, 110)(rng);
    const double t0 = std::uniform_real_distribution<double>(5, 40)(rng);  // the warm-up's end
    const int n = static_cast<int>(std::ceil(12 * period / lap));
    EnergyInputs in;
    in.steady_spans = laps_from(t0, lap, n);
    in.items_per_forward = 8192;
    in.item = "tokens";
    in.power_limit_w = 700;
    const double phase = std::uniform_real_distribution<double>(0, period)(rng);
    const std::vector<EnergyReading> readings = steps_at(watts, phase, period, t0 + n * lap + 2 * period, 0.4);
    const BenchEnergy e = measure_energy(in, readings);
    ASSERT_EQ(e.unavailable, "") << "trial " << trial;
    // The steps inside the laps, by an independent pass over the readings.
    const double w0 = t0, w1 = t0 + n * lap;
    const EnergyReading *first = nullptr, *last = nullptr;
    std::size_t inside = 0;
    for (const EnergyReading& x : readings) {
      const double t = 0.5 * (x.before_ms + x.seen_ms);
      if (t < w0 || t > w1) continue;
      if (!first) first = &x;
      last = &x;
      ++inside;
    }
    ASSERT_TRUE(first && last != first);
    const double span = 0.5 * (last->before_ms + last->seen_ms) - 0.5 * (first->before_ms + first->seen_ms);
    const double joules = double(last->mj - first->mj) / 1000;
    EXPECT_NEAR(e.joules_per_forward, joules / (span / lap), 1e-9 * e.joules_per_forward) << "trial " << trial;
    EXPECT_NEAR(e.mean_watts, joules / (span / 1000), 1e-9 * watts);
    // And against the power drawn: the counter's millijoule rounding at the two ends is the only error.
    EXPECT_NEAR(e.joules_per_forward, watts * lap / 1000, 1e-3 / (span / lap));
    EXPECT_NEAR(e.mj_per_item, e.joules_per_forward * 1000 / 8192, 1e-12);
    EXPECT_EQ(e.blocks.size(), inside - 1);
    EXPECT_NEAR(e.step_interval_ms, period, 1e-9);
    EXPECT_EQ(e.steps, readings.size());
    EXPECT_EQ(e.laps, static_cast<std::size_t>(n));
    EXPECT_NEAR(e.measured_ms, span, 1e-9);
    EXPECT_NEAR(e.steady_ms, n * lap, 1e-9);
    EXPECT_FALSE(e.laps_at_cap);  // no clock: nothing said about the cap
    EXPECT_LE(e.block_p10, e.block_p90);
  }
}

// Worked by hand: laps of 4 ms from 0 to 40 with a 2 ms idle gap after lap 4 (laps 5-9 run
// 22-42), steps at 2, 11, 30 and 39 ms (midpoints of polls 1 ms apart). Block [2, 11]: half of
// lap 0 (2-4), lap 1, 3/4 of lap 2 (8-11) = 2.25 laps, 900 mJ. [11, 30]: 1/4 of lap 2, laps 3
// and 4 (12-20), the gap 20-22, laps 5 and 6 (22-30) = 4.25 laps, 2000 mJ. [30, 39]: laps 7
// (30-34) and 8 (34-38), 1/4 of lap 9 (38-39) = 2.25 laps, 720 mJ. Total 3.62 J over 8.75 laps.
TEST(BenchEnergy, BlocksCountTheLapsInsideThem) {
  EnergyInputs in;
  in.steady_spans = laps_from(0, 4, 5);
  for (const auto& s : laps_from(22, 4, 5)) in.steady_spans.push_back(s);
  in.at_cap = {false, false, true, true, true, true, true, true, true, false};
  in.items_per_forward = 256;
  in.item = "images";
  in.power_limit_w = 700;
  const std::vector<EnergyReading> readings{{-9.5, -8.5, 1000}, {1.5, 2.5, 2000},   {10.5, 11.5, 2900},
                                            {29.5, 30.5, 4900}, {38.5, 39.5, 5620}, {48.5, 49.5, 6000}};
  const BenchEnergy e = measure_energy(in, readings);
  ASSERT_EQ(e.unavailable, "");
  ASSERT_EQ(e.blocks.size(), 3u);
  EXPECT_DOUBLE_EQ(e.blocks[0].laps, 2.25);
  EXPECT_DOUBLE_EQ(e.blocks[1].laps, 4.25);
  EXPECT_DOUBLE_EQ(e.blocks[2].laps, 2.25);
  EXPECT_DOUBLE_EQ(e.blocks[0].joules, 0.9);
  EXPECT_DOUBLE_EQ(e.blocks[1].joules, 2.0);
  EXPECT_DOUBLE_EQ(e.blocks[2].joules, 0.72);
  EXPECT_DOUBLE_EQ(e.blocks[1].start_ms, 11);
  EXPECT_DOUBLE_EQ(e.blocks[1].end_ms, 30);
  EXPECT_DOUBLE_EQ(e.joules_per_forward, 3.62 / 8.75);
  EXPECT_DOUBLE_EQ(e.mean_watts, 3.62 / 0.037);
  EXPECT_DOUBLE_EQ(e.mj_per_item, 3620 / 8.75 / 256);
  // The blocks' own figures 0.4, 0.470588, 0.32: p10 and p90 by linear interpolation of ranks.
  EXPECT_DOUBLE_EQ(e.block_p10, 0.32 + 0.2 * (0.4 - 0.32));
  EXPECT_DOUBLE_EQ(e.block_p90, 0.4 + 0.8 * (2.0 / 4.25 - 0.4));
  EXPECT_DOUBLE_EQ(e.step_interval_ms, 10);  // the steps' spacings 11, 9, 19, 9, 10
  EXPECT_EQ(e.laps_at_cap, 7u);
  EXPECT_EQ(e.laps, 10u);
  EXPECT_DOUBLE_EQ(e.measured_ms, 37);
  EXPECT_DOUBLE_EQ(e.steady_ms, 42);
}

// Twenty laps of 3.8 ms hold one step of a counter that steps every 98 ms: no figure, and the
// reason says how many laps give ten blocks, ceil(11 x 98 / 3.8) = 284.
TEST(BenchEnergy, ARunShorterThanTwoStepsSaysHowManyLaps) {
  EnergyInputs in;
  in.steady_spans = laps_from(20, 3.8, 20);
  in.item = "tokens";
  const BenchEnergy e = measure_energy(in, {{-79, -77, 100}, {19, 21, 200}, {117, 119, 300}});
  EXPECT_EQ(e.unavailable,
            "NVML's energy counter stepped 1 time in the 76 ms of steady laps, and a measurement needs two steps (it "
            "stepped every 98 ms over the loop): --iters 284 gives about 10 blocks");
  const BenchEnergy none = measure_energy(in, {});
  EXPECT_EQ(none.unavailable,
            "NVML's energy counter stepped 0 times in the 76 ms of steady laps, and a measurement needs two steps: "
            "run at least a second of laps (--iters 264)");
  in.steady_spans.clear();
  EXPECT_EQ(measure_energy(in, {}).unavailable, "no steady lap to measure");
}

TEST(BenchEnergy, ACounterGoingBackwardsIsNoMeasurement) {
  EnergyInputs in;
  in.steady_spans = laps_from(0, 4, 50);
  const BenchEnergy e = measure_energy(in, {{9, 11, 5000}, {49, 51, 9000}, {89, 91, 200}, {129, 131, 4000}});
  EXPECT_EQ(e.unavailable, "NVML's energy counter went backwards during the loop (the driver reloaded?)");
}

// At the cap: the SW power cap among a lap's reasons (bench_result.h). Laps 1-2 with a thermal
// slowdown alone are throttled but not at the cap; laps 3-4 carry the cap.
TEST(BenchEnergy, LapsAtTheCapAreThoseWithThePowerCapReason) {
  BenchResult r;
  r.item_name = "tokens";
  r.items_per_forward = 4;
  for (int i = 0; i < 5; ++i) {
    BenchLap l;
    l.index = i;
    l.warmup = i == 0;
    l.ms = 10.f;
    r.laps.push_back(l);
  }
  const auto spans = laps_from(0, 10, 5);
  std::vector<ClockSample> clock;
  for (double t = 0.5; t < 50; t += 1)
    clock.push_back({t, 1900, t < 10 ? 0 : t < 30 ? kClockSwThermal : kClockSwPowerCap | kClockSwThermal});
  assign_clocks(r, spans, clock, 700);
  EXPECT_TRUE(r.laps[1].throttled);
  EXPECT_FALSE(r.laps[1].at_power_cap);
  EXPECT_TRUE(r.laps[3].throttled);
  EXPECT_TRUE(r.laps[3].at_power_cap);
  assign_energy(r, spans, {{4.5, 5.5, 1000}, {14.5, 15.5, 8000}, {34.5, 35.5, 22000}, {44.5, 45.5, 29000}}, "", 700);
  ASSERT_TRUE(r.energy);
  ASSERT_EQ(r.energy->unavailable, "");
  EXPECT_EQ(r.energy->laps_at_cap, 2u);
  EXPECT_EQ(r.energy->laps, 4u);                               // the warm-up lap is no steady lap
  EXPECT_DOUBLE_EQ(r.energy->joules_per_forward, 21.0 / 3.0);  // steps at 15, 35, 45: 30 ms, 3 laps, 21 J
  // Without the clock's reasons nothing is said about the cap.
  r.clocks = BenchClocks{"LAPTIME_BENCH_CLOCK=off"};
  assign_energy(r, spans, {{14.5, 15.5, 8000}, {44.5, 45.5, 29000}}, "", 0);
  EXPECT_FALSE(r.energy->laps_at_cap);
  assign_energy(r, spans, {}, "LAPTIME_BENCH_CLOCK=off (the clock sampler reads it)", 0);
  EXPECT_EQ(r.energy->unavailable, "LAPTIME_BENCH_CLOCK=off (the clock sampler reads it)");
}

BenchResult measured_run() {
  BenchResult r;
  r.config.precision = "bf16";
  r.config.iters = 10;
  r.item_name = "images";
  r.items_per_forward = 256;
  for (int i = 0; i < 10; ++i) {
    BenchLap l;
    l.index = i;
    l.ms = 4.f;
    r.laps.push_back(l);
  }
  summarize(r);
  EnergyInputs in;
  in.steady_spans = laps_from(0, 4, 10);
  in.at_cap.assign(10, true);
  in.items_per_forward = 256;
  in.item = "images";
  in.power_limit_w = 700;
  r.energy = measure_energy(in, {{1.5, 2.5, 2000}, {10.5, 11.5, 8300}, {29.5, 30.5, 21600}, {38.5, 39.5, 27900}});
  return r;
}

// The lines under the clock's and the JSON: 25.9 J over 37 ms and 9.25 laps.
TEST(BenchEnergy, TextAndJson) {
  const BenchResult r = measured_run();
  ASSERT_TRUE(r.energy && r.energy->unavailable.empty());
  const std::string t = text_of(r);
  EXPECT_NE(
      t.find("  energy      2.800 J per forward (blocks' p10-p90 2.800-2.800), 10.94 mJ per image, mean 700 W "
             "(the board's limit 700 W)\n"
             "              NVML's energy counter over 37 of the 40 ms of steady laps: 3 blocks, a step every 9 ms; "
             "10 of 10 laps at the power cap\n"
             "\nlap time: 4.000 ms"),
      std::string::npos)
      << t;
  const nlohmann::json j = bench_to_json(r)["energy"];
  EXPECT_EQ(j["available"], true);
  EXPECT_EQ(j["source"], "NVML total-energy counter");
  EXPECT_DOUBLE_EQ(j["joules_per_forward"].get<double>(), 25.9 / 9.25);
  EXPECT_DOUBLE_EQ(j["mj_per_item"].get<double>(), 25900 / 9.25 / 256);
  EXPECT_EQ(j["item"], "images");
  EXPECT_DOUBLE_EQ(j["mean_watts"].get<double>(), 25.9 / 0.037);
  EXPECT_EQ(j["power_limit_watts"], 700);
  EXPECT_EQ(j["laps_at_cap"], 10);
  EXPECT_EQ(j["laps"], 10);
  EXPECT_EQ(j["counter_steps"], 4);
  EXPECT_EQ(j["blocks"].size(), 3u);
  EXPECT_EQ(j["blocks"][1], nlohmann::json({{"start_ms", 11.0}, {"end_ms", 30.0}, {"joules", 13.3}, {"laps", 4.75}}));
  for (const char* k :
       {"joules_per_forward_p10", "joules_per_forward_p90", "measured_ms", "steady_ms", "step_interval_ms"})
    EXPECT_TRUE(j.contains(k)) << k;
  // Unknown limit and cap: null, and the line leaves them out.
  BenchResult u = measured_run();
  u.energy->power_limit_w = 0;
  u.energy->laps_at_cap.reset();
  EXPECT_EQ(bench_to_json(u)["energy"]["power_limit_watts"], nullptr);
  EXPECT_EQ(bench_to_json(u)["energy"]["laps_at_cap"], nullptr);
  EXPECT_NE(text_of(u).find("mean 700 W\n              NVML's energy counter over 37 of the 40 ms of steady laps: 3 "
                            "blocks, a step every 9 ms\n"),
            std::string::npos)
      << text_of(u);
}

TEST(BenchEnergy, NotMeasuredSaysWhyInOneLine) {
  BenchResult r = measured_run();
  r.energy = BenchEnergy{};
  r.energy->unavailable = "the GPU at 0000:17:00.0 has no total-energy counter (NVML has one for Volta and newer)";
  EXPECT_NE(text_of(r).find("  energy      not measured: the GPU at 0000:17:00.0 has no total-energy counter (NVML has "
                            "one for Volta and newer)\n\nlap time"),
            std::string::npos)
      << text_of(r);
  EXPECT_EQ(bench_to_json(r)["energy"], nlohmann::json({{"available", false}, {"reason", r.energy->unavailable}}));
  r.energy.reset();  // a result made by hand: no line, no key
  EXPECT_EQ(text_of(r).find("energy"), std::string::npos);
  EXPECT_FALSE(bench_to_json(r).contains("energy"));
}

// The cases both implementations are held to (bench/energy.cpp here, torch_baseline.py's in
// tests/python), with the report's `energy` worked out by tests/fixtures/energy/make_energy_cases.py.
TEST(BenchEnergy, TheSharedCasesGiveTheirWorkedOutMember) {
  std::ifstream f(test::source_dir() + "/tests/fixtures/energy/energy_cases.json");
  ASSERT_TRUE(f);
  const nlohmann::json cases = nlohmann::json::parse(f);
  ASSERT_GE(cases.size(), 5u);
  for (const nlohmann::json& c : cases) {
    EnergyInputs in;
    for (const auto& s : c["steady_spans"]) in.steady_spans.emplace_back(s[0].get<double>(), s[1].get<double>());
    if (!c["at_cap"].is_null())
      for (const auto& b : c["at_cap"]) in.at_cap.push_back(b.get<bool>());
    in.items_per_forward = c["items"];
    in.item = c["item"];
    in.power_limit_w = c["power_limit_w"];
    std::vector<EnergyReading> readings;
    for (const auto& x : c["readings"])
      readings.push_back({x[0].get<double>(), x[1].get<double>(), x[2].get<uint64_t>()});
    BenchResult r;
    r.energy = measure_energy(in, readings);
    const nlohmann::json got = bench_to_json(r)["energy"], want = c["energy"];
    const std::string name = c["name"];
    ASSERT_EQ(got.size(), want.size()) << name << ": " << got.dump();
    for (const auto& [k, v] : want.items()) {
      ASSERT_TRUE(got.contains(k)) << name << ": " << k;
      if (k == "blocks") {
        ASSERT_EQ(got[k].size(), v.size()) << name;
        for (std::size_t i = 0; i < v.size(); ++i)
          for (const auto& [bk, bv] : v[i].items())
            EXPECT_NEAR(got[k][i][bk].get<double>(), bv.get<double>(), 1e-12 * std::abs(bv.get<double>()))
                << name << ": block " << i << " " << bk;
      } else if (v.is_number_float()) {
        EXPECT_NEAR(got[k].get<double>(), v.get<double>(), 1e-12 * std::abs(v.get<double>())) << name << ": " << k;
      } else {
        EXPECT_EQ(got[k], v) << name << ": " << k;
      }
    }
  }
}

// --- the sampler over a fake NVML ------------------------------------------------------------

// The fake's state (its entry points are plain C function pointers, so it lives here).
struct Fake {
  int init_rc = 0, energy_rc = 0;
  std::atomic<int> energy_calls{0}, shutdowns{0};
  std::string bus;
};
Fake* fake = nullptr;
int dummy_device = 0;

int f_init() { return fake->init_rc; }
int f_shutdown() { return ++fake->shutdowns, 0; }
int f_by_pci(const char* bus, NvmlApi::Device* d) {
  fake->bus = bus;
  *d = &dummy_device;
  return 0;
}
int f_clock(NvmlApi::Device d, int which, unsigned* mhz) {
  *mhz = 1980;
  return d == &dummy_device && which == 1 ? 0 : 1;
}
int f_reasons(NvmlApi::Device, unsigned long long* r) { return *r = kClockSwPowerCap, 0; }
int f_power_limit(NvmlApi::Device, unsigned* mw) { return *mw = 700000, 0; }
// The counter steps by 700 mJ every fifth call: the first call (the sampler's check when it
// opens) and every poll count.
int f_energy(NvmlApi::Device, unsigned long long* mj) {
  const int k = fake->energy_calls++;
  *mj = 1000 + 700ull * static_cast<unsigned>(k / 5);
  return fake->energy_rc;
}

NvmlApi fake_api() {
  NvmlApi a;
  a.init = f_init;
  a.shutdown = f_shutdown;
  a.by_pci = f_by_pci;
  a.clock = f_clock;
  a.reasons = f_reasons;
  a.power_limit = f_power_limit;
  a.energy = f_energy;
  return a;
}

TEST(BenchEnergySampler, KeepsEachStepWithThePollsAroundIt) {
  Fake state;
  fake = &state;
  std::vector<ClockSample> clock;
  std::vector<EnergyReading> steps;
  {
    ClockSampler s(fake_api(), "0000:17:00.0");
    EXPECT_EQ(s.unavailable(), "");
    EXPECT_EQ(s.energy_unavailable(), "");
    EXPECT_EQ(s.power_limit_w(), 700);
    EXPECT_EQ(state.bus, "0000:17:00.0");
    s.start();
    while (state.energy_calls < 40) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    clock = s.stop();
    steps = s.take_energy();
  }
  EXPECT_EQ(state.shutdowns, 1);
  const int calls = state.energy_calls;  // one when opened, then one a poll
  ASSERT_GE(calls, 40);
  // The polls are calls 1 .. calls-1; the first poll is the sampler's first reading, and the
  // value changes at calls 5, 10, ...: every one of those after the first poll is a step.
  EXPECT_EQ(steps.size(), static_cast<std::size_t>((calls - 1) / 5));
  EXPECT_EQ(clock.size(), static_cast<std::size_t>(calls - 1));
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].mj, 1000 + 700 * (i + 1));
    EXPECT_LT(steps[i].before_ms, steps[i].seen_ms);
    if (i) EXPECT_LE(steps[i - 1].seen_ms, steps[i].before_ms);
  }
  EXPECT_EQ(clock.front().reasons, kClockSwPowerCap);
  fake = nullptr;
}

TEST(BenchEnergySampler, SaysWhyTheCounterIsNotRead) {
  Fake state;
  fake = &state;
  state.energy_rc = 3;  // NVML_ERROR_NOT_SUPPORTED
  {
    ClockSampler s(fake_api(), "0000:17:00.0");
    EXPECT_EQ(s.unavailable(), "");  // the clock still is
    EXPECT_EQ(s.energy_unavailable(),
              "the GPU at 0000:17:00.0 has no total-energy counter (NVML has one for Volta and newer)");
    s.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    s.stop();
    EXPECT_TRUE(s.take_energy().empty());
    EXPECT_EQ(state.energy_calls, 1);  // asked once, when opened, never polled
  }
  state.energy_rc = 999;
  EXPECT_EQ(ClockSampler(fake_api(), "0000:17:00.0").energy_unavailable(),
            "NVML cannot read the total-energy counter of the GPU at 0000:17:00.0 (NVML error 999)");
  NvmlApi no_energy = fake_api();
  no_energy.energy = nullptr;
  EXPECT_EQ(ClockSampler(no_energy, "0000:17:00.0").energy_unavailable(),
            "this NVML has no total-energy counter (nvmlDeviceGetTotalEnergyConsumption)");
  state.init_rc = 1;
  ClockSampler off(fake_api(), "0000:17:00.0");
  EXPECT_EQ(off.unavailable(), "NVML did not initialise");
  EXPECT_EQ(off.energy_unavailable(), "NVML did not initialise");
  fake = nullptr;
}

}  // namespace
}  // namespace laptime
