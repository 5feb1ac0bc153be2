#include "trace/ncu/ncu_handoff.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "core/input_file.h"
#include "trace/analyses/analyze.h"
#include "trace/model/format.h"
#include "trace/model/text.h"
#include "trace/read/nsys_export.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/read/open_trace.h"
#include "trace/read/sqlite.h"

namespace laptime::trace {

using detail::format;

namespace {

// The kernels launched inside a range named `within` nested in iteration range `outer`.
size_t kernels_within(const Trace& t, int outer, const std::string& within) {
  std::vector<const NvtxEvent*> inside;
  for (const NvtxEvent& e : t.nvtx) {
    if (e.text != within) continue;
    int p = e.parent;
    for (int hops = 0; p >= 0 && p != outer && hops < 100000; ++hops) p = t.nvtx[static_cast<size_t>(p)].parent;
    if (p == outer) inside.push_back(&e);
  }
  size_t n = 0;
  for (const Kernel& k : t.kernels) {
    const ApiCall* call = t.api_call_of(k);
    if (!call) continue;
    for (const NvtxEvent* e : inside)
      if (call->pid == e->pid && call->tid == e->tid && call->start >= e->start && call->start <= e->end) {
        ++n;
        break;
      }
  }
  return n;
}

// The capture's first host event: where the program's own start begins, as the trace saw it.
Ns first_event(const Trace& t) {
  Ns first = std::numeric_limits<Ns>::max();
  if (!t.api_calls.empty()) first = std::min(first, t.api_calls.front().start);
  if (!t.nvtx.empty()) first = std::min(first, t.nvtx.front().start);
  return first;
}

std::string stem_of(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  const size_t dot = name.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

}  // namespace

namespace {

// ncu's NVTX filter reads '@' as the split between domain and range and '/' as the end of a
// push/pop range (and between nested ones); it has no escape for either. A name holding one
// cannot be named in --nvtx-include: refused in one sentence.
void require_filterable(const std::string& what, const std::string& name) {
  const size_t at = name.find_first_of("@/");
  if (at == std::string::npos) return;
  throw TraceError(what + " `" + escape_name(name) + "` holds a '" + name[at] +
                   "', which ncu's --nvtx-include reads as a separator ('@' between domain and range, '/' between "
                   "nested ranges) and cannot escape: ncu cannot select this range by name.");
}

}  // namespace

NcuCommand ncu_handoff(const NcuHandoffOptions& o) {
  if (!o.program.empty() && o.program.front().empty())
    throw TraceError(
        "the program after -- is an empty word: give the program to run, e.g. `laptime kernels --command "
        "--from " +
        shell_word(o.trace) + " -- python3 train.py`.");
  if (!o.within.empty()) require_filterable("--within", o.within);
  try {
    check_input(o.trace, "a trace", Missing::Allow);
  } catch (const InputError& e) {
    throw TraceError(e.what());
  }
  const TraceSource source = open_trace_source(o.trace, stderr);
  const auto t = std::make_unique<const Trace>(load_trace(source.path()));
  const TraceJoin j(*t);
  ReportOptions ro;
  ro.pid = o.pid;
  ro.scope = AnalysisScope::Iterations;
  const Analysis a = analyze(j, ro);
  int pick = a.svg_iteration;  // the median steady iteration, as analyze draws it
  for (size_t i = 0; pick < 0 && i < a.iterations.size(); ++i)
    if (a.iterations[i].steady()) pick = static_cast<int>(i);
  if (pick < 0) throw TraceError(escape_name(o.trace) + " has no steady iteration to profile.");
  const Iteration& it = a.iterations[static_cast<size_t>(pick)];
  const NvtxEvent& range = t->nvtx[static_cast<size_t>(it.nvtx)];

  CapturedCommand program;
  program.argv = o.program;
  if (program.argv.empty()) program = captured_command(source.path());
  const std::string example = "`laptime kernels --command --from " + shell_word(o.trace) + " -- " +
                              (program.argv.empty() ? "python3 train.py" : shell_word(program.argv.front()) + " ARGS") +
                              "`";
  if (program.argv.empty())
    throw TraceError(escape_name(o.trace) +
                     " does not record the command it captured (META_DATA_CAPTURE): give "
                     "the program after --, e.g. " +
                     example + ".");
  if (program.scrubbed)
    throw TraceError(escape_name(o.trace) + " is a copy made by `laptime scrub`, which kept only the program's name (" +
                     escape_name(program.argv.front()) +
                     ") and removed its arguments and working folder: give the program and its arguments after --, "
                     "e.g. " +
                     example + ", run from its folder.");
  if (!program.gap.empty())
    throw TraceError(escape_name(o.trace) + " records the captured command with a gap in its arguments (no " +
                     program.gap + "), so it cannot be rebuilt as it ran: give the program after --, e.g. " + example +
                     ".");

  NcuCommand c;
  c.what = "one steady iteration of the traced program (`" + escape_name(range.text.str()) + "`" +
           (o.within.empty() ? "" : ", its " + escape_name(o.within) + " only") + ")";
  // One iteration by name when its name is its own; else the same name's kernels skipped up to it.
  size_t same_name = 0, kernels_before = 0;
  for (size_t i = 0; i < a.iterations.size(); ++i) {
    if (t->nvtx[static_cast<size_t>(a.iterations[i].nvtx)].text != range.text) continue;
    ++same_name;
    if (static_cast<int>(i) < pick)
      kernels_before += o.within.empty() ? a.iterations[i].kernels : kernels_within(*t, a.iterations[i].nvtx, o.within);
  }
  if (!range.domain.empty()) require_filterable("the iteration range's NVTX domain", range.domain.str());
  require_filterable("the iteration range", range.text.str());
  std::string include = (range.domain.empty() ? "" : range.domain.str() + "@") + range.text.str();
  if (range.kind == NvtxKind::PushPop)
    include += "/" + (o.within.empty() ? "" : o.within + "/");
  else if (!o.within.empty())
    throw TraceError("--within needs push/pop iteration ranges: `" + escape_name(range.text.str()) +
                     "` is a start/end range, which ncu cannot nest a layer in.");
  c.kernels = static_cast<int>(o.within.empty() ? it.kernels : kernels_within(*t, it.nvtx, o.within));
  if (c.kernels == 0)
    throw TraceError(o.within.empty() ? "the steady iteration launched no kernel: nothing for ncu to profile."
                                      : "no kernel runs inside a range named `" + escape_name(o.within) +
                                            "` in the steady iteration: name a layer range of it.");
  const std::string stem = o.output.empty() ? stem_of(o.trace) + "_ncu" : o.output;
  std::vector<std::string> words{"ncu", "--nvtx", "--nvtx-include", include};
  if (same_name > 1)
    words.insert(words.end(),
                 {"--launch-skip", std::to_string(kernels_before), "--launch-count", std::to_string(c.kernels)});
  for (const std::string& s : ncu_sections()) words.insert(words.end(), {"--section", s});
  words.insert(words.end(), {"--print-units", "base", "-f", "-o", stem});
  words.insert(words.end(), program.argv.begin(), program.argv.end());
  c.output = stem + ".ncu-rep";
  c.ncu = (program.working_dir.empty() ? "" : shell_cd(program.working_dir)) + shell_words(words);
  c.read = shell_words({"laptime", "kernels", c.output});
  const double start_s =
      std::max<Ns>(0, t->nvtx[static_cast<size_t>(a.iterations.front().nvtx)].start - first_event(*t)) / 1e9;
  c.seconds = start_s + c.kernels * ncu_seconds_per_kernel();
  c.notes.push_back(
      format("the estimate: the program's own start as the trace saw it (%.1f s to its first "
             "iteration) and about %.1f s a kernel (ncu replays each one alone, 21 passes with these "
             "sections, caches flushed and clocks locked; measured on an H200, "
             "tests/fixtures/ncu/capture.log); every other kernel runs at nearly its own speed.",
             start_s, ncu_seconds_per_kernel()));
  c.notes.push_back(o.program.empty() ? "the program is the capture's own command line (nsys's META_DATA_CAPTURE)" +
                                            std::string(program.working_dir.empty() ? "." : ", run from its folder.")
                                      : "the program is the one given after --, run from this folder.");
  if (same_name > 1)
    c.notes.push_back(
        format("every iteration is named `%s`: --launch-skip %zu --launch-count %d select the "
               "median steady one's kernels (those inside the range the command names), as this capture counted them "
               "(a program that launches "
               "differently under ncu shifts them).",
               escape_name(range.text.str()).c_str(), kernels_before, c.kernels));
  return c;
}

}  // namespace laptime::trace
