#include "trace/ncu/ncu_csv.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <unordered_map>

#include "core/os.h"
#include "trace/read/csv_reader.h"
#include "trace/model/format.h"
#include "trace/model/text.h"
#include "trace/model/error.h"

namespace laptime::trace {
namespace {

using M = NcuMetric;
using detail::format;

// In NcuMetric's order. The section is the one `laptime kernels --command` asks for that
// collects the metric, named in the note when a report lacks it; the bound, far above what any
// GPU reaches (an hour's kernel, 10 PB/s, a grid of 2^31 x 65535^2 blocks), refuses a value no
// GPU can produce before it prints a 300-digit time or an inf% share.
constexpr NcuColumn kColumns[] = {
    {M::Time, "gpu__time_duration.sum", "ns", "SpeedOfLight", 1e13},
    {M::DramBytesPerSecond, "dram__bytes.sum.per_second", "byte/s", "SpeedOfLight_RooflineChart", 1e16},
    {M::DramPeakBytesPerCycle, "dram__bytes.sum.peak_sustained", "byte/cycle", "SpeedOfLight_RooflineChart", 1e7},
    {M::DramCyclesPerSecond, "dram__cycles_elapsed.avg.per_second", "hz", "SpeedOfLight_RooflineChart", 1e12},
    {M::DramPct, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "%", "SpeedOfLight", 1e3},
    {M::MemoryPct, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "%", "SpeedOfLight", 1e3},
    {M::ComputePct, "sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", "SpeedOfLight", 1e3},
    {M::TensorPct, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", "%", "ComputeWorkloadAnalysis",
     1e3},
    {M::FaddRate, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed", "inst/cycle",
     "SpeedOfLight_RooflineChart", 1e7},
    {M::FmulRate, "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed", "inst/cycle",
     "SpeedOfLight_RooflineChart", 1e7},
    {M::FfmaRate, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed", "inst/cycle",
     "SpeedOfLight_RooflineChart", 1e7},
    {M::DaddRate, "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum.per_cycle_elapsed", "inst/cycle",
     "SpeedOfLight_RooflineChart", 1e7},
    {M::DmulRate, "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum.per_cycle_elapsed", "inst/cycle",
     "SpeedOfLight_RooflineChart", 1e7},
    {M::DfmaRate, "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum.per_cycle_elapsed", "inst/cycle",
     "SpeedOfLight_RooflineChart", 1e7},
    {M::SmspCyclesPerSecond, "smsp__cycles_elapsed.avg.per_second", "hz", "SpeedOfLight_RooflineChart", 1e12},
    {M::OccupancyPct, "sm__warps_active.avg.pct_of_peak_sustained_active", "%", "Occupancy", 1e3},
    {M::TheoreticalOccupancyPct, "sm__maximum_warps_per_active_cycle_pct", "%", "Occupancy", 1e3},
    {M::WarpsActive, "sm__warps_active.avg.per_cycle_active", "warp", "Occupancy", 1e5},
    {M::LimitRegisters, "launch__occupancy_limit_registers", "block", "Occupancy", 1e7},
    {M::LimitSharedMemory, "launch__occupancy_limit_shared_mem", "block", "Occupancy", 1e7},
    {M::LimitWarps, "launch__occupancy_limit_warps", "block", "Occupancy", 1e7},
    {M::LimitBlocks, "launch__occupancy_limit_blocks", "block", "Occupancy", 1e7},
    {M::LimitBarriers, "launch__occupancy_limit_barriers", "block", "Occupancy", 1e7},
    {M::Registers, "launch__registers_per_thread", "register/thread", "LaunchStats", 1e5},
    {M::SharedMemoryPerBlock, "launch__shared_mem_per_block", "byte/block", "LaunchStats", 1e10},
    {M::BlockSize, "launch__block_size", "", "LaunchStats", 1e7},
    {M::GridSize, "launch__grid_size", "", "LaunchStats", 1e19},
    {M::Waves, "launch__waves_per_multiprocessor", "", "LaunchStats", 1e13},
    {M::InstExecuted, "inst_executed", "inst", "WarpStateStats", 1e20},
    {M::IssueActive, "smsp__issue_active.avg.per_cycle_active", "", "WarpStateStats", 1e3},
};
static_assert(sizeof kColumns / sizeof kColumns[0] == kNcuMetricCount, "one column per NcuMetric");

constexpr const char* kStallPrefix = "smsp__average_warps_issue_stalled_";
constexpr const char* kStallSuffix = "_per_issue_active.ratio";

// The quoted text of a cell in a message: escaped, and cut to a readable length.
std::string shown(std::string_view cell) {
  const std::string e = escape_name(cell.substr(0, 60));
  return "'" + e + (cell.size() > 60 ? "...'" : "'");
}

bool is_missing(std::string_view cell) { return cell.empty() || cell == "n/a" || cell == "no data"; }

class Interner {
 public:
  explicit Interner(std::vector<std::string>& strings) : strings_(strings) {}
  int operator()(const std::string& s) {
    auto [it, fresh] = index_.try_emplace(s, static_cast<int>(strings_.size()));
    if (fresh) strings_.push_back(s);
    return it->second;
  }

