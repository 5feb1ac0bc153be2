// laptime lab's registry: every hand-written kernel of the two models that has a ladder of
// versions, from the plain one a learner writes first to the one the models run (production),
// each version one small step with its reason in a line. Per kernel: what it computes, its
// dimensions, the shapes the models run it at (and small awkward ones that are only checked),
// the precisions it runs in, which version is production, where the models run it (and
// whether `--kernel NAME=VERSION` can swap it in), the bytes and FLOPs one call must move and
// compute, and the check's tolerance.
//
// Host-only (no CUDA header or library): `laptime lab --list`, the command line's checks of
// --kernel and --shape, and their tests run without a GPU. The launchers are apart
// (kernels/lab/launch.cuh), the CPU references too (kernels/lab/reference.h).
//
// The cost model (what a call cannot avoid, the floor a version is measured against):
//   bytes   every input read once and every output written once at its element size
//           (fp32 4, bf16 2, e4m3 1; token ids 4), parameters (gains, biases) once; scratch a
//           version chooses to keep in memory (attention v1's T x T scores) is not "must".
//   flops   multiply-add = 2, for matrix products only (the attention core's Q·Kᵀ and P·V over
//           the causal half: key j <= query i); elementwise work counts 0, as in
//           layers/layer_cost.h, so a kernel with 0 FLOPs has no compute roof.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace laptime::lab {

// The precisions a kernel can run in, as `-p` spells them. fp8 is bf16 data quantized to e4m3.
const std::vector<std::string>& precision_names();

// One named dimension of a kernel's shape, with the bounds --shape accepts and the range the
// GPU tests draw random shapes from.
struct Dim {
  std::string name;  // "rows", "C", "B", ...
  int64_t min = 1, max = 1;
  int64_t test_min = 1, test_max = 1;
};

// A shape: one value per dimension, in the kernel's order.
struct Shape {
  std::string label;  // where it comes from: "gpt2 B8 T1024: ln_1, ln_2, ln_f", "odd", "--shape"
  std::vector<int64_t> dims;
};

struct Version {
  std::string id;                       // "v1", "v2", ...
  std::string title;                    // what it is, a few words: "one warp per row, three reads"
  std::string reason;                   // the step from the version before, one line
  std::vector<std::string> precisions;  // where it runs; empty: every precision of the kernel
  std::string library;  // "" for a kernel in kernels/; else where its launcher lives (the lab runner calls it)
};

// Where a model runs the kernel.
struct ModelUse {
  std::string model;       // "gpt2" | "resnet50"
  std::string where;       // "ln_1, ln_2 and ln_f of every block"
  bool swappable = false;  // `laptime bench MODEL --kernel NAME=VERSION` runs any version there
  std::string note;        // when not swappable, or when only under a condition: why, one sentence
  // The model precisions (`-p`) where --kernel swaps it in; the kernel then runs in the storage
  // precision of that run (fp32 for fp32 and tf32, bf16 for bf16 and fp8).
  std::vector<std::string> precisions;
};

// What one call must move and compute (the cost model at the top).
struct Cost {
  double read = 0, written = 0;  // bytes
  double flops = 0;
  double bytes() const { return read + written; }
};

struct KernelInfo {
  std::string name;     // "layernorm"
  std::string summary;  // what it computes, one line
  std::string kind;     // the layer-cost kind of its range: "norm", "elementwise", "attention", ...
  std::vector<Dim> dims;
  std::vector<std::string> precisions;            // the first is the default
  std::vector<Version> versions;                  // v1 first
  std::map<std::string, std::string> production;  // precision -> version id
  std::vector<Shape> model_shapes;                // timed and checked
  std::vector<Shape> odd_shapes;                  // checked only: sizes that are not a multiple of any block or vector
  std::vector<ModelUse> models;
  Cost (*cost)(const std::vector<int64_t>& dims, const std::string& precision) = nullptr;
  // "" when the dimensions make a valid call, else why not (one sentence); bounds are checked apart.
  std::string (*shape_error)(const std::vector<int64_t>& dims) = nullptr;
  // The check's bound on the relative L2 error ‖out − ref‖ / ‖ref‖, per precision.
  std::map<std::string, double> tolerance;
  // Version id -> precision -> a floor under each reference value's magnitude in ‖ref‖, for a
  // version whose error is absolute, not relative (the tanh form of GELU: a few ulp of 1 in
  // 1 + tanh z, however small the result): the bound then holds against max(|ref|, floor)
  // element by element. Absent: no floor (the plain relative error).
  std::map<std::string, std::map<std::string, double>> error_floor;
  // Version id -> precision -> its own bound in place of `tolerance`, for a version whose method
  // has a larger error by construction (a sequential fp32 sum over a long row); the reason is
  // written beside it. Production never has one (a host test says so).
  std::map<std::string, std::map<std::string, double>> version_tolerance;

