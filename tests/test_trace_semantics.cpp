// Reports that never contradict themselves, on the committed captures (the lesson's PyTorch loop
// and laptime's own nsys captures): one "busy" (over the lap) in the text, the JSON and the
// verdict, computed here again from the iterations; one "steady"; the synchronizations costliest
// first; a diff that says "SAME within ±x%" for a real change under the line; an SVG timeline that
// draws only the iteration it names; a diff SVG that marks the SLOWER and FASTER layers. Then the
// refusals that come before any work (nothing printed, nothing written), the progress line
// (trace/model/progress.h, on a fake clock and on a pseudo-terminal) and the Perfetto window.
#include <fcntl.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/trace_testing.h"
#include "trace/analyses/analyze.h"
#include "trace/analyses/per_process.h"
#include "trace/compare/diff.h"
#include "trace/model/format.h"
#include "trace/model/progress.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/read/open_trace.h"
#include "trace/write/analysis_json.h"
#include "trace/write/analysis_text.h"
#include "trace/write/diff_json.h"
#include "trace/write/diff_svg.h"
#include "trace/write/diff_text.h"
#include "trace/write/perfetto.h"
#include "trace/write/timeline_svg.h"

namespace laptime::trace {
namespace {

using nlohmann::json;
using testing_support::fixture;
using testing_support::printed;
using testing_support::read_file;
using testing_support::report_text;
using testing_support::temp_path;

std::string temp(const std::string& name) { return temp_path("semantics", name); }

// The committed captures a learner or a CI run would analyze: every single-process trace of the
// lesson and of laptime's nsys captures, and every PyTorch profiler trace (tests/fixtures/kineto).
std::vector<std::string> captures() {
  std::vector<std::string> out;
  for (const char* folder : {"lesson", "nsys"})
    for (const auto& e : std::filesystem::directory_iterator(fixture(folder)))
      if (e.path().extension() == ".sqlite" && e.path().filename() != "gpt2_nvtx_none.sqlite" &&
          e.path().filename() != "two_gpt2.sqlite")
        out.push_back(std::string(folder) + "/" + e.path().filename().string());
  for (const auto& [name, range] : testing_support::kineto_fixtures()) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

struct Loaded {
  std::unique_ptr<Trace> trace;
  std::unique_ptr<TraceJoin> join;
  ProcessReports reports;
};
Loaded load(const std::string& name) {
  Loaded l;
  l.trace = std::make_unique<Trace>(load_trace(fixture(name)));
  l.join = std::make_unique<TraceJoin>(*l.trace);
  ReportOptions o;  // a Kineto fixture's loop as its reference names it
  for (const auto& [kineto, range] : testing_support::kineto_fixtures())
    if (kineto == name) o.range = range;
  l.reports = analyze_per_process(*l.join, o);
  return l;
}

// Every "busy NN.N%" in a text, as numbers.
std::vector<std::string> busy_figures(const std::string& text) {
  std::vector<std::string> out;
  const std::regex busy("busy\\s+(\\d+\\.\\d)%( of the lap)?");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), busy); it != std::sregex_iterator(); ++it) {
    EXPECT_TRUE((*it)[2].matched) << "\"busy\" without \"of the lap\": " << it->str();
    out.push_back((*it)[1]);
  }
  return out;
}

class Capture : public testing::TestWithParam<std::string> {};

