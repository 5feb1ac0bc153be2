// The PyTorch profiler's (Kineto) traces: the reader against an independent reference on real
// traces of several GPUs and PyTorch versions and on synthetic ones (tests/fixtures/kineto/, each
// figure computed from the JSON by reference.py), what a file is decided by content
// (trace/read/open_trace.h), times read exactly from their text, and hostile files, each answered
// with one sentence in bounded memory.
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/trace_testing.h"
#include "trace/analyses/analyze.h"
#include "trace/compare/diff.h"
#include "trace/compare/diff_input.h"
#include "trace/model/validate.h"
#include "trace/read/kineto_json.h"
#include "trace/read/open_trace.h"

namespace laptime::trace {
namespace {

using testing_support::bounded;
using testing_support::error_of;
using testing_support::fixture;
using testing_support::read_file;
using testing_support::temp_path;

std::string kineto(const std::string& name) { return fixture("kineto/" + name); }

nlohmann::json reference() { return nlohmann::json::parse(read_file(kineto("reference.expected.json"))); }

std::vector<std::string> fixture_names() {
  const nlohmann::json all = reference();
  std::vector<std::string> names;
  for (const auto& [name, v] : all.items()) names.push_back(name);
  return names;
}

void write(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

std::string gzipped(const std::string& bytes) {
  z_stream z{};
  deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_RLE);  // RLE: fast on a bomb's runs
  std::string out(deflateBound(&z, bytes.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// --- Against the reference -------------------------------------------------------------------

class Fixtures : public testing::TestWithParam<std::string> {};

TEST_P(Fixtures, IterationsKernelsLapsAndSyncsAreTheReferences) {
  const nlohmann::json want = reference().at(GetParam());
  const Trace t = load_trace(kineto(GetParam()));
  EXPECT_EQ(t.format, TraceFormat::Kineto);
  const TraceJoin j(t);
  ReportOptions o;
  if (!want.at("range").is_null()) o.range = want.at("range").get<std::string>();
  const Analysis a = analyze(j, o);
  const nlohmann::json& its = want.at("iterations");
  ASSERT_EQ(a.iterations.size(), its.size());
  for (size_t i = 0; i < its.size(); ++i) {
    const Iteration& it = a.iterations[i];
    SCOPED_TRACE("iteration " + std::to_string(it.index));
    EXPECT_EQ(it.index, its[i].at("index").get<uint64_t>());
    EXPECT_EQ(it.duration(), its[i].at("host_ns").get<Ns>());
    EXPECT_EQ(it.kernels, its[i].at("kernels").get<size_t>());
    // The synchronizing calls of the reference's kinds, in this iteration, in time order (the
    // analysis lists them costliest first).
    std::vector<std::pair<Ns, std::string>> found;
    for (const auto* list : {&a.syncs, &a.syncs_elsewhere})
      for (const SyncCall& s : *list) {
        const std::string api = s.api.str();
        const bool named = api == "cudaDeviceSynchronize" || api == "cudaStreamSynchronize" ||
                           api == "cudaEventSynchronize" ||
                           (api.rfind("cudaMemcpy", 0) == 0 && api.find("Async") == std::string::npos);
        if (named && s.iteration == static_cast<int64_t>(it.index)) found.emplace_back(s.start, api);
      }
    std::stable_sort(found.begin(), found.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<std::string> syncs;
    for (const auto& [start, api] : found) syncs.push_back(api);
    EXPECT_EQ(syncs, its[i].at("syncs").get<std::vector<std::string>>());
  }
  std::vector<std::pair<std::string, int>> gpus, want_gpus;
  for (const Gpu& g : t.gpus) gpus.emplace_back(g.name, g.sm_count);
  for (const auto& g : want.at("gpus")) want_gpus.emplace_back(g.at("name"), g.at("sms"));
  EXPECT_EQ(gpus, want_gpus);
}

INSTANTIATE_TEST_SUITE_P(Kineto, Fixtures, testing::ValuesIn(fixture_names()),
                         [](const testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param.substr(0, p.param.find('.'));
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(Kineto, TheProfilersOwnSyncIsLeftOutAndTheRankNamesTheProcess) {
  const Trace t = load_trace(kineto("synthetic_item_loop.json.gz"));
  size_t device_syncs = 0;
  for (const ApiCall& c : t.api_calls) device_syncs += c.name == "cudaDeviceSynchronize";
  EXPECT_EQ(device_syncs, 0u);
  bool said = false;
  for (const std::string& n : t.notes) said = said || n.find("The profiler's own cudaDeviceSynchronize") == 0;
  EXPECT_TRUE(said);
  EXPECT_EQ(process_name(t, 4100), "python rank 1");
  // The copy to pageable memory, its direction and kinds from the name; the cuda_sync record joined.
  ASSERT_FALSE(t.memcpys.empty());
  EXPECT_EQ(t.memcpys[0].kind, CopyKind::DtoH);
  EXPECT_EQ(t.memcpys[0].dst, MemKind::Pageable);
  EXPECT_EQ(t.memcpys[0].pid, 4100u);
  ASSERT_EQ(t.syncs.size(), 6u);
  EXPECT_EQ(t.syncs[0].type, SyncType::StreamSynchronize);
  ASSERT_GE(t.syncs[0].api, 0);
  EXPECT_EQ(t.api_calls[t.syncs[0].api].name, "cudaStreamSynchronize");
}

// Traces of the lesson's loops under torch.profiler on an H100 (scripts/dev/captures.sh kineto).
// ResNet-50 with steps outran its GPU at first: the first measured steps' host ranges (6.2 and
// 13.2 ms) are enqueue time while the launch queue filled. The lap is the GPU's (the reference's
// gpu_lap_ns: the median start to next start of the profiler's own GPU step ranges), and exactly
// the short ranges are marked as run ahead. Before: the host ranges' mean, 15.8 ms, 20% short of
// the 19.8 ms the GPU ran, while its kernels alone took 19.3 ms an iteration. GPT-2 in CUDA Graphs:
// ranges that only launch, the lap the GPU's too.
TEST(Kineto, ALaunchQueueFillingIsNotTheLapAndAGraphLoopsLapIsTheGpus) {
  for (const char* name : {"h100_resnet50_steps.json.gz", "h100_gpt2_graph.json.gz"}) {
    SCOPED_TRACE(name);
    const double gpu_lap_ms = reference().at(name).at("gpu_lap_ns").get<double>() / 1e6;
    const Trace t = load_trace(kineto(name));
    const TraceJoin j(t);
    const Analysis a = analyze(j, ReportOptions{});
    EXPECT_NEAR(a.lap_ms, gpu_lap_ms, 0.005 * gpu_lap_ms);
    EXPECT_GE(a.lap_ms, a.busy_ms.mean);  // no loop laps faster than its GPU work
    for (const Iteration& it : a.iterations)
      if (!it.warmup && std::string(name).find("steps") != std::string::npos)
        EXPECT_EQ(it.host_ahead, it.duration() / 1e6 < 0.9 * gpu_lap_ms) << "iteration " << it.index;
  }
}

// A trace without GPU events (CPU activity only, or taken under nsys or ncu, which hold CUPTI):
// the reader's note names both causes, and no note sends a PyTorch profiler user to nsys's graph
// option (its graph launches then have no kernels only because nothing on the GPU was recorded).
TEST(Kineto, WithoutGpuEventsTheNoteSaysWhyAndGivesNoNsysAdvice) {
  nlohmann::json doc = nlohmann::json::parse(read_file(kineto("synthetic_graph_replay.json")));
  nlohmann::json kept = nlohmann::json::array();
  for (const nlohmann::json& e : doc["traceEvents"]) {
    const std::string cat = e.value("cat", "");
    if (cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset" && cat != "ac2g") kept.push_back(e);
  }
  doc["traceEvents"] = kept;
  const std::string path = temp_path("kineto", "no_gpu.json");
  write(path, doc.dump());
  const Trace t = load_trace(path);
  const TraceJoin j(t);
  const Analysis a = analyze(j, ReportOptions{});
  std::string said;
  for (const std::string& n : t.notes) said += n + "\n";
  for (const std::string& n : a.notes) said += n + "\n";
  EXPECT_NE(said.find("ProfilerActivity.CUDA"), std::string::npos) << said;
  EXPECT_NE(said.find("under `nsys profile` or `ncu` the PyTorch profiler records no GPU work"), std::string::npos)
      << said;
  EXPECT_EQ(said.find("--cuda-graph-trace"), std::string::npos) << said;
}

TEST(Kineto, AGraphsReplayedKernelsJoinItsLaunch) {
  const Trace t = load_trace(kineto("synthetic_graph_replay.json"));
  size_t in_graph = 0;
  for (const Kernel& k : t.kernels) {
    ASSERT_GE(k.api, 0);
    EXPECT_EQ(t.api_calls[k.api].name, "cudaGraphLaunch");
    in_graph += k.graph_node != kNoGraphNode;
  }
  EXPECT_EQ(in_graph, t.kernels.size());
}

TEST(Kineto, DiffReadsItAgainstItselfAndAgainstAnNsysExport) {
  const DiffOptions o;
  DiffSide k = load_run(kineto("synthetic_graph_replay.json"), o, std::nullopt);
  EXPECT_EQ(k.kind, "trace");
  EXPECT_EQ(k.iteration_ns.size(), 5u);  // 6 steps, the first warm-up
  const Diff same = diff_runs(load_run(kineto("synthetic_graph_replay.json"), o, std::nullopt), std::move(k), o);
  ASSERT_FALSE(same.rows.empty());
  EXPECT_EQ(same.rows[0].label, Label::Same);
  const Diff across = diff_runs(load_run(kineto("synthetic_graph_replay.json"), o, std::nullopt),
                                load_run(fixture("synthetic_trace.sqlite"), o, std::nullopt), o);
  ASSERT_FALSE(across.rows.empty());
  EXPECT_EQ(across.rows[0].label, Label::Faster);  // the synthetic nsys trace's lap is shorter
}

// --- What a file is ----------------------------------------------------------------------------

TEST(Kineto, WhatAFileIsComesFromItsContentNotItsName) {
  EXPECT_EQ(trace_kind(fixture("synthetic_trace.sqlite")), TraceKind::NsysSqlite);
  EXPECT_EQ(trace_kind(kineto("synthetic_no_steps.json")), TraceKind::Kineto);
  EXPECT_EQ(trace_kind(kineto("v100_ddp.json.gz")), TraceKind::Kineto);
  EXPECT_EQ(trace_kind(fixture("diff_bench_base.json")), TraceKind::BenchReport);
  EXPECT_EQ(trace_kind(fixture("not_a_trace.txt")), TraceKind::Other);
  // Renamed: a gzipped trace called .sqlite, an SQLite file called .json.
  const std::string gz = temp_path("kineto", "renamed.sqlite"), db = temp_path("kineto", "renamed.json");
  write(gz, read_file(kineto("synthetic_item_loop.json.gz")));
  write(db, read_file(fixture("synthetic_trace.sqlite")));
  EXPECT_EQ(trace_kind(gz), TraceKind::Kineto);
  EXPECT_EQ(trace_kind(db), TraceKind::NsysSqlite);
  EXPECT_EQ(load_trace(gz).kernels.size(), load_trace(kineto("synthetic_item_loop.json.gz")).kernels.size());
  EXPECT_FALSE(load_trace(db).kernels.empty());
  const std::string empty = temp_path("kineto", "empty.json");
  write(empty, "");
  EXPECT_EQ(trace_kind(empty), TraceKind::Empty);
  EXPECT_EQ(error_of([&] { load_trace(empty); }), empty + " is empty: it is not a trace.");
}

// --- Times ---------------------------------------------------------------------------------------

TEST(Kineto, MicrosecondTextBecomesNanosecondsExactly) {
  auto ns = [](const char* text) {
    Ns v = -1;
    return micros_to_ns(text, &v) == TimeText::Ok ? v : -1;
  };
  // A double holds 1712195495505583.123 as ...583.125: the text is read, not the double.
  EXPECT_EQ(ns("1712195495505583.123"), 1712195495505583123);
  EXPECT_EQ(ns("1712195495505583"), 1712195495505583000);
  EXPECT_EQ(ns("12.5"), 12500);
  EXPECT_EQ(ns("0.0009"), 0);  // past the nanosecond: cut
  EXPECT_EQ(ns("1.2345678"), 1234);
  EXPECT_EQ(ns("1.5e3"), 1500000);
  EXPECT_EQ(ns("15E-1"), 1500);
  EXPECT_EQ(ns("-0"), 0);
  EXPECT_EQ(ns("0000000000000000000000000007"), 7000);
  EXPECT_EQ(ns("4611686018427387.903"), (Ns{1} << 62) - 1);
  Ns v = 0;
  EXPECT_EQ(micros_to_ns("4611686018427387.904", &v), TimeText::OutOfRange);  // 2^62 ns
  EXPECT_EQ(micros_to_ns("-1", &v), TimeText::OutOfRange);
  EXPECT_EQ(micros_to_ns("1e400", &v), TimeText::OutOfRange);
  EXPECT_EQ(micros_to_ns("99999999999999999999999999999999999999999", &v), TimeText::OutOfRange);
  for (const char* bad : {"", "-", ".5", "5.", "1e", "1e+", "abc", "1.2.3", "0x10", "1 "})
    EXPECT_EQ(micros_to_ns(bad, &v), TimeText::NotNumber) << bad;
}

// --- Hostile files -----------------------------------------------------------------------------

std::string one_step(const std::string& events) {
  return "{\"traceEvents\": [" + events +
         "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 7, \"tid\": 7, "
         "\"ts\": 1.0, \"dur\": 100.0}]}";
}
const char* const kLaunch =
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 7, \"tid\": 7, \"ts\": "
    "2.0, \"dur\": 1.0, \"args\": {\"correlation\": 5}}, "
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 4.0, \"dur\": 3.0, "
    "\"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 5}}, ";

TEST(KinetoHostile, ATruncatedFileIsOneSentence) {
  const std::string text = read_file(kineto("synthetic_no_steps.json"));
  const std::string cut = temp_path("kineto", "cut.json"), cut_gz = temp_path("kineto", "cut.json.gz");
  write(cut, text.substr(0, text.size() / 2));
  EXPECT_EQ(error_of([&] { load_trace(cut); }),
            cut + " ends in the middle of its JSON (after " + std::to_string(text.size() / 2) +
                " bytes): the profiler did not finish writing it, or the file was cut short.");
  const std::string gz = gzipped(text);
  write(cut_gz, gz.substr(0, gz.size() / 2));
  EXPECT_EQ(error_of([&] { load_trace(cut_gz); }), cut_gz + " ends in the middle of its gzip stream (" +
                                                       std::to_string(gz.size() / 2) +
                                                       " bytes): the file was cut short, or is still being written.");
  const std::string bad_gz = temp_path("kineto", "bad.json.gz");
  std::string damaged = gz;
  for (size_t i = 20; i < 60 && i < damaged.size(); ++i) damaged[i] = static_cast<char>(~damaged[i]);
  write(bad_gz, damaged);
  EXPECT_NE(error_of([&] { load_trace(bad_gz); }).find(" is gzip but its stream is damaged at byte "),
            std::string::npos);
}

TEST(KinetoHostile, NamesThatAreNotUtf8AreEscapedAndRawControlCharactersAreNotJson) {
  const std::string bad_utf8 = temp_path("kineto", "utf8.json");
  write(bad_utf8, one_step(std::string(kLaunch) +
                           "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::\xff\xfe\xc0\xaf\", \"pid\": 7, "
                           "\"tid\": 7, \"ts\": 1.5, \"dur\": 2.0}, "));
  const Trace t = load_trace(bad_utf8);
  bool escaped = false;
  for (const NvtxEvent& r : t.nvtx) escaped = escaped || r.text == "aten::\\xFF\\xFE\\xC0\\xAF";
  EXPECT_TRUE(escaped);
  const std::string control = temp_path("kineto", "control.json");
  const std::string text = one_step(
      "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\x01"
      "b\"}, ");
  write(control, text);
  EXPECT_EQ(error_of([&] { load_trace(control); }), control + " is not valid JSON at byte " +
                                                        std::to_string(text.find('\x01')) +
                                                        ": a control character or an invalid escape inside a string.");
}

// One complete event ("ph": "X") as Kineto writes it, each value as its JSON text; `args` the
// members of its args object, if any.
std::string event(const std::string& cat, const std::string& pid, const std::string& ts, const std::string& dur,
                  const std::string& args = "") {
  const bool gpu = cat == "kernel";
  return "{\"ph\": \"X\", \"cat\": \"" + cat + "\", \"name\": \"" + (gpu ? "k" : "cudaLaunchKernel") +
         "\", \"pid\": " + pid + ", \"tid\": 7, \"ts\": " + ts + ", \"dur\": " + dur +
         (args.empty() ? "" : ", \"args\": {" + args + "}") + "}, ";
}

TEST(KinetoHostile, NumbersPastTheirWidthLeaveTheirRowOutCounted) {
  const std::string path = temp_path("kineto", "wide.json");
  // A pid past 64 bits, a correlation past 32, a time past 2^62 ns, a negative duration, a time as text.
  write(path, one_step(std::string(kLaunch) + event("cuda_runtime", "99999999999999999999999", "3.0", "1.0") +
                       event("kernel", "0", "4.0", "3.0", "\"correlation\": 4294967296") +
                       event("kernel", "0", "1e30", "3.0", "\"correlation\": 5") +
                       event("kernel", "0", "4.0", "-3.0", "\"correlation\": 5") +
                       event("kernel", "0", "\"4\"", "3.0", "\"correlation\": 5")));
  const Trace t = load_trace(path);
  EXPECT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.api_calls.size(), 1u);
  EXPECT_EQ(t.dropped.summary(),
            "5 of 8 rows left out (cuda_runtime 1, kernel 4): 1 text where an integer belongs, 3 time or id out of "
            "range, 1 end before start.");
}

TEST(Kineto, AnAc2gFlowGivesTheCorrelationARowLacks) {
  const std::string path = temp_path("kineto", "flows.json");
  auto flow = [](char ph, const char* pid, const char* ts) {
    return std::string("{\"ph\": \"") + ph + "\", \"id\": 9, \"pid\": " + pid + ", \"tid\": 7, \"ts\": " + ts +
           ", \"cat\": \"ac2g\", \"name\": \"ac2g\"}, ";
  };
  write(path, one_step(event("cuda_runtime", "7", "2.0", "1.0") + flow('s', "7", "2.0") +
                       event("kernel", "0", "4.0", "3.0", "\"device\": 0, \"stream\": 7") + flow('f', "0", "4.0") +
                       event("kernel", "0", "8.0", "1.0")));  // no correlation and no flow: left out
  const Trace t = load_trace(path);
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[0].correlation, 9u);
  ASSERT_GE(t.kernels[0].api, 0);
  EXPECT_EQ(t.api_calls[t.kernels[0].api].correlation, 9u);
  EXPECT_EQ(t.dropped.summary(), "1 of 4 rows left out (kernel 1): 1 NULL time or id.");
}

TEST(KinetoHostile, StringPidsAreTheProfilersOwnRowsAndDuplicatedCorrelationsAreSaid) {
  const std::string path = temp_path("kineto", "spans.json");
  write(path, one_step(std::string(kLaunch) + kLaunch +
                       "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": \"Spans\", "
                       "\"tid\": \"PyTorch Profiler\", \"ts\": 3.0, \"dur\": 1.0, \"args\": {\"correlation\": 6}}, "
                       "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"x\", \"pid\": \"Traces\", \"tid\": 1, \"ts\": "
                       "3.0, \"dur\": 1.0}, "));
  const Trace t = load_trace(path);
  EXPECT_EQ(t.api_calls.size(), 2u);  // the two launches, not the "Spans" row
  EXPECT_EQ(t.nvtx.size(), 1u);       // the step, not the "Traces" row
  bool said = false;
  for (const std::string& n : t.notes)
    said = said || n.find("1 CUDA API call reuses the correlation id of another call of its process") == 0;
  EXPECT_TRUE(said);
}

TEST(KinetoHostile, FilesThatAreNoProfilerTraceAreOneSentence) {
  const std::string meta = temp_path("kineto", "meta.json"), other = temp_path("kineto", "other.json"),
                    nan = temp_path("kineto", "nan.json"), deep = temp_path("kineto", "deep.json"),
                    bench = fixture("diff_bench_base.json");
  write(meta,
        "{\"traceEvents\": [{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, \"args\": {\"name\": "
        "\"python\"}}]}");
  EXPECT_EQ(error_of([&] { load_trace(meta); }),
            meta +
                " is a PyTorch profiler trace without profiled events (1 metadata record): the profiler recorded "
                "nothing; profile at least one step of the loop (schedule's active steps, each ended by prof.step()).");
  write(other, "{\"displayTimeUnit\": \"ms\", \"events\": []}");
  EXPECT_EQ(error_of([&] { load_trace(other); }),
            other +
                " is JSON but not a PyTorch profiler trace: it has no traceEvents array (torch.profiler's "
                "export_chrome_trace and tensorboard_trace_handler write one).");
  const std::string nan_text = one_step("{\"ph\": \"X\", \"ts\": NaN}, ");
  write(nan, nan_text);
  EXPECT_EQ(error_of([&] { load_trace(nan); }),
            nan + " is not valid JSON at byte " + std::to_string(nan_text.find("NaN")) + ": Invalid value.");
  write(deep, "{\"traceEvents\": [" + std::string(100000, '['));
  EXPECT_EQ(error_of([&] { load_trace(deep); }),
            deep + " nests deeper than 64 levels of JSON arrays and objects: it is no profiler's trace.");
  EXPECT_EQ(error_of([&] { load_trace(bench); }),
            bench +
                " is a `laptime bench --json` report, not a trace: `laptime diff` compares it with another run; "
                "`laptime analyze` reads the trace of a run.");
}

TEST(KinetoHostile, AGzipBombIsRefusedBeforeItIsInflated) {
  const std::string path = temp_path("kineto", "bomb.json.gz");
  write(path, gzipped("{\"traceEvents\": [" + std::string(size_t{300} << 20, ' ') + "]}"));
  std::string error;
  EXPECT_EQ(bounded(size_t{96} << 20, 20, [&] { error = error_of([&] { load_trace(path); }); }), "");
  error = error_of([&] { load_trace(path); });
  EXPECT_EQ(error.find(path + " inflates to more than 200 times its compressed size ("), 0u) << error;
  EXPECT_NE(error.find("a gzip bomb, not a profiler's trace."), std::string::npos);
}

TEST(KinetoHostile, TenMillionEventsReadInBoundedMemory) {
  // 10^7 events the reader reads past (instant events of the profiler's own), ~150 MB of JSON:
  // memory is what the reader keeps, not the file.
  const std::string path = temp_path("kineto", "ten_million.json");
  {
    std::ofstream f(path, std::ios::binary);
    f << "{\"traceEvents\": [";
    const std::string ev = "{\"ph\": \"i\", \"ts\": 1.0},";
    std::string block;
    for (int i = 0; i < 10000; ++i) block += ev;
    for (int i = 0; i < 1000; ++i) f << block;
    f << one_step(kLaunch).substr(std::string("{\"traceEvents\": [").size());
  }
  EXPECT_EQ(bounded(size_t{64} << 20, 60,
                    [&] {
                      const Trace t = load_trace(path);
                      if (t.kernels.size() != 1) _exit(5);
                    }),
            "");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace laptime::trace
