// `laptime analyze`: the four baseline questions, answered from a trace.
//
//   1. How long is a steady-state forward pass?  From the NVTX iteration ranges (laptime's
//      `forward`, a numbered family such as `Forward Pass Iter 3`, or --range; warm-up and
//      the iterations the host ran ahead of the GPU excluded), both as the host saw it (range
//      start to end) and as the GPU ran it (the range projected onto the GPU: first start to
//      last end of the work whose launch call lies inside the range, joined by correlation id).
//   2. How busy is the GPU inside an iteration?  The union of kernel, copy and memset
//      intervals over the iteration's GPU span, and the idle gaps above a threshold of a few
//      microseconds (nsys's own rule looks for gaps of 500 ms: it sees nothing here), each
//      with what the launching thread was doing meanwhile.
//   3. Which kernels run?  By category (name rules, then the enclosing NVTX range: a
//      non-GEMM kernel under `h.3.attn` is attention), by kernel, and by layer range.
//   4. Does the loop synchronize?  Device/stream/event synchronizes, blocking copies, async
//      copies from pageable memory, allocations and frees inside steady iterations, each
//      measured: did the host wait for the compute stream's work, and for how long.
//
// analyze() computes everything into an Analysis (plain numbers, ns); print_report and
// to_json only present it, so the text and the JSON can never disagree. Where things live:
// the joins in join.cpp; one file per question: iterations.* (1), utilization.* (2),
// kernels.* (3), sync.* (4); report.cpp runs them in order and writes the verdict;
// text_report.cpp and json_report.cpp are the writers.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "trace/trace.h"

namespace laptime::trace {

struct ReportOptions {
  // The iteration ranges: an exact NVTX name, a glob ('Forward Pass Iter *') or re:REGEX, in
  // any domain; empty: found by the rules in iterations.h.
  std::string range;
  // Warm-up iterations to drop. Unset: the ranges the bench marked warm-up (category named
  // "warmup", or category 1 when no names were registered); with no marks, the first one.
  std::optional<int> skip_warmup;
  double gap_us = 5.0;  // an idle stretch longer than this inside an iteration is a gap
  int top = 15;         // rows in the top-kernels and largest-gaps tables
};

enum class Category { Gemm, Convolution, Attention, Normalization, Elementwise, ReductionPooling, MemcpyMemset, Other };
constexpr int kCategoryCount = 8;
const char* category_name(Category c);

// The category of a kernel from its names and the NVTX ranges its launch sat in, innermost
// first. Exposed for tests and for the SVG colours.
Category classify_kernel(const std::string& short_name, const std::string& name,
                         const std::vector<std::string>& ranges_innermost_first);

// --- The joins every view needs --------------------------------------------------------

// One GPU operation joined with the host call that launched it and the NVTX range that call
// sat in.
struct GpuOp {
  enum class Kind { Kernel, Memcpy, Memset };
  Kind kind = Kind::Kernel;
  int index = -1;  // into Trace::kernels, ::memcpys or ::memsets
  Ns start = 0, end = 0;
  uint32_t pid = 0, device = 0, stream = 0;
  int api = -1;    // the launch call, index into Trace::api_calls; -1 when not captured
  int range = -1;  // innermost NVTX range around the launch call, index into Trace::nvtx
  Category category = Category::Other;
  std::string label;  // kernel short name, "[CUDA memcpy HtoD]", "[CUDA memset]"
};

class TraceJoin {
 public:
  explicit TraceJoin(const Trace& t);
  const Trace& trace() const { return t_; }
  const std::vector<GpuOp>& ops() const { return ops_; }  // by start time
  // The innermost NVTX range on thread (pid, tid) that contains time `at`, or -1.
  int innermost_range(uint32_t pid, uint32_t tid, Ns at) const;
  int api_range(int api) const { return api < 0 ? -1 : api_range_[api]; }
  // The range's text and its ancestors' texts, innermost first.
  std::vector<std::string> range_chain(int range) const;
  // API calls of one thread, indices into Trace::api_calls by start time (empty if none).
  const std::vector<int>& thread_calls(uint32_t pid, uint32_t tid) const;

