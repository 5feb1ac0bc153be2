// trace/analyses/roofline: the per-layer roofline of `laptime analyze`, on a trace built here with
// known answers, on the committed real captures (against the analysis's own range table),
// and its files: sidecar and peak readers, the JSON, the SVG. Host only.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/trace_testing.h"
#include "cli/analyze_command.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/write/roofline.h"
#include "trace/write/roofline_svg.h"

namespace laptime::trace {
namespace {

using json = nlohmann::json;

using testing_support::error_of;
using testing_support::fixture;
using testing_support::read_file;
using testing_support::source_dir;
std::string temp(const std::string& name) { return testing_support::temp_path("roof", name); }
void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A trace written range by range: one host thread, one stream, each kernel launched at the
// current host time and run after the previous one.
class TraceBuilder {
 public:
  TraceBuilder() { t_.gpus.push_back({0, "Test GPU", 1}); }
  void open(const std::string& text, uint32_t category = 0, bool payload = false, uint64_t value = 0) {
    NvtxEvent e;
    e.domain = t_.intern("laptime");
    e.text = t_.intern(text);
    e.category = category;
    e.has_payload = payload;
    e.payload = value;
    e.pid = 1;
    e.tid = 1;
    e.start = host_;
    host_ += 10;
    open_.push_back(t_.nvtx.size());
    t_.nvtx.push_back(e);
  }
  void close() {
    t_.nvtx[open_.back()].end = host_;
    host_ += 10;
    open_.pop_back();
  }
  void kernel(const std::string& name, Ns duration) {
    ApiCall c;
    c.name = t_.intern("cudaLaunchKernel");
    c.pid = 1;
    c.tid = 1;
    c.start = host_;
    c.end = host_ + 5;
    c.correlation = ++correlation_;
    t_.api_calls.push_back(c);
    Kernel k;
    k.pid = 1;
    k.stream = 7;
    k.start = std::max(gpu_, host_ + 5);
    k.end = k.start + duration;
    k.correlation = correlation_;
    k.name = k.short_name = t_.intern(name);
    t_.kernels.push_back(k);
    gpu_ = k.end;
    host_ += 10;
  }
  Trace finish() {
    t_.source = "built in test_roofline";
    t_.finalize();
    return std::move(t_);
  }

