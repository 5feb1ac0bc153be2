#include "trace/analyses/iterations.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <cctype>
#include <cmath>
#include <numeric>
#include <functional>
#include <optional>
#include <set>
#include <unordered_map>

#include <re2/re2.h>

#include "trace/model/error.h"
#include "trace/model/format.h"

namespace laptime::trace {

using detail::format;
using detail::plural;

// --- Matching names ------------------------------------------------------------------------

bool glob_match(const std::string& p, const std::string& s) {
  // Greedy with one backtrack point: the last `*` seen and where it started matching.
  size_t i = 0, j = 0, star = std::string::npos, mark = 0;
  while (j < s.size()) {
    if (i < p.size() && (p[i] == '?' || p[i] == s[j])) {
      ++i;
      ++j;
    } else if (i < p.size() && p[i] == '*') {
      star = i++;
      mark = j;
    } else if (star != std::string::npos) {
      i = star + 1;
      j = ++mark;
    } else {
      return false;
    }
  }
  while (i < p.size() && p[i] == '*') ++i;
  return i == p.size();
}

RangePattern::RangePattern(const std::string& spec) {
  if (spec.rfind("re:", 0) == 0) {
    kind_ = Kind::Regex;
    text_ = spec.substr(3);
    RE2::Options options;
    options.set_log_errors(false);
    options.set_max_mem(64 << 20);  // a pattern's own automaton, bounded; the text never grows it
    auto re = std::make_shared<RE2>(text_, options);
    if (!re->ok())
      throw TraceError("--range " + spec + " is not a regular expression that compiles (" + re->error() + ").");
    re_ = std::move(re);
  } else {
    kind_ = spec.find_first_of("*?") == std::string::npos ? Kind::Exact : Kind::Glob;
    text_ = spec;
  }
}

bool RangePattern::matches(const std::string& text) const {
  switch (kind_) {
    case Kind::Exact:
      return text == text_;
    case Kind::Glob:
      return glob_match(text_, text);
    case Kind::Regex:
      return RE2::FullMatch(text, *re_);
  }
  return false;
}

int IterationSet::iteration_of_range(const Trace& t, int range) const {
  if (range < 0) return -1;
  // Once per range, parents first (Trace::nvtx holds a parent before its children): a kernel
  // in a range 6,000 deep walks no chain.
  if (of_range_.size() != t.nvtx.size()) {
    of_range_.assign(t.nvtx.size(), -1);
    for (size_t r = 0; r < t.nvtx.size(); ++r) {
      auto it = by_range.find(static_cast<int>(r));
      const int parent = t.nvtx[r].parent;
      of_range_[r] = it != by_range.end() ? it->second : parent >= 0 ? of_range_[parent] : -1;
    }
  }
  return of_range_[range];
}

int IterationSet::iteration_of_call(const TraceJoin& j, int api) const {
  if (api < 0) return -1;
  const Trace& t = j.trace();
  if (const int it = iteration_of_range(t, j.api_range(api)); it >= 0) return it;
  if (t.format != TraceFormat::Kineto) return -1;  // an NVTX range is its thread's, nothing more
  if (!spans_made_) {
    spans_made_ = true;
    spans_thread_ = !ranges.empty();
    for (size_t k = 0; k < ranges.size(); ++k) {
      const NvtxEvent& r = t.nvtx[ranges[k]];
      if (k == 0) thread_ = {r.pid, r.tid};
      spans_thread_ = spans_thread_ && thread_ == std::make_pair(r.pid, r.tid);
      spans_.emplace_back(r.start, r.end, static_cast<int>(k));
    }
    std::sort(spans_.begin(), spans_.end());
  }
  const ApiCall& c = t.api_calls[api];
  if (!spans_thread_ || c.pid != thread_.first || c.tid == thread_.second) return -1;
  auto at = std::upper_bound(spans_.begin(), spans_.end(),
                             std::make_tuple(c.start, std::numeric_limits<Ns>::max(), INT32_MAX));
  if (at == spans_.begin()) return -1;
  --at;
  return c.start <= std::get<1>(*at) ? std::get<2>(*at) : -1;
}

namespace {

// The runs of decimal digits in a name: (position, length). Runs too long for 64 bits are
// not numbers anyone counts iterations with.
std::vector<std::pair<size_t, size_t>> digit_runs(const std::string& s) {
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t i = 0; i < s.size();) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) {
      ++i;
      continue;
    }
    size_t k = i;
    while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
    if (k - i <= 18) runs.emplace_back(i, k - i);
    i = k;
  }
  return runs;
}

// A name without PyTorch emit_nvtx's annotations ("step_7, op_id = 12" -> "step_7").
std::string user_name(const std::string& text) {
  size_t cut = text.size();
  for (const char* mark : {", seq = ", ", op_id = ", ", sizes = "}) cut = std::min(cut, text.find(mark));
  return text.substr(0, cut);
}

