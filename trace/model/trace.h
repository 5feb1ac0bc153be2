// The trace model: what `laptime analyze` knows about one profiled run, whoever captured it.
//
// Nsight Systems (through its SQLite export) and laptime's own CUPTI tracer both fill this
// one model, so the report, the Perfetto export and the SVG timeline are written once. It
// keeps what the baseline questions need and nothing else: GPU activity (kernels, copies,
// memsets), the host API calls that launched or waited for it, CUPTI's synchronization
// records, and NVTX ranges with their nesting resolved.
//
// Conventions:
// - Times are int64 nanoseconds on the capture's own clock (nsys: since the session start).
//   Only differences are meaningful.
// - GPU work and the host call that caused it share a correlation id, unique within a
//   process: join on (pid, correlation), never on correlation alone.
// - Threads are (pid, tid) as the OS numbers them.
// - Host-only: nothing here needs CUDA, so traces are analyzed on any machine.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "trace/model/name.h"

namespace laptime::trace {

using Ns = int64_t;

// A launch's grid or block. CUDA bounds y and z by 65535 (a grid's; a block's by 1024 and 64) and
// only a grid's x goes past it: 8 bytes, not 12, in each of a million kernels.
struct Dim3 {
  uint32_t x = 1;
  uint16_t y = 1, z = 1;
  bool operator==(const Dim3& o) const { return x == o.x && y == o.y && z == o.z; }
};

// Memory kinds, numbered as nsys's ENUM_CUDA_MEM_KIND numbers them (pageable is 0). CUPTI's
// own enum differs (it has UNKNOWN = 0, PAGEABLE = 1); the CUPTI tracer converts.
enum class MemKind : int32_t {
  Pageable = 0,
  Pinned = 1,
  Device = 2,
  Array = 3,
  Managed = 4,
  DeviceStatic = 5,
  ManagedStatic = 6,
  Unknown = 7,
};
const char* mem_kind_name(MemKind k);

// Copy directions, numbered as both CUPTI and nsys's ENUM_CUDA_MEMCPY_OPER number them.
enum class CopyKind : int32_t {
  Unknown = 0,
  HtoD = 1,
  DtoH = 2,
  HtoA = 3,
  AtoH = 4,
  AtoA = 5,
  AtoD = 6,
  DtoA = 7,
  DtoD = 8,
  HtoH = 9,
  PtoP = 10,
};
const char* copy_kind_name(CopyKind k);

// Whether the host call that issued a copy returned before the copy finished. Known only
// once the copy is joined with its API call (cudaMemcpy vs cudaMemcpyAsync).
enum class HostSync { Unknown, Async, Blocking };

// CUPTI's synchronization record types (same numbering in CUPTI and nsys's ENUM_CUPTI_SYNC_TYPE).
enum class SyncType : int32_t {
  Unknown = 0,
  EventSynchronize = 1,
  StreamWaitEvent = 2,
  StreamSynchronize = 3,
  ContextSynchronize = 4,
};
const char* sync_type_name(SyncType t);

// A graph node id that names no node: the work was not run by a CUDA Graph (or the trace
// does not say which node ran it).
constexpr uint64_t kNoGraphNode = UINT64_MAX;

// What every piece of GPU work has: where and when it ran, and the correlation id that
// joins it to the API call that launched it.
struct GpuWork {
  uint32_t pid = 0;
  uint32_t device = 0;
  uint32_t stream = 0;
  // The API call that launched it, index into Trace::api_calls; -1 when the trace has none (no
  // CUDA API trace, or the call fell outside the capture). Set by Trace::finalize().
  int api = -1;
  Ns start = 0, end = 0;
  uint32_t correlation = 0;            // CUPTI's 32-bit id; a graph's work carries its cudaGraphLaunch's
  uint64_t graph_node = kNoGraphNode;  // the graph node that ran it (a node-level graph trace)
};

struct Kernel : GpuWork {
  Name name;        // demangled, with template arguments
  Name short_name;  // base function name: what tables show
  Dim3 grid, block;
};

struct Memcpy : GpuWork {
  CopyKind kind = CopyKind::Unknown;
  uint64_t bytes = 0;
  MemKind src = MemKind::Unknown, dst = MemKind::Unknown;
  HostSync host_sync = HostSync::Unknown;
  // Pageable host memory on either side: the driver stages the copy through a pinned
  // buffer and the calling thread waits, whatever "Async" the call's name promised.
  bool pageable() const { return src == MemKind::Pageable || dst == MemKind::Pageable; }
};

struct Memset : GpuWork {
  uint64_t bytes = 0;
  uint32_t value = 0;
  MemKind mem = MemKind::Unknown;
};

// One replay of a CUDA Graph traced whole (nsys's default graph trace, CUPTI's
// CUPTI_ACTIVITY_KIND_GRAPH_TRACE): the span from the graph's first work to its last, on the
// stream it was launched to, and not the kernels inside it.
struct GraphReplay : GpuWork {
  uint32_t graph = 0;  // the graph the executable was instantiated from (graphId)
  uint32_t exec = 0;   // the executable (graphExecId), 0 when the trace does not say
};

// A graph node's creation (nsys's CUDA_GRAPH_NODE_EVENTS, CUPTI's graph-node callbacks): the
// thread that made it and when, so the NVTX range open there and then names its layer. A node
// that instantiation or cudaGraphClone copied from another names that one as `original`.
struct GraphNode {
  uint32_t pid = 0, tid = 0;
  Ns created = 0;
  uint64_t id = 0;
  uint64_t original = kNoGraphNode;
};

enum class ApiKind : uint8_t { Runtime, Driver };

// Which API a call belongs to, from its normalized name: the runtime's are named cuda* (and
// __cuda* for its internals), the driver's cu*.
ApiKind api_kind(const std::string& name);

// Two or more a kernel (the launch, and the calls a library makes around it): 40 bytes, no
// padding; the kind is the name's (api_kind), not stored.
struct ApiCall {
  // Normalized: nsys's version and per-thread-stream suffixes are dropped
  // ("cudaLaunchKernel_v7000" -> "cudaLaunchKernel", "cudaMemcpyAsync_ptsz_v7000" ->
  // "cudaMemcpyAsync"), so rules match one spelling.
  Name name;
  Ns start = 0, end = 0;
  uint32_t correlation = 0;  // CUPTI's ids are 32-bit
  uint32_t pid = 0, tid = 0;
  int32_t return_value = 0;
  ApiKind kind() const { return api_kind(name); }
};

struct SyncEvent {
  SyncType type = SyncType::Unknown;
  uint32_t pid = 0;
  uint32_t device = 0;
  uint32_t stream = 0;  // 0xFFFFFFFF when the record names no stream (context sync)
  Ns start = 0, end = 0;
  uint32_t correlation = 0;  // the API call that waited
  int api = -1;              // that call, index into Trace::api_calls, -1 if none; set by Trace::finalize()
};

enum class NvtxKind { PushPop, StartEnd };

struct NvtxEvent {
  Name domain;  // "" for NVTX's default domain
  Name text;
  bool has_payload = false;
  uint64_t payload = 0;   // laptime: the iteration index of a `forward` range
  uint32_t category = 0;  // laptime: 1 = warmup, 2 = steady (see category_names)
  NvtxKind kind = NvtxKind::PushPop;
  uint32_t pid = 0, tid = 0;  // the thread that opened the range
  Ns start = 0, end = 0;
  // Filled by Trace::finalize(): nesting among the ranges of one thread, by time
  // containment across domains (a layer range in the laptime domain nests inside a
  // PyTorch `forward` range in the default domain just the same).
  int depth = 0;
  int parent = -1;  // index into Trace::nvtx, -1 at top level
};

struct Gpu {
  uint32_t id = 0;
  std::string name;
  int sm_count = 0;
};

// Which profiler wrote the trace a reader filled (the report may word things in its terms).
enum class TraceFormat : uint8_t {
  Nsys,     // an Nsight Systems SQLite export (or an .nsys-rep read through one)
  Laptime,  // laptime's own CUPTI capture, in the nsys schema
  Kineto,   // the PyTorch profiler's Chrome trace JSON (trace/read/kineto_json.h)
};

// Why the reader left a row out (trace/model/validate.cpp names them for the report).
enum class DropReason : int {
  Null,            // a time or id is NULL
  NotInteger,      // text, a real or a blob where an integer belongs
  OutOfRange,      // a time outside [0, 2^62) ns, or an id outside its width (negative, > 32 bits)
  EndBeforeStart,  // the record ends before it starts
  OutOfSpan,       // outside the capture's span, as the export declares it (ANALYSIS_DETAILS)
};
constexpr int kDropReasonCount = 5;

// Rows read and rows left out, per SQLite table and reason. Every timestamp and id is checked
// as it is loaded; a row that fails is left out whole (the first failure is its reason), so
// what the analysis sees is consistent: no NULLs read as 0, no negative durations.
struct DroppedRows {
  struct Table {
    size_t read = 0;  // rows the reader looked at (ranges only, for NVTX_EVENTS)
    size_t by_reason[kDropReasonCount] = {};
    size_t dropped() const;
  };
  std::map<std::string, Table> tables;  // by table name

