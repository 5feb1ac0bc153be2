// `laptime kernels`: Nsight Compute's raw CSV read (trace/ncu/ncu_csv.h) and grouped per layer
// (trace/ncu/ncu_layers.h), checked against tests/fixtures/ncu/ncu_layers.py, which sums the same
// reports with Python's csv module; the diagnosis rules at their thresholds on constructed rows;
// malformed reports; the .ncu-rep conversion through a fake ncu (and the real one where found).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/support/run_binary.h"
#include "tests/support/trace_testing.h"
#include "trace/read/csv_reader.h"
#include "trace/analyses/roofline.h"
#include "cli/kernels_command.h"
#include "trace/ncu/ncu_command.h"
#include "trace/ncu/ncu_csv.h"
#include "trace/ncu/ncu_diff.h"
#include "trace/ncu/ncu_layers.h"
#include "trace/model/error.h"

namespace laptime::trace {
namespace {

using ::testing::HasSubstr;

std::string fixture(const std::string& name) {
  const char* root = std::getenv("LAPTIME_SOURCE_DIR");
  return std::string(root ? root : LAPTIME_SOURCE_DIR) + "/tests/fixtures/ncu/" + name;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// The error a parse of `text` gives (empty when it parses).
std::string parse_error(const std::string& text) {
  std::istringstream in(text);
  try {
    parse_ncu_csv(in, "bad.csv");
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

// The sentence a TraceError carries, or "" when `f` throws none.
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

// --- CSV records ---------------------------------------------------------------------------

std::vector<std::vector<std::string>> records(const std::string& text, CsvReader::Limits limits = {}) {
  std::istringstream in(text);
  CsvReader r(in, "t.csv", 1, limits);
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> f;
  while (r.next(f)) out.push_back(f);
  return out;
}

TEST(CsvReader, QuotesCommasLineBreaksAndDoubledQuotes) {
  const auto r = records("a,\"b,c\",\"say \"\"hi\"\"\"\r\n\"two\nlines\",,x\nlast");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0], (std::vector<std::string>{"a", "b,c", "say \"hi\""}));
  EXPECT_EQ(r[1], (std::vector<std::string>{"two\nlines", "", "x"}));
  EXPECT_EQ(r[2], (std::vector<std::string>{"last"}));
}

TEST(CsvReader, MalformedAndOverLongRecordsAreOneSentence) {
  try {
    records("a,\"open\nb,c\n");
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_STREQ(e.what(),
                 "t.csv: a quoted field that begins on line 1 never closes (the file is cut short or not CSV).");
  }
  try {
    records("x\n\"a\"b,c\n");
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_STREQ(e.what(), "t.csv: line 2 has text after a closing quote (a field must be all quoted or not at all).");
  }
  CsvReader::Limits small;
  small.fields = 3;
  small.field_bytes = 1u << 20;
  try {
    records("1,2,3,4\n", small);
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_STREQ(e.what(), "t.csv: the record on line 1 has more than 3 fields.");
  }
  EXPECT_THROW(records(std::string(2u << 20, 'x')), TraceError);  // a 2 MiB field
}

// --- Cells ---------------------------------------------------------------------------------

TEST(NcuCells, NumbersAsNcuPrintsThem) {
  double v = 0;
  EXPECT_TRUE(parse_ncu_number("1,980,000", &v));
  EXPECT_EQ(v, 1980000.0);
  EXPECT_TRUE(parse_ncu_number("184,417,910,447.76", &v));
  EXPECT_DOUBLE_EQ(v, 184417910447.76);
  EXPECT_TRUE(parse_ncu_number("0.24", &v));
  EXPECT_EQ(v, 0.24);
  EXPECT_TRUE(parse_ncu_number("4288", &v));
  EXPECT_TRUE(parse_ncu_number("-3.5e-2", &v));
  EXPECT_EQ(v, -0.035);
  for (const char* bad : {"n/a", "no data", "", "1,2", "12,3456", ",123", "1.2.3", "1.", "1e", "0x10", "1 000", "inf",
                          "nan", "1,000.5,0", "1e99999"})
    EXPECT_FALSE(parse_ncu_number(bad, &v)) << bad;
}

TEST(NcuCells, NvtxStacksInAnyDomain) {
  const auto laptime = parse_nvtx_stack(
      "1592  \"laptime:forward:Uint64:0:none:none:REGISTERED:forward\"  "
      "\"laptime:h.0.attn.c_attn:none:none:none:none:REGISTERED:h.0.attn.c_attn\" ",
      256);
  ASSERT_EQ(laptime.size(), 2u);
  EXPECT_EQ(laptime[0], (std::pair<std::string, std::string>{"laptime", "forward"}));
  EXPECT_EQ(laptime[1], (std::pair<std::string, std::string>{"laptime", "h.0.attn.c_attn"}));
  const auto two = parse_nvtx_stack(
      "6522  \"<default domain>:step 0:none:none:none:none:none:none\"  "
      "\"cases:other.thread:none:none:none:none:ASCII:other.thread\" ",
      256);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].first, "<default domain>");
  EXPECT_EQ(two[0].second, "step 0");
  EXPECT_EQ(two[1].first, "cases");
  // Names with colons, with and without a message that repeats them.
  const auto colons = parse_nvtx_stack(
      "1 \"<default domain>:aten::addmm:none:none:none:none:none:none\" \"d:a::b:none:none:none:none:ASCII:a::b\" ",
      256);
  ASSERT_EQ(colons.size(), 2u);
  EXPECT_EQ(colons[0].second, "aten::addmm");
  EXPECT_EQ(colons[1].second, "a::b");
  EXPECT_TRUE(parse_nvtx_stack("1592 ", 256).empty());
  EXPECT_TRUE(parse_nvtx_stack("", 256).empty());
  EXPECT_THROW(parse_nvtx_stack("1 \"laptime:forward\" ", 256), TraceError);
  EXPECT_THROW(parse_nvtx_stack("1 \"laptime:forward:none:none:none:none:none:none", 256), TraceError);
  EXPECT_THROW(parse_nvtx_stack("1 \"a:b:c:d:e:f:g:h\" \"a:b:c:d:e:f:g:h\" ", 1), TraceError);
}

TEST(NcuCells, ShortNames) {
  EXPECT_EQ(ncu_short_name("void laptime::<unnamed>::embedding_kernel<__nv_bfloat16>(T1 *, const int *, int, int)"),
            "embedding_kernel");
  EXPECT_EQ(ncu_short_name("nvjet_sm90_tst_72x64_64x12_1x2_h_bz_bias_TNN"),
            "nvjet_sm90_tst_72x64_64x12_1x2_h_bz_bias_TNN");
  EXPECT_EQ(ncu_short_name("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>(T1::Params)"),
            "cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4");
  EXPECT_EQ(ncu_short_name("tail_kernel(float *, int)"), "tail_kernel");
  EXPECT_EQ(ncu_short_name("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous)::f(at::T&)::"
                           "{lambda()#1}, at::detail::Array<char *, 2>>(int, T2, T3)"),
            "vectorized_elementwise_kernel");
}

// --- The committed reports -----------------------------------------------------------------

TEST(NcuReports, LaptimeGpt2ReadsEveryKernelWithItsRanges) {
  const NcuReport r = read_ncu_report(fixture("laptime_gpt2.csv"));
  ASSERT_EQ(r.kernels.size(), 87u);
  EXPECT_EQ(r.gpu, "NVIDIA H200");
  EXPECT_EQ(r.sm_count, 132);
  EXPECT_EQ(r.schedulers, 4);
  EXPECT_TRUE(r.has_nvtx);
  EXPECT_EQ(r.skipped_lines, 0u);
  EXPECT_EQ(r.stall_names.size(), 19u);
  const NcuKernel& k = r.kernels[0];
  EXPECT_EQ(k.id, 0);
  EXPECT_EQ(k.pid, 1592u);
  EXPECT_EQ(ncu_short_name(r.str(k.name)), "embedding_kernel");
  ASSERT_EQ(k.ranges().size(), 2u);
  EXPECT_EQ(r.str(k.ranges()[0].domain), "laptime");
  EXPECT_EQ(r.str(k.ranges()[1].name), "wte");
  EXPECT_EQ(k.at(NcuMetric::Time), 4288.0);
  EXPECT_DOUBLE_EQ(k.at(NcuMetric::DramBytesPerSecond), 184417910447.76);
  EXPECT_EQ(k.at(NcuMetric::GridSize), 256.0);
  EXPECT_EQ(k.at(NcuMetric::LimitWarps), 8.0);
  for (const std::string& n : r.notes) ADD_FAILURE() << "unexpected note: " << n;
}

TEST(NcuReports, TheImportedCsvIsRefusedForItsScaledUnits) {
  // `ncu --import X --csv --page raw` without --print-units base: us, Tbyte/s, Ghz.
  try {
    read_ncu_report(fixture("domains_imported.csv"));
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()), fixture("domains_imported.csv") +
                                         ": column gpu__time_duration.sum is in 'us', not its base unit 'ns': export "
                                         "with `--print-units base` (`ncu --import` scales units unless told so).");
  }
}