 private:
  Trace t_;
  std::vector<size_t> open_;
  Ns host_ = 1000, gpu_ = 0;
  uint64_t correlation_ = 0;
};

// Three `forward` iterations, the first warm-up (category 1): blk{a, b}, then z.
//   a: one kernel, 5 ms in warm-up, then 1.5 and 2.5 ms: 2 ms per steady iteration
//   b: two kernels, 0.4 + 0.6 ms: 1 ms;   z: not in the sidecar
Trace toy_trace() {
  TraceBuilder b;
  const Ns a_ns[3] = {5'000'000, 1'500'000, 2'500'000};
  for (int it = 0; it < 3; ++it) {
    b.open("forward", it == 0 ? 1 : 2, true, static_cast<uint64_t>(it));
    b.open("blk");
    b.open("a");
    b.kernel("gemm_kernel", a_ns[it]);
    b.close();
    b.open("b");
    b.kernel("copy_kernel", 400'000);
    b.kernel("copy_kernel", 600'000);
    b.close();
    b.close();
    b.open("z");
    b.kernel("other_kernel", 50'000);
    b.close();
    b.close();
  }
  return b.finish();
}

json layer(const std::string& name, const std::string& parent, double flops, double bytes) {
  return {{"name", name},
          {"parent", parent},
          {"kind", "test"},
          {"flops", flops},
          {"bytes", {{"weights", bytes / 2}, {"inputs", bytes / 4}, {"outputs", bytes / 4}}}};
}

json toy_sidecar(const std::string& precision, const std::string& a = "a", const std::string& b = "b") {
  return {{"schema", "laptime.layers/1"},
          {"model", "toy"},
          {"precision", precision},
          {"shape", "B=1"},
          {"layers",
           {layer("blk", "", 1e12 + 5, 2e9 + 5), layer(a, "blk", 1e12, 1e9), layer(b, "blk", 0, 1e9),
            layer("c", "blk", 5, 5)}}};
}

// bf16 1000 TFLOP/s, copy 2000 GB/s: the bf16 ridge is at 500 FLOP/byte, tf32's at 250.
Ceilings toy_ceilings() {
  return ceilings_from_json({{"schema", "laptime.peak/1"},
                             {"gpu", {{"name", "Test GPU"}, {"uuid", ""}}},
                             {"tflops", {{"bf16", 1000.0}, {"tf32", 500.0}, {"fp32", 50.0}}},
                             {"copy_gbps", 2000.0}},
                            "toy peak");
}

const RooflineRow& row(const std::vector<RooflineRow>& rows, const std::string& name) {
  for (const RooflineRow& r : rows)
    if (r.name == name) return r;
  throw std::runtime_error("no row " + name);
}

TEST(RooflinePoint, BoundAndPercentFromTheRidge) {
  const Ceilings c = toy_ceilings();
  // 1e12 FLOPs over 1e9 bytes (1000 FLOP/B, above the ridge of 500) in 2 ms: 500 TFLOP/s.
  RooflinePoint p = roofline_point(1e12, 1e9, 2e-3, &c, "bf16");
  EXPECT_DOUBLE_EQ(p.intensity, 1000.0);
  EXPECT_DOUBLE_EQ(p.tflops, 500.0);
  EXPECT_DOUBLE_EQ(p.gbps, 500.0);
  ASSERT_TRUE(p.has_bound);
  EXPECT_EQ(p.bound, RoofBound::Compute);
  EXPECT_DOUBLE_EQ(p.attainable_tflops, 1000.0);
  EXPECT_DOUBLE_EQ(p.pct_of_bound, 50.0);
  // 1e11 FLOPs over 1e9 bytes (100 FLOP/B): memory-bound, roof at 100 · 2000 GB/s = 200 TFLOP/s.
  p = roofline_point(1e11, 1e9, 1e-3, &c, "bf16");
  EXPECT_EQ(p.bound, RoofBound::Memory);
  EXPECT_DOUBLE_EQ(p.attainable_tflops, 200.0);
  EXPECT_DOUBLE_EQ(p.pct_of_bound, 50.0);  // 1000 of 2000 GB/s
  // Exactly at the ridge counts as compute; the precision picks the ridge.
  EXPECT_EQ(roofline_point(5e11, 1e9, 1e-3, &c, "bf16").bound, RoofBound::Compute);
  EXPECT_EQ(roofline_point(3e11, 1e9, 1e-3, &c, "bf16").bound, RoofBound::Memory);
  EXPECT_EQ(roofline_point(3e11, 1e9, 1e-3, &c, "tf32").bound, RoofBound::Compute);
  EXPECT_DOUBLE_EQ(roofline_point(3e11, 1e9, 1e-3, &c, "tf32").pct_of_bound, 60.0);  // 300 of 500
  // Without ceilings: achieved rates only.
  p = roofline_point(1e12, 1e9, 2e-3, nullptr, "bf16");
  EXPECT_FALSE(p.has_bound);
  EXPECT_DOUBLE_EQ(p.tflops, 500.0);
  // fp16 has bf16's tensor-core rate; anything else is refused (fp8 where the file has no fp8 rate).
  EXPECT_DOUBLE_EQ(roofline_point(1e12, 1e9, 2e-3, &c, "fp16").pct_of_bound, 50.0);
  EXPECT_EQ(error_of([&] { roofline_point(1, 1, 1, &c, "int8"); }),
            "no compute ceiling for precision 'int8': expected bf16, tf32, fp32 or fp8.");
  EXPECT_EQ(error_of([&] { roofline_point(1, 1, 1, &c, "fp8"); }),
            "the ceilings in toy peak have no fp8 rate (measured before fp8 existed): run `laptime peak --force`.");
}

TEST(Roofline, ToyTraceHasKnownAnswers) {
  const Trace t = toy_trace();
  const TraceJoin j(t);
  const Analysis a = analyze(j, {});
  ASSERT_EQ(a.steady_count, 2u);
  const Roofline r =
      compute_roofline(j, a, layer_costs_from_json(toy_sidecar("bf16"), "toy.layers.json"), toy_ceilings());
  EXPECT_DOUBLE_EQ(r.ridge, 500.0);
  ASSERT_EQ(r.layers.size(), 2u);  // blk has measured parts; c has no range; z no entry
  const RooflineRow& ra = r.layers[0];
  EXPECT_EQ(ra.name, "a");
  EXPECT_DOUBLE_EQ(ra.time_ns, 2'000'000.0);  // warm-up's 5 ms excluded
  EXPECT_EQ(ra.point.bound, RoofBound::Compute);
  EXPECT_NEAR(ra.point.pct_of_bound, 50.0, 1e-9);
  const RooflineRow& rb = r.layers[1];
  EXPECT_EQ(rb.name, "b");
  EXPECT_DOUBLE_EQ(rb.time_ns, 1'000'000.0);
  EXPECT_EQ(rb.point.bound, RoofBound::Memory);
  EXPECT_NEAR(rb.point.gbps, 1000.0, 1e-9);
  EXPECT_NEAR(rb.point.pct_of_bound, 50.0, 1e-9);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("1 of 4 layers of the sidecar have no GPU work under a range of their name"),
            std::string::npos)
      << r.notes[0];
  EXPECT_NE(r.notes[0].find(": c."), std::string::npos) << r.notes[0];

  // tf32's ridge (250) and ceiling (500): a reaches 100% of it.
  const Roofline r32 = compute_roofline(j, a, layer_costs_from_json(toy_sidecar("tf32"), "t"), toy_ceilings());
  EXPECT_NEAR(row(r32.layers, "a").point.pct_of_bound, 100.0, 1e-9);
  EXPECT_EQ(row(r32.layers, "a").precision, "tf32");

  // A layer that says it computes in fp16 (tf32's attention) is bounded by fp16's ceiling
  // (bf16's rate, 1000): 50% again, and a note names it; the others keep the run's.
  json side = toy_sidecar("tf32");
  side["layers"][1]["precision"] = "fp16";
  const Roofline r16 = compute_roofline(j, a, layer_costs_from_json(side, "t"), toy_ceilings());
  EXPECT_EQ(row(r16.layers, "a").precision, "fp16");
  EXPECT_NEAR(row(r16.layers, "a").point.pct_of_bound, 50.0, 1e-9);
  EXPECT_EQ(row(r16.layers, "b").precision, "tf32");
  ASSERT_EQ(r16.notes.size(), 2u);
  EXPECT_EQ(r16.notes[1],
            "a (fp16) compute in another precision than the run's: their bound is that precision's "
            "ceiling.");
  EXPECT_EQ(roofline_to_json(r16)["folded"][0]["precision"], "fp16");
}

TEST(Roofline, ACoarserCaptureIsMeasuredAtTheBlock) {
  const Trace t = toy_trace();
  const TraceJoin j(t);
  const Analysis a = analyze(j, {});
  // The sidecar's parts have no ranges of their names: the block carries the time of both.
  const Roofline r =
      compute_roofline(j, a, layer_costs_from_json(toy_sidecar("bf16", "a.part", "b.part"), "t"), std::nullopt);
  ASSERT_EQ(r.layers.size(), 1u);
  EXPECT_EQ(r.layers[0].name, "blk");
  EXPECT_DOUBLE_EQ(r.layers[0].time_ns, 3'000'000.0);
  EXPECT_FALSE(r.layers[0].point.has_bound);
  EXPECT_NEAR(r.layers[0].point.tflops, (1e12 + 5) / 3e-3 / 1e12, 1e-9);
  // Nothing at all to match: one sentence.
  const json other = {{"schema", "laptime.layers/1"},
                      {"model", "other"},
                      {"precision", "bf16"},
                      {"layers", {layer("nowhere", "", 1, 1)}}};
  EXPECT_EQ(error_of([&] { compute_roofline(j, a, layer_costs_from_json(other, "o.json"), std::nullopt); }),
            "no range in the steady iterations of this trace is named like a layer of o.json (other): capture with "
            "`--nvtx layer` (or block); a --graph run under nsys needs `--cuda-graph-trace=node`.");
}

TEST(Roofline, AnUnmatchedSidecarBesideTheTraceIsANoteNotAnError) {
  const Trace t = toy_trace();
  const TraceJoin j(t);
  const Analysis a = analyze(j, {});
  const json other = {{"schema", "laptime.layers/1"},
                      {"model", "other"},
                      {"precision", "bf16"},
                      {"layers", {layer("nowhere", "", 1, 1)}}};
  write_file(temp("graph.layers.json"), other.dump());
  const std::optional<Roofline> r = roofline_for_trace(j, a, temp("graph.sqlite"), "", "");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->layers.empty());
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0].rfind("no range in the steady iterations of this trace is named like a layer of", 0), 0u);
  EXPECT_EQ(error_of([&] { write_roofline_svg(*r, temp("graph.svg")); }),
            "no layer to draw in the roofline plot: " + r->notes[0]);
  // Named with --layers: an error.
  EXPECT_EQ(error_of([&] { roofline_for_trace(j, a, temp("graph.sqlite"), temp("graph.layers.json"), ""); }),
            r->notes[0]);
  // The default cache of the trace's GPU is found by name; a damaged one is a note.
  write_file(temp("toy.layers.json"), toy_sidecar("bf16").dump());
  const std::string cache = testing::TempDir() + "roof_cache";
  std::system(("mkdir -p '" + cache + "'").c_str());
  setenv("LAPTIME_CACHE_DIR", cache.c_str(), 1);
  write_file(default_peak_path("Test GPU"), ceilings_to_json(toy_ceilings()).dump());
  std::optional<Roofline> cached = roofline_for_trace(j, a, temp("toy.sqlite"), "", "");
  ASSERT_TRUE(cached && cached->ceilings);
  EXPECT_EQ(cached->ceilings->source, cache + "/peak-Test_GPU.json");
  EXPECT_NEAR(cached->layers[0].point.pct_of_bound, 50.0, 1e-9);
  write_file(default_peak_path("Test GPU"), "{");
  cached = roofline_for_trace(j, a, temp("toy.sqlite"), "", "");
  ASSERT_TRUE(cached.has_value());
  EXPECT_FALSE(cached->ceilings);
  ASSERT_FALSE(cached->notes.empty());
  EXPECT_EQ(cached->notes.back(), cache +
                                      "/peak-Test_GPU.json is not a JSON peak file. Run `laptime peak --force` to "
                                      "measure again.");
  // A FIFO as the cache (before: the read blocked forever) is a note too, read without blocking.
  std::remove(default_peak_path("Test GPU").c_str());
  ASSERT_EQ(::mkfifo(default_peak_path("Test GPU").c_str(), 0600), 0);
  cached = roofline_for_trace(j, a, temp("toy.sqlite"), "", "");
  ASSERT_TRUE(cached.has_value());
  EXPECT_FALSE(cached->ceilings);
  EXPECT_EQ(cached->notes.back(), cache +
                                      "/peak-Test_GPU.json is a FIFO (named pipe), not a regular file, so it cannot "
                                      "be a peak file. Run `laptime peak --force` to measure again.");
  std::remove(default_peak_path("Test GPU").c_str());
  unsetenv("LAPTIME_CACHE_DIR");
  // No sidecar beside the trace and none named: no roofline.
  EXPECT_FALSE(roofline_for_trace(j, a, temp("nothing.sqlite"), "", "").has_value());
}

// The one rule for where ceilings come from (analyze, diff, kernels and lab all call it): the
// named file, whose faults are errors; else the GPU's cache, whose faults are a note.
TEST(Roofline, FindCeilingsNamedFileElseTheGpusCache) {
  const std::string cache = testing::TempDir() + "find_ceilings_cache";
  std::system(("rm -rf '" + cache + "' && mkdir -p '" + cache + "'").c_str());
  setenv("LAPTIME_CACHE_DIR", cache.c_str(), 1);
  // No cache, no GPU name: neither ceilings nor a note.
  FoundCeilings f = find_ceilings("", "Test GPU");
  EXPECT_FALSE(f.ceilings);
  EXPECT_EQ(f.note, "");
  f = find_ceilings("", "");
  EXPECT_FALSE(f.ceilings);
  EXPECT_EQ(f.note, "");
  // The cache of that GPU, by name.
  Ceilings c = toy_ceilings();
  c.copy_gbps = 1000 + std::rand() % 1000;  // fresh each run: the value read must be the one written
  write_file(default_peak_path("Test GPU"), ceilings_to_json(c).dump());
  f = find_ceilings("", "Test GPU");
  ASSERT_TRUE(f.ceilings);
  EXPECT_EQ(f.ceilings->copy_gbps, c.copy_gbps);
  EXPECT_EQ(f.ceilings->source, default_peak_path("Test GPU"));
  EXPECT_FALSE(find_ceilings("", "Other GPU").ceilings);
  // A damaged cache: a note in the one wording, and no ceilings.
  write_file(default_peak_path("Test GPU"), "[1,");
  f = find_ceilings("", "Test GPU");
  EXPECT_FALSE(f.ceilings);
  EXPECT_EQ(f.note,
            default_peak_path("Test GPU") + " is not a JSON peak file. Run `laptime peak --force` to measure again.");
  // A named file wins over the cache, and its faults are errors, not notes.
  write_file(temp("named_peak.json"), ceilings_to_json(c).dump());
  f = find_ceilings(temp("named_peak.json"), "Test GPU");
  ASSERT_TRUE(f.ceilings);
  EXPECT_EQ(f.ceilings->source, temp("named_peak.json"));
  EXPECT_EQ(f.note, "");
  write_file(temp("named_bad.json"), "{");
  EXPECT_EQ(error_of([&] { find_ceilings(temp("named_bad.json"), "Test GPU"); }),
            temp("named_bad.json") + " is not a JSON peak file.");
  EXPECT_EQ(error_of([&] { find_ceilings(temp("named_missing.json"), ""); }),
            "cannot read the peak file " + temp("named_missing.json") + ": No such file or directory.");
  std::system(("rm -rf '" + cache + "'").c_str());
  unsetenv("LAPTIME_CACHE_DIR");
}

TEST(Roofline, IdenticalBlocksFoldIntoOneRow) {
  TraceBuilder b;
  for (int it = 0; it < 3; ++it) {
    b.open("forward", it == 0 ? 1 : 2, true, static_cast<uint64_t>(it));
    for (int h = 0; h < 2; ++h) {
      b.open("h." + std::to_string(h) + ".x");
      b.kernel("k", h == 0 ? 1'000'000 : 3'000'000);
      b.close();
    }
    b.open("h.2.x");  // another shape: stays its own row
    b.kernel("k", 1'000'000);
    b.close();
    b.close();
  }
  const Trace t = b.finish();
  const TraceJoin j(t);
  const Analysis a = analyze(j, {});
  const json side = {
      {"schema", "laptime.layers/1"},
      {"model", "toy"},
      {"precision", "bf16"},
      {"layers", {layer("h.0.x", "", 4e12, 1e9), layer("h.1.x", "", 4e12, 1e9), layer("h.2.x", "", 1e12, 1e9)}}};
  const Roofline r = compute_roofline(j, a, layer_costs_from_json(side, "t"), toy_ceilings());
  ASSERT_EQ(r.layers.size(), 3u);
  ASSERT_EQ(r.folded.size(), 2u);
  EXPECT_EQ(r.folded[0].name, "h.*.x");
  EXPECT_EQ(r.folded[0].instances, 2u);
  EXPECT_DOUBLE_EQ(r.folded[0].time_ns, 2'000'000.0);  // the mean of 1 and 3 ms
  EXPECT_NEAR(r.folded[0].point.tflops, 2000.0, 1e-9);
  EXPECT_NEAR(r.folded[0].point.pct_of_bound, 200.0, 1e-9);  // above the ceiling: reported, not clipped
  EXPECT_EQ(r.folded[1].name, "h.2.x");
  EXPECT_EQ(r.folded[1].instances, 1u);
}

TEST(RooflineFiles, PeakRoundTripsAndBadFilesAreOneSentence) {
  const Ceilings c = toy_ceilings();
  const std::string path = temp("peak.json");
  write_file(path, ceilings_to_json(c).dump());
  const Ceilings back = read_ceilings(path);
  EXPECT_EQ(back.gpu, "Test GPU");
  EXPECT_EQ(back.bf16_tflops, 1000.0);
  EXPECT_EQ(back.tf32_tflops, 500.0);
  EXPECT_EQ(back.fp32_tflops, 50.0);
  EXPECT_EQ(back.copy_gbps, 2000.0);
  EXPECT_EQ(back.source, path);
  // A file from before fp8 has no fp8 rate: asked for one, it says how to get it; with one, it
  // round-trips and bounds fp8 layers.
  EXPECT_EQ(back.fp8_tflops, 0.0);
  EXPECT_FALSE(ceilings_to_json(back)["tflops"].contains("fp8"));
  EXPECT_EQ(error_of([&] { back.tflops("fp8"); }),
            "the ceilings in " + path + " have no fp8 rate (measured before fp8 existed): run `laptime peak --force`.");
  json with8 = ceilings_to_json(c);
  with8["tflops"]["fp8"] = 1600.0;
  EXPECT_EQ(ceilings_from_json(with8, "w").tflops("fp8"), 1600.0);
  EXPECT_EQ(ceilings_to_json(ceilings_from_json(with8, "w"))["tflops"]["fp8"], 1600.0);
  with8["tflops"]["fp8"] = -1.0;
  EXPECT_NE(error_of([&] { ceilings_from_json(with8, "w"); }).find("every ceiling must be a positive number"),
            std::string::npos);

  EXPECT_EQ(error_of([&] { read_ceilings(temp("missing.json")); }),
            "cannot read the peak file " + temp("missing.json") + ": No such file or directory.");
  write_file(temp("garbage.json"), "{ not json");
  EXPECT_EQ(error_of([&] { read_ceilings(temp("garbage.json")); }), temp("garbage.json") + " is not a JSON peak file.");
  EXPECT_EQ(error_of([&] { read_layer_costs(temp("garbage.json")); }),
            temp("garbage.json") + " is not a JSON layer costs file.");
  write_file(temp("other.json"), R"({"schema": "laptime.bench/1"})");
  EXPECT_EQ(error_of([&] { read_ceilings(temp("other.json")); }),
            temp("other.json") + " is not a laptime peak file (schema laptime.peak/1, from `laptime peak`).");
  EXPECT_EQ(error_of([&] { read_layer_costs(temp("other.json")); }),
            temp("other.json") + " is not a laptime layer costs file (schema laptime.layers/1).");
  json zero = ceilings_to_json(c);
  zero["copy_gbps"] = 0;
  EXPECT_EQ(error_of([&] { ceilings_from_json(zero, "z"); }),
            "z is not a laptime peak file (schema laptime.peak/1, from `laptime peak`): every ceiling must be a "
            "positive number of at most 1e6.");
  json neg = toy_sidecar("bf16");
  neg["layers"][1]["flops"] = -1;
  EXPECT_EQ(error_of([&] { layer_costs_from_json(neg, "n"); }),
            "n is not a laptime layer costs file (schema laptime.layers/1): layer a has a negative count.");

  setenv("LAPTIME_CACHE_DIR", "/tmp/cache dir", 1);
  EXPECT_EQ(default_peak_path("NVIDIA H200 (MIG 1g.18gb)"), "/tmp/cache dir/peak-NVIDIA_H200__MIG_1g_18gb_.json");
  unsetenv("LAPTIME_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(default_peak_path("NVIDIA H200"), "/xdg/laptime/peak-NVIDIA_H200.json");
  unsetenv("XDG_CACHE_HOME");
}

// Numbers no device or layer has (a ceiling of 1e308, 5e-324 FLOPs or 1e308
// bytes sent the plot's decade loop past 8 GB): refused when the file is read, and the plot's
// axes bounded for any caller.
TEST(RooflineFiles, NumbersNoDeviceHasAreRefusedAndThePlotIsBounded) {
  const Ceilings c = ceilings_from_json(ceilings_to_json(toy_ceilings()), "c");
  for (const char* field : {"bf16", "fp32"}) {
    json huge = ceilings_to_json(c);
    huge["tflops"][field] = 1e308;
    EXPECT_NE(error_of([&] { ceilings_from_json(huge, "h"); }).find("at most 1e6"), std::string::npos) << field;
  }
  json fast = ceilings_to_json(c);
  fast["copy_gbps"] = 1e308;
  EXPECT_NE(error_of([&] { ceilings_from_json(fast, "h"); }).find("at most 1e6"), std::string::npos);
  for (double v : {5e-324, 1e308}) {
    json tiny = toy_sidecar("bf16");
    tiny["layers"][1]["flops"] = v;
    EXPECT_EQ(error_of([&] { layer_costs_from_json(tiny, "n"); }),
              "n is not a laptime layer costs file (schema laptime.layers/1): layer a has a count that is no number "
              "of FLOPs or bytes (0, or 0.001 to 1e18).");
  }
  RoofPlot p;
  p.peak_tflops = 1e308;
  p.copy_gbps = 3e3;
  p.ridge = 1e308 / 3e3 * 1e3;
  p.points.push_back({"x", "x", 5e-324, 1e-300, false, false, -1});
  const std::string svg = roofline_plot_svg(p);
  EXPECT_LT(svg.size(), 200000u);  // at most 25 decades a side
}

TEST(RooflineFiles, JsonAndAWellFormedSvg) {
  const Trace t = toy_trace();
  const TraceJoin j(t);
  const Analysis a = analyze(j, {});
  const Roofline r =
      compute_roofline(j, a, layer_costs_from_json(toy_sidecar("bf16"), "toy.layers.json"), toy_ceilings());
  const json out = roofline_to_json(r);
  EXPECT_EQ(out["ridge_flop_per_byte"], 500.0);
  EXPECT_EQ(out["layers"][0]["name"], "a");
  EXPECT_EQ(out["layers"][0]["bound"], "compute");
  EXPECT_NEAR(out["layers"][1]["pct_of_bound"].get<double>(), 50.0, 1e-9);
  EXPECT_EQ(out["ceilings"]["gpu"]["name"], "Test GPU");

  const std::string svg_path = temp("roofline.svg");
  write_roofline_svg(r, svg_path);
  const std::string svg = read_file(svg_path);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find(">a 50%</text>"), std::string::npos);        // the drawn point's label
  EXPECT_NE(svg.find("b: 1000 GB/s, 50.0%"), std::string::npos);  // 0 FLOPs: listed under the plot
  EXPECT_NE(svg.find("bf16 1000 TFLOP/s"), std::string::npos);
  const std::string check = std::string(PYTHON_EXECUTABLE) +
                            " -c \"import sys, xml.dom.minidom as m; m.parse(sys.argv[1])\" '" + svg_path + "'";
  EXPECT_EQ(std::system(check.c_str()), 0) << "not well-formed XML: " << svg_path;

  // No ceilings, no plot.
  const Roofline bare = compute_roofline(j, a, layer_costs_from_json(toy_sidecar("bf16"), "t"), std::nullopt);
  EXPECT_EQ(error_of([&] { write_roofline_svg(bare, temp("none.svg")); }),
            "the roofline plot needs the device's ceilings: run `laptime peak`, or pass --peak FILE.");
}

// --- The committed captures (tests/fixtures/nsys) ------------------------------------------
// Their sidecars are what the bench writes for those runs (test_layer_costs checks that);
// tests/fixtures/peak_example.json holds round example ceilings, not a measurement.
// Each layer's % must agree with (sidecar FLOPs or bytes / the layer's time) / ceiling, the
// time taken from the analysis's own table by innermost range, within 2%.
class RooflineCapture : public testing::TestWithParam<std::string> {};

TEST_P(RooflineCapture, PercentAgreesWithTheRangeTable) {
  const std::string name = GetParam();
  const Trace t = load_nsys_sqlite(fixture("nsys/" + name + ".sqlite"));
  const TraceJoin j(t);
  const Analysis a = analyze(j, {});
  const std::optional<Roofline> r =
      roofline_for_trace(j, a, fixture("nsys/" + name + ".sqlite"), "", fixture("peak_example.json"));
  ASSERT_TRUE(r.has_value()) << "the sidecar beside the capture was not found";
  const LayerCosts costs = read_layer_costs(fixture("nsys/" + name + ".layers.json"));
  std::map<std::string, const LayerCostEntry*> entry;
  for (const LayerCostEntry& e : costs.layers) entry[e.name] = &e;
  std::map<std::string, double> innermost_ns;
  for (const RangeRow& row : a.ranges) innermost_ns[row.range] = static_cast<double>(row.time);
  const Ceilings c = read_ceilings(fixture("peak_example.json"));
  const double peak = c.tflops(costs.precision) * 1e12, bw = c.copy_gbps * 1e9;

  EXPECT_GT(r->layers.size(), 10u);
  size_t compute = 0;
  for (const RooflineRow& row : r->layers) {
    SCOPED_TRACE(row.name);
    ASSERT_TRUE(entry.count(row.name));
    ASSERT_TRUE(innermost_ns.count(row.name));
    const double seconds = innermost_ns[row.name] / static_cast<double>(a.steady_count) * 1e-9;
    const LayerCostEntry& e = *entry[row.name];
    const bool is_compute = e.flops / e.bytes() >= peak / bw;
    const double expected = 100 * (is_compute ? e.flops / seconds / peak : e.bytes() / seconds / bw);
    EXPECT_EQ(row.point.bound, is_compute ? RoofBound::Compute : RoofBound::Memory);
    EXPECT_NEAR(row.point.pct_of_bound, expected, 0.02 * expected);
    compute += is_compute;
  }
  EXPECT_GT(compute, 0u);  // the GEMMs or convolutions
  testing::internal::CaptureStdout();
  print_roofline(*r, stdout);
  const std::string text = testing::internal::GetCapturedStdout();
  EXPECT_NE(text.find("ceilings  NVIDIA H200: bf16 GEMM 800.0 TFLOP/s, device copy 4000 GB/s, ridge 200.0 FLOP/byte"),
            std::string::npos)
      << text;
}

INSTANTIATE_TEST_SUITE_P(Nsys, RooflineCapture, testing::Values("gpt2_bf16", "resnet50_bf16"));

TEST(RooflineCli, AnalyzeWritesTheTableTheJsonAndThePlot) {
  AnalyzeOptions o;
  o.file = fixture("nsys/gpt2_bf16.sqlite");
  o.peak = fixture("peak_example.json");
  o.json = temp("analyze.json");
  o.roofline_svg = temp("analyze_roofline.svg");
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_analyze(o), 0);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("Roofline per layer (" + fixture("nsys/gpt2_bf16.layers.json") + ", gpt2 bf16 B=8 T=1024"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("wrote roofline SVG: " + o.roofline_svg), std::string::npos);
  const json report = json::parse(read_file(o.json));
  EXPECT_EQ(report["roofline"]["model"], "gpt2");
  EXPECT_FALSE(report["roofline"]["folded"].empty());
  EXPECT_FALSE(read_file(o.roofline_svg).empty());

  o.layers = temp("nowhere.layers.json");
  testing::internal::CaptureStdout();  // the report before the error
  EXPECT_EQ(error_of([&] { run_analyze(o); }),
            "cannot read the layer costs file " + o.layers + ": No such file or directory.");
  o.layers.clear();
  o.file = fixture("synthetic_trace.sqlite");  // no sidecar beside it
  EXPECT_EQ(error_of([&] { run_analyze(o); }),
            "--roofline-svg needs the layer costs: " + fixture("synthetic_trace.layers.json") +
                " is missing; pass --layers FILE, or capture with `laptime bench --trace` or --json.");
  testing::internal::GetCapturedStdout();
}

}  // namespace
}  // namespace laptime::trace
