#include "trace/model/trace.h"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <set>
#include <tuple>
#include <unordered_map>

#include "trace/model/text.h"

namespace laptime::trace {

const char* mem_kind_name(MemKind k) {
  switch (k) {
    case MemKind::Pageable:
      return "pageable";
    case MemKind::Pinned:
      return "pinned";
    case MemKind::Device:
      return "device";
    case MemKind::Array:
      return "array";
    case MemKind::Managed:
      return "managed";
    case MemKind::DeviceStatic:
      return "device static";
    case MemKind::ManagedStatic:
      return "managed static";
    case MemKind::Unknown:
      return "unknown";
  }
  return "unknown";
}

const char* copy_kind_name(CopyKind k) {
  switch (k) {
    case CopyKind::Unknown:
      return "unknown";
    case CopyKind::HtoD:
      return "HtoD";
    case CopyKind::DtoH:
      return "DtoH";
    case CopyKind::HtoA:
      return "HtoA";
    case CopyKind::AtoH:
      return "AtoH";
    case CopyKind::AtoA:
      return "AtoA";
    case CopyKind::AtoD:
      return "AtoD";
    case CopyKind::DtoA:
      return "DtoA";
    case CopyKind::DtoD:
      return "DtoD";
    case CopyKind::HtoH:
      return "HtoH";
    case CopyKind::PtoP:
      return "PtoP";
  }
  return "unknown";
}

const char* sync_type_name(SyncType t) {
  switch (t) {
    case SyncType::Unknown:
      return "unknown";
    case SyncType::EventSynchronize:
      return "event synchronize";
    case SyncType::StreamWaitEvent:
      return "stream wait event";
    case SyncType::StreamSynchronize:
      return "stream synchronize";
    case SyncType::ContextSynchronize:
      return "context synchronize";
  }
  return "unknown";
}

std::string normalize_api_name(const std::string& raw) {
  std::string s = raw;
  // Version suffix: "_v" followed by digits only, at the very end.
  const size_t v = s.rfind("_v");
  if (v != std::string::npos && v + 2 < s.size() &&
      std::all_of(s.begin() + v + 2, s.end(), [](unsigned char c) { return std::isdigit(c); }))
    s.erase(v);
  // Per-thread default stream variants: same call, same meaning for our rules.
  for (const char* suffix : {"_ptsz", "_ptds"}) {
    const size_t n = std::char_traits<char>::length(suffix);
    if (s.size() > n && s.compare(s.size() - n, n, suffix) == 0) s.erase(s.size() - n);
  }
  return s;
}

ApiKind api_kind(const std::string& name) {
  return name.compare(0, 4, "cuda") == 0 || name.compare(0, 2, "cu") != 0 ? ApiKind::Runtime : ApiKind::Driver;
}

std::string demangle(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                                  &std::free);
  return status == 0 && out ? std::string(out.get()) : mangled;
}

std::string short_kernel_name(const std::string& demangled) {
  std::string s = demangled;
  // Strip one bracketed group that ends the string: walk back to its opening bracket.
  auto strip_trailing = [&s](char open, char close) {
    if (s.empty() || s.back() != close) return;
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == close) ++depth;
      if (s[i] == open && --depth == 0) {
        s.erase(i);
        return;
      }
    }
  };
  strip_trailing('(', ')');  // parameters
  strip_trailing('<', '>');  // template arguments
  // Namespaces and classes, "(anonymous namespace)" included; then the return type.
  const size_t colons = s.rfind("::");
  if (colons != std::string::npos) s.erase(0, colons + 2);
  const size_t space = s.rfind(' ');
  if (space != std::string::npos) s.erase(0, space + 1);
  return s.empty() ? demangled : s;
}

namespace {

// A stable sort that costs one pass over rows already in order, and a few over rows in a few
// ordered stretches (nsys writes every table in start order; a grown or merged trace has a tail
// out of order; calls of several threads interleave): the maximal ordered runs are merged in
// pairs, which is what a stable sort of the whole gives. Many short runs: std::stable_sort.
template <typename T, typename Less>
void sort_runs(std::vector<T>& v, Less less) {
  std::vector<size_t> runs{0};  // where each run starts
  for (size_t i = 1; i < v.size(); ++i)
    if (less(v[i], v[i - 1])) {
      runs.push_back(i);
      if (runs.size() > 64) return std::stable_sort(v.begin(), v.end(), less);
    }
  runs.push_back(v.size());
  const auto at = [&v](size_t i) { return v.begin() + static_cast<std::ptrdiff_t>(i); };
  while (runs.size() > 2) {
    std::vector<size_t> merged{0};
    for (size_t r = 0; r + 1 < runs.size(); r += 2) {
      const size_t end = r + 2 < runs.size() ? runs[r + 2] : runs[r + 1];
      if (r + 2 < runs.size()) std::inplace_merge(at(runs[r]), at(runs[r + 1]), at(end), less);
      merged.push_back(end);
    }
    runs = std::move(merged);
  }
}

template <typename T>
void sort_by_start(std::vector<T>& v) {
  sort_runs(v, [](const T& a, const T& b) { return a.start < b.start; });
}

}  // namespace

