// Question 1: which NVTX ranges are the iterations, which of them are steady, and how long
// is one lap.
//
// The iteration ranges come from --range (an exact name, a glob `Forward Pass Iter *`, or a
// regular expression `re:...`, always matched against the whole name) or, without it, from
// the first rule that fits:
//   1. laptime's own `forward` ranges (any domain); in the PyTorch profiler's trace, its steps
//      (`ProfilerStep#N`, one per prof.step()), however many;
//   2. a family of ranges whose names differ only by one number (`Forward Pass Iter 3`,
//      `ProfilerStep#12`, `step_7`; PyTorch emit_nvtx's `, seq = N` / `, op_id = N` suffixes
//      ignored), on one thread, never overlapping, with distinct numbers,
//      in the order of those numbers. When several families fit, the one whose ranges hold
//      the most GPU launches wins, then the outermost (a `step_N` around `Forward Pass Iter N`),
//      then the one covering the most time; a tie on all three is refused with both named;
//   3. otherwise one sentence naming the candidates.
// Push/pop and start/end ranges alike, in any domain, on any thread.
//
// Steady iterations: warm-up is dropped (--skip-warmup, else the bench's NVTX category marks,
// else the first; then, unless --skip-warmup said, extended to where the per-iteration GPU time
// settles: settle_warmup), and so are the iterations in which the host ran ahead of the GPU: until
// the launch queue fills, a loop without synchronization enqueues an iteration in a fraction
// of its GPU time, so its NVTX range measures enqueue time, not the lap. That phase shows as
// the lag (GPU end minus host end) growing from one iteration to the next; the iterations up
// to the last one where it grew by more than a tenth of the GPU lap are left out. When fewer
// than two iterations are left after that, the host ran ahead to the end of the capture: all
// are kept, and the lap is the GPU's start to next start instead of the host range.
//
// The lap is the loop's: the host range's mean, unless the GPU's start to next start over the
// same iterations disagrees with it beyond their noise (iteration_statistics says how it
// decides); then the GPU's, the host range shown beside it with the reason. Time the loop
// spends between its ranges (a data loader, a timer read) is part of the lap, and only the
// GPU's start to next start counts it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/stats.h"
#include "trace/model/error.h"
#include "trace/analyses/join.h"

namespace re2 {
class RE2;
}

namespace laptime::trace {

// One iteration range, with what the questions found in it (the GPU span and busy time are
// filled by utilization.h).
struct Iteration {
  int nvtx = -1;       // index into Trace::nvtx
  uint64_t index = 0;  // the range's payload when it has one, else its position
  bool warmup = false;
  bool host_ahead = false;        // the host ran ahead of the GPU (queue filling): not steady
  Ns start = 0, end = 0;          // host: the range itself
  bool has_gpu = false;           // any GPU work launched inside the range
  Ns gpu_start = 0, gpu_end = 0;  // the range projected onto the GPU
  Ns busy = 0;                    // union of the iteration's GPU intervals
  int gaps = 0;                   // idle stretches longer than the threshold
  Ns gap_time = 0;                // their total
  Ns host_wait = 0;               // idle time, gaps or not, waiting for a launch call to return
  size_t kernels = 0;
  Ns duration() const { return end - start; }
  Ns gpu_span() const { return gpu_end - gpu_start; }
  // Busy time over the iteration's own GPU span, in %: how densely its work is packed (100 for an
  // empty span). Not "busy", which is over the lap (analysis.h, VerdictFigures).
  double span_fill_pct() const { return gpu_span() ? 100.0 * double(busy) / double(gpu_span()) : 100.0; }
  bool steady() const { return !warmup && !host_ahead; }
};

// Question 1's answer (a part of trace/analyses/analysis.h's Analysis).
struct Iterations {
  std::string range_name;     // `forward`, `Forward Pass Iter *`, or --range as given
  std::string range_rule;     // how the iteration ranges were found, in words
  std::string warmup_rule;    // how warm-up was decided, in words
  bool warmup_given = false;  // --skip-warmup decided it: the data does not move it
  std::string steady_rule;    // which iterations are measured and why the others are not

