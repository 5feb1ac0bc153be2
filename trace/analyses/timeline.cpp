#include "trace/analyses/timeline.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "trace/model/format.h"

namespace laptime::trace {

const char* timeline_lane_kind_name(TimelineLaneKind k) {
  switch (k) {
    case TimelineLaneKind::Ranges:
      return "ranges";
    case TimelineLaneKind::Api:
      return "api";
    case TimelineLaneKind::GpuRanges:
      return "gpu_ranges";
    case TimelineLaneKind::Gpu:
      return "gpu";
  }
  return "gpu";
}

const char* timeline_event_kind_name(TimelineEventKind k) {
  switch (k) {
    case TimelineEventKind::Range:
      return "range";
    case TimelineEventKind::Call:
      return "call";
    case TimelineEventKind::Kernel:
      return "kernel";
    case TimelineEventKind::Memcpy:
      return "memcpy";
    case TimelineEventKind::Memset:
      return "memset";
    case TimelineEventKind::GraphReplay:
      return "graph";
  }
  return "kernel";
}

namespace {

using Thread = std::pair<uint32_t, uint32_t>;

TimelineEventKind event_kind(GpuOp::Kind k) {
  switch (k) {
    case GpuOp::Kind::Kernel:
      return TimelineEventKind::Kernel;
    case GpuOp::Kind::Memcpy:
      return TimelineEventKind::Memcpy;
    case GpuOp::Kind::Memset:
      return TimelineEventKind::Memset;
    case GpuOp::Kind::GraphReplay:
      return TimelineEventKind::GraphReplay;
  }
  return TimelineEventKind::Kernel;
}

// Every name once, in the order first used; a layer's folded pattern memoised by its text.
class Names {
 public:
  explicit Names(std::vector<std::string>& out) : out_(out) {}
  int of(const std::string& s) {
    auto [it, fresh] = index_.try_emplace(s, static_cast<int>(out_.size()));
    if (fresh) out_.push_back(s);
    return it->second;
  }
  // The layer and its pattern, for a layer's text.
  std::pair<int, int> layer(const std::string& text) {
    auto it = patterns_.find(text);
    if (it == patterns_.end()) it = patterns_.emplace(text, of(detail::fold_indices(text))).first;
    return {of(text), it->second};
  }