void Trace::finalize() {
  // Every name through escape_name: the writers then never meet bytes their format forbids.
  // Interned names are checked once each, however many rows share them.
  std::set<std::string> escaped;
  auto clean = [&escaped](std::string& s) {
    if (!needs_escape(s)) return;
    escaped.insert(s);
    s = escape_name(s);
  };
  std::unordered_map<const void*, Name> cleaned;  // a name -> its escaped form
  auto clean_name = [&](Name& n) {
    auto [it, fresh] = cleaned.try_emplace(n.key(), n);
    if (fresh && needs_escape(n.str())) {
      escaped.insert(n);
      it->second = intern(escape_name(n.str()));
    }
    n = it->second;
  };
  for (Kernel& k : kernels) {
    clean_name(k.name);
    clean_name(k.short_name);
  }
  for (ApiCall& c : api_calls) clean_name(c.name);
  for (NvtxEvent& r : nvtx) {
    clean_name(r.domain);
    clean_name(r.text);
  }
  for (Gpu& g : gpus) clean(g.name);
  for (auto& [thread, name] : thread_names) clean(name);
  for (auto& [pid, name] : process_names) clean(name);
  std::map<std::pair<std::string, uint32_t>, std::string> categories;
  for (auto [key, name] : category_names) {
    std::string domain = key.first;
    clean(domain);
    clean(name);
    categories[{domain, key.second}] = name;
  }
  category_names = std::move(categories);
  clean(source);
  for (std::string& note : notes) clean(note);
  if (!escaped.empty())
    notes.push_back(std::to_string(escaped.size()) + (escaped.size() == 1 ? " name" : " names") +
                    " held invalid UTF-8 or control characters, shown as \\xNN escapes.");

  sort_by_start(kernels);
  sort_by_start(memcpys);
  sort_by_start(memsets);
  sort_by_start(api_calls);
  sort_by_start(syncs);
  sort_by_start(graph_replays);
  sort_runs(graph_nodes, [](const GraphNode& a, const GraphNode& b) { return a.created < b.created; });
  // Outer ranges first when two start together, so the stack sweep below sees parents
  // before children.
  const auto outer_first = [](const NvtxEvent& a, const NvtxEvent& b) {
    return std::make_tuple(a.start, -a.end) < std::make_tuple(b.start, -b.end);
  };
  sort_runs(nvtx, outer_first);

  // Nesting per thread: a stack of open ranges; whatever does not contain the next range
  // has ended (or overlaps it without nesting, as start/end ranges may) and is popped.
  std::map<std::pair<uint32_t, uint32_t>, std::vector<int>> open;
  for (size_t i = 0; i < nvtx.size(); ++i) {
    NvtxEvent& r = nvtx[i];
    std::vector<int>& stack = open[{r.pid, r.tid}];
    while (!stack.empty() && nvtx[stack.back()].end < r.end) stack.pop_back();
    r.parent = stack.empty() ? -1 : stack.back();
    r.depth = static_cast<int>(stack.size());
    stack.push_back(static_cast<int>(i));
  }

  join_api_calls();
  for (Memcpy& m : memcpys)
    if (const ApiCall* call = api_call_of(m))
      m.host_sync = call->name.str().find("Async") != std::string::npos ? HostSync::Async : HostSync::Blocking;
}

void Trace::join_api_calls() {
  // (pid, correlation) -> call, as one sorted array of 12-byte keys, held only while the rows are
  // joined: each row keeps its call's index instead (an index kept for lookups cost 24 bytes a
  // call, 50 MB at 10^6 kernels). Runtime calls first: should a driver call ever share a
  // correlation id with a runtime call, the runtime call is the one the user wrote; then the
  // earliest.
  struct Key {
    uint32_t correlation;
    uint32_t pid;
    uint32_t driver_index;  // driver bit (runtime 0) above the call's index
    bool operator<(const Key& o) const {
      return correlation != o.correlation ? correlation < o.correlation
             : pid != o.pid               ? pid < o.pid
                                          : driver_index < o.driver_index;
    }
  };
  constexpr uint32_t kDriver = 1u << 31;  // indices are ints: below it
  std::vector<Key> keys;
  keys.reserve(api_calls.size());
  for (size_t i = 0; i < api_calls.size(); ++i)
    keys.push_back({api_calls[i].correlation, api_calls[i].pid,
                    (api_calls[i].kind() == ApiKind::Runtime ? 0 : kDriver) | static_cast<uint32_t>(i)});
  // Correlation ids grow with time, so the keys mostly arrive in order.
  sort_runs(keys, std::less<Key>());
  auto find = [&keys](uint32_t pid, uint32_t correlation) {
    auto it = std::lower_bound(keys.begin(), keys.end(), Key{correlation, pid, 0});
    return it != keys.end() && it->correlation == correlation && it->pid == pid
               ? static_cast<int>(it->driver_index & ~kDriver)
               : -1;
  };
  auto join = [&find](auto& rows) {
    for (auto& w : rows) w.api = find(w.pid, w.correlation);
  };
  join(kernels);
  join(memcpys);
  join(memsets);
  join(graph_replays);
  join(syncs);
}

std::string Trace::thread_name(uint32_t pid, uint32_t tid) const {
  auto it = thread_names.find({pid, tid});
  if (it != thread_names.end() && !it->second.empty()) return it->second;
  return "tid " + std::to_string(tid);
}

std::string Trace::category_name(const NvtxEvent& r) const {
  auto it = category_names.find({r.domain, r.category});
  return it == category_names.end() ? std::string() : it->second;
}

std::string process_name(const Trace& t, uint32_t pid) {
  if (auto named = t.process_names.find(pid); named != t.process_names.end() && !named->second.empty())
    return named->second;
  auto it = t.thread_names.find({pid, pid});  // the main thread's name is the program's
  if (it != t.thread_names.end() && !it->second.empty()) return it->second;
  // Else its first named thread (a trace written by another tool may number threads otherwise).
  for (it = t.thread_names.lower_bound({pid, 0}); it != t.thread_names.end() && it->first.first == pid; ++it)
    if (!it->second.empty()) return it->second;
  return "";
}

std::string process_label(const Trace& t, uint32_t pid) {
  const std::string name = process_name(t, pid);
  return std::to_string(pid) + (name.empty() ? "" : " (" + detail::clip(name) + ")");
}

}  // namespace laptime::trace