 private:
  std::vector<std::string>& strings_;
  std::unordered_map<std::string, int> index_;
};

// The columns of the header that the reader uses.
struct Layout {
  size_t fields = 0;
  size_t id = 0, pid = SIZE_MAX, process = SIZE_MAX, kernel = SIZE_MAX, nvtx = SIZE_MAX;
  size_t gpu = SIZE_MAX, sms = SIZE_MAX, schedulers = SIZE_MAX;
  std::array<size_t, kNcuMetricCount> metric;
  std::vector<size_t> stalls;
};

// Lines before the header (ncu's ==PROF== lines, the program's output) are skipped; the stream
// is left at the header's first byte. Returns the number of lines skipped.
size_t skip_to_header(std::istream& in, const std::string& source, const NcuLimits& limits) {
  std::string line;
  size_t skipped = 0;
  while (true) {
    const std::streampos at = in.tellg();
    if (!std::getline(in, line)) {
      if (skipped == 0) throw TraceError(source + " is empty: it holds no Nsight Compute report.");
      throw TraceError(source +
                       " has no Nsight Compute header row (a line that begins with \"ID\",): it is not the "
                       "CSV that `ncu --csv --page raw` prints.");
    }
    if (starts_with(line, "\"ID\",") || starts_with(line, "ID,")) {
      in.clear();
      in.seekg(at);
      if (!in) throw TraceError("cannot read " + source + " again from its header row.");
      return skipped;
    }
    if (++skipped > limits.preamble_lines)
      throw TraceError(source + " has no Nsight Compute header row in its first " +
                       std::to_string(limits.preamble_lines) + " lines: it is not the CSV of `ncu --csv --page raw`.");
  }
}

Layout read_layout(const std::vector<std::string>& header, const std::vector<std::string>& units,
                   const std::string& source, NcuReport& r) {
  Layout l;
  l.fields = header.size();
  std::map<std::string_view, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) col.emplace(header[i], i);
  auto find = [&](const char* name) {
    auto it = col.find(name);
    return it == col.end() ? SIZE_MAX : it->second;
  };
  if (find("Metric Name") != SIZE_MAX && find("Metric Value") != SIZE_MAX)
    throw TraceError(source +
                     " is Nsight Compute's details page (one row per metric): laptime reads the raw page, "
                     "one row per kernel; export it with `--csv --page raw`.");
  l.kernel = find("Kernel Name");
  if (l.kernel == SIZE_MAX)
    throw TraceError(source +
                     " has no \"Kernel Name\" column: it is not the raw page of an Nsight Compute report "
                     "(`ncu --csv --page raw`, as ncu 2025.3 writes it).");
  l.pid = find("Process ID");
  l.process = find("Process Name");
  l.gpu = find("device__attribute_display_name");
  l.sms = find("device__attribute_multiprocessor_count");
  l.schedulers = find("device__attribute_num_schedulers_per_multiprocessor");
  for (size_t i = 0; i < header.size() && l.nvtx == SIZE_MAX; ++i)
    if (header[i].find("Push/Pop_Range") != std::string::npos) l.nvtx = i;
  r.has_nvtx = l.nvtx != SIZE_MAX;
  // The row of units: ncu writes it under the header, with nothing under the identity columns.
  if (units.size() != header.size() || !units[l.id].empty())
    throw TraceError(source +
                     " has no row of units under its header (`ncu --csv --page raw` writes one, ncu 2025.3 "
                     "at least): export the report again with that ncu.");
  for (const NcuColumn& c : kColumns) {
    const size_t i = find(c.name);
    l.metric[static_cast<size_t>(c.metric)] = i;
    r.has_column[static_cast<size_t>(c.metric)] = i != SIZE_MAX;
    if (i == SIZE_MAX) {
      if (c.metric == M::Time)
        throw TraceError(source +
                         " has no column gpu__time_duration.sum (the kernels' durations): capture with "
                         "--section SpeedOfLight (`laptime kernels --command` prints the whole command).");
      continue;
    }
    if (units[i] != c.unit)
      throw TraceError(source + ": column " + c.name + " is in " + shown(units[i]) + ", not its base unit '" + c.unit +
                       "': export with `--print-units base` (`ncu --import` scales units unless told so).");
  }
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string& h = header[i];
    if (!starts_with(h, kStallPrefix) || !ends_with(h, kStallSuffix)) continue;
    if (units[i] != "inst")
      throw TraceError(source + ": column " + h + " is in " + shown(units[i]) +
                       ", not 'inst' (cycles per issued instruction): export with `--print-units base`.");
    const size_t n = std::strlen(kStallPrefix);
    r.stall_names.push_back(h.substr(n, h.size() - n - std::strlen(kStallSuffix)));
    l.stalls.push_back(i);
  }
  return l;
}

