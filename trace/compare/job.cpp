#include "trace/compare/job.h"

#include <glob.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>
#include <utility>

#include "core/input_file.h"
#include "trace/analyses/per_process.h"
#include "trace/model/format.h"
#include "trace/model/progress.h"
#include "trace/model/text.h"
#include "trace/model/validate.h"
#include "trace/read/nsys_export.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/analyses/top.h"

namespace laptime::trace {

using detail::format;

namespace {

// The runs of digits and of everything else, in order.
std::vector<std::string> chunks(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const bool digit = std::isdigit(static_cast<unsigned char>(s[i])) != 0;
    size_t k = i;
    while (k < s.size() && (std::isdigit(static_cast<unsigned char>(s[k])) != 0) == digit) ++k;
    out.push_back(s.substr(i, k - i));
    i = k;
  }
  return out;
}

bool is_digits(const std::string& c) { return !c.empty() && std::isdigit(static_cast<unsigned char>(c[0])); }

// -1, 0, 1: digit runs by value (a number before any text), text by bytes.
int compare_chunk(const std::string& a, const std::string& b) {
  const bool da = is_digits(a), db = is_digits(b);
  if (da != db) return da ? -1 : 1;
  if (!da) return a < b ? -1 : a > b ? 1 : 0;
  const std::string x = a.substr(std::min(a.find_first_not_of('0'), a.size()));
  const std::string y = b.substr(std::min(b.find_first_not_of('0'), b.size()));
  if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
  return x < y ? -1 : x > y ? 1 : 0;
}

bool is_report_name(const std::string& name) {
  auto ends = [&](const char* ext) {
    const std::string e = ext;
    return name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0;
  };
  return ends(".sqlite") || ends(".nsys-rep") || ends(".qdrep");
}

bool has_glob_characters(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

// A folder's reports, in natural order.
std::vector<std::string> folder_reports(const std::string& folder) {
  std::vector<std::string> names;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (is_report_name(name) && it->is_regular_file(ec)) names.push_back(name);
    if (names.size() > kMaxJobReports) break;
  }
  if (ec) throw TraceError("cannot list the folder " + escape_name(folder) + ": " + ec.message() + ".");
  std::sort(names.begin(), names.end(), natural_less);
  const std::string prefix = folder.back() == '/' ? folder : folder + "/";
  for (std::string& n : names) n = prefix + n;
  return names;
}

std::vector<std::string> glob_matches(const std::string& pattern) {
  glob_t g{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> out;
  for (size_t i = 0; rc == 0 && i < g.gl_pathc && out.size() <= kMaxJobReports; ++i) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(g.gl_pathv[i], ec)) out.push_back(g.gl_pathv[i]);
  }
  globfree(&g);
  std::sort(out.begin(), out.end(), natural_less);
  return out;
}

}  // namespace

bool natural_less(const std::string& a, const std::string& b) {
  const std::vector<std::string> x = chunks(a), y = chunks(b);
  for (size_t i = 0; i < x.size() && i < y.size(); ++i)
    if (const int c = compare_chunk(x[i], y[i]); c != 0) return c < 0;
  if (x.size() != y.size()) return x.size() < y.size();
  return a < b;
}

std::vector<std::string> expand_report_inputs(const std::vector<std::string>& args, std::vector<std::string>& notes) {
  std::vector<std::string> files;
  for (const std::string& arg : args) {
    std::error_code ec;
    const bool exists = std::filesystem::exists(arg, ec);
    std::vector<std::string> found;
    if (exists && std::filesystem::is_directory(arg, ec)) {
      found = folder_reports(arg);
      if (found.empty())
        throw TraceError("the folder " + escape_name(arg) + " holds no trace (.sqlite, .nsys-rep or .qdrep file).");
    } else if (!exists && has_glob_characters(arg)) {
      found = glob_matches(arg);
      if (found.empty()) throw TraceError("no file matches " + escape_name(arg) + ".");
    } else {
      found.push_back(arg);  // the reader names what is wrong with it
    }
    files.insert(files.end(), found.begin(), found.end());
    if (files.size() > kMaxJobReports)
      throw TraceError(format("more than %zu reports in one job: name fewer.", kMaxJobReports));
  }
  // Each report once: a path named twice, and an export beside the report it came from.
  std::set<std::string> seen, reports;
  for (const std::string& f : files)
    if (is_nsys_report(f)) reports.insert(export_path_for(f));
  std::vector<std::string> out;
  size_t twice = 0, exports = 0;
  for (const std::string& f : files) {
    if (!seen.insert(f).second) {
      ++twice;
    } else if (!is_nsys_report(f) && reports.count(f)) {
      ++exports;
    } else {
      out.push_back(f);
    }
  }
  if (twice) notes.push_back(detail::plural(twice, "path was", "paths were") + " named more than once: read once.");
  if (exports)
    notes.push_back(detail::plural(exports, "export", "exports") +
                    " beside its report (R.sqlite with R.nsys-rep) left out: the report is read through it.");
  return out;
}