 private:
  std::vector<std::string>& out_;
  std::unordered_map<std::string, int> index_;
  std::unordered_map<std::string, int> patterns_;
};

// A lane of NVTX rows being filled: each range at its depth below the lane's outermost, those past
// kTimelineDepth rows counted instead.
struct RangeRows {
  explicit RangeRows(int l) : lane(l) {}
  int lane = 0;
  int rows = 1;
  TimelineOmitted deep;
  void add(Timeline& tl, Names& names, Ns start, Ns end, const std::string& text, int depth, bool in_iteration) {
    if (depth >= kTimelineDepth) {
      deep.lane = lane;
      ++deep.events;
      deep.time += end - start;
      return;
    }
    rows = std::max(rows, depth + 1);
    TimelineEvent e;
    e.lane = lane;
    e.start = start;
    e.end = end;
    e.name = names.of(text);
    std::tie(e.layer, e.layer_pattern) = names.layer(text);
    e.kind = TimelineEventKind::Range;
    e.depth = depth;
    e.in_iteration = in_iteration;
    tl.events.push_back(e);
  }
  void finish(Timeline& tl) const {
    if (deep.events) tl.omitted.push_back(deep);
  }
};

// Keeps at most `max_events`: the shown iteration's before its neighbours', then the longest,
// then the earliest; counts the rest per lane. Leaves the kept ones by lane, then start.
void bound_events(Timeline& tl, size_t max_events) {
  tl.events_in_window = tl.events.size();
  auto order = [](const TimelineEvent& a, const TimelineEvent& b) {
    return std::make_tuple(a.lane, a.start, a.depth, a.end, a.name) <
           std::make_tuple(b.lane, b.start, b.depth, b.end, b.name);
  };
  if (tl.events.size() > max_events) {
    auto priority = [](const TimelineEvent& a, const TimelineEvent& b) {
      return std::make_tuple(!a.in_iteration, -(a.end - a.start), a.start, a.lane, a.depth, a.name) <
             std::make_tuple(!b.in_iteration, -(b.end - b.start), b.start, b.lane, b.depth, b.name);
    };
    std::nth_element(tl.events.begin(), tl.events.begin() + static_cast<std::ptrdiff_t>(max_events), tl.events.end(),
                     priority);
    std::map<int, TimelineOmitted> cut;
    for (size_t i = max_events; i < tl.events.size(); ++i) {
      TimelineOmitted& o = cut[tl.events[i].lane];
      o.lane = tl.events[i].lane;
      ++o.events;
      o.time += tl.events[i].end - tl.events[i].start;
    }
    tl.events.resize(max_events);
    std::map<int, TimelineOmitted> merged;
    for (const TimelineOmitted& o : tl.omitted) merged[o.lane] = o;
    for (const auto& [lane, o] : cut) {
      TimelineOmitted& m = merged[lane];
      m.lane = lane;
      m.events += o.events;
      m.time += o.time;
    }
    tl.omitted.clear();
    for (const auto& [lane, o] : merged) tl.omitted.push_back(o);
  }
  std::sort(tl.events.begin(), tl.events.end(), order);
}

}  // namespace

Timeline timeline_of(const TraceJoin& j, const Iterations& its, const std::vector<std::vector<int>>& ops_of,
                     const Utilization& u, const Synchronizations& s, int iteration, size_t max_events) {
  Timeline tl;
  if (iteration < 0) iteration = its.svg_iteration;
  if (iteration < 0 || iteration >= static_cast<int>(its.iterations.size()) || !its.iterations[iteration].has_gpu ||
      static_cast<size_t>(iteration) >= ops_of.size())
    return tl;
  const Trace& t = j.trace();
  const Iteration& x = its.iterations[iteration];
  const NvtxEvent& ir = t.nvtx[x.nvtx];
  tl.iteration = iteration;
  tl.index = x.index;
  tl.start = x.gpu_start;
  tl.end = x.gpu_end;
  tl.host_range = x.end >= x.gpu_start;
  if (tl.host_range) {
    tl.start = std::min(x.start, x.gpu_start);
    tl.end = std::max(x.end, x.gpu_end);
  }
  auto in_window = [&](Ns a, Ns b) { return b >= tl.start && a <= tl.end; };
  auto in_host_range = [&](Ns a, Ns b) { return b >= x.start && a <= x.end; };
  Names names(tl.names);
  const std::vector<int>& mine = ops_of[iteration];  // ascending indices into j.ops() (ops_by_iteration)

  // The threads: the one that opened the iteration range, then (by pid, tid) those that launched
  // its GPU work or made a measured synchronization call inside the window.
  std::set<std::pair<Ns, const void*>> blocking;  // (start, API name) of every measured call
  for (const auto* list : {&s.syncs, &s.syncs_elsewhere})
    for (const SyncCall& c : *list) blocking.insert({c.start, c.api.key()});
  std::set<Thread> others;
  std::set<uint32_t> devices;
  for (int k : mine) {
    const GpuOp& op = j.ops()[k];
    devices.insert(op.device);
    if (op.api >= 0) others.insert({t.api_calls[op.api].pid, t.api_calls[op.api].tid});
  }
  for (const ApiCall& c : t.api_calls)
    if (in_window(c.start, c.end) && blocking.count({c.start, c.name.key()})) others.insert({c.pid, c.tid});
  const Thread first{ir.pid, ir.tid};
  others.erase(first);
  std::vector<Thread> threads{first};
  threads.insert(threads.end(), others.begin(), others.end());

  // Ranges of those threads in the window, rows counted from each thread's outermost one there.
  std::map<Thread, std::vector<int>> ranges;
  for (size_t r = 0; r < t.nvtx.size(); ++r) {
    const NvtxEvent& n = t.nvtx[r];
    if (!in_window(n.start, n.end)) continue;
    auto th = ranges.find({n.pid, n.tid});
    if (th == ranges.end()) {
      if (std::find(threads.begin(), threads.end(), Thread{n.pid, n.tid}) == threads.end()) continue;
      th = ranges.emplace(Thread{n.pid, n.tid}, std::vector<int>()).first;
    }
    th->second.push_back(static_cast<int>(r));
  }
  std::map<std::pair<Ns, const void*>, int> call_lane;  // (start, API name) of a measured call -> its lane
  for (const Thread& th : threads) {
    const std::string who = t.thread_name(th.first, th.second);
    if (auto rs = ranges.find(th); rs != ranges.end()) {
      const int lane = static_cast<int>(tl.lanes.size());
      int top = rs->second.empty() ? 0 : t.nvtx[rs->second.front()].depth;
      for (int r : rs->second) top = std::min(top, t.nvtx[r].depth);
      RangeRows lane_rows(lane);
      for (int r : rs->second) {
        const NvtxEvent& n = t.nvtx[r];
        lane_rows.add(tl, names, n.start, n.end, n.text, n.depth - top, in_host_range(n.start, n.end));
      }
      lane_rows.finish(tl);
      tl.lanes.push_back({TimelineLaneKind::Ranges, th.first, th.second, 0, 0, "NVTX (" + who + ")", lane_rows.rows});
    }
    const ThreadCalls calls = j.thread_calls(th.first, th.second);
    const int lane = static_cast<int>(tl.lanes.size());
    bool any = false;
    for (int c : calls) {
      const ApiCall& call = t.api_calls[c];
      if (call.start > tl.end) break;  // by start
      if (!in_window(call.start, call.end)) continue;
      any = true;
      TimelineEvent e;
      e.lane = lane;
      e.start = call.start;
      e.end = call.end;
      e.name = names.of(call.name);
      std::tie(e.layer, e.layer_pattern) = names.layer(detail::range_text(t, j.api_range(c)));
      e.kind = TimelineEventKind::Call;
      e.blocking = blocking.count({call.start, call.name.key()}) > 0;
      if (e.blocking) call_lane.emplace(std::make_pair(call.start, call.name.key()), lane);
      e.in_iteration = in_host_range(call.start, call.end);
      tl.events.push_back(e);
    }
    if (any || th == first)
      tl.lanes.push_back({TimelineLaneKind::Api, th.first, th.second, 0, 0, "CUDA API (" + who + ")"});
  }

  // The iteration's ranges projected onto the GPU: each range on the chain from a piece of its GPU
  // work's layer up to the iteration range, from the first start to the last end of that work.
  std::map<int, std::pair<Ns, Ns>> projected;  // range -> its GPU span
  for (int k : mine) {
    const GpuOp& op = j.ops()[k];
    for (int from : {op.layer, op.range}) {  // a graph node's layer may sit outside the iteration
      std::vector<int> chain;
      for (int r = from; r >= 0 && chain.size() < 4096; r = t.nvtx[r].parent) {
        chain.push_back(r);
        if (r == x.nvtx) break;
      }
      if (chain.empty() || chain.back() != x.nvtx) continue;
      for (int r : chain) {
        auto [span, fresh] = projected.try_emplace(r, op.start, op.end);
        span->second = {std::min(span->second.first, op.start), std::max(span->second.second, op.end)};
      }
      break;
    }
  }
  if (!projected.empty()) {
    const int lane = static_cast<int>(tl.lanes.size());
    RangeRows lane_rows(lane);
    for (const auto& [r, span] : projected)
      lane_rows.add(tl, names, span.first, span.second, t.nvtx[r].text, t.nvtx[r].depth - ir.depth, true);
    lane_rows.finish(tl);
    TimelineLane l;
    l.kind = TimelineLaneKind::GpuRanges;
    l.pid = ir.pid;
    l.tid = ir.tid;
    l.label = "NVTX on the GPU";
    l.rows = lane_rows.rows;
    tl.lanes.push_back(l);
  }

  // GPU work in the window on the devices the iteration ran on, a lane per (device, stream).
  std::map<std::pair<uint32_t, uint32_t>, std::vector<int>> streams;
  for (size_t k = 0; k < j.ops().size(); ++k) {
    const GpuOp& op = j.ops()[k];
    if (op.start > tl.end) break;  // by start
    if (in_window(op.start, op.end) && devices.count(op.device)) streams[{op.device, op.stream}].push_back(int(k));
  }
  for (const auto& [where, ops] : streams) {
    const int lane = static_cast<int>(tl.lanes.size());
    TimelineLane l;
    l.kind = TimelineLaneKind::Gpu;
    l.device = where.first;
    l.stream = where.second;
    l.label = "GPU " + std::to_string(where.first) + " stream " + std::to_string(where.second);
    tl.lanes.push_back(l);
    for (int k : ops) {
      const GpuOp& op = j.ops()[k];
      TimelineEvent e;
      e.lane = lane;
      e.start = op.start;
      e.end = op.end;
      e.name = names.of(op.label);
      std::tie(e.layer, e.layer_pattern) = names.layer(detail::range_text(t, op.layer));
      e.kind = event_kind(op.kind);
      e.category = op.category;
      e.in_iteration = std::binary_search(mine.begin(), mine.end(), k);
      tl.events.push_back(e);
    }
  }

  for (const Gap& g : u.gaps)
    if (g.iteration == x.index) tl.gaps.push_back({g.start, g.end, g.cause});
  std::sort(tl.gaps.begin(), tl.gaps.end(), [](const TimelineGap& a, const TimelineGap& b) {
    return std::tie(a.start, a.end) < std::tie(b.start, b.end);
  });

  // The measured calls in the window, on the Api lane of the thread that made them.
  for (const auto* list : {&s.syncs, &s.syncs_elsewhere})
    for (const SyncCall& c : *list) {
      if (!in_window(c.start, c.start + c.duration)) continue;
      TimelineSync y;
      y.start = c.start;
      y.duration = c.duration;
      y.api = c.api;
      y.kind = c.kind;
      y.effect = c.effect;
      y.pending = c.pending;
      y.where = c.where;
      if (auto l = call_lane.find({c.start, c.api.key()}); l != call_lane.end()) y.lane = l->second;
      tl.syncs.push_back(std::move(y));
    }
  std::sort(tl.syncs.begin(), tl.syncs.end(), [](const TimelineSync& a, const TimelineSync& b) {
    return std::tie(a.start, a.duration, a.api) < std::tie(b.start, b.duration, b.api);
  });
  // Each blocking call's event to its record (where it sat, what it cost), by its lane and start.
  std::map<std::tuple<int, Ns, std::string>, int> record;
  for (size_t i = 0; i < tl.syncs.size(); ++i)
    record.emplace(std::make_tuple(tl.syncs[i].lane, tl.syncs[i].start, tl.syncs[i].api), static_cast<int>(i));
  for (TimelineEvent& e : tl.events)
    if (e.blocking)
      if (auto r = record.find(std::make_tuple(e.lane, e.start, tl.names[e.name])); r != record.end())
        e.sync = r->second;
  bound_events(tl, max_events);
  return tl;
}

}  // namespace laptime::trace