// Notes for what the report lacks, one per section.
void note_missing(NcuReport& r) {
  std::map<std::string, std::string> by_section;
  for (const NcuColumn& c : kColumns)
    if (!r.has_column[static_cast<size_t>(c.metric)])
      by_section[c.section] += std::string(by_section[c.section].empty() ? "" : ", ") + c.name;
  for (const auto& [section, names] : by_section)
    r.notes.push_back("the report has no " + names + " (ncu's section " + section + "): what needs it is shown as -.");
  if (r.stall_names.empty())
    r.notes.push_back("the report has no stall reasons (ncu's section WarpStateStats): none are shown.");
  if (!r.has_nvtx)
    r.notes.push_back("the report has no NVTX ranges (capture with `ncu --nvtx`): every kernel is under (no range).");
}

double metric_cell(const std::string& cell, const std::string& source, size_t line, const std::string& kernel,
                   const char* column, double max) {
  if (is_missing(cell)) return std::numeric_limits<double>::quiet_NaN();
  double v = 0;
  const auto where = [&] {
    return source + " line " + std::to_string(line) + " (kernel " + escape_name(ncu_short_name(kernel)) + "): column " +
           column + " holds " + shown(cell);
  };
  if (!parse_ncu_number(cell, &v) || !std::isfinite(v) || v < 0)
    throw TraceError(where() + ", not a non-negative number.");
  if (v > max) throw TraceError(where() + format(", more than any GPU produces (at most %g): not a measurement.", max));
  return v;
}

// The report's rows, held lean (NcuValues): the slots of the metrics it has, then its stalls.
void lay_out_values(const Layout& l, NcuValues& v) {
  size_t n = 0;
  for (size_t m = 0; m < kNcuMetricCount; ++m) v.slot[m] = l.metric[m] == SIZE_MAX ? -1 : static_cast<int>(n++);
  v.stall_base = n;
  v.per_row = n + l.stalls.size();
  v.stacks.emplace_back();  // [0]: no range open
}

// A push/pop stack, interned: most kernels of a report share a few dozen.
class StackInterner {
 public:
  explicit StackInterner(NcuValues& v) : v_(v) {}
  uint32_t operator()(std::vector<NcuRange> stack) {
    if (stack.empty()) return 0;
    auto [it, fresh] = index_.try_emplace(stack, static_cast<uint32_t>(v_.stacks.size()));
    if (fresh) v_.stacks.push_back(std::move(stack));
    return it->second;
  }

 private:
  NcuValues& v_;
  std::map<std::vector<NcuRange>, uint32_t> index_;
};

