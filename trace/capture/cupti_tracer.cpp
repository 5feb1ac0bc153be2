#include "trace/capture/cupti_tracer.h"

#include <cuda_runtime.h>
#include <cupti.h>
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "trace/model/error.h"

namespace laptime::trace {

// Everything the buffer callbacks write, under one mutex: CUPTI may complete buffers on
// its own thread while the bench thread names itself or stops the tracer.
struct CuptiState {
  std::mutex mu;
  Trace trace;
  uint32_t pid = 0;
  // NVTX ranges arrive as two MARKER records, START and END, with one id; payload and
  // category come in a MARKER_DATA record with the same id, in either order relative to END.
  std::map<uint32_t, NvtxEvent> open;  // START seen, END not yet
  std::vector<uint32_t> closed_ids;    // parallel to trace.nvtx
  struct Data {
    bool has_payload = false;
    uint64_t payload = 0;
    uint32_t category = 0;
  };
  std::map<uint32_t, Data> data;  // MARKER_DATA by marker id
  size_t dropped = 0;
  size_t unreadable = 0;                        // records of kinds we enabled but could not convert
  CUpti_SubscriberHandle subscriber = nullptr;  // the graph-node callbacks, while subscribed

  void consume(const CUpti_Activity* record);
  void consume_marker(const CUpti_ActivityMarker2* r);
  void consume_marker_data(const CUpti_ActivityMarkerData2* r);
};

namespace {

// CUPTI hands buffers to plain C callbacks with no user pointer: the live tracer's state is
// reachable only through this pointer, which is why one tracer at a time is the rule.
std::mutex g_mu;
CuptiState* g_state = nullptr;

void check(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return;
  const char* msg = nullptr;
  cuptiGetResultString(r, &msg);
  throw TraceError(std::string("CUPTI call ") + what + " failed: " + (msg ? msg : "unknown error") + ".");
}
#define CUPTI_CALL(expr) check((expr), #expr)

constexpr size_t kBufferBytes = 8u << 20;  // 8 MiB: tens of thousands of records per buffer

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  // Records must be 8-byte aligned (ACTIVITY_RECORD_ALIGNMENT); kBufferBytes is a multiple.
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_state && buffer) {
      std::lock_guard<std::mutex> state_lock(g_state->mu);
      CUpti_Activity* record = nullptr;
      // Nothing may propagate out of a C callback: a record we fail to convert is counted.
      while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        try {
          g_state->consume(record);
        } catch (...) {
          ++g_state->unreadable;
        }
      }
      size_t dropped = 0;
      if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS) g_state->dropped += dropped;
    }
  }
  std::free(buffer);
}

// CUPTI numbers memory kinds from UNKNOWN = 0; the trace model (and nsys) from PAGEABLE = 0.
MemKind mem_kind(uint32_t cupti_kind) {
  switch (cupti_kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return MemKind::Pageable;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return MemKind::Pinned;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
      return MemKind::Device;
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return MemKind::Array;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
      return MemKind::Managed;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return MemKind::DeviceStatic;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return MemKind::ManagedStatic;
    default:
      return MemKind::Unknown;
  }
}

CopyKind copy_kind(uint32_t cupti_kind) {
  switch (cupti_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return CopyKind::HtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return CopyKind::DtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return CopyKind::HtoA;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return CopyKind::AtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return CopyKind::AtoA;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return CopyKind::AtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return CopyKind::DtoA;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return CopyKind::DtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return CopyKind::HtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return CopyKind::PtoP;
    default:
      return CopyKind::Unknown;
  }
}

SyncType sync_type(CUpti_ActivitySynchronizationType t) {
  switch (t) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
      return SyncType::EventSynchronize;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
      return SyncType::StreamWaitEvent;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
      return SyncType::StreamSynchronize;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
      return SyncType::ContextSynchronize;
    default:
      return SyncType::Unknown;
  }
}

std::string api_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const char* name = nullptr;
  // An id this CUPTI cannot name still says its API, as api_kind reads it: "cu cbid 7" is the driver's.
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
    return std::string(domain == CUPTI_CB_DOMAIN_DRIVER_API ? "cu" : "cuda") + " cbid " + std::to_string(cbid);
  return normalize_api_name(name);
}

uint32_t current_tid() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

