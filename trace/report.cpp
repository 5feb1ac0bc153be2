#include "trace/report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <numeric>
#include <set>

#include <nlohmann/json.hpp>

#include "trace/validate.h"

namespace laptime::trace {

// --- Names -------------------------------------------------------------------------------

const char* category_name(Category c) {
  switch (c) {
    case Category::Gemm: return "GEMM";
    case Category::Convolution: return "convolution";
    case Category::Attention: return "attention";
    case Category::Normalization: return "normalization";
    case Category::Elementwise: return "elementwise";
    case Category::ReductionPooling: return "reduction/pooling";
    case Category::MemcpyMemset: return "memcpy/memset";
    case Category::Other: return "other";
  }
  return "other";
}

const char* gap_cause_name(GapCause c) { return c == GapCause::HostWait ? "host-wait" : "other"; }

const char* sync_kind_name(SyncKind k) {
  switch (k) {
    case SyncKind::DeviceSync: return "device synchronize";
    case SyncKind::StreamSync: return "stream synchronize";
    case SyncKind::EventSync: return "event synchronize";
    case SyncKind::BlockingCopy: return "blocking copy";
    case SyncKind::PageableCopy: return "async copy from/to pageable memory";
    case SyncKind::Allocation: return "allocation/free";
  }
  return "?";
}

const char* bound_name(Bound b) {
  switch (b) {
    case Bound::GpuBound: return "GPU-bound";
    case Bound::LaunchBound: return "launch-bound";
    case Bound::InputBound: return "input-bound";
    case Bound::Mixed: return "mixed";
    case Bound::NoGpuWork: return "no GPU work";
  }
  return "?";
}

// --- Kernel categories ----------------------------------------------------------------------

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool has(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

bool has_any(const std::string& s, std::initializer_list<const char*> needles) {
  for (const char* n : needles)
    if (has(s, n)) return true;
  return false;
}

// "conv" as in convolution, not as in convert/conversion (laptime's own convert_kernel).
bool has_conv(const std::string& s) {
  for (size_t p = s.find("conv"); p != std::string::npos; p = s.find("conv", p + 1)) {
    const std::string next = s.substr(p + 4, 3);
    if (next != "ert" && next != "ers") return true;
  }
  return false;
}

std::string last_component(const std::string& range) {
  const size_t dot = range.rfind('.');
  return lower(dot == std::string::npos ? range : range.substr(dot + 1));
}

}  // namespace

Category classify_kernel(const std::string& short_name, const std::string& name,
                         const std::vector<std::string>& ranges_innermost_first) {
  const std::string s = lower(short_name), d = lower(name);
  // 1. Library kernels say what they are. Attention first: fused attention kernels also
  //    carry "cutlass"/"fprop" in their names (fmha_cutlassF_*, cudnn *_sdpa_*_fprop_*).
  if (has_any(s, {"flash", "fmha", "attention", "sdpa", "mha_"})) return Category::Attention;
  if (has_conv(s) || has_any(s, {"fprop", "dgrad", "wgrad", "winograd", "implicit_gemm", "fft2d"}))
    return Category::Convolution;
  if (has_any(s, {"gemm", "gemv", "nvjet", "cutlass", "cublas", "matmul", "splitkreduce", "xmma"}) ||
      has_any(d, {"cutlass", "cublas", "gemm"}))
    return Category::Gemm;
  // 2. The layer it was launched from: what is not a GEMM inside an attention layer is
  //    attention (the softmax, the head split/merge); anything inside a norm layer is
  //    normalization, inside a convolution layer convolution (cuDNN's padding and layout
  //    kernels), inside a pooling layer pooling. The innermost range with a rule wins.
  for (const std::string& r : ranges_innermost_first) {
    const std::string c = last_component(r);
    if (has_any(c, {"attn", "attention"})) return Category::Attention;
    if (c.rfind("ln", 0) == 0 || has(c, "norm") || (c.rfind("bn", 0) == 0 && c.size() <= 4))
      return Category::Normalization;
    if (has_conv(c) || has(c, "downsample")) return Category::Convolution;
    if (has(c, "pool")) return Category::ReductionPooling;
  }
  // 3. Generic kernels by their own names.
  if (has_any(s, {"layernorm", "layer_norm", "rmsnorm", "rms_norm", "batchnorm", "batch_norm", "groupnorm",
                  "group_norm", "instancenorm", "instance_norm", "bn_fw"}))
    return Category::Normalization;
  if (has_any(s, {"pool", "reduce", "reduction", "softmax", "argmax", "argmin", "topk"}))
    return Category::ReductionPooling;
  if (has_any(s, {"elementwise", "gelu", "relu", "silu", "swish", "tanh", "sigmoid", "residual", "add", "bias",
                  "scale", "mul", "cast", "convert", "copy", "fill", "embedding", "encoder", "gather", "scatter",
                  "transpose", "permute", "split", "merge", "concat", "cat_", "index", "dropout", "where", "clamp"}))
    return Category::Elementwise;
  return Category::Other;
}

// --- The join ------------------------------------------------------------------------------

TraceJoin::TraceJoin(const Trace& t) : t_(t) {
  for (size_t i = 0; i < t.nvtx.size(); ++i) ranges_by_thread_[{t.nvtx[i].pid, t.nvtx[i].tid}].push_back(static_cast<int>(i));
  for (size_t i = 0; i < t.api_calls.size(); ++i)
    calls_by_thread_[{t.api_calls[i].pid, t.api_calls[i].tid}].push_back(static_cast<int>(i));
  api_range_.resize(t.api_calls.size(), -1);
  for (size_t i = 0; i < t.api_calls.size(); ++i)
    api_range_[i] = innermost_range(t.api_calls[i].pid, t.api_calls[i].tid, t.api_calls[i].start);

  auto add = [&](GpuOp::Kind kind, int index, Ns start, Ns end, uint32_t pid, uint32_t device, uint32_t stream,
                 uint64_t correlation, std::string label) {
    GpuOp op;
    op.kind = kind;
    op.index = index;
    op.start = start;
    op.end = end;
    op.pid = pid;
    op.device = device;
    op.stream = stream;
    op.api = t.api_index_for(pid, correlation);
    op.range = api_range(op.api);
    op.label = std::move(label);
    ops_.push_back(std::move(op));
  };
  for (size_t i = 0; i < t.kernels.size(); ++i) {
    const Kernel& k = t.kernels[i];
    add(GpuOp::Kind::Kernel, static_cast<int>(i), k.start, k.end, k.pid, k.device, k.stream, k.correlation,
        k.short_name);
  }
  for (size_t i = 0; i < t.memcpys.size(); ++i) {
    const Memcpy& m = t.memcpys[i];
    add(GpuOp::Kind::Memcpy, static_cast<int>(i), m.start, m.end, m.pid, m.device, m.stream, m.correlation,
        std::string("[CUDA memcpy ") + copy_kind_name(m.kind) + "]");
  }
  for (size_t i = 0; i < t.memsets.size(); ++i) {
    const Memset& m = t.memsets[i];
    add(GpuOp::Kind::Memset, static_cast<int>(i), m.start, m.end, m.pid, m.device, m.stream, m.correlation,
        "[CUDA memset]");
  }
  for (GpuOp& op : ops_) {
    if (op.kind == GpuOp::Kind::Kernel) {
      const Kernel& k = t.kernels[op.index];
      op.category = classify_kernel(k.short_name, k.name, range_chain(op.range));
    } else {
      op.category = Category::MemcpyMemset;
    }
  }
  std::stable_sort(ops_.begin(), ops_.end(), [](const GpuOp& a, const GpuOp& b) { return a.start < b.start; });
}

int TraceJoin::innermost_range(uint32_t pid, uint32_t tid, Ns at) const {
  auto it = ranges_by_thread_.find({pid, tid});
  if (it == ranges_by_thread_.end()) return -1;
  const std::vector<int>& rs = it->second;  // by start time (Trace::finalize sorted them)
  // The last range that started at or before `at`; if it has ended, one of its ancestors
  // may still be open (ranges nest, so whatever contains `at` contains it too).
  auto pos = std::upper_bound(rs.begin(), rs.end(), at, [&](Ns v, int r) { return v < t_.nvtx[r].start; });
  if (pos == rs.begin()) return -1;
  for (int r = *(pos - 1); r >= 0; r = t_.nvtx[r].parent)
    if (t_.nvtx[r].end >= at) return r;
  return -1;
}

std::vector<std::string> TraceJoin::range_chain(int range) const {
  std::vector<std::string> chain;
  for (int r = range; r >= 0; r = t_.nvtx[r].parent) chain.push_back(t_.nvtx[r].text);
  return chain;
}

const std::vector<int>& TraceJoin::thread_calls(uint32_t pid, uint32_t tid) const {
  static const std::vector<int> kNone;
  auto it = calls_by_thread_.find({pid, tid});
  return it == calls_by_thread_.end() ? kNone : it->second;
}

// --- The analysis ----------------------------------------------------------------------------

Summary summarize(std::vector<double> v) {
  Summary s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  s.min = v.front();
  s.max = v.back();
  return s;
}

namespace {

std::string format(const char* f, ...) {
  va_list args;
  va_start(args, f);
  char buf[512];
  std::vsnprintf(buf, sizeof buf, f, args);
  va_end(args);
  return buf;
}

std::string ms(Ns ns) { return format("%.3f", ns / 1e6); }
std::string us(Ns ns) { return format("%.1f", ns / 1e3); }

std::string plural(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string bytes_str(uint64_t b) {
  if (b >= (1ull << 30)) return format("%.1f GiB", b / double(1ull << 30));
  if (b >= (1ull << 20)) return format("%.1f MiB", b / double(1ull << 20));
  if (b >= (1ull << 10)) return format("%.1f KiB", b / double(1ull << 10));
  return std::to_string(b) + " B";
}

// "h.3.attn" -> "h.*.attn", "layer2.1.conv2" -> "layer2.*.conv2": the same layer in every
// block, so a 12-block model reads as one row per layer kind.
std::string fold_indices(const std::string& range) {
  std::string out;
  size_t start = 0;
  while (start <= range.size()) {
    size_t dot = range.find('.', start);
    if (dot == std::string::npos) dot = range.size();
    const std::string part = range.substr(start, dot - start);
    const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isdigit(c); });
    if (!out.empty()) out += '.';
    out += digits ? "*" : part;
    start = dot + 1;
  }
  return out;
}

// Which host calls stop the loop, by name. Stream-ordered allocations (cudaMallocAsync,
// cudaFreeAsync) do not, and cudaStreamWaitEvent waits on the GPU, not the host.
std::optional<SyncKind> sync_kind_of(const std::string& api) {
  static const std::set<std::string> kDevice{"cudaDeviceSynchronize", "cudaThreadSynchronize", "cuCtxSynchronize"};
  static const std::set<std::string> kStream{"cudaStreamSynchronize", "cuStreamSynchronize"};
  static const std::set<std::string> kEvent{"cudaEventSynchronize", "cuEventSynchronize"};
  static const std::set<std::string> kAlloc{
      "cudaMalloc",       "cudaFree",       "cudaMallocHost",   "cudaFreeHost",  "cudaHostAlloc",
      "cudaMallocManaged", "cudaMallocPitch", "cudaMalloc3D",   "cudaMallocArray", "cudaFreeArray",
      "cuMemAlloc",       "cuMemFree",      "cuMemAllocHost",   "cuMemFreeHost", "cuMemHostAlloc",
      "cuMemAllocManaged", "cuMemAllocPitch"};
  if (kDevice.count(api)) return SyncKind::DeviceSync;
  if (kStream.count(api)) return SyncKind::StreamSync;
  if (kEvent.count(api)) return SyncKind::EventSync;
  if (kAlloc.count(api)) return SyncKind::Allocation;
  if ((api.rfind("cudaMemcpy", 0) == 0 || api.rfind("cuMemcpy", 0) == 0) && !has(api, "Async"))
    return SyncKind::BlockingCopy;
  return std::nullopt;
}

// CUPTI records the driver calls a runtime call makes as calls of their own (a
// cudaStreamSynchronize holds a cuStreamSynchronize): only the outer one counts.
bool nested_in_runtime_call(const TraceJoin& j, int c) {
  const Trace& t = j.trace();
  const ApiCall& call = t.api_calls[c];
  if (call.kind != ApiKind::Driver) return false;
  const std::vector<int>& calls = j.thread_calls(call.pid, call.tid);
  auto pos = std::upper_bound(calls.begin(), calls.end(), call.start,
                              [&](Ns v, int x) { return v < t.api_calls[x].start; });
  // The outer call started at or before this one; a few calls back is as far as it can be.
  for (int n = 0; pos != calls.begin() && n < 8; ++n) {
    const ApiCall& other = t.api_calls[*--pos];
    if (*pos != c && other.kind == ApiKind::Runtime && other.start <= call.start && other.end >= call.end) return true;
  }
  return false;
}

struct IterationFinder {
  std::vector<int> ranges;   // the iteration ranges, by start
  std::map<int, int> by_range;  // nvtx index -> iteration index
};

// Iteration ranges: those named `name`, outermost only (a `forward` nested in another
// `forward` is a submodule, not an iteration).
IterationFinder find_iterations(const Trace& t, const std::string& name) {
  IterationFinder f;
  for (size_t i = 0; i < t.nvtx.size(); ++i) {
    if (t.nvtx[i].text != name) continue;
    bool nested = false;
    for (int p = t.nvtx[i].parent; p >= 0 && !nested; p = t.nvtx[p].parent) nested = t.nvtx[p].text == name;
    if (nested) continue;
    f.by_range[static_cast<int>(i)] = static_cast<int>(f.ranges.size());
    f.ranges.push_back(static_cast<int>(i));
  }
  return f;
}

[[noreturn]] void no_iterations(const Trace& t, const std::string& name) {
  if (t.nvtx.empty())
    throw TraceError("the trace has no NVTX ranges, so its iterations cannot be found: capture with `nsys profile "
                "--trace=cuda,nvtx` and run `laptime bench` with --nvtx iter or finer (or wrap each forward pass in "
                "an NVTX range named `forward`).");
  std::map<std::string, size_t> counts;
  for (const NvtxEvent& r : t.nvtx) ++counts[r.text];
  std::vector<std::pair<size_t, std::string>> by_count;
  for (const auto& [text, n] : counts) by_count.emplace_back(n, text);
  std::sort(by_count.rbegin(), by_count.rend());
  std::string list;
  for (size_t i = 0; i < by_count.size() && i < 6; ++i)
    list += (i ? ", `" : "`") + by_count[i].second + "` (" + std::to_string(by_count[i].first) + ")";
  throw TraceError("the trace has no NVTX range named `" + name + "`; its most frequent ranges are " + list +
              ": name the iteration range with --range NAME.");
}

// Where a host call sat: its iteration (-1 for none) through the NVTX chain of its thread.
int iteration_of_range(const Trace& t, const IterationFinder& f, int range) {
  for (int r = range; r >= 0; r = t.nvtx[r].parent) {
    auto it = f.by_range.find(r);
    if (it != f.by_range.end()) return it->second;
  }
  return -1;
}

std::string range_text(const Trace& t, int range) { return range < 0 ? "(no range)" : t.nvtx[range].text; }

// --- Verdict -----------------------------------------------------------------------------------

void write_verdict(Analysis& a) {
  Ns span_total = 0, busy_total = 0;
  size_t with_gpu = 0;
  for (const Iteration& it : a.iterations) {
    if (it.warmup || !it.has_gpu) continue;
    span_total += it.gpu_span();
    busy_total += it.busy;
    ++with_gpu;
  }
  std::string v;
  if (with_gpu == 0) {
    a.bound = Bound::NoGpuWork;
    v = "No GPU work was launched inside the steady `" + a.range_name +
        "` ranges, so the GPU questions have no answer: capture with `nsys profile --trace=cuda,nvtx` (the CUDA "
        "API trace ties GPU work to the ranges).";
  } else {
    const Ns period_total = span_total + a.between_iterations;
    const Ns idle = period_total - busy_total;
    const double busy_frac = double(busy_total) / period_total;
    // Overlapping host-to-device copies can add up to more than the period: a share, at most all of it.
    const double input_frac = std::min(1.0, double(a.input_wait + a.htod_time) / period_total);
    const Ns host_wait = a.host_wait_idle + (a.between_iterations - a.input_wait);
    const std::string busy_words = format("the GPU is busy %.1f%% of the time across steady iterations", 100 * busy_frac);
    if (busy_frac >= 0.9) {
      a.bound = Bound::GpuBound;
      const CategoryRow& top = a.categories.front();
      v = "GPU-bound: " + busy_words + " (" + a.range_name + " takes " + format("%.3f", a.gpu_ms.median) +
          " ms on the GPU, median); time goes to the kernels themselves, " + category_name(top.category) +
          format(" first with %.0f%% of GPU time.", a.gpu_time ? 100.0 * top.time / a.gpu_time : 0.0);
    } else if (input_frac >= 0.5 * (1 - busy_frac)) {
      a.bound = Bound::InputBound;
      v = "Input-bound: " + busy_words + format("; %.0f%%", 100 * input_frac) +
          " of it the GPU waits for input (host busy outside the iteration ranges, or host-to-device copies).";
    } else if (idle > 0 && host_wait >= idle / 2) {
      a.bound = Bound::LaunchBound;
      v = "Launch-bound: " + busy_words + format("; %.0f%% of the idle time the GPU waits for the CPU", 100.0 * host_wait / idle) +
          " to launch the next kernel (host " + format("%.3f", a.host_ms.median) + " ms to enqueue an iteration the GPU runs in " +
          format("%.3f", a.gpu_ms.median) + " ms, medians).";
      // Where the longest waits sit, by layer kind, and whether the host was in CUDA calls.
      std::map<std::string, std::pair<Ns, Ns>> by_layer;  // folded range -> (host-wait gap time, in CUDA calls)
      for (const Gap& g : a.gaps)
        if (g.cause == GapCause::HostWait) {
          auto& [time, in_cuda] = by_layer[fold_indices(g.cpu_range)];
          time += g.duration();
          in_cuda += g.cpu_in_cuda;
        }
      const auto worst = std::max_element(by_layer.begin(), by_layer.end(),
                                          [](const auto& x, const auto& y) { return x.second.first < y.second.first; });
      if (worst != by_layer.end())
        v += format(" The largest waits sit in %s (%.0f%% of the idle time", worst->first.c_str(),
                    100.0 * worst->second.first / std::max<Ns>(a.idle_in_iterations, 1)) +
             (worst->second.second * 2 < worst->second.first ? "; the host was in its own code, not CUDA calls)."
                                                             : "; the host was inside CUDA calls).");
      v += " Less host work per launch, fewer and larger kernels, or a CUDA Graph (`laptime bench --graph`) take the "
           "launches off the critical path.";
    } else {
      a.bound = Bound::Mixed;
      v = "Partly idle, not mainly for the host: " + busy_words +
          format(", and only %.0f%% of the idle time waits for the host to launch; the rest had work queued ",
                 idle ? 100.0 * host_wait / idle : 0.0) +
          "(dependencies, synchronizations, kernel-boundary latency)" +
          (a.gaps.empty() ? format(", spread thin: no idle stretch is longer than %g us.", a.gap_threshold_us)
                          : ": the gap table shows the largest stretches.");
    }
  }
  if (!a.has_api_trace) {
    v += " Synchronizations cannot be seen: the capture has no CUDA API calls.";
  } else if (a.syncs.empty()) {
    v += " No synchronization, blocking copy or allocation inside the loop.";
  } else {
    std::string list;
    for (size_t i = 0; i < a.sync_summary.size(); ++i) {
      const SyncSummary& s = a.sync_summary[i];
      list += (i ? "; " : "") + format("%.2g", double(s.count) / std::max<size_t>(a.steady_count, 1)) + " " +
              sync_kind_name(s.kind) + " per iteration (in " + s.ranges.front() + ", " + ms(s.blocked) +
              " ms blocked in all)";
    }
    v += " The loop synchronizes: " + list + ". Each one stalls the host until the GPU drains; remove it.";
  }
  a.verdict = v;
}

}  // namespace