void read_row(const std::vector<std::string>& f, const Layout& l, size_t line, const NcuLimits& limits,
              const std::string& source, Interner& intern, StackInterner& stacks, NcuReport& r) {
  if (f.size() != l.fields)
    throw TraceError(source + " line " + std::to_string(line) + " has " + std::to_string(f.size()) +
                     " fields where the header has " + std::to_string(l.fields) +
                     " (a file cut short, or two reports joined).");
  NcuValues& values = *r.values;
  NcuKernel k;
  k.values = &values;
  k.line = line;
  k.row = static_cast<uint32_t>(r.kernels.size());
  double id = 0;
  if (!parse_ncu_number(f[l.id], &id) || id != std::floor(id) || id < 0 || id > 9e15)
    throw TraceError(source + " line " + std::to_string(line) + ": the ID column holds " + shown(f[l.id]) +
                     ", not a kernel's number.");
  k.id = static_cast<int64_t>(id);
  double pid = 0;
  if (l.pid != SIZE_MAX && parse_ncu_number(f[l.pid], &pid) && pid >= 0 && pid <= 4294967295.0)
    k.pid = static_cast<uint32_t>(pid);
  if (auto [p, fresh] = r.processes.try_emplace(k.pid); fresh && l.process != SIZE_MAX)
    p->second = f[l.process].substr(0, 200);
  const std::string& name = f[l.kernel];
  if (name.empty()) throw TraceError(source + " line " + std::to_string(line) + " has no kernel name.");
  k.name = intern(name);
  for (const NcuColumn& c : kColumns) {
    const size_t i = l.metric[static_cast<size_t>(c.metric)];
    if (i != SIZE_MAX) values.values.push_back(metric_cell(f[i], source, line, name, c.name, c.max));
  }
  if (!k.has(M::Time))
    throw TraceError(source + " line " + std::to_string(line) + " (kernel " + escape_name(ncu_short_name(name)) +
                     ") has no duration (gpu__time_duration.sum is " + shown(f[l.metric[0]]) +
                     "): ncu did not measure it; profile it again.");
  for (size_t s = 0; s < l.stalls.size(); ++s)
    values.values.push_back(metric_cell(f[l.stalls[s]], source, line, name, "of a stall reason", 1e7));
  if (l.nvtx != SIZE_MAX) {
    std::vector<std::pair<std::string, std::string>> stack;
    try {
      stack = parse_nvtx_stack(f[l.nvtx], limits.ranges);
    } catch (const TraceError& e) {
      throw TraceError(source + " line " + std::to_string(line) + ": " + e.what());
    }
    std::vector<NcuRange> ranges;
    ranges.reserve(stack.size());
    for (const auto& [domain, range] : stack) ranges.push_back({intern(domain), intern(range)});
    k.stack = stacks(std::move(ranges));
  }
  if (r.kernels.empty()) {
    if (l.gpu != SIZE_MAX) r.gpu = f[l.gpu];
    double v = 0;
    if (l.sms != SIZE_MAX && parse_ncu_number(f[l.sms], &v) && v >= 1 && v < 1e6) r.sm_count = static_cast<int>(v);
    if (l.schedulers != SIZE_MAX && parse_ncu_number(f[l.schedulers], &v) && v >= 1 && v < 1e3)
      r.schedulers = static_cast<int>(v);
  }
  r.kernels.push_back(k);
}

// --- Finding and running ncu ----------------------------------------------------------------

bool is_ncu_rep(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[4] = {};
  return f.read(magic, 4) && std::memcmp(magic, "NVR\0", 4) == 0;
}

// A temporary file for ncu's output, in $TMPDIR.
class NcuTempFile : public TempFile {
 public:
  static constexpr const char* kPrefix = "laptime-ncu-";
  // Named for this process; those of runs stopped by Ctrl-C are removed first.
  NcuTempFile() : TempFile(temp_dir(), (remove_dead_temporaries(temp_dir(), kPrefix), owned_prefix(kPrefix))) {
    if (!valid())
      throw TraceError("cannot make a temporary file for ncu's CSV in " + temp_dir() + " (" + error() +
                       "); set TMPDIR to a writable folder.");
  }
};

// Runs `ncu --import rep --csv --page raw --print-units base` with its standard output in
// `out` and its standard error in `err`; returns its exit status (or -1 when it did not run).
int run_ncu_import(const std::string& ncu, const std::string& rep, const TempFile& out, const TempFile& err) {
  const ProgramExit exit =
      run_program({ncu, "--import", rep, "--csv", "--page", "raw", "--print-units", "base"}, -1, out.fd(), err.fd());
  if (!exit.started || !exit.error.empty()) return -1;
  return exit.signal != 0 ? 128 + exit.signal : exit.status;
}

std::string first_line_of(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line))
    if (!line.empty()) return escape_name(line.substr(0, 200));
  return "";
}

}  // namespace

