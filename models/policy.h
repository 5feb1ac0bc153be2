// How a run builds each model: the one build policy of `laptime bench`, `laptime forward` and the
// lab's swap-ins (`--kernel NAME=VERSION` or `NAME=FILE.cu`), so that what the bench times is what
// the end-to-end checks run (tests/e2e, through `bench --output`). A run names some choices
// (WorkloadOptions: the command line's words); everything it leaves unnamed is decided here, once
// per model, and the models' own build (plans, candidates timed at build) does the rest:
//
//   GPT-2      weights: --weights, else seeded random ones of GPT-2 small's shapes. Shape: B 8 and
//              T n_ctx (1024) unless named. Attention core: --attention, else the model's choice
//              per precision (layers/gpt2/attention_kind.h). GELU: in c_fc's cuBLASLt epilogue or its
//              own kernel, per precision (layers/gpt2/mlp.h), unless LAPTIME_GPT2_GELU says which. The
//              linear layers' GEMMs: timed at build, cuBLASLt's first few algorithms beside
//              CUTLASS's sm_90a kernels, where this GPU is offered those kernels (an H100/H200
//              with a build that has them: fp8's fused c_fc GELU -> e4m3 wins there); cuBLASLt's
//              heuristic elsewhere; LAPTIME_GPT2_GEMM forces either.
//   ResNet-50  weights: --weights, else seeded random ones of ResNet-50's shapes. Shape: B 256 and
//              the file's image size (224) unless named. Stem: --stem, else the fused kernel where
//              it runs. Convolution plans, the folded shortcut and fp8's e4m3 stream: the model's
//              own, timed at build (models/resnet50.h).
//   Both       --kernel's lab versions swapped in, and its files (NAME=FILE.cu) each compiled and
//              checked at the shapes this model runs that kernel at before the model is built;
//              fp8's per-layer choices charge each candidate its launches unless the run replays one
//              CUDA graph (eager_loop).
//
// And the inputs a run draws when it is given none (bench): seeded token ids and images from a
// counter-based rule that tests/e2e/e2e_common.py repeats in a few lines of numpy, so that the
// checks feed PyTorch exactly what `bench --output` ran on (tests/test_seeded_inputs.cpp holds
// the two to each other).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/dtype.h"
#include "kernels/lab/registry.h"
#include "layers/gpt2/attention_kind.h"
#include "layers/resnet50/stem_kind.h"
#include "models/gpt2.h"
#include "models/resnet50.h"

namespace laptime {

// What a run asks of a model: the command line's words (cli/gpu_cli.cpp fills them).
struct WorkloadOptions {
  std::string model;    // "gpt2" | "resnet50"
  std::string weights;  // file, or empty for seeded random weights of the real shape
  uint64_t seed = 0;    // for random weights and inputs
  int batch = 0;        // 0: the model's default
  int seq = 0;          // gpt2: 0 = n_ctx
  int image_size = 0;   // resnet50: 0 = the file's/model's default (224)
  Precision precision = Precision::BF16;
  AttentionKind attention = AttentionKind::Auto;  // gpt2: the attention core (--attention)
  StemKind stem = StemKind::Auto;                 // resnet50: the stem implementation (--stem)
  lab::KernelChoice kernels;      // --kernel NAME=VERSION: laptime lab's versions swapped in (none: production)
  lab::KernelFiles kernel_files;  // --kernel NAME=FILE.cu: learners' files, loaded and checked at build
  bool eager_loop =
      true;  // forward() looped eagerly, not replayed in a graph (--graph): fp8's choices charge host time
};

// --kernel NAME=FILE.cu's loader: compiles each of `files`, checks it against the CPU reference at
// `shapes` (the registry's dimensions of each kernel as `model` runs it: gpt2's layernorm {B·T, C})
// and returns `choice` with each file's version added; throws Error with one sentence. The entry
// points hand down bench/lab/kernel_files.h's load_kernel_files: the lab's checks sit above models/.
using KernelShapes = std::map<std::string, std::vector<int64_t>>;
using KernelFileLoader = lab::KernelChoice (*)(Context& ctx, const lab::KernelChoice& choice,
                                               const lab::KernelFiles& files, const KernelShapes& shapes,
                                               const std::string& model, Precision precision);

// GPT-2 as the policy builds it for `o` (o.model is not read), sized for (B, T).
struct Gpt2Build {
  std::unique_ptr<GPT2> model;
  std::string weights_source;  // the file, or "random (seed N, GPT-2 small shapes)"
  int B = 0, T = 0;
};
Gpt2Build build_gpt2(Context& ctx, const WorkloadOptions& o, KernelFileLoader load_files);

// ResNet-50 likewise, sized for (B, S); the batch and image size checked before any weight is
// drawn or read.
struct Resnet50Build {
  std::unique_ptr<ResNet50> model;
  std::string weights_source;  // the file, or "random (seed N, ResNet-50 shapes)"
  int B = 0, S = 0;
};
Resnet50Build build_resnet50(Context& ctx, const WorkloadOptions& o, KernelFileLoader load_files);

// The inputs a run draws from its seed. Draw i is splitmix64's mix of (mix(seed) + i); a token id
// is that draw modulo `vocab`; an image value the sum of the draw's four 16-bit quarters, each a
// uniform in (0, 1), centred and scaled to unit variance (an approximately normal value within
// ±2√3: integer and exactly rounded arithmetic alone, so that numpy repeats it bit for bit).
std::vector<int32_t> seeded_tokens(uint64_t seed, int64_t count, int vocab);
std::vector<float> seeded_images(uint64_t seed, int64_t count);  // fp32 NCHW, as upload_input takes

}  // namespace laptime
