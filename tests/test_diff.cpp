// `laptime diff` and the steady-state rule, host-only (the statistics themselves:
// tests/test_stats.cpp): the diff of synthetic trace pairs with known shifts against the answers that
// tests/fixtures/make_diff_fixtures.py computed from the generated durations, the gate's exit
// codes, and the diff of real captures in tests/fixtures/nsys.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "trace/compare/diff.h"
#include "trace/analyses/roofline.h"
#include "cli/diff_command.h"
#include "trace/write/diff_json.h"
#include "trace/write/diff_svg.h"
#include "trace/write/diff_text.h"
#include "trace/write/analysis_json.h"
#include "tests/support/trace_testing.h"
#include "trace/read/nsys_sqlite.h"

namespace laptime::trace {
namespace {

using nlohmann::json;
using testing_support::error_of;
using testing_support::fixture;
using testing_support::read_file;
using testing_support::temp_path;

std::string temp(const std::string& name) { return temp_path("diff", name); }

json expected() { return json::parse(read_file(fixture("diff_fixtures.expected.json"))); }

const DiffRow* row(const Diff& d, const std::string& name) {
  for (const DiffRow& r : d.rows)
    if (r.name == name) return &r;
  return nullptr;
}

Diff diff_files(const std::string& before, const std::string& after, DiffOptions o = {}) {
  return diff_runs(load_run(fixture(before), o), load_run(fixture(after), o), o);
}

TEST(Labels, Definitions) {
  DiffOptions o;
  o.threshold_pct = 2.0;  // the rules at t = 2% (the default is 3%), min change 1 us
  const double b = 1e6;   // 1 ms before
  EXPECT_EQ(classify_change(b, 30e3, {10e3, 50e3}, o), Label::Slower);
  EXPECT_EQ(classify_change(b, -30e3, {-50e3, -10e3}, o), Label::Faster);
  EXPECT_EQ(classify_change(b, 5e3, {1e3, 9e3}, o), Label::Same);  // real, but within ±2%
  EXPECT_EQ(classify_change(b, 0, {-15e3, 15e3}, o), Label::Same);
  EXPECT_EQ(classify_change(b, 30e3, {-5e3, 60e3}, o), Label::Unclear);  // interval touches zero
  EXPECT_EQ(classify_change(b, 15e3, {2e3, 30e3}, o), Label::Unclear);   // clear of zero, too small, too wide
  // The absolute floor: 10% of a 5 us layer is 0.5 us, below 1 us.
  EXPECT_EQ(classify_change(5e3, 500, {400, 600}, o), Label::Same);
  EXPECT_EQ(classify_change(0, 10, {5, 15}, o), Label::Unclear);
}

// --- synthetic pairs ---------------------------------------------------------------------------

TEST(DiffSynthetic, LabelsAreWhatTheShiftsMake) {
  const json e = expected();
  for (const auto& [pair, spec] : e["pairs"].items()) {
    SCOPED_TRACE(pair);
    const Diff d = diff_files("diff_" + spec["before"].get<std::string>() + ".sqlite",
                              "diff_" + spec["after"].get<std::string>() + ".sqlite");
    ASSERT_EQ(d.rows.size(), spec["labels"].size());
    for (const auto& [name, label] : spec["labels"].items()) {
      const DiffRow* r = row(d, name);
      ASSERT_NE(r, nullptr) << name;
      EXPECT_EQ(label_name(r->label), label.get<std::string>()) << name;
    }
    EXPECT_TRUE(d.rows.front().whole);
    for (size_t i = 2; i < d.rows.size(); ++i)  // layers by absolute change
      EXPECT_GE(std::fabs(d.rows[i - 1].change_ns), std::fabs(d.rows[i].change_ns));
  }
}

TEST(DiffSynthetic, MediansAndKernelCountsAreTheGeneratedOnes) {
  const json e = expected();
  const Diff d = diff_files("diff_base.sqlite", "diff_attn_slower.sqlite");
  const json& b = e["runs"]["base"];
  const json& a = e["runs"]["attn_slower"];
  EXPECT_DOUBLE_EQ(d.rows.front().before_ns, b["iteration_median_ns"].get<double>());
  EXPECT_DOUBLE_EQ(d.rows.front().after_ns, a["iteration_median_ns"].get<double>());
  EXPECT_EQ(d.before.iteration_ns.size(), b["steady_iterations"].get<size_t>());
  for (const auto& [name, median] : b["layer_median_ns"].items()) {
    const DiffRow* r = row(d, name);
    ASSERT_NE(r, nullptr) << name;
    EXPECT_DOUBLE_EQ(r->before_ns, median.get<double>()) << name;
    EXPECT_DOUBLE_EQ(r->after_ns, a["layer_median_ns"][name].get<double>()) << name;
    EXPECT_DOUBLE_EQ(r->kernels_before, b["kernels_per_iteration"][name].get<double>()) << name;
    EXPECT_DOUBLE_EQ(r->launches_before, b["kernels_per_iteration"][name].get<double>()) << name;  // one launch each
    EXPECT_LE(r->ci.lo, r->change_ns) << name;
    EXPECT_GE(r->ci.hi, r->change_ns) << name;
  }
  // 10% on the attention kernels, within the noise of the medians.
  EXPECT_NEAR(row(d, "h.*.attn")->change_pct, 10.0, 0.5);
}

TEST(DiffSynthetic, FusedKernelIsReportedGoneAndNew) {
  const json spec = expected()["pairs"]["base_vs_gelu_fused"];
  const Diff d = diff_files("diff_base.sqlite", "diff_gelu_fused.sqlite");
  const DiffRow* mlp = row(d, "h.*.mlp");
  ASSERT_NE(mlp, nullptr);
  std::vector<std::string> gone, added;
  for (const auto& [k, c] : mlp->gone) gone.push_back(k);
  for (const auto& [k, c] : mlp->added) added.push_back(k);
  EXPECT_EQ(gone, spec["mlp_kernels_gone"].get<std::vector<std::string>>());
  EXPECT_EQ(added, spec["mlp_kernels_new"].get<std::vector<std::string>>());
  EXPECT_DOUBLE_EQ(mlp->kernels_before, 6);  // 3 per block, 2 blocks
  EXPECT_DOUBLE_EQ(mlp->kernels_after, 4);
  EXPECT_NE(mlp->kernel_note.find("gelu_kernel gone (2/iter before)"), std::string::npos) << mlp->kernel_note;
  EXPECT_NE(mlp->kernel_note.find("fused into fewer kernels"), std::string::npos) << mlp->kernel_note;
  EXPECT_TRUE(row(d, "h.*")->kernel_note.empty()) << "told once, on the innermost layer";
  EXPECT_TRUE(row(d, "h.*.attn")->gone.empty());
}

TEST(DiffSynthetic, AGoneLayerWhoseKernelWasFusedSaysSo) {
  // laptime's finer names: h.{i}.mlp.gelu disappears when the GELU moves into c_fc's GEMM.
  const Diff d = diff_files("diff_fine.sqlite", "diff_fine_fused.sqlite");
  const DiffRow* gelu = row(d, "h.*.mlp.gelu");
  ASSERT_NE(gelu, nullptr);
  EXPECT_EQ(gelu->label, Label::OnlyBefore);
  ASSERT_EQ(gelu->gone.size(), 1u);
  EXPECT_EQ(gelu->gone[0].first, "gelu_kernel");
  EXPECT_NE(gelu->kernel_note.find("h.*.mlp runs 6 -> 4 kernels per iteration: its work was fused"), std::string::npos)
      << gelu->kernel_note;
  const DiffRow* fc = row(d, "h.*.mlp.c_fc");
  ASSERT_NE(fc, nullptr);
  EXPECT_NE(fc->kernel_note.find("fc_gemm_gelu_kernel new (2/iter)"), std::string::npos) << fc->kernel_note;
  EXPECT_NEAR(fc->change_pct, 5.0, 0.5);  // the epilogue costs the GEMM 5%
  EXPECT_TRUE(row(d, "h.*.mlp")->kernel_note.empty()) << "told on the layers inside it";
}

TEST(DiffSynthetic, GraphReplayBorrowsTheLayersByKernelOrder) {
  const json spec = expected()["pairs"]["base_vs_graph"];
  const Diff d = diff_files("diff_base.sqlite", "diff_graph.sqlite");
  EXPECT_FALSE(d.before.layers.empty());
  for (const auto& [name, label] : spec["labels"].items()) {
    const DiffRow* r = row(d, name);
    ASSERT_NE(r, nullptr) << name;
    if (r->whole) continue;
    EXPECT_DOUBLE_EQ(r->kernels_before, r->kernels_after) << name;
    EXPECT_DOUBLE_EQ(r->launches_after, spec["launches_after"].get<double>()) << name;  // one cudaGraphLaunch
  }
  EXPECT_DOUBLE_EQ(row(d, "h.*.mlp")->launches_before, 6);
  // The whole iteration: 12 kernels both sides, 12 launches eager, one cudaGraphLaunch.
  EXPECT_DOUBLE_EQ(d.rows.front().kernels_before, 12);
  EXPECT_DOUBLE_EQ(d.rows.front().kernels_after, 12);
  EXPECT_DOUBLE_EQ(d.rows.front().launches_before, 12);
  EXPECT_DOUBLE_EQ(d.rows.front().launches_after, 1);
  bool told = false;
  for (const std::string& n : d.notes) told |= n.find("takes the layer of its counterpart") != std::string::npos;
  EXPECT_TRUE(told);
  // Another kernel sequence (the GELU fused away): nothing to borrow, the iteration only.
  const Diff other = diff_files("diff_gelu_fused.sqlite", "diff_graph.sqlite");
  EXPECT_EQ(other.rows.size(), 1u);
  EXPECT_EQ(other.rows[0].label, Label::Slower);  // the graph runs the unfused kernels
}

TEST(DiffSynthetic, ByBlockKeepsTheBlockIndex) {
  DiffOptions o;
  o.by = LayerKey::Block;
  const Diff d = diff_files("diff_base.sqlite", "diff_attn_slower.sqlite", o);
  EXPECT_EQ(row(d, "h.*.attn"), nullptr);
  ASSERT_NE(row(d, "h.0.attn"), nullptr);
  ASSERT_NE(row(d, "h.1.attn"), nullptr);
  EXPECT_EQ(row(d, "h.0.attn")->label, Label::Slower);
  EXPECT_EQ(row(d, "h.1.mlp")->label, Label::Same);
  EXPECT_DOUBLE_EQ(row(d, "h.0.attn")->kernels_before, 2);
}

TEST(DiffSynthetic, SteadyStateAndTooShortWarmup) {
  const json e = expected();
  for (const char* name : {"base", "slow_start"}) {
    SCOPED_TRACE(name);
    const DiffSide r = load_run(fixture(std::string("diff_") + name + ".sqlite"), {});
    EXPECT_EQ(r.settling.start, e["runs"][name]["steady_start"].get<size_t>());
    // The bench's marks, extended to where the laps settle (the warm-up chosen from the data).
    EXPECT_EQ(r.warmup, e["runs"][name]["warmup_dropped"].get<size_t>());
    EXPECT_EQ(r.iteration_ns.size(), e["runs"][name]["steady_iterations"].get<size_t>());
  }
  // Settled from the data, the warm-up is long enough: no warning.
  const Diff d = diff_files("diff_base.sqlite", "diff_slow_start.sqlite");
  for (const std::string& n : d.notes) EXPECT_EQ(n.find("Warm-up too short"), std::string::npos) << n;
  // --skip-warmup wins over the data; one too short is warned about.
  DiffOptions short_warmup;
  short_warmup.skip_warmup = 1;
  const DiffSide warned = load_run(fixture("diff_slow_start.sqlite"), short_warmup);
  EXPECT_EQ(warned.warmup, 1u);
  bool told = false;
  for (const std::string& n : warned.notes) told |= n.find("Warm-up too short") != std::string::npos;
  EXPECT_TRUE(told);
  // With the warm-up it asks for, the warning goes.
  DiffOptions o;
  o.skip_warmup = static_cast<int>(e["runs"]["slow_start"]["steady_start"].get<size_t>());
  const DiffSide fixed = load_run(fixture("diff_slow_start.sqlite"), o);
  for (const std::string& n : fixed.notes) EXPECT_EQ(n.find("Warm-up too short"), std::string::npos) << n;
}

TEST(DiffSynthetic, AnalyzeReportsWhereTheLapsSettle) {
  const json e = expected();
  const size_t settles = e["runs"]["slow_start"]["steady_start"].get<size_t>();
  const Trace t = load_nsys_sqlite(fixture("diff_slow_start.sqlite"));
  const TraceJoin j(t);
  const Analysis a = analyze(j, {});
  const IterationSettling s = iteration_settling(a);
  EXPECT_EQ(s.settling.start, settles);
  EXPECT_EQ(s.warmup, settles);  // the warm-up ends where the laps settle, though the bench marked 1
  EXPECT_NE(a.warmup_rule.find("the first " + std::to_string(settles) + ", up to where"), std::string::npos)
      << a.warmup_rule;
  EXPECT_NE(a.warmup_rule.find("the bench marked 1"), std::string::npos) << a.warmup_rule;
  EXPECT_NE(s.text.find("enough"), std::string::npos) << s.text;
  EXPECT_TRUE(s.warning.empty()) << s.warning;
  ReportOptions one;
  one.skip_warmup = 1;
  const IterationSettling given = iteration_settling(analyze(j, one));
  EXPECT_EQ(given.warmup, 1u);
  EXPECT_NE(given.text.find("too short"), std::string::npos) << given.text;
  EXPECT_NE(given.warning.find("--skip-warmup " + std::to_string(settles)), std::string::npos) << given.warning;
  EXPECT_EQ(settling_json(given, analyze(j, one))["warmup_too_short"], true);
  const Trace base = load_nsys_sqlite(fixture("diff_base.sqlite"));
  const TraceJoin jb(base);
  const IterationSettling ok = iteration_settling(analyze(jb, {}));
  EXPECT_TRUE(ok.warning.empty()) << ok.warning;
  EXPECT_LE(ok.settling.start, ok.warmup);
}

TEST(DiffSynthetic, BenchReportsCompareTheIterationOnly) {
  const json e = expected();
  const Diff d = diff_files("diff_bench_base.json", "diff_bench_slower.json");
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_EQ(label_name(d.rows[0].label), e["bench"]["bench_base_vs_bench_slower"].get<std::string>());
  EXPECT_EQ(d.before.iteration_ns.size(), 30u);
  const Diff same = diff_files("diff_bench_base.json", "diff_bench_base.json");
  EXPECT_EQ(label_name(same.rows[0].label), e["bench"]["bench_base_vs_bench_base"].get<std::string>());
  EXPECT_EQ(same.rows[0].change_ns, 0);
}

// --- the command: gate, JSON, SVG, errors -----------------------------------------------------------

int gate(const std::string& before, const std::string& after, std::optional<double> pct) {
  DiffCommandOptions o;
  o.before = fixture(before);
  o.after = fixture(after);
  o.diff.fail_if_slower_pct = pct;
  std::FILE* saved = stdout;  // the report is not what this test reads
  stdout = std::fopen("/dev/null", "w");
  const int rc = run_diff(o);
  std::fclose(stdout);
  stdout = saved;
  return rc;
}

TEST(DiffGate, ExitCodes) {
  EXPECT_EQ(gate("diff_base.sqlite", "diff_attn_slower.sqlite", 5.0), kExitGateFailed);  // attention +10%
  EXPECT_EQ(gate("diff_base.sqlite", "diff_attn_slower.sqlite", 15.0), 0);               // nothing slower by 15%
  EXPECT_EQ(gate("diff_base.sqlite", "diff_attn_slower.sqlite", std::nullopt), 0);       // no gate asked
  EXPECT_EQ(gate("diff_attn_slower.sqlite", "diff_base.sqlite", 0.0), 0);                // faster never trips it
  EXPECT_EQ(gate("diff_base.sqlite", "diff_noise.sqlite", 0.0), 0);                      // noise alone never trips it
  EXPECT_EQ(gate("diff_bench_base.json", "diff_bench_slower.json", 5.0), kExitGateFailed);
}

TEST(DiffCommand, CommandLine) {
  auto parse = [](std::vector<std::string> args) {
    CLI::App app;
    DiffCommandOptions o;
    add_diff_subcommand(app, o);
    std::reverse(args.begin(), args.end());
    app.parse(args);
    return o;
  };
  const DiffCommandOptions d = parse({"diff", "a.sqlite", "b.json"});
  EXPECT_EQ(d.before, "a.sqlite");
  EXPECT_EQ(d.after, "b.json");
  EXPECT_EQ(d.diff.by, LayerKey::Folded);
  EXPECT_FALSE(d.diff.fail_if_slower_pct.has_value());
  EXPECT_FALSE(d.diff.skip_warmup.has_value());
  EXPECT_EQ(d.diff.resamples, 10000);
  EXPECT_DOUBLE_EQ(d.diff.threshold_pct, 3.0);  // calibrated on the H200's A vs A' (PROFILING.md 10.6)
  EXPECT_FALSE(d.diff.top.has_value());         // 15 rows in the text, every row in the JSON
  const DiffCommandOptions e = parse({"diff",   "a",
                                      "b",      "--by",
                                      "block",  "--fail-if-slower",
                                      "3.5",    "--skip-warmup",
                                      "5",      "--threshold",
                                      "1",      "--min-change-us",
                                      "0",      "--resamples",
                                      "2000",   "--seed",
                                      "9",      "--json",
                                      "d.json", "--svg",
                                      "d.svg",  "--range",
                                      "step",   "--top",
                                      "0"});
  EXPECT_EQ(e.diff.by, LayerKey::Block);
  EXPECT_DOUBLE_EQ(*e.diff.fail_if_slower_pct, 3.5);
  EXPECT_EQ(*e.diff.skip_warmup, 5);
  EXPECT_DOUBLE_EQ(e.diff.threshold_pct, 1);
  EXPECT_DOUBLE_EQ(e.diff.min_change_us, 0);
  EXPECT_EQ(e.diff.resamples, 2000);
  EXPECT_EQ(e.diff.seed, 9u);
  EXPECT_EQ(e.json, "d.json");
  EXPECT_EQ(e.svg, "d.svg");
  EXPECT_EQ(e.diff.range, "step");
  EXPECT_EQ(e.diff.top, 0);
  EXPECT_THROW(parse({"diff", "a", "b", "--by", "kernel"}), CLI::ValidationError);
  EXPECT_THROW(parse({"diff", "a", "b", "--threshold", "0"}), CLI::ValidationError);
  EXPECT_THROW(parse({"diff", "a"}), CLI::RequiredError);
}

TEST(DiffCommand, JsonAndSvg) {
  DiffCommandOptions o;
  o.before = fixture("diff_base.sqlite");
  o.after = fixture("diff_gelu_fused.sqlite");
  o.json = temp("d.json");
  o.svg = temp("d.svg");
  o.diff.fail_if_slower_pct = 5;
  std::FILE* saved = stdout;
  stdout = std::fopen("/dev/null", "w");
  const int rc = run_diff(o);
  std::fclose(stdout);
  stdout = saved;
  EXPECT_EQ(rc, 0);
  std::ifstream f(o.json);
  const json j = json::parse(f);
  EXPECT_EQ(j["schema"], "laptime.diff/1");
  EXPECT_EQ(j["method"]["resamples"], 10000);
  EXPECT_EQ(j["rows"][0]["name"], "(iteration)");
  EXPECT_EQ(j["rows"][0]["label"], "FASTER");
  EXPECT_EQ(j["gate"]["failed"], false);
  EXPECT_EQ(j["gate"]["exit_code"], 0);
  bool mlp = false;
  for (const json& r : j["rows"])
    if (r["name"] == "h.*.mlp") {
      mlp = true;
      EXPECT_EQ(r["kernels_gone"].size(), 2u);
      EXPECT_EQ(r["kernels_new"][0]["name"], "fc_gemm_gelu_kernel");
      EXPECT_DOUBLE_EQ(r["kernels_new"][0]["per_iteration"].get<double>(), 2);
    }
  EXPECT_TRUE(mlp);
  std::ifstream s(o.svg);
  std::stringstream svg;
  svg << s.rdbuf();
  const std::string text = svg.str();
  EXPECT_EQ(text.rfind("<svg", 0), 0u);
  EXPECT_NE(text.find("h.0.mlp"), std::string::npos);
  EXPECT_NE(text.find("fc_gemm_gelu_kernel"), std::string::npos);
  EXPECT_NE(text.find("stroke-dasharray"), std::string::npos);  // layers joined across the two runs
  EXPECT_NE(text.find("</svg>"), std::string::npos);
}

TEST(DiffCommand, ErrorsAreOneSentence) {
  auto message = [](const std::string& a, const std::string& b) {
    try {
      load_run(a, {});
      load_run(b, {});
    } catch (const TraceError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message(fixture("no_such.sqlite"), "").find("cannot open"), std::string::npos);
  EXPECT_NE(message(fixture("synthetic_trace.expected.json"), "").find("not a `laptime bench --json` report"),
            std::string::npos);
  EXPECT_NE(message(fixture("not_a_trace.txt"), "").find("not"), std::string::npos);
  const std::string bad = temp("bad_report.json");
  std::ofstream(bad) << R"({"schema": "laptime.bench/1", "iterations": [{"lap_ms": 1.0, "warmup": "no"}]})";
  EXPECT_NE(message(bad, "").find("not a well-formed"), std::string::npos);
  std::ofstream(bad) << R"({"schema": "laptime.bench/1", "iterations": [{"lap": 1.0}]})";
  EXPECT_NE(message(bad, "").find("without a lap_ms number"), std::string::npos);
  DiffOptions o;
  o.skip_warmup = 40;
  try {
    load_run(fixture("diff_bench_base.json"), o);
    ADD_FAILURE() << "no error for --skip-warmup past the end";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("none left"), std::string::npos);
  }
  // A bench report cannot be drawn: it has laps, not kernels.
  const Diff d = diff_files("diff_bench_base.json", "diff_bench_slower.json");
  try {
    write_diff_svg(d, temp("none.svg"));
    ADD_FAILURE() << "no error for an SVG of laps";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot draw"), std::string::npos);
  }
}

// --- real captures ----------------------------------------------------------------------------------

TEST(DiffReal, SameCaptureIsSameEverywhere) {
  const Diff d = diff_files("nsys/gpt2_bf16.sqlite", "nsys/gpt2_bf16.sqlite");
  ASSERT_GT(d.rows.size(), 5u);
  for (const DiffRow& r : d.rows) {
    EXPECT_EQ(r.label, Label::Same) << r.name;
    EXPECT_EQ(r.change_ns, 0) << r.name;
    EXPECT_TRUE(r.gone.empty() && r.added.empty()) << r.name;
  }
  // The layer names of laptime's GPT-2, folded.
  for (const char* name : {"wte", "h.*", "h.*.ln_1", "h.*.attn", "h.*.ln_2", "h.*.mlp", "ln_f", "lm_head"})
    EXPECT_NE(row(d, name), nullptr) << name;
  EXPECT_DOUBLE_EQ(row(d, "h.*.ln_1")->kernels_before, 12);  // one LayerNorm kernel per block
}

TEST(DiffReal, PitfallsOutsideTheLayersLeaveTheLayersAlone) {
  // One build, one shape: the pageable copy and the end-of-iteration sync sit outside the
  // layer ranges, so no layer may be FASTER or SLOWER and every layer runs the same kernels.
  const Diff d = diff_files("nsys/pitfall_pageable.sqlite", "nsys/pitfall_sync.sqlite");
  ASSERT_GT(d.rows.size(), 5u);
  for (const DiffRow& r : d.rows) {
    EXPECT_NE(r.label, Label::Faster) << r.name;
    EXPECT_NE(r.label, Label::Slower) << r.name;
    if (r.name == "(outside layers)" || r.whole) continue;
    EXPECT_TRUE(r.gone.empty() && r.added.empty()) << r.name;
    EXPECT_DOUBLE_EQ(r.kernels_before, r.kernels_after) << r.name;
  }
  bool few = false;  // 5 steady iterations a side: the diff says its intervals are wide
  for (const std::string& n : d.notes) few |= n.find("Few steady iterations") != std::string::npos;
  EXPECT_TRUE(few);
}

TEST(DiffReal, SyncAfterEveryLayerMakesTheIterationSlowerWithTheSameKernels) {
  // A read-back after every layer: the GPU idles between layers (the iteration's span grows),
  // each layer gains a launch (the copy) but runs the kernels it ran before.
  const Diff d = diff_files("nsys/pitfall_sync.sqlite", "nsys/pitfall_sync_per_layer.sqlite");
  EXPECT_EQ(d.rows.front().label, Label::Slower);
  EXPECT_GT(d.rows.front().change_pct, 50);
  for (const char* name : {"h.*.ln_1", "h.*.attn", "h.*.mlp", "h.*.ln_2"}) {
    const DiffRow* r = row(d, name);
    ASSERT_NE(r, nullptr) << name;
    EXPECT_DOUBLE_EQ(r->kernels_before, r->kernels_after) << name;
    EXPECT_DOUBLE_EQ(r->launches_after, r->launches_before + 12) << name;  // one read-back per block
    EXPECT_TRUE(r->gone.empty() && r->added.empty()) << name;
  }
}

TEST(DiffReal, ResNetAgainstGpt2HasNoCommonLayers) {
  const Diff d = diff_files("nsys/gpt2_bf16.sqlite", "nsys/resnet50_bf16.sqlite");
  for (const DiffRow& r : d.rows)
    if (!r.whole) {
      EXPECT_TRUE(r.label == Label::OnlyBefore || r.label == Label::OnlyAfter) << r.name;
    }
  const DiffRow* conv = row(d, "layer*.*.conv2");
  EXPECT_EQ(conv, nullptr);  // folded names keep the stage: layer1.*.conv2
  EXPECT_NE(row(d, "layer1.*.conv2"), nullptr);
}

// --top (trace/analyses/top.h): the text shows the iteration and 15 layers unless told, with a line for the
// rest and for the kernel changes of the rows left out; the JSON every row unless --top is given;
// the verdict counts every layer either way.
TEST(DiffReal, TopCutsTheTextAndTheJsonOnlyWhenAsked) {
  DiffOptions o;
  Diff d = diff_files("nsys/gpt2_bf16.sqlite", "nsys/resnet50_bf16.sqlite", o);
  const size_t layers = d.rows.size() - 1;
  ASSERT_GT(layers, 15u);
  auto text = [&d] { return testing_support::printed([&d](std::FILE* out) { print_diff(d, out); }); };
  auto has_row = [](const std::string& s, const DiffRow& r) {
    return s.find("\n  " + r.name + " ") != std::string::npos;
  };
  std::string s = text();
  EXPECT_TRUE(has_row(s, d.rows[15]));
  EXPECT_FALSE(has_row(s, d.rows[16]));
  EXPECT_NE(s.find("\n  ... " + std::to_string(layers - 15) + " more rows (--top 0 for all)\n"), std::string::npos)
      << s;
  EXPECT_NE(s.find("more layers with kernel changes (--top 0 for all)"), std::string::npos) << s;
  const auto only_after =
      std::count_if(d.rows.begin(), d.rows.end(), [](const DiffRow& r) { return r.label == Label::OnlyAfter; });
  EXPECT_NE(s.find(", " + std::to_string(only_after) + " ONLY AFTER.\n"), std::string::npos)
      << s;  // every layer counted
  json j = diff_to_json(d);
  EXPECT_EQ(j["rows"].size(), d.rows.size());
  EXPECT_FALSE(j.contains("rows_omitted"));

  d.options.top = 4;
  s = text();
  EXPECT_TRUE(has_row(s, d.rows[4]));
  EXPECT_FALSE(has_row(s, d.rows[5]));
  j = diff_to_json(d);
  ASSERT_EQ(j["rows"].size(), 5u);  // the iteration and four layers
  EXPECT_EQ(j["rows"][0]["name"], "(iteration)");
  EXPECT_EQ(j["rows"][4]["name"], d.rows[4].name);
  EXPECT_EQ(j["rows_omitted"], layers - 4);

  d.options.top = 0;
  s = text();
  EXPECT_TRUE(has_row(s, d.rows.back()));
  EXPECT_EQ(s.find("more rows"), std::string::npos);
  EXPECT_EQ(s.find("more layers"), std::string::npos);
}

// --- the roofline columns ------------------------------------------------------------------------
// The toy pair diff_fine -> diff_fine_fused with a layer costs sidecar beside each copy and
// round ceilings: each side's % of bound is the row's FLOPs (or bytes) over its median time
// over the ceiling, computed here by hand from the row the diff reports.

namespace {

void write_json(const std::string& path, const json& j) {
  std::ofstream f(path);
  f << j.dump();
}

json cost(const std::string& name, const std::string& parent, double flops, double bytes) {
  return {{"name", name},
          {"parent", parent},
          {"kind", "test"},
          {"flops", flops},
          {"bytes", {{"weights", bytes / 2}, {"inputs", bytes / 4}, {"outputs", bytes / 4}}}};
}

void copy_file(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary);
  out << in.rdbuf();
}

}  // namespace

TEST(DiffRoofline, EachSideAgainstItsSidecarAndTheCeilings) {
  const std::string before = temp("roof_before.sqlite"), after = temp("roof_after.sqlite");
  copy_file(fixture("diff_fine.sqlite"), before);
  copy_file(fixture("diff_fine_fused.sqlite"), after);
  json layers = json::array();
  for (const char* b : {"h.0", "h.1"}) {
    layers.push_back(cost(std::string(b) + ".mlp.c_fc", std::string(b) + ".mlp", 2e10, 1e8));  // 200 FLOP/B: compute
    layers.push_back(cost(std::string(b) + ".mlp.gelu", std::string(b) + ".mlp", 0, 4e7));     // memory
  }
  layers.push_back(cost("lm_head", "", 5e9, 1e8));  // 50 FLOP/B: memory
  const json sidecar{{"schema", "laptime.layers/1"}, {"model", "toy"}, {"precision", "bf16"}, {"layers", layers}};
  write_json(temp("roof_before.layers.json"), sidecar);
  json after_layers = json::array();
  for (const json& l : layers)
    if (l["name"].get<std::string>().find("gelu") == std::string::npos) after_layers.push_back(l);
  write_json(temp("roof_after.layers.json"),
             json{{"schema", "laptime.layers/1"}, {"model", "toy"}, {"precision", "bf16"}, {"layers", after_layers}});
  const std::string peak = temp("roof_peak.json");  // ridge: 100 TFLOP/s / 1000 GB/s = 100 FLOP/B
  write_json(peak, {{"schema", "laptime.peak/1"},
                    {"gpu", {{"name", "Toy GPU"}}},
                    {"tflops", {{"bf16", 100.0}, {"tf32", 50.0}, {"fp32", 10.0}}},
                    {"copy_gbps", 1000.0}});

  DiffOptions o;
  o.peak = peak;
  const Diff d = diff_runs(load_run(before, o), load_run(after, o), o);
  ASSERT_TRUE(d.ceilings.has_value());
  auto row = [&](const std::string& name) -> const DiffRow& {
    for (const DiffRow& r : d.rows)
      if (r.name == name) return r;
    throw std::runtime_error("no row " + name);
  };
  const DiffRow& fc = row("h.*.mlp.c_fc");  // both blocks: 4e10 FLOPs
  ASSERT_TRUE(fc.roof_before && fc.roof_after);
  EXPECT_EQ(fc.roof_before->bound, RoofBound::Compute);
  EXPECT_NEAR(fc.roof_before->pct_of_bound, 4e10 / (fc.before_ns * 1e-9) / 100e12 * 100, 1e-9);
  EXPECT_NEAR(fc.roof_after->pct_of_bound, 4e10 / (fc.after_ns * 1e-9) / 100e12 * 100, 1e-9);
  const DiffRow& gelu = row("h.*.mlp.gelu");  // gone after: no point there
  ASSERT_TRUE(gelu.roof_before.has_value());
  EXPECT_FALSE(gelu.roof_after.has_value());
  EXPECT_EQ(gelu.roof_before->bound, RoofBound::Memory);
  EXPECT_NEAR(gelu.roof_before->pct_of_bound, 8e7 / (gelu.before_ns * 1e-9) / 1000e9 * 100, 1e-9);
  const DiffRow& head = row("lm_head");
  ASSERT_TRUE(head.roof_after.has_value());
  EXPECT_EQ(head.roof_after->bound, RoofBound::Memory);
  EXPECT_NEAR(head.roof_after->gbps, 1e8 / (head.after_ns * 1e-9) / 1e9, 1e-6);
  // The whole iteration: the top-level entries (here lm_head alone).
  ASSERT_TRUE(d.rows.front().whole && d.rows.front().roof_before.has_value());
  EXPECT_NEAR(d.rows.front().roof_before->tflops, 5e9 / (d.rows.front().before_ns * 1e-9) / 1e12, 1e-9);
  // A row the sidecars do not name has no point; the text and JSON carry the columns.
  EXPECT_FALSE(row("h.*.attn").roof_before.has_value());
  const json j = diff_to_json(d);
  bool found = false;
  for (const json& r : j["rows"])
    if (r["name"] == "h.*.mlp.c_fc") {
      found = true;
      EXPECT_NEAR(r["roofline"]["before"]["pct_of_bound"].get<double>(), fc.roof_before->pct_of_bound, 1e-9);
      EXPECT_EQ(r["roofline"]["after"]["bound"], "compute");
    }
  EXPECT_TRUE(found);

  // An fp8 run whose c_fc computes in bf16 (the sidecar's per-layer precision): that row is held
  // to bf16's ceiling (and ridge), not fp8's, as the roofline holds it.
  json fp8_layers = json::array();
  for (json l : after_layers) {
    if (l["name"].get<std::string>().find("c_fc") != std::string::npos) l["precision"] = "bf16";
    fp8_layers.push_back(l);
  }
  write_json(temp("roof_after.layers.json"),
             json{{"schema", "laptime.layers/1"}, {"model", "toy"}, {"precision", "fp8"}, {"layers", fp8_layers}});
  write_json(peak, {{"schema", "laptime.peak/1"},
                    {"gpu", {{"name", "Toy GPU"}}},
                    {"tflops", {{"bf16", 100.0}, {"tf32", 50.0}, {"fp32", 10.0}, {"fp8", 400.0}}},
                    {"copy_gbps", 1000.0}});
  const Diff f = diff_runs(load_run(before, o), load_run(after, o), o);
  bool seen = false;
  for (const DiffRow& r : f.rows) {
    if (r.name != "h.*.mlp.c_fc") continue;
    seen = true;
    ASSERT_TRUE(r.roof_after.has_value());
    EXPECT_EQ(r.roof_after->bound, RoofBound::Compute);  // 200 FLOP/B under bf16's ridge of 100
    EXPECT_NEAR(r.roof_after->pct_of_bound, 4e10 / (r.after_ns * 1e-9) / 100e12 * 100, 1e-9);
  }
  EXPECT_TRUE(seen);
  write_json(temp("roof_after.layers.json"),
             json{{"schema", "laptime.layers/1"}, {"model", "toy"}, {"precision", "bf16"}, {"layers", after_layers}});

  // Without ceilings: achieved TFLOP/s only, and a note says how to get the %.
  setenv("LAPTIME_CACHE_DIR", testing::TempDir().c_str(), 1);  // no cached peak file there
  const DiffOptions plain;
  const Diff n = diff_runs(load_run(before, plain), load_run(after, plain), plain);
  EXPECT_FALSE(n.ceilings.has_value());
  bool noted = false;
  for (const std::string& s : n.notes) noted = noted || s.find("laptime peak") != std::string::npos;
  EXPECT_TRUE(noted);
  for (const DiffRow& r : n.rows) {
    if (r.name == "h.*.mlp.c_fc") {
      ASSERT_TRUE(r.roof_before.has_value());
      EXPECT_FALSE(r.roof_before->has_bound);
    }
  }
}

// --- hostile inputs ------------------------------------------------------------------------------

// A bench report with these laps (index 0 and 1 marked warm-up), config and device.
std::string bench_report(const std::string& name, const std::vector<double>& laps, const json& config = json::object(),
                         const json& device = json::object()) {
  json j{{"schema", "laptime.bench/1"}, {"framework", "laptime"}, {"config", config}, {"device", device}};
  json its = json::array();
  for (size_t i = 0; i < laps.size(); ++i) its.push_back({{"index", i}, {"warmup", i < 2}, {"lap_ms", laps[i]}});
  j["iterations"] = its;
  const std::string path = temp(name);
  std::ofstream(path) << j.dump();
  return path;
}

// Negative or zero laps compared as "FASTER -200%": a lap is a positive time.
TEST(DiffHostile, NonPositiveLapsAreRefused) {
  for (const double bad : {-6.0, 0.0, -0.0}) {
    const std::string p = bench_report("laps_bad.json", {6, 6, 6, bad, 6});
    EXPECT_EQ(error_of([&] { load_run(p, {}); }),
              p + " has lap_ms " + json(bad).dump() + " at iteration 3: a lap is a positive number of milliseconds.")
        << bad;
  }
  const std::string huge = bench_report("laps_huge.json", {6, 6, 1e305, 6});
  EXPECT_NE(error_of([&] { load_run(huge, {}); }).find("a lap is a positive number of milliseconds"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { load_run(bench_report("laps_ok.json", {6, 6, 6, 5.5}), {}); }), "");
}

// A GPT-2 bf16 H200 run against a ResNet-50 fp32 A100 run printed a SLOWER verdict without a
// word about comparing different things. Now what differs is the first note, before the table
// and the verdict; what only one side says is not called a difference.
TEST(DiffHostile, RunsOfDifferentThingsAreNamedBeforeTheVerdict) {
  const std::vector<double> laps(20, 6.0);
  std::vector<double> slower(20, 6.6);
  const std::string a = bench_report(
      "ident_a.json", laps, {{"model", "gpt2"}, {"precision", "bf16"}, {"shape", "B=1 T=1024"}, {"mode", "eager"}},
      {{"name", "NVIDIA H200"}, {"cuda_runtime", "12.4"}, {"cudnn_loaded", "9.1.0"}});
  const std::string b =
      bench_report("ident_b.json", slower,
                   {{"model", "resnet50"}, {"precision", "fp32"}, {"shape", "B=32 224x224"}, {"mode", "eager"}},
                   {{"name", "NVIDIA A100-SXM4-80GB"}, {"cuda_runtime", "12.6"}, {"driver", "560.28"}});
  const Diff d = diff_runs(load_run(a, {}), load_run(b, {}), {});
  ASSERT_EQ(d.differences.size(), 5u);
  const std::vector<std::vector<std::string>> want{{"model", "gpt2", "resnet50"},
                                                   {"precision", "bf16", "fp32"},
                                                   {"shape", "B=1 T=1024", "B=32 224x224"},
                                                   {"GPU", "NVIDIA H200", "NVIDIA A100-SXM4-80GB"},
                                                   {"CUDA runtime", "12.4", "12.6"}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(d.differences[i].what, want[i][0]);
    EXPECT_EQ(d.differences[i].before, want[i][1]);
    EXPECT_EQ(d.differences[i].after, want[i][2]);
  }
  ASSERT_FALSE(d.notes.empty());
  EXPECT_EQ(d.notes[0],
            "The two runs differ in model (gpt2 -> resnet50), precision (bf16 -> fp32), shape (B=1 T=1024 -> B=32 "
            "224x224), GPU (NVIDIA H200 -> NVIDIA A100-SXM4-80GB) and software (CUDA runtime 12.4 -> 12.6): the change "
            "below is all of these at once, not the effect of one change; compare runs that differ in one thing only "
            "to attribute it.");
  const json j = diff_to_json(d);
  EXPECT_EQ(j["differences"][0], json({{"what", "model"}, {"before", "gpt2"}, {"after", "resnet50"}}));
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  print_diff(d, out);
  std::fclose(out);
  const std::string printed(text, size);
  std::free(text);
  const size_t note = printed.find("The two runs differ in model"), verdict = printed.find("Verdict:");
  ASSERT_NE(note, std::string::npos);
  ASSERT_NE(verdict, std::string::npos);
  EXPECT_LT(note, verdict);
  // Like runs: nothing said, no "differences" in the JSON.
  const Diff like = diff_files("diff_bench_base.json", "diff_bench_slower.json");
  EXPECT_TRUE(like.differences.empty());
  EXPECT_FALSE(diff_to_json(like).contains("differences"));
  // Traces: the GPU from the trace, the model and shape from the layer costs beside it.
  const Diff real = diff_files("nsys/gpt2_bf16.sqlite", "nsys/resnet50_bf16.sqlite");
  ASSERT_GE(real.differences.size(), 1u);
  EXPECT_EQ(real.differences[0].what, "model");
  EXPECT_EQ(real.differences[0].before, "gpt2");
  EXPECT_EQ(real.differences[0].after, "resnet50");
}

// The A/B of one LAPTIME_* switch (call A's PDL on against off): the switch is the one difference,
// and the note says the change is its effect. A switch set on one side only is set against
// "unset"; a report that does not record switches (older, or PyTorch's) is compared on nothing.
TEST(DiffHostile, ASwitchIsTheOneDifference) {
  const json config{{"model", "gpt2"}, {"precision", "fp8"}, {"shape", "B=8 T=1024"}, {"mode", "eager"}};
  json on = config, off = config, none = config;
  on["switches"] = {{"LAPTIME_CUTLASS_PDL", "on"}, {"LAPTIME_FP8_MLP", "pair"}};
  off["switches"] = {{"LAPTIME_FP8_MLP", "pair"}};
  const json h100{{"name", "NVIDIA H100 80GB HBM3"}};
  const std::string a = bench_report("switch_off.json", std::vector<double>(20, 2.95), off, h100);
  const std::string b = bench_report("switch_on.json", std::vector<double>(20, 2.85), on, h100);
  const Diff d = diff_runs(load_run(a, {}), load_run(b, {}), {});
  ASSERT_EQ(d.differences.size(), 1u);
  EXPECT_EQ(d.before.source, "laptime, eager, fp8, NVIDIA H100 80GB HBM3, LAPTIME_FP8_MLP=pair");
  EXPECT_EQ(d.after.source, "laptime, eager, fp8, NVIDIA H100 80GB HBM3, LAPTIME_CUTLASS_PDL=on, LAPTIME_FP8_MLP=pair");
  EXPECT_EQ(d.differences[0].what, "LAPTIME_CUTLASS_PDL");
  EXPECT_EQ(d.differences[0].before, "unset");
  EXPECT_EQ(d.differences[0].after, "on");
  ASSERT_FALSE(d.notes.empty());
  EXPECT_EQ(d.notes[0],
            "The two runs differ in switches (LAPTIME_CUTLASS_PDL unset -> on) only: the change below is "
            "its effect.");
  // With a second difference the note is the general one, switches grouped after software.
  json graph = on;
  graph["mode"] = "graph";
  const Diff two = diff_runs(
      load_run(a, {}), load_run(bench_report("switch_graph.json", std::vector<double>(20, 2.7), graph, h100), {}), {});
  ASSERT_EQ(two.differences.size(), 2u);
  EXPECT_EQ(two.notes[0],
            "The two runs differ in mode (eager -> graph) and switches (LAPTIME_CUTLASS_PDL unset -> on): "
            "the change below is all of these at once, not the effect of one change; compare runs that "
            "differ in one thing only to attribute it.");
  // A report without the record: nothing is known to differ.
  const std::string old = bench_report("switch_none.json", std::vector<double>(20, 2.95), none, h100);
  EXPECT_TRUE(diff_runs(load_run(old, {}), load_run(b, {}), {}).differences.empty());
}

// "SQLite cannot prepare a statement (database disk image is malformed): SELECT ..." did not say
// which of the two files it was.
TEST(DiffHostile, ADamagedInputNamesItsFile) {
  const std::string good = read_file(fixture("diff_attn_slower.sqlite"));
  const std::string damaged = temp("damaged.sqlite");
  std::ofstream(damaged, std::ios::binary) << good.substr(0, 8192) + std::string(good.size() - 8192, '\xa5');
  const std::string e = error_of([&] { load_run(damaged, {}); });
  EXPECT_EQ(e.rfind(damaged + ": ", 0), 0u) << e;
  EXPECT_NE(e.find("malformed"), std::string::npos) << e;
  // A sentence that names the file already is left as it is.
  EXPECT_EQ(error_of([&] { load_run(fixture("not_a_trace.txt"), {}); }).rfind(fixture("not_a_trace.txt"), 0), 0u);
}

// Every numeric flag through core/cli_numbers, as analyze's: `--fail-if-slower nan` passed a 10%
// regression, `--threshold nan` and `--min-change-us nan` made everything UNCLEAR, `inf` was
// answered with a 300-digit bound.
TEST(DiffHostile, NumbersAndFileNamesAreCheckedLikeAnalyzes) {
  auto error = [](std::vector<std::string> args) {
    CLI::App app;
    DiffCommandOptions o;
    add_diff_subcommand(app, o);
    std::reverse(args.begin(), args.end());
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  for (const char* bad : {"nan", "inf", "-1", "5%"}) {
    EXPECT_EQ(error({"diff", "a", "b", "--fail-if-slower", bad}),
              std::string("--fail-if-slower must be a non-negative number, got '") + bad + "'.");
    EXPECT_EQ(error({"diff", "a", "b", "--min-change-us", bad}),
              std::string("--min-change-us must be a non-negative number, got '") + bad + "'.");
    EXPECT_EQ(error({"diff", "a", "b", "--threshold", bad}),
              std::string("--threshold must be a positive number, got '") + bad + "'.");
  }
  EXPECT_EQ(error({"diff", "a", "b", "--threshold", "0"}), "--threshold must be a positive number, got '0'.");
  EXPECT_EQ(error({"diff", "a", "b", "--threshold", "1e7"}), "--threshold must be at most 1e+06, got '1e7'.");
  EXPECT_EQ(error({"diff", "a", "b", "--resamples", "99"}),
            "--resamples must be an integer from 100 to 1000000, got '99'.");
  EXPECT_EQ(error({"diff", "a", "b", "--skip-warmup", "-1"}),
            "--skip-warmup must be a non-negative integer, got '-1'.");
  EXPECT_EQ(error({"diff", "a", "b", "--seed", "x"}), "--seed must be a non-negative integer, got 'x'.");
  EXPECT_EQ(error({"diff", "a", "b", "--json", ""}),
            "--json: the file name is empty; give a file name (or - for standard output).");
  EXPECT_EQ(error({"diff", "a", "b", "--svg", ""}), "--svg: the file name is empty; give a file name.");
  EXPECT_EQ(error({"diff", "", "b"}), "BEFORE: the file name is empty; give a file.");
  EXPECT_EQ(error({"diff", "a", "b", "--fail-if-slower", "0", "--min-change-us", "0", "--json", "-"}), "");
}

// Through run_diff, as the command runs it: every output is checked before either run is read.
TEST(DiffHostile, OutputsFollowTheOutputRules) {
  const std::string a = temp("out_a.sqlite"), b = temp("out_b.sqlite");
  const std::string base = read_file(fixture("diff_base.sqlite")),
                    slower = read_file(fixture("diff_attn_slower.sqlite"));
  std::ofstream(a, std::ios::binary) << base;
  std::ofstream(b, std::ios::binary) << slower;
  auto run = [&](const std::string& json_path, const std::string& svg_path) {
    DiffCommandOptions o;
    o.before = a;
    o.after = b;
    o.json = json_path;
    o.svg = svg_path;
    return error_of([&] { run_diff(o); });
  };
  // Before: the JSON replaced the trace (exit 0).
  EXPECT_EQ(run(a, ""), "refusing to write the JSON diff to " + a + ": it is the same file as the input " + a + ".");
  EXPECT_EQ(run("", b), "refusing to write the SVG diff to " + b + ": it is the same file as the input " + b + ".");
  const std::string x = temp("out_x");
  EXPECT_EQ(run(x, x), "the JSON diff and the SVG diff would both be written to " + x + ": give each its own file.");
  EXPECT_EQ(run("/dev/full", ""),
            "refusing to write the JSON diff to /dev/full: it is a character device, not a "
            "regular file.");
  EXPECT_EQ(run("-", "-"), "the SVG diff cannot go to standard output ('-'): give a file name.");
  EXPECT_EQ(read_file(a), base);
  EXPECT_EQ(read_file(b), slower);
  std::remove(x.c_str());
}

}  // namespace
}  // namespace laptime::trace
