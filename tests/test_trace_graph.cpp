// CUDA Graph replays analyzed as eager runs are (trace/analyses/graph.h), checked against figures
// computed without the C++:
//   - the H200 captures in tests/fixtures/graph (nsys's default graph trace and --cuda-graph-trace=node
//     of a PyTorch torch.cuda.graph loop, laptime --graph ResNet-50 and GPT-2, the edge-case program
//     graph_cases.cu), against graph/reference.py's figures (reference.expected.json);
//   - the synthetic traces make_graph_traces.py writes with its answers (synthetic_graph.expected.json):
//     what the captures lack (concurrent capture on two threads, copies of copies, missing and looping
//     originals, a launch traced whole and by nodes, another process reusing correlation ids).
// Done when (the words): the verdict is GPU-bound, not "no GPU work"; the lap is the GPU's
// within 1% of the independent figure; per-layer GPU time within 2%; every graph kernel's layer.
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/trace_testing.h"
#include "trace/compare/diff.h"
#include "trace/compare/diff_input.h"
#include "trace/write/diff_json.h"
#include "trace/analyses/graph.h"
#include "trace/analyses/graph_nodes.h"
#include "trace/capture/nsys_writer.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/write/perfetto.h"
#include "trace/analyses/analyze.h"
#include "trace/analyses/roofline.h"
#include "trace/write/timeline_svg.h"

