#include "trace/analyses/sync.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <tuple>

#include "trace/model/format.h"

namespace laptime::trace {

const char* sync_kind_name(SyncKind k) {
  switch (k) {
    case SyncKind::DeviceSync:
      return "device synchronize";
    case SyncKind::StreamSync:
      return "stream synchronize";
    case SyncKind::EventSync:
      return "event synchronize";
    case SyncKind::BlockingCopy:
      return "blocking copy";
    case SyncKind::PageableCopy:
      return "async copy from/to pageable memory";
    case SyncKind::Allocation:
      return "allocation/free";
  }
  return "?";
}

const char* sync_effect_name(SyncEffect e) {
  switch (e) {
    case SyncEffect::Stall:
      return "stall";
    case SyncEffect::ReturnedAtOnce:
      return "returned at once";
    case SyncEffect::NoWait:
      return "did not wait";
    case SyncEffect::QueueEmpty:
      return "queue empty";
    case SyncEffect::Unknown:
      return "unknown";
  }
  return "?";
}

const char* sync_where_name(SyncWhere w) {
  switch (w) {
    case SyncWhere::Steady:
      return "steady";
    case SyncWhere::Warmup:
      return "warm-up";
    case SyncWhere::HostAhead:
      return "host ran ahead";
    case SyncWhere::BeforeLoop:
      return "before the loop";
    case SyncWhere::Between:
      return "between iterations";
    case SyncWhere::AfterLoop:
      return "after the loop";
  }
  return "?";
}

namespace {

// Which host calls stop the loop, by name. Stream-ordered allocations (cudaMallocAsync,
// cudaFreeAsync) do not, and cudaStreamWaitEvent waits on the GPU, not the host.
std::optional<SyncKind> sync_kind_of(const std::string& api) {
  static const std::set<std::string> kDevice{"cudaDeviceSynchronize", "cudaThreadSynchronize", "cuCtxSynchronize"};
  static const std::set<std::string> kStream{"cudaStreamSynchronize", "cuStreamSynchronize"};
  static const std::set<std::string> kEvent{"cudaEventSynchronize", "cuEventSynchronize"};
  static const std::set<std::string> kAlloc{
      "cudaMalloc",      "cudaFree",      "cudaMallocHost",  "cudaFreeHost",      "cudaHostAlloc",  "cudaMallocManaged",
      "cudaMallocPitch", "cudaMalloc3D",  "cudaMallocArray", "cudaFreeArray",     "cuMemAlloc",     "cuMemFree",
      "cuMemAllocHost",  "cuMemFreeHost", "cuMemHostAlloc",  "cuMemAllocManaged", "cuMemAllocPitch"};
  if (kDevice.count(api)) return SyncKind::DeviceSync;
  if (kStream.count(api)) return SyncKind::StreamSync;
  if (kEvent.count(api)) return SyncKind::EventSync;
  if (kAlloc.count(api)) return SyncKind::Allocation;
  if ((api.rfind("cudaMemcpy", 0) == 0 || api.rfind("cuMemcpy", 0) == 0) && !detail::has(api, "Async"))
    return SyncKind::BlockingCopy;
  return std::nullopt;
}

// CUPTI records the driver calls a runtime call makes as calls of their own (a
// cudaStreamSynchronize holds a cuStreamSynchronize): only the outer one counts.
bool nested_in_runtime_call(const TraceJoin& j, int c) {
  const Trace& t = j.trace();
  const ApiCall& call = t.api_calls[c];
  if (call.kind() != ApiKind::Driver) return false;
  const ThreadCalls calls = j.thread_calls(call.pid, call.tid);
  auto pos =
      std::upper_bound(calls.begin(), calls.end(), call.start, [&](Ns v, int x) { return v < t.api_calls[x].start; });
  // The outer call started at or before this one; a few calls back is as far as it can be.
  for (int n = 0; pos != calls.begin() && n < 8; ++n) {
    const ApiCall& other = t.api_calls[*--pos];
    if (*pos != c && other.kind() == ApiKind::Runtime && other.start <= call.start && other.end >= call.end)
      return true;
  }
  return false;
}

// When the compute stream's work launched before a time ends (0 when none was), excluding
// nothing: a call's own work is launched at its start, not before it. Answered once for the
// times the blocking calls ask about, by one sweep over the stream's work in launch order, so the
// stream's million ops are not copied.
struct StreamQueue {
  std::vector<Ns> at, pending;  // the times asked about, ascending, and when the work before each ends
  Ns pending_end(Ns t) const {
    const auto k = std::lower_bound(at.begin(), at.end(), t);
    return k == at.end() || *k != t ? 0 : pending[static_cast<size_t>(k - at.begin())];
  }
};

// Clocks: the GPU timestamps are mapped onto the host's; a synchronize returns a few
// microseconds after the work it waited for, never long before.
constexpr Ns kClockSlack = 2'000;

using StreamKey = std::tuple<uint32_t, uint32_t, uint32_t>;  // (pid, device, stream)

// The compute stream: most GPU time over the steady iterations; none without GPU work.
std::optional<StreamKey> compute_stream_of(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of,
                                           const std::vector<Iteration>& iterations) {
  std::map<StreamKey, Ns> time_by_stream;
  for (size_t i = 0; i < iterations.size(); ++i)
    if (iterations[i].steady())
      for (int k : ops_of[i]) {
        const GpuOp& op = j.ops()[k];
        time_by_stream[{op.pid, op.device, op.stream}] += op.end - op.start;
      }
  std::optional<StreamKey> compute;
  for (const auto& [key, time] : time_by_stream)
    if (!compute || time > time_by_stream[*compute]) compute = key;
  return compute;
}

StreamQueue queue_of(const TraceJoin& j, const StreamKey& stream, std::vector<Ns> at) {
  const Trace& t = j.trace();
  auto on_stream = [&stream](const GpuOp& op) { return std::make_tuple(op.pid, op.device, op.stream) == stream; };
  auto launched = [&t](const GpuOp& op) { return op.api >= 0 ? t.api_calls[op.api].start : op.start; };
  StreamQueue queue;
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end()), at.end());
  queue.at = std::move(at);
  queue.pending.assign(queue.at.size(), 0);
  // One stream runs its work in launch order, and the ops come by start: launched in order but
  // for clock skew between host and device.
  bool in_order = true;
  Ns last = 0;
  for (const GpuOp& op : j.ops())
    if (on_stream(op)) {
      if (launched(op) < last) {
        in_order = false;
        break;
      }
      last = launched(op);
    }
  if (in_order) {
    size_t q = 0;
    Ns drained = 0;  // the largest end of the work launched so far
    for (const GpuOp& op : j.ops())
      if (on_stream(op)) {
        for (const Ns l = launched(op); q < queue.at.size() && queue.at[q] <= l; ++q) queue.pending[q] = drained;
        drained = std::max(drained, op.end);
      }
    for (; q < queue.at.size(); ++q) queue.pending[q] = drained;
    return queue;
  }
  std::vector<std::pair<Ns, Ns>> work;  // (launched, running max of the ends), by launch
  for (const GpuOp& op : j.ops())
    if (on_stream(op)) work.emplace_back(launched(op), op.end);
  std::sort(work.begin(), work.end());
  Ns drained = 0;
  for (auto& w : work) w.second = drained = std::max(drained, w.second);
  for (size_t q = 0; q < queue.at.size(); ++q) {
    const auto k = std::lower_bound(work.begin(), work.end(), queue.at[q],
                                    [](const std::pair<Ns, Ns>& w, Ns v) { return w.first < v; });
    queue.pending[q] = k == work.begin() ? 0 : (k - 1)->second;
  }
  return queue;
}