// One busy: section 2's, the verdict's and the JSON's are one number, the GPU's busy time over its
// lap, as computed here from the JSON's iterations (the steady ones' busy time over their GPU
// spans and the idle between consecutive ones).
TEST_P(Capture, OneBusyOverTheLap) {
  const Loaded l = load(GetParam());
  for (const ProcessReport& r : l.reports.each) {
    const Analysis& a = r.a;
    const json j = to_json(a);
    if (!a.figures.measured) continue;
    double busy = 0, lap = 0;
    const json* prev = nullptr;
    for (const json& it : j["iterations"]) {
      if (!it["steady"].get<bool>() || !it.contains("gpu_ns")) {
        prev = nullptr;
        continue;
      }
      busy += it["busy_ns"].get<double>();
      lap += it["gpu_ns"].get<double>();
      if (prev) {
        const double gap = it["gpu_start_ns"].get<double>() -
                           ((*prev)["gpu_start_ns"].get<double>() + (*prev)["gpu_ns"].get<double>());
        lap += std::max(0.0, gap);
      }
      prev = &it;
    }
    ASSERT_GT(lap, 0);
    const double want = 100 * busy / lap;
    EXPECT_NEAR(j["verdict"]["busy_pct"].get<double>(), want, 1e-9 * want);
    EXPECT_NEAR(j["verdict"]["busy_pct"].get<double>() + j["verdict"]["idle_pct"].get<double>(), 100, 1e-9);
    const json& shares = j["verdict"]["idle_shares"];
    if (j["verdict"]["idle_ns"].get<double>() > 0) {
      EXPECT_NEAR(shares["launch_pct"].get<double>() + shares["after_sync_stall_pct"].get<double>() +
                      shares["input_pct"].get<double>() + shares["queued_pct"].get<double>(),
                  100, 1e-6);
    }
    const std::string text = report_text(a);
    const std::vector<std::string> figures = busy_figures(text);
    ASSERT_GE(figures.size(), 2u) << text;  // section 2 and the verdict
    for (const std::string& f : figures) EXPECT_EQ(f, detail::format("%.1f", want)) << text;
    // The other share has its own name and its own figure: the median iteration's fill of its span.
    EXPECT_NE(text.find(detail::format("fill        %.1f%% median", a.span_fill_pct.median)), std::string::npos);
    EXPECT_FALSE(j["utilization"].contains("busy_pct"));
  }
}

// One steady: the measured iterations. Where the GPU time settles is the "settling" (the initial
// transient), in words that never say "steady".
TEST_P(Capture, OneSteady) {
  const Loaded l = load(GetParam());
  for (const ProcessReport& r : l.reports.each) {
    const json j = settling_json(r.settling, r.a);
    const std::string text = report_text(r.a) + r.settling.text;
    EXPECT_EQ(text.find("Steady state"), std::string::npos);
    EXPECT_EQ(r.settling.text.find("steady"), std::string::npos) << r.settling.text;
    EXPECT_EQ(r.settling.warning.find("steady"), std::string::npos) << r.settling.warning;
    size_t steady = 0;
    for (const Iteration& it : r.a.iterations) steady += it.steady() ? 1 : 0;
    EXPECT_EQ(steady, r.a.steady_count);
    EXPECT_NE(text.find(detail::format("1. Steady-state time per iteration (ms, %zu iterations)", steady)),
              std::string::npos);
    EXPECT_NE(text.find(detail::format("%zu steady\n", steady)), std::string::npos);
  }
}

// The synchronizations costliest first, in the analysis, the text and the JSON.
TEST_P(Capture, SynchronizationsCostliestFirst) {
  const Loaded l = load(GetParam());
  for (const ProcessReport& r : l.reports.each) {
    const json calls = to_json(r.a)["synchronization"]["calls"];
    for (size_t i = 1; i < calls.size(); ++i)
      EXPECT_GE(calls[i - 1]["duration_ns"].get<Ns>(), calls[i]["duration_ns"].get<Ns>()) << i;
    if (r.a.syncs.empty()) continue;
    Ns longest = 0;
    for (const SyncCall& s : r.a.syncs) longest = std::max(longest, s.duration);
    EXPECT_EQ(r.a.syncs.front().duration, longest);
    const std::string text = report_text(r.a);
    const size_t table = text.find("calls, longest host wait first");
    ASSERT_NE(table, std::string::npos);
    // The table's first row: its host wait is the longest.
    const size_t row = text.find('\n', text.find("host wait (us)", table)) + 1;
    EXPECT_NE(text.substr(row, text.find('\n', row) - row).find(detail::format("%.1f", longest / 1e3)),
              std::string::npos)
        << text.substr(table, 400);
  }
}

INSTANTIATE_TEST_SUITE_P(Committed, Capture, testing::ValuesIn(captures()), [](const auto& info) {
  std::string name = info.param.substr(0, info.param.find('.', info.param.rfind('/')));
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
});

// The lesson's planted stall: 41 ms in iteration 1 was row 8 of the calls in time order.
TEST(Sync, TheLessonsStallLeadsTheTable) {
  const Loaded l = load("lesson/gpt2_max.sqlite");
  const Analysis& a = l.reports.each.front().a;
  ASSERT_FALSE(a.syncs.empty());
  EXPECT_EQ(a.syncs.front().effect, SyncEffect::Stall);
  EXPECT_GT(a.syncs.front().duration, 40'000'000);
  EXPECT_GT(a.sync_summary.front().blocked, a.sync_summary.back().blocked);
}

// --- diff ------------------------------------------------------------------------------------