// Launch calls (API calls that put GPU work in a queue) per thread, by start time.
std::map<std::pair<uint32_t, uint32_t>, std::vector<Ns>> launches_by_thread(const TraceJoin& j) {
  const Trace& t = j.trace();
  std::vector<int> launches;
  launches.reserve(j.ops().size());
  for (const GpuOp& op : j.ops())
    if (op.api >= 0) launches.push_back(op.api);
  std::sort(launches.begin(), launches.end());
  launches.erase(std::unique(launches.begin(), launches.end()), launches.end());
  std::map<std::pair<uint32_t, uint32_t>, std::vector<Ns>> out;
  std::map<std::pair<uint32_t, uint32_t>, size_t> count;  // each thread's list sized first: a million launches
  for (int c : launches) ++count[{t.api_calls[c].pid, t.api_calls[c].tid}];
  for (const auto& [thread, n] : count) out[thread].reserve(n);
  for (int c : launches) out[{t.api_calls[c].pid, t.api_calls[c].tid}].push_back(t.api_calls[c].start);
  for (auto& [thread, v] : out) std::sort(v.begin(), v.end());
  return out;
}

size_t launches_inside(const std::map<std::pair<uint32_t, uint32_t>, std::vector<Ns>>& by_thread, const NvtxEvent& r) {
  auto it = by_thread.find({r.pid, r.tid});
  if (it == by_thread.end()) return 0;
  const std::vector<Ns>& v = it->second;
  return std::upper_bound(v.begin(), v.end(), r.end) - std::lower_bound(v.begin(), v.end(), r.start);
}

bool better(const RangeFamily& a, const RangeFamily& b) {
  if (a.gpu_launches != b.gpu_launches) return a.gpu_launches > b.gpu_launches;
  if (a.depth != b.depth) return a.depth < b.depth;
  return a.covered > b.covered;
}

std::string describe(const Trace& t, const RangeFamily& f) {
  return "`" + f.glob + "` (" + std::to_string(f.ranges.size()) + " on " + t.thread_name(f.pid, f.tid) + ", " +
         std::to_string(f.gpu_launches) + " GPU launches)";
}

// Outermost only: a match nested in another match is part of that iteration, not one more.
// Each distinct name is matched once; whether a range sits inside a match is carried down
// from its parent (parents come first), not walked up per range.
std::vector<int> outermost_matches(const Trace& t, const RangePattern& p) {
  std::unordered_map<const void*, bool> by_name;
  std::vector<char> match(t.nvtx.size(), 0), inside(t.nvtx.size(), 0);  // inside: some ancestor matches
  std::vector<int> out;
  for (size_t i = 0; i < t.nvtx.size(); ++i) {
    auto [it, fresh] = by_name.try_emplace(t.nvtx[i].text.key());
    if (fresh) it->second = p.matches(t.nvtx[i].text);
    match[i] = it->second;
    const int parent = t.nvtx[i].parent;
    inside[i] = parent >= 0 && (match[parent] || inside[parent]);
    if (match[i] && !inside[i]) out.push_back(static_cast<int>(i));
  }
  return out;  // by start time (Trace::finalize sorted the ranges)
}

std::string frequent_ranges(const Trace& t) {
  std::unordered_map<const void*, std::pair<Name, size_t>> by_name;
  for (const NvtxEvent& r : t.nvtx) {
    auto& [name, n] = by_name[r.text.key()];
    name = r.text;
    ++n;
  }
  std::map<Name, size_t> counts;  // by text, as before: ties keep that order
  for (const auto& [key, entry] : by_name) counts[entry.first] += entry.second;
  std::vector<std::pair<size_t, Name>> by_count;
  for (const auto& [text, n] : counts) by_count.emplace_back(n, text);
  std::stable_sort(by_count.begin(), by_count.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string list;
  for (size_t i = 0; i < by_count.size() && i < 6; ++i)
    list += (i ? ", `" : "`") + detail::clip(by_count[i].second) + "` (" + std::to_string(by_count[i].first) + ")";
  return list;
}

// Rule 1's ranges: laptime's `forward`; in the PyTorch profiler's trace, its steps (one
// `ProfilerStep#N` per prof.step()), however many there are.
std::string rule1_pattern(const Trace& t) { return t.format == TraceFormat::Kineto ? "ProfilerStep#*" : "forward"; }

[[noreturn]] void no_nvtx(const Trace& t) {
  if (t.format == TraceFormat::Kineto)
    throw TraceError(
        "the trace has no ranges (no ProfilerStep#N, record_function or operator events), so its iterations cannot "
        "be found: profile the loop with torch.profiler.profile(schedule=...) and call prof.step() once per "
        "iteration (or wrap each iteration in torch.profiler.record_function(f\"step {i}\")).");
  throw TraceError(
      "the trace has no NVTX ranges, so its iterations cannot be found: capture with `nsys profile "
      "--trace=cuda,nvtx` and run `laptime bench` with --nvtx iter or finer (or wrap each iteration in "
      "an NVTX range, e.g. torch.cuda.nvtx.range_push(f\"Forward Pass Iter {i}\")).");
}

}  // namespace