Analysis analyze(const TraceJoin& j, const ReportOptions& o) {
  const Trace& t = j.trace();
  Analysis a;
  a.source = t.source;
  for (const Gpu& g : t.gpus)
    a.gpu += (a.gpu.empty() ? "" : "; ") + g.name + (g.sm_count ? ", " + std::to_string(g.sm_count) + " SMs" : "");
  a.notes = t.notes;
  a.dropped = t.dropped;
  a.range_name = o.range;
  a.gap_threshold_us = o.gap_us;
  a.top = o.top;
  a.has_api_trace = !t.api_calls.empty();
  if (!a.has_api_trace)
    a.notes.push_back("The capture has no CUDA API calls (was it taken without --trace=cuda?): GPU work cannot be "
                      "tied to NVTX ranges.");

  // nsys traces CUDA Graphs as whole graphs unless asked for nodes: the graphs' kernels are
  // then missing from the kernel table, and iterations look idle.
  std::set<int> launched;
  for (const GpuOp& op : j.ops()) launched.insert(op.api);
  for (size_t c = 0; c < t.api_calls.size(); ++c) {
    const std::string& name = t.api_calls[c].name;
    if ((name == "cudaGraphLaunch" || name == "cuGraphLaunch") && !launched.count(static_cast<int>(c))) {
      a.notes.push_back("Some CUDA Graph launches have no kernels in the trace: capture with `nsys profile "
                        "--cuda-graph-trace=node` to see the kernels inside the graphs.");
      break;
    }
  }

  // --- Iterations and warm-up ---
  const IterationFinder finder = find_iterations(t, o.range);
  if (finder.ranges.empty()) no_iterations(t, o.range);
  const size_t n = finder.ranges.size();
  for (size_t i = 0; i < n; ++i) {
    const NvtxEvent& r = t.nvtx[finder.ranges[i]];
    Iteration it;
    it.nvtx = finder.ranges[i];
    it.index = r.has_payload ? r.payload : i;
    it.start = r.start;
    it.end = r.end;
    a.iterations.push_back(it);
  }
  auto marked_warmup = [&](const NvtxEvent& r) {
    const std::string name = t.category_name(r);
    return name.empty() ? r.category == 1 : name == "warmup";
  };
  bool any_marked = false;
  for (int r : finder.ranges) any_marked = any_marked || t.nvtx[r].category != 0;
  const std::string iters = plural(n, "`" + o.range + "` range", "`" + o.range + "` ranges");
  if (o.skip_warmup) {
    const size_t k = static_cast<size_t>(std::max(0, *o.skip_warmup));
    if (k >= n)
      throw TraceError("the trace has " + iters + " and --skip-warmup " + std::to_string(k) + " leaves none to measure.");
    for (size_t i = 0; i < k; ++i) a.iterations[i].warmup = true;
    a.warmup_rule = "the first " + std::to_string(k) + " (--skip-warmup)";
  } else if (any_marked) {
    for (size_t i = 0; i < n; ++i) a.iterations[i].warmup = marked_warmup(t.nvtx[finder.ranges[i]]);
    a.warmup_rule = "marked by the bench with NVTX category `warmup`";
    if (std::all_of(a.iterations.begin(), a.iterations.end(), [](const Iteration& it) { return it.warmup; })) {
      for (Iteration& it : a.iterations) it.warmup = false;
      a.warmup_rule = "none: every iteration is marked warm-up, so all are measured";
      a.notes.push_back("Every iteration is marked warm-up; the numbers below include warm-up costs.");
    }
  } else if (n > 1) {
    a.iterations[0].warmup = true;
    a.warmup_rule = "the first 1 (not marked in the trace; --skip-warmup K to change)";
  } else {
    a.warmup_rule = "none";
    a.notes.push_back("The trace has a single `" + o.range +
                      "` iteration, not marked warm-up: it is measured, warm-up costs and all.");
  }
  for (const Iteration& it : a.iterations) a.steady_count += it.warmup ? 0 : 1;

  // --- GPU work per iteration ---
  std::vector<std::vector<int>> ops_of(n);  // indices into j.ops(), by start
  for (size_t i = 0; i < j.ops().size(); ++i) {
    const int it = iteration_of_range(t, finder, j.ops()[i].range);
    if (it >= 0) ops_of[it].push_back(static_cast<int>(i));
  }
  const Ns threshold = static_cast<Ns>(std::llround(o.gap_us * 1000));
  for (size_t i = 0; i < n; ++i) {
    Iteration& it = a.iterations[i];
    const std::vector<int>& ops = ops_of[i];
    it.kernels = std::count_if(ops.begin(), ops.end(), [&](int k) { return j.ops()[k].kind == GpuOp::Kind::Kernel; });
    if (ops.empty()) continue;
    it.has_gpu = true;
    it.gpu_start = j.ops()[ops.front()].start;
    it.gpu_end = it.gpu_start;
    // Union of intervals: ops are by start, so one pass merges them; a stretch between
    // merged intervals is idle.
    Ns cur_end = it.gpu_start;
    int cur_last = -1;  // the op whose end is cur_end
    for (int k : ops) {
      const GpuOp& op = j.ops()[k];
      if (cur_last >= 0 && op.start > cur_end) {
        const Ns idle = op.start - cur_end;
        // Every idle stretch, however short, is either the GPU waiting for the host, or
        // waiting with its next work already queued. The work is queued once its launch call
        // has returned: a launch that began just before the GPU ran dry but returned after it
        // still kept the GPU waiting (that is what a launch-bound loop looks like).
        const bool host_wait = op.api >= 0 && t.api_calls[op.api].end > cur_end;
        if (host_wait) it.host_wait += idle;
        if (idle > threshold && !it.warmup) {
          Gap g;
          g.iteration = it.index;
          g.start = cur_end;
          g.end = op.start;
          g.before = j.ops()[cur_last].label;
          g.after = op.label;
          const NvtxEvent& ir = t.nvtx[it.nvtx];
          uint32_t pid = ir.pid, tid = ir.tid;
          if (op.api >= 0) {
            const ApiCall& launch = t.api_calls[op.api];
            g.launch = launch.name;
            g.launch_start = launch.start;
            pid = launch.pid;
            tid = launch.tid;
            g.cause = host_wait ? GapCause::HostWait : GapCause::Other;
          }
          // What the launching thread was doing: the call overlapping the gap most. Calls
          // on one thread are sequential (or nested), so scanning back from the gap's end
          // stops at the first call that ended before the gap began.
          const std::vector<int>& calls = j.thread_calls(pid, tid);
          auto pos = std::lower_bound(calls.begin(), calls.end(), g.end,
                                      [&](int c, Ns v) { return t.api_calls[c].start < v; });
          Ns best = 0, covered_until = g.end;
          while (pos != calls.begin()) {
            const ApiCall& c = t.api_calls[*--pos];
            const Ns overlap = std::min(c.end, g.end) - std::max(c.start, g.start);
            if (overlap > best) {
              best = overlap;
              g.cpu_api = c.name;
            }
            // Time inside any CUDA call, nested calls counted once (walking back in time).
            const Ns lo = std::max(c.start, g.start), hi = std::min(c.end, covered_until);
            if (hi > lo) {
              g.cpu_in_cuda += hi - lo;
              covered_until = lo;
            }
            if (c.end <= g.start) break;
          }
          g.cpu_range = range_text(t, j.innermost_range(pid, tid, g.start + g.duration() / 2));
          a.gaps.push_back(std::move(g));
          ++it.gaps;
          it.gap_time += idle;
        }
      }
      if (cur_last < 0 || op.start > cur_end) {
        it.busy += op.end - op.start;
        cur_end = op.end;
        cur_last = k;
      } else if (op.end > cur_end) {
        it.busy += op.end - cur_end;
        cur_end = op.end;
        cur_last = k;
      }
    }
    it.gpu_end = cur_end;
  }
  std::stable_sort(a.gaps.begin(), a.gaps.end(), [](const Gap& x, const Gap& y) { return x.duration() > y.duration(); });
  for (const Iteration& it : a.iterations)
    if (!it.warmup) a.host_wait_idle += it.host_wait;

  // --- Iteration statistics ---
  std::vector<double> host, gpu, busy, period;
  const Iteration* prev = nullptr;
  std::vector<std::pair<Ns, int>> spans;
  for (size_t i = 0; i < n; ++i) {
    const Iteration& it = a.iterations[i];
    if (it.warmup) {
      prev = nullptr;
      continue;
    }
    host.push_back(double(it.duration()));
    if (it.has_gpu) {
      gpu.push_back(double(it.gpu_span()));
      busy.push_back(it.gpu_span() ? 100.0 * it.busy / it.gpu_span() : 100.0);
      a.idle_in_iterations += it.gpu_span() - it.busy;
      spans.emplace_back(it.gpu_span(), static_cast<int>(i));
      if (prev && prev->has_gpu) {
        period.push_back(double(it.gpu_start - prev->gpu_start));
        const Ns gpu_idle_from = prev->gpu_end, gpu_idle_to = it.gpu_start;
        if (gpu_idle_to > gpu_idle_from) {
          a.between_iterations += gpu_idle_to - gpu_idle_from;
          // The host outside both iteration ranges while the GPU idled: the loop body
          // between forwards (loading the next batch, logging) holds the GPU up.
          const Ns lo = std::max(gpu_idle_from, prev->end), hi = std::min(gpu_idle_to, it.start);
          if (hi > lo) a.input_wait += hi - lo;
        }
      }
    }
    prev = &it;
  }
  auto to_ms = [](Summary s) {
    s.mean /= 1e6; s.median /= 1e6; s.min /= 1e6; s.max /= 1e6;
    return s;
  };
  a.host_ms = to_ms(summarize(host));
  a.gpu_ms = to_ms(summarize(gpu));
  a.busy_pct = summarize(busy);
  a.period_ms = to_ms(summarize(period));
  if (!spans.empty()) {
    std::sort(spans.begin(), spans.end());
    a.svg_iteration = spans[spans.size() / 2].second;  // the upper median: a real iteration
  }

  // --- Kernel mix over steady iterations ---
  std::map<Category, CategoryRow> cats;
  for (int c = 0; c < kCategoryCount; ++c) cats[static_cast<Category>(c)].category = static_cast<Category>(c);
  std::map<std::pair<std::string, Category>, KernelRow> kernels;
  std::map<std::string, RangeRow> ranges, patterns;
  for (size_t i = 0; i < n; ++i) {
    if (a.iterations[i].warmup) continue;
    for (int k : ops_of[i]) {
      const GpuOp& op = j.ops()[k];
      const Ns d = op.end - op.start;
      a.gpu_time += d;
      CategoryRow& c = cats[op.category];
      ++c.count;
      c.time += d;
      KernelRow& kr = kernels[{op.label, op.category}];
      if (kr.count == 0) {
        kr.name = op.label;
        kr.category = op.category;
        kr.min = d;
      }
      ++kr.count;
      kr.time += d;
      kr.min = std::min(kr.min, d);
      kr.max = std::max(kr.max, d);
      const std::string rname = range_text(t, op.range);
      for (auto* table : {&ranges, &patterns}) {
        const std::string key = table == &ranges ? rname : fold_indices(rname);
        RangeRow& rr = (*table)[key];
        rr.range = key;
        ++rr.count;
        rr.time += d;
        rr.time_by_category[static_cast<int>(op.category)] += d;
      }
      if (op.kind == GpuOp::Kind::Memcpy && t.memcpys[op.index].kind == CopyKind::HtoD) a.htod_time += d;
    }
  }
  for (auto& [c, row] : cats) a.categories.push_back(row);
  std::stable_sort(a.categories.begin(), a.categories.end(), [](const CategoryRow& x, const CategoryRow& y) { return x.time > y.time; });
  for (auto& [key, row] : kernels) a.kernels.push_back(row);
  std::stable_sort(a.kernels.begin(), a.kernels.end(), [](const KernelRow& x, const KernelRow& y) { return x.time > y.time; });
  for (auto* table : {&ranges, &patterns}) {
    std::vector<RangeRow>& out = table == &ranges ? a.ranges : a.range_patterns;
    for (auto& [key, row] : *table) out.push_back(row);
    std::stable_sort(out.begin(), out.end(), [](const RangeRow& x, const RangeRow& y) { return x.time > y.time; });
  }

  // --- Synchronizations ---
  // By name, by the copy records (an "Async" copy from pageable memory blocks the host all
  // the same), and by CUPTI's synchronization records for calls the name rules don't know.
  std::map<int, SyncKind> sync_calls;
  for (size_t c = 0; c < t.api_calls.size(); ++c)
    if (auto k = sync_kind_of(t.api_calls[c].name); k && !nested_in_runtime_call(j, static_cast<int>(c)))
      sync_calls[static_cast<int>(c)] = *k;
  for (const Memcpy& m : t.memcpys) {
    const int c = t.api_index_for(m.pid, m.correlation);
    if (c >= 0 && m.pageable() && m.host_sync == HostSync::Async) sync_calls[c] = SyncKind::PageableCopy;
  }
  for (const SyncEvent& s : t.syncs) {
    const int c = t.api_index_for(s.pid, s.correlation);
    if (c < 0 || sync_calls.count(c) || s.type == SyncType::StreamWaitEvent) continue;
    sync_calls[c] = s.type == SyncType::ContextSynchronize ? SyncKind::DeviceSync
                    : s.type == SyncType::EventSynchronize ? SyncKind::EventSync
                                                           : SyncKind::StreamSync;
  }
  std::map<int, const Memcpy*> copy_of;  // for copy details
  for (const Memcpy& m : t.memcpys) {
    const int c = t.api_index_for(m.pid, m.correlation);
    if (c >= 0) copy_of[c] = &m;
  }
  std::map<SyncKind, SyncSummary> summary;
  std::map<SyncKind, std::map<std::string, size_t>> where;
  for (const auto& [c, kind] : sync_calls) {
    const ApiCall& call = t.api_calls[c];
    SyncCall s;
    s.kind = kind;
    s.api = call.name;
    s.start = call.start;
    s.duration = call.end - call.start;
    const int range = j.api_range(c);
    s.range = range_text(t, range);
    const int it = iteration_of_range(t, finder, range);
    if (auto m = copy_of.find(c); m != copy_of.end())
      s.detail = std::string(copy_kind_name(m->second->kind)) + " " + bytes_str(m->second->bytes) + ", " +
                 mem_kind_name(m->second->src) + " -> " + mem_kind_name(m->second->dst);
    if (it >= 0) {
      s.iteration = static_cast<int64_t>(a.iterations[it].index);
      s.warmup = a.iterations[it].warmup;
    }
    if (it >= 0 && !s.warmup) {
      SyncSummary& sum = summary[kind];
      sum.kind = kind;
      ++sum.count;
      sum.blocked += s.duration;
      ++where[kind][s.range];
      a.syncs.push_back(std::move(s));
    } else {
      a.syncs_elsewhere.push_back(std::move(s));
    }
  }
  auto by_start = [](const SyncCall& x, const SyncCall& y) { return x.start < y.start; };
  std::sort(a.syncs.begin(), a.syncs.end(), by_start);
  std::sort(a.syncs_elsewhere.begin(), a.syncs_elsewhere.end(), by_start);
  for (auto& [kind, sum] : summary) {
    std::vector<std::pair<size_t, std::string>> rs;
    for (const auto& [r, count] : where[kind]) rs.emplace_back(count, r);
    std::stable_sort(rs.begin(), rs.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    for (const auto& [count, r] : rs) sum.ranges.push_back(r);
    a.sync_summary.push_back(sum);
  }

  write_verdict(a);
  return a;
}

// --- Text ----------------------------------------------------------------------------------------

namespace {

// Display width of UTF-8 text ("µs" is two bytes, one column).
size_t width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}

// An aligned text table: 'l' or 'r' per column.
class Table {
 public:
  Table(std::vector<std::string> headers, std::string align) : align_(std::move(align)) { rows_.push_back(std::move(headers)); }
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void print(std::FILE* out, int indent) const {
    std::vector<size_t> w(align_.size(), 0);
    for (const auto& r : rows_)
      for (size_t c = 0; c < r.size(); ++c) w[c] = std::max(w[c], width(r[c]));
    for (const auto& r : rows_) {
      std::string line(indent, ' ');
      for (size_t c = 0; c < r.size(); ++c) {
        const std::string pad(w[c] - width(r[c]), ' ');
        const bool last = c + 1 == r.size();
        line += align_[c] == 'r' ? pad + r[c] : (last ? r[c] : r[c] + pad);
        if (!last) line += "  ";
      }
      std::fprintf(out, "%s\n", line.c_str());
    }
  }

 private:
  std::string align_;
  std::vector<std::vector<std::string>> rows_;
};

std::string pct(double x) { return format("%.1f%%", x); }
std::string share(Ns part, Ns whole) { return whole ? pct(100.0 * part / whole) : "-"; }
std::string per_iter(double x, size_t iters, const char* f = "%.3f") { return format(f, iters ? x / iters : 0.0); }

void print_wrapped(std::FILE* out, const std::string& text, size_t indent, size_t columns = 100) {
  std::string line;
  size_t start = 0;
  while (start < text.size()) {
    size_t sp = text.find(' ', start);
    if (sp == std::string::npos) sp = text.size();
    const std::string word = text.substr(start, sp - start);
    if (!line.empty() && indent + width(line) + 1 + width(word) > columns) {
      std::fprintf(out, "%*s%s\n", static_cast<int>(indent), "", line.c_str());
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = sp + 1;
  }
  if (!line.empty()) std::fprintf(out, "%*s%s\n", static_cast<int>(indent), "", line.c_str());
}

}  // namespace

void print_report(const Analysis& a, std::FILE* out) {
  const size_t iters = a.steady_count;
  const size_t top = static_cast<size_t>(std::max(a.top, 1));
  std::fprintf(out, "  source      %s\n", a.source.c_str());
  if (!a.gpu.empty()) std::fprintf(out, "  gpu         %s\n", a.gpu.c_str());
  std::fprintf(out, "  iterations  %zu `%s` ranges: %zu warm-up (%s), %zu steady\n", a.iterations.size(),
               a.range_name.c_str(), a.iterations.size() - iters, a.warmup_rule.c_str(), iters);
  if (a.dropped.total()) std::fprintf(out, "  invalid     %s\n", a.dropped.summary().c_str());
  for (const std::string& note : a.notes) {
    std::fprintf(out, "  note\n");
    print_wrapped(out, note, 4);
  }

  std::fprintf(out, "\n1. Steady-state time per iteration (ms, %zu iterations)\n", iters);
  Table t1({"", "mean", "median", "min", "max"}, "lrrrr");
  auto srow = [&](const std::string& name, const Summary& s) {
    if (s.n) t1.row({name, format("%.3f", s.mean), format("%.3f", s.median), format("%.3f", s.min), format("%.3f", s.max)});
  };
  srow("host: NVTX range", a.host_ms);
  srow("GPU: range projected", a.gpu_ms);
  srow("GPU: start to next start", a.period_ms);
  t1.print(out, 2);
  std::fprintf(out, "  (host = the range as the CPU ran it; projected = first start to last end of the GPU work\n"
                    "   launched inside it; start to next start = the lap one iteration costs in a loop)\n");

  std::fprintf(out, "\n2. GPU utilization inside steady iterations\n");
  if (a.busy_pct.n == 0) {
    std::fprintf(out, "  no GPU work was launched inside the steady iterations\n");
  } else {
    Ns gap_time = 0, gap_host_wait = 0;
    for (const Gap& g : a.gaps) {
      gap_time += g.duration();
      gap_host_wait += g.cause == GapCause::HostWait ? g.duration() : 0;
    }
    std::fprintf(out, "  busy        %.1f%% median (min %.1f%%, max %.1f%%) of the projected GPU span\n",
                 a.busy_pct.median, a.busy_pct.min, a.busy_pct.max);
    std::fprintf(out, "  idle        %s ms per iteration inside the span, %s of it waiting for the host to launch\n",
                 per_iter(a.idle_in_iterations / 1e6, iters).c_str(), share(a.host_wait_idle, a.idle_in_iterations).c_str());
    if (a.period_ms.n)  // one fewer pair of consecutive iterations than iterations
      std::fprintf(out, "              %s ms from one iteration's last GPU work to the next one's first\n",
                   per_iter(a.between_iterations / 1e6, a.period_ms.n).c_str());
    if (a.gaps.empty())
      std::fprintf(out, "  gaps        none longer than %g us: the idle time is spread over kernel boundaries\n",
                   a.gap_threshold_us);
    else
      std::fprintf(out, "  gaps        %.1f per iteration longer than %g us (%zu in all, %s ms), %s of their time host-wait\n",
                   double(a.gaps.size()) / std::max<size_t>(iters, 1), a.gap_threshold_us, a.gaps.size(),
                   ms(gap_time).c_str(), share(gap_host_wait, gap_time).c_str());
    if (!a.gaps.empty()) {
      std::fprintf(out, "\n  largest gaps (host-wait: the launch call had not returned when the GPU went idle)\n");
      Table tg({"iter", "at (ms)", "gap (us)", "cause", "launch", "CPU meanwhile", "next GPU work"}, "rrrllll");
      std::map<uint64_t, Ns> gpu_start;
      for (const Iteration& it : a.iterations) gpu_start[it.index] = it.gpu_start;
      for (size_t i = 0; i < a.gaps.size() && i < top; ++i) {
        const Gap& g = a.gaps[i];
        // A launch of 10 us inside a 200 us gap is not what the host was doing: say so.
        const std::string cpu =
            g.cpu_in_cuda * 2 >= g.duration()
                ? g.cpu_api + " in " + g.cpu_range
                : "host code in " + g.cpu_range + format(" (%.0f%% in CUDA calls)", 100.0 * g.cpu_in_cuda / g.duration());
        tg.row({std::to_string(g.iteration), ms(g.start - gpu_start[g.iteration]), us(g.duration()),
                gap_cause_name(g.cause), g.launch.empty() ? "-" : g.launch, cpu, g.after});
      }
      tg.print(out, 4);
    }
  }

  std::fprintf(out, "\n3. Kernel mix (steady iterations: GPU time %s ms, %s ms per iteration)\n", ms(a.gpu_time).c_str(),
               per_iter(a.gpu_time / 1e6, iters).c_str());
  Table tc({"category", "ms/iter", "share", "ops/iter"}, "lrrr");
  for (const CategoryRow& c : a.categories)
    if (c.count)
      tc.row({category_name(c.category), per_iter(c.time / 1e6, iters), share(c.time, a.gpu_time),
              per_iter(double(c.count), iters, "%.1f")});
  tc.print(out, 2);
  std::fprintf(out, "\n  top kernels by GPU time\n");
  // The name last and whole: cuDNN's names differ only in the middle (tile sizes).
  Table tk({"share", "ms/iter", "calls/iter", "mean (us)", "category", "kernel"}, "rrrrll");
  for (size_t i = 0; i < a.kernels.size() && i < top; ++i) {
    const KernelRow& k = a.kernels[i];
    tk.row({share(k.time, a.gpu_time), per_iter(k.time / 1e6, iters), per_iter(double(k.count), iters, "%.1f"),
            us(k.time / static_cast<Ns>(k.count)), category_name(k.category), k.name});
  }
  if (a.kernels.size() > top) tk.row({"", "", "", "", "", format("(%zu more)", a.kernels.size() - top)});
  tk.print(out, 4);
  std::fprintf(out, "\n  by layer (innermost NVTX range of the launch; block indices folded)\n");
  Table tr({"range", "ops/iter", "ms/iter", "share", "mostly"}, "lrrrl");
  for (const RangeRow& r : a.range_patterns) {
    int best = 0;
    for (int c = 1; c < kCategoryCount; ++c)
      if (r.time_by_category[c] > r.time_by_category[best]) best = c;
    tr.row({r.range, per_iter(double(r.count), iters, "%.1f"), per_iter(r.time / 1e6, iters), share(r.time, a.gpu_time),
            category_name(static_cast<Category>(best))});
  }
  tr.print(out, 4);

  std::fprintf(out, "\n4. Synchronization inside steady iterations\n");
  if (!a.has_api_trace) {
    std::fprintf(out, "  unknown: the capture has no CUDA API calls\n");
  } else if (a.syncs.empty()) {
    std::fprintf(out, "  none: no device/stream/event synchronize, blocking copy, pageable async copy, or\n"
                      "  allocation/free inside the loop\n");
  } else {
    Table ts({"kind", "per iter", "blocked (ms)", "in"}, "lrrl");
    for (const SyncSummary& s : a.sync_summary) {
      std::string in;
      for (size_t i = 0; i < s.ranges.size() && i < 3; ++i) in += (i ? ", " : "") + s.ranges[i];
      ts.row({sync_kind_name(s.kind), per_iter(double(s.count), iters, "%.2f"), ms(s.blocked), in});
    }
    ts.print(out, 2);
    std::fprintf(out, "\n  calls\n");
    Table tl({"iter", "api", "range", "blocked (us)", "copy"}, "rllrl");
    for (size_t i = 0; i < a.syncs.size() && i < top; ++i) {
      const SyncCall& s = a.syncs[i];
      tl.row({std::to_string(s.iteration), s.api, s.range, us(s.duration), s.detail});
    }
    if (a.syncs.size() > top) tl.row({"", format("(%zu more)", a.syncs.size() - top), "", "", ""});
    tl.print(out, 4);
  }
  if (!a.syncs_elsewhere.empty()) {
    std::map<std::string, size_t> counts;
    for (const SyncCall& s : a.syncs_elsewhere) ++counts[s.api];
    std::string list;
    for (const auto& [api, count] : counts) list += (list.empty() ? "" : ", ") + std::to_string(count) + "x " + api;
    std::fprintf(out, "  outside steady iterations (warm-up, setup, after the loop; not counted): %s\n", list.c_str());
  }

  std::fprintf(out, "\nVerdict: %s\n", bound_name(a.bound));
  print_wrapped(out, a.verdict, 2);
}

// --- JSON ----------------------------------------------------------------------------------------

nlohmann::json to_json(const Analysis& a) {
  using nlohmann::json;
  auto summary = [](const Summary& s) {
    return json{{"n", s.n}, {"mean", s.mean}, {"median", s.median}, {"min", s.min}, {"max", s.max}};
  };
  json j;
  j["schema"] = "laptime.analyze/1";
  j["source"] = a.source;
  j["gpu"] = a.gpu;
  j["notes"] = a.notes;
  j["dropped_rows"] = dropped_json(a.dropped);
  j["range"] = a.range_name;
  j["warmup_rule"] = a.warmup_rule;
  j["gap_threshold_us"] = a.gap_threshold_us;
  j["steady_iterations"] = a.steady_count;
  json iters = json::array();
  for (const Iteration& it : a.iterations) {
    json x{{"index", it.index}, {"warmup", it.warmup}, {"start_ns", it.start}, {"host_ns", it.duration()},
           {"kernels", it.kernels}};
    if (it.has_gpu) {
      x["gpu_start_ns"] = it.gpu_start;
      x["gpu_ns"] = it.gpu_span();
      x["busy_ns"] = it.busy;
      x["busy_pct"] = it.gpu_span() ? 100.0 * it.busy / it.gpu_span() : 100.0;
      x["gaps"] = it.gaps;
      x["gap_ns"] = it.gap_time;
      x["host_wait_ns"] = it.host_wait;
    }
    iters.push_back(x);
  }
  j["iterations"] = iters;
  j["time_ms"] = {{"host", summary(a.host_ms)}, {"gpu", summary(a.gpu_ms)}, {"period", summary(a.period_ms)}};
  Ns gap_time = 0, host_wait = 0;
  for (const Gap& g : a.gaps) {
    gap_time += g.duration();
    host_wait += g.cause == GapCause::HostWait ? g.duration() : 0;
  }
  json gaps = json::array();
  for (size_t i = 0; i < a.gaps.size() && i < static_cast<size_t>(std::max(a.top, 1)); ++i) {
    const Gap& g = a.gaps[i];
    gaps.push_back({{"iteration", g.iteration}, {"start_ns", g.start}, {"duration_ns", g.duration()},
                    {"cause", gap_cause_name(g.cause)}, {"before", g.before}, {"after", g.after},
                    {"launch", g.launch}, {"launch_start_ns", g.launch_start}, {"cpu_api", g.cpu_api},
                    {"cpu_in_cuda_ns", g.cpu_in_cuda},
                    {"cpu_range", g.cpu_range}});
  }
  j["utilization"] = {{"busy_pct", summary(a.busy_pct)},
                      {"idle_in_iterations_ns", a.idle_in_iterations},
                      {"between_iterations_ns", a.between_iterations},
                      {"input_wait_ns", a.input_wait},
                      {"htod_ns", a.htod_time},
                      {"gap_count", a.gaps.size()},
                      {"gap_ns", gap_time},
                      {"host_wait_gap_ns", host_wait},
                      {"host_wait_idle_ns", a.host_wait_idle},
                      {"largest_gaps", gaps}};
  json cats = json::array();
  for (const CategoryRow& c : a.categories)
    cats.push_back({{"category", category_name(c.category)}, {"count", c.count}, {"time_ns", c.time}});
  json kernels = json::array();
  for (const KernelRow& k : a.kernels)
    kernels.push_back({{"name", k.name}, {"category", category_name(k.category)}, {"count", k.count},
                       {"time_ns", k.time}, {"min_ns", k.min}, {"max_ns", k.max}});
  auto range_rows = [](const std::vector<RangeRow>& rows) {
    json out = json::array();
    for (const RangeRow& r : rows) {
      json by = json::object();
      for (int c = 0; c < kCategoryCount; ++c)
        if (r.time_by_category[c]) by[category_name(static_cast<Category>(c))] = r.time_by_category[c];
      out.push_back({{"range", r.range}, {"count", r.count}, {"time_ns", r.time}, {"by_category_ns", by}});
    }
    return out;
  };
  j["kernel_mix"] = {{"gpu_time_ns", a.gpu_time},
                     {"categories", cats},
                     {"kernels", kernels},
                     {"ranges", range_rows(a.ranges)},
                     {"range_patterns", range_rows(a.range_patterns)}};
  auto sync_call = [](const SyncCall& s) {
    return json{{"kind", sync_kind_name(s.kind)}, {"api", s.api}, {"iteration", s.iteration}, {"warmup", s.warmup},
                {"range", s.range}, {"start_ns", s.start}, {"duration_ns", s.duration}, {"copy", s.detail}};
  };
  json calls = json::array(), elsewhere = json::array(), sums = json::array();
  for (const SyncCall& s : a.syncs) calls.push_back(sync_call(s));
  for (const SyncCall& s : a.syncs_elsewhere) elsewhere.push_back(sync_call(s));
  for (const SyncSummary& s : a.sync_summary)
    sums.push_back({{"kind", sync_kind_name(s.kind)}, {"count", s.count},
                    {"per_iteration", a.steady_count ? double(s.count) / a.steady_count : 0.0},
                    {"blocked_ns", s.blocked}, {"ranges", s.ranges}});
  j["synchronization"] = {{"api_trace", a.has_api_trace}, {"summary", sums}, {"calls", calls},
                          {"outside_steady", elsewhere}};
  j["verdict"] = {{"bound", bound_name(a.bound)}, {"text", a.verdict}};
  return j;
}

}  // namespace laptime::trace