  size_t total() const;              // rows left out, all tables
  size_t count(DropReason r) const;  // rows left out for one reason
  size_t dropped(const std::string& table) const;
  // "3 of 92 rows left out (CUPTI_ACTIVITY_KIND_KERNEL 3): 2 NULL time or id, 1 end before
  // start." in one line (trace/model/validate.cpp); "" when none was.
  std::string summary() const;
};

struct Trace {
  // Every Name below points into this pool; copies of the Trace share it.
  std::shared_ptr<NamePool> names = std::make_shared<NamePool>();
  Name intern(std::string_view s) { return names->intern(s); }

  std::string source;  // where it came from, for the report header: "nsys 2024.6.2 (schema 3.16.1)"
  TraceFormat format = TraceFormat::Nsys;
  std::vector<Kernel> kernels;
  std::vector<Memcpy> memcpys;
  std::vector<Memset> memsets;
  std::vector<ApiCall> api_calls;
  std::vector<SyncEvent> syncs;
  std::vector<NvtxEvent> nvtx;
  std::vector<GraphReplay> graph_replays;  // graph-level graph trace (trace/analyses/graph.h)
  std::vector<GraphNode> graph_nodes;      // node-level graph trace: where each node was made
  std::vector<Gpu> gpus;
  std::map<std::pair<uint32_t, uint32_t>, std::string> thread_names;  // (pid, tid) -> name
  // Names the trace gives its processes itself (Kineto's process_name records, with the rank of a
  // distributed job: "python rank 3"): pid -> name. Empty for nsys, which names threads only.
  std::map<uint32_t, std::string> process_names;
  // Names given with nvtxDomainNameCategory: (domain, category) -> name.
  std::map<std::pair<std::string, uint32_t>, std::string> category_names;
  // What the reader had to leave out or guess, one sentence each ("3 NVTX ranges were
  // never closed and are ignored."). The report prints them under the header.
  std::vector<std::string> notes;
  // Rows the reader left out as invalid, by table and reason.
  DroppedRows dropped;

