#include "trace/write/perfetto.h"

#include <set>

#include <nlohmann/json.hpp>

#include "trace/model/text.h"

namespace laptime::trace {
namespace {

using nlohmann::json;

// Trace Event timestamps are microseconds; doubles keep the nanoseconds.
double us(Ns ns) { return ns / 1000.0; }

// GPUs become processes of their own, numbered clear of real pids (which nsys keeps to 24 bits).
int64_t gpu_pid(uint32_t device) { return (int64_t{1} << 30) + device; }
// Start/end ranges need not nest with the thread's push/pop ranges: their own lane.
int64_t start_end_tid(uint32_t tid) { return (int64_t{1} << 30) + tid; }

json meta(const char* what, int64_t pid, int64_t tid, const json& args) {
  return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", args}};
}

json slice(const std::string& name, const char* cat, Ns start, Ns end, int64_t pid, int64_t tid, json args) {
  return {{"ph", "X"},       {"name", name},           {"cat", cat},
          {"ts", us(start)}, {"dur", us(end - start)}, {"pid", pid},
          {"tid", tid},      {"args", std::move(args)}};
}

}  // namespace

void write_perfetto(const TraceJoin& j, const std::string& path) {
  const Trace& t = j.trace();
  json events = json::array();

  // Lanes and their names.
  std::set<std::pair<uint32_t, uint32_t>> threads, start_end_threads;
  std::set<uint32_t> pids;
  for (const ApiCall& c : t.api_calls) threads.insert({c.pid, c.tid});
  for (const NvtxEvent& r : t.nvtx) (r.kind == NvtxKind::PushPop ? threads : start_end_threads).insert({r.pid, r.tid});
  for (const auto& [pid, tid] : threads) pids.insert(pid);
  for (const auto& [pid, tid] : start_end_threads) pids.insert(pid);
  for (uint32_t pid : pids) {
    events.push_back(meta("process_name", pid, 0, {{"name", "process " + std::to_string(pid)}}));
    events.push_back(meta("process_sort_index", pid, 0, {{"sort_index", 0}}));
  }
  for (const auto& [pid, tid] : threads)
    events.push_back(meta("thread_name", pid, tid, {{"name", t.thread_name(pid, tid)}}));
  for (const auto& [pid, tid] : start_end_threads)
    events.push_back(
        meta("thread_name", pid, start_end_tid(tid), {{"name", t.thread_name(pid, tid) + " (NVTX start/end)"}}));
  std::set<std::pair<uint32_t, uint32_t>> streams;
  for (const GpuOp& op : j.ops()) streams.insert({op.device, op.stream});
  std::set<uint32_t> devices;
  for (const auto& [device, stream] : streams) devices.insert(device);
  for (uint32_t d : devices) {
    std::string name = "GPU " + std::to_string(d);
    for (const Gpu& g : t.gpus)
      if (g.id == d && !g.name.empty()) name += ": " + g.name;
    events.push_back(meta("process_name", gpu_pid(d), 0, {{"name", name}}));
    events.push_back(meta("process_sort_index", gpu_pid(d), 0, {{"sort_index", 1}}));
  }
  for (const auto& [device, stream] : streams)
    events.push_back(meta("thread_name", gpu_pid(device), stream, {{"name", "stream " + std::to_string(stream)}}));

  // CPU side.
  for (const NvtxEvent& r : t.nvtx) {
    json args{{"domain", r.domain}, {"category", r.category}};
    if (r.has_payload) args["payload"] = r.payload;
    const int64_t tid = r.kind == NvtxKind::PushPop ? int64_t{r.tid} : start_end_tid(r.tid);
    events.push_back(slice(r.text, "nvtx", r.start, r.end, r.pid, tid, std::move(args)));
  }
  for (const ApiCall& c : t.api_calls)
    events.push_back(slice(c.name, c.kind() == ApiKind::Runtime ? "cuda_runtime" : "cuda_driver", c.start, c.end, c.pid,
                           c.tid, {{"correlation", c.correlation}, {"return", c.return_value}}));

  // GPU side, and a flow from each launch to its work.
  uint64_t flow = 0;
  for (const GpuOp& op : j.ops()) {
    json args{{"category", category_name(op.category)}};
    const char* cat = "kernel";
    if (op.kind == GpuOp::Kind::Kernel) {
      const Kernel& k = t.kernels[op.index];
      args["name"] = k.name;
      args["grid"] = {k.grid.x, k.grid.y, k.grid.z};
      args["block"] = {k.block.x, k.block.y, k.block.z};
      args["correlation"] = k.correlation;
    } else if (op.kind == GpuOp::Kind::Memcpy) {
      const Memcpy& m = t.memcpys[op.index];
      cat = "memcpy";
      args["bytes"] = m.bytes;
      args["src"] = mem_kind_name(m.src);
      args["dst"] = mem_kind_name(m.dst);
      args["correlation"] = m.correlation;
    } else if (op.kind == GpuOp::Kind::Memset) {
      const Memset& m = t.memsets[op.index];
      cat = "memset";
      args["bytes"] = m.bytes;
      args["correlation"] = m.correlation;
    } else {  // a CUDA Graph replay traced whole
      const GraphReplay& g = t.graph_replays[op.index];
      cat = "cuda_graph";
      args["graph"] = g.graph;
      args["graph_exec"] = g.exec;
      args["correlation"] = g.correlation;
    }
    if (op.range >= 0) args["nvtx"] = t.nvtx[op.range].text;
    // A graph node's work: the range its node was made in (trace/analyses/graph.h).
    if (op.layer != op.range && op.layer >= 0) args["layer"] = t.nvtx[op.layer].text;
    events.push_back(slice(op.label, cat, op.start, op.end, gpu_pid(op.device), op.stream, std::move(args)));
    if (op.api < 0) continue;
    const ApiCall& c = t.api_calls[op.api];
    ++flow;
    // Flow v1: "s" binds to the slice open on the CPU lane at its timestamp (the launch
    // call), "f" with bp=e to the slice enclosing its timestamp on the GPU lane (the kernel).
    events.push_back({{"ph", "s"},
                      {"id", flow},
                      {"name", "launch"},
                      {"cat", "launch"},
                      {"ts", us(c.start)},
                      {"pid", c.pid},
                      {"tid", c.tid}});
    events.push_back({{"ph", "f"},
                      {"bp", "e"},
                      {"id", flow},
                      {"name", "launch"},
                      {"cat", "launch"},
                      {"ts", us(op.start)},
                      {"pid", gpu_pid(op.device)},
                      {"tid", op.stream}});
  }

  json doc{{"displayTimeUnit", "ns"}, {"otherData", {{"source", t.source}}}, {"traceEvents", std::move(events)}};
  escape_json_strings(doc);
  write_output(path, "the Perfetto trace", doc.dump() + "\n");
}

}  // namespace laptime::trace