Diff diff_of(const std::string& before, const std::string& after) {
  DiffOptions o;
  auto side = [&](const std::string& f) {
    DiffSide s = load_run(fixture(f), o);
    s.file = f;
    return s;
  };
  return diff_runs(side(before), side(after), o);
}

// A clear +2.6% change (interval +2.5% .. +2.7%) under the 3% line is SAME within ±3%, never a
// bare SAME, in the table, the verdict and the JSON; and so is every row like it, in any pair.
TEST(DiffSame, ARealChangeUnderTheLineSaysWithin) {
  const Diff d = diff_of("diff_base.sqlite", "diff_attn_slower.sqlite");
  const DiffRow& w = d.rows.front();
  ASSERT_EQ(w.label, Label::Same);
  ASSERT_TRUE(w.ci.excludes_zero());
  ASSERT_TRUE(w.same_within.has_value());
  EXPECT_TRUE(w.same_within->relative);
  EXPECT_EQ(w.same_within->bound, 3);
  const std::string text = printed([&](std::FILE* f) { print_diff(d, f); });
  EXPECT_NE(text.find(detail::format("the iteration is SAME within ±3%% (%+.1f%%", w.change_pct)), std::string::npos)
      << text;
  const json j = diff_to_json(d);
  EXPECT_EQ(j["rows"][0]["same_within"]["pct"].get<double>(), 3);
  EXPECT_TRUE(j["rows"][0]["interval_excludes_zero"].get<bool>());
  for (const auto& [before, after] :
       std::vector<std::pair<std::string, std::string>>{{"diff_base.sqlite", "diff_attn_slower.sqlite"},
                                                        {"diff_base.sqlite", "diff_noise.sqlite"},
                                                        {"lesson/gpt2_clean.sqlite", "lesson/gpt2_max.sqlite"},
                                                        {"nsys/pitfall_pageable.sqlite", "nsys/pitfall_sync.sqlite"}}) {
    const Diff e = diff_of(before, after);
    const std::string t = printed([&](std::FILE* f) { print_diff(e, f); });
    for (const DiffRow& r : e.rows) {
      if (r.label != Label::Same) continue;
      EXPECT_EQ(r.same_within.has_value(), r.ci.excludes_zero()) << before << " " << r.name;
      // Its line in the table says so.
      const size_t at = t.find("\n  " + r.name + " ");
      ASSERT_NE(at, std::string::npos) << r.name;
      const std::string line = t.substr(at + 1, t.find('\n', at + 1) - at - 1);
      EXPECT_EQ(line.find("SAME within") != std::string::npos, r.ci.excludes_zero()) << line;
    }
  }
}

// The diff picture marks every SLOWER or FASTER layer drawn on its after side, and nothing else.
TEST(DiffSvg, MarksSlowerAndFasterLayers) {
  for (const auto& [before, after, mark] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"diff_base.sqlite", "diff_attn_slower.sqlite", "slower"},
           {"diff_attn_slower.sqlite", "diff_base.sqlite", "faster"}}) {
    SCOPED_TRACE(before + " -> " + after);
    const Diff d = diff_of(before, after);
    size_t want = 0;
    for (const DiffBox& b : d.after.median_layers)
      for (const DiffRow& r : d.rows)
        if (!r.whole && r.name == fold_block_indices(b.name) && b.depth <= 3 &&
            (r.label == Label::Slower || r.label == Label::Faster))
          ++want;
    ASSERT_GT(want, 0u);
    write_diff_svg(d, temp("diff.svg"));
    const std::string svg = read_file(temp("diff.svg"));
    size_t marks = 0;
    for (size_t at = svg.find("class=\"" + mark + "\""); at != std::string::npos;
         at = svg.find("class=\"" + mark + "\"", at + 1))
      ++marks;
    EXPECT_EQ(marks, want);
    EXPECT_EQ(svg.find(mark == "slower" ? "class=\"faster\"" : "class=\"slower\""), std::string::npos);
    EXPECT_NE(svg.find(mark == "slower" ? "SLOWER layer" : "FASTER layer"), std::string::npos);
  }
}

// --- the timeline SVG ------------------------------------------------------------------------