const NcuColumn& ncu_column(NcuMetric m) { return kColumns[static_cast<size_t>(m)]; }

bool parse_ncu_number(std::string_view s, double* value) {
  std::string digits;
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) digits += s[i++];
  // The integer part: digits, optionally in comma-separated groups of three after the first.
  size_t group = 0, n_int = 0;
  bool grouped = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= '0' && c <= '9') {
      digits += c;
      ++group;
      ++n_int;
      if (grouped && group > 3) return false;
    } else if (c == ',') {
      if (n_int == 0 || (grouped && group != 3) || (!grouped && group > 3)) return false;
      grouped = true;
      group = 0;
    } else {
      break;
    }
  }
  if (n_int == 0 || (grouped && group != 3)) return false;
  if (i < s.size() && s[i] == '.') {
    digits += s[i++];
    size_t frac = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++frac) digits += s[i];
    if (frac == 0) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    digits += s[i++];
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) digits += s[i++];
    size_t exp = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++exp) digits += s[i];
    if (exp == 0 || exp > 4) return false;
  }
  if (i != s.size()) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || errno == ERANGE) return false;
  *value = v;
  return true;
}

std::vector<std::pair<std::string, std::string>> parse_nvtx_stack(std::string_view cell, size_t max_ranges) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t i = 0;
  while (true) {
    const size_t open = cell.find('"', i);
    if (open == std::string_view::npos) break;
    // An entry ends at the quote that is followed by a space or the end of the cell.
    size_t close = open + 1;
    while (true) {
      close = cell.find('"', close);
      if (close == std::string_view::npos)
        throw TraceError("an NVTX range of the push/pop column has no closing quote.");
      if (close + 1 == cell.size() || cell[close + 1] == ' ') break;
      ++close;
    }
    if (out.size() >= max_ranges)
      throw TraceError("more than " + std::to_string(max_ranges) + " NVTX ranges are open around one kernel.");
    const std::string_view entry = cell.substr(open + 1, close - open - 1);
    // domain:name:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg. The domain is the text before the
    // first colon; the name may hold colons itself ("aten::add"). With a message type (ASCII,
    // REGISTERED, UNICODE) the last field repeats the name, so a name with k colons makes
    // 8 + 2k fields; without one ("none") the six fields after the name are all without colons.
    std::vector<std::string_view> parts;
    size_t s = 0;
    while (true) {
      const size_t colon = entry.find(':', s);
      parts.push_back(entry.substr(s, colon == std::string_view::npos ? std::string_view::npos : colon - s));
      if (colon == std::string_view::npos) break;
      s = colon + 1;
    }
    if (parts.size() < 8)
      throw TraceError(
          "the NVTX range \"" + escape_name(entry) +
          "\" does not have ncu's eight fields (domain:name:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg).");
    auto join = [&](size_t from, size_t to) {  // parts[from, to) with their colons
      std::string t;
      for (size_t p = from; p < to; ++p) t += std::string(p > from ? ":" : "") + std::string(parts[p]);
      return t;
    };
    const size_t n = parts.size();
    std::string name = join(1, n - 6);  // no message: the six fields after the name hold no colon
    if (n > 8 && (n - 8) % 2 == 0) {
      const size_t k = (n - 8) / 2;  // colons in the name, if the message repeats it
      if (parts[k + 6] != "none" && join(1, k + 2) == join(k + 7, n)) name = join(1, k + 2);
    }
    out.emplace_back(std::string(parts[0]), name);
    i = close + 1;
  }
  return out;
}

namespace {

// One step of ncu_short_name: the base name of `s`, and in `arg` the first template argument of
// its last component (empty when it has none).
std::string base_name(std::string s, std::string* arg) {
  // Strip the parameter list: the last top-level "(...)".
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')') {
        ++depth;
      } else if (s[i] == '(' && --depth == 0) {
        s.erase(i);
        break;
      }
    }
  }
  // The last component outside template brackets: after the last top-level "::" or space ("void ").
  size_t start = 0, open = std::string::npos;
  int angle = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<') {
      if (angle++ == 0) open = i;
    } else if (c == '>') {
      if (angle > 0) --angle;
    } else if (angle == 0 && (c == ' ' || (c == ':' && i + 1 < s.size() && s[i + 1] == ':'))) {
      start = i + (c == ' ' ? 1 : 2);
      open = std::string::npos;
    }
  }
  arg->clear();
  if (open != std::string::npos && open >= start) {
    size_t end = open + 1;
    for (int depth = 0; end < s.size(); ++end) {
      if (s[end] == '<')
        ++depth;
      else if (s[end] == '>' && depth-- == 0)
        break;
      else if (s[end] == ',' && depth == 0)
        break;
    }
    *arg = s.substr(open + 1, end - open - 1);
  }
  return s.substr(start, open == std::string::npos ? std::string::npos : open - start);
}

}  // namespace

