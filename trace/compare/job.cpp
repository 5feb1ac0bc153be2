#include "trace/compare/job.h"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/input_file.h"
#include "core/os.h"
#include "trace/analyses/per_process.h"
#include "trace/model/format.h"
#include "trace/model/progress.h"
#include "trace/model/text.h"
#include "trace/model/validate.h"
#include "trace/read/nsys_export.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/read/open_trace.h"
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
  // The PyTorch profiler's: tensorboard_trace_handler's `*.pt.trace.json[.gz]`, any gzipped JSON (a
  // plain .json in a folder may be a report or layer costs: named, or globbed, it is read all the same).
  return ends(".sqlite") || ends(".nsys-rep") || ends(".qdrep") || ends(".pt.trace.json") || ends(".json.gz");
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

// What a file is, whatever it is called: its device and inode after links; a path that names no
// file, by its normalized absolute spelling (the reader names what is wrong with it).
std::string identity_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return "inode " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(path, ec);
  return "path " + (ec ? path : abs.lexically_normal().string());
}

// Each report once: a file named twice (another spelling, a link), and an export beside the
// report it came from (R.sqlite with R.nsys-rep), with a note naming each.
std::vector<std::string> each_report_once(const std::vector<std::string>& files, std::vector<std::string>& notes) {
  std::map<std::string, size_t> exports;  // identity of a report's export -> the report (index into files)
  for (size_t i = 0; i < files.size(); ++i)
    if (is_nsys_report(files[i])) exports.emplace(identity_of(export_path_for(files[i])), i);
  std::map<std::string, size_t> seen;                  // identity -> the file kept for it (index into files)
  std::map<size_t, std::vector<std::string>> also;     // a kept file -> its other names
  std::map<size_t, std::vector<std::string>> through;  // a kept report -> its export, named too
  std::vector<std::string> out;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string id = identity_of(files[i]);
    if (const auto it = seen.find(id); it != seen.end()) {
      also[it->second].push_back(files[i]);
    } else if (const auto e = exports.find(id); e != exports.end() && !is_nsys_report(files[i])) {
      through[e->second].push_back(files[i]);
    } else {
      seen.emplace(id, i);
      out.push_back(files[i]);
    }
  }
  // One note a file, at most kNamed of them: a fleet's thousand links are said in a count.
  constexpr size_t kNamed = 10;
  size_t named = 0, more = 0;
  auto quoted_list = [](const std::vector<std::string>& names) {
    std::string list;
    for (size_t k = 0; k < names.size(); ++k)
      list += (k == 0 ? "" : k + 1 == names.size() ? " and " : ", ") + escape_name(names[k]);
    return list;
  };
  for (size_t i = 0; i < files.size(); ++i) {
    std::vector<std::vector<std::string>> groups(3);  // the same spelling, other names, the export
    if (const auto it = also.find(i); it != also.end())
      for (const std::string& name : it->second) groups[name == files[i] ? 0 : 1].push_back(name);
    if (const auto it = through.find(i); it != through.end()) groups[2] = it->second;
    const std::string kept = escape_name(files[i]);
    for (size_t g = 0; g < groups.size(); ++g) {
      const std::vector<std::string>& names = groups[g];
      if (names.empty()) continue;
      if (named == kNamed) {
        more += names.size();
        continue;
      }
      ++named;
      const std::string are = names.size() == 1 ? " is " : " are ";
      notes.push_back(g == 0   ? kept + " was named " + std::to_string(names.size() + 1) + " times: read once."
                      : g == 1 ? quoted_list(names) + are + kept +
                                     " (the same file, under another name or through a link): read once."
                               : quoted_list(names) + are + kept + "'s export: read once, through the report.");
    }
  }
  if (more) notes.push_back(detail::plural(more, "more name", "more names") + " of reports named already: read once.");
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
    const bool exists = path_exists(arg);  // not opened to look: a FIFO would block
    std::vector<std::string> found;
    if (exists && std::filesystem::is_directory(arg, ec)) {
      found = folder_reports(arg);
      if (found.empty())
        throw TraceError("the folder " + escape_name(arg) +
                         " holds no trace (.sqlite, .nsys-rep, .qdrep, .pt.trace.json or .json.gz file).");
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
  return each_report_once(files, notes);
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
  row.span_fill_pct = a.span_fill_pct.median;
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
    x.span_fill_pct = it.span_fill_pct();  // as analyze's JSON
    row.iterations.push_back(x);
  }
  for (size_t i = 0; i < json_rows(a.top, a.range_patterns.size()); ++i) {
    const RangeRow& l = a.range_patterns[i];
    row.layers.push_back({l.range, l.count, l.time});
  }
  return row;
}

}  // namespace