// The blocking calls (indices into Trace::api_calls): by name, by the copy records, by
// CUPTI's synchronization records; with the stream each copied on or waited for and the copy
// each made.
struct BlockingCalls {
  std::map<int, SyncKind> kind;
  std::map<int, uint32_t> stream;
  std::map<int, const Memcpy*> copy;
};

BlockingCalls blocking_calls(const TraceJoin& j) {
  const Trace& t = j.trace();
  BlockingCalls b;
  std::unordered_map<const void*, std::optional<SyncKind>> kind_of_name;  // each distinct API name once
  for (size_t c = 0; c < t.api_calls.size(); ++c) {
    auto [k, fresh] = kind_of_name.try_emplace(t.api_calls[c].name.key());
    if (fresh) k->second = sync_kind_of(t.api_calls[c].name);
    if (k->second && !nested_in_runtime_call(j, static_cast<int>(c))) b.kind[static_cast<int>(c)] = *k->second;
  }
  for (const Memcpy& m : t.memcpys) {
    const int c = m.api;
    if (c >= 0 && m.pageable() && m.host_sync == HostSync::Async) b.kind[c] = SyncKind::PageableCopy;
  }
  for (const SyncEvent& s : t.syncs) {
    const int c = s.api;
    if (c < 0 || s.type == SyncType::StreamWaitEvent) continue;
    b.stream[c] = s.stream;
    if (b.kind.count(c)) continue;
    b.kind[c] = s.type == SyncType::ContextSynchronize ? SyncKind::DeviceSync
                : s.type == SyncType::EventSynchronize ? SyncKind::EventSync
                                                       : SyncKind::StreamSync;
  }
  for (const Memcpy& m : t.memcpys) {
    const int c = m.api;
    if (c >= 0) {
      b.copy[c] = &m;
      b.stream[c] = m.stream;
    }
  }
  return b;
}