  // Sorts every list by start time, computes NVTX nesting, joins every piece of GPU work and
  // every synchronization record to its API call (`api`, on pid + correlation id), marks each
  // copy as blocking or async from the name of that call, and escapes every name that is not
  // valid UTF-8 or holds control characters (escape_name in trace/model/text.h; a note says how
  // many), so every writer gets clean text. Readers call it once at the end (and again after
  // editing the lists); everything downstream assumes it ran.
  void finalize();

  // The API call that launched or waited for this work, or null (see GpuWork::api).
  const ApiCall* api_call_of(const GpuWork& w) const { return w.api < 0 ? nullptr : &api_calls[w.api]; }
  const ApiCall* api_call_of(const SyncEvent& s) const { return s.api < 0 ? nullptr : &api_calls[s.api]; }

  // The name of a thread for tables: its registered name, else "tid N".
  std::string thread_name(uint32_t pid, uint32_t tid) const;
  // The category's registered name in the range's domain, or "" when none was given.
  std::string category_name(const NvtxEvent& r) const;

 private:
  void join_api_calls();
};

// "cudaMemcpyAsync_ptsz_v7000" -> "cudaMemcpyAsync": see ApiCall::name.
std::string normalize_api_name(const std::string& raw);

// A C++ symbol demangled ("_Z11gelu_kernelIfEvPT_PKS0_l" -> "void gelu_kernel<float>(...)");
// anything that is not a mangled name comes back as it was (cuBLAS's nvjet_* kernels).
std::string demangle(const std::string& mangled);

// The base function name nsys shows as a kernel's shortName: no return type, namespaces,
// template arguments or parameters ("void laptime::(anonymous namespace)::
// layernorm_kernel<__nv_bfloat16>(__nv_bfloat16*, int)" -> "layernorm_kernel").
std::string short_kernel_name(const std::string& demangled);

// A process's name as the trace records it: the name it gives the process (Trace::process_names),
// else its main thread's (nsys names it after the program), else its first named thread's, ""
// when the trace names none.
std::string process_name(const Trace& t, uint32_t pid);
// "4100 (python)": the pid and that name (clipped), or the pid alone.
std::string process_label(const Trace& t, uint32_t pid);

}  // namespace laptime::trace