namespace {

// One report's rows, and what they were read through (an .nsys-rep's SQLite export; kept while
// the straggler may still read it, for an export that went to a temporary folder).
std::vector<JobRow> read_report(const std::string& file, const ReportOptions& o,
                                std::shared_ptr<const TraceSource>* source) {
  try {
    check_input(file, "a trace", Missing::Allow);
  } catch (const InputError& e) {
    throw TraceError(e.what());
  }
  auto opened = std::make_shared<const TraceSource>(open_trace_source(file, stderr));
  auto t = std::make_unique<const Trace>(load_trace(opened->path()));
  const TraceJoin j(*t);
  require_ranges_left(*t);
  const ProcessReports reports = analyze_per_process(j, o);
  // As `laptime analyze FILE` writes it: a pid per process when there are several, or when
  // --pid chose one.
  const bool with_pid = reports.each.size() > 1 || o.pid.has_value();
  std::vector<JobRow> rows;
  for (const ProcessReport& r : reports.each) rows.push_back(summarize(file, *t, r, with_pid));
  if (source) *source = std::move(opened);
  return rows;
}

}  // namespace

std::vector<JobRow> report_rows(const std::string& file, const ReportOptions& o) {
  return read_report(file, o, nullptr);
}

std::map<size_t, std::string> run_pool(size_t n, unsigned workers, const std::function<void(size_t)>& work,
                                       unsigned* started) {
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
  for (unsigned w = 1; w < workers && w < n; ++w) {
    try {
      threads.emplace_back(loop);
    } catch (const std::exception&) {
      break;  // no thread to be had (a process limit, address space): the pool is what started
    }
  }
  if (started) *started = static_cast<unsigned>(threads.size() + 1);
  loop();  // this thread is a worker too
  for (std::thread& th : threads) th.join();
  return errors;
}