std::string ncu_short_name(const std::string& d) {
  std::string s = d, arg;
  // A generic name (cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>) is named
  // by its argument; each step is shorter than the last, so the loop ends.
  for (int step = 0; step < 8; ++step) {
    std::string base = base_name(s, &arg);
    const bool generic = base == "Kernel" || base == "Kernel2" || base == "kernel" || base == "device_kernel";
    if (!generic || arg.empty() || arg.size() >= s.size()) return base.empty() ? d : base;
    s = arg;
  }
  return s;
}

NcuReport parse_ncu_csv(std::istream& in, const std::string& source, const NcuLimits& limits) {
  NcuReport r;
  r.source = source;
  r.skipped_lines = skip_to_header(in, source, limits);
  CsvReader csv(in, source, r.skipped_lines + 1);
  std::vector<std::string> header, units, fields;
  csv.next(header);
  if (!csv.next(units))
    throw TraceError(source +
                     " has a header but no row of units and no kernels: ncu profiled nothing (check the "
                     "--nvtx-include filter and the kernel filters).");
  Interner intern(r.strings);
  const Layout layout = read_layout(header, units, source, r);
  r.values = std::make_shared<NcuValues>();
  lay_out_values(layout, *r.values);
  StackInterner stacks(*r.values);
  while (csv.next(fields)) {
    if (fields.size() == 1 && fields[0].empty()) continue;  // a blank line
    if (r.kernels.size() >= limits.kernels)
      throw TraceError(source + " has more than " + std::to_string(limits.kernels) + " kernels.");
    read_row(fields, layout, csv.record_line(), limits, source, intern, stacks, r);
  }
  r.kernels.shrink_to_fit();
  r.values->values.shrink_to_fit();
  if (r.kernels.empty())
    throw TraceError(source +
                     " holds no kernel: ncu profiled nothing (check the --nvtx-include filter and the "
                     "kernel filters).");
  note_missing(r);
  if (r.skipped_lines > 0)
    r.notes.push_back(std::to_string(r.skipped_lines) +
                      " lines before the CSV header (ncu's and the program's own "
                      "output) were skipped.");
  return r;
}

std::string ncu_import_command(const std::string& rep, const std::string& csv) {
  return shell_words({"ncu", "--import", rep, "--csv", "--page", "raw", "--print-units", "base"}) + " > " +
         shell_word(csv);
}

NcuReport read_ncu_report(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw TraceError("cannot read " + path + " (" + std::strerror(errno) + ").");
  if (!is_ncu_rep(path)) return parse_ncu_csv(f, path);
  f.close();
  const std::string stem = path.size() > 8 && ends_with(path, ".ncu-rep") ? path.substr(0, path.size() - 8) : path;
  const std::string command = ncu_import_command(path, stem + ".csv");
  const std::string ncu = find_on_path("ncu");
  if (ncu.empty())
    throw TraceError(path + " is an Nsight Compute report file and there is no ncu on PATH to convert it: run `" +
                     command + "` where Nsight Compute is installed, then `" +
                     shell_words({"laptime", "kernels", stem + ".csv"}) + "`.");
  NcuTempFile out, err;
  const int rc = run_ncu_import(ncu, path, out, err);
  if (rc != 0) {
    const std::string why = first_line_of(err.path());
    throw TraceError(ncu + (rc < 0 ? " could not be started" : " failed (exit " + std::to_string(rc) + ")") +
                     " converting " + path + (why.empty() ? "." : ": " + why + (why.back() == '.' ? "" : ".")));
  }
  std::ifstream csv(out.path(), std::ios::binary);
  if (!csv) throw TraceError("cannot read ncu's conversion of " + path + " back (" + std::strerror(errno) + ").");
  NcuReport r = parse_ncu_csv(csv, path);
  r.converted_by = ncu + " --import " + path + " --csv --page raw --print-units base";
  return r;
}

}  // namespace laptime::trace
