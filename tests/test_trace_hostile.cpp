// `laptime analyze` against damaged traces (tests/fixtures/make_hostile_traces.py): each
// defect is left out and counted by the reader, the report says so in one line, what is
// left still gives sane numbers (percentages in 0-100, no negative durations), names that are
// not UTF-8 come out escaped and every output parses, and a write that fails is an error.
// Built into test_trace; run it under -fsanitize=address,undefined too (docs/ERRORS.md).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <algorithm>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/analyze_command.h"
#include "tests/support/trace_testing.h"
#include "trace/write/analysis_json.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/analyses/analyze.h"
#include "trace/model/text.h"
#include "trace/model/validate.h"

namespace laptime::trace {
namespace {

using nlohmann::json;
using testing_support::error_of;
using testing_support::fixture;
using testing_support::read_file;
using testing_support::temp_path;

std::string temp(const std::string& name) { return temp_path("hostile", name); }

using testing_support::report_text;

// Well-formed UTF-8 (RFC 3629: no overlongs, surrogates or code points past U+10FFFF) as
// nlohmann::json's lexer decides it, an implementation independent of escape_name. Control
// characters, quotes and backslashes are blanked first: JSON would refuse them raw.
bool strict_utf8(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\') c = ' ';
  return json::accept("\"" + s + "\"");
}

// A small XML well-formedness check, enough for what the SVG writer emits: elements nest
// and close, attribute values are quoted, '<' never appears in text or values, every '&'
// starts one of the five predefined entities, and no control character but \t \n \r.
std::string xml_problem(const std::string& x) {
  std::vector<std::string> open;
  bool root_seen = false;
  for (size_t i = 0; i < x.size();) {
    const unsigned char c = static_cast<unsigned char>(x[i]);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return "control character at " + std::to_string(i);
    if (c == '&') {
      static const char* const kEntities[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
      bool ok = false;
      for (const char* e : kEntities) ok = ok || x.compare(i, std::char_traits<char>::length(e), e) == 0;
      if (!ok) return "bare & at " + std::to_string(i);
      ++i;
      continue;
    }
    if (c != '<') {
      if (open.empty() && !std::isspace(c)) return "text outside the root at " + std::to_string(i);
      ++i;
      continue;
    }
    const bool closing = i + 1 < x.size() && x[i + 1] == '/';
    size_t j = i + (closing ? 2 : 1);
    std::string name;
    while (j < x.size() && (std::isalnum(static_cast<unsigned char>(x[j])) || x[j] == '-' || x[j] == ':'))
      name += x[j++];
    if (name.empty()) return "tag without a name at " + std::to_string(i);
    // Attributes: name="value" pairs up to '>' or '/>'.
    bool self_closing = false;
    for (;;) {
      while (j < x.size() && std::isspace(static_cast<unsigned char>(x[j]))) ++j;
      if (j >= x.size()) return "unterminated tag " + name;
      if (x[j] == '>') break;
      if (x.compare(j, 2, "/>") == 0) {
        self_closing = true;
        ++j;
        break;
      }
      if (closing) return "attribute in a closing tag " + name;
      while (j < x.size() && x[j] != '=' && !std::isspace(static_cast<unsigned char>(x[j]))) ++j;
      if (j + 1 >= x.size() || x[j] != '=' || (x[j + 1] != '"' && x[j + 1] != '\''))
        return "unquoted attribute in " + name;
      const char q = x[j + 1];
      const size_t end = x.find(q, j + 2);
      if (end == std::string::npos) return "unterminated attribute in " + name;
      const std::string value = x.substr(j + 2, end - j - 2);
      if (value.find('<') != std::string::npos) return "'<' in an attribute of " + name;
      j = end + 1;
    }
    if (closing) {
      if (open.empty() || open.back() != name) return "</" + name + "> closes nothing open";
      open.pop_back();
    } else if (!self_closing) {
      if (open.empty() && root_seen) return "second root element " + name;
      root_seen = true;
      open.push_back(name);
    }
    i = j + 1;
  }
  if (!open.empty()) return "<" + open.back() + "> never closed";
  return root_seen ? "" : "no root element";
}

// Every percentage within 0-100 and every duration non-negative, anywhere in the JSON.
void expect_sane_numbers(const json& j, const std::string& path = "") {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string key = it.key(), at = path + "/" + key;
      const json& v = it.value();
      if (key.find("pct") != std::string::npos) {
        std::vector<double> values;
        if (v.is_number()) values.push_back(v.get<double>());
        if (v.is_object())
          for (const char* s : {"mean", "median", "min", "max"}) values.push_back(v.at(s).get<double>());
        for (double x : values) {
          EXPECT_TRUE(std::isfinite(x)) << at;
          EXPECT_GE(x, 0.0) << at;
          EXPECT_LE(x, 100.0) << at;
        }
      }
      if (v.is_number() && key.size() > 3 && key.compare(key.size() - 3, 3, "_ns") == 0) {
        EXPECT_GE(v.get<double>(), 0) << at;
      }
      expect_sane_numbers(v, at);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) expect_sane_numbers(j[i], path + "/" + std::to_string(i));
  }
}

struct Loaded {
  Trace trace;
  std::unique_ptr<TraceJoin> join;
  Analysis analysis;
  std::string text;
  json doc;
};

std::unique_ptr<Loaded> load(const std::string& name) {
  auto l = std::make_unique<Loaded>();
  l->trace = load_nsys_sqlite(fixture(name));
  l->join = std::make_unique<TraceJoin>(l->trace);
  l->analysis = analyze(*l->join, ReportOptions{});
  l->text = report_text(l->analysis);
  l->doc = to_json(l->analysis);
  return l;
}

// The report's one line about left-out rows, and its JSON twin.
void expect_invalid_line(const Loaded& l, const std::string& sentence) {
  EXPECT_EQ(l.trace.dropped.summary(), sentence);
  EXPECT_NE(l.text.find("\n  invalid     " + sentence + "\n"), std::string::npos) << l.text;
  EXPECT_EQ(l.doc["dropped_rows"]["summary"], sentence);
  EXPECT_EQ(l.doc["dropped_rows"]["total"], l.trace.dropped.total());
  expect_sane_numbers(l.doc);
  // No negative percentage in the text either: no "-<digits>%".
  for (size_t minus = l.text.find('-'); minus != std::string::npos; minus = l.text.find('-', minus + 1)) {
    size_t end = minus + 1;
    while (end < l.text.size() && (std::isdigit(static_cast<unsigned char>(l.text[end])) || l.text[end] == '.')) ++end;
    EXPECT_FALSE(end > minus + 1 && end < l.text.size() && l.text[end] == '%') << l.text.substr(minus, end - minus + 1);
  }
}

size_t dropped(const Trace& t, const std::string& table, DropReason r) {
  auto it = t.dropped.tables.find(table);
  return it == t.dropped.tables.end() ? 0 : it->second.by_reason[static_cast<int>(r)];
}

constexpr const char* K = "CUPTI_ACTIVITY_KIND_KERNEL";
constexpr const char* RT = "CUPTI_ACTIVITY_KIND_RUNTIME";
constexpr const char* NV = "NVTX_EVENTS";

// --- Rows left out, by reason ---------------------------------------------------------------

TEST(HostileTraces, NullTimesAndIdsAreLeftOutAndCounted) {
  const auto l = load("hostile_null.sqlite");
  const Trace& t = l->trace;
  EXPECT_EQ(t.dropped.total(), 5u);
  EXPECT_EQ(t.dropped.count(DropReason::Null), 5u);
  for (const char* table : {K, "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET", RT, NV})
    EXPECT_EQ(dropped(t, table, DropReason::Null), 1u) << table;
  EXPECT_EQ(t.kernels.size(), 26u);
  EXPECT_EQ(t.memcpys.size(), 1u);
  EXPECT_EQ(t.memsets.size(), 2u);
  EXPECT_EQ(t.api_calls.size(), 34u);
  EXPECT_EQ(t.nvtx.size(), 20u);
  // A NULL is not read as time 0: no kernel starts at 0.
  for (const Kernel& k : t.kernels) EXPECT_GT(k.start, 0);
  expect_invalid_line(
      *l,
      "5 of 92 rows left out (CUPTI_ACTIVITY_KIND_KERNEL 1, CUPTI_ACTIVITY_KIND_MEMCPY 1, "
      "CUPTI_ACTIVITY_KIND_MEMSET 1, CUPTI_ACTIVITY_KIND_RUNTIME 1, NVTX_EVENTS 1): 5 NULL time or id.");
  EXPECT_EQ(l->doc["dropped_rows"]["by_reason"]["null"], 5);
  EXPECT_EQ(l->doc["dropped_rows"]["read"], 92);
  EXPECT_EQ(l->doc["dropped_rows"]["by_table"][K]["read"], 27);
}

TEST(HostileTraces, TextWhereAnIntegerBelongsIsLeftOut) {
  const auto l = load("hostile_types.sqlite");
  const Trace& t = l->trace;
  EXPECT_EQ(t.dropped.count(DropReason::NotInteger), 5u);
  EXPECT_EQ(dropped(t, K, DropReason::NotInteger), 2u);   // 'soon' as a start, a blob as a device
  EXPECT_EQ(dropped(t, RT, DropReason::NotInteger), 1u);  // 1.5 as an end
  EXPECT_EQ(dropped(t, NV, DropReason::NotInteger), 2u);  // 'later' as an end, 'range' as a type
  EXPECT_EQ(t.kernels.size(), 25u);
  EXPECT_EQ(t.api_calls.size(), 34u);
  EXPECT_EQ(t.nvtx.size(), 19u);
  expect_invalid_line(*l,
                      "5 of 92 rows left out (CUPTI_ACTIVITY_KIND_KERNEL 2, CUPTI_ACTIVITY_KIND_RUNTIME 1, "
                      "NVTX_EVENTS 2): 5 text where an integer belongs.");
}

TEST(HostileTraces, EndBeforeStartIsLeftOutNotANegativeDuration) {
  const auto l = load("hostile_order.sqlite");
  const Trace& t = l->trace;
  EXPECT_EQ(t.dropped.count(DropReason::EndBeforeStart), 4u);
  EXPECT_EQ(t.syncs.size(), 1u);
  for (const Kernel& k : t.kernels) EXPECT_LE(k.start, k.end);
  for (const ApiCall& c : t.api_calls) EXPECT_LE(c.start, c.end);
  for (const NvtxEvent& r : t.nvtx) EXPECT_LE(r.start, r.end);
  // Not mistaken for a range still open at the end of the capture.
  EXPECT_EQ(t.notes[0], "1 NVTX range was still open when the capture ended and is ignored.");
  expect_invalid_line(*l,
                      "4 of 92 rows left out (CUPTI_ACTIVITY_KIND_KERNEL 1, CUPTI_ACTIVITY_KIND_RUNTIME 1, "
                      "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION 1, NVTX_EVENTS 1): 4 end before start.");
}

TEST(HostileTraces, RowsPastTheDeclaredEndOfTheCaptureAreLeftOut) {
  const auto l = load("hostile_span.sqlite");
  const Trace& t = l->trace;
  EXPECT_EQ(t.dropped.count(DropReason::OutOfSpan), 3u);
  EXPECT_EQ(dropped(t, K, DropReason::OutOfSpan), 2u);
  EXPECT_EQ(dropped(t, RT, DropReason::OutOfSpan), 1u);
  for (const Kernel& k : t.kernels) EXPECT_LE(k.end, 2'150'000);
  expect_invalid_line(*l,
                      "3 of 93 rows left out (CUPTI_ACTIVITY_KIND_KERNEL 2, CUPTI_ACTIVITY_KIND_RUNTIME 1): 3 "
                      "outside the capture's span.");
  // The GPU span of an iteration is not stretched to the kernel five seconds later.
  EXPECT_LT(l->analysis.gpu_ms.max, 1.0);
}

TEST(HostileTraces, ExtremeTimesAndIdsAreLeftOut) {
  const auto l = load("hostile_extreme.sqlite");
  const Trace& t = l->trace;
  EXPECT_EQ(t.dropped.count(DropReason::OutOfRange), 7u);
  // INT64_MIN start, INT64_MAX end, device 2^40, correlation 2^32 (CUPTI's ids are 32-bit)
  EXPECT_EQ(dropped(t, K, DropReason::OutOfRange), 4u);
  EXPECT_EQ(dropped(t, RT, DropReason::OutOfRange), 1u);                            // start -5
  EXPECT_EQ(dropped(t, "CUPTI_ACTIVITY_KIND_MEMSET", DropReason::OutOfRange), 1u);  // correlation -1
  EXPECT_EQ(dropped(t, NV, DropReason::OutOfRange), 1u);                            // start 2^62
  expect_invalid_line(*l,
                      "7 of 92 rows left out (CUPTI_ACTIVITY_KIND_KERNEL 4, CUPTI_ACTIVITY_KIND_MEMSET 1, "
                      "CUPTI_ACTIVITY_KIND_RUNTIME 1, NVTX_EVENTS 1): 7 time or id out of range.");
  // What is left is the synthetic run's own timing: forward passes of 0.2 ms, not hours.
  EXPECT_LT(l->analysis.host_ms.max, 1.0);
  EXPECT_LT(l->analysis.gpu_ms.max, 1.0);
}

TEST(HostileTraces, SumsThatWouldOverflowAreRefusedInOneSentence) {
  EXPECT_EQ(error_of([] { load_nsys_sqlite(fixture("hostile_overflow.sqlite")); }),
            "the trace's 90 records span 4.61e+09 s and add up past what 64-bit nanoseconds hold: it is not a "
            "capture laptime can analyze.");
}

// --- What is left cannot answer a question --------------------------------------------------

TEST(HostileTraces, AMissingKernelTableNamesWhatItWouldHaveAnswered) {
  const auto l = load("hostile_no_kernels.sqlite");
  EXPECT_TRUE(l->trace.kernels.empty());
  EXPECT_EQ(l->trace.dropped.total(), 0u);
  const std::string note =
      "The export has no CUPTI_ACTIVITY_KIND_KERNEL table, so it holds no kernels: GPU utilization and the kernel "
      "mix (questions 2 and 3) cannot be answered.";
  EXPECT_EQ(std::count(l->analysis.notes.begin(), l->analysis.notes.end(), note), 1);
  EXPECT_EQ(std::count(l->doc["notes"].begin(), l->doc["notes"].end(), note), 1);
  expect_sane_numbers(l->doc);
}

TEST(HostileTraces, ATableWhoseEveryRowIsInvalidSaysWhichQuestionsAreLeft) {
  const auto l = load("hostile_bad_kernels.sqlite");
  EXPECT_TRUE(l->trace.kernels.empty());
  const std::string note =
      "Every row of CUPTI_ACTIVITY_KIND_KERNEL (27) was left out as invalid, so GPU utilization and the kernel mix "
      "(questions 2 and 3) cannot be answered.";
  EXPECT_EQ(std::count(l->analysis.notes.begin(), l->analysis.notes.end(), note), 1);
  expect_invalid_line(*l, "27 of 92 rows left out (CUPTI_ACTIVITY_KIND_KERNEL 27): 27 text where an integer belongs.");
}

TEST(HostileTraces, NoValidNvtxRangeIsOneSentenceAboutTheInvalidRows) {
  AnalyzeOptions o;
  o.file = fixture("hostile_bad_nvtx.sqlite");
  EXPECT_EQ(error_of([&] { run_analyze(o); }),
            "every NVTX range in the trace was left out as invalid, so its iterations cannot be found; 21 of 92 rows "
            "left out (NVTX_EVENTS 21): 21 end before start.");
}

TEST(HostileTraces, EveryDamagedTraceStillWritesEveryOutputWellFormed) {
  for (const char* name : {"hostile_null", "hostile_types", "hostile_order", "hostile_span", "hostile_extreme",
                           "hostile_utf8", "hostile_no_kernels", "hostile_bad_kernels"}) {
    AnalyzeOptions o;
    o.file = fixture(std::string(name) + ".sqlite");
    o.json = temp("all.json");
    o.perfetto = temp("all.perfetto.json");
    o.svg = temp("all.svg");
    for (const std::string* p : {&o.json, &o.perfetto, &o.svg}) std::remove(p->c_str());
    testing::internal::CaptureStdout();
    int rc = -1;
    std::string error;
    try {
      rc = run_analyze(o);
    } catch (const TraceError& e) {
      error = e.what();
    }
    testing::internal::GetCapturedStdout();
    // Without kernels, copies and memsets are still GPU work: the SVG has something to draw.
    EXPECT_EQ(rc, 0) << name << ": " << error;
    json doc;
    ASSERT_NO_THROW(doc = json::parse(read_file(o.json))) << name;
    expect_sane_numbers(doc);
    EXPECT_TRUE(json::accept(read_file(o.perfetto))) << name;
    EXPECT_EQ(xml_problem(read_file(o.svg)), "") << name;
  }
}

// --- Names that are not UTF-8 ----------------------------------------------------------------

TEST(HostileTraces, NamesThatAreNotUtf8AreEscapedInTheModel) {
  const Trace t = load_nsys_sqlite(fixture("hostile_utf8.sqlite"));
  std::set<std::string> shorts, names, ranges;
  for (const Kernel& k : t.kernels) {
    shorts.insert(k.short_name);
    names.insert(k.name);
  }
  for (const NvtxEvent& r : t.nvtx) ranges.insert(r.text);
  EXPECT_TRUE(shorts.count("layernorm_\\xFF_kernel"));
  EXPECT_TRUE(shorts.count("gelu\\x1B[31m<&\"'>"));
  std::string mus;
  for (int i = 0; i < 60; ++i) mus += "\xC2\xB5";  // valid UTF-8 passes unchanged
  EXPECT_TRUE(shorts.count("sm90_gemm_" + mus));
  EXPECT_TRUE(names.count("void layer\\xE2\\x82norm<\\xC0\\xAF>(\\xED\\xA0\\x80)"));
  EXPECT_TRUE(ranges.count("h.0.\\xFEattn"));
  EXPECT_TRUE(ranges.count("lm_head\\xEF\\xBF\\xBE"));
  EXPECT_EQ(t.thread_name(4242, 4243), "laptime \\x80main");
  ASSERT_EQ(t.gpus.size(), 1u);
  EXPECT_EQ(t.gpus[0].name, "NVIDIA \\xFFH200");
  EXPECT_EQ(t.notes.back(), "7 names held invalid UTF-8 or control characters, shown as \\xNN escapes.");
  EXPECT_EQ(t.dropped.total(), 0u);
}

TEST(HostileTraces, EveryOutputOfATraceWithBadNamesParses) {
  AnalyzeOptions o;
  o.file = fixture("hostile_utf8.sqlite");
  o.json = temp("utf8.json");
  o.perfetto = temp("utf8.perfetto.json");
  o.svg = temp("utf8.svg");
  for (const std::string* p : {&o.json, &o.perfetto, &o.svg}) std::remove(p->c_str());
  testing::internal::CaptureStdout();
  const int rc = run_analyze(o);
  const std::string text = testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(strict_utf8(text));
  EXPECT_EQ(text.find('\x1b'), std::string::npos);  // no terminal escape reaches the screen
  EXPECT_NE(text.find("layernorm_\\xFF_kernel"), std::string::npos);

  const std::string j = read_file(o.json), p = read_file(o.perfetto), s = read_file(o.svg);
  for (const std::string* file : {&j, &p, &s}) {
    EXPECT_FALSE(file->empty());
    EXPECT_TRUE(strict_utf8(*file));
  }
  json doc, perfetto;
  ASSERT_NO_THROW(doc = json::parse(j));
  ASSERT_NO_THROW(perfetto = json::parse(p));
  bool found = false;
  for (const json& k : doc["kernel_mix"]["kernels"]) found = found || k["name"] == "gelu\\x1B[31m<&\"'>";
  EXPECT_TRUE(found);
  found = false;
  for (const json& e : perfetto["traceEvents"])
    found = found || (e.contains("name") && e["name"] == "layernorm_\\xFF_kernel");
  EXPECT_TRUE(found);
  expect_sane_numbers(doc);
  EXPECT_EQ(xml_problem(s), "");
  EXPECT_NE(s.find("gelu\\x1B[31m&lt;&amp;&quot;&apos;&gt;"), std::string::npos);
}

TEST(HostileTraces, EscapeNameAgreesWithAStrictDecoderOnWhatIsUtf8) {
  const std::pair<std::string, std::string> cases[] = {
      {"layernorm_kernel", "layernorm_kernel"},
      {"2.0 \xC2\xB5s \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x9A\x80",
       "2.0 \xC2\xB5s \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x9A\x80"},
      {"a\xFF"
       "b",
       "a\\xFFb"},
      {"\xE2\x82", "\\xE2\\x82"},                    // truncated at the end
      {"\xC0\xAF", "\\xC0\\xAF"},                    // overlong '/'
      {"\xED\xA0\x80", "\\xED\\xA0\\x80"},           // a UTF-16 surrogate
      {"\xF4\x90\x80\x80", "\\xF4\\x90\\x80\\x80"},  // past U+10FFFF
      {"tab\there\x7F", "tab\\x09here\\x7F"},        // control characters and DEL
      {"\xEF\xBF\xBF", "\\xEF\\xBF\\xBF"},           // U+FFFF: UTF-8, but no XML character
      {std::string("nul\0in", 6), "nul\\x00in"},
  };
  for (const auto& [in, out] : cases) {
    EXPECT_EQ(escape_name(in), out);
    EXPECT_TRUE(strict_utf8(escape_name(in)));
    EXPECT_EQ(is_valid_utf8(in), strict_utf8(in)) << escape_name(in);
  }
  EXPECT_EQ(xml_escape("a<b>&\"c'\x01"), "a&lt;b&gt;&amp;&quot;c&apos;\\x01");
  const std::string mu = "\xC2\xB5\xC2\xB5\xC2\xB5";
  for (size_t n = 0; n <= mu.size(); ++n) EXPECT_TRUE(is_valid_utf8(utf8_prefix(mu, n))) << n;
  EXPECT_EQ(utf8_prefix(mu, 3), "\xC2\xB5");
}

// --- Writes that fail --------------------------------------------------------------------------

// /dev/full stands for a full disk, but it is a device: outputs refuse it before writing a
// byte (core/output_file.h: never replace what is not a regular file), with one sentence.
TEST(HostileTraces, ADeviceAsOutputIsRefusedForEveryOutput) {
  if (!std::ifstream("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  testing::internal::CaptureStdout();
  for (const char* what : {"json", "perfetto", "svg"}) {
    AnalyzeOptions o;
    o.file = fixture("synthetic_trace.sqlite");
    std::string name;
    if (std::string(what) == "json") o.json = "/dev/full", name = "the JSON report";
    if (std::string(what) == "perfetto") o.perfetto = "/dev/full", name = "the Perfetto trace";
    if (std::string(what) == "svg") o.svg = "/dev/full", name = "the SVG timeline";
    EXPECT_EQ(error_of([&] { run_analyze(o); }),
              "refusing to write " + name + " to /dev/full: it is a character device, not a regular file.");
  }
  testing::internal::GetCapturedStdout();
  EXPECT_EQ(error_of([] { write_output("/nonexistent-dir/x.json", "the JSON report", "{}"); }),
            "cannot write the JSON report to /nonexistent-dir/x.json: folder /nonexistent-dir does not exist.");
}

// --- Real and synthetic captures lose nothing ---------------------------------------------------

TEST(HostileTraces, WellFormedCapturesHaveNoInvalidRows) {
  for (const char* name :
       {"synthetic_trace.sqlite", "synthetic_old_schema.sqlite", "nsys/gpt2_bf16.sqlite", "nsys/resnet50_bf16.sqlite",
        "nsys/pitfall_sync.sqlite", "nsys/pitfall_pageable.sqlite", "nsys/pitfall_alloc.sqlite",
        "nsys/pitfall_sync_per_layer.sqlite", "nsys/gpt2_nvtx_none.sqlite"}) {
    const Trace t = load_nsys_sqlite(fixture(name));
    EXPECT_EQ(t.dropped.total(), 0u) << name << ": " << t.dropped.summary();
    EXPECT_EQ(t.dropped.summary(), "") << name;
    for (const std::string& note : t.notes) EXPECT_EQ(note.find("\\x"), std::string::npos) << name << ": " << note;
  }
}

}  // namespace
}  // namespace laptime::trace