namespace {

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

// What each report was read through, by file: the straggler reads the same.
using Sources = std::map<std::string, std::shared_ptr<const TraceSource>>;

// The straggler against the median row, layer by layer (diff_runs), and what it found in words.
Straggler find_straggler(const Job& job, const JobSpread& s, const JobOptions& o, const Sources& sources) {
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
  const std::map<size_t, std::string> errors = run_pool(2, std::max(1u, job.workers), [&](size_t i) {
    const std::string& file = which[i]->file;
    const auto read = sources.find(file);
    // The export the job read; a report read elsewhere (job_from_rows) is opened as analyze opens it.
    const std::shared_ptr<const TraceSource> source =
        read != sources.end() && read->second ? read->second
                                              : std::make_shared<TraceSource>(open_trace_source(file, stderr));
    sides[i] = load_run(source->path(), d, which[i]->pid);
    sides[i]->file = file;
  });
  if (!errors.empty()) throw TraceError("the straggler's comparison: " + errors.begin()->second);
  st.diff = diff_runs(std::move(*sides[0]), std::move(*sides[1]), d);
  st.layer = straggler_layer(st.diff);
  std::vector<std::string> words{"laptime", "diff", med.file, slow.file};
  if (med.pid) words.insert(words.end(), {"--pid-before", std::to_string(*med.pid)});
  if (slow.pid) words.insert(words.end(), {"--pid-after", std::to_string(*slow.pid)});
  if (!o.report.range.empty()) words.insert(words.end(), {"--range", o.report.range});
  if (o.report.skip_warmup) words.insert(words.end(), {"--skip-warmup", std::to_string(*o.report.skip_warmup)});
  st.command = shell_words(words);

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

namespace {

Job summarize_job(const std::vector<std::string>& files, std::vector<std::vector<JobRow>> each, const JobOptions& o,
                  unsigned workers, const Sources& sources) {
  Job job;
  job.inputs = files;
  job.workers = workers;
  for (std::vector<JobRow>& rows : each)
    for (JobRow& r : rows) job.rows.push_back(std::move(r));
  if (job.rows.size() >= 2) {
    job.spread = spread_of(job.rows);
    job.straggler = find_straggler(job, *job.spread, o, sources);
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

}  // namespace

Job analyze_job(const std::vector<std::string>& files, const JobOptions& o) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned asked =
      static_cast<unsigned>(std::min<size_t>(o.workers ? o.workers : cores, std::max<size_t>(files.size(), 1)));
  std::vector<std::vector<JobRow>> each(files.size());
  std::vector<std::shared_ptr<const TraceSource>> read(files.size());
  unsigned started = 1;
  Progress::Tally reading("reading reports", files.size(), "reports");  // the progress line (trace/model/progress.h)
  const std::map<size_t, std::string> errors = run_pool(
      files.size(), asked,
      [&](size_t i) {
        each[i] = read_report(files[i], o.report, &read[i]);
        reading.step();
      },
      &started);
  if (!errors.empty()) {
    const auto& [i, what] = *errors.begin();
    const std::string name = escape_name(files[i]);
    throw TraceError(what.find(name) != std::string::npos ? what : "report " + name + ": " + what);
  }
  Sources sources;
  for (size_t i = 0; i < files.size(); ++i) sources.emplace(files[i], std::move(read[i]));
  Job job = summarize_job(files, std::move(each), o, started, sources);
  if (started < asked)
    job.notes.push_back(
        format("%u threads could start of the %u asked for (the process's limits): the reports were "
               "read %u at a time.",
               started, asked, started));
  return job;
}

Job job_from_rows(const std::vector<std::string>& files, std::vector<std::vector<JobRow>> each, const JobOptions& o) {
  return summarize_job(files, std::move(each), o, std::max(1u, o.workers), {});
}

namespace {

// A field of a row document, of the type job_json writes; throws a sentence naming it.
struct RowReader {
  const std::string& path;
  size_t doc;
  const nlohmann::json& at(const nlohmann::json& j, const char* key, nlohmann::json::value_t type) const {
    const auto it = j.find(key);
    const bool number = type == nlohmann::json::value_t::number_float;
    if (it == j.end() ||
        !(it->type() == type || (number && it->is_number()) ||
          (type == nlohmann::json::value_t::number_unsigned && it->is_number_integer() && it->get<int64_t>() >= 0)))
      throw TraceError(escape_name(path) + ": document " + std::to_string(doc) +
                       " is not what `laptime analyze --job FILE --json` writes (its `" + key +
                       "` is missing or of another type).");
    return *it;
  }
};

Bound bound_named(const std::string& name, const RowReader& r) {
  for (Bound b :
       {Bound::GpuBound, Bound::SyncBound, Bound::LaunchBound, Bound::InputBound, Bound::Mixed, Bound::NoGpuWork})
    if (name == bound_name(b)) return b;
  throw TraceError(escape_name(r.path) + ": document " + std::to_string(r.doc) +
                   " has a bound laptime does not name, '" + escape_name(name) + "'.");
}

JobRow row_from_json(const nlohmann::json& j, const RowReader& r) {
  using V = nlohmann::json::value_t;
  JobRow row;
  row.file = r.at(j, "file", V::string).get<std::string>();
  if (j.contains("pid")) {
    row.pid = static_cast<uint32_t>(r.at(j, "pid", V::number_unsigned).get<uint64_t>());
    row.process = r.at(j, "process", V::string).get<std::string>();
  }
  row.gpu = r.at(j, "gpu", V::string).get<std::string>();
  row.program = r.at(j, "program", V::string).get<std::string>();
  row.lap_ms = r.at(j, "lap_ms", V::number_float).get<double>();
  row.lap_source = r.at(j, "lap_source", V::string).get<std::string>();
  row.span_fill_pct = r.at(j, "span_fill_pct", V::number_float).get<double>();
  row.bound = bound_named(r.at(j, "bound", V::string).get<std::string>(), r);
  row.verdict = r.at(j, "verdict", V::string).get<std::string>();
  row.steady_iterations = r.at(j, "steady_iterations", V::number_unsigned).get<size_t>();
  for (const auto& n : r.at(j, "notes", V::array)) row.notes.push_back(n.is_string() ? n.get<std::string>() : "");
  for (const auto& x : r.at(j, "iterations", V::array)) {
    JobIteration it;
    it.index = r.at(x, "index", V::number_unsigned).get<uint64_t>();
    it.steady = r.at(x, "steady", V::boolean).get<bool>();
    it.host_ns = r.at(x, "host_ns", V::number_unsigned).get<Ns>();
    it.has_gpu = x.contains("gpu_ns");
    if (it.has_gpu) {
      it.gpu_ns = r.at(x, "gpu_ns", V::number_unsigned).get<Ns>();
      it.span_fill_pct = r.at(x, "span_fill_pct", V::number_float).get<double>();
    }
    row.iterations.push_back(it);
  }
  for (const auto& l : r.at(j, "layers", V::array))
    row.layers.push_back({r.at(l, "range", V::string).get<std::string>(),
                          r.at(l, "count", V::number_unsigned).get<size_t>(),
                          r.at(l, "time_ns", V::number_unsigned).get<Ns>()});
  return row;
}

}  // namespace

std::vector<std::vector<JobRow>> job_rows_from_json(const std::string& path, const std::vector<std::string>& files) {
  try {
    check_input(path, "the reports' rows");
  } catch (const InputError& e) {
    throw TraceError(e.what());
  }
  std::ifstream f(path, std::ios::binary);
  nlohmann::json docs;
  try {
    docs = nlohmann::json::parse(f);
  } catch (const nlohmann::json::exception&) {
    throw TraceError(escape_name(path) +
                     " is not JSON: it should hold the documents `laptime analyze --job FILE --json` "
                     "writes, one a report, in a JSON array.");
  }
  if (!docs.is_array() || docs.size() != files.size())
    throw TraceError(escape_name(path) + " holds " +
                     (docs.is_array() ? std::to_string(docs.size()) + " documents" : std::string("no JSON array")) +
                     " for the job's " + detail::plural(files.size(), "report", "reports") +
                     ": it should hold one `laptime analyze --job FILE --json` document a report, in their order.");
  std::vector<std::vector<JobRow>> each(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    const RowReader r{path, i};
    const nlohmann::json& doc = docs[i];
    if (!doc.is_object() || !doc.contains("schema") || doc["schema"] != "laptime.job/1")
      throw TraceError(escape_name(path) + ": document " + std::to_string(i) + " is not laptime.job/1.");
    for (const auto& j : r.at(doc, "reports", nlohmann::json::value_t::array)) {
      JobRow row = row_from_json(j, r);
      // The documents hold names escaped (job_json); the job reads the file as it was named.
      if (row.file != escape_name(files[i]))
        throw TraceError(escape_name(path) + ": document " + std::to_string(i) + " holds the rows of " +
                         escape_name(row.file) + ", not of " + escape_name(files[i]) + ", the job's report " +
                         std::to_string(i) + ".");
      row.file = files[i];
      each[i].push_back(std::move(row));
    }
  }
  return each;
}

}  // namespace laptime::trace