// Points NVTX at CUPTI. Returns whether CUPTI is (now) the injection; says in `notes` when
// it cannot be.
bool inject_nvtx(std::vector<std::string>& notes) {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) || !info.dli_fname) {
    notes.push_back("NVTX ranges were not recorded: the CUPTI library's path could not be found.");
    return false;
  }
  const char* current = std::getenv("NVTX_INJECTION64_PATH");
  if (current && *current && std::strcmp(current, info.dli_fname) != 0) {
    // Another tool (nsys sets this variable) owns NVTX; it would not share it with us.
    notes.push_back(std::string("NVTX ranges were not recorded: NVTX_INJECTION64_PATH already names ") + current + ".");
    return false;
  }
  setenv("NVTX_INJECTION64_PATH", info.dli_fname, 1);
  return true;
}

// Kernel, memcpy and memset records name their common fields alike, the graph node that ran the
// work included (graphId 0: not run by a graph).
template <class Record>
void fill_gpu_work(const Record* r, uint32_t pid, GpuWork* w) {
  w->pid = pid;
  w->device = r->deviceId;
  w->stream = r->streamId;
  w->start = static_cast<Ns>(r->start);
  w->end = static_cast<Ns>(r->end);
  w->correlation = r->correlationId;
  if (r->graphId != 0) w->graph_node = r->graphNodeId;
}

// A graph node made (stream capture, cudaGraphAdd*Node) or copied (instantiation, cudaGraphClone):
// who made it and when, on CUPTI's clock like every record, so the analysis finds the NVTX range
// open there and then (trace/analyses/graph.h). Runs on the thread that made the node.
void CUPTIAPI graph_node_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                  const void* cbdata) {
  if (domain != CUPTI_CB_DOMAIN_RESOURCE ||
      (cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED && cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED))
    return;
  const auto* resource = static_cast<const CUpti_ResourceData*>(cbdata);
  const auto* graph = resource ? static_cast<const CUpti_GraphData*>(resource->resourceDescriptor) : nullptr;
  if (!graph) return;
  GraphNode n;
  uint64_t at = 0;
  if (cuptiGetGraphNodeId(graph->node, &n.id) != CUPTI_SUCCESS || cuptiGetTimestamp(&at) != CUPTI_SUCCESS) return;
  uint64_t original = 0;
  if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED && graph->originalNode &&
      cuptiGetGraphNodeId(graph->originalNode, &original) == CUPTI_SUCCESS)
    n.original = original;
  n.created = static_cast<Ns>(at);
  n.tid = current_tid();
  auto* state = static_cast<CuptiState*>(userdata);
  std::lock_guard<std::mutex> lock(state->mu);
  n.pid = state->pid;
  state->trace.graph_nodes.push_back(n);
}

}  // namespace

void CuptiState::consume(const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* r = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      Kernel k;
      // Interned: the tracer sees the same few names over and over.
      k.name = trace.intern(demangle(r->name ? r->name : ""));
      k.short_name = trace.intern(short_kernel_name(k.name));
      fill_gpu_work(r, pid, &k);
      k.grid = {static_cast<uint32_t>(r->gridX), static_cast<uint16_t>(r->gridY), static_cast<uint16_t>(r->gridZ)};
      k.block = {static_cast<uint32_t>(r->blockX), static_cast<uint16_t>(r->blockY), static_cast<uint16_t>(r->blockZ)};
      trace.kernels.push_back(std::move(k));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* r = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      Memcpy m;
      m.kind = copy_kind(r->copyKind);
      m.bytes = r->bytes;
      m.src = mem_kind(r->srcKind);
      m.dst = mem_kind(r->dstKind);
      fill_gpu_work(r, pid, &m);
      trace.memcpys.push_back(m);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* r = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      Memset m;
      m.bytes = r->bytes;
      m.value = r->value;
      m.mem = mem_kind(r->memoryKind);
      fill_gpu_work(r, pid, &m);
      trace.memsets.push_back(m);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* r = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      const bool runtime = record->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      ApiCall c;
      c.name = trace.intern(api_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, r->cbid));
      c.pid = r->processId;
      c.tid = r->threadId;
      c.start = static_cast<Ns>(r->start);
      c.end = static_cast<Ns>(r->end);
      c.correlation = r->correlationId;
      c.return_value = static_cast<int32_t>(r->returnValue);
      trace.api_calls.push_back(std::move(c));
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* r = reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
      SyncEvent s;
      s.type = sync_type(r->type);
      s.pid = pid;
      s.stream = r->streamId;  // an invalid-value marker for a context synchronize
      s.start = static_cast<Ns>(r->start);
      s.end = static_cast<Ns>(r->end);
      s.correlation = r->correlationId;
      trace.syncs.push_back(s);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER:  // instantaneous markers (nvtxMark) are not ranges
      consume_marker(reinterpret_cast<const CUpti_ActivityMarker2*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MARKER_DATA:
      consume_marker_data(reinterpret_cast<const CUpti_ActivityMarkerData2*>(record));
      break;
    default:
      break;
  }
}

