// core/env_switches.h: the one home of laptime's environment switches. The docs table row by
// row against the header, no other getenv in the GPU code, and each accessor's words and
// refusals. Needs no GPU (the accessors read the environment only). An accessor keeps its first
// read for the process, so each accessor case runs in a process of its own (in_fresh_process).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/check.h"
#include "core/env_switches.h"

namespace laptime {
namespace {

const std::string kSource = LAPTIME_SOURCE_DIR;

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::string trim(const std::string& s) {
  const std::size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// The cells of the first table after "## Environment switches", header and rule rows left out.
std::vector<std::vector<std::string>> docs_rows() {
  std::istringstream in(read_text(kSource + "/docs/DESIGN-NOTES.md"));
  std::vector<std::vector<std::string>> rows;
  std::string line;
  bool in_section = false, in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) {
      if (in_section) break;
      in_section = line == "## Environment switches";
      continue;
    }
    if (!in_section) continue;
    if (line.rfind("|", 0) != 0) {
      if (in_table) break;
      continue;
    }
    in_table = true;
    std::vector<std::string> cells;
    std::size_t start = 1;
    for (std::size_t bar = line.find('|', start); bar != std::string::npos; bar = line.find('|', start)) {
      cells.push_back(trim(line.substr(start, bar - start)));
      start = bar + 1;
    }
    if (cells.empty() || cells[0] == "switch" || cells[0].rfind("---", 0) == 0) continue;
    rows.push_back(cells);
  }
  return rows;
}

TEST(EnvSwitches, DocsTableIsTheHeadersTable) {
  const auto rows = docs_rows();
  const std::size_t n = sizeof env::kAllSwitches / sizeof env::kAllSwitches[0];
  ASSERT_EQ(rows.size(), n) << "docs/DESIGN-NOTES.md \"Environment switches\" and core/env_switches.h list "
                               "different numbers of switches";
  for (std::size_t i = 0; i < n; ++i) {
    const env::Switch& s = env::kAllSwitches[i];
    SCOPED_TRACE(s.name);
    ASSERT_EQ(rows[i].size(), 4u);
    EXPECT_EQ(rows[i][0], std::string("`") + s.name + "`");
    EXPECT_EQ(rows[i][1], s.values);
    EXPECT_EQ(rows[i][2], s.fallback);
    EXPECT_FALSE(rows[i][3].empty());
    EXPECT_FALSE(std::string(s.meaning).empty());
  }
}

// "read only through it": no source of the GPU half or of the command line reads a LAPTIME_*
// variable but core/env_switches.cpp: no getenv on a "LAPTIME_..." literal, nor on a name it
// computes (the switches' old helpers took the name as an argument). The OS's own variables
// (PATH, TMPDIR: core/os.cpp) are read where they are used; trace/ reads its own.
TEST(EnvSwitches, NothingElseReadsTheSwitches) {
  namespace fs = std::filesystem;
  const std::regex switch_read(R"(getenv\s*\(\s*("LAPTIME_|[^"\s)]))");
  std::vector<std::string> readers;
  for (const char* folder : {"core", "kernels", "layers", "models", "bench", "cli"}) {
    if (!fs::is_directory(fs::path(kSource) / folder)) continue;
    for (const auto& e : fs::recursive_directory_iterator(fs::path(kSource) / folder)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".cu" && ext != ".cuh")) continue;
      const std::string rel = fs::relative(e.path(), kSource).generic_string();
      if (rel != "core/env_switches.cpp" && std::regex_search(read_text(e.path()), switch_read)) readers.push_back(rel);
    }
  }
  EXPECT_TRUE(readers.empty()) << "a LAPTIME_* variable read outside core/env_switches.cpp: "
                               << ::testing::PrintToString(readers);
}

// Runs `body` in a fresh process (a threadsafe death test re-executes this binary, so nothing
// read earlier in this one is cached there). The child reports nothing itself: its failed
// expectations are collected, written to stderr (which the parent shows) and end it with 1.
void run_and_exit(const std::function<void()>& body) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter collect(&results);
    body();
  }
  int failed = 0;
  for (int i = 0; i < results.size(); ++i)
    if (results.GetTestPartResult(i).failed()) {
      const ::testing::TestPartResult& r = results.GetTestPartResult(i);
      std::fprintf(stderr, "%s:%d: %s\n", r.file_name(), r.line_number(), r.summary());
      ++failed;
    }
  std::exit(failed ? 1 : 0);
}

void in_fresh_process(const std::function<void()>& body) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_and_exit(body), ::testing::ExitedWithCode(0), "");
}

std::string refusal_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no refusal)";
}

