// `laptime diff` of two bench reports with energy (bench/energy.h's blocks): the energy per
// forward beside the lap, its interval and label, the note when one side has none, and nothing
// at all when neither has it. The reports are written here, with fresh random blocks; the
// reference figures are sums over the blocks written, computed here.
#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/trace_testing.h"
#include "trace/compare/diff.h"
#include "trace/write/diff_json.h"
#include "trace/write/diff_text.h"

namespace laptime::trace {
namespace {

using nlohmann::json;
using testing_support::printed;
using testing_support::temp_path;

struct Blocks {
  std::vector<double> joules, laps;
  double ratio() const {
    double j = 0, l = 0;
    for (std::size_t i = 0; i < joules.size(); ++i) j += joules[i], l += laps[i];
    return j / l;
  }
};

// `n` blocks of 10-30 laps at `j_per_forward`, each block's own figure off by up to ±noise/2.
Blocks draw_blocks(std::mt19937_64& rng, int n, double j_per_forward, double noise) {
  Blocks b;
  std::uniform_real_distribution<double> laps(10, 30), off(-noise / 2, noise / 2);
  for (int i = 0; i < n; ++i) {
    b.laps.push_back(laps(rng));
    b.joules.push_back(b.laps.back() * j_per_forward * (1 + off(rng)));
  }
  return b;
}

// A laptime.bench/1 report: 25 laps of `lap_ms` (5 of them warm-up), and `energy` as given.
std::string write_report(const std::string& name, double lap_ms, const json& energy) {
  json r{{"schema", "laptime.bench/1"}, {"framework", "laptime"}, {"device", {{"name", "Test GPU"}}}};
  r["config"] = {{"model", "gpt2"}, {"precision", "bf16"}, {"shape", "B=8 T=1024 (8192 tokens)"}, {"mode", "eager"}};
  json its = json::array();
  for (int i = 0; i < 25; ++i)
    its.push_back({{"index", i}, {"warmup", i < 5}, {"lap_ms", lap_ms * (1 + 1e-3 * (i % 3))}});
  r["iterations"] = its;
  if (!energy.is_null()) r["energy"] = energy;
  const std::string path = temp_path("dE", name);
  std::ofstream(path) << r.dump(2);
  return path;
}

json energy_of(const Blocks& b) {
  json blocks = json::array();
  double t = 0;
  for (std::size_t i = 0; i < b.joules.size(); ++i, t += 100)
    blocks.push_back({{"start_ms", t}, {"end_ms", t + 100}, {"joules", b.joules[i]}, {"laps", b.laps[i]}});
  return {{"available", true}, {"joules_per_forward", b.ratio()}, {"blocks", blocks}};
}

Diff diff_of(const std::string& before, const std::string& after) {
  const DiffOptions o;
  return diff_runs(load_run(before, o), load_run(after, o), o);
}

// 8% less energy a forward, block noise 1%: LESS, the interval around the change of the two
// ratios and clear of zero; then the same blocks on both sides: SAME, no change.
TEST(DiffEnergy, BothSidesMeasuredGiveTheChangeAndItsInterval) {
  std::mt19937_64 rng(std::random_device{}());
  const double j = std::uniform_real_distribution<double>(0.5, 12)(rng);
  const Blocks b = draw_blocks(rng, 20, j, 0.01), a = draw_blocks(rng, 23, 0.92 * j, 0.01);
  const std::string bp = write_report("before.json", 3.8, energy_of(b)),
                    ap = write_report("after.json", 3.5, energy_of(a));
  const Diff d = diff_of(bp, ap);
  ASSERT_TRUE(d.energy);
  const EnergyRow& e = *d.energy;
  EXPECT_NEAR(e.before_j, b.ratio(), 1e-12 * j);
  EXPECT_NEAR(e.after_j, a.ratio(), 1e-12 * j);
  EXPECT_NEAR(e.change_pct, 100 * (a.ratio() - b.ratio()) / b.ratio(), 1e-9);
  EXPECT_LT(e.ci.lo, e.change_j);
  EXPECT_GT(e.ci.hi, e.change_j);
  EXPECT_LT(e.ci.hi, 0);
  EXPECT_EQ(energy_label_name(e.label), std::string("LESS"));
  const std::string text = printed([&d](std::FILE* out) { print_diff(d, out); });
  char line[200];
  std::snprintf(line, sizeof line,
                "  energy      per forward %.3f -> %.3f J (%+.1f%%, 95%% interval %+.1f%% .. %+.1f%%): LESS\n",
                b.ratio(), a.ratio(), e.change_pct, 100 * e.ci.lo / b.ratio(), 100 * e.ci.hi / b.ratio());
  EXPECT_NE(text.find(line), std::string::npos) << text;
  const json dj = diff_to_json(d)["energy"];
  EXPECT_EQ(dj["label"], "LESS");
  EXPECT_DOUBLE_EQ(dj["before_j"].get<double>(), e.before_j);
  EXPECT_DOUBLE_EQ(dj["after_j"].get<double>(), e.after_j);
  EXPECT_DOUBLE_EQ(dj["ci_j"][0].get<double>(), e.ci.lo);
  EXPECT_DOUBLE_EQ(dj["ci_pct"][1].get<double>(), 100 * e.ci.hi / e.before_j);
  // The other way round: MORE.
  EXPECT_EQ(energy_label_name(diff_of(ap, bp).energy->label), std::string("MORE"));
  const Diff same = diff_of(bp, bp);
  ASSERT_TRUE(same.energy);
  EXPECT_EQ(same.energy->change_j, 0);
  EXPECT_EQ(energy_label_name(same.energy->label), std::string("SAME"));
}

// A real change under the line reads as the layers' rows read it: an energy change of 0.5-2%
// either way with quiet blocks (the interval clear of zero, inside ±3%) is "SAME within ±3%" in
// the text and same_within in the JSON; the same blocks on both sides (zero in the interval) a
// bare SAME, with no same_within.
TEST(DiffEnergy, ARealChangeUnderTheLineIsSameWithin) {
  std::mt19937_64 rng(std::random_device{}());
  const double j = std::uniform_real_distribution<double>(0.5, 12)(rng);
  const double change = std::uniform_real_distribution<double>(0.005, 0.02)(rng) * (rng() % 2 ? 1 : -1);
  const Blocks b = draw_blocks(rng, 20, j, 0.001), a = draw_blocks(rng, 23, (1 + change) * j, 0.001);
  const std::string bp = write_report("quiet_before.json", 3.8, energy_of(b)),
                    ap = write_report("quiet_after.json", 3.8, energy_of(a));
  const Diff d = diff_of(bp, ap);
  ASSERT_TRUE(d.energy);
  const EnergyRow& e = *d.energy;
  ASSERT_TRUE(e.ci.excludes_zero()) << e.ci.lo << " .. " << e.ci.hi;
  const double t = DiffOptions{}.threshold_pct;
  ASSERT_LT(std::max(std::fabs(e.ci.lo), std::fabs(e.ci.hi)), t / 100 * e.before_j);
  EXPECT_EQ(energy_label_name(e.label), std::string("SAME"));
  ASSERT_TRUE(e.same_within);
  EXPECT_TRUE(e.same_within->relative);
  EXPECT_EQ(e.same_within->bound, t);
  const std::string text = printed([&d](std::FILE* out) { print_diff(d, out); });
  char line[200];
  std::snprintf(line, sizeof line,
                "  energy      per forward %.3f -> %.3f J (%+.1f%%, 95%% interval %+.1f%% .. %+.1f%%): SAME within "
                "±%g%%\n",
                b.ratio(), a.ratio(), e.change_pct, 100 * e.ci.lo / b.ratio(), 100 * e.ci.hi / b.ratio(), t);
  EXPECT_NE(text.find(line), std::string::npos) << text;
  const json dj = diff_to_json(d)["energy"];
  EXPECT_EQ(dj["label"], "SAME");
  EXPECT_EQ(dj["same_within"], json({{"pct", t}}));

  const Diff same = diff_of(bp, bp);
  ASSERT_TRUE(same.energy);
  EXPECT_FALSE(same.energy->ci.excludes_zero());
  EXPECT_FALSE(same.energy->same_within);
  const std::string plain = printed([&same](std::FILE* out) { print_diff(same, out); });
  EXPECT_NE(plain.find("): SAME\n"), std::string::npos) << plain;
  EXPECT_FALSE(diff_to_json(same)["energy"].contains("same_within"));
}

// One side without energy: a note says which and why, in one line, the reason escaped; no row.
// Neither side: no note, no line, no key (reports from before the bench measured energy).
TEST(DiffEnergy, OneSideOnlyIsANoteAndNeitherIsNothing) {
  std::mt19937_64 rng(std::random_device{}());
  const Blocks b = draw_blocks(rng, 12, 2.7, 0.01);
  const std::string with = write_report("with.json", 3.8, energy_of(b));
  const std::string without = write_report(
      "short.json", 3.8, {{"available", false}, {"reason", "NVML's energy counter stepped 1 time\n\x1b[31m"}});
  const Diff d = diff_of(with, without);
  EXPECT_FALSE(d.energy);
  bool noted = false;
  for (const std::string& n : d.notes)
    if (n.rfind("Energy per forward is compared when both sides are bench reports that measured it: after (", 0) == 0) {
      noted = true;
      EXPECT_NE(n.find(") has none: NVML's energy counter stepped 1 time\\x0A\\x1B[31m."), std::string::npos) << n;
    }
  EXPECT_TRUE(noted);
  const std::string old = write_report("old.json", 3.8, nullptr);
  const Diff none = diff_of(old, without);  // one says why it has none, but neither has energy
  EXPECT_FALSE(none.energy);
  for (const std::string& n : none.notes) EXPECT_EQ(n.find("Energy"), std::string::npos) << n;
  const std::string text = printed([&none](std::FILE* out) { print_diff(none, out); });
  EXPECT_EQ(text.find("energy"), std::string::npos) << text;
  EXPECT_FALSE(diff_to_json(none).contains("energy"));
  const Diff half = diff_of(old, with);
  ASSERT_FALSE(half.notes.empty());
  bool said = false;
  for (const std::string& n : half.notes) said = said || n.find("before (" + old + ") has none.") != std::string::npos;
  EXPECT_TRUE(said);
}

// A malformed energy member is no energy, said in the note; the laps are still compared.
TEST(DiffEnergy, AMalformedEnergyMemberIsNoEnergy) {
  std::mt19937_64 rng(std::random_device{}());
  const std::string good = write_report("good.json", 3.8, energy_of(draw_blocks(rng, 8, 2.7, 0.01)));
  for (const auto& [name, energy, why] :
       {std::tuple<std::string, json, std::string>{"m1.json", json::array(), "its energy member is malformed"},
        {"m2.json",
         {{"available", true}, {"blocks", {{{"joules", "x"}, {"laps", 3}}}}},
         "an energy block of it has no joules and laps as numbers of 0 or more"},
        {"m3.json",
         {{"available", true}, {"blocks", {{{"joules", 5}, {"laps", -1}}}}},
         "an energy block of it has no joules and laps as numbers of 0 or more"},
        {"m4.json", {{"available", true}, {"blocks", json::array()}}, "its energy has no block with laps in it"}}) {
    const Diff d = diff_of(good, write_report(name, 3.8, energy));
    EXPECT_FALSE(d.energy) << name;
    ASSERT_EQ(d.rows.size(), 1u) << name;
    bool said = false;
    for (const std::string& n : d.notes) said = said || n.find("has none: " + why + ".") != std::string::npos;
    EXPECT_TRUE(said) << name;
  }
}

}  // namespace
}  // namespace laptime::trace