// The lesson's clean loop: the GPU runs the median iteration while the host sits in the 242.6 ms
// cudaDeviceSynchronize after the loop. The picture names one iteration: it draws its ranges, its
// calls and its GPU work, and nothing else.
TEST(TimelineSvg, DrawsOnlyTheIterationItNames) {
  for (const std::string name : {"lesson/gpt2_clean.sqlite", "lesson/gpt2_max.sqlite", "nsys/pitfall_sync.sqlite"}) {
    SCOPED_TRACE(name);
    const Loaded l = load(name);
    const Analysis& a = l.reports.each.front().a;
    write_svg(*l.join, a, temp("timeline.svg"));
    const std::string svg = read_file(temp("timeline.svg"));
    const Iteration& it = a.iterations[a.svg_iteration];
    const Trace& t = *l.trace;
    EXPECT_EQ(svg.find("fill-opacity=\"0.35\""), std::string::npos) << "other iterations' work, faded";
    // The host's part: its thread's calls inside the iteration's range, none other (the sync after
    // the loop that the host waits in while the GPU runs this iteration).
    const NvtxEvent& ir = t.nvtx[it.nvtx];
    bool sync_inside = false;
    for (const ApiCall& c : t.api_calls)
      sync_inside |= c.pid == ir.pid && c.tid == ir.tid && c.start >= it.start && c.start <= it.end &&
                     c.name == "cudaDeviceSynchronize";
    if (!sync_inside) {
      EXPECT_EQ(svg.find("<title>cudaDeviceSynchronize ("), std::string::npos);
    }
    // Its GPU work, every operation launched inside it and no other.
    size_t ops = 0;
    for (const GpuOp& op : l.join->ops())
      for (int r = op.range; r >= 0; r = t.nvtx[r].parent)
        if (r == it.nvtx) {
          ++ops;
          break;
        }
    size_t drawn = 0;
    const std::regex gpu_title("<title>[^<]* \\[[A-Za-z/ ]+\\] [0-9.]+ (us|ms)");
    for (auto m = std::sregex_iterator(svg.begin(), svg.end(), gpu_title); m != std::sregex_iterator(); ++m) ++drawn;
    EXPECT_EQ(drawn, ops);
    EXPECT_NE(svg.find(detail::format("`%s` iteration %llu", a.range_name.c_str(), (unsigned long long)it.index)),
              std::string::npos);
  }
}

// --- refusals before any work ----------------------------------------------------------------

// Runs the binary in `dir`; returns (exit status, standard output, standard error).
struct Ran {
  int rc = -1;
  std::string out, err;
};
Ran run(const std::string& dir, const std::string& args, const std::string& env = "") {
  const std::string cmd = "cd " + dir + " && " + env + " timeout 120 " + LAPTIME_BINARY + " " + args +
                          " >stdout.txt 2>stderr.txt </dev/null";
  const int status = std::system(cmd.c_str());
  Ran r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(dir + "/stdout.txt");
  r.err = read_file(dir + "/stderr.txt");
  return r;
}

// A fresh empty folder, its files listed apart from the run's own stdout/stderr captures.
std::string fresh_folder(const std::string& name) {
  const std::string dir = temp(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/cache");
  return dir;
}
std::vector<std::string> written(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string n = e.path().filename();
    if (n != "stdout.txt" && n != "stderr.txt" && n != "cache") out.push_back(n);
  }
  return out;
}

