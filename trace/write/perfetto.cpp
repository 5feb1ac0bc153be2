#include "trace/write/perfetto.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/output_file.h"
#include "trace/model/format.h"
#include "trace/model/text.h"
#include "trace/model/progress.h"

namespace laptime::trace {
namespace {

// GPUs become processes of their own, numbered clear of real pids (which nsys keeps to 24 bits).
int64_t gpu_pid(uint32_t device) { return (int64_t{1} << 30) + device; }
// Start/end ranges need not nest with the thread's push/pop ranges: their own lane.
int64_t start_end_tid(uint32_t tid) { return (int64_t{1} << 30) + tid; }

// The document written as it is made: events appended as text to a buffer that goes to the file
// whenever it passes a few megabytes. Numbers and strings are spelled as nlohmann::json dumps
// them (its shortest round-trip doubles; names through escape_name, then its quoting), and each
// object's keys in its order (sorted), so the file is the one the JSON tree used to give.
class EventWriter {
 public:
  explicit EventWriter(OutputFile& out) : out_(out) { buf_.reserve(kFlush + 4096); }

  // A key (a literal, known to need no quoting) and then its value.
  void key(std::string_view k) {
    buf_ += first_ ? "\"" : ",\"";
    buf_ += k;
    buf_ += "\":";
    first_ = false;
  }
  void open() {
    buf_ += '{';
    first_ = true;
  }
  void close() {
    buf_ += '}';
    first_ = false;
  }
  void number(double v) {
    if (!std::isfinite(v)) {
      buf_ += "null";
      return;
    }
    char tmp[64];
    buf_.append(tmp, static_cast<size_t>(nlohmann::detail::to_chars(tmp, tmp + sizeof tmp, v) - tmp));
  }
  template <class Int>
  void integer(Int v) {
    buf_ += std::to_string(v);
  }
  // A name of the trace's pool, quoted once per distinct name.
  void name(const Name& n) {
    auto [it, fresh] = quoted_.try_emplace(n.key());
    if (fresh) it->second = quote(n.str());
    buf_ += it->second;
  }
  void text(const std::string& s) { buf_ += quote(s); }
  void raw(std::string_view s) { buf_ += s; }
  // "k":v for an integer, and "k":"text" for a literal that needs no quoting (a category, a kind).
  template <class Int>
  void integer_field(std::string_view k, Int v) {
    key(k);
    integer(v);
  }
  void literal_field(std::string_view k, std::string_view text) {
    key(k);
    buf_ += '"';
    buf_ += text;
    buf_ += '"';
  }
  // Ends an event: a separator before the next, and the buffer to the file when it is full.
  void event_done() {
    ++events_;
    if (buf_.size() >= kFlush) flush();
  }
  void flush() {
    out_.write(buf_);
    buf_.clear();
  }
  size_t events() const { return events_; }

 private:
  static constexpr size_t kFlush = 4 << 20;
  static std::string quote(const std::string& s) { return nlohmann::json(escape_name(s)).dump(); }
  OutputFile& out_;
  std::string buf_;
  bool first_ = true;
  size_t events_ = 0;
  std::unordered_map<const void*, std::string> quoted_;
};

// Trace Event timestamps are microseconds; doubles keep the nanoseconds.
double us(Ns ns) { return ns / 1000.0; }

// Writes the events, in the order the JSON tree used to hold them: lanes and their names, the CPU
// side (ranges, then calls), then each GPU operation followed by its launch's flow.
class PerfettoExport {
 public:
  PerfettoExport(const TraceJoin& j, const PerfettoWindow& w, EventWriter& out)
      : j_(j), t_(j.trace()), w_(w), out_(out) {}