// --- Per-layer sums against the independent reference --------------------------------------

nlohmann::json expected() { return nlohmann::json::parse(slurp(fixture("ncu_layers.expected.json"))); }

void check_layers(const std::string& file, const nlohmann::json& want, LayerKey by) {
  const NcuReport r = read_ncu_report(fixture(file));
  NcuLayerOptions o;
  o.by = by;
  std::optional<LayerCosts> costs;
  if (std::ifstream(fixture(layer_costs_path(file)))) costs = read_layer_costs(fixture(layer_costs_path(file)));
  const NcuLayers l = ncu_layers(r, o, costs ? &*costs : nullptr, nullptr);
  EXPECT_EQ(l.kernels, want.at("kernels").get<size_t>()) << file;
  EXPECT_DOUBLE_EQ(l.time_ns, want.at("time_ns").get<double>()) << file;
  const nlohmann::json& layers = want.at(by == LayerKey::Folded ? "layer" : "block");
  ASSERT_EQ(l.layers.size(), layers.size()) << file;
  for (const NcuLayer& x : l.layers) {
    ASSERT_TRUE(layers.contains(x.name)) << file << ": " << x.name;
    const nlohmann::json& w = layers.at(x.name);
    EXPECT_EQ(x.kernels, w.at("kernels").get<size_t>()) << file << ": " << x.name;
    EXPECT_DOUBLE_EQ(x.time_ns, w.at("time_ns").get<double>()) << file << ": " << x.name;
    EXPECT_NEAR(x.dram_bytes, w.at("dram_bytes").get<double>(), 1e-9 * w.at("dram_bytes").get<double>() + 1e-6)
        << file << ": " << x.name;
    EXPECT_EQ(x.has_costs, w.contains("must_bytes")) << file << ": " << x.name;
    if (w.contains("must_bytes")) {
      EXPECT_DOUBLE_EQ(x.must_bytes, w.at("must_bytes").get<double>()) << file << ": " << x.name;
      EXPECT_NEAR(x.m.bytes_ratio, w.at("bytes_ratio").get<double>(), 1e-12) << file << ": " << x.name;
    }
  }
}

TEST(NcuLayers, EveryReportsSumsEqualTheReferenceScripts) {
  const nlohmann::json e = expected();
  size_t checked = 0;
  for (const auto& [file, want] : e.items()) {
    if (want.contains("units")) continue;  // refused: checked in TheImportedCsvIsRefusedForItsScaledUnits
    check_layers(file, want, LayerKey::Folded);
    check_layers(file, want, LayerKey::Block);
    ++checked;
  }
  EXPECT_EQ(checked, 10u);  // every committed CSV but the imported one (domains_base.csv: its base-unit import)
}

TEST(NcuLayers, TheSidecarsOfTheCommittedShapesAreJoinedWhenPresent) {
  // The bench writes RUN.layers.json beside `--json RUN.json`; the GPU run that captured these
  // reports did not pass --json, so until they are captured this only says what is missing.
  for (const char* f : {"laptime_gpt2.layers.json", "laptime_resnet50.layers.json"})
    if (!std::ifstream(fixture(f)))
      GTEST_SKIP() << "tests/fixtures/ncu/" << f
                   << " is not committed yet (scripts/dev/captures.sh ncu-sidecars writes it)";
  const NcuReport r = read_ncu_report(fixture("laptime_gpt2.csv"));
  const LayerCosts c = read_layer_costs(fixture("laptime_gpt2.layers.json"));
  const NcuLayers l = ncu_layers(r, {}, &c, nullptr);
  for (const NcuLayer& x : l.layers) EXPECT_TRUE(x.has_costs) << x.name;
}

// --- The numbers each row carries, on the real reports --------------------------------------

const NcuLayer& layer(const NcuLayers& l, const std::string& name) {
  for (const NcuLayer& x : l.layers)
    if (x.name == name) return x;
  throw std::runtime_error("no layer " + name);
}

TEST(NcuLayers, Gpt2RowsCarryTheLongestKernelsLaunchAndWeightedMeans) {
  const NcuReport r = read_ncu_report(fixture("laptime_gpt2.csv"));
  const NcuLayers l = ncu_layers(r, {}, nullptr, nullptr);
  ASSERT_EQ(l.layers.size(), 10u);
  EXPECT_EQ(l.layers.front().name, "h.*.mlp.c_proj");  // by time
  const NcuLayer& ln = layer(l, "h.*.ln_1");
  EXPECT_EQ(ln.kernels, 12u);
  EXPECT_EQ(ln.ranges.size(), 12u);
  EXPECT_EQ(ln.domain, "laptime");
  EXPECT_EQ(ln.longest, "layernorm_vec_kernel");
  EXPECT_EQ(ln.m.grid, 32.0);
  EXPECT_EQ(ln.m.block, 256.0);
  EXPECT_EQ(ln.m.registers, 112.0);
  EXPECT_EQ(ln.m.blocks_per_sm, 2.0);
  EXPECT_EQ(ln.m.limiters, std::vector<std::string>{"registers"});
  EXPECT_EQ(ln.m.theoretical_pct, 25.0);
  EXPECT_EQ(ln.diagnosis.rule, NcuRule::SmallGrid);
  EXPECT_EQ(ln.diagnosis.text,
            "too small for the GPU: its longest kernel's 32 blocks fill 0.12 of one wave (2 blocks a "
            "SM x 132 SMs), most SMs sit idle; fuse it into a neighbour or give each launch more work");
  // The embedding's 256-thread blocks allow 8 a SM by warps, 100% theoretical: nothing caps it.
  const NcuLayer& wte = layer(l, "wte");
  EXPECT_TRUE(wte.m.limiters.empty());
  EXPECT_EQ(wte.m.theoretical_pct, 100.0);
  EXPECT_EQ(wte.m.stalls.front().reason, "long_scoreboard");
  EXPECT_EQ(wte.m.stalls.front().cycles, 19.27);  // one kernel: its own ratio
  // FP32 FLOPs from the counters: the embedding adds token and position rows, 256 x 768.
  EXPECT_NEAR(wte.counted_flops, 256.0 * 768, 0.01 * 256 * 768);
  // A mean weighted by time equals the plain mean when all twelve have the same value, and lies
  // between the smallest and largest otherwise.
  double lo = 1e9, hi = 0;
  for (const NcuKernel& k : r.kernels)
    if (ncu_short_name(r.str(k.name)) == "layernorm_vec_kernel" &&
        r.str(k.ranges().back().name).find("ln_1") != std::string::npos)
      lo = std::min(lo, k.at(NcuMetric::DramPct)), hi = std::max(hi, k.at(NcuMetric::DramPct));
  EXPECT_GE(ln.m.dram_pct, lo);
  EXPECT_LE(ln.m.dram_pct, hi);
  EXPECT_EQ(layer(l, "lm_head").diagnosis.rule, NcuRule::NoSingleLimit);
  // cuBLASLt's 384-thread warp-specialized GEMMs: their few warps are the design.
  EXPECT_EQ(layer(l, "h.*.attn.c_attn").diagnosis.rule, NcuRule::LatencyPipeline);
  EXPECT_EQ(layer(l, "h.*.mlp.c_fc").diagnosis.rule, NcuRule::LatencyPipeline);
}