  std::vector<Iteration> iterations;  // all, in order; steady() tells the measured ones
  int svg_iteration = -1;             // the steady iteration whose GPU span is the median
  size_t steady_count = 0;
  stats::Summary host_ms, gpu_ms;  // over steady iterations, ms
  stats::Summary span_fill_pct;    // Iteration::span_fill_pct over the steady iterations
  stats::Summary period_ms;        // GPU start to next iteration's GPU start: the throughput lap
  stats::Summary busy_ms;          // union of GPU work per steady iteration
  double lap_ms = 0;               // the steady-state lap: host range mean, or the GPU period (module comment)
  bool lap_from_gpu = false;
  std::string lap_source;  // which of the two, in words
  // When the lap is the GPU's because the host ranges disagree with it (not because the host
  // ran ahead or only launched graphs, which the notes say): the host's figure and why, else "".
  std::string lap_reason;
};

// --range as given: "re:REGEX" (RE2's syntax, matched against the whole name in time linear in
// its length: a trace's names are untrusted input), a glob (has * or ?), or an exact name.
class RangePattern {
 public:
  // Throws TraceError for a regular expression that does not compile.
  explicit RangePattern(const std::string& spec);
  bool matches(const std::string& text) const;

 private:
  enum class Kind { Exact, Glob, Regex };
  Kind kind_ = Kind::Exact;
  std::string text_;
  std::shared_ptr<const re2::RE2> re_;
};

// Shell-style glob over the whole text: * any run of characters, ? one character.
bool glob_match(const std::string& pattern, const std::string& text);

// Ranges on one thread named alike but for one number, as rule 2 finds them.
struct RangeFamily {
  std::string glob;  // the name with the number as `*`: "Forward Pass Iter *" ("step_*, *" with emit_nvtx suffixes)
  uint32_t pid = 0, tid = 0;
  std::vector<int> ranges;        // indices into Trace::nvtx, by number
  std::vector<uint64_t> numbers;  // ascending, distinct
  size_t gpu_launches = 0;        // API calls inside its ranges that launched GPU work
  double depth = 0;               // mean NVTX nesting depth of its ranges
  Ns covered = 0;                 // total time inside its ranges
};
// Every family that qualifies, best first.
std::vector<RangeFamily> numbered_families(const TraceJoin& j);

struct IterationSet {
  std::optional<uint32_t> pid;    // the process searched; unset: every process's ranges as one
  std::vector<int> ranges;        // indices into Trace::nvtx, in iteration order
  std::vector<uint64_t> numbers;  // each one's number: from its name, its payload, or its position
  std::string name;               // what the report calls them: `forward`, `Forward Pass Iter *`
  std::string rule;               // how they were found, in words
  std::map<int, int> by_range;    // nvtx index -> position in `ranges`
  // The iteration (position) a range sits in through its chain of parents, or -1.
  int iteration_of_range(const Trace& t, int range) const;
  // The iteration (position) API call `api` belongs to, or -1: the one its range's chain reaches;
  // else, in a PyTorch profiler trace whose iteration ranges are all on one thread, the one open
  // on that thread when a call of another thread of the same process started (the autograd thread
  // launches the backward pass while the main thread's step is open: a GPU op belongs to the step
  // holding the call it correlates to). An NVTX range is its own thread's (a loader thread's
  // `load batch N` does not own the main thread's launches).
  int iteration_of_call(const TraceJoin& j, int api) const;

