// The report page (trace/write/html_page.h) without a browser: the three escaping functions it
// rests on, each against hostile names and fresh random bytes; the page's bytes (the JSON
// document embedded exactly, nothing outside its two script elements, the same bytes twice); the
// timeline it draws against timeline_reference.py's answers from the SQLite; the bound on its
// events; and `--html` of every command beside `--json` (one document in both). The browser suite
// (tests/browser/test_pages.py) opens the pages.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/run_binary.h"
#include "tests/support/trace_testing.h"
#include "trace/analyses/analyze.h"
#include "trace/analyses/timeline.h"
#include "trace/analyses/top.h"
#include "trace/model/text.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/write/analysis_json.h"
#include "trace/write/html_page.h"
#include "trace/write/timeline_json.h"

namespace laptime::trace {
namespace {

using testing_support::fixture;
using testing_support::read_file;
using testing_support::source_dir;
using testing_support::temp_path;

const std::vector<std::string> kHostile = {
    "<img src=x onerror=alert(1)>",
    "</script><script>alert(1)</script>",
    "</SCRIPT ><!-- <script>",
    "h.0.attn\xE2\x80\xA8line\xE2\x80\xA9para",
    "\"quoted\" 'single' & ampersand \\ backslash",
    "tab\tnewline\ncarriage\r nul-free \x01\x1B[31m escape",
    "bad \xFF\xFE bytes \xC0\xAF overlong",
    "javascript:alert(1)",
    "${alert(1)} `template`",
    "\xEF\xBF\xBE noncharacter",
};

// Fresh bytes each run (the seed is printed on failure): mostly the characters that matter.
std::string random_name(std::mt19937_64& rng) {
  static const std::string kPieces[] = {"<",
                                        ">",
                                        "&",
                                        "\"",
                                        "'",
                                        "\\",
                                        "/",
                                        "script",
                                        "\xE2\x80\xA8",
                                        "\xE2\x80\xA9",
                                        "\n",
                                        "\x01",
                                        "\xFF",
                                        "a",
                                        "\xC3\xA9",
                                        "\xF0\x9F\x98\x80",
                                        "u2028",
                                        "x3C"};
  std::string s;
  const int n = static_cast<int>(rng() % 24);
  for (int i = 0; i < n; ++i) {
    if (rng() % 4 == 0)
      s += static_cast<char>(rng() % 256);
    else
      s += kPieces[rng() % std::size(kPieces)];
  }
  return s;
}

uint64_t fresh_seed() { return std::random_device()() * 0x9E3779B97F4A7C15ull ^ std::random_device()(); }

// HTML's five references back into characters.
std::string html_unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    bool done = false;
    for (const auto& [ref, c] : std::initializer_list<std::pair<const char*, char>>{
             {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}}) {
      const std::string r = ref;
      if (s.compare(i, r.size(), r) == 0) {
        out += c;
        i += r.size();
        done = true;
        break;
      }
    }
    if (!done) out += s[i++];
  }
  return out;
}