// One blocking call, measured against the compute stream when it has one (the module comment
// says how); its iteration, warm-up or not, left for the caller.
SyncCall measure_call(const TraceJoin& j, const BlockingCalls& b, int c, SyncKind kind,
                      const std::optional<StreamKey>& compute, const StreamQueue& queue) {
  const Trace& t = j.trace();
  const ApiCall& call = t.api_calls[c];
  SyncCall s;
  s.kind = kind;
  s.api = call.name;
  s.start = call.start;
  s.duration = call.end - call.start;
  if (auto st = b.stream.find(c); st != b.stream.end()) s.stream = static_cast<int64_t>(st->second);
  s.range = detail::range_name(t, j.api_range(c));
  const auto copy = b.copy.find(c);
  if (copy != b.copy.end())
    s.detail = std::string(copy_kind_name(copy->second->kind)) + " " + detail::bytes_str(copy->second->bytes) + ", " +
               mem_kind_name(copy->second->src) + " -> " + mem_kind_name(copy->second->dst);
  if (compute && call.pid == std::get<0>(*compute)) {
    const Ns pending_end = queue.pending_end(call.start);
    s.pending = std::max<Ns>(0, pending_end - call.start);
    // A synchronize or a device-to-host copy reads back what the GPU computed; a
    // host-to-device copy or an allocation returning early reads nothing stale.
    const bool reads = kind == SyncKind::DeviceSync || kind == SyncKind::StreamSync || kind == SyncKind::EventSync ||
                       (copy != b.copy.end() && copy->second->kind == CopyKind::DtoH);
    s.effect = s.pending == 0                          ? SyncEffect::QueueEmpty
               : call.end + kClockSlack >= pending_end ? SyncEffect::Stall
               : reads                                 ? SyncEffect::ReturnedAtOnce
                                                       : SyncEffect::NoWait;
  }
  return s;
}

// Where the calls sat (the module comment): each distinct range folded once, each group keeping
// its count, its first call's start and whether it holds one range only.
class PlaceCounter {
 public:
  void add(const void* key, const std::string& range, Ns start) {
    auto [f, fresh] = folded_.try_emplace(key);
    if (fresh) f->second = detail::fold_indices(range);
    auto [g, first] = groups_.try_emplace(f->second);
    Group& group = g->second;
    if (first) {
      group.first = start;
      group.range = key;
      group.name = &range;
    }
    ++group.count;
    group.first = std::min(group.first, start);
    group.one = group.one && group.range == key;
  }
  // Most calls first, then first seen.
  std::vector<SyncPlace> places() const {
    std::vector<std::pair<Ns, SyncPlace>> rows;
    for (const auto& [pattern, g] : groups_) rows.push_back({g.first, {g.one ? *g.name : pattern, g.count}});
    std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
      return x.second.count != y.second.count ? x.second.count > y.second.count : x.first < y.first;
    });
    std::vector<SyncPlace> out;
    for (auto& [first, place] : rows) out.push_back(std::move(place));
    return out;
  }

 private:
  struct Group {
    size_t count = 0;
    Ns first = 0;
    const void* range = nullptr;        // the first range's key
    const std::string* name = nullptr;  // its text (the trace's pool, or the iterations' name)
    bool one = true;                    // every call in that one range
  };
  std::unordered_map<const void*, std::string> folded_;
  std::map<std::string, Group> groups_;
};

