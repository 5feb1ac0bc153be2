// The job view (trace/compare/job.h): many reports at once. Each row's lap against the single-file
// command's own JSON (`laptime analyze FILE --json`, cli/), the straggler against the labels that
// make_diff_fixtures.py and make_process_traces.py computed from the durations they generated,
// the pool's answer against one worker's, and the inputs (folders, globs, an export beside its
// report) as the job expands them.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/analyze_command.h"
#include "tests/support/trace_testing.h"
#include "trace/compare/job.h"
#include "trace/model/format.h"
#include "trace/model/text.h"
#include "trace/write/job_json.h"
#include "trace/write/job_text.h"

namespace laptime::trace {
namespace {

using nlohmann::json;
using testing_support::error_of;
using testing_support::fixture;
using testing_support::printed;
using testing_support::read_file;
using testing_support::temp_path;

std::string temp(const std::string& name) { return temp_path("job", name); }

// A fresh folder under the test's temporary folder.
std::string folder(const std::string& name) {
  const std::string f = temp(name);
  std::filesystem::remove_all(f);
  std::filesystem::create_directories(f);
  return f;
}

// `laptime analyze FILE --json`: what the single-file command writes.
json single_file_json(const std::string& file) {
  AnalyzeOptions o;
  o.file = file;
  o.json = temp("single.json");
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_analyze(o), 0);
  testing::internal::GetCapturedStdout();
  return json::parse(read_file(o.json));
}

TEST(Job, NaturalOrderPutsNumbersByValue) {
  std::vector<std::string> names{"run_10.sqlite", "run_2.sqlite", "run_1.sqlite",
                                 "run_02.sqlite", "a.sqlite",     "run_1b.sqlite"};
  std::sort(names.begin(), names.end(), natural_less);
  EXPECT_EQ(names, (std::vector<std::string>{"a.sqlite", "run_1.sqlite", "run_1b.sqlite", "run_02.sqlite",
                                             "run_2.sqlite", "run_10.sqlite"}));
}

TEST(Job, InputsFoldersGlobsAndExportsBesideTheirReport) {
  const std::string f = folder("inputs");
  for (const char* name : {"rank_10.sqlite", "rank_2.sqlite", "rank_3.nsys-rep", "rank_3.sqlite", "notes.txt"})
    std::ofstream(f + "/" + name) << "x";
  std::filesystem::create_directories(f + "/sub.sqlite");  // a folder named like a trace: not a report
  std::vector<std::string> notes;
  EXPECT_EQ(expand_report_inputs({f}, notes),
            (std::vector<std::string>{f + "/rank_2.sqlite", f + "/rank_3.nsys-rep", f + "/rank_10.sqlite"}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], f + "/rank_3.sqlite is " + f + "/rank_3.nsys-rep's export: read once, through the report.");
  notes.clear();
  EXPECT_EQ(expand_report_inputs({f + "/rank_*.sqlite", f + "/rank_2.sqlite"}, notes),
            (std::vector<std::string>{f + "/rank_2.sqlite", f + "/rank_3.sqlite", f + "/rank_10.sqlite"}));
  EXPECT_EQ(notes, (std::vector<std::string>{f + "/rank_2.sqlite was named 2 times: read once."}));
  EXPECT_EQ(error_of([&] { expand_report_inputs({f + "/nothing_*.sqlite"}, notes); }),
            "no file matches " + f + "/nothing_*.sqlite.");
  const std::string empty = folder("empty");
  EXPECT_EQ(error_of([&] { expand_report_inputs({empty}, notes); }),
            "the folder " + empty + " holds no trace (.sqlite, .nsys-rep, .qdrep, .pt.trace.json or .json.gz file).");
  // A path that exists is never a glob, and a missing one is left to the reader's sentence.
  EXPECT_EQ(expand_report_inputs({"/nonexistent/run.sqlite"}, notes),
            (std::vector<std::string>{"/nonexistent/run.sqlite"}));
}

// One report under every name it can have (before: a row each, 5 rows for 4 ranks): another
// spelling, a symbolic link, a hard link, an export named beside its report however spelled.
TEST(Job, OneReportUnderManyNamesIsReadOnce) {
  const std::string f = folder("names");
  namespace fs = std::filesystem;
  fs::copy_file(fixture("job/rank_0.sqlite"), f + "/r.sqlite");
  fs::create_symlink(f + "/r.sqlite", f + "/latest.sqlite");
  fs::create_hard_link(f + "/r.sqlite", f + "/h.sqlite");
  std::ofstream(f + "/R.nsys-rep") << "x";
  fs::copy_file(fixture("job/rank_1.sqlite"), f + "/R.sqlite");
  fs::copy_file(fixture("job/rank_2.sqlite"), f + "/other.sqlite");
  std::vector<std::string> notes;
  const std::vector<std::string> files =
      expand_report_inputs({f + "/./r.sqlite", f + "/r.sqlite", f + "/latest.sqlite", f + "/h.sqlite",
                            f + "/R.nsys-rep", f + "/./R.sqlite", f + "/other.sqlite"},
                           notes);
  EXPECT_EQ(files, (std::vector<std::string>{f + "/./r.sqlite", f + "/R.nsys-rep", f + "/other.sqlite"}));
  EXPECT_EQ(notes, (std::vector<std::string>{
                       f + "/r.sqlite, " + f + "/latest.sqlite and " + f + "/h.sqlite are " + f +
                           "/./r.sqlite (the same file, under another name or through a link): read once.",
                       f + "/./R.sqlite is " + f + "/R.nsys-rep's export: read once, through the report."}));
  // The folder itself: the link and the hard link are the same report as r.sqlite.
  notes.clear();
  EXPECT_EQ(expand_report_inputs({f}, notes).size(), 3u);
  EXPECT_EQ(notes.size(), 2u);
}

// The median the gate reads: a report counted three times moved it (before: the fastest rank named
// under three names made it the median, and --fail-if-spread tripped for a job within it).
TEST(Job, AReportUnderThreeNamesLeavesTheMedianWhereItIs) {
  const json expected = json::parse(read_file(fixture("job/job.expected.json")));
  const std::string slow = expected["slowest"], med = expected["median"], fast = expected["fastest"];
  auto lap = [&](const std::string& rank) { return expected["ranks"][rank]["lap_ms"].get<double>(); };
  const double spread = 100 * (lap(slow) / lap(med) - 1), counted_thrice = 100 * (lap(slow) / lap(fast) - 1);
  ASSERT_LT(spread, counted_thrice);
  const std::string f = folder("gate");
  std::filesystem::create_symlink(fixture("job/" + fast), f + "/fast_link.sqlite");
  std::vector<std::string> notes;
  const std::vector<std::string> files =
      expand_report_inputs({fixture("job"), f + "/fast_link.sqlite", fixture("job/./" + fast)}, notes);
  ASSERT_EQ(files.size(), 4u);
  JobOptions o;
  o.fail_if_spread_pct = (spread + counted_thrice) / 2;
  const Job job = analyze_job(files, o);
  EXPECT_NEAR(job.spread->slowest_over_median_pct, spread, 1e-9);
  EXPECT_FALSE(job.gate_failed);
}

// A job of .nsys-rep reports, each read through its export beside it (before: the straggler step
// opened R.nsys-rep itself and told the user to run an export that was there).
TEST(Job, AJobOfNsysReportsReadsTheirExportsForTheStragglerToo) {
  const std::string f = folder("reports");
  namespace fs = std::filesystem;
  for (int r = 0; r < 4; ++r) {
    const std::string stem = f + "/rank_" + std::to_string(r);
    std::ofstream(stem + ".nsys-rep") << "x";
    fs::last_write_time(stem + ".nsys-rep", fs::file_time_type::clock::now() - std::chrono::hours(1));
    fs::copy_file(fixture("job/rank_" + std::to_string(r) + ".sqlite"), stem + ".sqlite");
  }
  std::vector<std::string> notes;
  const std::vector<std::string> files = expand_report_inputs({f}, notes);
  ASSERT_EQ(files.size(), 4u);
  const Job job = analyze_job(files, {});
  const json expected = json::parse(read_file(fixture("job/job.expected.json")));
  ASSERT_TRUE(job.straggler);
  EXPECT_EQ(job.rows[job.straggler->slowest].file,
            f + "/" + expected["slowest"].get<std::string>().substr(0, 6) + ".nsys-rep");
  EXPECT_EQ(job.straggler->diff.rows[static_cast<size_t>(job.straggler->layer)].name, expected["layer"]);
  EXPECT_NE(job.straggler->command.find(".nsys-rep"), std::string::npos) << job.straggler->command;
  EXPECT_EQ(job.straggler->diff.after.file, job.rows[job.straggler->slowest].file);
}

// A pool that cannot start the threads it was asked for works with those it has (before: the
// process aborted, exit 134). In a child whose address space has room for a few thread stacks.
TEST(Job, APoolOfThreadsThatCannotStartIsSmallerNeverAFailure) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    const rlim_t room = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (48u << 20);
    const rlimit limit{room, room};
    if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(2);
    std::vector<int> done(400, 0);
    unsigned started = 0;
    const auto errors = run_pool(
        done.size(), 400, [&](size_t i) { done[i] = 1; }, &started);
    const bool all = std::count(done.begin(), done.end(), 1) == 400;
    _exit(errors.empty() && all && started >= 1 && started < 400 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Rows read elsewhere give the job the pool gives, byte for byte (laptime.analyze_many on Dask).
TEST(Job, RowsReadElsewhereGiveTheSameJob) {
  const std::vector<std::string> files{fixture("job/rank_0.sqlite"), fixture("job/rank_1.sqlite"),
                                       fixture("job/rank_2.sqlite"), fixture("job/rank_3.sqlite"),
                                       fixture("process_two_ranks.sqlite")};
  JobOptions o;
  o.fail_if_spread_pct = 5;
  const Job local = analyze_job(files, o);
  json docs = json::array();
  for (const std::string& file : files) docs.push_back(job_to_json(analyze_job({file}, o)));
  const std::string path = temp("rows.json");
  std::ofstream(path) << docs.dump();
  const Job merged = job_from_rows(files, job_rows_from_json(path, files), o);
  EXPECT_EQ(job_to_json(merged).dump(), job_to_json(local).dump());
  // Documents for other files, or too few, are refused in one sentence.
  std::ofstream(path) << json::array({docs[1], docs[0], docs[2], docs[3], docs[4]}).dump();
  EXPECT_NE(error_of([&] { job_rows_from_json(path, files); }).find("document 0 holds the rows of"), std::string::npos);
  std::ofstream(path) << json::array({docs[0]}).dump();
  EXPECT_NE(error_of([&] { job_rows_from_json(path, files); }).find("holds 1 documents for the job's 5 reports"),
            std::string::npos);
}

// Every row's lap, busy share and verdict are the single-file command's, exactly.
TEST(Job, EachRowIsItsSingleFileAnalysis) {
  const std::vector<std::string> files{fixture("synthetic_trace.sqlite"), fixture("nsys/gpt2_bf16.sqlite"),
                                       fixture("lesson/resnet50_clean.sqlite"), fixture("process_two_ranks.sqlite"),
                                       fixture("graph/laptime_resnet50_graph.sqlite")};
  const Job job = analyze_job(files, {});
  size_t row = 0;
  for (const std::string& f : files) {
    const json single = single_file_json(f);
    const json each = single.contains("processes") ? single["processes"] : json::array({single});
    for (const json& p : each) {
      ASSERT_LT(row, job.rows.size());
      const JobRow& r = job.rows[row++];
      EXPECT_EQ(r.file, f);
      EXPECT_EQ(r.lap_ms, p["time_ms"]["lap"].get<double>()) << f;
      EXPECT_EQ(r.span_fill_pct, p["utilization"]["span_fill_pct"]["median"].get<double>()) << f;
      EXPECT_EQ(r.verdict, p["verdict"]["text"].get<std::string>()) << f;
      EXPECT_EQ(r.pid.has_value(), p.contains("pid")) << f;
      EXPECT_EQ(r.iterations.size(), p["iterations"].size()) << f;
      EXPECT_EQ(r.program, p["program"].get<std::string>()) << f;
    }
  }
  EXPECT_EQ(row, job.rows.size());
}

// The job make_job_traces.py writes: rank 2's attention kernels run 1.5x longer. The slowest,
// fastest and median ranks, each lap and the layer are what the generator computed back from the
// traces' tables.
TEST(Job, TheStragglerIsTheRankAndLayerTheGeneratorSlowed) {
  const json expected = json::parse(read_file(fixture("job/job.expected.json")));
  std::vector<std::string> notes;
  const Job job = analyze_job(expand_report_inputs({fixture("job")}, notes), {});
  ASSERT_EQ(job.rows.size(), 4u);
  auto name = [&](size_t row) { return std::filesystem::path(job.rows[row].file).filename().string(); };
  for (size_t i = 0; i < job.rows.size(); ++i) {
    EXPECT_NEAR(job.rows[i].lap_ms, expected["ranks"][name(i)]["lap_ms"].get<double>(), 1e-12) << name(i);
    EXPECT_EQ(job.rows[i].program, "PyTorch");
  }
  ASSERT_TRUE(job.spread && job.straggler);
  EXPECT_EQ(name(job.spread->slowest), expected["slowest"]);
  EXPECT_EQ(name(job.spread->fastest), expected["fastest"]);
  EXPECT_EQ(name(job.spread->median), expected["median"]);
  const Straggler& st = *job.straggler;
  ASSERT_GE(st.layer, 0);
  const DiffRow& layer = st.diff.rows[static_cast<size_t>(st.layer)];
  EXPECT_EQ(layer.name, expected["layer"]);
  const std::string slow = expected["slowest"], med = expected["median"];
  EXPECT_DOUBLE_EQ(layer.change_ns, expected["ranks"][slow]["layer_median_ns"][layer.name].get<double>() -
                                        expected["ranks"][med]["layer_median_ns"][layer.name].get<double>());
  EXPECT_EQ(label_name(layer.label), std::string("SLOWER"));
  for (const DiffRow& r : st.diff.rows) {  // the other layer ran alike in every rank
    if (r.name != "h.*.mlp") continue;
    EXPECT_EQ(r.change_ns, expected["ranks"][slow]["layer_median_ns"][r.name].get<double>() -
                               expected["ranks"][med]["layer_median_ns"][r.name].get<double>());
    EXPECT_NE(label_name(r.label), std::string("SLOWER"));
  }
  EXPECT_NE(st.sentence.find("the layer that makes the difference is h.*.attn"), std::string::npos) << st.sentence;
  EXPECT_EQ(st.command, "laptime diff " + fixture("job/" + med) + " " + fixture("job/" + slow));
  const std::string text = printed([&](std::FILE* out) { print_job(job, out); });
  EXPECT_NE(text.find("<- the difference"), std::string::npos) << text;
  EXPECT_NE(text.find("slowest"), std::string::npos) << text;
}

// A nested layer that carries most of its parent's growth is the one named: diff_attn_slower's
// attention inside the block (make_diff_fixtures.py labels both h.* and h.*.attn SLOWER).
TEST(Job, TheLayerNamedIsTheNestedOneThatCarriesTheChange) {
  const json labels =
      json::parse(read_file(fixture("diff_fixtures.expected.json")))["pairs"]["base_vs_attn_slower"]["labels"];
  ASSERT_EQ(labels["h.*"], "SLOWER");
  ASSERT_EQ(labels["h.*.attn"], "SLOWER");
  DiffOptions o;
  const Diff d =
      diff_runs(load_run(fixture("diff_base.sqlite"), o), load_run(fixture("diff_attn_slower.sqlite"), o), o);
  const int at = straggler_layer(d);
  ASSERT_GE(at, 0);
  EXPECT_EQ(d.rows[static_cast<size_t>(at)].name, "h.*.attn");
}

// Two ranks in one capture are two rows; rank 1's kernels run 1.3x rank 0's (make_process_traces.py).
TEST(Job, ProcessesOfOneReportAreRowsOfTheirOwn) {
  const json expected = json::parse(read_file(fixture("process_traces.expected.json")))["two_ranks"]["processes"];
  const Job job = analyze_job({fixture("process_two_ranks.sqlite")}, {});
  ASSERT_EQ(job.rows.size(), 2u);
  EXPECT_EQ(job.rows[0].pid, 4100u);
  EXPECT_EQ(job.rows[1].pid, 4200u);
  for (const JobRow& r : job.rows)
    EXPECT_NEAR(r.lap_ms, expected[std::to_string(*r.pid)]["lap_ms"].get<double>(), 1e-9);
  ASSERT_TRUE(job.straggler);
  EXPECT_EQ(job.straggler->slowest, 1u);  // the laps tie (the host ranges are alike): the later row
  EXPECT_EQ(label_name(job.straggler->diff.rows.front().label), std::string("SLOWER"));
  EXPECT_NE(job.straggler->command.find("--pid-before 4100 --pid-after 4200"), std::string::npos);
}

TEST(Job, TheGateTripsAboveItsPercentOnly) {
  const json expected = json::parse(read_file(fixture("job/job.expected.json")));
  const std::string slow = expected["slowest"], med = expected["median"];
  const double spread =
      100 * (expected["ranks"][slow]["lap_ms"].get<double>() / expected["ranks"][med]["lap_ms"].get<double>() - 1);
  std::vector<std::string> notes;
  const std::vector<std::string> files = expand_report_inputs({fixture("job")}, notes);
  JobOptions o;
  o.fail_if_spread_pct = spread * 0.99;
  const Job tight = analyze_job(files, o);
  ASSERT_TRUE(tight.spread);
  EXPECT_NEAR(tight.spread->slowest_over_median_pct, spread, 1e-9);
  EXPECT_TRUE(tight.gate_failed);
  EXPECT_NE(tight.gate_reason.find("more than --fail-if-spread"), std::string::npos);
  o.fail_if_spread_pct = spread * 1.01;
  EXPECT_FALSE(analyze_job(files, o).gate_failed);
  // One loop has no spread: the gate passes.
  o.fail_if_spread_pct = 0;
  const Job one = analyze_job({files.front()}, o);
  EXPECT_FALSE(one.gate_failed);
  EXPECT_FALSE(one.spread);
}

// The pool changes when a report is read, never what is found: one worker and four agree byte for byte.
TEST(Job, ThePoolGivesOneWorkersAnswer) {
  const std::vector<std::string> files{fixture("job/rank_0.sqlite"),      fixture("job/rank_1.sqlite"),
                                       fixture("job/rank_2.sqlite"),      fixture("job/rank_3.sqlite"),
                                       fixture("diff_gelu_fused.sqlite"), fixture("process_two_ranks.sqlite")};
  JobOptions one, four;
  one.workers = 1;
  four.workers = 4;
  json a = job_to_json(analyze_job(files, one)), b = job_to_json(analyze_job(files, four));
  EXPECT_EQ(a.dump(), b.dump());
  EXPECT_EQ(a["reports"].size(), 7u);
  EXPECT_EQ(a["schema"], "laptime.job/1");
}

TEST(Job, AReportThatCannotBeReadIsNamed) {
  const std::string missing = temp("missing.sqlite");
  std::filesystem::remove(missing);
  EXPECT_EQ(error_of([&] {
              analyze_job({fixture("diff_base.sqlite"), missing}, {});
            }),
            "cannot open " + missing + ": no such file, or it is not readable.");
  const std::string bad = error_of([&] { analyze_job({fixture("diff_base.sqlite"), fixture("not_a_trace.txt")}, {}); });
  EXPECT_NE(bad.find(fixture("not_a_trace.txt")), std::string::npos) << bad;
}

// The words a straggler's command is made of come back from bash as they went in, byte for byte.
TEST(Job, ShellWordsPasteBackAsTheSameWords) {
  const std::vector<std::string> words{"runs/a b.sqlite", "it's", "x$(touch X)", "", "tab\there", "`id`;ls", "a\nb"};
  EXPECT_EQ(shell_word("runs/rank_0.sqlite"), "runs/rank_0.sqlite");
  EXPECT_EQ(testing_support::bash_words(shell_words(words)), words);
}

}  // namespace
}  // namespace laptime::trace