TEST(EnvSwitches, Fp8GemmRefusesAnotherWordThenReadsOnce) {
  in_fresh_process([] {
    setenv(env::kFp8Gemm.name, "fast", 1);
    EXPECT_EQ(refusal_of([] { env::fp8_gemm(); }), "LAPTIME_FP8_GEMM must be 'auto', 'fp8' or 'bf16', not 'fast'.");
    setenv(env::kFp8Gemm.name, "bf16", 1);
    EXPECT_EQ(env::fp8_gemm(), Fp8Policy::Never);
    setenv(env::kFp8Gemm.name, "fp8", 1);
    EXPECT_EQ(env::fp8_gemm(), Fp8Policy::Never);  // read once: the run keeps its first value
    EXPECT_EQ(env::text(env::kFp8Gemm), "fp8");    // the raw text is read each time
  });
}

TEST(EnvSwitches, Fp8MlpRefusesAnotherWord) {
  in_fresh_process([] {
    setenv(env::kFp8Mlp.name, "joint", 1);
    EXPECT_EQ(refusal_of([] { env::fp8_mlp(); }), "LAPTIME_FP8_MLP must be 'pair' or 'apart', not 'joint'.");
    setenv(env::kFp8Mlp.name, "apart", 1);
    EXPECT_EQ(env::fp8_mlp(), Fp8Pairing::Apart);
  });
}

TEST(EnvSwitches, Gpt2GemmRefusesAnotherWord) {
  in_fresh_process([] {
    setenv(env::kGpt2Gemm.name, "fastest", 1);
    EXPECT_EQ(refusal_of([] { env::gpt2_gemm(); }),
              "LAPTIME_GPT2_GEMM must be 'auto', 'timed' or 'heuristic', not 'fastest'.");
    setenv(env::kGpt2Gemm.name, "timed", 1);
    EXPECT_EQ(env::gpt2_gemm(), Gpt2Gemm::Timed);
  });
}

TEST(EnvSwitches, CutlassRefusesAnotherWord) {
  in_fresh_process([] {
    setenv(env::kCutlass.name, "on", 1);
    EXPECT_EQ(refusal_of([] { env::cutlass(); }), "LAPTIME_CUTLASS must be 'auto' or 'off', not 'on'.");
    setenv(env::kCutlass.name, "off", 1);
    EXPECT_FALSE(env::cutlass());
  });
}

TEST(EnvSwitches, Gpt2GeluEmptyIsTheModelsChoice) {
  in_fresh_process([] {
    setenv(env::kGpt2Gelu.name, "", 1);
    EXPECT_EQ(env::gpt2_gelu(), Gpt2Gelu::Measured);
  });
}

TEST(EnvSwitches, DeselectedEnginesDropEmptyItems) {
  in_fresh_process([] {
    setenv(env::kCudnnDeselectEngines.name, ",eng4,,eng39,", 1);
    EXPECT_EQ(env::cudnn_deselect_engines(), (std::vector<std::string>{"eng4", "eng39"}));
  });
}

TEST(EnvSwitches, ResnetFp8RefusesAnotherWord) {
  in_fresh_process([] {
    setenv(env::kResnetFp8.name, "e4m3", 1);
    EXPECT_EQ(refusal_of([] { env::resnet_fp8(); }),
              "LAPTIME_RESNET_FP8 must be 'auto', 'stream' or 'layers', not 'e4m3'.");
  });
  in_fresh_process([] {
    setenv(env::kResnetFp8.name, "layers", 1);
    EXPECT_EQ(env::resnet_fp8(), ResnetFp8::Layers);
  });
}

TEST(EnvSwitches, CutlassPdlRefusesAnotherWord) {
  in_fresh_process([] {
    setenv(env::kCutlassPdl.name, "auto", 1);
    EXPECT_EQ(refusal_of([] { env::cutlass_pdl(); }), "LAPTIME_CUTLASS_PDL must be 'on' or 'off', not 'auto'.");
  });
  in_fresh_process([] {
    setenv(env::kCutlassPdl.name, "on", 1);
    EXPECT_TRUE(env::cutlass_pdl());
  });
  in_fresh_process([] {
    setenv(env::kCutlassPdl.name, "off", 1);
    EXPECT_FALSE(env::cutlass_pdl());
  });
  in_fresh_process([] {
    unsetenv(env::kCutlassPdl.name);
    EXPECT_TRUE(env::cutlass_pdl());
  });
}