TEST(RefuseBeforeWorking, NothingPrintedNothingWrittenWhenTheRunWillFail) {
  const std::string f = fixture("");
  struct Case {
    std::string args, sentence;
  };
  const std::vector<Case> cases{
      // No ceilings: before, the whole report, the JSON and the SVG, then exit 1.
      {"analyze " + f + "nsys/gpt2_bf16.sqlite --json a.json --svg t.svg --perfetto p.json --roofline-svg r.svg",
       "the roofline plot needs the device's ceilings"},
      // No layer costs beside the lesson's capture.
      {"analyze " + f + "lesson/gpt2_clean.sqlite --json a.json --roofline-svg r.svg", "needs the layer costs"},
      // Layer costs that are no sidecar: refused before the trace is read.
      {"analyze " + f + "lesson/gpt2_clean.sqlite --json a.json --layers " + f + "peak_example.json",
       "peak_example.json"},
      // A trace without iteration ranges: the Perfetto export is not written either.
      {"analyze " + f + "synthetic_no_nvtx.sqlite --json a.json --perfetto p.json", "no NVTX ranges"},
      // --svg of several processes.
      {"analyze " + f + "nsys/two_gpt2.sqlite --json a.json --perfetto p.json --svg t.svg",
       "--svg draws one process's iteration"},
      // Bench reports hold laps only: no picture to draw.
      {"diff " + f + "diff_bench_base.json " + f + "diff_bench_slower.json --json d.json --svg d.svg",
       "cannot draw the diff"},
      {"analyze " + f + "synthetic_trace.sqlite --json a.json --window steady", "--window chooses what --perfetto"},
      {"analyze " + f + "synthetic_trace.sqlite --json a.json --perfetto p.json --window 3-x", "--window takes"},
      {"analyze " + f + "synthetic_trace.sqlite --json a.json --perfetto p.json --window 7-9",
       "no `forward` iteration numbered so"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const std::string dir = fresh_folder("refuse");
    const Ran r = run(dir, c.args, "LAPTIME_CACHE_DIR=" + dir + "/cache");
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.out, "") << "printed before refusing";
    EXPECT_NE(r.err.find(c.sentence), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one sentence: " << r.err;
    EXPECT_TRUE(written(dir).empty()) << "wrote " << written(dir).front();
  }
}

// --- the progress line -----------------------------------------------------------------------

struct FakeClock {
  double now = 100;
  Progress::Clock clock() {
    return [this] { return now; };
  }
};

// A stream in memory, as a terminal would have received it.
class Screen {
 public:
  Screen() : out_(open_memstream(&buf_, &size_)) {}
  ~Screen() {
    std::fclose(out_);
    std::free(buf_);
  }
  std::FILE* out() const { return out_; }
  std::string text() {
    std::fflush(out_);
    return std::string(buf_, size_);
  }
  size_t size() {
    std::fflush(out_);
    return size_;
  }

 private:
  char* buf_ = nullptr;
  size_t size_ = 0;
  std::FILE* out_;
};

TEST(ProgressLine, ShownPastTwoSecondsThrottledAndErased) {
  Screen screen;
  FakeClock c;
  {
    Progress p(screen.out(), true, c.clock());
    Progress::phase("reading the trace");
    for (int i = 0; i < 3 * 65536; ++i) Progress::row();
    p.tick();
    EXPECT_EQ(screen.size(), 0u) << "shown before 2 s";
    c.now += 2.5;
    p.tick();
    EXPECT_EQ(screen.text(), "\rreading the trace: 196,608 rows, 2 s\x1b[K");
    const size_t once = screen.size();
    c.now += 0.05;  // within 0.1 s of the last draw
    p.tick();
    EXPECT_EQ(screen.size(), once);
    c.now += 0.1;
    Progress::count(12, 40, "reports");
    p.tick();
    EXPECT_EQ(screen.text().substr(once), "\rreading the trace: 12 of 40 reports, 3 s\x1b[K");
    // Erased before the command prints, and not drawn again until the next phase.
    const size_t before_clear = screen.size();
    Progress::clear();
    EXPECT_EQ(screen.text().substr(before_clear), "\r\x1b[K");
    c.now += 1;
    p.tick();
    EXPECT_EQ(screen.size(), before_clear + 4);
    Progress::phase("writing the JSON report");
    c.now += 1;
    p.tick();
    EXPECT_EQ(screen.text().substr(before_clear + 4), "\rwriting the JSON report, 5 s\x1b[K");
  }
  const std::string all = screen.text();
  EXPECT_EQ(all.substr(all.size() - 4), "\r\x1b[K") << "the line left behind";
}

TEST(ProgressLine, NothingWhenNotATerminalOrQuiet) {
  for (bool terminal : {false, true}) {
    Screen screen;
    FakeClock c;
    {
      std::optional<Progress> p;
      if (terminal)
        p.emplace(Progress::Mode::Quiet, screen.out());  // a real terminal's mode, told to be quiet
      else
        p.emplace(screen.out(), false, c.clock());
      Progress::phase("reading the trace");
      c.now += 10;
      if (!terminal) p->tick();
    }
    EXPECT_EQ(screen.size(), 0u);
  }
  // No Progress held: the hooks do nothing at all.
  Progress::phase("x");
  Progress::count(1, 2, "y");
  Progress::row();
  Progress::clear();
}

// The job view's tally owns the line: its reports' readers, on other threads, do not show.
TEST(ProgressLine, ATallyOwnsTheLineAndItsNamesAreData) {
  Screen screen;
  FakeClock c;
  Progress p(screen.out(), true, c.clock());
  {
    Progress::Tally reports("reading reports", 3, "reports");
    std::thread worker([&] {
      Progress::phase("reading r\x1b[31m.sqlite");
      reports.step();
    });
    worker.join();
    reports.step();
    c.now += 3;
    p.tick();
    EXPECT_EQ(screen.text(), "\rreading reports: 2 of 3 reports, 3 s\x1b[K");
  }
  const size_t before = screen.size();
  Progress::phase("reading r\x1b[31m.sqlite\n");  // a file name is data: no escape sequence reaches the terminal
  c.now += 1;
  p.tick();
  EXPECT_EQ(screen.text().substr(before), "\rreading r\\x1B[31m.sqlite\\x0A, 4 s\x1b[K");
}

// On a pseudo-terminal: --quiet shows nothing, and a run short of two seconds leaves nothing of
// the line behind (its standard error as a pipe's would be).
TEST(ProgressLine, OnAPseudoTerminal) {
  const std::string trace = fixture("lesson/gpt2_clean.sqlite");
  for (const char* quiet : {"--quiet", ""}) {
    SCOPED_TRACE(quiet);
    int master = -1;
    const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);  // the report elsewhere: standard error alone on the terminal
      execl(LAPTIME_BINARY, LAPTIME_BINARY, "analyze", trace.c_str(), quiet[0] ? quiet : nullptr,
            static_cast<char*>(nullptr));
      _exit(127);
    }
    std::string seen;
    std::array<char, 4096> b{};
    for (ssize_t n; (n = read(master, b.data(), b.size())) > 0;) seen.append(b.data(), static_cast<size_t>(n));
    int status = 0;
    waitpid(pid, &status, 0);
    close(master);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << seen;
    if (quiet[0]) {
      EXPECT_EQ(seen.find('\r'), std::string::npos) << seen;
    } else {  // a slow machine may show the line: every draw ends erased, nothing else is left
      const std::string rest = std::regex_replace(seen, std::regex("\r[^\r\n]*\x1b\\[K"), "");
      EXPECT_EQ(rest, "") << seen;
    }
  }
}