// An NVTX range's start or end (push/pop and start/end alike).
void CuptiState::consume_marker(const CUpti_ActivityMarker2* r) {
  const bool thread = r->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD;
  const uint32_t p = r->objectId.pt.processId, t = thread ? r->objectId.pt.threadId : 0;
  if (r->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    NvtxEvent range;
    range.text = trace.intern(r->name ? r->name : "");
    range.domain = trace.intern(r->domain ? r->domain : "");
    range.pid = p;
    range.tid = t;
    range.start = static_cast<Ns>(r->timestamp);
    open[r->id] = std::move(range);
  } else if (r->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    auto it = open.find(r->id);
    if (it == open.end()) return;  // its START came before the tracer did
    NvtxEvent range = std::move(it->second);
    open.erase(it);
    range.end = static_cast<Ns>(r->timestamp);
    // CUPTI reports push/pop and start/end ranges alike; only push/pop ranges must end
    // on the thread that opened them, and those are what nesting is computed over.
    range.kind = thread && t == range.tid ? NvtxKind::PushPop : NvtxKind::StartEnd;
    trace.nvtx.push_back(std::move(range));
    closed_ids.push_back(r->id);
  }
}

// The category and payload of a range (the bench's iteration index rides in the payload).
void CuptiState::consume_marker_data(const CUpti_ActivityMarkerData2* r) {
  Data& d = data[r->id];
  d.category = r->category;
  switch (r->payloadKind) {
    case CUPTI_METRIC_VALUE_KIND_UINT64:
      d.has_payload = true;
      d.payload = r->payload.metricValueUint64;
      break;
    case CUPTI_METRIC_VALUE_KIND_INT64:
      d.has_payload = true;
      d.payload = static_cast<uint64_t>(r->payload.metricValueInt64);
      break;
    default:  // doubles, extended payloads: not an iteration index
      break;
  }
}

namespace {

// The kinds nsys's `--trace=cuda` records; SYNCHRONIZATION is optional (older drivers).
const CUpti_ActivityKind kCudaKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME,
                                         CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_MEMCPY,
                                         CUPTI_ACTIVITY_KIND_MEMSET};
const CUpti_ActivityKind kNvtxKinds[] = {CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_MARKER_DATA};

void disable_all() {
  for (CUpti_ActivityKind k : kCudaKinds) cuptiActivityDisable(k);
  for (CUpti_ActivityKind k : kNvtxKinds) cuptiActivityDisable(k);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
}

// CUDA Graphs are traced node by node: a kernel record carries the node that ran it, and these
// callbacks say where each node was made (trace/analyses/graph.h). Graph-level records
// (CUPTI_ACTIVITY_KIND_GRAPH_TRACE) would replace the kernel records of every replay, so they stay
// off. Without the callbacks the trace still has every kernel, under its launch's range.
void subscribe_graph_nodes(CuptiState& state) {
  if (cuptiSubscribe(&state.subscriber, graph_node_callback, &state) != CUPTI_SUCCESS) {
    state.subscriber = nullptr;
    state.trace.notes.push_back(
        "CUPTI refused the graph-node callbacks (another CUPTI subscriber?): the kernels of "
        "CUDA Graph replays count under the range of their launch.");
    return;
  }
  for (CUpti_CallbackId cbid : {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED})
    if (cuptiEnableCallback(1, state.subscriber, CUPTI_CB_DOMAIN_RESOURCE, cbid) != CUPTI_SUCCESS) {
      cuptiUnsubscribe(state.subscriber);
      state.subscriber = nullptr;
      state.trace.notes.push_back(
          "CUPTI refused the graph-node callbacks: the kernels of CUDA Graph replays count "
          "under the range of their launch.");
      return;
    }
}

void unsubscribe_graph_nodes(CuptiState& state) {
  if (state.subscriber) cuptiUnsubscribe(state.subscriber);
  state.subscriber = nullptr;
}

}  // namespace

