// What the trace reader refuses to believe, and what that leaves unanswered.
//
// The reader (trace/read/nsys_sqlite.cpp) checks every timestamp and id as it loads a row and
// counts the rows it leaves out in Trace::dropped (trace/model/trace.h). This file words those
// counts for the report (one line of text, one JSON object), says which of the four questions
// a missing or emptied table leaves without an answer, and guards the analysis's sums against
// signed overflow.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "trace/model/error.h"
#include "trace/model/trace.h"

namespace laptime::trace {

// Times are kept in [0, kMaxTime): any two differ by less than 2^62, so a duration or a
// difference of two times never overflows.
constexpr Ns kMaxTime = Ns{1} << 62;

// "NULL time or id", "text where an integer belongs", ...: the words of the report line.
const char* drop_reason_words(DropReason r);
// "null", "not_integer", "out_of_range", "end_before_start", "out_of_span": the JSON keys.
const char* drop_reason_key(DropReason r);

// {"total": N, "read": M, "by_reason": {...}, "by_table": {...}, "summary": "..."}.
nlohmann::json dropped_json(const DroppedRows& d);

// Sentences for the report's notes: a table the export lacks or whose every row was left
// out, and which questions it would have answered. Only the tables whose absence matters
// (nsys creates tables lazily: no MEMCPY table just means no copies).
std::vector<std::string> unanswered_notes(const Trace& t, const std::vector<std::string>& missing_tables);

// Throws TraceError with one sentence when every NVTX range was left out as invalid, so the
// iterations cannot be found (rather than the analysis saying the capture had none).
void require_ranges_left(const Trace& t);

// Throws TraceError when the analysis's sums could overflow 64-bit nanoseconds: the durations
// of all records, or the trace's span times the number of NVTX ranges (each iteration adds at
// most the span), reach 2^62. No real capture comes near (a day of records adds up to 2^46 ns).
void check_totals(const Trace& t);

}  // namespace laptime::trace
