// Nsight Compute reports, read: the raw page that `ncu --csv --page raw` prints (one row per
// profiled kernel, one column per metric), or a `.ncu-rep` file converted to it with the `ncu`
// on PATH (`ncu --import FILE --csv --page raw --print-units base`).
//
// What the raw CSV holds (ncu 2025.3.1, the version the committed reports in tests/fixtures/ncu
// come from): a header row of column names, a second row of units ("ns", "byte/s", "%", "" for
// none), then one row per kernel. Numbers carry thousands separators ("1,980,000",
// "184,417,910,447.76"); a metric with no value reads "n/a" or "no data". With `--nvtx`, the
// column "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg" holds the
// launching thread's push/pop stack: its id, then one quoted entry per open range, outermost
// first, e.g. `1592  "laptime:forward:Uint64:0:none:none:REGISTERED:forward"  "laptime:wte:...`
// (`<default domain>` for ranges pushed without a domain). With ranges of several domains open,
// ncu lists each domain's stack in turn.
//
// The reader keeps the identity columns and the metrics `laptime kernels` uses (NcuMetric),
// checks each metric's unit against the base unit it expects (ncu scales units, "us",
// "Tbyte/s", unless --print-units base: `ncu --import` does so by default), and stops at the
// first malformed input with one sentence naming the file, the line and the column. Lines
// before the header (ncu's ==PROF== lines and the program's own output, when ncu's standard
// output went to the file) are skipped. Bounded: limits below, no recursion, names interned.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <istream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace laptime::trace {

// The metrics read from each row; NaN where a row has no value (n/a, no data) or the report
// has no such column.
enum class NcuMetric {
  Time,                   // gpu__time_duration.sum, ns: the kernel's duration, replayed alone
  DramBytesPerSecond,     // dram__bytes.sum.per_second: DRAM read + write bytes over the duration
  DramPeakBytesPerCycle,  // dram__bytes.sum.peak_sustained
  DramCyclesPerSecond,    // dram__cycles_elapsed.avg.per_second (DRAM clock under ncu)
  DramPct,                // gpu__dram_throughput, % of peak (speed of light)
  MemoryPct,              // gpu__compute_memory_throughput, % of peak: the busiest of L1, L2, DRAM
  ComputePct,             // sm__throughput, % of peak: the busiest of the SM's pipes and issue
  TensorPct,              // sm__pipe_tensor_cycles_active, % of peak
  FaddRate,
  FmulRate,
  FfmaRate,
  DaddRate,
  DmulRate,
  DfmaRate,                 // thread instructions per cycle, all SMSPs
  SmspCyclesPerSecond,      // smsp__cycles_elapsed.avg.per_second (SM clock under ncu)
  OccupancyPct,             // sm__warps_active, % of the SM's warp slots (achieved occupancy)
  TheoreticalOccupancyPct,  // sm__maximum_warps_per_active_cycle_pct
  WarpsActive,              // sm__warps_active.avg.per_cycle_active: warps resident per SM
  LimitRegisters,
  LimitSharedMemory,
  LimitWarps,
  LimitBlocks,
  LimitBarriers,         // blocks a SM each allows
  Registers,             // launch__registers_per_thread
  SharedMemoryPerBlock,  // launch__shared_mem_per_block, bytes (static + dynamic + driver)
  BlockSize,
  GridSize,      // threads a block, blocks
  Waves,         // launch__waves_per_multiprocessor
  InstExecuted,  // inst_executed: warp instructions
  IssueActive,   // smsp__issue_active.avg.per_cycle_active: fraction of cycles issuing
  Count
};
constexpr size_t kNcuMetricCount = static_cast<size_t>(NcuMetric::Count);

// The CSV column, its base unit, the ncu section that collects it, and the largest value a GPU
// can produce there (a row beyond it is refused, named).
struct NcuColumn {
  NcuMetric metric;
  const char* name;
  const char* unit;
  const char* section;
  double max;
};
const NcuColumn& ncu_column(NcuMetric m);

// One open NVTX push/pop range: domain and name, indices into NcuReport::strings.
struct NcuRange {
  int domain = -1;
  int name = -1;
  bool operator<(const NcuRange& o) const { return domain != o.domain ? domain < o.domain : name < o.name; }
};

// A kernel's push/pop stack, outermost first: a view of a stack the report holds once however
// many kernels share it.
struct NcuStack {
  const NcuRange* first = nullptr;
  size_t n = 0;
  const NcuRange* begin() const { return first; }
  const NcuRange* end() const { return first + n; }
  size_t size() const { return n; }
  bool empty() const { return n == 0; }
  const NcuRange& operator[](size_t i) const { return first[i]; }
  const NcuRange& back() const { return first[n - 1]; }
};