CuptiTracer::CuptiTracer(NvtxCapture nvtx) : state_(std::make_unique<CuptiState>()) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_state) throw TraceError("a CUPTI tracer is already recording: only one can at a time.");
    g_state = state_.get();
  }
  try {
    state_->pid = static_cast<uint32_t>(getpid());
    // Thread ids as the OS numbers them (gettid), the same in API and marker records and
    // in name_current_thread.
    CUPTI_CALL(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
    CUPTI_CALL(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    for (CUpti_ActivityKind k : kCudaKinds) check(cuptiActivityEnable(k), "cuptiActivityEnable");
    if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) != CUPTI_SUCCESS)
      state_->trace.notes.push_back(
          "CUPTI synchronization records are not available here; synchronizations are "
          "found by API name only.");
    subscribe_graph_nodes(*state_);
  } catch (const TraceError& e) {
    disable_all();
    unsubscribe_graph_nodes(*state_);
    std::lock_guard<std::mutex> lock(g_mu);
    g_state = nullptr;
    std::string msg = e.what();
    if (!msg.empty() && msg.back() == '.') msg.pop_back();
    throw TraceError(msg +
                     " (--trace needs a GPU with its driver, and no other profiler attached: not under nsys or ncu).");
  }
  // NVTX last, once CUPTI works: pointing NVTX at CUPTI without a tracer behind it would
  // leave every NVTX call going to a half-set-up injection. The variable only has to be set
  // before the first NVTX call, which comes later (the tracer starts before CUDA and NVTX).
  if (nvtx == NvtxCapture::Inject) {
    const char* before = std::getenv("NVTX_INJECTION64_PATH");
    const std::string previous = before ? before : "";
    injects_nvtx_ = inject_nvtx(state_->trace.notes);
    for (CUpti_ActivityKind k : kNvtxKinds)
      if (injects_nvtx_ && cuptiActivityEnable(k) != CUPTI_SUCCESS) {
        if (previous.empty())
          unsetenv("NVTX_INJECTION64_PATH");
        else
          setenv("NVTX_INJECTION64_PATH", previous.c_str(), 1);
        injects_nvtx_ = false;
        state_->trace.notes.push_back("NVTX ranges were not recorded: CUPTI refused marker records.");
      }
  }
}

CuptiTracer::~CuptiTracer() {
  try {
    stop();
  } catch (...) {
  }
}

void CuptiTracer::name_current_thread(const std::string& name) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->trace.thread_names[{state_->pid, current_tid()}] = name;
}

void CuptiTracer::stop() {
  if (stopped_) return;
  stopped_ = true;
  // Forced: hand over partly filled buffers too. Synchronous: every buffer has been through
  // buffer_completed when it returns, so the state can be detached right after.
  const CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  disable_all();
  unsubscribe_graph_nodes(*state_);
  std::lock_guard<std::mutex> lock(g_mu);
  g_state = nullptr;
  check(flushed, "cuptiActivityFlushAll");
}

Trace CuptiTracer::take() {
  stop();
  CuptiState& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  Trace& t = s.trace;
  for (size_t i = 0; i < t.nvtx.size(); ++i) {
    auto it = s.data.find(s.closed_ids[i]);
    if (it == s.data.end()) continue;
    t.nvtx[i].category = it->second.category;
    t.nvtx[i].has_payload = it->second.has_payload;
    t.nvtx[i].payload = it->second.payload;
  }
  if (!s.open.empty())
    t.notes.push_back(std::to_string(s.open.size()) +
                      " NVTX range(s) were still open when the tracer stopped and are "
                      "ignored.");
  if (injects_nvtx_ && t.nvtx.empty())
    t.notes.push_back("No NVTX ranges were recorded: was NVTX already in use before the tracer started?");
  if (s.dropped)
    t.notes.push_back("CUPTI dropped " + std::to_string(s.dropped) +
                      " records (its buffers were full): the trace "
                      "is incomplete.");
  if (s.unreadable) t.notes.push_back(std::to_string(s.unreadable) + " CUPTI records could not be read.");

  std::set<uint32_t> devices;
  for (const Kernel& k : t.kernels) devices.insert(k.device);
  for (uint32_t d : devices) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, static_cast<int>(d)) == cudaSuccess)
      t.gpus.push_back({d, p.name, p.multiProcessorCount});
  }
  uint32_t version = 0;
  cuptiGetVersion(&version);
  t.source = "CUPTI tracer (CUPTI API " + std::to_string(version) + ")";
  t.finalize();
  return std::move(t);
}

}  // namespace laptime::trace
