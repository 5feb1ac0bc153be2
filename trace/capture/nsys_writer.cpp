#include "trace/capture/nsys_writer.h"

#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "trace/read/nsys_sqlite.h"
#include "trace/read/sqlite.h"

namespace laptime::trace {
namespace {

using sqlite::Db;
using sqlite::Stmt;

// The subset of nsys's schema (same table and column names, same enum numbering) that the
// reader uses. Column comments are nsys's.
const char* const kSchema[] = {
    R"SQL(CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL))SQL",
    R"SQL(CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER))SQL",
    R"SQL(CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT))SQL",
    R"SQL(CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL, name TEXT, smCount INTEGER))SQL",
    R"SQL(CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT))SQL",
    R"SQL(CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT))SQL",
    R"SQL(CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT))SQL",
    R"SQL(CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT))SQL",
    R"SQL(CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
  shortName INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, graphNodeId INTEGER))SQL",
    R"SQL(CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
  copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER, graphNodeId INTEGER))SQL",
    R"SQL(CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL,
  bytes INTEGER NOT NULL, memKind INTEGER, graphNodeId INTEGER))SQL",
    R"SQL(CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, graphId INTEGER NOT NULL,
  graphExecId INTEGER NOT NULL))SQL",
    R"SQL(CREATE TABLE CUDA_GRAPH_NODE_EVENTS (
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
  nameId INTEGER NOT NULL, graphNodeId INTEGER NOT NULL, originalGraphNodeId INTEGER))SQL",
    R"SQL(CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL))SQL",
    R"SQL(CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL,
  eventId INTEGER NOT NULL))SQL",
    R"SQL(CREATE TABLE NVTX_EVENTS (
  start INTEGER NOT NULL, "end" INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER,
  color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER,
  uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
  floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT))SQL",
    R"SQL(INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (33, 'NvtxCategory', 'NvtxCategory'), (34, 'NvtxMark', 'NvtxMark'),
  (59, 'NvtxPushPopRange', 'NvtxPushPopRange'), (60, 'NvtxStartEndRange', 'NvtxStartEndRange'),
  (75, 'NvtxDomainCreate', 'NvtxDomainCreate'))SQL",
    R"SQL(INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable'),
  (1, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned'), (2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device'),
  (3, 'CUDA_MEMOPR_MEMORY_KIND_ARRAY', 'Array'), (4, 'CUDA_MEMOPR_MEMORY_KIND_MANAGED', 'Managed'),
  (5, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC', 'Device Static'),
  (6, 'CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC', 'Managed Static'), (7, 'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN', 'Unknown'))SQL",
    R"SQL(INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (0, 'CUDA_MEMCPY_KIND_UNKNOWN', 'Unknown'),
  (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device'), (2, 'CUDA_MEMCPY_KIND_DTOH', 'Device-to-Host'),
  (3, 'CUDA_MEMCPY_KIND_HTOA', 'Host-to-Array'), (4, 'CUDA_MEMCPY_KIND_ATOH', 'Array-to-Host'),
  (5, 'CUDA_MEMCPY_KIND_ATOA', 'Array-to-Array'), (6, 'CUDA_MEMCPY_KIND_ATOD', 'Array-to-Device'),
  (7, 'CUDA_MEMCPY_KIND_DTOA', 'Device-to-Array'), (8, 'CUDA_MEMCPY_KIND_DTOD', 'Device-to-Device'),
  (9, 'CUDA_MEMCPY_KIND_HTOH', 'Host-to-Host'), (10, 'CUDA_MEMCPY_KIND_PTOP', 'Peer-to-Peer'))SQL",
    R"SQL(INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES (0, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN', 'Unknown'),
  (1, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE', 'Event sync'),
  (2, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT', 'Stream wait sync'),
  (3, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE', 'Stream sync'),
  (4, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE', 'Context sync'))SQL",
};

class StringTable {
 public:
  int64_t id(const std::string& s) {
    auto [it, inserted] = ids_.emplace(s, static_cast<int64_t>(ids_.size()));
    return it->second;
  }
  const std::map<std::string, int64_t>& all() const { return ids_; }

 private:
  std::map<std::string, int64_t> ids_;
};

// The tables the save writes, one function a group; strings get their ids in the order these
// run (StringIds), so the order is part of the file.

// nsys's globalPid: the process in the bits where globalTid has it, no thread.
int64_t global_pid(uint32_t pid) { return global_tid(pid, 0); }

// What the capture is, its threads' names and its GPUs.
void save_process_info(Db& db, const Trace& t, StringTable& strings) {
  {
    Stmt s(db.get(), "INSERT INTO META_DATA_EXPORT VALUES (?, ?)");
    s.bind(1, std::string("LAPTIME_TRACE"));
    s.bind(2, t.source.empty() ? std::string("trace") : t.source);
    s.insert();
  }
  {
    Stmt s(db.get(), "INSERT INTO ThreadNames VALUES (?, 0, ?)");
    for (const auto& [thread, name] : t.thread_names) {
      s.bind(1, strings.id(name));
      s.bind(2, global_tid(thread.first, thread.second));
      s.insert();
    }
  }
  {
    Stmt s(db.get(), "INSERT INTO TARGET_INFO_GPU VALUES (?, ?, ?)");
    for (const Gpu& g : t.gpus) {
      s.bind(1, int64_t{g.id});
      s.bind(2, g.name);
      s.bind(3, int64_t{g.sm_count});
      s.insert();
    }
  }
}

std::optional<int64_t> graph_node(const GpuWork& w) {
  if (w.graph_node == kNoGraphNode) return std::nullopt;
  return static_cast<int64_t>(w.graph_node);
}

// Kernels, copies and memsets, with the process in the high bits as nsys writes it.
void save_gpu_work(Db& db, const Trace& t, StringTable& strings) {
  {
    Stmt s(db.get(), "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const Kernel& k : t.kernels) {
      s.insert_row({k.start, k.end, int64_t{k.device}, int64_t{k.stream}, static_cast<int64_t>(k.correlation),
                    global_pid(k.pid), strings.id(k.name), strings.id(k.short_name), int64_t{k.grid.x},
                    int64_t{k.grid.y}, int64_t{k.grid.z}, int64_t{k.block.x}, int64_t{k.block.y}, int64_t{k.block.z}},
                   {graph_node(k)});
    }
  }
  {
    Stmt s(db.get(), "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const Memcpy& m : t.memcpys) {
      s.insert_row({m.start, m.end, int64_t{m.device}, int64_t{m.stream}, static_cast<int64_t>(m.correlation),
                    global_pid(m.pid), static_cast<int64_t>(m.bytes), static_cast<int64_t>(m.kind),
                    static_cast<int64_t>(m.src), static_cast<int64_t>(m.dst)},
                   {graph_node(m)});
    }
  }
  {
    Stmt s(db.get(), "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?)");
    for (const Memset& m : t.memsets) {
      s.insert_row({m.start, m.end, int64_t{m.device}, int64_t{m.stream}, static_cast<int64_t>(m.correlation),
                    global_pid(m.pid), int64_t{m.value}, static_cast<int64_t>(m.bytes), static_cast<int64_t>(m.mem)},
                   {graph_node(m)});
    }
  }
}

// The host calls and CUPTI's synchronization records.
void save_api_calls(Db& db, const Trace& t, StringTable& strings) {
  {
    // Driver calls go in the same table, as nsys writes them; the reader tells them apart by name.
    Stmt s(db.get(), "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, ?, ?)");
    for (const ApiCall& c : t.api_calls) {
      s.insert_row({c.start, c.end, global_tid(c.pid, c.tid), static_cast<int64_t>(c.correlation), strings.id(c.name),
                    int64_t{c.return_value}});
    }
  }
  {
    Stmt s(db.get(), "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (?, ?, ?, 0, ?, ?, ?, ?, 0)");
    for (const SyncEvent& e : t.syncs) {
      s.insert_row({e.start, e.end, int64_t{e.device}, int64_t{e.stream}, static_cast<int64_t>(e.correlation),
                    global_pid(e.pid), static_cast<int64_t>(e.type)});
    }
  }
}

// The graph tables, as nsys names them (trace/analyses/graph.h): replays traced whole, node creations.
void save_graph_tables(Db& db, const Trace& t, StringTable& strings) {
  {
    Stmt s(db.get(), "INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?)");
    for (const GraphReplay& g : t.graph_replays)
      s.insert_row({g.start, g.end, int64_t{g.device}, int64_t{g.stream}, static_cast<int64_t>(g.correlation),
                    global_pid(g.pid), int64_t{g.graph}, int64_t{g.exec}});
  }
  Stmt s(db.get(), "INSERT INTO CUDA_GRAPH_NODE_EVENTS VALUES (?, ?, 77, ?, ?, ?, ?)");
  const int64_t name = t.graph_nodes.empty() ? 0 : strings.id("Graph Node Creation");
  for (const GraphNode& n : t.graph_nodes) {
    const std::optional<int64_t> original =
        n.original == kNoGraphNode ? std::nullopt : std::optional<int64_t>(static_cast<int64_t>(n.original));
    s.insert_row({n.created, n.created, global_tid(n.pid, n.tid), name, static_cast<int64_t>(n.id)}, {original});
  }
}

// The ranges, their domains (registered on first use) and the category names.
void save_nvtx(Db& db, const Trace& t) {
  // Domains get ids in order of first appearance; the default domain is 0, as in NVTX.
  std::map<std::pair<uint32_t, std::string>, int64_t> domain_ids;
  Stmt domain(db.get(),
              "INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (?, 75, ?, ?, ?)");
  auto domain_id = [&](uint32_t pid, const std::string& name) -> int64_t {
    if (name.empty()) return 0;
    auto [it, inserted] = domain_ids.emplace(std::make_pair(pid, name), 0);
    if (inserted) {
      int64_t n = 0;
      for (const auto& [key, id] : domain_ids) n += key.first == pid ? 1 : 0;
      it->second = n;
      domain.bind(1, int64_t{0});
      domain.bind(2, name);
      domain.bind(3, global_tid(pid, 0));
      domain.bind(4, n);
      domain.insert();
    }
    return it->second;
  };
  Stmt s(db.get(),
         "INSERT INTO NVTX_EVENTS (start, \"end\", eventType, category, text, globalTid, endGlobalTid, domainId, "
         "uint64Value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const NvtxEvent& r : t.nvtx) {
    s.bind(1, r.start);
    s.bind(2, r.end);
    s.bind(3, int64_t{r.kind == NvtxKind::PushPop ? 59 : 60});
    s.bind(4, int64_t{r.category});
    s.bind(5, r.text);
    s.bind(6, global_tid(r.pid, r.tid));
    s.bind(7, global_tid(r.pid, r.tid));
    s.bind(8, domain_id(r.pid, r.domain));
    if (r.has_payload)
      s.bind(9, static_cast<int64_t>(r.payload));
    else
      s.bind_null(9);
    s.insert();
  }
  // Category names belong to a domain; the trace model keeps them by domain name, so
  // they are written for every process that used the domain.
  Stmt c(db.get(),
         "INSERT INTO NVTX_EVENTS (start, eventType, category, text, globalTid, domainId) VALUES (0, 33, ?, ?, ?, ?)");
  std::set<uint32_t> pids;
  for (const NvtxEvent& r : t.nvtx) pids.insert(r.pid);
  for (const auto& [key, name] : t.category_names)
    for (uint32_t pid : pids) {
      c.bind(1, int64_t{key.second});
      c.bind(2, name);
      c.bind(3, global_tid(pid, 0));
      c.bind(4, domain_id(pid, key.first));
      c.insert();
    }
}

void save_strings(Db& db, const StringTable& strings) {
  Stmt s(db.get(), "INSERT INTO StringIds VALUES (?, ?)");
  for (const auto& [value, id] : strings.all()) {
    s.bind(1, id);
    s.bind(2, value);
    s.insert();
  }
}

}  // namespace

void save_nsys_sqlite(const Trace& t, const std::string& path) {
  std::remove(path.c_str());  // a fresh file: never append to an older capture
  Db db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  for (const char* sql : {"PRAGMA journal_mode = OFF", "PRAGMA synchronous = OFF", "BEGIN"}) db.exec(sql);
  for (const char* sql : kSchema) db.exec(sql);
  StringTable strings;
  save_process_info(db, t, strings);
  save_gpu_work(db, t, strings);
  save_api_calls(db, t, strings);
  save_graph_tables(db, t, strings);
  save_nvtx(db, t);
  save_strings(db, strings);
  db.exec("COMMIT");
}

}  // namespace laptime::trace