 private:
  const Trace& t_;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<int>> ranges_by_thread_, calls_by_thread_;
  std::vector<int> api_range_;
  std::vector<GpuOp> ops_;
};

// --- The analysis -----------------------------------------------------------------------

struct Summary {
  size_t n = 0;
  double mean = 0, median = 0, min = 0, max = 0;  // ns
};
Summary summarize(std::vector<double> values);

// "h.3.attn" -> "h.*.attn", "layer2.1.conv2" -> "layer2.*.conv2": the block indices folded,
// as analyze's by-layer table folds them (`laptime diff` aligns layers with it).
std::string fold_block_indices(const std::string& range);

struct Iteration {
  int nvtx = -1;        // index into Trace::nvtx
  uint64_t index = 0;   // the range's payload when it has one, else its position
  bool warmup = false;
  bool host_ahead = false;        // the host ran ahead of the GPU (queue filling): not steady
  Ns start = 0, end = 0;          // host: the range itself
  bool has_gpu = false;           // any GPU work launched inside the range
  Ns gpu_start = 0, gpu_end = 0;  // the range projected onto the GPU
  Ns busy = 0;                    // union of the iteration's GPU intervals
  int gaps = 0;                   // idle stretches longer than the threshold
  Ns gap_time = 0;                // their total
  Ns host_wait = 0;               // idle time, gaps or not, waiting for a launch call to return
  size_t kernels = 0;
  Ns duration() const { return end - start; }
  Ns gpu_span() const { return gpu_end - gpu_start; }
  bool steady() const { return !warmup && !host_ahead; }
};

enum class GapCause {
  HostWait,  // the next work's launch call had not returned when the GPU went idle: it waited for the CPU
  Other,     // the work was already enqueued (dependency, sync, kernel-boundary latency)
};
const char* gap_cause_name(GapCause c);

struct Gap {
  uint64_t iteration = 0;
  Ns start = 0, end = 0;
  GapCause cause = GapCause::Other;
  std::string before;       // the GPU work that ended at the gap's start
  std::string after;        // the GPU work that started at its end
  std::string launch;       // the API call that launched `after`
  Ns launch_start = 0;      // when that call began
  std::string cpu_api;      // the API call on the launching thread that overlapped the gap most
  Ns cpu_in_cuda = 0;       // how much of the gap that thread spent inside CUDA calls
  std::string cpu_range;    // the innermost NVTX range on that thread over the gap's middle
  Ns duration() const { return end - start; }
};

struct CategoryRow {
  Category category = Category::Other;
  size_t count = 0;  // over all steady iterations
  Ns time = 0;
};

struct KernelRow {
  std::string name;  // short name
  Category category = Category::Other;
  size_t count = 0;
  Ns time = 0, min = 0, max = 0;
};

struct RangeRow {
  std::string range;  // innermost NVTX range of the launch ("h.3.attn"), or a pattern ("h.*.attn")
  size_t count = 0;
  Ns time = 0;
  Ns time_by_category[kCategoryCount] = {};
};

enum class SyncKind { DeviceSync, StreamSync, EventSync, BlockingCopy, PageableCopy, Allocation };
const char* sync_kind_name(SyncKind k);

// What a blocking call did, measured against the compute stream (sync.h says how).
enum class SyncEffect {
  Stall,           // compute-stream work was pending and the call returned after it ended
  ReturnedAtOnce,  // a read-back (synchronize, device-to-host copy) that returned while work was
                   // pending: it did not wait for the forward pass, the value can be stale
  NoWait,          // a call that reads nothing back (host-to-device copy, allocation) and
                   // returned while work was pending: it cost its own time
  QueueEmpty,      // nothing was pending on the compute stream: it cost its own time
  Unknown,         // no compute stream (no GPU work in the steady iterations)
};
const char* sync_effect_name(SyncEffect e);

struct SyncCall {
  SyncKind kind = SyncKind::DeviceSync;
  std::string api;
  int64_t iteration = -1;  // its iteration's index, -1 outside every iteration
  bool warmup = false;     // inside a warm-up iteration
  std::string range;  // innermost NVTX range around the call
  Ns start = 0, duration = 0;  // duration: how long the host waited in it
  std::string detail;  // copies: "HtoD 4.0 KiB pageable -> device"
  int64_t stream = -1;  // the stream it copied on or synchronized (-1: not recorded)
  SyncEffect effect = SyncEffect::Unknown;
  Ns pending = 0;  // compute-stream work still to run when the call began
};

struct SyncSummary {
  SyncKind kind = SyncKind::DeviceSync;
  size_t count = 0;
  Ns blocked = 0;                   // host time inside them
  Ns stalled = 0;                   // the part inside calls that waited for the compute stream
  size_t stalls = 0, returned_at_once = 0;
  std::vector<std::string> ranges;  // where they sat, most frequent first
};

enum class Bound { GpuBound, LaunchBound, InputBound, Mixed, NoGpuWork };
const char* bound_name(Bound b);

struct Analysis {
  std::string source;
  std::string gpu;                 // "NVIDIA H200, 132 SMs", when the capture recorded it
  std::vector<std::string> notes;  // the reader's notes and the analysis's own
  std::string range_name;   // `forward`, `Forward Pass Iter *`, or --range as given
  std::string range_rule;   // how the iteration ranges were found, in words
  DroppedRows dropped;             // rows the reader left out as invalid (Trace::dropped)
  std::string warmup_rule;  // how warm-up was decided, in words
  std::string steady_rule;  // which iterations are measured and why the others are not
  double gap_threshold_us = 0;

