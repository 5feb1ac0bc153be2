// Question 1: which NVTX ranges are the iterations, which of them are steady, and how long
// is one lap.
//
// The iteration ranges come from --range (an exact name, a glob `Forward Pass Iter *`, or a
// regular expression `re:...`, always matched against the whole name) or, without it, from
// the first rule that fits:
//   1. laptime's own `forward` ranges (any domain);
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
// else the first), and so are the iterations in which the host ran ahead of the GPU: until
// the launch queue fills, a loop without synchronization enqueues an iteration in a fraction
// of its GPU time, so its NVTX range measures enqueue time, not the lap. That phase shows as
// the lag (GPU end minus host end) growing from one iteration to the next; the iterations up
// to the last one where it grew by more than a tenth of the GPU lap are left out. When fewer
// than two iterations are left after that, the host ran ahead to the end of the capture: all
// are kept, and the lap is the GPU's start to next start instead of the host range.
#pragma once

#include <map>
#include <regex>
#include <string>
#include <vector>

#include "trace/report.h"

namespace laptime::trace {

// --range as given: "re:REGEX", a glob (has * or ?), or an exact name.
class RangePattern {
 public:
  // Throws TraceError for a regular expression that does not compile.
  explicit RangePattern(const std::string& spec);
  bool matches(const std::string& text) const;

 private:
  enum class Kind { Exact, Glob, Regex };
  Kind kind_ = Kind::Exact;
  std::string text_;
  std::regex re_;
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
  std::vector<int> ranges;        // indices into Trace::nvtx, in iteration order
  std::vector<uint64_t> numbers;  // each one's number: from its name, its payload, or its position
  std::string name;               // what the report calls them: `forward`, `Forward Pass Iter *`
  std::string rule;               // how they were found, in words
  std::map<int, int> by_range;    // nvtx index -> position in `ranges`
  // The iteration (position) a range sits in through its chain of parents, or -1.
  int iteration_of_range(const Trace& t, int range) const;
};

// `spec` empty: the default rules above. Throws TraceError with one sentence when no range
// matches or no rule fits.
IterationSet find_iterations(const TraceJoin& j, const std::string& spec);

// Fills a.iterations from the set (host times only) and marks warm-up.
void mark_warmup(const Trace& t, const IterationSet& s, const ReportOptions& o, Analysis& a);
// Once the GPU spans are known: marks the iterations whose host ran ahead of the GPU.
void mark_host_ahead(Analysis& a);
// Host, GPU and period summaries over the steady iterations, and the lap.
void iteration_statistics(Analysis& a);

}  // namespace laptime::trace