  void run() {
    out_.raw("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"source\":");
    out_.text(t_.source);
    out_.raw("},\"traceEvents\":[");
    lanes();
    Progress::phase("writing the Perfetto trace");
    for (const NvtxEvent& r : t_.nvtx) {
      if (!in(r.start, r.end)) continue;
      const int64_t tid = r.kind == NvtxKind::PushPop ? int64_t{r.tid} : start_end_tid(r.tid);
      slice_head(r.text, "nvtx", r.start, r.end, r.pid, tid);
      out_.integer_field("category", r.category);
      out_.key("domain");
      out_.name(r.domain);
      if (r.has_payload) {
        out_.integer_field("payload", r.payload);
      }
      slice_tail(r.start, r.end, r.pid, tid);
    }
    for (const ApiCall& c : t_.api_calls) {
      if (!in(c.start, c.end)) continue;
      slice_head(c.name, c.kind() == ApiKind::Runtime ? "cuda_runtime" : "cuda_driver", c.start, c.end, c.pid, c.tid);
      out_.integer_field("correlation", c.correlation);
      out_.integer_field("return", c.return_value);
      slice_tail(c.start, c.end, c.pid, c.tid);
    }
    size_t done = 0;
    for (const GpuOp& op : j_.ops()) {
      if (++done % 65536 == 0) Progress::count(done, j_.ops().size(), "GPU operations");
      if (!in(op.start, op.end)) continue;
      gpu_op(op);
    }
    out_.raw("]}\n");
    out_.flush();
  }

 private:
  bool in(Ns start, Ns end) const { return w_.all || (end >= w_.lo && start <= w_.hi); }

  void separator() {
    if (any_) out_.raw(",");
    any_ = true;
  }
  void meta(const char* what, int64_t pid, int64_t tid, const char* arg, const std::string* text, int64_t number) {
    separator();
    out_.open();
    out_.key("args");
    out_.open();
    out_.key(arg);
    if (text)
      out_.text(*text);
    else
      out_.integer(number);
    out_.close();
    out_.literal_field("name", what);
    out_.literal_field("ph", "M");
    out_.integer_field("pid", pid);
    out_.integer_field("tid", tid);
    out_.close();
    out_.event_done();
  }
  // {"args":{ ... the caller's keys ... },"cat":...,"dur":...,"name":...,"ph":"X","pid":...,"tid":...,"ts":...}
  void slice_head(const Name& name, const char* cat, Ns, Ns, int64_t, int64_t) {
    separator();
    out_.open();
    out_.key("args");
    out_.open();
    pending_name_ = &name;
    pending_cat_ = cat;
  }
  void slice_tail(Ns start, Ns end, int64_t pid, int64_t tid) {
    out_.close();
    out_.literal_field("cat", pending_cat_);
    out_.key("dur");
    out_.number(us(end - start));
    out_.key("name");
    out_.name(*pending_name_);
    event_tail("X", pid, tid, start);
  }
  // The keys a slice and a flow end with, in their order, and the end of the event.
  void event_tail(const char* ph, int64_t pid, int64_t tid, Ns at) {
    out_.literal_field("ph", ph);
    out_.integer_field("pid", pid);
    out_.integer_field("tid", tid);
    out_.key("ts");
    out_.number(us(at));
    out_.close();
    out_.event_done();
  }

  void lanes() {
    std::set<std::pair<uint32_t, uint32_t>> threads, start_end_threads;
    std::set<uint32_t> pids;
    for (const ApiCall& c : t_.api_calls)
      if (in(c.start, c.end)) threads.insert({c.pid, c.tid});
    for (const NvtxEvent& r : t_.nvtx)
      if (in(r.start, r.end)) (r.kind == NvtxKind::PushPop ? threads : start_end_threads).insert({r.pid, r.tid});
    for (const auto& [pid, tid] : threads) pids.insert(pid);
    for (const auto& [pid, tid] : start_end_threads) pids.insert(pid);
    for (uint32_t pid : pids) {
      const std::string name = "process " + std::to_string(pid);
      meta("process_name", pid, 0, "name", &name, 0);
      meta("process_sort_index", pid, 0, "sort_index", nullptr, 0);
    }
    for (const auto& [pid, tid] : threads) {
      const std::string name = t_.thread_name(pid, tid);
      meta("thread_name", pid, tid, "name", &name, 0);
    }
    for (const auto& [pid, tid] : start_end_threads) {
      const std::string name = t_.thread_name(pid, tid) + " (NVTX start/end)";
      meta("thread_name", pid, start_end_tid(tid), "name", &name, 0);
    }
    std::set<std::pair<uint32_t, uint32_t>> streams;
    for (const GpuOp& op : j_.ops())
      if (in(op.start, op.end)) streams.insert({op.device, op.stream});
    std::set<uint32_t> devices;
    for (const auto& [device, stream] : streams) devices.insert(device);
    for (uint32_t d : devices) {
      std::string name = "GPU " + std::to_string(d);
      for (const Gpu& g : t_.gpus)
        if (g.id == d && !g.name.empty()) name += ": " + g.name;
      meta("process_name", gpu_pid(d), 0, "name", &name, 0);
      meta("process_sort_index", gpu_pid(d), 0, "sort_index", nullptr, 1);
    }
    for (const auto& [device, stream] : streams) {
      const std::string name = "stream " + std::to_string(stream);
      meta("thread_name", gpu_pid(device), stream, "name", &name, 0);
    }
  }