std::vector<RangeFamily> numbered_families(const TraceJoin& j) {
  const Trace& t = j.trace();
  // Per distinct name, once: the families it could belong to, as templates (text before the
  // number, text after it) and the number. Only the last kMaxRuns digit runs are candidates:
  // iteration numbers sit at the end of a name, and a name of 30,000 numbers would otherwise
  // cost 30,000 copies of itself.
  constexpr size_t kMaxRuns = 8;
  struct Template {
    std::string before, after;
  };
  std::vector<Template> templates;
  std::map<std::pair<std::string, std::string>, int> template_ids;
  std::unordered_map<const void*, std::vector<std::pair<int, uint64_t>>> candidates;  // name -> (template, number)
  // (pid, tid, template) -> (range, number)
  std::map<std::tuple<uint32_t, uint32_t, int>, std::vector<std::pair<int, uint64_t>>> by_template;
  for (size_t i = 0; i < t.nvtx.size(); ++i) {
    const NvtxEvent& r = t.nvtx[i];
    auto [c, fresh] = candidates.try_emplace(r.text.key());
    if (fresh) {
      // PyTorch's emit_nvtx appends ", seq = N" / ", op_id = N" to record_function names: the
      // name the user gave is what comes before, and those counters are not iteration numbers.
      const std::string name = user_name(r.text);
      const std::string rest = name.size() < r.text.size() ? ", *" : "";
      std::vector<std::pair<size_t, size_t>> runs = digit_runs(name);
      if (runs.size() > kMaxRuns) runs.erase(runs.begin(), runs.end() - kMaxRuns);
      for (const auto& [pos, len] : runs) {
        auto key = std::make_pair(name.substr(0, pos), name.substr(pos + len) + rest);
        auto [id, added] = template_ids.try_emplace(std::move(key), static_cast<int>(templates.size()));
        if (added) templates.push_back({id->first.first, id->first.second});
        c->second.emplace_back(id->second, std::stoull(name.substr(pos, len)));
      }
    }
    for (const auto& [id, number] : c->second)
      by_template[{r.pid, r.tid, id}].emplace_back(static_cast<int>(i), number);
  }
  // In the order of (pid, tid, before, after), as families were always listed before ranking.
  using Key = std::tuple<uint32_t, uint32_t, std::string, std::string>;
  std::vector<std::pair<Key, std::vector<std::pair<int, uint64_t>>>> groups;
  for (auto& [key, members] : by_template) {
    const Template& tp = templates[std::get<2>(key)];
    groups.emplace_back(Key{std::get<0>(key), std::get<1>(key), tp.before, tp.after}, std::move(members));
  }
  std::sort(groups.begin(), groups.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  const auto launches = launches_by_thread(j);
  std::vector<RangeFamily> out;
  for (auto& [key, members] : groups) {
    if (members.size() < 2) continue;
    // Non-overlapping on the thread: sorted by start, each ends before the next begins.
    std::sort(members.begin(), members.end(),
              [&](const auto& x, const auto& y) { return t.nvtx[x.first].start < t.nvtx[y.first].start; });
    bool ok = true;
    for (size_t k = 1; k < members.size() && ok; ++k)
      ok = t.nvtx[members[k - 1].first].end <= t.nvtx[members[k].first].start;
    if (!ok) continue;
    std::sort(members.begin(), members.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
    for (size_t k = 1; k < members.size() && ok; ++k) ok = members[k - 1].second != members[k].second;
    if (!ok) continue;  // the same number twice: not one iteration each
    RangeFamily f;
    f.pid = std::get<0>(key);
    f.tid = std::get<1>(key);
    f.glob = std::get<2>(key) + "*" + std::get<3>(key);
    for (const auto& [r, number] : members) {
      f.ranges.push_back(r);
      f.numbers.push_back(number);
      f.gpu_launches += launches_inside(launches, t.nvtx[r]);
      f.depth += t.nvtx[r].depth;
      f.covered += t.nvtx[r].end - t.nvtx[r].start;
    }
    f.depth /= members.size();
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(), better);
  return out;
}

namespace {

// The ranges the rules choose from, found once for the whole trace: the outermost matches of
// --range (else of laptime's `forward`), and rule 2's families, best first, computed only when
// some process has no `forward` range.
class Candidates {
 public:
  Candidates(const TraceJoin& j, const std::string& spec)
      : j_(j),
        spec_(spec),
        matches_(outermost_matches(j.trace(), RangePattern(spec.empty() ? rule1_pattern(j.trace()) : spec))) {}
  const std::vector<int>& matches() const { return matches_; }
  const std::vector<RangeFamily>& families() {
    if (!families_) families_ = numbered_families(j_);
    return *families_;
  }

 private:
  const TraceJoin& j_;
  std::string spec_;
  std::vector<int> matches_;
  std::optional<std::vector<RangeFamily>> families_;
};

// Rules 1 to 3 (the module comment) over the ranges of one process, or of every process when
// `pid` is unset; `matches` and `families` are the candidates of that process (or all).
IterationSet choose_iterations(const TraceJoin& j, const std::string& spec, std::optional<uint32_t> pid,
                               std::vector<int> matches, const std::function<std::vector<RangeFamily>()>& families) {
  const Trace& t = j.trace();
  IterationSet s;
  s.pid = pid;
  // Who the sentences below are about: the trace, or one process of it.
  const std::string who = pid ? "process " + process_label(t, *pid) : "the trace";
  auto number_by_name = [&](const std::vector<int>& ranges) {
    // The last number in each name (emit_nvtx's counters dropped), when every name has one
    // and no two share it.
    std::vector<uint64_t> numbers;
    std::unordered_map<const void*, std::optional<uint64_t>> by_name;  // each distinct name read once
    for (int r : ranges) {
      auto [it, fresh] = by_name.try_emplace(t.nvtx[r].text.key());
      if (fresh) {
        const std::string name = user_name(t.nvtx[r].text);
        const auto runs = digit_runs(name);
        if (!runs.empty()) it->second = std::stoull(name.substr(runs.back().first, runs.back().second));
      }
      if (!it->second) return std::vector<uint64_t>{};
      numbers.push_back(*it->second);
    }
    std::vector<uint64_t> sorted = numbers;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return std::vector<uint64_t>{};
    return numbers;
  };
  auto take = [&](std::vector<int> ranges, std::vector<uint64_t> numbers) {
    if (numbers.empty()) {  // laptime's payload (the iteration index), else the position
      bool payloads = std::all_of(ranges.begin(), ranges.end(), [&](int r) { return t.nvtx[r].has_payload; });
      for (size_t i = 0; i < ranges.size(); ++i) numbers.push_back(payloads ? t.nvtx[ranges[i]].payload : i);
    } else {  // in the order of their numbers
      std::vector<size_t> order(ranges.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return numbers[x] < numbers[y]; });
      std::vector<int> r2;
      std::vector<uint64_t> n2;
      for (size_t k : order) {
        r2.push_back(ranges[k]);
        n2.push_back(numbers[k]);
      }
      ranges.swap(r2);
      numbers.swap(n2);
    }
    s.ranges = std::move(ranges);
    s.numbers = std::move(numbers);
    for (size_t i = 0; i < s.ranges.size(); ++i) s.by_range[s.ranges[i]] = static_cast<int>(i);
  };

  if (!spec.empty()) {
    if (matches.empty())
      throw TraceError(who + " has no NVTX range matching `" + spec + "`; " + (pid ? "the trace's" : "its") +
                       " most frequent ranges are " + frequent_ranges(t) +
                       ": name the iteration range with --range NAME, a glob ('Step *') or re:REGEX.");
    std::vector<uint64_t> numbers = spec == "forward" ? std::vector<uint64_t>{} : number_by_name(matches);
    s.name = spec;
    s.rule = numbers.empty() ? "--range, in time order" : "--range, in the order of the numbers in their names";
    take(std::move(matches), std::move(numbers));
    return s;
  }

  // Rule 1: laptime's own iteration ranges; the PyTorch profiler's steps.
  if (!matches.empty() && t.format == TraceFormat::Kineto) {
    s.name = rule1_pattern(t);
    s.rule = "the PyTorch profiler's steps (one ProfilerStep#N per prof.step())";
    std::vector<uint64_t> numbers = number_by_name(matches);
    take(std::move(matches), std::move(numbers));
    return s;
  }
  if (!matches.empty()) {
    s.name = "forward";
    s.rule = "laptime's `forward` ranges";
    take(std::move(matches), {});
    return s;
  }
  // Rule 2: a numbered family.
  const std::vector<RangeFamily> fams = families();
  if (!fams.empty()) {
    const RangeFamily& f = fams.front();
    if (fams.size() > 1 && !better(f, fams[1]))
      throw TraceError("two families of numbered NVTX ranges fit the iterations " + (pid ? "of " + who + " " : "") +
                       "equally, " + describe(t, f) + " and " + describe(t, fams[1]) + ": choose one with --range '" +
                       f.glob + "'.");
    s.name = f.glob;
    s.rule = "ranges named alike but for a number, on " + t.thread_name(f.pid, f.tid) + ", in number order";
    if (fams.size() > 1) {
      const RangeFamily& next = fams[1];
      s.rule += "; of " + plural(fams.size(), "family", "families") + ", the " +
                (f.gpu_launches != next.gpu_launches ? "one holding the most GPU launches"
                 : f.depth != next.depth             ? "outermost (`" + next.glob + "` nests in it)"
                                                     : "one covering the most time") +
                " (--range to choose another)";
    }
    take(f.ranges, f.numbers);
    return s;
  }
  if (t.format == TraceFormat::Kineto)
    throw TraceError(who +
                     " has no range that marks the iterations: no ProfilerStep#N (torch.profiler with a schedule, "
                     "prof.step() once per iteration) and no family of record_function ranges numbered by iteration "
                     "(like `step 3`) on one thread; the most frequent ranges are " +
                     frequent_ranges(t) +
                     ": name the iteration range with --range NAME, a glob ('step *') or re:REGEX.");
  if (pid)
    throw TraceError(who +
                     " has no NVTX range that marks the iterations: no `forward` range and no family of ranges "
                     "numbered by iteration (like `Forward Pass Iter 3`) on one of its threads.");
  throw TraceError(
      "no NVTX range marks the iterations: there is no `forward` range and no family of ranges numbered "
      "by iteration (like `Forward Pass Iter 3`) on one thread; the most frequent ranges are " +
      frequent_ranges(t) + ": name the iteration range with --range NAME, a glob ('Step *') or re:REGEX.");
}

}  // namespace

IterationSet find_iterations(const TraceJoin& j, const std::string& spec, std::optional<uint32_t> pid) {
  const Trace& t = j.trace();
  if (t.nvtx.empty()) no_nvtx(t);
  Candidates c(j, spec);
  std::vector<int> matches = c.matches();
  if (pid)
    matches.erase(std::remove_if(matches.begin(), matches.end(), [&](int r) { return t.nvtx[r].pid != *pid; }),
                  matches.end());
  return choose_iterations(j, spec, pid, std::move(matches), [&] {
    std::vector<RangeFamily> f = spec.empty() ? c.families() : std::vector<RangeFamily>{};
    if (pid) f.erase(std::remove_if(f.begin(), f.end(), [&](const RangeFamily& x) { return x.pid != *pid; }), f.end());
    return f;
  });
}

std::vector<ProcessIterations> iterations_by_process(const TraceJoin& j, const std::string& spec) {
  const Trace& t = j.trace();
  std::vector<ProcessIterations> out;
  if (t.nvtx.empty()) return out;
  Candidates c(j, spec);
  // Each process's candidates, grouped once: the work stays linear in the trace however many
  // processes it holds.
  std::map<uint32_t, std::vector<int>> matches;
  for (int r : c.matches()) matches[t.nvtx[r].pid].push_back(r);
  // Rule 2's families only when some process with ranges has no `forward` one (a laptime capture
  // never pays for them, as before).
  std::set<uint32_t> with_ranges;
  for (const NvtxEvent& r : t.nvtx) with_ranges.insert(r.pid);
  const bool need_families = spec.empty() && std::any_of(with_ranges.begin(), with_ranges.end(),
                                                         [&](uint32_t pid) { return !matches.count(pid); });
  std::map<uint32_t, std::vector<RangeFamily>> families;
  if (need_families)
    for (const RangeFamily& f : c.families()) families[f.pid].push_back(f);  // best first, as found
  std::set<uint32_t> pids;
  for (const auto& [pid, m] : matches) pids.insert(pid);
  for (const auto& [pid, f] : families) pids.insert(pid);
  const auto launches = launches_by_thread(j);
  for (uint32_t pid : pids) {
    ProcessIterations p;
    p.pid = pid;
    auto m = matches.find(pid);
    try {
      p.set = choose_iterations(j, spec, pid, m == matches.end() ? std::vector<int>{} : m->second,
                                [&] { return families[pid]; });
      for (int r : p.set.ranges) p.gpu_launches += launches_inside(launches, t.nvtx[r]);
    } catch (const TraceError& e) {
      p.error = e.what();
    }
    out.push_back(std::move(p));
  }
  return out;
}

// --- Warm-up and the steady state ------------------------------------------------------------

void mark_warmup(const Trace& t, const IterationSet& s, std::optional<int> skip_warmup, Iterations& out,
                 std::vector<std::string>& notes) {
  out.range_name = s.name;
  out.range_rule = s.rule;
  const size_t n = s.ranges.size();
  for (size_t i = 0; i < n; ++i) {
    const NvtxEvent& r = t.nvtx[s.ranges[i]];
    Iteration it;
    it.nvtx = s.ranges[i];
    it.index = s.numbers[i];
    it.start = r.start;
    it.end = r.end;
    out.iterations.push_back(it);
  }
  auto marked_warmup = [&](const NvtxEvent& r) {
    const std::string name = t.category_name(r);
    return name.empty() ? r.category == 1 : name == "warmup";
  };
  bool any_marked = false;
  for (int r : s.ranges) any_marked = any_marked || t.nvtx[r].category != 0;
  const std::string iters = plural(n, "`" + s.name + "` range", "`" + s.name + "` ranges");
  if (skip_warmup) {
    const size_t k = static_cast<size_t>(std::max(0, *skip_warmup));
    if (k >= n)
      throw TraceError("the trace has " + iters + " and --skip-warmup " + std::to_string(k) +
                       " leaves none to measure.");
    for (size_t i = 0; i < k; ++i) out.iterations[i].warmup = true;
    out.warmup_rule = "the first " + std::to_string(k) + " (--skip-warmup)";
    out.warmup_given = true;
  } else if (any_marked) {
    for (size_t i = 0; i < n; ++i) out.iterations[i].warmup = marked_warmup(t.nvtx[s.ranges[i]]);
    out.warmup_rule = "marked by the bench with NVTX category `warmup`";
    if (std::all_of(out.iterations.begin(), out.iterations.end(), [](const Iteration& it) { return it.warmup; })) {
      for (Iteration& it : out.iterations) it.warmup = false;
      out.warmup_rule = "none: every iteration is marked warm-up, so all are measured";
      notes.push_back("Every iteration is marked warm-up; the numbers below include warm-up costs.");
    }
  } else if (n > 1) {
    out.iterations[0].warmup = true;
    out.warmup_rule = "the first 1 (not marked in the trace; --skip-warmup K to change)";
  } else {
    out.warmup_rule = "none";
    notes.push_back("The trace has a single `" + s.name +
                    "` iteration, not marked warm-up: it is measured, warm-up costs and all.");
  }
}

namespace {

// Where the GPU span of every iteration with GPU work, warm-up included, settles:
// stats::settling over it, its start, settled run and shifts mapped back to indices into r.iterations.
stats::Settling settling_of(const Iterations& r) {
  std::vector<double> series;
  std::vector<size_t> position;  // series index -> index into r.iterations
  for (size_t i = 0; i < r.iterations.size(); ++i) {
    if (!r.iterations[i].has_gpu) continue;
    series.push_back(double(r.iterations[i].gpu_span()));
    position.push_back(i);
  }
  if (series.empty()) return {};
  stats::Settling s = stats::settling(series);
  s.start = s.start < position.size() ? position[s.start] : r.iterations.size();
  s.settled = s.settled < position.size() ? position[s.settled] : r.iterations.size();
  for (stats::LevelShift& shift : s.shifts) shift.at = position[shift.at];
  return s;
}

}  // namespace

void settle_warmup(Iterations& r) {
  if (r.warmup_given || r.iterations.size() < 2) return;
  size_t marked = 0;  // leading iterations already warm-up (the bench's marks, or the first)
  while (marked < r.iterations.size() && r.iterations[marked].warmup) ++marked;
  if (marked == 0) return;  // every iteration marked warm-up, so all are measured (mark_warmup's note)
  const stats::Settling s = settling_of(r);
  if (s.start <= marked) return;
  for (size_t i = 0; i < s.start; ++i) r.iterations[i].warmup = true;
  const bool by_marks = r.warmup_rule.rfind("marked", 0) == 0;
  r.warmup_rule = format(
      "the first %zu, up to where the per-iteration GPU time's initial transient ends (the first %zu in a "
      "row within %.3f ms ± %.3f ms; %s; --skip-warmup K to change)",
      s.start, s.run, s.level / 1e6, s.band / 1e6,
      by_marks ? format("the bench marked %zu", marked).c_str() : "not marked in the trace");
}

void mark_host_ahead(Iterations& out, std::vector<std::string>& notes) {
  // Every iteration with GPU work past warm-up (a warm-up iteration's host time is its own story:
  // lazy loading, first-call setup), and for each the lag's growth over the one before where both
  // are measured (0 for the first of a run: nothing to grow from, but its lag still counts
  // against the queue's depth below; a queue that filled during it left that range short). The
  // GPU lap (start to next start) is taken over the pairs.
  std::vector<size_t> cand;
  std::vector<Ns> growth, period;
  for (size_t i = 0; i < out.iterations.size(); ++i) {
    const Iteration& it = out.iterations[i];
    if (it.warmup || !it.has_gpu) continue;
    const Iteration* p = i > 0 ? &out.iterations[i - 1] : nullptr;
    const bool pair = p && !p->warmup && p->has_gpu;
    cand.push_back(i);
    growth.push_back(pair ? (it.gpu_end - it.end) - (p->gpu_end - p->end) : 0);
    if (pair) period.push_back(it.gpu_start - p->gpu_start);
  }
  out.steady_rule = "all after warm-up";
  if (cand.size() < 3 || period.empty()) return;
  std::vector<Ns> sorted = period;
  std::sort(sorted.begin(), sorted.end());
  const Ns lap = sorted[sorted.size() / 2];
  // A gain: the host got more than a tenth of a lap further ahead, with a lag of at least that.
  std::vector<Ns> lag(cand.size());
  size_t gains = 0, late_gains = 0;  // all of them, and those in the second half
  for (size_t k = 0; k < cand.size(); ++k) {
    const Iteration& it = out.iterations[cand[k]];
    lag[k] = it.gpu_end - it.end;
    if (growth[k] * 10 > lap && lag[k] * 10 > lap) {
      ++gains;
      late_gains += k >= cand.size() / 2;
    }
  }
  if (gains == 0) return;
  const size_t late = cand.size() - cand.size() / 2;
  // Ahead to the end: the lag still climbing through the second half (two steps in three gain;
  // a lag that only jitters, as beside other work on the GPU, gains now and then, not so often).
  const bool climbing = late_gains * 3 >= late * 2;
  size_t last = 0;  // the climb's last iteration, when the queue filled
  if (!climbing) {
    // A queue that filled: the lag climbs, then holds at the queue's depth. The climb ends at the
    // first iteration whose lag is within a tenth of a lap of the second half's median; gains
    // after it are jitter at that depth. No climb (the lag there from the start): none ahead.
    std::vector<Ns> tail(lag.begin() + static_cast<std::ptrdiff_t>(cand.size() / 2), lag.end());
    std::nth_element(tail.begin(), tail.begin() + static_cast<std::ptrdiff_t>(tail.size() / 2), tail.end());
    const Ns depth = tail[tail.size() / 2];
    size_t first = 0;
    while (first < cand.size() && (lag[first] - depth) * 10 < -lap) ++first;
    if (first == 0) return;
    last = first;
  }
  const auto ahead_of = [&](size_t upto) {
    std::vector<uint64_t> v;
    for (size_t i = 0; i <= upto; ++i)
      if (!out.iterations[i].warmup) v.push_back(out.iterations[i].index);
    return v;
  };
  // Ahead to the end, or but for one iteration (too few to call the queue full): the host
  // ranges never measure the lap.
  if (climbing || last + 2 >= cand.size()) {
    out.steady_rule = "all after warm-up, though the host ran ahead of the GPU in every one";
    notes.push_back(
        "The host ran ahead of the GPU to the end of the capture (the launch queue never filled): the "
        "NVTX ranges measure how long the host took to enqueue an iteration, not the lap; the lap is "
        "the GPU's start to next start.");
    out.lap_from_gpu = true;
    return;
  }
  const std::vector<uint64_t> ahead = ahead_of(cand[last]);
  for (size_t i = 0; i <= cand[last]; ++i)
    if (!out.iterations[i].warmup) out.iterations[i].host_ahead = true;
  std::vector<uint64_t> steady;
  for (const Iteration& it : out.iterations)
    if (it.steady()) steady.push_back(it.index);
  out.steady_rule = detail::number_runs(steady) + "; in " + detail::number_runs(ahead) +
                    " the host ran ahead of the GPU (the GPU's lag, from range end to GPU end, grew until "
                    "the launch queue filled), so those ranges measure enqueue time, not the lap";
}

namespace {

// Rule 12 (iteration_statistics' comment): whether the host ranges' mean and the GPU's start to
// next start disagree beyond their noise, and the sentence that says so; "" when they agree.
std::string host_range_disagrees(const Iterations& r, bool overlapping) {
  const stats::Summary &h = r.host_ms, &p = r.period_ms;
  if (overlapping || p.n == 0 || h.n == 0 || p.mean <= 0) return "";
  // No loop laps faster than the GPU work each iteration launches: host ranges shorter than that
  // (by over 1%) measured the enqueueing of work the GPU ran later, whatever their noise (one
  // short range, as where the launch queue filled during the first measured one, also widens it).
  const stats::Summary& b = r.busy_ms;
  if (b.n && h.mean < 0.99 * b.mean)
    return format(
        "the host ranges, %.3f ms (mean), are shorter than the GPU's busy time per iteration, %.3f ms: "
        "no loop laps faster than its GPU work, so the ranges measure how long the host took to "
        "enqueue, not the lap",
        h.mean, b.mean);
  const double d = p.mean - h.mean, rel = std::abs(d) / p.mean;
  const double se = std::sqrt(h.stddev * h.stddev / double(h.n) + p.stddev * p.stddev / double(p.n));
  const bool beyond = p.n < 3 ? rel > 0.01 : rel > 0.005 && std::abs(d) > 2 * se;
  if (!beyond) return "";
  return format("the host ranges, %.3f ms (mean), %s the GPU's start to next start by %.1f%%, ", h.mean,
                d > 0 ? "fall short of" : "exceed", 100 * rel) +
         (p.n < 3 ? "over 1% with too few iterations to measure their noise: " : "more than their noise allows: ") +
         (d > 0 ? "the loop spends time outside its ranges, which only the GPU's start to next start counts"
                : "a range outlasts the lap while the GPU catches up on queued work");
}

}  // namespace

void iteration_statistics(Iterations& out) {
  out.steady_count = 0;
  for (const Iteration& it : out.iterations) out.steady_count += it.steady() ? 1 : 0;
  std::vector<double> host, gpu, fill, busy_ns, period;
  const Iteration* prev = nullptr;
  bool overlapping = false;  // a steady range starts before the previous one ended
  std::vector<std::pair<Ns, int>> spans;
  for (size_t i = 0; i < out.iterations.size(); ++i) {
    const Iteration& it = out.iterations[i];
    if (!it.steady()) {
      prev = nullptr;
      continue;
    }
    host.push_back(double(it.duration()));
    if (prev) overlapping = overlapping || it.start < prev->end;
    if (it.has_gpu) {
      gpu.push_back(double(it.gpu_span()));
      fill.push_back(it.span_fill_pct());
      busy_ns.push_back(double(it.busy));
      spans.emplace_back(it.gpu_span(), static_cast<int>(i));
      if (prev && prev->has_gpu) period.push_back(double(it.gpu_start - prev->gpu_start));
    }
    prev = &it;
  }
  auto to_ms = [](stats::Summary s) {
    for (double* x : {&s.mean, &s.median, &s.min, &s.max, &s.p10, &s.p90, &s.stddev}) *x /= 1e6;
    return s;
  };
  out.host_ms = to_ms(stats::summarize(host));
  out.gpu_ms = to_ms(stats::summarize(gpu));
  out.span_fill_pct = stats::summarize(fill);
  out.busy_ms = to_ms(stats::summarize(busy_ns));
  out.period_ms = to_ms(stats::summarize(period));
  out.lap_reason = out.lap_from_gpu ? "" : host_range_disagrees(out, overlapping);
  if ((out.lap_from_gpu || !out.lap_reason.empty()) && out.period_ms.n) {
    out.lap_ms = out.period_ms.mean;
    out.lap_source = "GPU start to next start, mean";
    out.lap_from_gpu = true;
  } else {
    out.lap_ms = out.host_ms.mean;
    out.lap_source = "NVTX range on the host, mean";
    out.lap_from_gpu = false;
  }
  if (!spans.empty()) {
    std::sort(spans.begin(), spans.end());
    out.svg_iteration = spans[spans.size() / 2].second;  // the upper median: a real iteration
  }
}

std::string warmup_warning(const stats::Settling& s, size_t warmup, const std::string& what) {
  if (s.start <= warmup) return "";
  return format(
      "Warm-up too short in %s: %zu iteration(s) dropped, but the per-iteration GPU time's initial transient "
      "ends only at iteration %zu (level %.3f ms ± %.3f ms from there); pass --skip-warmup %zu.",
      what.c_str(), warmup, s.start, s.level / 1e6, s.band / 1e6, s.start);
}

std::string level_shift_note(const stats::Settling& s, const std::function<uint64_t(size_t)>& index_of,
                             const std::string& what) {
  if (s.shifts.empty()) return "";
  std::string list;
  for (const stats::LevelShift& shift : s.shifts)
    list += format("%sat iteration %llu, %.3f -> %.3f ms", list.empty() ? "" : "; ",
                   static_cast<unsigned long long>(index_of(shift.at)), shift.before / 1e6, shift.after / 1e6);
  return format(
      "The GPU time per iteration in %s shifts level among the measured iterations (%s; medians of the "
      "stretches before and after): a change in the run, such as a power cap, a clock step or other work on "
      "the GPU, not warm-up. The iterations on both sides are measured, so the lap is their mean; compare "
      "the levels, or capture the part you mean.",
      what.c_str(), list.c_str());
}

IterationSettling iteration_settling(const Iterations& a) {
  IterationSettling r;
  bool leading = true;
  for (const Iteration& it : a.iterations) {
    if (it.warmup && leading) ++r.warmup;
    leading = leading && it.warmup;
  }
  if (std::none_of(a.iterations.begin(), a.iterations.end(), [](const Iteration& it) { return it.has_gpu; })) return r;
  r.settling = settling_of(a);
  const stats::Settling& s = r.settling;
  const auto index_of = [&a](size_t i) { return a.iterations[i].index; };
  std::string shifts;
  for (const stats::LevelShift& shift : s.shifts)
    shifts += format("; the level shifts at iteration %llu, %.3f -> %.3f ms",
                     static_cast<unsigned long long>(index_of(shift.at)), shift.before / 1e6, shift.after / 1e6);
  const size_t n = a.iterations.size();
  const std::string transient =
      s.start
          ? format("the initial transient of the per-iteration GPU time is the first %zu of %zu iterations", s.start, n)
          : format("the per-iteration GPU time has no initial transient in its %zu iterations", n);
  r.text = s.settles ? transient + format(
                                       " (from iteration %llu, %zu in a row lie within %.3f ms ± %.3f ms: their "
                                       "median ± max(5 x noise, 2%%)%s); warm-up dropped %zu%s",
                                       static_cast<unsigned long long>(s.settled < n ? index_of(s.settled) : n), s.run,
                                       s.level / 1e6, s.band / 1e6, shifts.c_str(), r.warmup,
                                       s.start > r.warmup ? ": too short" : ": enough")
                     : format(
                           "the per-iteration GPU time never holds still in the first half of the %zu iterations (no "
                           "%zu in a row within max(5 x noise, 2%%) of their median): no initial transient to drop; "
                           "warm-up dropped %zu as marked",
                           n, s.run, r.warmup);
  r.warning = warmup_warning(s, r.warmup, "this trace");
  r.shifts = level_shift_note(s, index_of, "this trace");
  return r;
}

std::string interleaved_threads_note(const Trace& t, const IterationSet& s) {
  std::vector<int> by_start = s.ranges;
  std::sort(by_start.begin(), by_start.end(), [&](int x, int y) { return t.nvtx[x].start < t.nvtx[y].start; });
  std::set<std::pair<uint32_t, uint32_t>> threads;
  size_t overlaps = 0;
  int latest = -1;  // the range reaching furthest so far
  for (int r : by_start) {
    const NvtxEvent& e = t.nvtx[r];
    threads.insert({e.pid, e.tid});
    if (latest >= 0 && e.start < t.nvtx[latest].end && (t.nvtx[latest].tid != e.tid || t.nvtx[latest].pid != e.pid))
      ++overlaps;
    if (latest < 0 || e.end > t.nvtx[latest].end) latest = r;
  }
  if (overlaps == 0) return "";
  std::string names;
  size_t shown = 0;
  for (const auto& [pid, tid] : threads)
    if (shown++ < 4) names += (names.empty() ? "" : ", ") + detail::clip(t.thread_name(pid, tid));
  if (threads.size() > 4) names += " and " + std::to_string(threads.size() - 4) + " more";
  return "The `" + detail::clip(s.name) + "` ranges run on " + std::to_string(threads.size()) + " threads at once (" +
         names + "; " + plural(overlaps, "range starts", "ranges start") +
         " while another thread's is open): they are read as one loop, their iterations interleaved; name one "
         "thread's ranges with --range if their names differ.";
}

std::string unexpanded_graph_note(const TraceJoin& j, const std::vector<Iteration>& iterations) {
  // A graph launch with no GPU work at all, neither a replay traced whole nor its nodes' work
  // (an export without the graph trace), so iterations look idle. Only launches inside an
  // iteration matter (a library may replay graphs at build time, as cuDNN tuning does).
  const Trace& t = j.trace();
  // A PyTorch profiler trace records graphs' kernels whenever it records GPU work at all; one with
  // none has its reader's note (which says why), and nsys's graph option is no advice for it.
  if (t.format == TraceFormat::Kineto) return "";
  std::vector<char> launched(t.api_calls.size(), 0);  // by call: launched GPU work the trace has
  for (const GpuOp& op : j.ops())
    if (op.api >= 0) launched[op.api] = 1;
  for (size_t c = 0; c < t.api_calls.size(); ++c) {
    const ApiCall& call = t.api_calls[c];
    if ((call.name != "cudaGraphLaunch" && call.name != "cuGraphLaunch") || launched[c]) continue;
    const bool in_loop = std::any_of(iterations.begin(), iterations.end(), [&](const Iteration& it) {
      return call.start >= it.start && call.start <= it.end && call.pid == t.nvtx[it.nvtx].pid;
    });
    if (in_loop)
      return "Some CUDA Graph launches have no kernels in the trace: capture with `nsys profile "
             "--cuda-graph-trace=node` to see the kernels inside the graphs.";
  }
  return "";
}

}  // namespace laptime::trace