// The stalls' calls by thread, to ask whether a thread was inside one at a given time.
class StallsByThread {
 public:
  void add(uint32_t pid, uint32_t tid, Ns start, Ns end) { calls_[{pid, tid}].emplace_back(start, end); }
  // Sorts by start and makes the running maximum of the ends; call once, before inside().
  void finish() {
    for (auto& [thread, calls] : calls_) {
      std::sort(calls.begin(), calls.end());
      for (size_t k = 1; k < calls.size(); ++k) calls[k].second = std::max(calls[k].second, calls[k - 1].second);
    }
  }
  // Some stall of that thread began at or before `at` and ended no earlier than kClockSlack before it.
  bool inside(uint32_t pid, uint32_t tid, Ns at) const {
    const auto c = calls_.find({pid, tid});
    if (c == calls_.end()) return false;
    const auto pos = std::upper_bound(c->second.begin(), c->second.end(), std::make_pair(at, kNsMax));
    return pos != c->second.begin() && std::prev(pos)->second + kClockSlack >= at;
  }

 private:
  static constexpr Ns kNsMax = std::numeric_limits<Ns>::max();
  std::map<std::pair<uint32_t, uint32_t>, std::vector<std::pair<Ns, Ns>>> calls_;  // (start, max end so far)
};

// The GPU idle that followed the stalls (the module comment), over the steady iterations and
// between consecutive ones, as steady_idle (utilization.h) walks them.
Ns idle_after_stalls(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of,
                     const std::vector<Iteration>& iterations, const StallsByThread& stalls) {
  const Trace& t = j.trace();
  auto launched_in_stall = [&](const GpuOp& next, Ns idle_from) {
    if (next.api < 0) return false;
    const ApiCall& launch = t.api_calls[next.api];
    return stalls.inside(launch.pid, launch.tid, idle_from);
  };
  Ns idle = 0;
  const Iteration* prev = nullptr;  // the previous iteration, when it is steady too
  for (size_t i = 0; i < iterations.size(); ++i) {
    const Iteration& it = iterations[i];
    if (!it.steady()) {
      prev = nullptr;
      continue;
    }
    if (it.has_gpu) {
      walk_union(j, ops_of[i], [&](Ns from, int k, int) {
        const GpuOp& next = j.ops()[k];
        if (waits_for_launch(j, next, from) && launched_in_stall(next, from)) idle += next.start - from;
      });
      if (prev && prev->has_gpu && it.gpu_start > prev->gpu_end &&
          launched_in_stall(j.ops()[ops_of[i].front()], prev->gpu_end))
        idle += it.gpu_start - prev->gpu_end - input_part(*prev, it);
    }
    prev = &it;
  }
  return idle;
}

}  // namespace