  // The ranges an operation names: its launch's and, for a graph node's work, its node's.
  void ranges_of(const GpuOp& op) {
    if (op.layer != op.range && op.layer >= 0) {
      out_.key("layer");
      out_.name(t_.nvtx[op.layer].text);
    }
  }
  void nvtx_of(const GpuOp& op) {
    if (op.range >= 0) {
      out_.key("nvtx");
      out_.name(t_.nvtx[op.range].text);
    }
  }

  void gpu_op(const GpuOp& op) {
    const char* cat = "kernel";
    slice_head(op.label, cat, op.start, op.end, gpu_pid(op.device), op.stream);
    // Each kind's args in key order.
    const char* category = category_name(op.category);
    if (op.kind == GpuOp::Kind::Kernel) {
      const Kernel& k = t_.kernels[op.index];
      out_.key("block");
      dim3(k.block);
      out_.literal_field("category", category);
      out_.integer_field("correlation", k.correlation);
      out_.key("grid");
      dim3(k.grid);
      ranges_of(op);
      out_.key("name");
      out_.name(k.name);
      nvtx_of(op);
    } else if (op.kind == GpuOp::Kind::Memcpy) {
      const Memcpy& m = t_.memcpys[op.index];
      cat = "memcpy";
      out_.integer_field("bytes", m.bytes);
      out_.literal_field("category", category);
      out_.integer_field("correlation", m.correlation);
      out_.literal_field("dst", mem_kind_name(m.dst));
      ranges_of(op);
      nvtx_of(op);
      out_.literal_field("src", mem_kind_name(m.src));
    } else if (op.kind == GpuOp::Kind::Memset) {
      const Memset& m = t_.memsets[op.index];
      cat = "memset";
      out_.integer_field("bytes", m.bytes);
      out_.literal_field("category", category);
      out_.integer_field("correlation", m.correlation);
      ranges_of(op);
      nvtx_of(op);
    } else {  // a CUDA Graph replay traced whole
      const GraphReplay& g = t_.graph_replays[op.index];
      cat = "cuda_graph";
      out_.literal_field("category", category);
      out_.integer_field("correlation", g.correlation);
      out_.integer_field("graph", g.graph);
      out_.integer_field("graph_exec", g.exec);
      ranges_of(op);
      nvtx_of(op);
    }
    pending_cat_ = cat;
    slice_tail(op.start, op.end, gpu_pid(op.device), op.stream);
    if (op.api < 0) return;
    const ApiCall& c = t_.api_calls[op.api];
    // Both ends in the window, or neither is written: an arrow from a call the file does not hold
    // would point nowhere.
    if (!in(c.start, c.end)) return;
    ++flow_;
    // Flow v1: "s" binds to the slice open on the CPU lane at its timestamp (the launch
    // call), "f" with bp=e to the slice enclosing its timestamp on the GPU lane (the kernel).
    flow_end("s", c.pid, c.tid, c.start);
    flow_end("f", gpu_pid(op.device), op.stream, op.start);
  }
  // One end of a launch's flow arrow: "s" at the call, "f" (bound to the enclosing slice, bp=e) at
  // the work.
  void flow_end(const char* ph, int64_t pid, int64_t tid, Ns at) {
    separator();
    out_.open();
    if (ph[0] == 'f') out_.literal_field("bp", "e");
    out_.literal_field("cat", "launch");
    out_.integer_field("id", flow_);
    out_.literal_field("name", "launch");
    event_tail(ph, pid, tid, at);
  }
  void dim3(const Dim3& d) {
    out_.raw("[");
    out_.integer(d.x);
    out_.raw(",");
    out_.integer(d.y);
    out_.raw(",");
    out_.integer(d.z);
    out_.raw("]");
  }

