#include "trace/ncu/ncu_command.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "trace/model/text.h"
#include "trace/model/format.h"
#include "trace/model/error.h"

namespace laptime::trace {
namespace {

using detail::format;

// What the committed H200 captures measured (ncu 2025.3.1, tests/fixtures/ncu/capture.log).
// GPT-2 B=1 T=256: the whole forward, 87 kernels, 66 s; block h.0 alone (7 kernels, 11 with
// --attention naive) 9-13 s, 11 s on average. ResNet-50 B=8: 55 kernels, 41 s; the stem alone
// (1 kernel fused, 2 with cuDNN and the max pool) 11-14 s. A line through the two gives the
// seconds per kernel and the program's own start under ncu (GPT-2's weights, ResNet-50's
// convolution planning: 7-10 s of its 12).
struct Measured {
  const char* model;
  const char* shape;  // as measured
  double per_kernel_s, start_s;
  double reachable_gb;  // memory each kernel could reach (saved and restored per pass)
};
constexpr Measured kGpt2{"gpt2", "B=1 T=256", (66.0 - 11.0) / (87 - 7), 11.0 - 7 * (66.0 - 11.0) / (87 - 7), 0.40};
constexpr Measured kResnet{"resnet50", "B=8 224x224", (41.0 - 12.5) / (55 - 1.5),
                           12.5 - 1.5 * (41.0 - 12.5) / (55 - 1.5), 0.15};

bool is_block(const std::string& s, const char* prefix) {  // "h.3", "layer2.1"
  const std::string p = prefix;
  if (s.compare(0, p.size(), p) != 0 || s.size() == p.size()) return false;
  for (size_t i = p.size(); i < s.size(); ++i)
    if (!(std::isdigit(static_cast<unsigned char>(s[i])) || (s[i] == '.' && p != "h."))) return false;
  return true;
}

// The kernels one forward (or one range of it) launches, as counted in the committed reports:
// GPT-2 per block ln_1, c_attn, attention (1 kernel; naive: head split, scores, softmax, P.V,
// head merge), c_proj, ln_2, c_fc (GELU in its epilogue), c_proj; plus wte, ln_f, lm_head.
// ResNet-50: the fused stem (cuDNN: convolution and max pool), 53 convolutions, avgpool, fc.
int kernels_of(const NcuCommandOptions& o) {
  if (o.model == "gpt2") {
    const int core = o.attention == "naive" ? 5 : 1;
    const int block = 6 + core;
    const std::string& w = o.within;
    if (w.empty()) return 3 + 12 * block;
    if (is_block(w, "h.")) return block;
    auto ends = [&](const char* t) {
      return w.size() > std::string(t).size() && w.rfind(t) == w.size() - std::string(t).size();
    };
    if (ends(".attn")) return 2 + core;
    if (ends(".attn.core")) return core;
    if (ends(".mlp")) return 2;
    return 1;
  }
  const bool cudnn_stem = o.stem == "cudnn" || (!o.precision.empty() && o.precision != "bf16");
  if (o.within.empty()) return cudnn_stem ? 56 : 55;
  const std::string& w = o.within;
  if (w.rfind("layer", 0) == 0 && w.size() == 8 && w[6] == '.' && std::isdigit(static_cast<unsigned char>(w[5])) &&
      std::isdigit(static_cast<unsigned char>(w[7])))
    return w[7] == '0' ? 4 : 3;  // a stage's first block has its downsample
  return 1;
}

std::string shape_text(const NcuCommandOptions& o) {
  if (o.model == "gpt2")
    return "B=" + (o.batch ? std::to_string(*o.batch) : std::string("8")) +
           " T=" + (o.seq ? std::to_string(*o.seq) : std::string("1024"));
  const std::string s = o.image_size ? std::to_string(*o.image_size) : "224";
  return "B=" + (o.batch ? std::to_string(*o.batch) : std::string("256")) + " " + s + "x" + s;
}

// `ncu FILTER SECTIONS (-f -o STEM | --csv ...) PROGRAM... [> OUTPUT]`, every word quoted for the
// shell; the NVTX filter in single quotes as ncu's documentation writes it (it holds only
// letters, digits, `@`, `/`, `.` and `_`: checked before).
std::string ncu_line(const std::string& filter, bool csv, const std::string& stem,
                     const std::vector<std::string>& program, const std::string& output) {
  std::vector<std::string> words{"ncu", "--nvtx"};
  for (const std::string& s : ncu_sections()) words.insert(words.end(), {"--section", s});
  if (csv)
    words.insert(words.end(), {"--csv", "--page", "raw", "--print-units", "base"});
  else
    words.insert(words.end(), {"-f", "-o", stem});
  words.insert(words.end(), program.begin(), program.end());
  std::string line = shell_words(words);
  line.insert(std::string("ncu --nvtx").size(), " --nvtx-include '" + filter + "'");
  return line + (csv ? " > " + shell_word(output) : "");
}

// `laptime kernels --command lab KERNEL`: ncu over `laptime lab KERNEL --once`, which makes one
// call a version and shape inside lab > KERNEL > lab/KERNEL/vN and writes the sidecar beside its
// --json; trace/ knows nothing of the registry, so the count of kernels is not estimated.
NcuCommand lab_command(const NcuCommandOptions& o) {
  if (o.lab_kernel.empty())
    throw TraceError("--command lab needs the kernel: `laptime kernels --command lab KERNEL` (`laptime lab --list`).");
  for (char c : o.lab_kernel)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      throw TraceError("--command lab takes a kernel name of lower-case letters, digits and underscores, not '" +
                       escape_name(o.lab_kernel) + "'.");
  if (o.batch || o.seq || o.image_size || !o.attention.empty() || !o.stem.empty() || !o.within.empty())
    throw TraceError(
        "--command lab profiles laptime lab's shapes: -b, -t, --image-size, --attention, --stem and "
        "--within apply to gpt2 and resnet50.");
  if (o.precision == "tf32") throw TraceError("laptime lab runs fp32, bf16 or fp8, not tf32.");
  NcuCommand c;
  const std::string stem =
      o.output.empty() ? "lab_" + o.lab_kernel + (o.precision.empty() ? "" : "_" + o.precision) : o.output;
  std::vector<std::string> lab{o.binary, "lab", o.lab_kernel};
  if (!o.precision.empty()) lab.insert(lab.end(), {"-p", o.precision});
  for (const std::string& file : o.lab_tries) {
    lab.insert(lab.end(), {"--try", file});
  }
  lab.insert(lab.end(), {"--once", "--json", stem + ".json"});
  c.output = stem + (o.csv ? ".csv" : ".ncu-rep");
  c.costs = stem + ".layers.json";
  c.ncu = ncu_line("laptime@lab/" + o.lab_kernel + "/", o.csv, stem, lab, c.output);
  c.read = shell_words({"laptime", "kernels", c.output});
  c.notes.push_back(
      "--once makes one call a version and shape (the checks run outside the ranges and are not "
      "profiled); ncu replays each kernel alone, about a second each on an H200, after the program's own "
      "start.");
  c.notes.push_back("--json " + stem + ".json makes the lab write " + c.costs +
                    " beside it: what each version must move, which `laptime kernels` finds beside " + c.output +
                    " (one row a version, lab/" + o.lab_kernel + "/vN).");
  if (!o.lab_tries.empty())
    c.notes.push_back(
        "each --try file is one more rung, compiled with -lineinfo so ncu shows its source: its row is "
        "lab/" +
        o.lab_kernel + "/ and the file's name; with --once it runs in the lab's own process.");
  return c;
}

}  // namespace

const std::vector<std::string>& ncu_sections() {
  static const std::vector<std::string> s{"SpeedOfLight",
                                          "SpeedOfLight_RooflineChart",
                                          "MemoryWorkloadAnalysis",
                                          "ComputeWorkloadAnalysis",
                                          "Occupancy",
                                          "LaunchStats",
                                          "WarpStateStats"};
  return s;
}

double ncu_seconds_per_kernel() { return kGpt2.per_kernel_s; }

NcuCommand ncu_command(const NcuCommandOptions& o) {
  if (o.model == "lab") return lab_command(o);
  if (!o.lab_tries.empty()) throw TraceError("--try goes with --command lab KERNEL: a file of yours is a lab rung.");
  if (o.model != "gpt2" && o.model != "resnet50")
    throw TraceError("--command takes gpt2, resnet50 or lab, not '" + escape_name(o.model) + "'.");
  if (o.model == "gpt2" && (o.image_size || !o.stem.empty()))
    throw TraceError("--image-size and --stem apply to resnet50 only.");
  if (o.model == "resnet50" && (o.seq || !o.attention.empty()))
    throw TraceError("--seq and --attention apply to gpt2 only.");
  for (char c : o.within)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_'))
      throw TraceError("--within takes a range name of letters, digits, dots and underscores (h.0, conv1), not '" +
                       escape_name(o.within) + "'.");
  NcuCommand c;
  std::string stem = o.output;
  if (stem.empty()) {
    stem = o.model;
    if (o.batch) stem += "_b" + std::to_string(*o.batch);
    if (o.seq) stem += "_t" + std::to_string(*o.seq);
    if (o.image_size) stem += "_s" + std::to_string(*o.image_size);
    if (!o.precision.empty()) stem += "_" + o.precision;
    if (!o.attention.empty()) stem += "_attn_" + o.attention;
    if (!o.stem.empty()) stem += "_stem_" + o.stem;
    if (!o.within.empty()) {
      std::string w = o.within;
      for (char& ch : w)
        if (ch == '.') ch = '_';
      stem += "_" + w;
    }
  }
  // Every word quoted for the shell: the line is pasted as it is printed.
  std::vector<std::string> bench{o.binary, "bench", o.model};
  if (o.batch) bench.insert(bench.end(), {"-b", std::to_string(*o.batch)});
  if (o.seq) bench.insert(bench.end(), {"-t", std::to_string(*o.seq)});
  if (o.image_size) bench.insert(bench.end(), {"--image-size", std::to_string(*o.image_size)});
  if (!o.precision.empty()) bench.insert(bench.end(), {"--precision", o.precision});
  if (!o.attention.empty()) bench.insert(bench.end(), {"--attention", o.attention});
  if (!o.stem.empty()) bench.insert(bench.end(), {"--stem", o.stem});
  bench.insert(bench.end(), {"-w", "0", "-n", "1", "--json", stem + ".json"});
  c.output = stem + (o.csv ? ".csv" : ".ncu-rep");
  c.costs = stem + ".layers.json";
  c.ncu = ncu_line("laptime@forward/" + (o.within.empty() ? "" : o.within + "/"), o.csv, stem, bench, c.output);
  c.read = shell_words({"laptime", "kernels", c.output});
  const Measured& m = o.model == "gpt2" ? kGpt2 : kResnet;
  c.kernels = kernels_of(o);
  c.seconds = m.start_s + c.kernels * m.per_kernel_s;
  c.notes.push_back(
      format("ncu replays each kernel alone, 21 passes with these sections, flushing the caches and "
             "locking the clocks before each: about %.1f s a kernel for %s at %s on an H200 (%.2f GB of "
             "device memory saved and restored per pass), plus %.0f s for the program's own start "
             "(tests/fixtures/ncu/capture.log).",
             m.per_kernel_s, m.model, m.shape, m.reachable_gb, m.start_s));
  if (shape_text(o) != m.shape && !(o.model == "resnet50" && shape_text(o) == "B=8 224x224"))
    c.notes.push_back("the estimate is for " + std::string(m.shape) + "; at " + shape_text(o) +
                      " each kernel reaches more memory, so each pass takes longer.");
  if ((!o.precision.empty() && o.precision != "bf16") ||
      (!o.attention.empty() && o.attention != "naive" && o.attention != "flash" && o.attention != "cudnn" &&
       o.attention != "wgmma"))
    c.notes.push_back("the kernel count is bf16's; other precisions launch a few more (conversions, GELU alone).");
  c.notes.push_back(
      "-w 0 -n 1 is a steady iteration: laptime's first forward runs the same kernels as any later one "
      "(plans and workspaces are made before it), and ncu times each kernel on its own anyway.");
  c.notes.push_back("--json " + stem + ".json makes the bench write " + c.costs +
                    " beside it: the bytes and FLOPs each "
                    "layer must move, which `laptime kernels` finds beside " +
                    c.output + ".");
  return c;
}

void print_ncu_command(const NcuCommand& c, std::FILE* out) {
  // Every line through escape_name: the command lines are shell_words' printable text (unchanged
  // by it), and a name in the heading or a note is shown, never sent to the terminal as it is.
  if (c.kernels == 0)
    std::fprintf(out, "Profile each version once with Nsight Compute, then read it per version:\n\n");
  else
    std::fprintf(out, "Profile %s with Nsight Compute (about %.0f s: %d kernels), then read it per layer:\n\n",
                 escape_name(c.what).c_str(), c.seconds, c.kernels);
  std::fprintf(out, "  %s\n  %s\n\n", escape_name(c.ncu).c_str(), escape_name(c.read).c_str());
  for (const std::string& n : c.notes) detail::print_wrapped(out, "- " + escape_name(n), 2);
}

}  // namespace laptime::trace