// --- the Perfetto window ---------------------------------------------------------------------

TEST(PerfettoWindow, IterationsByNumberAndTheSteadyOnes) {
  const Loaded l = load("lesson/gpt2_max.sqlite");
  const Analysis& a = l.reports.each.front().a;
  const std::vector<const Iterations*> loops{&a};
  EXPECT_TRUE(perfetto_window(*l.join, loops, "auto").all) << "a small trace is exported whole";
  EXPECT_TRUE(perfetto_window(*l.join, loops, "all").all);
  const PerfettoWindow w = perfetto_window(*l.join, loops, "3-4");
  ASSERT_FALSE(w.all);
  const Iteration &i3 = a.iterations[3], &i4 = a.iterations[4];
  EXPECT_EQ(w.lo, std::min(i3.start, i3.gpu_start));
  EXPECT_EQ(w.hi, std::max(i4.end, i4.gpu_end));
  write_perfetto(*l.join, temp("w.json"), w);
  const json doc = json::parse(read_file(temp("w.json")));
  size_t slices = 0;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++slices;
    const double ts = e["ts"].get<double>() * 1000, end = ts + e["dur"].get<double>() * 1000;
    EXPECT_GE(end, double(w.lo) - 1);
    EXPECT_LE(ts, double(w.hi) + 1);
  }
  EXPECT_GT(slices, 0u);
  const PerfettoWindow s = perfetto_window(*l.join, loops, "steady");
  Ns lo = INT64_MAX, hi = INT64_MIN;
  for (const Iteration& it : a.iterations)
    if (it.steady()) {
      lo = std::min({lo, it.start, it.gpu_start});
      hi = std::max({hi, it.end, it.gpu_end});
    }
  EXPECT_EQ(s.lo, lo);
  EXPECT_EQ(s.hi, hi);
}

// The whole export, streamed, is the document the JSON tree gave: every event once, names escaped.
TEST(PerfettoWindow, TheWholeTraceHasEveryEvent) {
  const Loaded l = load("nsys/pitfall_sync.sqlite");
  write_perfetto(*l.join, temp("all.json"));
  const json doc = json::parse(read_file(temp("all.json")));
  const Trace& t = *l.trace;
  size_t slices = 0, flows = 0;
  for (const json& e : doc["traceEvents"]) {
    slices += e["ph"] == "X";
    flows += e["ph"] == "s";
  }
  size_t launched = 0;
  for (const GpuOp& op : l.join->ops()) launched += op.api >= 0;
  EXPECT_EQ(slices, t.nvtx.size() + t.api_calls.size() + l.join->ops().size());
  EXPECT_EQ(flows, launched);
}

}  // namespace
}  // namespace laptime::trace
