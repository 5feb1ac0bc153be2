// The trace layer, host-only: the nsys SQLite reader, the analysis behind `laptime analyze`,
// and its Perfetto / SVG / JSON outputs, checked number by number against synthetic traces
// whose answers are known by construction (tests/fixtures/make_synthetic_trace.py writes
// them and the expected values; LAYOUT there is readable by hand).
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <tuple>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli/analyze_command.h"
#include "tests/support/trace_testing.h"
#include "trace/write/analysis_json.h"
#include "trace/capture/nsys_writer.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/write/perfetto.h"
#include "trace/analyses/analyze.h"
#include "trace/model/format.h"
#include "trace/write/timeline_svg.h"
#include "tests/support/nsys_csv.h"

namespace laptime::trace {
namespace {

using nlohmann::json;
using testing_support::error_of;
using testing_support::fixture;
using testing_support::read_file;
using testing_support::temp_path;

std::string temp(const std::string& name) { return temp_path("trace", name); }

json expected() { return json::parse(read_file(fixture("synthetic_trace.expected.json"))); }

using testing_support::report_text;

constexpr uint32_t kPid = 4242, kTid = 4243;
constexpr Ns kSteady1 = 1'500'000, kSteady2 = 1'705'000;  // iteration bases in the fixture

// --- Reading ---------------------------------------------------------------------------------

TEST(NsysSqlite, ReadsEveryTableOfTheSyntheticExport) {
  const Trace t = load_nsys_sqlite(fixture("synthetic_trace.sqlite"));
  EXPECT_EQ(t.source, "nsys 2024.6.2.225 (export schema 3.16.1)");
  EXPECT_EQ(t.kernels.size(), 27u);  // 9 per iteration
  EXPECT_EQ(t.memcpys.size(), 2u);   // warm-up and steady 1
  EXPECT_EQ(t.memsets.size(), 3u);
  EXPECT_EQ(t.api_calls.size(), 35u);  // 12 + 11 + 11 and the sync after the loop
  EXPECT_EQ(t.syncs.size(), 2u);
  EXPECT_EQ(t.nvtx.size(), 21u);  // 7 per iteration; the mark and the unclosed range are not ranges
  ASSERT_EQ(t.gpus.size(), 1u);
  EXPECT_EQ(t.gpus[0].name, "NVIDIA H200 (synthetic)");
  EXPECT_EQ(t.gpus[0].sm_count, 132);
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_EQ(t.notes[0], "1 NVTX range was still open when the capture ended and is ignored.");

  // globalTid decoding: the bits above 48 are masked off.
  EXPECT_EQ(t.api_calls[0].pid, kPid);
  EXPECT_EQ(t.api_calls[0].tid, kTid);
  EXPECT_EQ(t.kernels[0].pid, kPid);
  EXPECT_EQ(t.thread_name(kPid, kTid), "laptime main");
  EXPECT_EQ(t.thread_name(kPid, 1), "tid 1");

  // Names through StringIds, version suffixes dropped, driver calls told apart.
  const Kernel& k = t.kernels[0];  // warm-up: embedding, after the copy
  EXPECT_EQ(k.short_name, "embedding_kernel");
  EXPECT_NE(k.name.str().find("laptime::(anonymous namespace)::embedding_kernel<__nv_bfloat16>"), std::string::npos);
  EXPECT_EQ(k.start, 1'016'000);
  EXPECT_EQ(k.end, 1'026'000);
  EXPECT_EQ(k.stream, 7u);
  EXPECT_EQ(k.grid, (Dim3{48, 1, 1}));
  EXPECT_EQ(k.block, (Dim3{256, 1, 1}));
  const ApiCall* launch = t.api_call_of(k);
  ASSERT_NE(launch, nullptr);
  EXPECT_EQ(launch->name, "cudaLaunchKernel");
  EXPECT_EQ(launch->kind(), ApiKind::Runtime);
  const ApiCall* driver = t.api_call_of(t.kernels[2]);
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->name, "cuLaunchKernel");
  EXPECT_EQ(driver->kind(), ApiKind::Driver);

  // The pageable copy: kinds through ENUM_CUDA_MEM_KIND, async from its call's name.
  const Memcpy& m = t.memcpys[1];
  EXPECT_EQ(m.kind, CopyKind::HtoD);
  EXPECT_EQ(m.bytes, 4096u);
  EXPECT_EQ(m.src, MemKind::Pageable);
  EXPECT_EQ(m.dst, MemKind::Device);
  EXPECT_TRUE(m.pageable());
  EXPECT_EQ(m.host_sync, HostSync::Async);
  EXPECT_EQ(t.memsets[0].bytes, 1024u);
  EXPECT_EQ(t.syncs[0].type, SyncType::StreamSynchronize);
  EXPECT_EQ(t.api_call_of(t.syncs[0])->name, "cudaStreamSynchronize");