void synchronizations(const TraceJoin& j, const IterationSet& is, const std::vector<std::vector<int>>& ops_of,
                      const Iterations& iterations, const Utilization& idle, Synchronizations& out) {
  const Trace& t = j.trace();
  out.has_api_trace = !t.api_calls.empty();
  const std::optional<StreamKey> compute = compute_stream_of(j, ops_of, iterations.iterations);
  const BlockingCalls blocking = blocking_calls(j);
  StreamQueue queue;
  if (compute) {
    out.compute_stream = static_cast<int64_t>(std::get<2>(*compute));
    std::vector<Ns> asked;  // measure_call's times: the blocking calls of the compute stream's process
    for (const auto& [c, kind] : blocking.kind)
      if (t.api_calls[c].pid == std::get<0>(*compute)) asked.push_back(t.api_calls[c].start);
    queue = queue_of(j, *compute, std::move(asked));
  }

  std::map<SyncKind, SyncSummary> summary;
  std::map<SyncKind, std::map<std::string, size_t>> where;
  std::map<SyncKind, PlaceCounter> places_by_kind;
  PlaceCounter places;
  StallsByThread stalls;
  // The loop's host extent, for the calls outside every iteration: before it, between, after.
  Ns loop_start = std::numeric_limits<Ns>::max(), loop_end = std::numeric_limits<Ns>::min();
  for (const Iteration& x : iterations.iterations) {
    loop_start = std::min(loop_start, x.start);
    loop_end = std::max(loop_end, x.end);
  }
  for (const auto& [c, kind] : blocking.kind) {
    if (is.pid && t.api_calls[c].pid != *is.pid) continue;  // another process's: not this loop's, nor its setup
    SyncCall s = measure_call(j, blocking, c, kind, compute, queue);
    const int range = j.api_range(c);
    const int it = is.iteration_of_call(j, c);
    if (it >= 0) {
      const Iteration& x = iterations.iterations[it];
      s.iteration = static_cast<int64_t>(x.index);
      s.warmup = !x.steady();
      s.where = x.steady() ? SyncWhere::Steady : x.warmup ? SyncWhere::Warmup : SyncWhere::HostAhead;
    } else {
      s.where = s.start < loop_start  ? SyncWhere::BeforeLoop
                : s.start >= loop_end ? SyncWhere::AfterLoop
                                      : SyncWhere::Between;
    }
    if (it >= 0 && !s.warmup) {
      SyncSummary& sum = summary[kind];
      sum.kind = kind;
      ++sum.count;
      sum.blocked += s.duration;
      sum.stalled += s.effect == SyncEffect::Stall ? s.duration : 0;
      sum.stalls += s.effect == SyncEffect::Stall;
      sum.returned_at_once += s.effect == SyncEffect::ReturnedAtOnce;
      // Where it sat; an iteration range by its family's name (`Forward Pass Iter *`).
      const bool in_iteration_range = is.by_range.count(range) > 0;
      ++where[kind][in_iteration_range ? is.name : s.range.str()];
      const void* key = in_iteration_range ? static_cast<const void*>(&is.name) : s.range.key();
      const std::string& text = in_iteration_range ? is.name : s.range.str();
      places.add(key, text, s.start);
      places_by_kind[kind].add(key, text, s.start);
      if (s.effect == SyncEffect::Stall)
        stalls.add(t.api_calls[c].pid, t.api_calls[c].tid, s.start, s.start + s.duration);
      out.sync_wait += s.duration;
      out.sync_stall += s.effect == SyncEffect::Stall ? s.duration : 0;
      out.syncs.push_back(std::move(s));
    } else {
      out.syncs_elsewhere.push_back(std::move(s));
    }
  }
  // Costliest first (the host's wait in the call), then in time order: the table's first rows,
  // and the first a --top cut keeps, are the calls that matter.
  auto by_cost = [](const SyncCall& x, const SyncCall& y) {
    return x.duration != y.duration ? x.duration > y.duration : x.start < y.start;
  };
  std::sort(out.syncs.begin(), out.syncs.end(), by_cost);
  std::sort(out.syncs_elsewhere.begin(), out.syncs_elsewhere.end(), by_cost);
  for (auto& [kind, sum] : summary) {
    std::vector<std::pair<size_t, std::string>> rs;
    for (const auto& [r, count] : where[kind]) rs.emplace_back(count, r);
    std::stable_sort(rs.begin(), rs.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    for (const auto& [count, r] : rs) sum.ranges.push_back(r);
    sum.places = places_by_kind[kind].places();
    out.sync_summary.push_back(sum);
  }
  std::stable_sort(out.sync_summary.begin(), out.sync_summary.end(),
                   [](const SyncSummary& x, const SyncSummary& y) { return x.blocked > y.blocked; });

  out.sync_places = places.places();
  stalls.finish();
  out.sync_idle = idle_after_stalls(j, ops_of, iterations.iterations, stalls);

  // What the lap would be without them: the host no longer waits, so it needs its lap less
  // the wait; the GPU still needs its busy time and the idle it has with work queued (kernel
  // boundaries), but no longer waits for launches; the larger of the two is the lap.
  const Iterations& r = iterations;
  if (r.busy_ms.n)
    out.gpu_floor_ms = r.busy_ms.mean + (idle.idle_in_iterations - idle.host_wait_idle) / 1e6 / r.busy_ms.n;
  if (r.steady_count && !out.syncs.empty()) {
    const double wait_ms = out.sync_wait / 1e6 / r.steady_count;
    out.lap_without_syncs_ms = std::max(out.gpu_floor_ms, r.lap_ms - wait_ms);
    out.lap_without_syncs_ms = std::min(out.lap_without_syncs_ms, r.lap_ms);
  } else {
    out.lap_without_syncs_ms = r.lap_ms;
  }
}

}  // namespace laptime::trace