// The values of every row, held once for the report, as lean as the nsys reader's rows (a
// million minimal rows once took 1.09 GB as a 248-byte array of metrics and two vectors each):
// per row, only the metrics the report has columns for, then its stall ratios; the NVTX stacks
// interned. Behind a shared pointer, so that a kernel's pointer to it outlives moving the report.
struct NcuValues {
  std::array<int, kNcuMetricCount> slot{};    // a metric's place within a row, -1 for a column the report lacks
  size_t per_row = 0;                         // metrics present + stall reasons
  size_t stall_base = 0;                      // where the stall ratios start within a row
  std::vector<double> values;                 // row-major
  std::vector<std::vector<NcuRange>> stacks;  // distinct push/pop stacks; [0] is the empty one
};

struct NcuKernel {
  int64_t id = 0;  // ncu's ID column: the order in which kernels were profiled
  const NcuValues* values = nullptr;
  size_t line = 0;  // its line in the file, for messages
  uint32_t pid = 0;
  int name = -1;       // the demangled name as ncu prints it, index into NcuReport::strings
  uint32_t row = 0;    // into values
  uint32_t stack = 0;  // into values->stacks
  // NaN where the row has no value (n/a, no data) or the report has no such column.
  double at(NcuMetric m) const {
    const int s = values->slot[static_cast<size_t>(m)];
    return s < 0 ? std::nan("") : values->values[row * values->per_row + static_cast<size_t>(s)];
  }
  bool has(NcuMetric m) const { return !std::isnan(at(m)); }
  // Cycles a warp stalls per issued instruction, per NcuReport::stall_names.
  double stall(size_t s) const { return values->values[row * values->per_row + values->stall_base + s]; }
  // The launching thread's push/pop stack, as ncu lists it.
  NcuStack ranges() const {
    const std::vector<NcuRange>& st = values->stacks[stack];
    return {st.data(), st.size()};
  }
};

struct NcuReport {
  std::string source;        // the file as the user named it
  std::string converted_by;  // for a .ncu-rep: the ncu command that made the CSV
  std::string gpu;           // device__attribute_display_name of the first row ("NVIDIA H200")
  int sm_count = 0;          // device__attribute_multiprocessor_count
  int schedulers = 0;        // device__attribute_num_schedulers_per_multiprocessor
  bool has_nvtx = false;     // the push/pop column exists (ncu ran with --nvtx)
  size_t skipped_lines = 0;  // lines before the header
  std::array<bool, kNcuMetricCount> has_column{};
  std::vector<std::string> stall_names;       // "long_scoreboard", ... (smsp__average_warps_issue_stalled_*)
  std::vector<std::string> strings;           // interned kernel, domain and range names
  std::vector<NcuKernel> kernels;             // in the file's order
  std::shared_ptr<NcuValues> values;          // what the kernels' values point into
  std::map<uint32_t, std::string> processes;  // the Process ID of each kernel, and its Process Name
  std::vector<std::string> notes;             // columns the report lacks, and what that leaves out
  const std::string& str(int i) const { return strings[static_cast<size_t>(i)]; }
};

// Bounds on what a report may make the reader hold.
struct NcuLimits {
  size_t preamble_lines = 1000000;  // lines before the header
  size_t kernels = 10000000;        // rows
  size_t ranges = 256;              // open NVTX ranges on one row
};

// The raw CSV from a stream (`source` names it in messages). Throws TraceError with one sentence.
NcuReport parse_ncu_csv(std::istream& in, const std::string& source, const NcuLimits& limits = {});

// `path`: a .ncu-rep is converted with the `ncu` on PATH (into a temporary file, removed after),
// anything else is read as the raw CSV. Without ncu on PATH, a .ncu-rep throws a TraceError that
// gives the command to run where ncu is installed.
NcuReport read_ncu_report(const std::string& path);

// The conversion ncu runs for a .ncu-rep, as a command line to show ("ncu --import ...").
std::string ncu_import_command(const std::string& rep_path, const std::string& csv_path);

// --- Pieces, exposed for tests ------------------------------------------------------------

// A cell as ncu prints a number: optional sign, digits in groups of three separated by commas
// (or none), optional fraction and exponent. False for anything else ("n/a", "1,2", "1.2.3").
bool parse_ncu_number(std::string_view cell, double* value);

// The push/pop entries of the NVTX column, (domain, name) outermost first; throws TraceError
// (the message completed by the caller) when an entry does not have ncu's eight fields.
std::vector<std::pair<std::string, std::string>> parse_nvtx_stack(std::string_view cell, size_t max_ranges);

// "void ns::<unnamed>::layernorm_kernel<float>(float *, int)" -> "layernorm_kernel": the
// function's own name, without return type, scopes, template arguments and parameters; for a
// generic name (cutlass's "Kernel2"), its first template argument instead.
std::string ncu_short_name(const std::string& demangled);

}  // namespace laptime::trace