  // NVTX: registered (textId) and inline text, domain from its create event, payload,
  // category names, nesting.
  const NvtxEvent& fwd = t.nvtx[0];
  EXPECT_EQ(fwd.text, "forward");
  EXPECT_EQ(fwd.domain, "laptime");
  EXPECT_TRUE(fwd.has_payload);
  EXPECT_EQ(fwd.payload, 0u);
  EXPECT_EQ(fwd.category, 1u);
  EXPECT_EQ(t.category_name(fwd), "warmup");
  EXPECT_EQ(fwd.depth, 0);
  EXPECT_EQ(fwd.parent, -1);
  std::map<std::string, const NvtxEvent*> first;
  for (const NvtxEvent& r : t.nvtx) first.emplace(r.text, &r);
  ASSERT_EQ(first.size(), 7u);
  EXPECT_EQ(first["h.0.attn"]->depth, 2);
  EXPECT_EQ(t.nvtx[first["h.0.attn"]->parent].text, "h.0");
  EXPECT_EQ(first["lm_head"]->depth, 1);  // inline text, not a registered string
  EXPECT_EQ(t.nvtx[first["lm_head"]->parent].text, "forward");
  EXPECT_FALSE(first["lm_head"]->has_payload);
}

TEST(NsysSqlite, NormalizesApiNames) {
  EXPECT_EQ(normalize_api_name("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(normalize_api_name("cudaMemcpyAsync_ptsz_v7000"), "cudaMemcpyAsync");
  EXPECT_EQ(normalize_api_name("cudaStreamSynchronize_ptsz"), "cudaStreamSynchronize");
  EXPECT_EQ(normalize_api_name("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(normalize_api_name("cuLaunchKernelEx"), "cuLaunchKernelEx");
  EXPECT_EQ(normalize_api_name("my_v2_call"), "my_v2_call");  // "_v" must end in digits only
}

TEST(TraceModel, KernelNamesAsNsysShowsThem) {
  EXPECT_EQ(demangle("_Z11gelu_kernelIfEvPT_PKS0_l"), "void gelu_kernel<float>(float*, float const*, long)");
  EXPECT_EQ(demangle("nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNT"), "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNT");
  EXPECT_EQ(short_kernel_name("void gelu_kernel<float>(float*, float const*, long)"), "gelu_kernel");
  EXPECT_EQ(short_kernel_name("void laptime::(anonymous namespace)::layernorm_kernel<__nv_bfloat16>(__nv_bfloat16*, "
                              "__nv_bfloat16 const*, int)"),
            "layernorm_kernel");
  EXPECT_EQ(
      short_kernel_name("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>("
                        "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)"),
      "Kernel2");
  EXPECT_EQ(
      short_kernel_name("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::"
                        "TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#"
                        "2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::"
                        "GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()"
                        "() const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)"),
      "vectorized_elementwise_kernel");
  EXPECT_EQ(short_kernel_name("nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNT"),
            "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNT");
}

TEST(NsysSqlite, ReadsAnOlderExportWithoutOptionalTablesAndColumns) {
  // No globalPid on GPU records, no ENUM_* or metadata tables, no NVTX category or payload
  // columns: documented defaults apply and GPU work still joins its launch calls.
  const Trace t = load_nsys_sqlite(fixture("synthetic_old_schema.sqlite"));
  EXPECT_EQ(t.source, "nsys");
  ASSERT_EQ(t.kernels.size(), 27u);
  EXPECT_EQ(t.kernels[0].pid, kPid);
  ASSERT_NE(t.api_call_of(t.kernels[0]), nullptr);
  EXPECT_EQ(t.memcpys[0].src, MemKind::Pageable);
  EXPECT_TRUE(t.syncs.empty());
  EXPECT_EQ(t.nvtx[0].domain, "laptime");
  EXPECT_FALSE(t.nvtx[0].has_payload);
  EXPECT_TRUE(t.thread_names.empty());
}

TEST(NsysSqlite, SaysWhatIsWrongWithAFileInOneSentence) {
  EXPECT_EQ(error_of([] { load_nsys_sqlite(fixture("no_such_file.sqlite")); }),
            "cannot open " + fixture("no_such_file.sqlite") + ": no such file, or it is not readable.");
  EXPECT_EQ(error_of([] { load_nsys_sqlite(fixture("not_a_trace.txt")); }),
            fixture("not_a_trace.txt") +
                " is not an SQLite file: laptime analyze reads Nsight Systems' SQLite export (`nsys export --type "
                "sqlite REPORT.nsys-rep`) or a trace written by `laptime bench --trace`.");
  EXPECT_EQ(error_of([] { load_nsys_sqlite(fixture("foreign.sqlite")); }),
            fixture("foreign.sqlite") +
                " is an SQLite database but not an Nsight Systems export: it has none of "
                "the CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS tables.");
  const std::string rep = temp("base.nsys-rep");
  std::ofstream(rep) << "binary report";
  EXPECT_EQ(error_of([&] { load_nsys_sqlite(rep); }),
            rep + " is an Nsight Systems report; laptime reads its SQLite export: run `nsys export --type sqlite -o " +
                temp("base") + ".sqlite " + rep + "` and analyze " + temp("base") + ".sqlite.");
  const std::string empty = temp("empty.sqlite");
  std::ofstream(empty).close();
  EXPECT_EQ(error_of([&] { load_nsys_sqlite(empty); }), empty + " is empty: it is not a trace.");
}

// --- Kernel categories -----------------------------------------------------------------------

TEST(Classify, ByLibraryNameThenLayerThenGenericName) {
  struct Case {
    const char* short_name;
    const char* name;
    std::vector<std::string> ranges;
    Category expected;
  };
  const std::vector<Case> cases{
      // Libraries' own names win over the layer they were launched from.
      {"nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNT", "", {"h.3.attn", "h.3"}, Category::Gemm},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", "", {"h.3.mlp"}, Category::Gemm},
      {"Kernel2",
       "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(T1::Params)",
       {"lm_head"},
       Category::Gemm},
      {"splitKreduce_kernel", "", {"h.0.mlp"}, Category::Gemm},
      {"bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_"
       "schedP2x1x2x3_"
       "biasM_bN_tma_tmaOpt_clmp_swiGlu_dynBatch_sm100f",
       "",
       {"vllm::moe_forward"},
       Category::Gemm},  // a batched matmul with a fused SwiGLU, not elementwise
      {"sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc",
       "",
       {"layer2.1.conv2"},
       Category::Convolution},
      {"fmha_cutlassF_bf16_aligned_64x64_rf_sm80", "", {"h.0.attn"}, Category::Attention},
      {"flash_fwd_kernel", "", {}, Category::Attention},
      {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3", "", {}, Category::Attention},
      // Not a GEMM, inside an attention layer: attention (softmax, head split/merge).
      {"causal_softmax_kernel", "", {"h.0.attn", "h.0", "forward"}, Category::Attention},
      {"split_qkv_kernel", "", {"h.11.attn"}, Category::Attention},
      // Inside a norm layer: normalization, whatever its name.
      {"layernorm_kernel", "", {"h.0.ln_1"}, Category::Normalization},
      {"vectorized_elementwise_kernel", "", {"ln_f"}, Category::Normalization},
      {"bn_fw_inf_1C11_kernel_NCHW", "", {"layer1.0.bn1"}, Category::Normalization},
      // Generic names.
      {"vectorized_layer_norm_kernel", "", {}, Category::Normalization},
      {"gelu_kernel", "", {"h.0.mlp"}, Category::Elementwise},
      {"convert_kernel", "", {"forward"}, Category::Elementwise},  // "conv" of convert is not a convolution
      {"embedding_kernel", "", {"wte"}, Category::Elementwise},
      {"max_pool_forward_nhwc", "", {"maxpool"}, Category::ReductionPooling},
      {"cunn_SoftMaxForward", "", {"head"}, Category::ReductionPooling},
      // Inside a convolution or pooling layer, anything not a library GEMM takes its category;
      // unknown names elsewhere are "other".
      {"nhwcToNchwKernel", "", {"layer2.1.conv2"}, Category::Convolution},
      {"nhwcAddPaddingKernel", "", {"layer1.0.conv2", "layer1.0"}, Category::Convolution},  // not "add"
      {"nvjet_sm90_tst_256x128_64x4_1x2_h_bx_coopA_relubias_TNT", "", {"layer1.0.conv1"}, Category::Gemm},
      {"mystery_kernel", "", {"h.0.mlp"}, Category::Other},
  };
  for (const Case& c : cases) EXPECT_EQ(classify_kernel(c.short_name, c.name, c.ranges), c.expected) << c.short_name;
}

// --- The analysis against numbers known by construction ----------------------------------------

class Synthetic : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    trace_ = new Trace(load_nsys_sqlite(fixture("synthetic_trace.sqlite")));
    join_ = new TraceJoin(*trace_);
  }
  static void TearDownTestSuite() {
    delete join_;
    delete trace_;
  }
  static Analysis run(ReportOptions o = {}) { return analyze(*join_, o); }
  static Trace* trace_;
  static TraceJoin* join_;
};
Trace* Synthetic::trace_ = nullptr;
TraceJoin* Synthetic::join_ = nullptr;

TEST_F(Synthetic, IterationsAndWarmupFromTheBenchsMarks) {
  const Analysis a = run();
  ASSERT_EQ(a.iterations.size(), 3u);
  EXPECT_EQ(a.steady_count, 2u);
  EXPECT_EQ(a.warmup_rule, "marked by the bench with NVTX category `warmup`");
  const json e = expected();
  for (size_t i = 0; i < 3; ++i) {
    const Iteration& it = a.iterations[i];
    const json& x = e["iterations"][i];
    SCOPED_TRACE("iteration " + std::to_string(i));
    EXPECT_EQ(it.index, x["index"].get<uint64_t>());
    EXPECT_EQ(it.warmup, x["warmup"].get<bool>());
    EXPECT_EQ(it.duration(), x["host_ns"].get<Ns>());
    ASSERT_TRUE(it.has_gpu);
    EXPECT_EQ(it.gpu_start, x["gpu_start_ns"].get<Ns>());
    EXPECT_EQ(it.gpu_span(), x["gpu_ns"].get<Ns>());
    EXPECT_EQ(it.busy, x["busy_ns"].get<Ns>());
    EXPECT_EQ(it.kernels, x["kernels"].get<size_t>());
    if (!it.warmup) {
      EXPECT_EQ(it.gaps, static_cast<int>(x["gaps"].size()));
    }
  }
}

TEST_F(Synthetic, SteadyStateTimes) {
  const Analysis a = run();
  // Host: forward ranges of 200 and 230 us.
  EXPECT_EQ(a.host_ms.n, 2u);
  EXPECT_DOUBLE_EQ(a.host_ms.mean, 0.215);
  EXPECT_DOUBLE_EQ(a.host_ms.median, 0.215);
  EXPECT_DOUBLE_EQ(a.host_ms.min, 0.200);
  EXPECT_DOUBLE_EQ(a.host_ms.max, 0.230);
  // GPU: 5 us (the copy) to 193 us (the memset) = 188 us; 16 to 193 us = 177 us.
  EXPECT_DOUBLE_EQ(a.gpu_ms.mean, 0.1825);
  EXPECT_DOUBLE_EQ(a.gpu_ms.min, 0.177);
  EXPECT_DOUBLE_EQ(a.gpu_ms.max, 0.188);
  // Start to next start: (1705 + 16) - (1500 + 5) us.
  EXPECT_EQ(a.period_ms.n, 1u);
  EXPECT_DOUBLE_EQ(a.period_ms.median, 0.216);
  // Busy: 124 of 188 us, 120 of 177 us.
  EXPECT_DOUBLE_EQ(a.span_fill_pct.min, 100.0 * 124 / 188);
  EXPECT_DOUBLE_EQ(a.span_fill_pct.max, 100.0 * 120 / 177);
  EXPECT_EQ(a.idle_in_iterations, (188 - 124 + 177 - 120) * 1000);
  // Between iterations the GPU idles from 1693 to 1721 us; the host is outside both
  // forward ranges from 1700 to 1705 us.
  EXPECT_EQ(a.between_iterations, 28'000);
  EXPECT_EQ(a.input_wait, 5'000);
  EXPECT_EQ(a.htod_time, 4'000);
  EXPECT_EQ(a.svg_iteration, 1);  // the upper median of 177 and 188 us
}

TEST_F(Synthetic, GapsWithCauseAndWhatTheCpuWasDoing) {
  const Analysis a = run();
  const json e = expected();
  using Row = std::tuple<uint64_t, Ns, Ns, std::string, std::string, std::string, std::string, std::string>;
  std::multiset<Row> want, got;
  Ns host_wait = 0;
  for (const json& it : e["iterations"]) {
    if (it["warmup"].get<bool>()) continue;
    for (const json& g : it["gaps"])
      want.insert({it["index"].get<uint64_t>(), g["start"].get<Ns>(), g["end"].get<Ns>(), g["cause"].get<std::string>(),
                   g["before"].get<std::string>(), g["after"].get<std::string>(), g["cpu_api"].get<std::string>(),
                   g["cpu_range"].get<std::string>()});
  }
  for (const Gap& g : a.gaps) {
    got.insert({g.iteration, g.start, g.end, gap_cause_name(g.cause), g.before, g.after, g.cpu_api, g.cpu_range});
    host_wait += g.cause == GapCause::HostWait ? g.duration() : 0;
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(a.gaps.size(), 11u);
  EXPECT_EQ(host_wait, (7 + 8 + 10 + 14 + 14 + 8 + 10 + 14 + 14) * 1000);
  // All idle waiting for the host, gaps or not: plus the 1 us before layernorm in each
  // iteration (its launch returned at 27 us, 1 us after the GPU ran dry at 26 us).
  EXPECT_EQ(a.host_wait_idle, host_wait + 2'000);
  EXPECT_EQ(a.iterations[1].host_wait, e["iterations"][1]["host_wait_ns"].get<Ns>());
  EXPECT_EQ(a.iterations[2].host_wait, e["iterations"][2]["host_wait_ns"].get<Ns>());
  // Largest first; the one "other" gap: residual_add was launched at 108 us, the GPU went
  // idle at 130 us, and no CUDA call was running meanwhile.
  EXPECT_EQ(a.gaps.front().duration(), 14'000);
  const auto other =
      std::find_if(a.gaps.begin(), a.gaps.end(), [](const Gap& g) { return g.cause == GapCause::Other; });
  ASSERT_NE(other, a.gaps.end());
  EXPECT_EQ(other->start, kSteady1 + 130'000);
  EXPECT_EQ(other->after, "residual_add_kernel");
  EXPECT_EQ(other->launch, "cudaLaunchKernel");
  EXPECT_EQ(other->launch_start, kSteady1 + 108'000);
  EXPECT_EQ(other->cpu_api, "");
  EXPECT_EQ(other->cpu_in_cuda, 0);
  EXPECT_EQ(other->cpu_range, "h.0.mlp");
  // Time inside CUDA calls, nested or overlapping ones counted once: before merge_heads in
  // iteration 2 the GPU idles 75..85 us while the host is in cudaStreamSynchronize (to
  // 75.5 us) and cudaLaunchKernel (80..83 us).
  const auto merge2 = std::find_if(a.gaps.begin(), a.gaps.end(),
                                   [](const Gap& g) { return g.iteration == 2 && g.after == "merge_heads_kernel"; });
  ASSERT_NE(merge2, a.gaps.end());
  EXPECT_EQ(merge2->cpu_in_cuda, 3'500);
  EXPECT_EQ(merge2->cpu_api, "cudaLaunchKernel");
}

TEST_F(Synthetic, GapThresholdIsAnOption) {
  ReportOptions o;
  o.gap_us = 9;  // drops the 7 and 8 us gaps
  EXPECT_EQ(run(o).gaps.size(), 8u);
  o.gap_us = 14;  // "longer than": 14 us gaps are not
  EXPECT_EQ(run(o).gaps.size(), 0u);
}

TEST_F(Synthetic, KernelMixByCategoryKernelAndLayer) {
  const Analysis a = run();
  const json e = expected();
  EXPECT_EQ(a.gpu_time, e["gpu_time_ns"].get<Ns>());
  EXPECT_EQ(a.gpu_time, 244'000);
  std::map<std::string, Ns> cats;
  for (const CategoryRow& c : a.categories)
    if (c.time) cats[category_name(c.category)] = c.time;
  EXPECT_EQ(cats, (e["category_ns"].get<std::map<std::string, Ns>>()));
  EXPECT_EQ(a.categories.front().category, Category::Gemm);
  EXPECT_EQ(a.categories.front().count, 6u);

  std::map<std::string, Ns> ranges;
  for (const RangeRow& r : a.ranges) ranges[r.range] = r.time;
  EXPECT_EQ(ranges, (e["range_ns"].get<std::map<std::string, Ns>>()));
  ASSERT_FALSE(a.range_patterns.empty());
  EXPECT_EQ(a.range_patterns.front().range, "h.*.attn");
  EXPECT_EQ(a.range_patterns.front().time, 70'000);
  EXPECT_EQ(a.range_patterns.front().time_by_category[static_cast<int>(Category::Gemm)], 40'000);
  EXPECT_EQ(a.range_patterns.front().time_by_category[static_cast<int>(Category::Attention)], 30'000);

  ASSERT_FALSE(a.kernels.empty());
  EXPECT_EQ(a.kernels.front().name, "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn");
  EXPECT_EQ(a.kernels.front().count, 2u);
  EXPECT_EQ(a.kernels.front().time, 60'000);
  EXPECT_EQ(a.kernels.front().min, 30'000);
  EXPECT_EQ(a.kernels.front().max, 30'000);
}

TEST_F(Synthetic, FindsTheSyncAndThePageableCopyInsideTheLoop) {
  const Analysis a = run();
  ASSERT_TRUE(a.has_api_trace);
  ASSERT_EQ(a.syncs.size(), 2u);
  // Costliest first: the 23.5 us stream synchronize of iteration 2, then iteration 1's 10 us copy.
  EXPECT_EQ(a.syncs[1].kind, SyncKind::PageableCopy);
  EXPECT_EQ(a.syncs[1].api, "cudaMemcpyAsync");
  EXPECT_EQ(a.syncs[1].iteration, 1);
  EXPECT_EQ(a.syncs[1].range, "wte");
  EXPECT_EQ(a.syncs[1].duration, 10'000);
  EXPECT_EQ(a.syncs[1].detail, "HtoD 4.0 KiB, pageable -> device");
  EXPECT_EQ(a.syncs[0].kind, SyncKind::StreamSync);
  EXPECT_EQ(a.syncs[0].api, "cudaStreamSynchronize");
  EXPECT_EQ(a.syncs[0].iteration, 2);
  EXPECT_EQ(a.syncs[0].range, "h.0.attn");
  EXPECT_EQ(a.syncs[0].duration, 23'500);
  ASSERT_EQ(a.sync_summary.size(), 2u);
  EXPECT_EQ(a.sync_summary[0].kind, SyncKind::StreamSync);
  EXPECT_EQ(a.sync_summary[0].count, 1u);
  EXPECT_EQ(a.sync_summary[0].blocked, 23'500);
  EXPECT_EQ(a.sync_summary[0].ranges, std::vector<std::string>{"h.0.attn"});
  // Outside the steady state, not counted: the warm-up's copy and cudaMalloc, the sync after the loop.
  ASSERT_EQ(a.syncs_elsewhere.size(), 3u);
  for (size_t i = 1; i < a.syncs_elsewhere.size(); ++i)
    EXPECT_GE(a.syncs_elsewhere[i - 1].duration, a.syncs_elsewhere[i].duration) << "costliest first";
  auto elsewhere = [&](const char* api, int64_t iteration) -> const SyncCall* {
    for (const SyncCall& s : a.syncs_elsewhere)
      if (s.api == api && s.iteration == iteration) return &s;
    return nullptr;
  };
  ASSERT_NE(elsewhere("cudaMemcpyAsync", 0), nullptr);
  EXPECT_TRUE(elsewhere("cudaMemcpyAsync", 0)->warmup);
  ASSERT_NE(elsewhere("cudaMalloc", 0), nullptr);
  EXPECT_EQ(elsewhere("cudaMalloc", 0)->kind, SyncKind::Allocation);
  ASSERT_NE(elsewhere("cudaStreamSynchronize", -1), nullptr);
  EXPECT_EQ(elsewhere("cudaStreamSynchronize", -1)->range, "(no range)");
}

TEST_F(Synthetic, VerdictIsLaunchBoundWithSyncs) {
  const Analysis a = run();
  EXPECT_EQ(a.bound, Bound::LaunchBound);
  EXPECT_NE(a.verdict.find("Launch-bound: the GPU is busy 62.1% of the lap"), std::string::npos) << a.verdict;
  // Host-wait gaps by the layer the host was in: 8 + 10 + 14 us per iteration in h.0.attn, 64 us
  // of the idle time, inside the spans (121 us) and between the iterations.
  ASSERT_EQ(a.figures.idle_ns, a.idle_in_iterations + a.between_iterations);
  const std::string share = detail::format("(%.0f%% of the idle time", 100.0 * 64'000 / double(a.figures.idle_ns));
  EXPECT_EQ(share, "(43% of the idle time");
  EXPECT_NE(a.verdict.find("The largest waits sit in h.*.attn " + share + "; the host was in its own code"),
            std::string::npos)
      << a.verdict;
  // Each in one of the two steady iterations: said where, not as a rate, and both places named
  // (the copy sits in wte, the sync in h.0.attn), each counted in all.
  EXPECT_NE(a.verdict.find("The loop synchronizes: 1 cudaMemcpyAsync in iteration 1, 1 cudaStreamSynchronize in "
                           "iteration 2 (in wte: 1 call, h.0.attn: 1)."),
            std::string::npos)
      << a.verdict;
}

TEST_F(Synthetic, DriverCallsInsideARuntimeCallAreNotCountedTwice) {
  // CUPTI's tracer records the cuStreamSynchronize that cudaStreamSynchronize makes.
  Trace t = *trace_;
  ApiCall inner;
  inner.name = t.intern("cuStreamSynchronize");
  inner.pid = kPid;
  inner.tid = kTid;
  inner.start = kSteady2 + 52'100;
  inner.end = kSteady2 + 75'400;
  inner.correlation = 9998;
  t.api_calls.push_back(inner);
  t.finalize();
  const TraceJoin j(t);
  const Analysis a = analyze(j, {});
  ASSERT_EQ(a.syncs.size(), 2u);
  EXPECT_EQ(a.syncs[0].api, "cudaStreamSynchronize");  // the costliest first, and counted once
  EXPECT_EQ(a.syncs[1].api, "cudaMemcpyAsync");
}

TEST_F(Synthetic, HostBusyBetweenIterationsIsInputBound) {
  // Iteration 2 (and everything after) 1 ms later: the host spends it outside the forward
  // ranges, as a loop loading its next batch does, and the GPU idles.
  Trace t = *trace_;
  constexpr Ns kLate = 1'000'000;
  auto shift = [](auto& list) {
    for (auto& x : list)
      if (x.start >= kSteady2) {
        x.start += kLate;
        x.end += kLate;
      }
  };
  shift(t.kernels);
  shift(t.memcpys);
  shift(t.memsets);
  shift(t.api_calls);
  shift(t.syncs);
  shift(t.nvtx);
  t.finalize();
  const TraceJoin j(t);
  const Analysis a = analyze(j, {});
  EXPECT_EQ(a.between_iterations, 28'000 + kLate);
  EXPECT_EQ(a.input_wait, 5'000 + kLate);
  EXPECT_EQ(a.bound, Bound::InputBound);
  EXPECT_EQ(a.verdict.rfind("Input-bound: the GPU is busy 17.5% of the lap over the steady iterations; 72% of the "
                            "lap",
                            0),
            0u)
      << a.verdict;
}

TEST_F(Synthetic, NoSyncsIsSaidPlainly) {
  Trace t = *trace_;
  t.api_calls.erase(std::remove_if(t.api_calls.begin(), t.api_calls.end(),
                                   [](const ApiCall& c) {
                                     return c.name == "cudaStreamSynchronize" || c.name == "cudaMemcpyAsync" ||
                                            c.name == "cudaMalloc";
                                   }),
                    t.api_calls.end());
  t.syncs.clear();
  t.finalize();
  const TraceJoin j(t);
  const Analysis a = analyze(j, {});
  EXPECT_TRUE(a.syncs.empty());
  EXPECT_TRUE(a.syncs_elsewhere.empty());
  EXPECT_NE(a.verdict.find("No synchronization, blocking copy or allocation inside the loop."), std::string::npos);
  EXPECT_NE(report_text(a).find("4. Synchronization inside steady iterations\n  none:"), std::string::npos);
}

// The synthetic trace with one more cudaGraphLaunch on the main thread, from `start` to `end`,
// whose kernels the trace lacks (no node tracing), analyzed.
Analysis analyze_with_graph_launch(Trace t, Ns start, Ns end) {
  ApiCall graph;
  graph.name = t.intern("cudaGraphLaunch");
  graph.pid = kPid;
  graph.tid = kTid;
  graph.start = start;
  graph.end = end;
  graph.correlation = 9999;
  t.api_calls.push_back(graph);
  t.finalize();
  const TraceJoin j(t);
  return analyze(j, {});
}

TEST_F(Synthetic, GraphLaunchWithoutKernelsAsksForNodeTracing) {
  const Analysis a = analyze_with_graph_launch(*trace_, kSteady1 + 195'000, kSteady1 + 196'000);
  EXPECT_NE(std::find(a.notes.begin(), a.notes.end(),
                      "Some CUDA Graph launches have no kernels in the trace: capture with `nsys profile "
                      "--cuda-graph-trace=node` to see the kernels inside the graphs."),
            a.notes.end());
}

// A graph replayed outside the loop (cuDNN times candidates in graphs while the model is
// built) is no reason to ask for node tracing.
TEST_F(Synthetic, GraphLaunchOutsideTheIterationsIsNoConcern) {
  Ns first = trace_->api_calls.front().start;
  for (const NvtxEvent& r : trace_->nvtx) first = std::min(first, r.start);
  // before every range and call of the capture
  const Analysis a = analyze_with_graph_launch(*trace_, first - 2'000, first - 1'000);
  for (const std::string& n : a.notes) EXPECT_EQ(n.find("CUDA Graph launches"), std::string::npos) << n;
}

TEST_F(Synthetic, SkipWarmupOverridesTheMarks) {
  ReportOptions o;
  o.skip_warmup = 0;
  Analysis a = run(o);
  EXPECT_EQ(a.steady_rule, "all after warm-up");  // the warm-up's long host range is not the host running ahead
  EXPECT_EQ(a.steady_count, 3u);
  EXPECT_EQ(a.warmup_rule, "the first 0 (--skip-warmup)");
  EXPECT_EQ(a.syncs.size(), 4u);  // the warm-up's copy and allocation now count
  o.skip_warmup = 2;
  a = run(o);
  EXPECT_EQ(a.steady_count, 1u);
  EXPECT_DOUBLE_EQ(a.host_ms.mean, 0.230);
  EXPECT_EQ(a.period_ms.n, 0u);
  o.skip_warmup = 3;
  EXPECT_EQ(error_of([&] { run(o); }), "the trace has 3 `forward` ranges and --skip-warmup 3 leaves none to measure.");
}

TEST_F(Synthetic, UnknownRangeNameListsTheRangesThereAre) {
  ReportOptions o;
  o.range = "step";
  EXPECT_EQ(error_of([&] { run(o); }),
            "the trace has no NVTX range matching `step`; its most frequent ranges are `forward` (3), `h.0` (3), "
            "`h.0.attn` (3), `h.0.ln_1` (3), `h.0.mlp` (3), `lm_head` (3): name the iteration range with --range "
            "NAME, a glob ('Step *') or re:REGEX.");
  o.range = "h.0";  // any range can be the iteration
  const Analysis a = run(o);
  EXPECT_EQ(a.iterations.size(), 3u);
  EXPECT_EQ(a.warmup_rule, "the first 1 (not marked in the trace; --skip-warmup K to change)");
}

TEST_F(Synthetic, JsonCarriesTheSameNumbers) {
  const Analysis a = run();
  const json j = to_json(a);
  EXPECT_EQ(j["schema"], "laptime.analyze/1");
  EXPECT_EQ(j["steady_iterations"], 2);
  EXPECT_DOUBLE_EQ(j["time_ms"]["gpu"]["mean"].get<double>(), 0.1825);
  EXPECT_DOUBLE_EQ(j["time_ms"]["host"]["median"].get<double>(), 0.215);
  EXPECT_EQ(j["iterations"][1]["busy_ns"], 124'000);
  EXPECT_EQ(j["utilization"]["gap_count"], 11);
  EXPECT_EQ(j["utilization"]["host_wait_gap_ns"], a.host_wait_idle - 2'000);
  EXPECT_EQ(j["utilization"]["host_wait_idle_ns"], a.host_wait_idle);
  EXPECT_EQ(j["utilization"]["largest_gaps"].size(), 11u);
  EXPECT_EQ(j["kernel_mix"]["gpu_time_ns"], 244'000);
  EXPECT_EQ(j["kernel_mix"]["categories"][0]["category"], "GEMM");
  EXPECT_EQ(j["kernel_mix"]["categories"][0]["time_ns"], 140'000);
  EXPECT_EQ(j["synchronization"]["summary"][0]["kind"], "stream synchronize");
  EXPECT_DOUBLE_EQ(j["synchronization"]["summary"][0]["per_iteration"].get<double>(), 0.5);
  EXPECT_EQ(j["synchronization"]["outside_steady"].size(), 3u);
  EXPECT_EQ(j["verdict"]["bound"], "launch-bound");
}

TEST_F(Synthetic, TextReportAnswersTheFourQuestions) {
  const std::string text = report_text(run());
  for (const char* want :
       {"iterations  3 `forward` ranges: 1 warm-up, 2 steady",
        "warm-up: marked by the bench with NVTX category `warmup`",
        "1. Steady-state time per iteration (ms, 2 iterations)",
        "GPU: range projected      0.182   0.182  0.177  0.188",  // 0.1825 is 0.18249999... in binary
        "2. GPU utilization inside steady iterations", "3. Kernel mix", "GEMM             0.070  57.4%       3.0",
        "gpu         NVIDIA H200 (synthetic), 132 SMs", "4. Synchronization inside steady iterations",
        "cudaStreamSynchronize", "Verdict: launch-bound"})
    EXPECT_NE(text.find(want), std::string::npos) << "missing: " << want << "\n" << text;
}

TEST_F(Synthetic, OldExportGivesTheSameAnswers) {
  // Without category marks the first iteration is taken as warm-up: the same split here.
  const Trace t = load_nsys_sqlite(fixture("synthetic_old_schema.sqlite"));
  const TraceJoin j(t);
  const Analysis old = analyze(j, {}), cur = run();
  EXPECT_EQ(old.warmup_rule, "the first 1 (not marked in the trace; --skip-warmup K to change)");
  EXPECT_EQ(old.steady_count, cur.steady_count);
  EXPECT_DOUBLE_EQ(old.gpu_ms.mean, cur.gpu_ms.mean);
  EXPECT_EQ(old.gpu_time, cur.gpu_time);
  EXPECT_EQ(old.gaps.size(), cur.gaps.size());
  EXPECT_EQ(old.syncs.size(), cur.syncs.size());  // the sync by name, the pageable copy by srcKind 0
}

TEST_F(Synthetic, RoundTripsThroughLaptimesOwnTraceFormat) {
  const std::string path = temp("roundtrip.sqlite");
  save_nsys_sqlite(*trace_, path);
  const Trace back = load_nsys_sqlite(path);
  EXPECT_EQ(back.source, "laptime " + trace_->source);
  EXPECT_EQ(back.kernels.size(), trace_->kernels.size());
  EXPECT_EQ(back.memcpys.size(), trace_->memcpys.size());
  EXPECT_EQ(back.memsets.size(), trace_->memsets.size());
  EXPECT_EQ(back.api_calls.size(), trace_->api_calls.size());
  EXPECT_EQ(back.syncs.size(), trace_->syncs.size());
  ASSERT_EQ(back.nvtx.size(), trace_->nvtx.size());
  for (size_t i = 0; i < back.nvtx.size(); ++i) {
    EXPECT_EQ(back.nvtx[i].text, trace_->nvtx[i].text);
    EXPECT_EQ(back.nvtx[i].domain, trace_->nvtx[i].domain);
    EXPECT_EQ(back.nvtx[i].payload, trace_->nvtx[i].payload);
    EXPECT_EQ(back.nvtx[i].parent, trace_->nvtx[i].parent);
  }
  EXPECT_EQ(back.category_names, trace_->category_names);
  EXPECT_EQ(back.thread_names, trace_->thread_names);
  EXPECT_EQ(back.kernels[5].name, trace_->kernels[5].name);
  EXPECT_EQ(back.memcpys[1].src, MemKind::Pageable);
  const TraceJoin j(back);
  const Analysis a = analyze(j, {}), b = run();
  EXPECT_EQ(to_json(a)["utilization"], to_json(b)["utilization"]);
  EXPECT_EQ(to_json(a)["kernel_mix"], to_json(b)["kernel_mix"]);
  EXPECT_EQ(to_json(a)["synchronization"], to_json(b)["synchronization"]);
}

// --- Traces that cannot answer everything ---------------------------------------------------------

TEST(Analyze, TraceWithoutNvtxSaysHowToCaptureOne) {
  const Trace t = load_nsys_sqlite(fixture("synthetic_no_nvtx.sqlite"));
  EXPECT_EQ(t.kernels.size(), 27u);
  const TraceJoin j(t);
  EXPECT_EQ(error_of([&] { analyze(j, {}); }),
            "the trace has no NVTX ranges, so its iterations cannot be found: capture with `nsys profile "
            "--trace=cuda,nvtx` and run `laptime bench` with --nvtx iter or finer (or wrap each iteration in an NVTX "
            "range, e.g. torch.cuda.nvtx.range_push(f\"Forward Pass Iter {i}\")).");
}

TEST(Analyze, SingleUnmarkedIterationIsMeasuredWithANote) {
  const Trace t = load_nsys_sqlite(fixture("synthetic_one_iteration.sqlite"));
  const TraceJoin j(t);
  const Analysis a = analyze(j, {});
  ASSERT_EQ(a.iterations.size(), 1u);
  EXPECT_EQ(a.steady_count, 1u);
  EXPECT_EQ(a.warmup_rule, "none");
  EXPECT_NE(std::find(a.notes.begin(), a.notes.end(),
                      "The trace has a single `forward` iteration, not marked warm-up: it is measured, warm-up costs "
                      "and all."),
            a.notes.end());
  const json e = expected()["iterations"][1];  // the same layout as steady iteration 1
  EXPECT_EQ(a.iterations[0].gpu_span(), e["gpu_ns"].get<Ns>());
  EXPECT_EQ(a.iterations[0].busy, e["busy_ns"].get<Ns>());
  EXPECT_EQ(a.period_ms.n, 0u);  // no next iteration
  EXPECT_EQ(a.gaps.size(), 6u);
  EXPECT_EQ(a.syncs.size(), 1u);  // the pageable copy
  EXPECT_FALSE(report_text(a).empty());
}

TEST(Analyze, CaptureWithoutApiTraceSaysSyncsCannotBeSeen) {
  Trace t = load_nsys_sqlite(fixture("synthetic_trace.sqlite"));
  t.api_calls.clear();
  t.finalize();
  const TraceJoin j(t);
  const Analysis a = analyze(j, {});
  EXPECT_EQ(a.bound, Bound::NoGpuWork);
  EXPECT_FALSE(a.has_api_trace);
  EXPECT_NE(a.verdict.find("Synchronizations cannot be seen"), std::string::npos);
  EXPECT_NE(report_text(a).find("unknown: the capture has no CUDA API calls"), std::string::npos);
  EXPECT_EQ(error_of([&] { write_svg(j, a, temp("none.svg")); }),
            "no iteration with GPU work to draw in the SVG timeline.");
}

// --- Outputs --------------------------------------------------------------------------------------

TEST_F(Synthetic, PerfettoHasLanesSlicesAndFlows) {
  const std::string path = temp("trace.json");
  write_perfetto(*join_, path);
  const json j = json::parse(read_file(path));
  size_t slices = 0, starts = 0, finishes = 0;
  std::set<std::string> thread_names;
  for (const json& e : j["traceEvents"]) {
    const std::string ph = e["ph"];
    slices += ph == "X";
    starts += ph == "s";
    finishes += ph == "f";
    if (ph == "M" && e["name"] == "thread_name") thread_names.insert(e["args"]["name"].get<std::string>());
  }
  const Trace& t = *trace_;
  EXPECT_EQ(slices, t.kernels.size() + t.memcpys.size() + t.memsets.size() + t.api_calls.size() + t.nvtx.size());
  EXPECT_EQ(starts, t.kernels.size() + t.memcpys.size() + t.memsets.size());  // every op has its launch
  EXPECT_EQ(finishes, starts);
  EXPECT_EQ(thread_names, (std::set<std::string>{"laptime main", "stream 7"}));
  // A kernel slice: microseconds, on the GPU process's stream lane, with its category.
  for (const json& e : j["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "causal_softmax_kernel") {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1065.0);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 10.0);
      EXPECT_EQ(e["tid"], 7);
      EXPECT_EQ(e["args"]["category"], "attention");
      EXPECT_EQ(e["args"]["nvtx"], "h.0.attn");
      break;
    }
  }
}

TEST_F(Synthetic, SvgDrawsTheMedianIteration) {
  const Analysis a = run();
  const std::string path = temp("timeline.svg");
  write_svg(*join_, a, path);
  const std::string svg = read_file(path);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(
      svg.find("`forward` iteration 1: host 0.200 ms, GPU 0.188 ms, fill 66.0% of its GPU span, 6 gaps &gt; 5 us"),
      std::string::npos);
  EXPECT_NE(svg.find("<title>h.0.attn (60.0 us)</title>"), std::string::npos);
  EXPECT_NE(svg.find(category_color(Category::Gemm)), std::string::npos);
  EXPECT_NE(svg.find("<title>idle 10.0 us (other), before residual_add_kernel; CPU in host code / h.0.mlp</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("<title>cudaMemcpyAsync (10.0 us)</title><rect"), std::string::npos);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
}

// --- The command line -------------------------------------------------------------------------------

TEST(AnalyzeCli, ParsesEveryOption) {
  CLI::App app;
  AnalyzeOptions o;
  CLI::App* sub = add_analyze_subcommand(app, o);
  app.parse(std::vector<std::string>{"out.svg", "--svg", "t.json", "--perfetto", "r.json", "--json", "8", "--top",
                                     "2.5", "--gap-us", "2", "--skip-warmup", "step", "--range", "base.sqlite",
                                     "analyze"});  // CLI11 parses a reversed vector
  EXPECT_TRUE(sub->parsed());
  EXPECT_EQ(o.file, "base.sqlite");
  EXPECT_EQ(o.report.range, "step");
  ASSERT_TRUE(o.report.skip_warmup.has_value());
  EXPECT_EQ(*o.report.skip_warmup, 2);
  EXPECT_DOUBLE_EQ(o.report.gap_us, 2.5);
  EXPECT_EQ(o.report.top, 8);
  EXPECT_EQ(o.json, "r.json");
  EXPECT_EQ(o.perfetto, "t.json");
  EXPECT_EQ(o.svg, "out.svg");
}

TEST(AnalyzeCli, DefaultsAndBadValues) {
  {
    CLI::App app;
    AnalyzeOptions o;
    add_analyze_subcommand(app, o);
    app.parse(std::vector<std::string>{"base.sqlite", "analyze"});
    EXPECT_EQ(o.report.range, "");  // found by the rules in trace/analyses/iterations.h
    EXPECT_FALSE(o.report.skip_warmup.has_value());
    EXPECT_DOUBLE_EQ(o.report.gap_us, 5.0);
  }
  {
    CLI::App app;
    AnalyzeOptions o;
    add_analyze_subcommand(app, o);
    EXPECT_THROW(app.parse(std::vector<std::string>{"-1", "--skip-warmup", "base.sqlite", "analyze"}), CLI::ParseError);
  }
}

TEST(AnalyzeCli, RunWritesEveryOutputAndReportsBadFilesAsTraceErrors) {
  AnalyzeOptions o;
  o.file = fixture("synthetic_trace.sqlite");
  o.json = temp("run.json");
  o.perfetto = temp("run.perfetto.json");
  o.svg = temp("run.svg");
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_analyze(o), 0);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("Verdict: launch-bound"), std::string::npos);
  EXPECT_NE(out.find("wrote SVG timeline: " + o.svg), std::string::npos);
  EXPECT_EQ(json::parse(read_file(o.json))["verdict"]["bound"], "launch-bound");
  EXPECT_FALSE(json::parse(read_file(o.perfetto))["traceEvents"].empty());
  EXPECT_FALSE(read_file(o.svg).empty());

  o.file = fixture("not_a_trace.txt");
  EXPECT_THROW(run_analyze(o), TraceError);
}

// --- Real captures ----------------------------------------------------------------------------------
// laptime under nsys 2025.3 on an H200 (tests/fixtures/nsys): GPT-2 and ResNet-50 in bf16,
// the same GPT-2 with each of three pitfalls planted in the loop, one run with --nvtx none, and
// two GPT-2 processes in one capture (two_gpt2: the reader over several processes). Beside each
// export, `nsys stats` CSVs: the reader must agree with nsys's own sums.

std::string capture(const std::string& name) { return fixture("nsys/" + name); }

class RealCapture : public testing::TestWithParam<std::string> {};

TEST_P(RealCapture, ReaderAgreesWithNsysStats) {
  const std::string name = GetParam();
  const Trace t = load_nsys_sqlite(capture(name + ".sqlite"));
  EXPECT_EQ(t.source, "nsys 2025.3.2.0 (export schema 3.20.3)");
  ASSERT_EQ(t.gpus.size(), 1u);
  EXPECT_EQ(t.gpus[0].name, "NVIDIA H200");

  // cuda_gpu_kern_sum: instances and total time per demangled name.
  std::map<std::string, std::pair<size_t, Ns>> kernels;
  for (const Kernel& k : t.kernels) {
    ++kernels[k.name].first;
    kernels[k.name].second += k.end - k.start;
  }
  const auto kern_sum = laptime::nsys_csv::table(capture(name + "_cuda_gpu_kern_sum.csv"));
  ASSERT_FALSE(kern_sum.empty());
  EXPECT_EQ(kernels.size(), kern_sum.size());
  for (const auto& row : kern_sum) {
    SCOPED_TRACE(row.at("Name"));
    EXPECT_EQ(kernels[row.at("Name")].first, std::stoul(row.at("Instances")));
    EXPECT_EQ(kernels[row.at("Name")].second, std::stoll(row.at("Total Time (ns)")));
  }

  // cuda_api_sum: calls and total time per API, names normalized on both sides (nsys
  // keeps some version suffixes, cudaOccupancyMaxActiveClusters_v11070).
  std::map<std::string, std::pair<size_t, Ns>> apis, nsys_apis;
  for (const ApiCall& c : t.api_calls) {
    ++apis[c.name].first;
    apis[c.name].second += c.end - c.start;
  }
  for (const auto& row : laptime::nsys_csv::table(capture(name + "_cuda_api_sum.csv"))) {
    auto& [calls, total] = nsys_apis[normalize_api_name(row.at("Name"))];
    calls += std::stoul(row.at("Num Calls"));
    total += std::stoll(row.at("Total Time (ns)"));
  }
  EXPECT_EQ(apis, nsys_apis);

  // nvtx_sum: instances and total time per "domain:range".
  std::map<std::string, std::pair<size_t, Ns>> ranges, nsys_ranges;
  for (const NvtxEvent& r : t.nvtx) {
    const std::string key = (r.domain.empty() ? "" : r.domain + ":") + r.text;
    ++ranges[key].first;
    ranges[key].second += r.end - r.start;
  }
  for (const auto& row : laptime::nsys_csv::table(capture(name + "_nvtx_sum.csv"))) {
    EXPECT_EQ(row.at("Style"), "PushPop");
    nsys_ranges[row.at("Range")] = {std::stoul(row.at("Instances")), std::stoll(row.at("Total Time (ns)"))};
  }
  EXPECT_EQ(ranges, nsys_ranges);
}

INSTANTIATE_TEST_SUITE_P(Nsys, RealCapture,
                         testing::Values("gpt2_bf16", "gpt2_nvtx_none", "pitfall_sync", "pitfall_pageable",
                                         "pitfall_alloc", "resnet50_bf16", "two_gpt2"));

// What analyze answers on them.
Analysis analyze_capture(const std::string& name, const Trace** keep = nullptr) {
  static std::map<std::string, std::unique_ptr<Trace>> traces;  // TraceJoin refers to its trace
  auto& t = traces[name];
  if (!t) t = std::make_unique<Trace>(load_nsys_sqlite(capture(name + ".sqlite")));
  if (keep) *keep = t.get();
  const TraceJoin j(*t);
  return analyze(j, {});
}

Ns category_time(const Analysis& a, Category c) {
  for (const CategoryRow& r : a.categories)
    if (r.category == c) return r.time;
  return 0;
}

TEST(RealCaptures, Gpt2IsGpuBoundWithNoSyncInTheLoop) {
  const Trace* t = nullptr;
  const Analysis a = analyze_capture("gpt2_bf16", &t);
  // The bench's 2 warm-up and 5 timed iterations, told apart by their NVTX category.
  ASSERT_EQ(a.iterations.size(), 7u);
  EXPECT_EQ(a.steady_count, 5u);
  EXPECT_EQ(a.warmup_rule, "marked by the bench with NVTX category `warmup`");
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(a.iterations[i].index, i);  // the payload
    EXPECT_EQ(a.iterations[i].warmup, i < 2);
  }
  // The iteration ranges are nsys's `laptime:forward` rows, to the nanosecond.
  Ns host_total = 0;
  for (const Iteration& it : a.iterations) host_total += it.duration();
  EXPECT_EQ(host_total, 22'563'311);
  // The GPU side: busy, no gap worth the name, every kernel in a named category.
  EXPECT_EQ(a.bound, Bound::GpuBound);
  EXPECT_GT(a.span_fill_pct.min, 95.0);
  EXPECT_TRUE(a.gaps.empty());
  EXPECT_GT(a.gpu_ms.median, a.host_ms.median);  // the host runs ahead: the range is only the enqueue
  EXPECT_EQ(category_time(a, Category::Other), 0);
  EXPECT_EQ(a.categories[0].category, Category::Gemm);
  EXPECT_GT(category_time(a, Category::Attention), 0);
  EXPECT_GT(category_time(a, Category::Normalization), 0);
  EXPECT_GT(category_time(a, Category::Elementwise), 0);
  const auto attn = std::find_if(a.range_patterns.begin(), a.range_patterns.end(),
                                 [](const RangeRow& r) { return r.range == "h.*.attn"; });
  ASSERT_NE(attn, a.range_patterns.end());
  EXPECT_EQ(attn->count % a.steady_count, 0u);  // the same kernels every iteration
  // Syncs: none inside; the bench's own after the loop (and at setup) are outside.
  EXPECT_TRUE(a.syncs.empty());
  EXPECT_FALSE(a.syncs_elsewhere.empty());
  EXPECT_NE(a.verdict.find("No synchronization, blocking copy or allocation inside the loop."), std::string::npos);
}

TEST(RealCaptures, ThePlantedSyncIsABlockingCopyInEveryIteration) {
  // A device-to-host read-back the size of a max(): as many in every steady iteration, none
  // in warm-up counted. (An earlier bench that read back once per forward; the per-layer
  // capture is checked below.)
  const Analysis a = analyze_capture("pitfall_sync");
  ASSERT_EQ(a.steady_count, 5u);
  ASSERT_FALSE(a.syncs.empty());
  std::map<int64_t, size_t> per_iteration;
  for (const SyncCall& s : a.syncs) {
    EXPECT_EQ(s.kind, SyncKind::BlockingCopy);
    EXPECT_EQ(s.api, "cudaMemcpy");
    EXPECT_EQ(s.detail.rfind("DtoH ", 0), 0u) << s.detail;
    EXPECT_NE(s.detail.find("device -> pageable"), std::string::npos) << s.detail;
    EXPECT_FALSE(s.warmup);
    ++per_iteration[s.iteration];
  }
  ASSERT_EQ(per_iteration.size(), 5u);
  for (const auto& [it, n] : per_iteration) EXPECT_EQ(n, per_iteration.begin()->second) << "iteration " << it;
  ASSERT_EQ(a.sync_summary.size(), 1u);
  EXPECT_EQ(a.sync_summary[0].count, a.syncs.size());
  EXPECT_NE(a.verdict.find("The loop synchronizes: "), std::string::npos) << a.verdict;
}

// The bench as it is now reads back after every layer (Context's layer-end hook). The
// expected count comes from the capture itself, not from the analyzer: the layer-level
// ranges inside each steady `forward` (wte, h.N.ln_1/attn/ln_2/mlp, ln_f, lm_head), and the
// total of cudaMemcpy calls from `nsys stats --report cuda_api_sum` beside the export.
TEST(RealCaptures, ThePerLayerSyncIsFoundOncePerLayer) {
  const Trace* t = nullptr;
  const Analysis a = analyze_capture("pitfall_sync_per_layer", &t);
  ASSERT_EQ(a.steady_count, 5u);
  auto is_block = [](const std::string& n) { return n.rfind("h.", 0) == 0 && n.find('.', 2) == std::string::npos; };
  std::map<int64_t, std::multiset<std::string>> layers, synced;  // by iteration payload
  for (const NvtxEvent& r : t->nvtx) {
    if (r.parent < 0 || is_block(r.text)) continue;  // iteration and block ranges
    const NvtxEvent* it = &r;
    while (it->parent >= 0) it = &t->nvtx[it->parent];
    if (it->text == "forward" && it->category == 2) layers[static_cast<int64_t>(it->payload)].insert(r.text);
  }
  for (const SyncCall& s : a.syncs) {
    EXPECT_EQ(s.kind, SyncKind::BlockingCopy);
    EXPECT_EQ(s.api, "cudaMemcpy");
    synced[s.iteration].insert(s.range);
  }
  ASSERT_EQ(layers.size(), 5u);
  EXPECT_EQ(layers.begin()->second.size(), 3u + 4u * 12u);  // GPT-2 small: 51 layer ranges
  EXPECT_EQ(synced, layers);  // one read-back in every layer range of every steady iteration

  size_t memcpy_calls = 0;
  for (const auto& row : laptime::nsys_csv::table(capture("pitfall_sync_per_layer_cuda_api_sum.csv")))
    if (normalize_api_name(row.at("Name")) == "cudaMemcpy") memcpy_calls = std::stoul(row.at("Num Calls"));
  EXPECT_GE(memcpy_calls, a.syncs.size());  // the rest: weight upload, warm-up, enqueue probes
  EXPECT_NE(a.verdict.find("The loop synchronizes: "), std::string::npos) << a.verdict;
}

TEST(RealCaptures, ThePlantedPageableCopyIsFound) {
  const Analysis a = analyze_capture("pitfall_pageable");
  ASSERT_GE(a.steady_count, 3u);
  ASSERT_EQ(a.syncs.size(), a.steady_count);  // one planted copy per steady iteration
  for (const SyncCall& s : a.syncs) {
    EXPECT_EQ(s.kind, SyncKind::PageableCopy);
    EXPECT_EQ(s.api, "cudaMemcpyAsync");
    EXPECT_EQ(s.detail, "HtoD 1.0 KiB, pageable -> device");
  }
}

TEST(RealCaptures, ThePlantedAllocationIsAMallocAndAFreePerIteration) {
  const Analysis a = analyze_capture("pitfall_alloc");
  ASSERT_EQ(a.syncs.size(), 10u);
  std::map<std::string, size_t> apis;
  for (const SyncCall& s : a.syncs) {
    EXPECT_EQ(s.kind, SyncKind::Allocation);
    ++apis[s.api];
  }
  EXPECT_EQ(apis, (std::map<std::string, size_t>{{"cudaFree", 5}, {"cudaMalloc", 5}}));
  // Each cudaMalloc holds the GPU up: the largest gaps sit on it.
  ASSERT_FALSE(a.gaps.empty());
  EXPECT_EQ(a.gaps.front().cause, GapCause::HostWait);
  EXPECT_EQ(a.gaps.front().cpu_api, "cudaMalloc");
}

TEST(RealCaptures, ResNet50IsConvolutionsAndWaitsOnTheHost) {
  const Analysis a = analyze_capture("resnet50_bf16");
  EXPECT_EQ(a.steady_count, 5u);
  EXPECT_EQ(a.categories[0].category, Category::Convolution);
  EXPECT_GT(category_time(a, Category::ReductionPooling), 0);  // max pool, global average pool
  EXPECT_EQ(category_time(a, Category::Other), 0);
  EXPECT_TRUE(a.syncs.empty());
  EXPECT_EQ(a.bound, Bound::LaunchBound);
  EXPECT_GT(a.host_wait_idle * 2, a.idle_in_iterations);
}

// --top (trace/analyses/top.h): the text shows 15 rows of each table unless told, with a line for the rest;
// the JSON every row unless --top is given, and then how many it left out.
TEST(RealCaptures, TopCutsTheTextAndTheJsonOnlyWhenAsked) {
  Analysis a = analyze_capture("resnet50_bf16");
  ASSERT_GT(a.kernels.size(), 15u);  // cuDNN's and nvjet's names: more than a page's worth
  ASSERT_GT(a.range_patterns.size(), 15u);
  auto text = [&a] { return testing_support::report_text(a); };
  auto more = [](size_t n) { return "    ... " + std::to_string(n) + " more rows (--top 0 for all)\n"; };
  std::string s = text();
  EXPECT_NE(s.find(std::string(a.kernels[14].name)), std::string::npos);
  EXPECT_EQ(s.find(std::string(a.kernels[15].name) + "\n"), std::string::npos);
  EXPECT_NE(s.find(more(a.kernels.size() - 15)), std::string::npos) << s;
  EXPECT_NE(s.find(more(a.range_patterns.size() - 15)), std::string::npos) << s;
  json j = to_json(a);
  EXPECT_EQ(j["kernel_mix"]["kernels"].size(), a.kernels.size());
  EXPECT_EQ(j["kernel_mix"]["range_patterns"].size(), a.range_patterns.size());
  EXPECT_FALSE(j["kernel_mix"].contains("kernels_omitted"));

  a.top = 3;
  s = text();
  EXPECT_NE(s.find(more(a.kernels.size() - 3)), std::string::npos) << s;
  j = to_json(a);
  EXPECT_EQ(j["kernel_mix"]["kernels"].size(), 3u);
  EXPECT_EQ(j["kernel_mix"]["kernels"][2]["name"], std::string(a.kernels[2].name));
  EXPECT_EQ(j["kernel_mix"]["kernels_omitted"], a.kernels.size() - 3);
  EXPECT_EQ(j["kernel_mix"]["range_patterns"].size(), 3u);
  EXPECT_EQ(j["kernel_mix"]["range_patterns_omitted"], a.range_patterns.size() - 3);
  EXPECT_EQ(j["kernel_mix"]["ranges_omitted"], a.ranges.size() - 3);

  a.top = 0;  // every row, no line
  s = text();
  EXPECT_NE(s.find(std::string(a.kernels.back().name)), std::string::npos);
  EXPECT_EQ(s.find("more rows"), std::string::npos);
  EXPECT_EQ(to_json(a)["kernel_mix"]["kernels"].size(), a.kernels.size());
}

TEST(RealCaptures, NvtxNoneRunSaysHowToGetIterations) {
  const Trace t = load_nsys_sqlite(capture("gpt2_nvtx_none.sqlite"));
  EXPECT_TRUE(t.nvtx.empty());
  EXPECT_FALSE(t.kernels.empty());
  const TraceJoin j(t);
  EXPECT_NE(error_of([&] { analyze(j, {}); }).find("the trace has no NVTX ranges"), std::string::npos);
}

}  // namespace
}  // namespace laptime::trace