namespace laptime::trace {
namespace {

using nlohmann::json;
using testing_support::fixture;
using testing_support::read_file;
using testing_support::report_text;

// A loaded capture, with its join and analysis (the join refers to the trace).
struct Loaded {
  std::unique_ptr<Trace> trace;
  std::unique_ptr<TraceJoin> join;
  Analysis analysis;
};

const Loaded& load(const std::string& path) {
  static std::map<std::string, std::unique_ptr<Loaded>> cache;
  auto& l = cache[path];
  if (!l) {
    l = std::make_unique<Loaded>();
    l->trace = std::make_unique<Trace>(load_nsys_sqlite(fixture(path)));
    l->join = std::make_unique<TraceJoin>(*l->trace);
    l->analysis = analyze(*l->join, {});  // no flags, as a user runs it
  }
  return *l;
}

// The graph node that ran an operation (kNoGraphNode for eager work and replays traced whole).
uint64_t node_of(const Trace& t, const GpuOp& op) {
  switch (op.kind) {
    case GpuOp::Kind::Kernel:
      return t.kernels[op.index].graph_node;
    case GpuOp::Kind::Memcpy:
      return t.memcpys[op.index].graph_node;
    case GpuOp::Kind::Memset:
      return t.memsets[op.index].graph_node;
    case GpuOp::Kind::GraphReplay:
      return kNoGraphNode;
  }
  return kNoGraphNode;
}

// The operations of the steady iterations: those whose launch sits in a steady iteration's range.
std::vector<const GpuOp*> steady_ops(const Loaded& l) {
  std::set<int> steady;
  for (const Iteration& it : l.analysis.iterations)
    if (it.steady()) steady.insert(it.nvtx);
  std::vector<const GpuOp*> out;
  for (const GpuOp& op : l.join->ops())
    for (int r = op.range; r >= 0; r = l.trace->nvtx[r].parent)
      if (steady.count(r)) {
        out.push_back(&op);
        break;
      }
  return out;
}

std::string range_text(const Trace& t, int r) { return r < 0 ? "(no range)" : t.nvtx[r].text.str(); }

// Every check the figures allow, on one trace against one expected object.
void check_against(const std::string& path, const json& e) {
  SCOPED_TRACE(path);
  const Loaded& l = load(path);
  const Analysis& a = l.analysis;
  const Trace& t = *l.trace;
  ASSERT_EQ(a.iterations.size(), e["iterations"].get<size_t>());
  ASSERT_EQ(a.steady_count, e["steady"].get<size_t>());
  // The lap: the GPU's start to next start wherever the host ran ahead (every graph capture).
  const double lap = e.contains("gpu_lap_ms") ? e["gpu_lap_ms"].get<double>() : e["lap_ms"].get<double>();
  EXPECT_NEAR(a.lap_ms, lap, 0.01 * lap) << a.lap_source;
  EXPECT_NEAR(a.gpu_ms.mean, e["gpu_span_ms_mean"].get<double>(), 0.01 * e["gpu_span_ms_mean"].get<double>());
  EXPECT_NEAR(a.busy_ms.mean, e["busy_ms_mean"].get<double>(), 0.01 * e["busy_ms_mean"].get<double>());
  EXPECT_NE(a.bound, Bound::NoGpuWork);
  // Graph replays traced whole: one operation each, GPU work of their iteration.
  const double n = double(a.steady_count);
  EXPECT_DOUBLE_EQ(a.graphs.replays / n, e["graph_replays_per_iteration"].get<double>());
  EXPECT_NEAR(a.graphs.replay_time / n / 1e6, e["graph_replay_ms_per_iteration"].get<double>(), 1e-6);
  const std::vector<const GpuOp*> ops = steady_ops(l);
  EXPECT_DOUBLE_EQ(ops.size() / n, e["ops_per_iteration"].get<double>());
  // Every graph node's layer: the range it was made in, or (null) the range around its launch.
  const json& layers = e["node_layers"];
  size_t checked = 0;
  for (const GpuOp* op : ops) {
    const uint64_t node = node_of(t, *op);
    if (node == kNoGraphNode) continue;
    const std::string key = std::to_string(node);
    ASSERT_TRUE(layers.contains(key)) << "node " << key << " is not in the expected figures";
    if (layers[key].is_null())
      EXPECT_EQ(op->layer, op->range) << "node " << key << " should take its launch's range";
    else
      EXPECT_EQ(range_text(t, op->layer), layers[key].get<std::string>()) << "node " << key;
    ++checked;
  }
  EXPECT_EQ(checked > 0, !layers.empty());
  // GPU time per layer per iteration (the innermost range: analyze's unfolded by-layer rows).
  std::map<std::string, double> got, want;
  for (const RangeRow& r : a.ranges) got[r.range] = r.time / n / 1e6;
  for (const auto& [name, ms] : e["layer_ms_per_iteration"].items()) want[name] = ms.get<double>();
  EXPECT_EQ(got.size(), want.size());
  for (const auto& [name, ms] : want) {
    ASSERT_TRUE(got.count(name)) << "no by-layer row " << name;
    EXPECT_NEAR(got[name], ms, 0.02 * ms) << name;
  }
}

json reference() { return json::parse(read_file(fixture("graph/reference.expected.json"))); }

class Capture : public testing::TestWithParam<std::string> {};

TEST_P(Capture, AgreesWithTheIndependentReference) {
  check_against("graph/" + GetParam() + ".sqlite", reference()[GetParam()]);
}

TEST_P(Capture, IsGpuBoundNotNoGpuWork) {
  const Analysis& a = load("graph/" + GetParam() + ".sqlite").analysis;
  EXPECT_EQ(a.bound, Bound::GpuBound) << a.verdict;
  EXPECT_TRUE(a.lap_from_gpu) << "the host ran ahead of every graph capture";
  EXPECT_TRUE(a.graphs.any());
}

INSTANTIATE_TEST_SUITE_P(Graph, Capture,
                         testing::Values("torch_graph", "torch_graph_node", "torch_graph2_outside_node",
                                         "laptime_resnet50_graph", "laptime_resnet50_graph_node",
                                         "laptime_gpt2_b1_graph", "laptime_gpt2_b1_graph_node", "graph_cases",
                                         "graph_cases_node"));

TEST(GraphCapture, TheEagerBaselineAgreesTooAndIsLaunchBound) {
  check_against("graph/laptime_gpt2_b1_eager.sqlite", reference()["laptime_gpt2_b1_eager"]);
  const Analysis& a = load("graph/laptime_gpt2_b1_eager.sqlite").analysis;
  EXPECT_EQ(a.bound, Bound::LaunchBound);
  EXPECT_FALSE(a.graphs.any());
}

TEST(GraphCapture, TheDefaultTraceSaysWhatItKnowsInsteadOfAnEmptyKernelTable) {
  const Analysis& a = load("graph/laptime_resnet50_graph.sqlite").analysis;
  const std::string text = report_text(a);
  EXPECT_NE(text.find("1 replay per iteration (graph "), std::string::npos) << text;
  EXPECT_NE(text.find("need `nsys profile --cuda-graph-trace=node`"), std::string::npos);
  EXPECT_EQ(text.find("no GPU work"), std::string::npos);
  EXPECT_NE(text.find("CUDA Graph replays"), std::string::npos);  // the by-layer row's "mostly"
  EXPECT_TRUE(a.kernels.empty());
  // laptime's setup replays 1,600 graphs while it times cuDNN candidates: none is an iteration's.
  EXPECT_GT(load("graph/laptime_resnet50_graph.sqlite").trace->graph_replays.size(), 1600u);
  EXPECT_EQ(a.graphs.replays, a.steady_count);
}

TEST(GraphCapture, HostRangesThatOnlyLaunchAreSaidToMeasureTheLaunch) {
  for (const char* name : {"graph/torch_graph.sqlite", "graph/laptime_gpt2_b1_graph_node.sqlite"}) {
    const Analysis& a = load(name).analysis;
    std::string notes;
    for (const std::string& n : a.notes) notes += n + "\n";
    EXPECT_NE(notes.find("only launch CUDA Graphs"), std::string::npos) << name << notes;
    EXPECT_EQ(a.lap_source, "GPU start to next start, mean") << name;
  }
}

TEST(GraphCapture, TheLapIsTheGpusEvenWhereTooFewIterationsShowTheHostRunningAhead) {
  // Two steady iterations: one pair, too few for the host-ahead rule (iterations.h); the ranges
  // that only launch graphs still measure the launch, not the lap.
  const Loaded& l = load("graph/laptime_gpt2_b1_graph.sqlite");
  ReportOptions o;
  o.skip_warmup = 10;
  const Analysis a = analyze(*l.join, o);
  ASSERT_EQ(a.steady_count, 2u);
  EXPECT_TRUE(a.lap_from_gpu);
  const double lap = reference()["laptime_gpt2_b1_graph"]["gpu_lap_ms"].get<double>();
  EXPECT_NEAR(a.lap_ms, lap, 0.01 * lap);
  std::string notes;
  for (const std::string& n : a.notes) notes += n + "\n";
  EXPECT_NE(notes.find("so the lap is the GPU's start to next start"), std::string::npos) << notes;
  EXPECT_EQ(notes.find("The host ran ahead of the GPU to the end"), std::string::npos) << notes;
}

TEST(GraphCapture, AnUpdatedExecutableIsNotedAndKeepsItsInstantiatedLayers) {
  const Loaded& l = load("graph/graph_cases_node.sqlite");
  EXPECT_EQ(l.analysis.graphs.updates, 1u);
  std::string notes;
  for (const std::string& n : l.analysis.notes) notes += n + "\n";
  EXPECT_NE(notes.find("cudaGraphExecUpdate call, before iteration 4"), std::string::npos) << notes;
  // nsys recorded no map from the update's graph (ranges stage1.v2, stage2.v2): the layers stay.
  for (const GpuOp* op : steady_ops(l))
    EXPECT_EQ(range_text(*l.trace, op->layer).find(".v2"), std::string::npos) << range_text(*l.trace, op->layer);
}

TEST(GraphCapture, TheOtherThreadsGraphIsNamedByItsOwnRange) {
  const Loaded& l = load("graph/graph_cases_node.sqlite");
  size_t other = 0;
  for (const GpuOp* op : steady_ops(l)) {
    if (range_text(*l.trace, op->layer) != "other.thread") continue;
    ++other;
    EXPECT_EQ(l.trace->nvtx[op->layer].domain, "cases");  // a second domain, on the capturing thread
    EXPECT_NE(l.trace->nvtx[op->layer].tid, l.trace->nvtx[op->range].tid);
  }
  EXPECT_EQ(other, 2u * l.analysis.steady_count);
}

// laptime's own CUPTI capture of `bench resnet50 -b 32 --graph --trace` (scripts/dev/captures.sh graph
// makes it on a GPU, trimmed of its setup like the nsys node capture): the same answers.
TEST(GraphCapture, LaptimesOwnCuptiCaptureOfAGraphRunNamesEveryLayer) {
  const std::string name = "graph/laptime_resnet50_graph_cupti.sqlite";
  if (!std::ifstream(fixture(name)))
    GTEST_SKIP() << "tests/fixtures/" << name
                 << " is not committed yet: scripts/dev/captures.sh graph captures it on a GPU";
  const json ref = reference();
  ASSERT_TRUE(ref.contains("laptime_resnet50_graph_cupti")) << "rerun tests/fixtures/graph/reference.py";
  check_against(name, ref["laptime_resnet50_graph_cupti"]);
  const Loaded& l = load(name);
  EXPECT_EQ(l.analysis.bound, Bound::GpuBound) << l.analysis.verdict;
  EXPECT_EQ(l.analysis.source.rfind("laptime CUPTI", 0), 0u) << l.analysis.source;
  EXPECT_GT(l.analysis.graphs.node_ops, 0u);
  EXPECT_EQ(l.analysis.graphs.node_ops_named, l.analysis.graphs.node_ops);  // laptime pushes a range per layer
  const auto roof = roofline_for_trace(*l.join, l.analysis, fixture(name), "", "");
  ASSERT_TRUE(roof.has_value()) << "the bench's sidecar beside the capture";
  EXPECT_GT(roof->layers.size(), 50u);  // ResNet-50's convolutions, each timed inside the replayed graph
}

// --- Synthetic edge cases ---------------------------------------------------------------------

json synthetic() { return json::parse(read_file(fixture("synthetic_graph.expected.json"))); }

TEST(GraphSynthetic, Replays) {
  const json e = synthetic()["replays"];
  check_against("synthetic_graph_replays.sqlite", e);
  const Analysis& a = load("synthetic_graph_replays.sqlite").analysis;
  EXPECT_TRUE(a.lap_from_gpu);
  EXPECT_EQ(a.bound, Bound::GpuBound) << a.verdict;
  // The eager kernel beside the replays keeps its row; the replays are counted apart.
  ASSERT_EQ(a.kernels.size(), 1u);
  EXPECT_EQ(a.kernels[0].name, "prep_kernel");
  EXPECT_EQ(a.graphs.graphs, std::set<uint32_t>{1});
}

TEST(GraphSynthetic, AnotherProcessReusingCorrelationIdsIsNotJoined) {
  const Loaded& l = load("synthetic_graph_replays.sqlite");
  for (const GpuOp& op : l.join->ops())
    if (op.pid == 7171) {
      EXPECT_EQ(op.range, -1) << "a replay of the other process took a range of the first";
      ASSERT_GE(op.api, 0);
      EXPECT_EQ(l.trace->api_calls[op.api].pid, 7171u);
    }
}

TEST(GraphSynthetic, Nodes) {
  const json e = synthetic()["nodes"];
  check_against("synthetic_graph_nodes.sqlite", e);
  const Analysis& a = load("synthetic_graph_nodes.sqlite").analysis;
  // The loop does not run ahead, but spends 2 us between its ranges: the lap is the GPU's, the
  // host range beside it with the reason.
  EXPECT_EQ(a.lap_from_gpu, e["lap_source"] == "gpu");
  EXPECT_NE(a.lap_reason.find("outside its ranges"), std::string::npos) << a.lap_reason;
  std::string notes;
  for (const std::string& n : a.notes) notes += n + "\n";
  for (const auto& phrase : e["notes_contain"])
    EXPECT_NE(notes.find(phrase.get<std::string>()), std::string::npos) << notes;
  EXPECT_NE(notes.find("recorded both whole and node by node"), std::string::npos) << notes;
  EXPECT_EQ(load("synthetic_graph_nodes.sqlite").join->replays_traced_by_nodes(), 4u);
}

TEST(GraphSynthetic, BadRowsInTheGraphTablesAreLeftOutAndCounted) {
  const json e = synthetic()["hostile"];
  check_against("synthetic_graph_hostile.sqlite", e);  // the good rows answer as in the replays case
  const DroppedRows& d = load("synthetic_graph_hostile.sqlite").trace->dropped;
  static const std::map<std::string, DropReason> kReasons{{"null", DropReason::Null},
                                                          {"not_integer", DropReason::NotInteger},
                                                          {"out_of_range", DropReason::OutOfRange},
                                                          {"end_before_start", DropReason::EndBeforeStart}};
  size_t expected_total = 0;
  for (const auto& [table, reasons] : e["dropped"].items()) {
    ASSERT_TRUE(d.tables.count(table)) << table;
    for (const auto& [reason, count] : reasons.items()) {
      EXPECT_EQ(d.tables.at(table).by_reason[static_cast<int>(kReasons.at(reason))], count.get<size_t>())
          << table << " " << reason;
      expected_total += count.get<size_t>();
    }
  }
  EXPECT_EQ(d.total(), expected_total);
}

TEST(GraphNodeIndex, FollowsCopiesBackAndStopsOnALoop) {
  Trace t;
  auto node = [&](uint64_t id, uint64_t original, Ns at) {
    GraphNode n;
    n.pid = 1;
    n.tid = 2;
    n.id = id;
    n.original = original;
    n.created = at;
    t.graph_nodes.push_back(n);
  };
  node(10, kNoGraphNode, 100);  // captured
  node(20, 10, 200);            // cloned
  node(30, kNoGraphNode, 300);  // instantiated: written first without its original...
  node(30, 20, 301);            // ... then with it
  node(40, 50, 400);            // a loop
  node(50, 40, 500);
  const GraphNodeIndex index(t);
  ASSERT_NE(index.origin(1, 30), nullptr);
  EXPECT_EQ(index.origin(1, 30)->created, 100);
  EXPECT_EQ(index.origin(1, 40), nullptr);
  EXPECT_EQ(index.origin(1, 99), nullptr);  // no record
  EXPECT_EQ(index.origin(2, 10), nullptr);  // another process's node 10
}

// --- The roofline on a graph's layers ------------------------------------------------------------

TEST(GraphRoofline, NodeLevelCaptureIsMeasuredPerLayerAsEagerRunsAre) {
  // laptime's GPT-2 sidecar (B=8 costs; the ranges are named alike at B=1): what matters here is
  // that each layer of the replayed graph is found and timed.
  const Loaded& l = load("graph/laptime_gpt2_b1_graph_node.sqlite");
  const LayerCosts costs = read_layer_costs(fixture("nsys/gpt2_bf16.layers.json"));
  const Roofline r = compute_roofline(*l.join, l.analysis, costs, std::nullopt);
  const json want = reference()["laptime_gpt2_b1_graph_node"]["layer_ms_per_iteration"];
  size_t leaves = 0;
  for (const RooflineRow& row : r.layers) {
    if (!want.contains(row.name)) continue;  // a composite range: the sum of its parts
    ++leaves;
    EXPECT_NEAR(row.time_ns / 1e6, want[row.name].get<double>(), 0.02 * want[row.name].get<double>()) << row.name;
  }
  EXPECT_GE(leaves, 12u * 6u);  // every block's ln_1, c_attn, core, c_proj, ln_2, c_fc, c_proj (attn and mlp)
  // The default graph trace has no layers to measure: the sentence says what would.
  const Loaded& whole = load("graph/laptime_gpt2_b1_graph.sqlite");
  const std::string e =
      testing_support::error_of([&] { compute_roofline(*whole.join, whole.analysis, costs, std::nullopt); });
  EXPECT_NE(e.find("--cuda-graph-trace=node"), std::string::npos) << e;
}

// --- Diff -------------------------------------------------------------------------------------

DiffSide side(const std::string& path, const DiffOptions& o) {
  const Loaded& l = load(path);
  return run_from_trace(*l.join, o, path);
}

TEST(GraphDiff, EagerAgainstNodeLevelGraphPerLayer) {
  DiffOptions o;
  o.resamples = 2000;
  const Diff d =
      diff_runs(side("graph/laptime_gpt2_b1_eager.sqlite", o), side("graph/laptime_gpt2_b1_graph_node.sqlite", o), o);
  ASSERT_GT(d.rows.size(), 10u);
  const DiffRow& w = d.rows.front();
  EXPECT_EQ(w.label, Label::Faster);
  EXPECT_DOUBLE_EQ(w.kernels_before, w.kernels_after);  // the same kernels ...
  EXPECT_GT(w.launches_before, 50.0);                   // ... launched one by one before,
  EXPECT_EQ(w.launches_after, 1.0);                     // by one cudaGraphLaunch after
  std::string notes;
  for (const std::string& n : d.notes) notes += n + "\n";
  // The launch gaps went (reference.py, means: span - busy 0.737 -> 0.071 ms an iteration).
  EXPECT_NE(notes.find("Where the time went"), std::string::npos) << notes;
  EXPECT_NE(notes.find("launch calls 100 -> 1"), std::string::npos) << notes;
  for (const DiffRow& r : d.rows) {
    if (r.whole) continue;
    EXPECT_NE(r.label, Label::OnlyBefore) << r.name;
    EXPECT_NE(r.label, Label::OnlyAfter) << r.name;
    EXPECT_DOUBLE_EQ(r.kernels_before, r.kernels_after) << r.name;
    EXPECT_LT(std::fabs(r.change_pct), 10.0) << r.name << ": a layer's kernels take the same time";
  }
}

TEST(GraphDiff, EagerAgainstTheDefaultGraphTraceComparesTheIterationOnly) {
  DiffOptions o;
  o.resamples = 2000;
  const Diff d =
      diff_runs(side("graph/laptime_gpt2_b1_eager.sqlite", o), side("graph/laptime_gpt2_b1_graph.sqlite", o), o);
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_EQ(d.rows[0].label, Label::Faster);
  EXPECT_TRUE(d.after.graph_replays);
  EXPECT_FALSE(d.before.graph_replays);
  std::string notes;
  for (const std::string& n : d.notes) notes += n + "\n";
  EXPECT_NE(notes.find("--cuda-graph-trace=node"), std::string::npos) << notes;
  const json j = diff_to_json(d);
  EXPECT_TRUE(j["rows"][0]["kernels"]["after"].is_null());
}

TEST(GraphWriters, PerfettoAndSvgDrawReplaysAndNodesLayers) {
  const std::string path = testing_support::temp_path("graph", "replays.perfetto.json");
  const Loaded& replays = load("graph/laptime_gpt2_b1_graph.sqlite");
  write_perfetto(*replays.join, path);
  size_t graph_slices = 0;
  const json doc = json::parse(read_file(path));  // held: a range-for over a temporary's member dangles
  for (const json& e : doc["traceEvents"])
    if (e.value("cat", "") == "cuda_graph") {
      ++graph_slices;
      EXPECT_EQ(e["args"]["graph"], 1);
      EXPECT_EQ(e["name"], "[CUDA graph 1]");
    }
  EXPECT_EQ(graph_slices, replays.trace->graph_replays.size());
  const Loaded& nodes = load("graph/graph_cases_node.sqlite");
  write_perfetto(*nodes.join, path);
  std::set<std::string> layers;
  const json doc2 = json::parse(read_file(path));
  for (const json& e : doc2["traceEvents"])
    if (e.contains("args") && e["args"].contains("layer")) layers.insert(e["args"]["layer"].get<std::string>());
  EXPECT_EQ(layers, (std::set<std::string>{"build A", "manual", "other.thread", "stage1", "stage2", "stage2.inner"}));
  const std::string svg = testing_support::temp_path("graph", "replays.svg");
  write_svg(*replays.join, replays.analysis, svg);
  EXPECT_NE(read_file(svg).find("[CUDA graph 1]"), std::string::npos);
  std::remove(path.c_str());
  std::remove(svg.c_str());
}

// --- The format laptime writes (the CUPTI capture's) ---------------------------------------------

TEST(GraphFormat, RoundTripsThroughLaptimesOwnTraceFormat) {
  const Trace& in = *load("graph/graph_cases_node.sqlite").trace;
  const std::string path = testing_support::temp_path("graph", "roundtrip.sqlite");
  save_nsys_sqlite(in, path);
  const Trace out = load_nsys_sqlite(path);
  ASSERT_EQ(out.graph_nodes.size(), in.graph_nodes.size());
  for (size_t i = 0; i < in.graph_nodes.size(); ++i) {
    EXPECT_EQ(out.graph_nodes[i].id, in.graph_nodes[i].id);
    EXPECT_EQ(out.graph_nodes[i].original, in.graph_nodes[i].original);
    EXPECT_EQ(out.graph_nodes[i].created, in.graph_nodes[i].created);
    EXPECT_EQ(out.graph_nodes[i].tid, in.graph_nodes[i].tid);
  }
  ASSERT_EQ(out.kernels.size(), in.kernels.size());
  for (size_t i = 0; i < in.kernels.size(); ++i) EXPECT_EQ(out.kernels[i].graph_node, in.kernels[i].graph_node);
  const Trace& replays = *load("graph/graph_cases.sqlite").trace;
  save_nsys_sqlite(replays, path);
  const Trace back = load_nsys_sqlite(path);
  ASSERT_EQ(back.graph_replays.size(), replays.graph_replays.size());
  for (size_t i = 0; i < back.graph_replays.size(); ++i) {
    EXPECT_EQ(back.graph_replays[i].start, replays.graph_replays[i].start);
    EXPECT_EQ(back.graph_replays[i].end, replays.graph_replays[i].end);
    EXPECT_EQ(back.graph_replays[i].graph, replays.graph_replays[i].graph);
    EXPECT_EQ(back.graph_replays[i].exec, replays.graph_replays[i].exec);
    EXPECT_EQ(back.graph_replays[i].correlation, replays.graph_replays[i].correlation);
  }
  // What the analysis answers from the copy is what it answers from nsys's file.
  const TraceJoin j(out);
  const Analysis a = analyze(j, {});
  const Analysis& b = load("graph/graph_cases_node.sqlite").analysis;
  ASSERT_EQ(a.ranges.size(), b.ranges.size());
  for (size_t i = 0; i < a.ranges.size(); ++i) {
    EXPECT_EQ(a.ranges[i].range, b.ranges[i].range);
    EXPECT_EQ(a.ranges[i].time, b.ranges[i].time);
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace laptime::trace
