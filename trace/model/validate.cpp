#include "trace/model/validate.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "trace/model/error.h"

namespace laptime::trace {

const char* drop_reason_words(DropReason r) {
  switch (r) {
    case DropReason::Null:
      return "NULL time or id";
    case DropReason::NotInteger:
      return "text where an integer belongs";
    case DropReason::OutOfRange:
      return "time or id out of range";
    case DropReason::EndBeforeStart:
      return "end before start";
    case DropReason::OutOfSpan:
      return "outside the capture's span";
  }
  return "?";
}

const char* drop_reason_key(DropReason r) {
  switch (r) {
    case DropReason::Null:
      return "null";
    case DropReason::NotInteger:
      return "not_integer";
    case DropReason::OutOfRange:
      return "out_of_range";
    case DropReason::EndBeforeStart:
      return "end_before_start";
    case DropReason::OutOfSpan:
      return "out_of_span";
  }
  return "?";
}

size_t DroppedRows::Table::dropped() const {
  size_t n = 0;
  for (size_t c : by_reason) n += c;
  return n;
}

size_t DroppedRows::total() const {
  size_t n = 0;
  for (const auto& [name, t] : tables) n += t.dropped();
  return n;
}

size_t DroppedRows::count(DropReason r) const {
  size_t n = 0;
  for (const auto& [name, t] : tables) n += t.by_reason[static_cast<int>(r)];
  return n;
}

size_t DroppedRows::dropped(const std::string& table) const {
  auto it = tables.find(table);
  return it == tables.end() ? 0 : it->second.dropped();
}

std::string DroppedRows::summary() const {
  const size_t n = total();
  if (n == 0) return "";
  size_t read = 0;
  for (const auto& [name, t] : tables) read += t.read;
  std::string s = std::to_string(n) + " of " + std::to_string(read) + " rows left out (";
  bool first = true;
  for (const auto& [name, t] : tables) {
    if (!t.dropped()) continue;
    s += (first ? "" : ", ") + name + " " + std::to_string(t.dropped());
    first = false;
  }
  s += "): ";
  first = true;
  for (int r = 0; r < kDropReasonCount; ++r) {
    const size_t c = count(static_cast<DropReason>(r));
    if (!c) continue;
    s += (first ? "" : ", ") + std::to_string(c) + " " + drop_reason_words(static_cast<DropReason>(r));
    first = false;
  }
  return s + ".";
}

nlohmann::json dropped_json(const DroppedRows& d) {
  using nlohmann::json;
  json by_reason = json::object(), by_table = json::object();
  size_t read = 0;
  for (int r = 0; r < kDropReasonCount; ++r)
    by_reason[drop_reason_key(static_cast<DropReason>(r))] = d.count(static_cast<DropReason>(r));
  for (const auto& [name, t] : d.tables) {
    read += t.read;
    if (!t.dropped()) continue;
    json reasons = json::object();
    for (int r = 0; r < kDropReasonCount; ++r)
      if (t.by_reason[r]) reasons[drop_reason_key(static_cast<DropReason>(r))] = t.by_reason[r];
    by_table[name] = {{"read", t.read}, {"dropped", t.dropped()}, {"by_reason", reasons}};
  }
  return {
      {"total", d.total()}, {"read", read}, {"by_reason", by_reason}, {"by_table", by_table}, {"summary", d.summary()}};
}

namespace {

// What each table answers, for the sentence that says it is missing or emptied.
struct TableRole {
  const char* table;
  const char* what;     // "kernels"
  const char* answers;  // "GPU utilization and the kernel mix (questions 2 and 3) cannot be answered"
};

const TableRole kRoles[] = {
    {"CUPTI_ACTIVITY_KIND_KERNEL", "kernels",
     "GPU utilization and the kernel mix (questions 2 and 3) cannot be answered"},
    {"CUPTI_ACTIVITY_KIND_RUNTIME", "CUDA API calls",
     "GPU work cannot be tied to its iterations (questions 1 to 3 on the GPU side) and synchronizations "
     "(question 4) cannot be seen"},
    {"CUPTI_ACTIVITY_KIND_MEMCPY", "copies",
     "copies are missing from GPU utilization (question 2) and blocking copies from synchronization (question 4)"},
    {"CUPTI_ACTIVITY_KIND_MEMSET", "memsets", "memsets are missing from GPU utilization (question 2)"},
    {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "synchronization records",
     "synchronizations are found by the calls' names only (question 4)"},
};

}  // namespace

std::vector<std::string> unanswered_notes(const Trace& t, const std::vector<std::string>& missing_tables) {
  std::vector<std::string> notes;
  for (const TableRole& role : kRoles) {
    const std::string table = role.table;
    // A missing table is worth a word only where nsys always writes it for a CUDA capture.
    const bool missing = std::find(missing_tables.begin(), missing_tables.end(), table) != missing_tables.end();
    // (A graph-level trace of a program that launches only graphs has replays and no kernel table.)
    if (missing && table == "CUPTI_ACTIVITY_KIND_KERNEL" && t.graph_replays.empty()) {
      notes.push_back(std::string("The export has no ") + role.table + " table, so it holds no " + role.what + ": " +
                      role.answers + ".");
      continue;
    }
    auto it = t.dropped.tables.find(table);
    if (it == t.dropped.tables.end() || it->second.read == 0 || it->second.dropped() < it->second.read) continue;
    notes.push_back("Every row of " + table + " (" + std::to_string(it->second.read) +
                    ") was left out as invalid, so " + role.answers + ".");
  }
  return notes;
}

void require_ranges_left(const Trace& t) {
  auto it = t.dropped.tables.find("NVTX_EVENTS");
  if (!t.nvtx.empty() || it == t.dropped.tables.end() || it->second.dropped() == 0) return;
  throw TraceError("every NVTX range in the trace was left out as invalid, so its iterations cannot be found; " +
                   t.dropped.summary());
}

void check_totals(const Trace& t) {
  Ns lo = kMaxTime, hi = 0;
  unsigned __int128 durations = 0;
  size_t records = 0;
  auto add = [&](Ns start, Ns end) {
    lo = std::min(lo, start);
    hi = std::max(hi, end);
    durations += static_cast<unsigned __int128>(end - start);
    ++records;
  };
  for (const Kernel& k : t.kernels) add(k.start, k.end);
  for (const Memcpy& m : t.memcpys) add(m.start, m.end);
  for (const Memset& m : t.memsets) add(m.start, m.end);
  for (const ApiCall& c : t.api_calls) add(c.start, c.end);
  for (const SyncEvent& s : t.syncs) add(s.start, s.end);
  for (const GraphReplay& g : t.graph_replays) add(g.start, g.end);
  for (const NvtxEvent& r : t.nvtx) add(r.start, r.end);
  if (records == 0) return;
  const Ns span = hi - lo;  // both in [0, 2^62)
  // Each iteration (an NVTX range) adds at most the span to a per-iteration sum, twice over
  // in the verdict (span plus the idle time between iterations).
  const unsigned __int128 per_iteration = static_cast<unsigned __int128>(span) * (2 * t.nvtx.size() + 4);
  const unsigned __int128 limit = static_cast<unsigned __int128>(kMaxTime);
  if (durations < limit && per_iteration < limit) return;
  char span_s[32];
  std::snprintf(span_s, sizeof span_s, "%.3g", span / 1e9);
  throw TraceError("the trace's " + std::to_string(records) + " records span " + span_s +
                   " s and add up past what 64-bit nanoseconds hold: it is not a capture laptime can analyze.");
}

}  // namespace laptime::trace