 private:
  mutable std::vector<int> of_range_;  // iteration_of_range for every range, filled on first use
  // iteration_of_call's spans (start, end, position) by start, filled on first use; `spans_thread_`
  // false when the iteration ranges are on more than one thread (no fallback then).
  mutable std::vector<std::tuple<Ns, Ns, int>> spans_;
  mutable bool spans_made_ = false, spans_thread_ = false;
  mutable std::pair<uint32_t, uint32_t> thread_{0, 0};
};

// `spec` empty: the default rules above. `pid` set: only that process's ranges are candidates
// (a capture of several processes, trace/analyses/processes.h). Throws TraceError with one sentence when
// no range matches or no rule fits.
IterationSet find_iterations(const TraceJoin& j, const std::string& spec, std::optional<uint32_t> pid = std::nullopt);

// The rules applied to each process alone (rule 1 in one program does not hide rule 2 in
// another; two ranks with the same range names are two loops, not one), for every process
// that has a candidate range: a match of --range or `forward`, or a numbered family. The work
// is linear in the trace, however many processes it holds.
struct ProcessIterations {
  uint32_t pid = 0;
  IterationSet set;         // its iterations, when `error` is empty
  std::string error;        // why the rules refuse its candidates (two families tie), one sentence
  size_t gpu_launches = 0;  // launch calls inside its iteration ranges
};
std::vector<ProcessIterations> iterations_by_process(const TraceJoin& j, const std::string& spec);

// Fills r.iterations from the set (host times only), its name and rule, and marks warm-up:
// the first `skip_warmup` when set, else as the trace marks them (module comment). Notes for
// the report go to `notes`. Throws TraceError when --skip-warmup leaves nothing to measure.
void mark_warmup(const Trace& t, const IterationSet& s, std::optional<int> skip_warmup, Iterations& r,
                 std::vector<std::string>& notes);
// Once the GPU spans are known (utilization.h), unless --skip-warmup decided the warm-up: it
// ends where the per-iteration GPU time's initial transient ends (stats::settling, the rule of
// iteration_settling below) when that is later than the bench's marks (or the first iteration)
// end; the warm-up rule says so. A later level shift is not warm-up: the notes name it.
void settle_warmup(Iterations& r);
// Once the GPU spans are known (utilization.h): marks the iterations whose host ran ahead of
// the GPU.
void mark_host_ahead(Iterations& r, std::vector<std::string>& notes);
// Host, GPU and period summaries over the steady iterations, and the lap. The host range's mean
// and the GPU's start to next start (mean over consecutive steady pairs) disagree when they
// differ by more than 0.5% of the GPU's lap and by more than twice the standard error of their
// difference, sqrt(s_host^2 / n_host + s_period^2 / n_period); with fewer than three pairs there
// is no noise to measure, and 1% is the bar. Ranges that overlap one another (two threads'
// loops read as one) have no lap of their own: the host range stays.
void iteration_statistics(Iterations& r);

// The warning for a run whose laps settle after its warm-up ends, or "" when they do not.
// `start` and `warmup` count iterations from the first one.
std::string warmup_warning(const stats::Settling& s, size_t warmup, const std::string& what);
// The note for a run whose level shifts among the measured iterations (stats::settling), or "":
// where each shift starts (`index_of`: a position in the series -> the iteration's number) and the
// levels on both sides, in ms.
std::string level_shift_note(const stats::Settling& s, const std::function<uint64_t(size_t)>& index_of,
                             const std::string& what);

// Where an analyzed trace's iterations settle: stats::settling() (core/stats.h) over the GPU span
// of every iteration with GPU work, warm-up included (analyze and diff report it; the warning goes
// into the notes when the warm-up the analysis dropped ends before the transient does, and so does
// the note on level shifts).
struct IterationSettling {
  stats::Settling settling;  // start and each shift's `at`: an index into Iterations::iterations
  size_t warmup = 0;         // leading iterations the analysis dropped as warm-up
  std::string text;          // one line for the report, "" when no iteration has GPU work
  std::string warning;       // warmup_warning(), or ""
  std::string shifts;        // level_shift_note(), or ""
};
IterationSettling iteration_settling(const Iterations& a);

// A note when the iteration ranges sit on several threads of one process and overlap in time
// (two loops in one program, each on its own thread): they are read as one loop, their
// iterations interleaved, and the note says so; "" otherwise (every loop on one thread, or the
// threads taking turns).
std::string interleaved_threads_note(const Trace& t, const IterationSet& s);

// A note when CUDA Graphs were launched inside the iterations but the trace holds no GPU work of
// theirs (neither a replay traced whole nor its nodes' work, trace/analyses/graph.h), which would make the
// iterations look idle; "" otherwise.
std::string unexpanded_graph_note(const TraceJoin& j, const std::vector<Iteration>& iterations);

}  // namespace laptime::trace