namespace {

JobRow summarize(const std::string& file, const Trace& t, const ProcessReport& r, bool with_pid) {
  const Analysis& a = r.a;
  JobRow row;
  row.file = file;
  if (with_pid) {
    row.pid = r.pid;
    row.process = process_name(t, r.pid);
  }
  row.gpu = a.gpu;
  row.program = program_name(a.program);
  row.lap_ms = a.lap_ms;
  row.lap_source = a.lap_source;
  row.busy_pct = a.span_fill_pct.median;
  row.bound = a.bound;
  row.verdict = a.verdict;
  row.steady_iterations = a.steady_count;
  row.notes = a.notes;
  row.iterations.reserve(a.iterations.size());
  for (const Iteration& it : a.iterations) {
    JobIteration x;
    x.index = it.index;
    x.steady = it.steady();
    x.host_ns = it.duration();
    x.has_gpu = it.has_gpu;
    x.gpu_ns = it.gpu_span();
    x.busy_pct = it.span_fill_pct();  // as analyze's JSON
    row.iterations.push_back(x);
  }
  for (size_t i = 0; i < json_rows(a.top, a.range_patterns.size()); ++i) {
    const RangeRow& l = a.range_patterns[i];
    row.layers.push_back({l.range, l.count, l.time});
  }
  return row;
}

}  // namespace

std::vector<JobRow> report_rows(const std::string& file, const ReportOptions& o) {
  try {
    check_input(file, "a trace", Missing::Allow);
  } catch (const InputError& e) {
    throw TraceError(e.what());
  }
  const TraceSource source = open_trace_source(file, stderr);
  auto t = std::make_unique<const Trace>(load_nsys_sqlite(source.path()));
  const TraceJoin j(*t);
  require_ranges_left(*t);
  const ProcessReports reports = analyze_per_process(j, o);
  // As `laptime analyze FILE` writes it: a pid per process when there are several, or when
  // --pid chose one.
  const bool with_pid = reports.each.size() > 1 || o.pid.has_value();
  std::vector<JobRow> rows;
  for (const ProcessReport& r : reports.each) rows.push_back(summarize(file, *t, r, with_pid));
  return rows;
}

namespace {

// Runs work(i) for i in [0, n) on at most `workers` threads, each taking the next index when it
// is done with one; after a failure no new index is started. Returns the failures by index.
template <class Work>
std::map<size_t, std::string> run_pool(size_t n, unsigned workers, Work work) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex m;
  std::map<size_t, std::string> errors;
  auto loop = [&] {
    for (size_t i; !failed && (i = next++) < n;) {
      try {
        work(i);
      } catch (const std::exception& e) {
        failed = true;
        const std::lock_guard<std::mutex> lock(m);
        errors.emplace(i, e.what());
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned w = 1; w < workers && w < n; ++w) threads.emplace_back(loop);
  loop();  // this thread is a worker too
  for (std::thread& th : threads) th.join();
  return errors;
}

// The lower median of the rows' laps, the slowest and the fastest; ties in input order.
JobSpread spread_of(const std::vector<JobRow>& rows) {
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return rows[x].lap_ms < rows[y].lap_ms; });
  JobSpread s;
  s.fastest = order.front();
  s.slowest = order.back();
  s.median = order[(order.size() - 1) / 2];
  const double slow = rows[s.slowest].lap_ms, med = rows[s.median].lap_ms, fast = rows[s.fastest].lap_ms;
  s.slowest_over_median_pct = med > 0 ? 100 * (slow - med) / med : 0;
  s.slowest_over_fastest_pct = fast > 0 ? 100 * (slow - fast) / fast : 0;
  return s;
}

std::string row_label(const JobRow& r) {
  return escape_name(r.file) + (r.pid ? " (process " + std::to_string(*r.pid) + ")" : "");
}