  std::vector<Iteration> iterations;  // all, in order; steady() tells the measured ones
  int svg_iteration = -1;             // the steady iteration whose GPU span is the median
  size_t steady_count = 0;
  Summary host_ms, gpu_ms, busy_pct;  // over steady iterations (host_ms/gpu_ms in ms, busy in %)
  Summary period_ms;  // GPU start to next iteration's GPU start: the throughput lap
  Summary busy_ms;    // union of GPU work per steady iteration
  double lap_ms = 0;  // the steady-state lap: host range mean, or the GPU period when the host never caught up
  bool lap_from_gpu = false;
  std::string lap_source;  // which of the two, in words
  Ns gpu_time = 0;    // sum of kernel+copy+memset durations over steady iterations
  Ns idle_in_iterations = 0;  // idle time inside the GPU spans
  Ns host_wait_idle = 0;      // the part of it waiting for a launch call to return (any length)
  Ns between_iterations = 0;  // GPU idle between consecutive steady iterations, summed
  Ns input_wait = 0;          // the part of it while the host was outside the iteration ranges
  Ns htod_time = 0;           // host-to-device copy time inside steady iterations

  std::vector<Gap> gaps;  // every gap over steady iterations, largest first
  int top = 15;           // rows the tables show (ReportOptions::top)

  std::vector<CategoryRow> categories;  // every category, largest first
  std::vector<KernelRow> kernels;       // by time, all of them
  std::vector<RangeRow> ranges;         // by innermost range, by time
  std::vector<RangeRow> range_patterns; // the same with block indices folded: h.*.attn

  std::vector<SyncCall> syncs;            // inside steady iterations, in time order
  std::vector<SyncSummary> sync_summary;  // by kind, for those
  std::vector<SyncCall> syncs_elsewhere;  // the same calls in warm-up or outside the iterations
  bool has_api_trace = false;             // without CUDA API calls, syncs cannot be seen
  int64_t compute_stream = -1;            // the stream with most GPU time in steady iterations
  Ns sync_wait = 0;                       // host time in the blocking calls, steady iterations
  Ns sync_stall = 0;                      // the part that waited for the compute stream
  double gpu_floor_ms = 0;                // GPU time per iteration if it never waited for the host:
                                          // busy plus the idle it has with work queued
  double lap_without_syncs_ms = 0;        // estimate: max(gpu_floor_ms, lap - wait per iteration)

  Bound bound = Bound::NoGpuWork;
  std::string verdict;  // plain words, several sentences
};

// Throws TraceError when the trace has no NVTX ranges, no range matching --range, no rule that
// finds the iterations, or (with an explicit --skip-warmup) none left after warm-up.
Analysis analyze(const TraceJoin& j, const ReportOptions& o);

void print_report(const Analysis& a, std::FILE* out);
nlohmann::json to_json(const Analysis& a);

}  // namespace laptime::trace