TEST(NcuLayers, TheFusedStemIsLatencyBoundByItsRegisters) {
  const NcuLayers l = ncu_layers(read_ncu_report(fixture("laptime_resnet50_stem_fused.csv")), {}, nullptr, nullptr);
  ASSERT_EQ(l.layers.size(), 1u);
  const NcuLayer& stem = l.layers[0];
  EXPECT_EQ(stem.longest, "fused_stem_kernel");
  EXPECT_EQ(stem.diagnosis.rule, NcuRule::LatencyOccupancy);
  EXPECT_EQ(stem.diagnosis.text.rfind("latency-bound (compute 24%, memory 34%): 2.0 warps a scheduler, occupancy 12% "
                                      "capped at 12% by registers (241 "
                                      "a thread)",
                                      0),
            0u)
      << stem.diagnosis.text;
}

TEST(NcuLayers, DomainsAndNestedRanges) {
  const NcuReport r = read_ncu_report(fixture("domains.csv"));
  NcuLayerOptions any;
  any.by = LayerKey::Block;
  const NcuLayers l = ncu_layers(r, any, nullptr, nullptr);
  EXPECT_EQ(layer(l, "other.thread").domain, "cases");  // innermost: the last entry, in the second domain
  EXPECT_EQ(layer(l, "other.thread").kernels, 6u);
  EXPECT_EQ(layer(l, "stage2.inner").kernels, 3u);
  EXPECT_EQ(layer(l, "step 0").kernels, 1u);  // tail_kernel, outside every stage
  NcuLayerOptions def = any;
  def.domain = "default";
  const NcuLayers d = ncu_layers(r, def, nullptr, nullptr);
  EXPECT_EQ(layer(d, "step 0").kernels, 3u);  // with the `cases` range left out, step 0 holds it
  EXPECT_THROW(layer(d, "other.thread"), std::runtime_error);
  NcuLayerOptions cases = any;
  cases.domain = "cases";
  const NcuLayers c = ncu_layers(r, cases, nullptr, nullptr);
  EXPECT_EQ(layer(c, "other.thread").kernels, 6u);
  EXPECT_EQ(layer(c, "(no range)").kernels, 12u);
  NcuLayerOptions none = any;
  none.domain = "laptime";
  try {
    ncu_layers(r, none, nullptr, nullptr);
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()), "no kernel of " + fixture("domains.csv") +
                                         " ran inside a range of NVTX domain 'laptime'; its domains: <default domain>, "
                                         "cases.");
  }
}

// --- Constructed reports: a real one edited cell by cell ------------------------------------

// A report as a table of cells, to edit and write back as CSV.
struct Table {
  std::vector<std::vector<std::string>> rows;  // header, units, kernels
  explicit Table(const std::string& file) {
    std::ifstream in(fixture(file), std::ios::binary);
    CsvReader r(in, file);
    std::vector<std::string> f;
    while (r.next(f)) rows.push_back(f);
  }
  size_t col(const std::string& name) const {
    for (size_t i = 0; i < rows[0].size(); ++i)
      if (rows[0][i] == name) return i;
    throw std::runtime_error("no column " + name);
  }
  std::string& at(size_t kernel, const std::string& column) { return rows[2 + kernel][col(column)]; }
  std::string& unit(const std::string& column) { return rows[1][col(column)]; }
  void drop(const std::string& column) {
    const size_t c = col(column);
    for (auto& r : rows) r.erase(r.begin() + static_cast<long>(c));
  }
  std::string text() const {
    std::string out;
    for (const auto& r : rows) {
      for (size_t i = 0; i < r.size(); ++i) {
        std::string q;
        for (char ch : r[i]) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
        out += (i ? ",\"" : "\"") + q + "\"";
      }
      out += "\n";
    }
    return out;
  }
  NcuReport parse() const {
    std::istringstream in(text());
    return parse_ncu_csv(in, "t.csv");
  }
};

const std::string kNvtx = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg";
std::string stack_of(const std::vector<std::string>& names) {
  std::string s = "1592 ";
  for (const std::string& n : names) s += " \"laptime:" + n + ":none:none:none:none:REGISTERED:" + n + "\" ";
  return s;
}

TEST(NcuReports, TheProgramsOwnOutputBeforeTheHeaderIsSkipped) {
  const Table t("laptime_gpt2_attn_cudnn.csv");
  std::istringstream in("==PROF== Connected to process 1592\nlaptime bench gpt2: B=1 T=256, \"bf16\"\n" + t.text());
  const NcuReport r = parse_ncu_csv(in, "t.csv");
  EXPECT_EQ(r.kernels.size(), 7u);
  EXPECT_EQ(r.skipped_lines, 2u);
  EXPECT_EQ(r.kernels[0].line, 5u);  // header 3, units 4
}