  int version_index(const std::string& id) const;  // -1 when absent
  // error_floor's, else 0; version_tolerance's, else tolerance's (a learner's file: 0 and tolerance's).
  double floor_of(int version, const std::string& precision) const;
  double bound_of(int version, const std::string& precision) const;
  int production_index(const std::string& precision) const;
  bool runs_in(const Version& v, const std::string& precision) const;
  bool has_precision(const std::string& precision) const;
  int dim_index(const std::string& dim) const;  // -1 when absent
};

// Every kernel, in the order `laptime lab --list` shows them.
const std::vector<KernelInfo>& kernels();
const KernelInfo* find_kernel(const std::string& name);

// --- the command line's words, checked on the host ------------------------------------------

// "" when `name` is a kernel, else the sentence naming the known ones.
std::string unknown_kernel(const std::string& name);
// --versions: "all", "none" (a learner's files alone) or ids separated by commas ("v1,v3"), each
// once; fills *indices (ascending).
// Returns "" or the sentence.
std::string parse_versions(const KernelInfo& k, const std::string& text, std::vector<int>* indices);
// --shape: NAME=VALUE pairs separated by commas ("rows=1000,C=771"); the dimensions not named
// take the first model shape's values. Returns "" or the sentence (unknown name, bad number,
// out of bounds, a combination the kernel cannot run).
std::string parse_shape(const KernelInfo& k, const std::string& text, Shape* shape);
// "rows=8192 C=768"
std::string shape_text(const KernelInfo& k, const std::vector<int64_t>& dims);

// --kernel NAME=VERSION, repeatable: the versions chosen for a model run, by kernel name (the
// version's index, 0 for v1; past the ladder, a learner's file loaded into this process, below).
// A kernel not in the map runs its production version.
using KernelChoice = std::map<std::string, int>;
// --kernel NAME=FILE.cu: a learner's kernel file (kernels/lab/try_signature.h) for a model run, by
// kernel name, the path as given. Loaded and checked when the model is built (bench/lab/kernel_files.h),
// then a KernelChoice entry like any version.
using KernelFiles = std::map<std::string, std::string>;
// The version index a model runs of `kernel`: the one `choice` names, else production's for the
// storage type (F32: "fp32", else "bf16"). `kernel` must be in the registry.
int chosen_version(const KernelChoice& choice, const std::string& kernel, DType storage);
// Adds "layernorm=v2" to *choice, or "layernorm=FILE.cu" (a word ending in .cu) to *files; ""
// or the sentence (unknown kernel or version, a kernel that takes no file, named twice).
std::string add_kernel_choice(const std::string& text, KernelChoice* choice, KernelFiles* files = nullptr);
// "" when `model` can run every choice in `precision` ("fp32", "tf32", "bf16", "fp8"), else the
// sentence: a kernel the model does not run, or one it runs only where it cannot be swapped.
std::string check_kernel_choice(const KernelChoice& choice, const std::string& model, const std::string& precision,
                                const KernelFiles& files = {});
// "layernorm=v1 embedding=v2" (for the bench's header and JSON), a file as
// "layernorm=ln.cu (sha256 0123456789abcdef)"; "" for none.
std::string kernel_choice_text(const KernelChoice& choice);

// --- learners' files loaded into this process ------------------------------------------------

// A learner's file loaded as one more version of a kernel (kernels/lab/user_kernel.h loads it).
// The table is the process's: what `--try` and `--kernel NAME=FILE.cu` loaded, in order. A file's
// version index is its kernel's ladder size plus its place among that kernel's files.
struct UserVersionInfo {
  std::string kernel;    // "layernorm"
  std::string name;      // the rung's name: the file's base name, "ln_v2.cu"
  std::string file;      // the path as given
  std::string sha256;    // of the file's bytes
  std::string compiled;  // how it was compiled: "sm_90a, NVRTC 13.0, 0.23 s" (or "..., from the cache")
};
int add_user_version_info(const UserVersionInfo& info);  // its version index
// nullptr when `index` is no file of `kernel`'s (a ladder version, or out of range).
const UserVersionInfo* user_version_info(const std::string& kernel, int index);
const std::vector<UserVersionInfo>& user_version_infos();
// A version's name: the ladder's id ("v3"), or a file's name.
std::string version_name(const KernelInfo& k, int index);

}  // namespace laptime::lab