  const TraceJoin& j_;
  const Trace& t_;
  const PerfettoWindow& w_;
  EventWriter& out_;
  bool any_ = false;
  uint64_t flow_ = 0;
  const Name* pending_name_ = nullptr;
  const char* pending_cat_ = "";
};

// An iteration's time: its host range and its GPU span together.
std::pair<Ns, Ns> extent(const Iteration& it) {
  if (!it.has_gpu) return {it.start, it.end};
  return {std::min(it.start, it.gpu_start), std::max(it.end, it.gpu_end)};
}

// "N" or "N-M": iteration numbers, N <= M; nullopt for anything else.
std::optional<std::pair<uint64_t, uint64_t>> numbers(const std::string& spec) {
  const size_t dash = spec.find('-');
  auto number = [](const std::string& s) -> std::optional<uint64_t> {
    if (s.empty() || s.size() > 18 || !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
      return std::nullopt;
    return std::stoull(s);
  };
  const auto a = number(spec.substr(0, dash));
  const auto b = dash == std::string::npos ? a : number(spec.substr(dash + 1));
  if (!a || !b || *b < *a) return std::nullopt;
  return std::make_pair(*a, *b);
}

const char* const kSpellings = "auto, all, steady, an iteration number N or a range N-M";

}  // namespace

void check_perfetto_window_spec(const std::string& spec) {
  if (spec == "auto" || spec == "all" || spec == "steady" || numbers(spec)) return;
  throw TraceError("--window takes " + std::string(kSpellings) + "; got '" + detail::clip(escape_name(spec)) + "'.");
}

PerfettoWindow perfetto_window(const TraceJoin& j, const std::vector<const Iterations*>& loops,
                               const std::string& spec) {
  check_perfetto_window_spec(spec);
  PerfettoWindow w;
  if (spec == "all") return w;
  const Trace& t = j.trace();
  if (spec == "auto") {
    const size_t events = t.nvtx.size() + t.api_calls.size() + 3 * j.ops().size();  // an op and its flow's two ends
    if (events <= kPerfettoEvents) return w;
  }
  auto set = [&](Ns lo, Ns hi) {
    w.all = false;
    w.lo = lo;
    w.hi = hi;
  };
  if (loops.empty() || loops.front()->iterations.empty())
    throw TraceError("--window " + spec + " needs the iterations, and this trace has none to find.");
  const Iterations& first = *loops.front();
  if (auto range = numbers(spec)) {
    Ns lo = std::numeric_limits<Ns>::max(), hi = std::numeric_limits<Ns>::min();
    for (const Iteration& it : first.iterations)
      if (it.index >= range->first && it.index <= range->second) {
        lo = std::min(lo, extent(it).first);
        hi = std::max(hi, extent(it).second);
      }
    if (lo > hi)
      throw TraceError(detail::format(
          "--window %s: the trace has no `%s` iteration numbered so (they run %llu to %llu).", spec.c_str(),
          detail::clip(first.range_name).c_str(), static_cast<unsigned long long>(first.iterations.front().index),
          static_cast<unsigned long long>(first.iterations.back().index)));
    set(lo, hi);
    w.rule = "iterations " + spec + " (--window)";
    return w;
  }
  if (spec == "steady") {
    Ns lo = std::numeric_limits<Ns>::max(), hi = std::numeric_limits<Ns>::min();
    for (const Iterations* loop : loops)
      for (const Iteration& it : loop->iterations)
        if (it.steady()) {
          lo = std::min(lo, extent(it).first);
          hi = std::max(hi, extent(it).second);
        }
    if (lo > hi) throw TraceError("--window steady: the trace has no steady iteration.");
    set(lo, hi);
    w.rule = "the steady iterations (--window steady)";
    return w;
  }
  // auto, past the budget: the steady iterations around the median one, as many in a row as the
  // budget holds. The events a window holds are those overlapping it: the ones that start before
  // its end less those that end before its start, counted from the sorted starts and ends; an
  // operation counts three (its slice and its flow's two ends, when its launch is in the window too).
  std::vector<Ns> starts, ends, op_starts, op_ends;
  starts.reserve(t.nvtx.size() + t.api_calls.size());
  ends.reserve(starts.capacity());
  for (const NvtxEvent& r : t.nvtx) {
    starts.push_back(r.start);
    ends.push_back(r.end);
  }
  for (const ApiCall& c : t.api_calls) {
    starts.push_back(c.start);
    ends.push_back(c.end);
  }
  op_starts.reserve(j.ops().size());
  op_ends.reserve(j.ops().size());
  for (const GpuOp& op : j.ops()) {
    op_starts.push_back(op.start);
    op_ends.push_back(op.end);
  }
  for (std::vector<Ns>* v : {&starts, &ends, &op_starts, &op_ends}) std::sort(v->begin(), v->end());
  auto overlapping = [](const std::vector<Ns>& s, const std::vector<Ns>& e, Ns lo, Ns hi) {
    return static_cast<size_t>(std::upper_bound(s.begin(), s.end(), hi) - s.begin()) -
           static_cast<size_t>(std::lower_bound(e.begin(), e.end(), lo) - e.begin());
  };
  auto events_in = [&](Ns lo, Ns hi) {
    return overlapping(starts, ends, lo, hi) + 3 * overlapping(op_starts, op_ends, lo, hi);
  };
  std::vector<size_t> steady;  // positions in first.iterations
  for (size_t i = 0; i < first.iterations.size(); ++i)
    if (first.iterations[i].steady()) steady.push_back(i);
  if (steady.empty()) throw TraceError("the trace is too large to export whole and has no steady iteration to window.");
  size_t mid =
      std::find(steady.begin(), steady.end(), static_cast<size_t>(std::max(first.svg_iteration, 0))) - steady.begin();
  if (mid >= steady.size()) mid = steady.size() / 2;
  size_t a = mid, b = mid;  // the window: steady[a .. b]
  auto lo_of = [&](size_t k) { return extent(first.iterations[steady[k]]).first; };
  auto hi_of = [&](size_t k) { return extent(first.iterations[steady[k]]).second; };
  const size_t budget = kPerfettoEvents;
  for (bool grew = true; grew;) {
    grew = false;
    for (int side = 0; side < 2; ++side) {
      if (side == 0 && b + 1 < steady.size() && events_in(lo_of(a), hi_of(b + 1)) <= budget) {
        ++b;
        grew = true;
      }
      if (side == 1 && a > 0 && events_in(lo_of(a - 1), hi_of(b)) <= budget) {
        --a;
        grew = true;
      }
    }
  }
  set(lo_of(a), hi_of(b));
  const auto number = [&](size_t k) { return static_cast<unsigned long long>(first.iterations[steady[k]].index); };
  w.rule = a == b ? detail::format("steady iteration %llu, the median one", number(a))
                  : detail::format("steady iterations %llu-%llu, the %zu around the median one", number(a), number(b),
                                   b - a + 1);
  w.rule += detail::format(
      " (the trace holds more than %zu events, a file no browser loads quickly; --window all for every one)",
      kPerfettoEvents);
  return w;
}

void write_perfetto(const TraceJoin& j, const std::string& path, const PerfettoWindow& window) {
  try {
    OutputFile file({"Perfetto trace", path});
    EventWriter out(file);
    PerfettoExport(j, window, out).run();
    file.commit();
  } catch (const OutputError& e) {
    throw TraceError(e.what());
  }
}

}  // namespace laptime::trace