// A JavaScript double-quoted string literal back into its characters (UTF-8), as a JavaScript
// engine reads the escapes js_string writes; throws on anything else.
std::string js_unquote(const std::string& lit) {
  if (lit.size() < 2 || lit.front() != '"' || lit.back() != '"') throw std::runtime_error("not quoted: " + lit);
  std::string out;
  auto utf8 = [&](unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  };
  for (size_t i = 1; i + 1 < lit.size(); ++i) {
    const char c = lit[i];
    if (c == '"') throw std::runtime_error("a bare quote ends the literal early");
    if (c != '\\') {
      out += c;
      continue;
    }
    const char e = lit[++i];
    if (e == 'x') {
      utf8(static_cast<unsigned>(std::stoul(lit.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else if (e == 'u') {
      utf8(static_cast<unsigned>(std::stoul(lit.substr(i + 1, 4), nullptr, 16)));
      i += 4;
    } else if (e == '\\' || e == '"' || e == '\'') {
      out += e;
    } else {
      throw std::runtime_error(std::string("unexpected escape \\") + e);
    }
  }
  return out;
}

bool has_line_terminator(const std::string& s) {
  return s.find("\xE2\x80\xA8") != std::string::npos || s.find("\xE2\x80\xA9") != std::string::npos;
}

size_t count(const std::string& hay, const std::string& needle) {
  std::string h = hay, n = needle;
  std::transform(h.begin(), h.end(), h.begin(), ::tolower);
  std::transform(n.begin(), n.end(), n.begin(), ::tolower);
  size_t k = 0;
  for (size_t at = h.find(n); at != std::string::npos; at = h.find(n, at + 1)) ++k;
  return k;
}

TEST(HtmlEscape, HostileNamesReadAsText) {
  EXPECT_EQ(html_escape("<img src=x onerror=alert(1)>"), "&lt;img src=x onerror=alert(1)&gt;");
  EXPECT_EQ(html_escape("a&b\"c'd"), "a&amp;b&quot;c&#39;d");
  EXPECT_EQ(html_escape("x\x01y"), "x\\x01y");  // escape_name first, as every writer
  for (const std::string& s : kHostile) {
    const std::string e = html_escape(s);
    EXPECT_EQ(e.find_first_of("<>\"'"), std::string::npos) << e;
    EXPECT_EQ(html_unescape(e), escape_name(s)) << s;
    EXPECT_TRUE(is_valid_utf8(e));
  }
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 2000; ++i) {
    const std::string s = random_name(rng);
    const std::string e = html_escape(s);
    ASSERT_EQ(e.find_first_of("<>\"'"), std::string::npos) << "seed " << seed;
    ASSERT_EQ(html_unescape(e), escape_name(s)) << "seed " << seed;
  }
}

TEST(HtmlEscape, JsStringsCannotLeaveTheirLiteralOrTheScriptElement) {
  EXPECT_EQ(js_string("</script>"), "\"\\x3C/script\\x3E\"");
  EXPECT_EQ(js_string("a\"b'c\\d"), "\"a\\\"b\\'c\\\\d\"");
  EXPECT_EQ(js_string("l\xE2\x80\xA8p\xE2\x80\xA9"), "\"l\\u2028p\\u2029\"");
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  std::vector<std::string> names = kHostile;
  for (int i = 0; i < 2000; ++i) names.push_back(random_name(rng));
  for (const std::string& s : names) {
    const std::string lit = js_string(s);
    const std::string inner = lit.substr(1, lit.size() - 2);
    ASSERT_EQ(inner.find_first_of("<>&\n\r"), std::string::npos) << "seed " << seed << ": " << lit;
    ASSERT_FALSE(has_line_terminator(lit)) << "seed " << seed;
    ASSERT_EQ(js_unquote(lit), escape_name(s)) << "seed " << seed << ": " << lit;
  }
}

TEST(HtmlEscape, ScriptJsonParsesToTheSameDocument) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 300; ++trial) {
    nlohmann::json j = nlohmann::json::object();
    for (int k = 0; k < 6; ++k) {
      const std::string name = trial == 0 && k < static_cast<int>(kHostile.size()) ? kHostile[k] : random_name(rng);
      j[random_name(rng) + std::to_string(k)] = {{"name", name}, {"n", static_cast<int64_t>(rng() % 1000000)}};
    }
    escape_json_strings(j);
    const std::string text = j.dump(2) + "\n";
    const std::string safe = script_json(text);
    ASSERT_EQ(safe.find_first_of("<>&"), std::string::npos) << "seed " << seed;
    ASSERT_FALSE(has_line_terminator(safe)) << "seed " << seed;
    ASSERT_EQ(nlohmann::json::parse(safe), nlohmann::json::parse(text)) << "seed " << seed;
  }
  // Only inside strings: a document without those characters comes back byte for byte.
  EXPECT_EQ(script_json("{\n  \"a\": [1, 2.5, null]\n}\n"), "{\n  \"a\": [1, 2.5, null]\n}\n");
}

// The page around a document: the document's bytes, made inert, inside the one data element;
// the title as text; nothing from either outside them.
TEST(HtmlPage, EmbedsTheDocumentExactlyAndNothingElseFromTheData) {
  nlohmann::json j{{"schema", "laptime.analyze/1"}, {"names", kHostile}};
  for (const std::string& s : kHostile) j[s] = s;
  escape_json_strings(j);
  const std::string document = j.dump(2) + "\n";
  const std::string title = "laptime analyze " + kHostile[0] + kHostile[1];
  const std::string page = html_page(document, title);
  EXPECT_EQ(page, html_page(document, title)) << "the same input gives the same bytes";
  EXPECT_EQ(count(page, "<script"), 2u);
  EXPECT_EQ(count(page, "</script"), 2u);
  EXPECT_EQ(count(page, "<img"), 0u);
  EXPECT_EQ(count(page, "<!--"), 0u);
  const std::string open = "<script type=\"application/json\" id=\"laptime-data\">\n";
  const size_t at = page.find(open);
  ASSERT_NE(at, std::string::npos);
  const size_t end = page.find("</script>", at);
  const std::string block = page.substr(at + open.size(), end - at - open.size());
  EXPECT_EQ(block, script_json(document));
  EXPECT_EQ(nlohmann::json::parse(block), j);
  EXPECT_NE(page.find("<title>" + html_escape(title) + "</title>"), std::string::npos);
  EXPECT_NE(page.find("laptimePage(document.getElementById(\"laptime-data\"), " + js_string(title) + ");"),
            std::string::npos);
  std::string urls = page;  // the SVG namespace is a name, not a fetch
  for (size_t at; (at = urls.find("http://www.w3.org/2000/svg")) != std::string::npos;) urls.erase(at, 26);
  EXPECT_EQ(urls.find("http:"), std::string::npos) << "nothing fetched";
  EXPECT_EQ(urls.find("https:"), std::string::npos) << "nothing fetched";
}

// --- the timeline, against timeline_reference.py ------------------------------------------------

nlohmann::json expected_timelines() { return nlohmann::json::parse(read_file(fixture("html/timeline.expected.json"))); }

class TimelineReference : public ::testing::TestWithParam<std::string> {};

TEST_P(TimelineReference, EventsAreTheReferencesFromTheSqlite) {
  const nlohmann::json want = expected_timelines().at(GetParam());
  const Trace t = load_nsys_sqlite(fixture(GetParam()));
  const TraceJoin j(t);
  const Analysis a = analyze(j, ReportOptions{});
  const Timeline& tl = a.timeline;
  ASSERT_GE(tl.iteration, 0);
  EXPECT_EQ(tl.iteration, want["iteration"].get<int>());
  EXPECT_EQ(tl.start, want["start_ns"].get<Ns>());
  EXPECT_EQ(tl.end, want["end_ns"].get<Ns>());
  EXPECT_EQ(tl.host_range, want["host_range_in_window"].get<bool>());
  EXPECT_FALSE(tl.truncated());
  using GpuRow = std::tuple<Ns, Ns, std::string, uint32_t, bool, std::string>;
  std::vector<GpuRow> gpu, api_want, got_api;
  std::vector<std::tuple<Ns, Ns, std::string>> api, nvtx, nvtx_want;
  for (const auto& w : want["gpu"])
    gpu.emplace_back(w[0].get<Ns>(), w[1].get<Ns>(), w[2].is_null() ? "" : w[2].get<std::string>(),
                     w[3].get<uint32_t>(), w[4].get<bool>(), w[5].get<std::string>());
  for (const auto& w : want["api"]) api.emplace_back(w[0].get<Ns>(), w[1].get<Ns>(), w[2].get<std::string>());
  for (const auto& w : want["nvtx"]) nvtx_want.emplace_back(w[0].get<Ns>(), w[1].get<Ns>(), w[2].get<std::string>());
  std::vector<GpuRow> got_gpu;
  std::vector<std::tuple<Ns, Ns, std::string>> got_calls, got_nvtx, got_projected, projected;
  for (const auto& w : want["projected"])
    projected.emplace_back(w[0].get<Ns>(), w[1].get<Ns>(), w[2].get<std::string>());
  const TimelineLane& first = tl.lanes.front();
  for (const TimelineEvent& e : tl.events) {
    const TimelineLane& l = tl.lanes[static_cast<size_t>(e.lane)];
    if (l.kind == TimelineLaneKind::GpuRanges) {
      got_projected.emplace_back(e.start, e.end, tl.names[static_cast<size_t>(e.name)]);
    } else if (l.kind == TimelineLaneKind::Gpu) {
      const bool kernel = e.kind == TimelineEventKind::Kernel;
      got_gpu.emplace_back(e.start, e.end, kernel ? tl.names[static_cast<size_t>(e.name)] : "", l.stream,
                           e.in_iteration, timeline_event_kind_name(e.kind));
    } else if (l.pid == first.pid && l.tid == first.tid) {
      (l.kind == TimelineLaneKind::Api ? got_calls : got_nvtx)
          .emplace_back(e.start, e.end, tl.names[static_cast<size_t>(e.name)]);
    }
  }
  std::sort(got_gpu.begin(), got_gpu.end());
  std::sort(gpu.begin(), gpu.end());
  std::sort(got_calls.begin(), got_calls.end());
  std::sort(got_nvtx.begin(), got_nvtx.end());
  EXPECT_EQ(got_gpu, gpu);
  EXPECT_EQ(got_calls, api);
  EXPECT_EQ(got_nvtx, nvtx_want);
  std::sort(got_projected.begin(), got_projected.end());
  EXPECT_EQ(got_projected, projected);
  std::vector<std::pair<Ns, Ns>> gaps, gaps_want;
  for (const TimelineGap& g : tl.gaps) gaps.emplace_back(g.start, g.end);
  for (const auto& g : want["gaps"]) gaps_want.emplace_back(g[0].get<Ns>(), g[1].get<Ns>());
  EXPECT_EQ(gaps, gaps_want);
  // Every blocking mark is a call the analysis measured, and every measured call in the window is marked.
  std::set<std::pair<Ns, std::string>> measured;
  for (const auto* list : {&a.syncs, &a.syncs_elsewhere})
    for (const SyncCall& s : *list)
      if (s.start + s.duration >= tl.start && s.start <= tl.end) measured.insert({s.start, s.api.str()});
  std::set<std::pair<Ns, std::string>> marked;
  for (const TimelineSync& s : tl.syncs) marked.insert({s.start, s.api});
  EXPECT_EQ(marked, measured);
  // Where each sat, as the reference finds the calls by name: every one it lists, in the same place
  // (the synchronize after the loop is not the loop's), and its event linked to that record.
  std::set<std::tuple<Ns, std::string, std::string>> where, where_want;
  std::set<std::string> named;
  for (const auto& w : want["syncs"]) {
    where_want.emplace(w[0].get<Ns>(), w[1].get<std::string>(), w[2].get<std::string>());
    named.insert(w[1].get<std::string>());
  }
  for (const TimelineSync& s : tl.syncs)
    if (s.lane >= 0 && tl.lanes[static_cast<size_t>(s.lane)].pid == first.pid &&
        tl.lanes[static_cast<size_t>(s.lane)].tid == first.tid && named.count(s.api)) {
      where.emplace(s.start, s.api, sync_where_name(s.where));
      EXPECT_EQ(s.steady(), s.where == SyncWhere::Steady);
    }
  EXPECT_EQ(where, where_want);
  for (const TimelineEvent& e : tl.events) {
    if (!e.blocking) continue;
    ASSERT_GE(e.sync, 0) << tl.names[static_cast<size_t>(e.name)];
    const TimelineSync& s = tl.syncs[static_cast<size_t>(e.sync)];
    EXPECT_EQ(s.start, e.start);
    EXPECT_EQ(s.api, tl.names[static_cast<size_t>(e.name)]);
    EXPECT_EQ(s.lane, e.lane);
  }
}

// Where a blocking call sat against the loop (sync.h's SyncWhere): one of each place, in a
// trace built here with the times drawn fresh: before the first iteration, in the warm-up one,
// in a steady one, between two iterations, after the last; only the steady one is the loop's.
TEST(SyncWhere, EachPlaceAgainstTheLoop) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  auto draw = [&rng](Ns lo, Ns hi) { return std::uniform_int_distribution<Ns>(lo, hi)(rng); };
  Trace t;
  const Name launch = t.intern("cudaLaunchKernel"), sync = t.intern("cudaStreamSynchronize"),
             forward = t.intern("forward"), gemm = t.intern("gemm");
  uint32_t corr = 1;
  auto call = [&](Name name, Ns start, Ns end) {
    ApiCall c;
    c.name = name;
    c.pid = c.tid = 3;
    c.start = start;
    c.end = end;
    c.correlation = corr++;
    t.api_calls.push_back(c);
    return c.correlation;
  };
  const Ns lap = 10'000'000, gap = 2'000'000;
  Ns at = 5'000'000;
  std::vector<Ns> starts;  // of each iteration
  const Ns before = draw(100'000, at - 200'000);
  call(sync, before, before + 50'000);
  for (uint64_t i = 0; i < 6; ++i) {
    t.nvtx.push_back(testing_support::numbered_range(forward, i, 3, at, at + lap));
    starts.push_back(at);
    for (int k = 0; k < 4; ++k) {
      const Ns s = at + 100'000 + k * 2'000'000;
      Kernel kern;
      kern.name = kern.short_name = gemm;
      kern.pid = 3;
      kern.stream = 7;
      kern.correlation = call(launch, s, s + 5'000);
      kern.start = s + 10'000;
      kern.end = kern.start + 1'900'000 + static_cast<Ns>(rng() % 1000);
      t.kernels.push_back(kern);
    }
    at += lap + gap;
  }
  const Ns in_warmup = starts[0] + draw(8'200'000, 9'500'000), in_steady = starts[3] + draw(8'200'000, 9'500'000);
  const Ns between = starts[4] + lap + draw(100'000, gap - 200'000), after = at + draw(100'000, 5'000'000);
  for (Ns s : {in_warmup, in_steady, between, after}) call(sync, s, s + 20'000);
  std::sort(t.api_calls.begin(), t.api_calls.end(),
            [](const ApiCall& x, const ApiCall& y) { return x.start < y.start; });
  t.finalize();
  const TraceJoin j(t);
  const Analysis a = analyze(j, ReportOptions{});
  ASSERT_TRUE(a.iterations.front().warmup) << a.warmup_rule;
  std::map<Ns, SyncWhere> got;
  for (const auto* list : {&a.syncs, &a.syncs_elsewhere})
    for (const SyncCall& s : *list)
      if (s.api.str() == "cudaStreamSynchronize") got[s.start] = s.where;
  const std::map<Ns, SyncWhere> want{{before, SyncWhere::BeforeLoop},
                                     {in_warmup, SyncWhere::Warmup},
                                     {in_steady, SyncWhere::Steady},
                                     {between, SyncWhere::Between},
                                     {after, SyncWhere::AfterLoop}};
  EXPECT_EQ(got, want) << "seed " << seed;
  ASSERT_EQ(a.syncs.size(), 1u);
  EXPECT_EQ(a.syncs.front().start, in_steady);
  const nlohmann::json js = to_json(a)["synchronization"];
  std::set<std::string> places;
  for (const auto& c : js["outside_steady"]) places.insert(c["where"].get<std::string>());
  EXPECT_EQ(places, (std::set<std::string>{"before the loop", "warm-up", "between iterations", "after the loop"}));
  EXPECT_EQ(js["calls"][0]["where"], "steady");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TimelineReference,
                         ::testing::Values("synthetic_trace.sqlite", "lesson/gpt2_clean.sqlite", "verdict_sync.sqlite"),
                         [](const auto& info) {
                           std::string n = info.param.substr(info.param.rfind('/') + 1);
                           n = n.substr(0, n.find('.'));
                           return n;
                         });

// Lists that grow with the trace's length (trace/analyses/top.h): the JSON holds the
// kMaxListRows costliest synchronization calls (inside the steady iterations and outside) and
// ranges, counts the rest with their host wait beside them, and --top N cuts them as it cuts the
// text's tables (--top 0: every row). Fresh random lengths and waits each run.
TEST(JsonBound, ListsThatGrowWithTheTraceHoldTheCostliest) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  Trace t;
  const Name api = t.intern("cudaStreamSynchronize"), range = t.intern("forward 7");
  Analysis a;
  a.steady_count = 10;
  auto calls = [&](size_t n) {
    std::vector<SyncCall> out(n);
    for (SyncCall& c : out) {
      c.api = api;
      c.range = range;
      c.duration = static_cast<Ns>(rng() % 50'000'000);
      c.start = static_cast<Ns>(rng() % 1'000'000'000);
    }
    std::sort(out.begin(), out.end(), [](const SyncCall& x, const SyncCall& y) { return x.duration > y.duration; });
    return out;
  };
  const size_t n = kMaxListRows + 1 + rng() % 3000, m = kMaxListRows + 1 + rng() % 500,
               r = kMaxListRows + 1 + rng() % 800;
  a.syncs = calls(n);
  a.syncs_elsewhere = calls(m);
  for (size_t i = 0; i < r; ++i) {
    RangeRow row;
    row.range = "Forward Pass Iter " + std::to_string(i);
    row.time = static_cast<Ns>(rng() % 1'000'000'000);
    a.ranges.push_back(row);
  }
  std::sort(a.ranges.begin(), a.ranges.end(), [](const RangeRow& x, const RangeRow& y) { return x.time > y.time; });
  // The reference: what the first `held` of a list leave out, summed here.
  auto left = [](const std::vector<SyncCall>& all, size_t held) {
    Ns wait = 0;
    for (size_t i = held; i < all.size(); ++i) wait += all[i].duration;
    return nlohmann::json{{"count", all.size() - held}, {"host_wait_ns", wait}};
  };
  for (const std::optional<int> top : {std::optional<int>(), std::optional<int>(7), std::optional<int>(0)}) {
    SCOPED_TRACE(top ? std::to_string(*top) : "no --top");
    a.top = top;
    const nlohmann::json j = to_json(a);
    const size_t held = !top ? kMaxListRows : *top ? static_cast<size_t>(*top) : 0;
    for (const auto& [list, all] : {std::pair<const char*, const std::vector<SyncCall>*>{"calls", &a.syncs},
                                    {"outside_steady", &a.syncs_elsewhere}}) {
      const nlohmann::json& got = j["synchronization"][list];
      const std::string omitted = std::string(list) + "_omitted";
      if (held == 0) {
        EXPECT_EQ(got.size(), all->size()) << list;
        EXPECT_FALSE(j["synchronization"].contains(omitted)) << list;
        continue;
      }
      ASSERT_EQ(got.size(), held) << list;
      for (size_t i = 0; i < held; ++i) EXPECT_EQ(got[i]["duration_ns"].get<Ns>(), (*all)[i].duration) << list << i;
      EXPECT_EQ(j["synchronization"][omitted], left(*all, held)) << list;
    }
    const nlohmann::json& mix = j["kernel_mix"];
    EXPECT_EQ(mix["ranges"].size(), held ? held : r);
    if (held) {
      EXPECT_EQ(mix["ranges_omitted"].get<size_t>(), r - held);
      EXPECT_EQ(mix["ranges"][0]["range"], a.ranges.front().range);
    } else {
      EXPECT_FALSE(mix.contains("ranges_omitted"));
    }
  }
  // A list within the bound is whole, with nothing said beside it.
  a.top.reset();
  a.syncs.resize(kMaxListRows);
  const nlohmann::json j = to_json(a);
  EXPECT_EQ(j["synchronization"]["calls"].size(), kMaxListRows);
  EXPECT_FALSE(j["synchronization"].contains("calls_omitted")) << "seed " << seed;
}

// One iteration of more GPU work than the bound: the iteration's events before its neighbours',
// the longest first; what was cut counted per lane, nothing lost from the sums.
TEST(Timeline, BoundedKeepsTheLongestAndCountsTheRest) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  Trace t;
  const Name launch = t.intern("cudaLaunchKernel");
  const int n = 6000;  // 12,001 events in the window: a range, a call and a kernel each
  auto range = [&](Ns start, Ns end) {
    NvtxEvent r;
    r.text = t.intern("forward");
    r.pid = r.tid = 1;
    r.start = start;
    r.end = end;
    t.nvtx.push_back(r);
  };
  Ns gpu = 1'000'000;
  uint32_t corr = 1;
  std::vector<Ns> durations;
  for (int it = 0; it < 3; ++it) {
    const Ns base = it * 100'000'000;
    range(base, base + 50'000'000);
    // The middle iteration has the most work: its GPU span is the median of the two steady ones.
    for (int k = 0; k < (it == 1 ? n : n / 10); ++k) {
      ApiCall c;
      c.name = launch;
      c.pid = c.tid = 1;
      c.start = base + 1000 + k * 5;
      c.end = c.start + 5;
      c.correlation = corr;
      t.api_calls.push_back(c);
      Kernel kr;
      kr.pid = 1;
      kr.stream = 7;
      kr.correlation = corr++;
      const Ns d = 100 + static_cast<Ns>(rng() % 5000);
      kr.start = std::max(gpu, base + 2000);
      kr.end = kr.start + d;
      gpu = kr.end + 10;
      kr.name = kr.short_name = t.intern("k" + std::to_string(k % 7));
      t.kernels.push_back(kr);
      if (it == 1) durations.push_back(d);
    }
  }
  t.finalize();
  const TraceJoin j(t);
  ReportOptions o;
  o.skip_warmup = 1;
  const Analysis a = analyze(j, o);
  ASSERT_EQ(a.timeline.iteration, 1) << "seed " << seed;
  ASSERT_TRUE(a.timeline.truncated()) << "seed " << seed;
  ASSERT_EQ(a.timeline.events.size(), kTimelineEvents);
  // What the bound is for: the timeline's share of the report stays a few MB.
  nlohmann::json tl = timeline_to_json(a.timeline);
  EXPECT_LT(tl.dump(2).size(), 3'000'000u);
  size_t omitted = 0;
  for (const TimelineOmitted& x : a.timeline.omitted) omitted += x.events;
  EXPECT_EQ(a.timeline.events.size() + omitted, a.timeline.events_in_window);
  // With a bound of 1000, every kept kernel is at least as long as every one cut.
  const Timeline small = timeline_of(j, a, std::vector<std::vector<int>>(), a, a, 1, 1000);
  EXPECT_EQ(small.iteration, -1) << "no GPU work given for the iteration: nothing to draw";
  std::vector<std::vector<int>> ops_of(a.iterations.size());
  for (size_t k = 0; k < j.ops().size(); ++k)
    ops_of[static_cast<size_t>(j.ops()[k].start / 100'000'000)].push_back(static_cast<int>(k));
  const Timeline bounded = timeline_of(j, a, ops_of, a, a, 1, 1000);
  ASSERT_EQ(bounded.events.size(), 1000u);
  Ns shortest_kept = INT64_MAX;
  size_t kept_kernels = 0;
  for (const TimelineEvent& e : bounded.events) {
    EXPECT_TRUE(e.in_iteration) << "a neighbour's event kept before the iteration's";
    if (e.kind == TimelineEventKind::Kernel) {
      shortest_kept = std::min(shortest_kept, e.end - e.start);
      ++kept_kernels;
    }
  }
  std::sort(durations.rbegin(), durations.rend());
  ASSERT_GT(kept_kernels, 0u);
  EXPECT_GE(shortest_kept, durations[std::min(kept_kernels, durations.size()) - 1]) << "seed " << seed;
  // The events are in lane order, then by start, as the page draws them.
  EXPECT_TRUE(std::is_sorted(bounded.events.begin(), bounded.events.end(), [](const auto& x, const auto& y) {
    return std::tie(x.lane, x.start) < std::tie(y.lane, y.start);
  }));
}

// --- the commands: --html beside --json, one document ---------------------------------------------

std::string data_block(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"laptime-data\">\n";
  const size_t at = page.find(open);
  if (at == std::string::npos) return "";
  return page.substr(at + open.size(), page.find("</script>", at) - at - open.size());
}

void expect_same_document(const std::string& args, const std::string& name) {
  const std::string json = temp_path("html", name + ".json"), html = temp_path("html", name + ".html");
  std::remove(json.c_str());
  std::remove(html.c_str());
  const auto r = laptime::testing_support::run_shell(std::string(LAPTIME_BINARY) + " " + args + " --json " + json +
                                                     " --html " + html);
  ASSERT_TRUE(r.status == 0 || r.status == 3) << r.out;
  const std::string document = read_file(json), page = read_file(html);
  ASSERT_FALSE(document.empty());
  EXPECT_EQ(data_block(page), script_json(document)) << args;
  // --html alone embeds the same bytes as with --json.
  std::remove(html.c_str());
  const auto alone = laptime::testing_support::run_shell(std::string(LAPTIME_BINARY) + " " + args + " --html " + html);
  ASSERT_TRUE(alone.status == 0 || alone.status == 3) << alone.out;
  EXPECT_EQ(read_file(html), page) << "the same input, the same page";
}

TEST(HtmlCommand, EveryCommandEmbedsItsJsonDocument) {
  const std::string f = source_dir() + "/tests/fixtures/";
  expect_same_document("analyze " + f + "synthetic_trace.sqlite", "analyze");
  expect_same_document("analyze " + f + "process_two_ranks.sqlite", "processes");
  expect_same_document("analyze " + f + "job/rank_0.sqlite " + f + "job/rank_1.sqlite", "job");
  expect_same_document("diff " + f + "diff_base.sqlite " + f + "diff_attn_slower.sqlite", "diff");
  expect_same_document("kernels " + f + "ncu/laptime_gpt2.csv", "kernels");
  expect_same_document("kernels " + f + "ncu/laptime_gpt2_attn_cudnn.csv " + f + "ncu/laptime_gpt2_attn_flash.csv",
                       "kernels_diff");
}

TEST(HtmlCommand, TheTimelineIsInTheJsonReport) {
  const std::string json = temp_path("html", "timeline.json");
  const auto r = laptime::testing_support::run_shell(std::string(LAPTIME_BINARY) + " analyze " +
                                                     fixture("synthetic_trace.sqlite") + " --json " + json);
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(read_file(json));
  const Trace t = load_nsys_sqlite(fixture("synthetic_trace.sqlite"));
  const TraceJoin join(t);
  nlohmann::json want = timeline_to_json(analyze(join, ReportOptions{}).timeline);
  escape_json_strings(want);
  EXPECT_EQ(j.at("timeline"), want);
  EXPECT_EQ(j["timeline"]["iteration"], j["iterations"].size() > 1 ? 1 : 0);
}

// An output the page cannot be written to is refused before the trace is read, as every output.
TEST(HtmlCommand, TheHtmlOutputIsCheckedBeforeTheWork) {
  const auto r = laptime::testing_support::run_shell(std::string(LAPTIME_BINARY) + " analyze " +
                                                     fixture("synthetic_trace.sqlite") + " --html " +
                                                     fixture("synthetic_trace.sqlite") + " 2>&1");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("HTML report"), std::string::npos) << r.out;
  const auto folder =
      laptime::testing_support::run_shell(std::string(LAPTIME_BINARY) + " analyze " +
                                          fixture("synthetic_trace.sqlite") + " --html /nonexistent/r.html 2>&1");
  EXPECT_NE(folder.status, 0);
  EXPECT_EQ(folder.out.find("Verdict"), std::string::npos) << "refused before the report: " << folder.out;
}

}  // namespace
}  // namespace laptime::trace