TEST(EnvSwitches, ResnetShortcutRefusesAnotherWord) {
  in_fresh_process([] {
    setenv(env::kResnetShortcut.name, "fused", 1);
    EXPECT_EQ(refusal_of([] { env::resnet_shortcut(); }),
              "LAPTIME_RESNET_SHORTCUT must be 'auto', 'folded' or 'apart', not 'fused'.");
  });
  in_fresh_process([] {
    setenv(env::kResnetShortcut.name, "apart", 1);
    EXPECT_EQ(env::resnet_shortcut(), ResnetShortcut::Apart);
  });
  in_fresh_process([] {
    setenv(env::kResnetShortcut.name, "folded", 1);
    EXPECT_EQ(env::resnet_shortcut(), ResnetShortcut::Folded);
  });
  in_fresh_process([] {
    unsetenv(env::kResnetShortcut.name);
    EXPECT_EQ(env::resnet_shortcut(), ResnetShortcut::Auto);
  });
}

TEST(EnvSwitches, EagerTimingRefusesAnotherWord) {
  in_fresh_process([] {
    setenv(env::kEagerTiming.name, "eager", 1);
    EXPECT_EQ(refusal_of([] { env::eager_timing_direct(); }),
              "LAPTIME_EAGER_TIMING must be 'graph' or 'direct', not 'eager'.");
  });
  in_fresh_process([] {
    setenv(env::kEagerTiming.name, "direct", 1);
    EXPECT_TRUE(env::eager_timing_direct());
  });
  in_fresh_process([] {
    unsetenv(env::kEagerTiming.name);
    EXPECT_FALSE(env::eager_timing_direct());
  });
}

TEST(EnvSwitches, BenchClockRefusesAnotherWord) {
  in_fresh_process([] {
    setenv(env::kBenchClock.name, "no", 1);
    EXPECT_EQ(refusal_of([] { env::bench_clock(); }), "LAPTIME_BENCH_CLOCK must be 'on' or 'off', not 'no'.");
  });
  in_fresh_process([] {
    setenv(env::kBenchClock.name, "off", 1);
    EXPECT_FALSE(env::bench_clock());
  });
  in_fresh_process([] {
    unsetenv(env::kBenchClock.name);
    EXPECT_TRUE(env::bench_clock());
  });
}

TEST(EnvSwitches, Fp8FastAccumRefusesAnotherWord) {
  in_fresh_process([] {
    setenv(env::kFp8FastAccum.name, "1", 1);  // its word when the switch was off by default
    EXPECT_EQ(refusal_of([] { env::fp8_fast_accum(); }), "LAPTIME_FP8_FAST_ACCUM must be 'on' or 'off', not '1'.");
    setenv(env::kFp8FastAccum.name, "off", 1);
    EXPECT_FALSE(env::fp8_fast_accum());
  });
}

TEST(EnvSwitches, OnlyTheirOwnValueTurnsTheFlagsOver) {
  in_fresh_process([] {
    setenv(env::kConvTune.name, "off", 1);
    EXPECT_FALSE(env::conv_tune());
    EXPECT_FALSE(env::conv_final_round());
  });
}

TEST(EnvSwitches, ConvTuneTimesOnceUnlessAFinalRoundIsAsked) {
  in_fresh_process([] {
    unsetenv(env::kConvTune.name);
    EXPECT_TRUE(env::conv_tune());
    EXPECT_FALSE(env::conv_final_round());
  });
  in_fresh_process([] {
    setenv(env::kConvTune.name, "final", 1);
    EXPECT_TRUE(env::conv_tune());
    EXPECT_TRUE(env::conv_final_round());
  });
}

TEST(EnvSwitches, ConvTuneRefusesAnotherWord) {
  in_fresh_process([] {
    setenv(env::kConvTune.name, "1", 1);
    EXPECT_EQ(refusal_of([] { env::conv_tune(); }), "LAPTIME_CONV_TUNE must be 'once', 'final' or 'off', not '1'.");
  });
}

TEST(EnvSwitches, UnsetGivesTheDefaults) {
  in_fresh_process([] {
    for (const env::Switch& s : env::kAllSwitches) unsetenv(s.name);
    EXPECT_EQ(env::fp8_gemm(), Fp8Policy::Auto);
    EXPECT_EQ(env::fp8_mlp(), Fp8Pairing::Pair);
    EXPECT_TRUE(env::fp8_fast_accum());
    EXPECT_TRUE(env::conv_tune());
    EXPECT_TRUE(env::cudnn_deselect_engines().empty());
    EXPECT_EQ(env::gpt2_gelu(), Gpt2Gelu::Measured);
    EXPECT_EQ(env::gpt2_gemm(), Gpt2Gemm::Auto);
    EXPECT_TRUE(env::cutlass());
  });
}

}  // namespace
}  // namespace laptime