// The straggler against the median row, layer by layer (diff_runs), and what it found in words.
Straggler find_straggler(const Job& job, const JobSpread& s, const JobOptions& o) {
  DiffOptions d = o.diff;
  d.range = o.report.range;
  d.skip_warmup = o.report.skip_warmup;
  const JobRow &slow = job.rows[s.slowest], &med = job.rows[s.median];
  Straggler st;
  st.slowest = s.slowest;
  st.median = s.median;
  // The two sides read at once, as the reports were.
  std::optional<DiffSide> sides[2];
  const JobRow* which[2] = {&med, &slow};
  const std::map<size_t, std::string> errors =
      run_pool(2, std::max(1u, job.workers), [&](size_t i) { sides[i] = load_run(which[i]->file, d, which[i]->pid); });
  if (!errors.empty()) throw TraceError("the straggler's comparison: " + errors.begin()->second);
  st.diff = diff_runs(std::move(*sides[0]), std::move(*sides[1]), d);
  st.layer = straggler_layer(st.diff);
  std::vector<std::string> words{"laptime", "diff", med.file, slow.file};
  if (med.pid) words.insert(words.end(), {"--pid-before", std::to_string(*med.pid)});
  if (slow.pid) words.insert(words.end(), {"--pid-after", std::to_string(*slow.pid)});
  if (!o.report.range.empty()) words.insert(words.end(), {"--range", o.report.range});
  if (o.report.skip_warmup) words.insert(words.end(), {"--skip-warmup", std::to_string(*o.report.skip_warmup)});
  st.command = escape_name(detail::shell_words(words));

  const DiffRow& whole = st.diff.rows.front();
  std::string v = "The slowest, " + row_label(slow) +
                  format(", laps %.3f ms, %.1f%% above the median report, ", slow.lap_ms, s.slowest_over_median_pct) +
                  row_label(med) +
                  format(" (%.3f ms). Per iteration on the GPU it takes %+.3f ms [%+.3f, %+.3f] (%s)", med.lap_ms,
                         whole.change_ns / 1e6, whole.ci.lo / 1e6, whole.ci.hi / 1e6, label_name(whole.label));
  if (st.layer >= 0) {
    const DiffRow& l = st.diff.rows[static_cast<size_t>(st.layer)];
    v +=
        "; the layer that makes the difference is " + l.name + format(", %+.3f ms", l.change_ns / 1e6) +
        (l.label == Label::OnlyAfter ? " (it runs in the slowest report only)"
                                     : format(" [%+.3f, %+.3f], %+.1f%%", l.ci.lo / 1e6, l.ci.hi / 1e6, l.change_pct)) +
        (whole.change_ns > 0 ? format(", %.0f%% of the iteration's change.", 100 * l.change_ns / whole.change_ns)
                             : ".");
  } else if (!st.diff.before.has_layers || !st.diff.after.has_layers) {
    v += "; the reports have no layer ranges inside their iterations to tell which layer (NVTX ranges per layer, "
         "or PyTorch's emit_nvtx, add them).";
  } else {
    v += "; no layer is measurably slower (each is SAME or UNCLEAR at diff's threshold): the time lies between "
         "the layers (idle GPU, launches) or is spread thin.";
  }
  st.sentence = v;
  return st;
}

}  // namespace

int straggler_layer(const Diff& d) {
  auto grew = [&](const DiffRow& r) { return !r.whole && (r.label == Label::Slower || r.label == Label::OnlyAfter); };
  int best = -1;
  for (size_t i = 0; i < d.rows.size(); ++i)
    if (grew(d.rows[i]) && (best < 0 || d.rows[i].change_ns > d.rows[static_cast<size_t>(best)].change_ns))
      best = static_cast<int>(i);
  // Down to the part that carries it: a nested layer (h.*.attn inside h.*) that grew too, by at
  // least half of its parent's change, is the more precise name (the largest such, level by level).
  for (bool deeper = best >= 0; deeper;) {
    deeper = false;
    const DiffRow& parent = d.rows[static_cast<size_t>(best)];
    int child = -1;
    for (size_t i = 0; i < d.rows.size(); ++i) {
      const DiffRow& r = d.rows[i];
      if (!grew(r) || r.depth != parent.depth + 1 || r.name.rfind(parent.name + ".", 0) != 0) continue;
      if (2 * r.change_ns < parent.change_ns) continue;
      if (child < 0 || r.change_ns > d.rows[static_cast<size_t>(child)].change_ns) child = static_cast<int>(i);
    }
    if (child >= 0) {
      best = child;
      deeper = true;
    }
  }
  return best;
}

Job analyze_job(const std::vector<std::string>& files, const JobOptions& o) {
  Job job;
  job.inputs = files;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  job.workers =
      static_cast<unsigned>(std::min<size_t>(o.workers ? o.workers : cores, std::max<size_t>(files.size(), 1)));
  std::vector<std::vector<JobRow>> each(files.size());
  Progress::Tally reading("reading reports", files.size(), "reports");  // the progress line (trace/model/progress.h)
  const std::map<size_t, std::string> errors = run_pool(files.size(), job.workers, [&](size_t i) {
    each[i] = report_rows(files[i], o.report);
    reading.step();
  });
  if (!errors.empty()) {
    const auto& [i, what] = *errors.begin();
    const std::string name = escape_name(files[i]);
    throw TraceError(what.find(name) != std::string::npos ? what : "report " + name + ": " + what);
  }
  for (std::vector<JobRow>& rows : each)
    for (JobRow& r : rows) job.rows.push_back(std::move(r));
  if (job.rows.size() >= 2) {
    job.spread = spread_of(job.rows);
    job.straggler = find_straggler(job, *job.spread, o);
  }
  job.top = o.report.top;
  job.gate_pct = o.fail_if_spread_pct;
  if (o.fail_if_spread_pct && job.spread && job.spread->slowest_over_median_pct > *o.fail_if_spread_pct) {
    job.gate_failed = true;
    job.gate_reason = format("the slowest report laps %.1f%% above the median, more than --fail-if-spread %g%%.",
                             job.spread->slowest_over_median_pct, *o.fail_if_spread_pct);
  }
  return job;
}

}  // namespace laptime::trace
