// `laptime analyze`: the four baseline questions, answered from a trace.
//
//   1. How long is a steady-state forward pass?  From the NVTX iteration ranges (laptime's
//      `forward`, a numbered family such as `Forward Pass Iter 3`, or --range; warm-up and
//      the iterations the host ran ahead of the GPU excluded), both as the host saw it (range
//      start to end) and as the GPU ran it (the range projected onto the GPU: first start to
//      last end of the work whose launch call lies inside the range, joined by correlation id).
//   2. How busy is the GPU inside an iteration?  The union of kernel, copy and memset
//      intervals over the iteration's GPU span, and the idle gaps above a threshold of a few
//      microseconds (nsys's own rule looks for gaps of 500 ms: it sees nothing here), each
//      with what the launching thread was doing meanwhile.
//   3. Which kernels run?  By category (name rules, then the enclosing NVTX range: a
//      non-GEMM kernel under `h.3.attn` is attention), by kernel, and by layer range.
//   4. Does the loop synchronize?  Device/stream/event synchronizes, blocking copies, async
//      copies from pageable memory, allocations and frees inside steady iterations, each
//      measured: did the host wait for the compute stream's work, and for how long.
//
// analyze() computes everything into an Analysis (trace/analyses/analysis.h: plain numbers, ns); the
// writers only present it (print_report in text_report.h, to_json in json_report.h, the SVG,
// the roofline), so the text and the JSON can never disagree. Where things live: the joins
// in join.h; one module per question, each declaring its own answer: iterations.h (1),
// utilization.h (2), kernels.h (3), sync.h (4). This file only runs them in order and writes
// the verdict; nothing below it includes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "trace/analyses/analysis.h"
#include "trace/model/error.h"
#include "trace/analyses/join.h"

namespace laptime::trace {

// What analyze() computes: every answer (`laptime analyze`), or the iterations only: which are
// steady, their GPU spans, the median one, and every note (`laptime diff`'s inputs,
// trace/compare/diff_input.h, which read nothing else; the kernel mix, the idle sums, the
// synchronizations and the verdict are most of the analysis of an emit_nvtx trace).
enum class AnalysisScope { Everything, Iterations };

struct ReportOptions {
  // The iteration ranges: an exact NVTX name, a glob ('Forward Pass Iter *') or re:REGEX, in
  // any domain; empty: found by the rules in iterations.h.
  std::string range;
  // Warm-up iterations to drop. Unset: the ranges the bench marked warm-up (category named
  // "warmup", or category 1 when no names were registered); with no marks, the first one.
  std::optional<int> skip_warmup;
  double gap_us = 5.0;  // an idle stretch longer than this inside an iteration is a gap
  // Rows in the kernel, layer, gap and synchronization tables: trace/analyses/top.h (unset: 15 in the
  // text, every row in the JSON; 0: every row).
  std::optional<int> top;
  // The process to report (--pid). Unset: the one process with iterations; a capture in which
  // several have some is refused here (run_analyze reports each, trace/analyses/processes.h).
  std::optional<uint32_t> pid;
  AnalysisScope scope = AnalysisScope::Everything;
};

// Throws TraceError when the trace has no NVTX ranges, no range matching --range, no rule that
// finds the iterations, several processes with iterations and no pid, or (with an explicit
// --skip-warmup) none left after warm-up.
Analysis analyze(const TraceJoin& j, const ReportOptions& o);
// The same over iterations already found (one process's, from choose_processes).
Analysis analyze(const TraceJoin& j, const ReportOptions& o, const IterationSet& iterations);

}  // namespace laptime::trace