TEST(NcuReports, MalformedReportsAreOneSentence) {
  auto error = [](const Table& t) {
    try {
      t.parse();
    } catch (const TraceError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  {
    Table t("laptime_gpt2_attn_cudnn.csv");
    t.drop("Kernel Name");
    EXPECT_EQ(error(t),
              "t.csv has no \"Kernel Name\" column: it is not the raw page of an Nsight Compute report "
              "(`ncu --csv --page raw`, as ncu 2025.3 writes it).");
  }
  {
    Table t("laptime_gpt2_attn_cudnn.csv");
    t.drop("gpu__time_duration.sum");
    EXPECT_EQ(error(t),
              "t.csv has no column gpu__time_duration.sum (the kernels' durations): capture with --section "
              "SpeedOfLight (`laptime kernels --command` prints the whole command).");
  }
  {
    Table t("laptime_gpt2_attn_cudnn.csv");
    t.unit("dram__bytes.sum.per_second") = "Gbyte/s";
    EXPECT_EQ(error(t),
              "t.csv: column dram__bytes.sum.per_second is in 'Gbyte/s', not its base unit 'byte/s': export "
              "with `--print-units base` (`ncu --import` scales units unless told so).");
  }
  {
    Table t("laptime_gpt2_attn_cudnn.csv");
    t.at(2, "gpu__time_duration.sum") = "n/a";
    EXPECT_EQ(error(t),
              "t.csv line 5 (kernel cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_"
              "4x1x1_cga1x1x1_kernel0_0) has no duration (gpu__time_duration.sum is 'n/a'): ncu did not "
              "measure it; profile it again.");
  }
  {
    Table t("laptime_gpt2_attn_cudnn.csv");
    t.at(0, "sm__throughput.avg.pct_of_peak_sustained_elapsed") = "3,40";
    EXPECT_EQ(error(t),
              "t.csv line 3 (kernel layernorm_vec_kernel): column sm__throughput.avg.pct_of_peak_sustained_"
              "elapsed holds '3,40', not a non-negative number.");
  }
  {
    Table t("laptime_gpt2_attn_cudnn.csv");
    t.rows[3].pop_back();
    EXPECT_EQ(error(t),
              "t.csv line 4 has 795 fields where the header has 796 (a file cut short, or two reports joined).");
  }
  {
    Table t("laptime_gpt2_attn_cudnn.csv");
    t.rows.erase(t.rows.begin() + 1);  // no units row: the first kernel is read as units
    EXPECT_EQ(error(t),
              "t.csv has no row of units under its header (`ncu --csv --page raw` writes one, ncu 2025.3 at "
              "least): export the report again with that ncu.");
  }
  {
    Table t("laptime_gpt2_attn_cudnn.csv");
    t.rows.resize(2);
    EXPECT_EQ(error(t),
              "t.csv holds no kernel: ncu profiled nothing (check the --nvtx-include filter and the kernel "
              "filters).");
  }
  {
    Table t("laptime_gpt2_attn_cudnn.csv");
    t.at(1, kNvtx) = "1592  \"laptime:forward\" ";
    EXPECT_EQ(error(t),
              "t.csv line 4: the NVTX range \"laptime:forward\" does not have ncu's eight fields "
              "(domain:name:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg).");
  }
  // The details page (--csv without --page raw): one row per metric.
  EXPECT_EQ(parse_error("\"ID\",\"Process ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\","
                        "\"Metric Value\"\n\"0\",\"1\",\"k\",\"SOL\",\"Duration\",\"ns\",\"4,288\"\n"),
            "bad.csv is Nsight Compute's details page (one row per metric): laptime reads the raw page, one row per "
            "kernel; export it with `--csv --page raw`.");
  EXPECT_EQ(parse_error(""), "bad.csv is empty: it holds no Nsight Compute report.");
  EXPECT_EQ(parse_error("kernel,time\nk,1\n"),
            "bad.csv has no Nsight Compute header row (a line that begins with "
            "\"ID\",): it is not the CSV that `ncu --csv --page raw` prints.");
}

// Values no GPU can produce: refused with the row named, before a 1e308 ns
// kernel prints a 300-digit time, an inf% bandwidth or -nan% shares.
TEST(NcuReports, ValuesNoGpuCanProduceAreRefusedWithTheRow) {
  struct Case {
    const char* column;
    const char* value;
  };
  for (const Case& c :
       {Case{"gpu__time_duration.sum", "1e308"}, Case{"dram__bytes.sum.per_second", "1e30"},
        Case{"sm__throughput.avg.pct_of_peak_sustained_elapsed", "5e5"}, Case{"launch__grid_size", "1e300"}}) {
    Table t("laptime_gpt2_attn_cudnn.csv");
    t.at(0, c.column) = c.value;
    const std::string e = error_of([&] { t.parse(); });
    EXPECT_THAT(e, HasSubstr(std::string("t.csv line 3 (kernel layernorm_vec_kernel): column ") + c.column +
                             " holds '" + c.value + "', more than any GPU produces"));
    EXPECT_EQ(e.find('\n'), std::string::npos);
  }
  Table stall("laptime_gpt2_attn_cudnn.csv");
  stall.at(1, "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio") = "1e100";
  EXPECT_THAT(error_of([&] { stall.parse(); }), HasSubstr("t.csv line 4"));
}

// A report of two processes: read as one, every layer moved "1.7x the bytes it
// must"; now refused with both named, and --pid reads one.
TEST(NcuReports, TwoProcessesAreNamedAndPidReadsOne) {
  Table t("laptime_gpt2_attn_cudnn.csv");
  const size_t n = t.rows.size() - 2;
  for (size_t k = 0; k < n; k += 2) {
    t.at(k, "Process ID") = "7000";
    t.at(k, "Process Name") = "python";
  }
  const NcuReport r = t.parse();
  EXPECT_EQ(r.processes.size(), 2u);
  EXPECT_EQ(error_of([&] { ncu_layers(r, {}, nullptr, nullptr); }),
            "t.csv holds the kernels of 2 processes, 6932 (laptime), 7000 (python): each is a run of its own; name "
            "one with --pid N.");
  NcuLayerOptions o;
  o.pid = 7000;
  const NcuLayers python = ncu_layers(r, o, nullptr, nullptr);
  EXPECT_EQ(python.kernels, (n + 1) / 2);
  EXPECT_EQ(python.process, "python");
  o.pid = 6932;
  EXPECT_EQ(ncu_layers(r, o, nullptr, nullptr).kernels, n / 2);
  o.pid = 1;
  EXPECT_THAT(error_of([&] { ncu_layers(r, o, nullptr, nullptr); }),
              HasSubstr("t.csv has no kernel of process 1; its processes: 6932 (laptime), 7000 (python)."));
}

// `kernels A B` of two different programs says what differs, as diff does.
TEST(NcuDiffs, TwoDifferentProgramsSayWhatDiffers) {
  const auto layers_of = [](const char* report) {
    const NcuReport r = read_ncu_report(fixture(report));
    const LayerCosts costs = read_layer_costs(layer_costs_path(fixture(report)));
    return ncu_layers(r, {}, &costs, nullptr);
  };
  const NcuDiff d = ncu_diff(layers_of("laptime_gpt2.csv"), layers_of("laptime_resnet50.csv"));
  ASSERT_FALSE(d.notes.empty());
  EXPECT_THAT(d.notes.front(), HasSubstr("The two reports differ in model (gpt2 -> resnet50) and shape"));
  Table torch("laptime_gpt2_attn_cudnn.csv");
  for (size_t k = 0; k + 2 < torch.rows.size(); ++k) {
    torch.at(k, "Process Name") = "python";
    torch.at(k, kNvtx) = stack_of({"step", "conv" + std::to_string(k)});
  }
  const NcuDiff other = ncu_diff(ncu_layers(Table("laptime_gpt2_attn_cudnn.csv").parse(), {}, nullptr, nullptr),
                                 ncu_layers(torch.parse(), {}, nullptr, nullptr));
  ASSERT_FALSE(other.notes.empty());
  EXPECT_THAT(other.notes.front(), HasSubstr("differ in program (laptime -> python)"));
  // The same program against itself: nothing differs, nothing said.
  const NcuDiff same = ncu_diff(layers_of("laptime_gpt2.csv"), layers_of("laptime_gpt2.csv"));
  EXPECT_TRUE(same.notes.empty());
}

TEST(NcuReports, NotAvailableCellsLeaveWhatNeedsThemOut) {
  Table t("laptime_gpt2_attn_naive.csv");
  t.at(3, "dram__bytes.sum.per_second") = "n/a";  // one of attn.core's five
  t.at(3, "sm__throughput.avg.pct_of_peak_sustained_elapsed") = "no data";
  const NcuReport r = t.parse();
  EXPECT_TRUE(std::isnan(r.kernels[3].at(NcuMetric::DramBytesPerSecond)));
  const NcuLayers l = ncu_layers(r, {}, nullptr, nullptr);
  const NcuLayer& core = layer(l, "h.*.attn.core");
  EXPECT_TRUE(std::isnan(core.dram_bytes));      // a sum needs every kernel
  EXPECT_FALSE(std::isnan(core.m.compute_pct));  // a mean takes those that have it
  double w = 0, sum = 0;
  for (size_t k : {2u, 4u, 5u, 6u}) {
    const NcuKernel& x = r.kernels[k];
    w += x.at(NcuMetric::Time);
    sum += x.at(NcuMetric::Time) * x.at(NcuMetric::ComputePct);
  }
  EXPECT_NEAR(core.m.compute_pct, sum / w, 1e-9);
  EXPECT_TRUE(std::isnan(l.dram_bytes));
  ASSERT_FALSE(l.notes.empty());
  EXPECT_EQ(l.notes.back(), "h.*.attn.core: 1 of its kernels have no DRAM bytes; its DRAM sum is left out.");
  // A report without the stall columns still reads, and says so.
  Table bare("laptime_gpt2_attn_cudnn.csv");
  for (const std::string& h : std::vector<std::string>(bare.rows[0]))
    if (h.rfind("smsp__average_warps_issue_stalled_", 0) == 0) bare.drop(h);
  const NcuReport b = bare.parse();
  EXPECT_TRUE(b.stall_names.empty());
  EXPECT_EQ(b.notes.back(), "the report has no stall reasons (ncu's section WarpStateStats): none are shown.");
}

// --- The layer costs --------------------------------------------------------------------------

LayerCosts costs_of(const std::vector<LayerCostEntry>& entries) {
  LayerCosts c;
  c.source = "run.layers.json";
  c.model = "gpt2";
  c.precision = "bf16";
  c.shape = "B=1 T=256 (256 tokens)";
  c.layers = entries;
  return c;
}

// Made-up ceilings of an H200 (fp8 only where a test sets it).
Ceilings h200_ceilings() {
  Ceilings peak;
  peak.gpu = "NVIDIA H200";
  peak.bf16_tflops = 800;
  peak.tf32_tflops = 400;
  peak.fp32_tflops = 50;
  peak.copy_gbps = 4000;
  return peak;
}

TEST(NcuCosts, MovedOverMustAndTheMeasuredRooflinePoint) {
  const NcuReport r = read_ncu_report(fixture("laptime_gpt2_attn_cudnn.csv"));
  // Made-up costs, to check the join: c_attn must move 5 MB and compute 1 GFLOP.
  LayerCostEntry attn{"h.0.attn", "h.0", "composite", "", 0, 0, 0, 0};
  LayerCostEntry c_attn{"h.0.attn.c_attn", "h.0.attn", "gemm", "", 1e9, 3e6, 1e6, 1e6};
  LayerCostEntry ln{"h.0.ln_1", "h.0", "norm", "", 0, 1e3, 2e5, 2e5};
  const LayerCosts c = costs_of({attn, c_attn, ln});
  const Ceilings peak = h200_ceilings();
  const NcuLayers l = ncu_layers(r, {}, &c, &peak);
  const NcuLayer& g = layer(l, "h.*.attn.c_attn");
  ASSERT_TRUE(g.has_costs);
  EXPECT_EQ(g.must_bytes, 5e6);
  EXPECT_EQ(g.must_flops, 1e9);
  const double moved = r.kernels[1].at(NcuMetric::DramBytesPerSecond) * r.kernels[1].at(NcuMetric::Time) * 1e-9;
  EXPECT_DOUBLE_EQ(g.dram_bytes, moved);
  EXPECT_DOUBLE_EQ(g.m.bytes_ratio, moved / 5e6);
  EXPECT_DOUBLE_EQ(g.measured.intensity, 1e9 / moved);  // FLOPs over the bytes measured, not assumed
  EXPECT_DOUBLE_EQ(g.measured.tflops, 1e9 / (r.kernels[1].at(NcuMetric::Time) * 1e-9) / 1e12);
  EXPECT_TRUE(g.measured.has_bound);
  EXPECT_EQ(layer(l, "h.*.ln_1").must_bytes, 401e3);
  EXPECT_FALSE(layer(l, "h.*.attn.core").has_costs);
  ASSERT_FALSE(l.notes.empty());
  EXPECT_EQ(l.notes.front(),
            "5 of 7 layers have no entry in run.layers.json: h.*.attn.core, h.*.attn.c_proj, "
            "h.*.ln_2, h.*.mlp.c_fc, h.*.mlp.c_proj.");
}

// An fp8 layer is bounded by the fp8 rate of the ceilings file, and the report's header names that
// rate: before, the header listed bf16, tf32 and fp32 only, so an fp8 layer's % of its bound could
// not be checked from the page it was on.
TEST(NcuCosts, AnFp8LayerIsBoundedByTheFp8Rate) {
  const NcuReport r = read_ncu_report(fixture("laptime_gpt2_attn_cudnn.csv"));
  LayerCostEntry attn{"h.0.attn", "h.0", "composite", "", 0, 0, 0, 0};
  LayerCostEntry c_attn{"h.0.attn.c_attn", "h.0.attn", "gemm", "fp8", 1e12, 1e3, 1e3, 1e3};  // compute-bound
  const LayerCosts c = costs_of({attn, c_attn});
  Ceilings peak = h200_ceilings();
  peak.fp8_tflops = 1600;
  peak.source = "peak.json";
  const NcuLayers l = ncu_layers(r, {}, &c, &peak);
  const NcuLayer& g = layer(l, "h.*.attn.c_attn");
  ASSERT_TRUE(g.has_costs);
  EXPECT_EQ(g.precision, "fp8");
  ASSERT_TRUE(g.measured.has_bound);
  EXPECT_EQ(g.measured.bound, RoofBound::Compute);
  EXPECT_DOUBLE_EQ(g.measured.pct_of_bound, 100 * g.measured.tflops / 1600);
  const std::string text = laptime::trace::testing_support::printed([&](std::FILE* out) { print_ncu_layers(l, out); });
  EXPECT_NE(text.find("ceilings   NVIDIA H200: fp8 1600.0, bf16 800.0, tf32 400.0, fp32 50.0 TFLOP/s"),
            std::string::npos)
      << text;
}

TEST(NcuCosts, ACompositeRangeWithPartsOfItsOwnGetsNoCosts) {
  // One kernel launched in h.0.attn itself, the others in its parts: h.0.attn's sidecar bytes
  // are its parts' sum, which would count their traffic twice.
  Table t("laptime_gpt2_attn_cudnn.csv");
  t.at(2, kNvtx) = stack_of({"forward", "h.0", "h.0.attn"});
  const NcuReport r = t.parse();
  const LayerCosts c = costs_of({{"h.0.attn", "h.0", "composite", "", 2e9, 1e6, 1e6, 1e6},
                                 {"h.0.attn.c_attn", "h.0.attn", "gemm", "", 1e9, 1e6, 1e6, 1e6}});
  const NcuLayers l = ncu_layers(r, {}, &c, nullptr);
  EXPECT_FALSE(layer(l, "h.*.attn").has_costs);
  EXPECT_TRUE(layer(l, "h.*.attn.c_attn").has_costs);
  bool said = false;
  for (const std::string& n : l.notes) said |= n.rfind("h.*.attn: kernels launched in these ranges outside", 0) == 0;
  EXPECT_TRUE(said);
}

TEST(NcuCosts, ASidecarOfAnotherShapeIsNoted) {
  const NcuReport r = read_ncu_report(fixture("laptime_gpt2.csv"));
  const LayerCosts big =
      read_layer_costs(LAPTIME_SOURCE_DIR "/tests/fixtures/nsys/gpt2_bf16.layers.json");  // B=8 T=1024
  const NcuLayers l = ncu_layers(r, {}, &big, nullptr);
  bool said = false;
  for (const std::string& n : l.notes)
    said |= n.find("is it of this run's shape (B=8 T=1024 (8192 tokens))?") != std::string::npos;
  EXPECT_TRUE(said);
}

// --- The diagnosis rules at their thresholds ---------------------------------------------------

NcuLayerMetrics quiet() {  // a layer that trips no rule but the last: 70% compute, 65% memory
  NcuLayerMetrics m;
  m.dram_pct = 50;
  m.memory_pct = 65;
  m.compute_pct = 70;
  m.tensor_pct = 0;
  m.occupancy_pct = 40;
  m.theoretical_pct = 50;
  m.warps_per_scheduler = 6;
  m.waves = 2;
  m.grid = 528;
  m.block = 256;
  m.registers = 64;
  m.blocks_per_sm = 4;
  m.sm_count = 132;
  m.stalls = {{"long_scoreboard", 12.5}, {"wait", 2}};
  return m;
}

TEST(NcuDiagnosis, EachRuleAtItsThreshold) {
  const NcuThresholds t;
  auto rule = [&](const NcuLayerMetrics& m) { return diagnose(m, t).rule; };
  NcuLayerMetrics m = quiet();
  EXPECT_EQ(rule(m), NcuRule::NoSingleLimit);
  EXPECT_EQ(diagnose(m).text, "no single limit: compute 70%, memory 65% of peak, neither at its roof (80%)");

  m = quiet();
  m.dram_pct = 80;
  EXPECT_EQ(rule(m), NcuRule::DramBound);
  m.dram_pct = 79.99;
  EXPECT_EQ(rule(m), NcuRule::NoSingleLimit);
  m.dram_pct = 91;
  m.bytes_ratio = 1.5;
  EXPECT_EQ(rule(m), NcuRule::DramBoundExcess);
  m.bytes_ratio = 1.49;
  EXPECT_EQ(rule(m), NcuRule::DramBound);
  EXPECT_EQ(diagnose(m).text,
            "memory-bound at 91% of DRAM bandwidth: at its floor; only moving fewer bytes (fusion, a "
            "smaller type) makes it faster");
  m.bytes_ratio = 2.8;
  EXPECT_EQ(diagnose(m).text,
            "memory-bound at 91% of DRAM bandwidth, moving 2.8x the bytes it must: cut the re-reads "
            "(keep tiles on chip, fuse with the layer that reads them)");

  m = quiet();
  m.compute_pct = 80;
  m.tensor_pct = 78;
  EXPECT_EQ(rule(m), NcuRule::ComputeBound);
  EXPECT_EQ(diagnose(m).text,
            "compute-bound at 80% of the SMs' peak (tensor pipe 78%): at its roof; only less work "
            "(fewer FLOPs, a faster type) makes it faster");
  m.compute_pct = 79.99;
  EXPECT_EQ(rule(m), NcuRule::NoSingleLimit);
  m.compute_pct = 85;
  m.dram_pct = 80;  // both at a limit: DRAM is named first
  EXPECT_EQ(rule(m), NcuRule::DramBound);

  m = quiet();
  m.memory_pct = 80;
  EXPECT_EQ(rule(m), NcuRule::OnChipBound);
  m.memory_pct = 79.99;
  EXPECT_EQ(rule(m), NcuRule::NoSingleLimit);

  m = quiet();
  m.bytes_ratio = 1.5;
  EXPECT_EQ(rule(m), NcuRule::ExcessTraffic);
  m.bytes_ratio = 2.8;
  m.dram_pct = 40;
  EXPECT_EQ(diagnose(m).text,
            "moves 2.8x the bytes it must: it re-reads its inputs or weights from DRAM (DRAM at 40% of "
            "peak)");
  m.bytes_ratio = 1.49;
  EXPECT_EQ(rule(m), NcuRule::NoSingleLimit);

  m = quiet();
  m.waves = 0.49;
  m.grid = 32;
  m.blocks_per_sm = 2;
  EXPECT_EQ(rule(m), NcuRule::SmallGrid);
  EXPECT_EQ(diagnose(m).text,
            "too small for the GPU: its 32 blocks fill 0.49 of one wave (2 blocks a SM x 132 SMs), most "
            "SMs sit idle; fuse it into a neighbour or give each launch more work");
  m.waves = 0.5;
  EXPECT_EQ(rule(m), NcuRule::NoSingleLimit);

  m = quiet();
  m.compute_pct = 59.99;
  m.memory_pct = 59.99;
  m.warps_per_scheduler = 3.99;
  m.occupancy_pct = 12;
  m.theoretical_pct = 12.5;
  m.registers = 245;
  m.limiters = {"registers"};
  EXPECT_EQ(rule(m), NcuRule::LatencyOccupancy);
  EXPECT_EQ(diagnose(m).text,
            "latency-bound (compute 60%, memory 60%): 4.0 warps a scheduler, occupancy 12% capped at "
            "12% by registers (245 a thread); top stall long_scoreboard (12.5 cycles an instruction: "
            "waiting for global or local memory)");
  m.warps_per_scheduler = 4;
  EXPECT_EQ(rule(m), NcuRule::LatencyStalls);
  EXPECT_EQ(diagnose(m).text,
            "latency-bound (compute 60%, memory 60%) with 4.0 warps a scheduler; top stall "
            "long_scoreboard (12.5 cycles an instruction: waiting for global or local memory)");
  m.compute_pct = 60;
  EXPECT_EQ(rule(m), NcuRule::NoSingleLimit);

  // A warp-specialized tensor-core kernel: one 384-thread block a SM, capped by shared memory too,
  // the tensor pipe carrying its compute.
  m = quiet();
  m.compute_pct = 56;
  m.tensor_pct = 56;
  m.memory_pct = 40;
  m.warps_per_scheduler = 2.3;
  m.occupancy_pct = 14;
  m.theoretical_pct = 18.75;
  m.block = 384;
  m.blocks_per_sm = 1;
  m.waves = 1;
  m.registers = 168;
  m.shared_bytes = 231424;
  m.limiters = {"registers", "shared memory"};
  m.stalls = {{"barrier", 3.1}};
  EXPECT_EQ(rule(m), NcuRule::LatencyPipeline);
  EXPECT_EQ(diagnose(m).text,
            "latency-bound (compute 56%, memory 40%): the tensor pipe at 56% of peak, fed by one 384-thread block "
            "a SM (a warp-specialized kernel: its 2.3 warps a scheduler are its design, not the limit); top stall "
            "barrier (3.1 cycles an instruction: waiting at __syncthreads); what is left is its pipeline: each "
            "tile's loads before the first multiply and its epilogue after the last, exposed where a SM has few "
            "tiles (1.00 waves) or a short loop over K");
  NcuLayerMetrics w = m;
  w.block = 256;  // one consumer warpgroup, or a kernel whose registers are full: not told apart
  EXPECT_EQ(rule(w), NcuRule::LatencyOccupancy);
  w = m;
  w.tensor_pct = 0.89 * w.compute_pct;  // its compute is mostly elsewhere
  EXPECT_EQ(rule(w), NcuRule::LatencyOccupancy);
  w = m;
  w.limiters = {"registers"};  // no pipeline ring filling shared memory
  EXPECT_EQ(rule(w), NcuRule::LatencyOccupancy);
  w = m;
  w.blocks_per_sm = 2;
  EXPECT_EQ(rule(w), NcuRule::LatencyOccupancy);
  w = m;
  w.compute_pct = w.tensor_pct = 60;  // not latency at all
  EXPECT_EQ(rule(w), NcuRule::NoSingleLimit);

  EXPECT_EQ(rule(NcuLayerMetrics{}), NcuRule::Unknown);
  // The thresholds are parameters: the same layer under stricter ones.
  NcuThresholds strict;
  strict.at_limit_pct = 60;
  EXPECT_EQ(diagnose(quiet(), strict).rule, NcuRule::ComputeBound);  // compute 70% >= 60
}

TEST(NcuDiagnosis, OccupancyCappedBySeveralLimitsNamesEach) {
  NcuLayerMetrics m = quiet();
  m.compute_pct = 16;
  m.memory_pct = 17;
  m.warps_per_scheduler = 2.1;
  m.occupancy_pct = 13;
  m.theoretical_pct = 18.75;
  m.registers = 168;
  m.shared_bytes = 226688;
  m.limiters = {"registers", "shared memory"};
  EXPECT_EQ(
      diagnose(m).text.rfind(
          "latency-bound (compute 16%, memory 17%): 2.1 warps a scheduler, occupancy 13% capped at 19% by registers "
          "(168 a thread) and shared memory (221 KiB a block)",
          0),
      0u);
}

// --- .ncu-rep files through the ncu on PATH ---------------------------------------------------

// A folder of its own for a fake ncu, and PATH pointing at it while the test runs.
class FakeNcu {
 public:
  explicit FakeNcu(const std::string& script) {
    char tmpl[] = "/tmp/laptime-fake-ncu-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    const std::string path = dir_ + "/ncu";
    std::ofstream(path) << "#!/bin/sh\n" << script << "\n";
    ::chmod(path.c_str(), 0755);
    const char* p = std::getenv("PATH");
    old_ = p ? p : "";
    ::setenv("PATH", dir_.c_str(), 1);
  }
  ~FakeNcu() {
    ::setenv("PATH", old_.c_str(), 1);
    std::remove((dir_ + "/ncu").c_str());
    std::remove((dir_ + "/args").c_str());
    ::rmdir(dir_.c_str());
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_, old_;
};

TEST(NcuRep, ConvertedByTheNcuOnPath) {
  // The fake records its arguments and prints the CSV ncu made of this very report.
  // PATH holds only the fake's folder: the script names its tools in full.
  FakeNcu ncu("echo \"$@\" > \"${0%/ncu}/args\"\necho '==PROF== progress'\n/bin/cat '" + fixture("domains.csv") + "'");
  const NcuReport r = read_ncu_report(fixture("domains.ncu-rep"));
  EXPECT_EQ(r.kernels.size(), 18u);
  EXPECT_EQ(r.source, fixture("domains.ncu-rep"));
  EXPECT_EQ(r.converted_by,
            ncu.dir() + "/ncu --import " + fixture("domains.ncu-rep") + " --csv --page raw --print-units base");
  EXPECT_EQ(slurp(ncu.dir() + "/args"),
            "--import " + fixture("domains.ncu-rep") + " --csv --page raw --print-units base\n");
}

TEST(NcuRep, AFailingNcuIsOneSentence) {
  FakeNcu ncu("echo '==ERROR== The report is from a newer version.' >&2\nexit 3");
  try {
    read_ncu_report(fixture("domains.ncu-rep"));
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()), ncu.dir() + "/ncu failed (exit 3) converting " + fixture("domains.ncu-rep") +
                                         ": ==ERROR== The report is from a newer version.");
  }
}

TEST(NcuRep, WithoutNcuTheSentenceGivesTheCommandToRunElsewhere) {
  const char* p = std::getenv("PATH");
  const std::string old = p ? p : "";
  ::setenv("PATH", "/nonexistent", 1);
  std::string what;
  try {
    read_ncu_report(fixture("domains.ncu-rep"));
  } catch (const TraceError& e) {
    what = e.what();
  }
  ::setenv("PATH", old.c_str(), 1);
  const std::string rep = fixture("domains.ncu-rep"), stem = fixture("domains");
  EXPECT_EQ(what,
            rep + " is an Nsight Compute report file and there is no ncu on PATH to convert it: run `ncu --import " +
                rep + " --csv --page raw --print-units base > " + stem +
                ".csv` where Nsight Compute is installed, "
                "then `laptime kernels " +
                stem + ".csv`.");
}

TEST(NcuRep, TheRealNcuConvertsTheCommittedReport) {
  // Where Nsight Compute is installed (the GPU machines): the conversion laptime runs gives the
  // same kernels and sums as `ncu --import` of the same report (domains.csv is another profiling
  // run of the same program: its times differ by a few tenths of a percent).
  std::string found, dir;
  if (const char* p = std::getenv("PATH")) {
    for (std::stringstream ss(p); found.empty() && std::getline(ss, dir, ':');)
      if (::access((dir + "/ncu").c_str(), X_OK) == 0) found = dir + "/ncu";
  }
  if (found.empty()) GTEST_SKIP() << "no ncu on PATH: the conversion is tested with a fake ncu only";
  const NcuReport rep = read_ncu_report(fixture("domains.ncu-rep"));
  const NcuReport live = read_ncu_report(fixture("domains_base.csv"));
  ASSERT_EQ(rep.kernels.size(), live.kernels.size());
  const NcuLayers a = ncu_layers(rep, {}, nullptr, nullptr), b = ncu_layers(live, {}, nullptr, nullptr);
  EXPECT_DOUBLE_EQ(a.time_ns, b.time_ns);
  EXPECT_NEAR(a.dram_bytes, b.dram_bytes, 1e-6 * b.dram_bytes);
}

// --- The ncu command --------------------------------------------------------------------------

// The sentence ncu_command refuses `o` with, "" when it builds a command.
std::string ncu_command_error(const NcuCommandOptions& o) {
  try {
    ncu_command(o);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

TEST(NcuCommand, Gpt2AtTheCommittedShapeAndItsMeasuredTime) {
  NcuCommandOptions o;
  o.model = "gpt2";
  o.batch = 1;
  o.seq = 256;
  const NcuCommand c = ncu_command(o);
  EXPECT_EQ(
      c.ncu,
      "ncu --nvtx --nvtx-include 'laptime@forward/' --section SpeedOfLight --section SpeedOfLight_RooflineChart "
      "--section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats "
      "--section WarpStateStats -f -o gpt2_b1_t256 ./build/bench/laptime bench gpt2 -b 1 -t 256 -w 0 -n 1 --json "
      "gpt2_b1_t256.json");
  EXPECT_EQ(c.read, "laptime kernels gpt2_b1_t256.ncu-rep");
  EXPECT_EQ(c.costs, "gpt2_b1_t256.layers.json");
  EXPECT_EQ(c.kernels, 87);         // as many as tests/fixtures/ncu/laptime_gpt2.csv has
  EXPECT_NEAR(c.seconds, 66, 0.5);  // capture.log: 66 s
  o.within = "h.0";
  o.attention = "naive";
  o.csv = true;
  const NcuCommand b = ncu_command(o);
  EXPECT_EQ(b.kernels, 11);  // laptime_gpt2_attn_naive.csv
  EXPECT_NE(b.ncu.find("--nvtx-include 'laptime@forward/h.0/'"), std::string::npos);
  EXPECT_NE(b.ncu.find("--csv --page raw --print-units base ./build/bench/laptime bench gpt2 -b 1 -t 256 --attention "
                       "naive -w 0 -n 1 --json gpt2_b1_t256_attn_naive_h_0.json > gpt2_b1_t256_attn_naive_h_0.csv"),
            std::string::npos)
      << b.ncu;
  EXPECT_NEAR(b.seconds, 13, 1.5);  // capture.log: 13 s
}

// The printed command is pasted into a shell: every word comes back whole,
// nothing in a name runs, and a name no shell line can carry is refused.
TEST(NcuCommand, EveryWordIsQuotedForTheShell) {
  const std::string dir = ::testing::TempDir() + "laptime_ncu_quoting";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  NcuCommandOptions o;
  o.model = "gpt2";
  o.output = "x$(touch X) it's";
  o.binary = "/opt/my tools/laptime";
  const NcuCommand c = ncu_command(o);
  // The shell splits the line into words; printed one a line, they are what was meant.
  const auto words = laptime::testing_support::run_shell(
      "sh -c 'cd " + dir + " && for w in \"$@\"; do echo \"$w\"; done' _ " + c.ncu.substr(4));
  EXPECT_NE(words.out.find("\n-o\nx$(touch X) it's\n/opt/my tools/laptime\nbench\n"), std::string::npos) << words.out;
  EXPECT_NE(words.out.find("\n--json\nx$(touch X) it's.json\n"), std::string::npos) << words.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/X") || std::filesystem::exists("X")) << "a name ran as a command";
  EXPECT_EQ(c.read, "laptime kernels 'x$(touch X) it'\\''s.ncu-rep'");
  // A control character (before: refused) is carried as bash's $'...', and reaches no terminal raw.
  o.output = "two\nlines\x1b[31m";
  const NcuCommand odd = ncu_command(o);
  EXPECT_EQ(laptime::trace::testing_support::bash_words(odd.read),
            (std::vector<std::string>{"laptime", "kernels", "two\nlines\x1b[31m.ncu-rep"}));
  const std::string text =
      laptime::trace::testing_support::printed([&](std::FILE* out) { print_ncu_command(odd, out); });
  EXPECT_EQ(text.find_first_of("\x1b"), std::string::npos) << text;
}

TEST(NcuCommand, Resnet50AndRefusals) {
  NcuCommandOptions o;
  o.model = "resnet50";
  o.batch = 8;
  const NcuCommand c = ncu_command(o);
  EXPECT_EQ(c.kernels, 55);  // laptime_resnet50.csv
  EXPECT_NEAR(c.seconds, 41, 0.5);
  o.within = "conv1";
  o.stem = "cudnn";
  EXPECT_NEAR(ncu_command(o).seconds, 12.5, 1.5);  // capture.log: 11 and 14 s for the stems
  NcuCommandOptions g;
  g.model = "gpt2";
  g.stem = "fused";
  EXPECT_EQ(ncu_command_error(g), "--image-size and --stem apply to resnet50 only.");
  g.stem.clear();
  g.within = "h.0; rm -rf /";
  EXPECT_EQ(ncu_command_error(g),
            "--within takes a range name of letters, digits, dots and underscores (h.0, conv1), not 'h.0; "
            "rm -rf /'.");
}

// `laptime kernels --command lab KERNEL`: ncu over `laptime lab KERNEL --once`, filtered on the
// lab's ranges (lab > KERNEL > lab/KERNEL/vN), the sidecar beside its --json.
TEST(NcuCommand, LabOneKernelsVersions) {
  NcuCommandOptions o;
  o.model = "lab";
  o.lab_kernel = "layernorm";
  const NcuCommand c = ncu_command(o);
  EXPECT_EQ(c.ncu,
            "ncu --nvtx --nvtx-include 'laptime@lab/layernorm/' --section SpeedOfLight --section "
            "SpeedOfLight_RooflineChart --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section "
            "Occupancy --section LaunchStats --section WarpStateStats -f -o lab_layernorm ./build/bench/laptime lab "
            "layernorm --once --json lab_layernorm.json");
  EXPECT_EQ(c.read, "laptime kernels lab_layernorm.ncu-rep");
  EXPECT_EQ(c.costs, "lab_layernorm.layers.json");
  EXPECT_EQ(c.kernels, 0);  // trace/ does not know the registry: no estimate
  o.precision = "fp32";
  o.csv = true;
  EXPECT_NE(ncu_command(o).ncu.find("laptime lab layernorm -p fp32 --once --json lab_layernorm_fp32.json > "
                                    "lab_layernorm_fp32.csv"),
            std::string::npos);
  o.lab_kernel = "x;y";
  EXPECT_EQ(ncu_command_error(o),
            "--command lab takes a kernel name of lower-case letters, digits and underscores, not 'x;y'.");
  o.lab_kernel.clear();
  EXPECT_EQ(ncu_command_error(o),
            "--command lab needs the kernel: `laptime kernels --command lab KERNEL` (`laptime lab --list`).");
  o.lab_kernel = "layernorm";
  o.seq = 3;
  EXPECT_EQ(ncu_command_error(o),
            "--command lab profiles laptime lab's shapes: -b, -t, --image-size, --attention, --stem and --within "
            "apply to gpt2 and resnet50.");
}

// --- Two reports --------------------------------------------------------------------------------

TEST(NcuDiffs, TheStemBeforeAndAfter) {
  const NcuDiff d =
      ncu_diff(ncu_layers(read_ncu_report(fixture("laptime_resnet50_stem_cudnn.csv")), {}, nullptr, nullptr),
               ncu_layers(read_ncu_report(fixture("laptime_resnet50_stem_fused.csv")), {}, nullptr, nullptr));
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_EQ(d.rows[0].name, "conv1");
  EXPECT_EQ(d.rows[0].gone.size(), 1u);
  EXPECT_EQ(d.rows[0].gone[0].rfind("sm90_xmma_fprop_implicit_gemm_bf16bf16", 0), 0u);
  EXPECT_EQ(d.rows[0].added, std::vector<std::string>{"fused_stem_kernel"});
  EXPECT_EQ(d.rows[1].name, "maxpool");
  EXPECT_GE(d.rows[1].a, 0);
  EXPECT_EQ(d.rows[1].b, -1);
  EXPECT_EQ(d.rows[1].gone, std::vector<std::string>{"maxpool3x3s2_pair_kernel"});
  const nlohmann::json j = ncu_diff_to_json(d);
  EXPECT_EQ(j["schema"], "laptime.kernels.diff/1");
  const double a = d.a.layers[0].time_ns, b = d.b.layers[0].time_ns;
  EXPECT_DOUBLE_EQ(j["layers"][0]["change"]["time_ns"].get<double>(), b - a);
  EXPECT_TRUE(j["layers"][1]["b"].is_null());
}

TEST(NcuDiffs, AttentionCudnnAgainstNaive) {
  const NcuDiff d = ncu_diff(ncu_layers(read_ncu_report(fixture("laptime_gpt2_attn_cudnn.csv")), {}, nullptr, nullptr),
                             ncu_layers(read_ncu_report(fixture("laptime_gpt2_attn_naive.csv")), {}, nullptr, nullptr));
  for (const NcuLayerChange& c : d.rows) {
    ASSERT_GE(c.a, 0);
    ASSERT_GE(c.b, 0);
    if (c.name != "h.*.attn.core") {
      EXPECT_TRUE(c.gone.empty() && c.added.empty()) << c.name;
      continue;
    }
    EXPECT_EQ(d.a.layers[static_cast<size_t>(c.a)].kernels, 1u);
    EXPECT_EQ(d.b.layers[static_cast<size_t>(c.b)].kernels, 5u);
    EXPECT_EQ(c.added.size(), 5u);
  }
}

// --- The command line -------------------------------------------------------------------------

std::string temp(const std::string& name) { return ::testing::TempDir() + "laptime_ncu_" + name; }

TEST(KernelsCommand, ParsesAndWritesItsJson) {
  CLI::App app;
  KernelsOptions o;
  add_kernels_subcommand(app, o);
  const std::string json = temp("gpt2.json");
  std::vector<std::string> args{"kernels", fixture("laptime_gpt2.csv"), "--by", "block", "--json", json};
  std::reverse(args.begin(), args.end());
  app.parse(args);
  EXPECT_EQ(o.layers.by, LayerKey::Block);
  EXPECT_EQ(run_kernels(o), 0);
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["schema"], "laptime.kernels/1");
  EXPECT_EQ(j["kernels"], 87);
  EXPECT_EQ(j["layers"].size(), 87u);  // by block: every range its own row
  EXPECT_EQ(j["grouping"]["by"], "block");
  EXPECT_EQ(j["layers"][0]["kernel_list"].size(), 1u);
}

TEST(KernelsCommand, RefusalsAreOneSentence) {
  auto error = [](KernelsOptions o) {
    try {
      run_kernels(o);
    } catch (const TraceError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  KernelsOptions o;
  EXPECT_EQ(error(o),
            "laptime kernels needs a report (`ncu --csv --page raw` output or a .ncu-rep), two to compare, "
            "or --command MODEL for the ncu command that makes one.");
  o.reports = {fixture("laptime_gpt2.csv")};
  o.ncu.batch = 8;
  EXPECT_EQ(error(o),
            "the shape flags (-b, -t, --within, ...) describe the run --command profiles: give --command "
            "MODEL with them.");
  o.ncu.batch.reset();
  // No cache of this machine's ceilings may stand in for --peak.
  ::setenv("LAPTIME_CACHE_DIR", ::testing::TempDir().c_str(), 1);
  o.svg = temp("no_ceilings.svg");  // laptime_gpt2.layers.json lies beside it
  EXPECT_EQ(error(o), "the roofline plot needs the device's ceilings: run `laptime peak`, or pass --peak FILE.");
  o.reports = {fixture("laptime_gpt2_attn_cudnn.csv")};
  o.svg = temp("no_costs.svg");
  EXPECT_EQ(error(o),
            "the roofline plot needs the layer costs: pass --layers RUN.layers.json (`laptime bench ... "
            "--json RUN.json` writes it).");
  o.svg.clear();
  o.reports = {fixture("laptime_gpt2.csv")};
  o.json = fixture("laptime_gpt2.csv");
  EXPECT_EQ(error(o), "refusing to write the JSON report to " + fixture("laptime_gpt2.csv") +
                          ": it is the same file as the input " + fixture("laptime_gpt2.csv") + ".");
  o.json.clear();
  o.reports = {fixture("laptime_resnet50_stem_cudnn.csv"), fixture("laptime_resnet50_stem_fused.csv")};
  o.costs = "x.layers.json";
  EXPECT_EQ(error(o),
            "--layers names one report's costs: with two reports each side's RUN.layers.json is found "
            "beside it.");
  o.costs.clear();
  o.command = true;
  o.ncu.model = "gpt2";
  EXPECT_EQ(error(o), "--command prints the ncu command that makes a report: give it no report to read.");
}

}  // namespace
}  // namespace laptime::trace
