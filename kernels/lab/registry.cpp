// The registry's kernels (kernels/lab/registry.h). Each entry says what the ladder teaches; the
// kernels themselves are in kernels/ (production) and kernels/lab/ (the plainer versions).
#include "kernels/lab/registry.h"

#include <algorithm>
#include <stdexcept>

namespace laptime::lab {
namespace {

double element_bytes(const std::string& precision) { return precision == "fp32" ? 4.0 : 2.0; }

constexpr int64_t kMaxRows = int64_t{1} << 28;

std::vector<Dim> rows_c(int64_t c_max, int64_t test_c_max) {
  return {{"rows", 1, kMaxRows, 1, 300}, {"C", 1, c_max, 1, test_c_max}};
}

const std::map<std::string, double> kStorageTolerance{{"bf16", 8e-3}, {"fp32", 1e-5}};
const std::map<std::string, double> kExact{{"bf16", 0.0}, {"fp32", 0.0}, {"fp8", 0.0}};
const std::map<std::string, std::string> kV3{{"bf16", "v3"}, {"fp32", "v3"}, {"fp8", "v3"}};

// --- GPT-2 ---------------------------------------------------------------------------------

KernelInfo layernorm() {
  KernelInfo k;
  k.name = "layernorm";
  k.summary = "y = (x - mean) / sqrt(var + eps) * gain + bias over each row of [rows, C]; fp32 statistics";
  k.kind = "norm";
  k.dims = rows_c(16384, 2100);
  k.precisions = {"bf16", "fp32"};
  k.versions = {
      {"v1",
       "one thread per row",
       "the loop a learner writes first: each thread walks its own row three times (mean, variance, output), so "
       "neighbouring threads read addresses a row apart and no load coalesces; 8192 rows fill 32 blocks",
       {},
       ""},
      {"v2",
       "one warp per row, three passes",
       "32 lanes stride one row: loads coalesce and the sums are warp shuffles; passes two and three re-read the "
       "row, from L1 (kernels/layernorm.cu's general kernel, production's fallback)",
       {},
       ""},
      {"v3",
       "one warp per row, the row in registers, 16-byte loads",
       "the row is read once, 16 bytes a load, and kept in registers for the three passes: one read and one write "
       "of the activations, the bandwidth floor. The register array is sized for the widest row the path takes "
       "(8 vectors a lane, C = 2048 in bf16) whatever C is: 96 registers a thread (117 before the row type of v4-v5) "
       "cap "
       "occupancy at 25%",
       {},
       ""},
      {"v4",
       "v3 with its registers sized to the row",
       "the same kernel instantiated for the vectors a lane holds (3 at C = 768 in bf16), picked at run time, the "
       "row kept packed (bf16, widened in each pass): 40 registers a thread, 75% occupancy, so more rows in "
       "flight; GPT-2's 8192 rows still take 1.3 waves",
       {},
       ""},
      {"v5",
       "v4 with a launch bound of 8 blocks an SM",
       "for rows of up to 3 vectors a lane, __launch_bounds__ asks ptxas for 8 blocks an SM: 32 registers a "
       "thread with a 12-byte spill, 100% occupancy, GPT-2's 8192 rows in one wave",
       {},
       ""},
      {"v6",
       "v5 launched as a programmatic dependent",
       "on Hopper (code built for sm_90; an sm_80 build's code has no wait and launches plainly) the kernel is "
       "launched with programmatic stream serialization and its blocks wait "
       "(griddepcontrol.wait) for the kernel before it: its launch and scheduling overlap that kernel's end, the "
       "GEMM whose output it normalises in the model. Alone between two events, as the lab times it, it is v5; "
       "the gain is at the model's kernel boundaries (production, kernels/layernorm.cu)",
       {},
       ""},
  };
  k.production = {{"bf16", "v6"}, {"fp32", "v6"}};
  // v1 sums each row sequentially in fp32: at C = 2056 around an offset 14 standard deviations
  // from zero (the huge inputs, 8 ± 1), the mean carries ~√C · 2^-24 · 8 ≈ 2e-5, about 1e-5 of the
  // output (a check on the H200 measured 1.06e-5 against the 1e-5 bound). 5e-5 is that with
  // room; v2 and v3 sum in a warp's tree (log2 C roundings) and keep 1e-5.
  k.version_tolerance = {{"v1", {{"fp32", 5e-5}}}};
  k.model_shapes = {{"gpt2 B8 T1024: ln_1, ln_2 (12 blocks), ln_f", {8192, 768}}};
  k.odd_shapes = {{"one element", {1, 1}},
                  {"odd rows and C", {37, 771}},
                  {"the register path, a ragged block", {67, 768}},
                  {"past the register path", {5, 2056}}};
  k.models = {{"gpt2",
               "ln_1 and ln_2 of every block, ln_f",
               true,
               "in tf32 and fp8 the LayerNorms write fp16 or e4m3 for the GEMM after them, which only "
               "production does",
               {"fp32", "bf16"}}};
  k.cost = [](const std::vector<int64_t>& d, const std::string& p) {
    const double rows = double(d[0]), C = double(d[1]), es = element_bytes(p);
    return Cost{rows * C * es + 2 * C * es, rows * C * es, 0};
  };
  k.tolerance = kStorageTolerance;
  return k;
}

KernelInfo bias_gelu() {
  KernelInfo k;
  k.name = "bias_gelu";
  k.summary = "y = gelu(x + bias[c]) over [rows, C], GPT-2's tanh approximation";
  k.kind = "elementwise";
  k.dims = rows_c(65536, 3100);
  k.precisions = {"bf16", "fp32"};
  k.versions = {
      {"v1",
       "a bias kernel, then a GELU kernel",
       "two passes, one thread per element each: x + b goes to memory and the GELU reads it back (twice the "
       "traffic); 0.5 x (1 + tanh z) as the paper writes it. fp32 only: in bf16 the sum is rounded to bf16 "
       "before the GELU, two roundings where the fused versions have one, and its error passes the bf16 bound "
       "(seen on one element)",
       {"fp32"},
       ""},
      {"v2",
       "bias and GELU fused, one thread per element",
       "one read and one write: the sum stays in a register",
       {},
       ""},
      {"v3",
       "fused, the exp form",
       "0.5 x (1 + tanh z) written as x / (1 + exp(-2z)): the tanh form cancels for x << 0 (4e-5 relative at "
       "x = -4.5 in fp32), the exp form nowhere; the same traffic",
       {},
       ""},
      {"v4",
       "fused, 16-byte vectors, grid-stride",
       "8 bf16 or 4 fp32 a load and a store, a grid sized to the GPU: fewer, wider memory instructions "
       "(production, kernels/gelu.cu, with its bias)",
       {},
       ""},
  };
  k.production = {{"bf16", "v4"}, {"fp32", "v4"}};
  k.model_shapes = {{"gpt2 B8 T1024: h.*.mlp, c_fc's output", {8192, 3072}}};
  k.odd_shapes = {{"one element", {1, 1}}, {"odd rows and C", {37, 771}}, {"the vector path, ragged", {33, 3072}}};
  k.models = {{"gpt2",
               "h.*.mlp: c_fc's bias and the GELU",
               false,
               "GPT-2 runs them in c_fc's cuBLASLt epilogue (bf16, tf32), or the bias in that GEMM and "
               "kernels/gelu.cu after it (fp32): no bias + GELU kernel runs there to swap",
               {}}};
  k.cost = [](const std::vector<int64_t>& d, const std::string& p) {
    const double rows = double(d[0]), C = double(d[1]), es = element_bytes(p);
    return Cost{rows * C * es + C * es, rows * C * es, 0};
  };
  k.tolerance = kStorageTolerance;
  // The tanh form's error is absolute: tanhf's few ulp of 1 in 1 + tanh z, times x / 2. Near
  // x = -3.5 that is 2e-5 of a result of -9e-4 (a one-element check drawn there failed the 1e-5
  // bound); against a floor of 0.1 it is under 1e-5 everywhere. v3 and v4, the exp form, keep the
  // plain relative bound. In bf16 the storage rounding dominates both forms.
  k.error_floor = {{"v1", {{"fp32", 0.1}}}, {"v2", {{"fp32", 0.1}}}};
  return k;
}

KernelInfo attention() {
  KernelInfo k;
  k.name = "attention";
  k.summary = "causal softmax(q kᵀ / sqrt(hd)) v per head, q k v from the QKV projection [B, T, 3C], out [B, T, C]";
  k.kind = "attention";
  k.dims = {{"B", 1, 64, 1, 3}, {"T", 1, 4096, 1, 200}, {"H", 1, 64, 1, 4}, {"hd", 8, 256, 8, 64}};
  k.precisions = {"bf16", "fp32"};
  k.versions = {
      {"v1",
       "the scores materialised: S = q kᵀ, softmax, P v",
       "three kernels, one thread per output element: the B·H·T·T scores go to memory in fp32 and the "
       "probabilities come back in the storage type for P v, the formula as written",
       {},
       ""},
      {"v2",
       "online softmax, one warp per query",
       "no T x T matrix: each warp streams its query's keys once, keeping a running max and sum and rescaling its "
       "output (the online softmax), and skips the masked half; K and V are read once per query",
       {},
       ""},
      {"v3",
       "flash: K/V tiles shared in shared memory",
       "a block of 64 queries shares each K/V tile, so K and V are read T/64 times instead of T; bf16 on "
       "tensor cores with cp.async double-buffering, fp32 in FFMA (production in fp32, kernels/flash_attention*.cu)",
       {},
       ""},
      {"v4",
       "cuDNN's fused attention",
       "NVIDIA's SDPA engine through cudnn-frontend (production in bf16 before sm_90)",
       {"bf16"},
       "cuDNN, layers/gpt2/sdpa_cudnn.h"},
      {"v5",
       "flash on wgmma: warpgroup products from shared memory",
       "v3's algorithm on Hopper's warpgroup MMA: a warpgroup owns 64 query rows, Q·Kᵀ and P·V are one "
       "asynchronous instruction a 16-wide step (8x fewer than mma.sync, no ldmatrix), K and V arrive by "
       "cp.async in the 128-byte swizzle wgmma reads; the softmax costs about five instructions a score (the "
       "scale in the exponential's FFMA, the mask on diagonal tiles only, the rescale only when the running "
       "max rises by 2^8) and each P·V is waited for behind the next tile's Q·Kᵀ "
       "(kernels/flash_attention_sm90.cu; production in bf16 on sm_90, head size 64)",
       {"bf16"},
       ""},
  };
  k.production = {{"bf16", "v5"}, {"fp32", "v3"}};
  k.model_shapes = {{"gpt2 B8 T1024: h.*.attn.core", {8, 1024, 12, 64}},
                    {"gpt2 B1 T1024: h.*.attn.core", {1, 1024, 12, 64}}};
  k.odd_shapes = {
      {"one position", {1, 1, 1, 64}}, {"T not a multiple of 64", {2, 67, 3, 64}}, {"head size 32", {1, 130, 2, 32}}};
  k.models = {{"gpt2",
               "h.*.attn.core of every block",
               true,
               "not in tf32, whose attention runs cuDNN's fp16 core between fp16 projections",
               {"fp32", "bf16", "fp8"}}};
  k.cost = [](const std::vector<int64_t>& d, const std::string& p) {
    const double B = double(d[0]), T = double(d[1]), H = double(d[2]), hd = double(d[3]), es = element_bytes(p);
    return Cost{B * T * 3 * H * hd * es, B * T * H * hd * es, 2 * B * H * T * (T + 1) * hd};
  };
  k.shape_error = [](const std::vector<int64_t>& d) -> std::string {
    if (d[3] % 8 != 0)
      return "attention's hd must be a multiple of 8 (16-byte rows), not " + std::to_string(d[3]) + ".";
    return "";
  };
  k.tolerance = {{"bf16", 1e-2}, {"fp32", 1e-5}};
  return k;
}

KernelInfo embedding() {
  KernelInfo k;
  k.name = "embedding";
  k.summary = "out[b, t, :] = wte[tokens[b, t], :] + wpe[t, :]";
  k.kind = "embedding";
  k.dims = {{"B", 1, 1024, 1, 4}, {"T", 1, 65536, 1, 64}, {"C", 1, 16384, 1, 800}, {"vocab", 1, 1 << 20, 1, 3000}};
  k.precisions = {"bf16", "fp32"};
  k.versions = {
      {"v1",
       "one thread per output element",
       "a flat index split into (b, t, c) by division: every thread reads its token id again",
       {},
       ""},
      {"v2",
       "one block per token",
       "the block reads the token id once and its threads stride the row, no division in the loop "
       "(kernels/embedding.cu's general kernel, production's fallback)",
       {},
       ""},
      {"v3",
       "one block per token, 16-byte vectors",
       "8 bf16 or 4 fp32 a load and a store where the rows are 16-byte aligned: a quarter to an eighth of the "
       "memory instructions (production, kernels/embedding.cu)",
       {},
       ""},
  };
  k.production = kV3;
  k.model_shapes = {{"gpt2 B8 T1024: wte + wpe", {8, 1024, 768, 50257}}};
  k.odd_shapes = {
      {"one token", {1, 1, 1, 1}}, {"odd sizes", {3, 37, 771, 1000}}, {"the vector path", {2, 33, 768, 500}}};
  k.models = {{"gpt2", "wte + wpe at the start of every forward", true, "", {"fp32", "tf32", "bf16", "fp8"}}};
  k.cost = [](const std::vector<int64_t>& d, const std::string& p) {
    const double B = double(d[0]), T = double(d[1]), C = double(d[2]), es = element_bytes(p);
    return Cost{B * T * 4 + B * T * C * es + T * C * es, B * T * C * es, 0};
  };
  k.tolerance = kStorageTolerance;
  return k;
}

KernelInfo residual() {
  KernelInfo k;
  k.name = "residual";
  k.summary = "out = x + r over [rows, C] (the residual stream's add)";
  k.kind = "elementwise";
  k.dims = rows_c(65536, 4200);
  k.precisions = {"bf16", "fp32"};
  k.versions = {
      {"v1",
       "one thread per element",
       "x + r, one element a thread: a 2-byte load moves little per memory instruction",
       {},
       ""},
      {"v2", "16-byte vectors", "8 bf16 or 4 fp32 a thread (uint4 loads and stores), a scalar tail", {}, ""},
      {"v3",
       "16-byte vectors, two in flight a thread",
       "each thread issues the loads of two vectors before it uses either (more bytes in flight), in a grid "
       "sized to the GPU",
       {},
       ""},
  };
  k.production = kV3;
  k.model_shapes = {{"gpt2 B8 T1024: the residual stream", {8192, 768}}};
  k.odd_shapes = {{"one element", {1, 1}}, {"odd rows and C", {37, 771}}, {"the vector path, ragged", {3, 4104}}};
  k.models = {{"gpt2",
               "x += attn(...), x += mlp(...) in every block",
               false,
               "GPT-2 adds the residual inside the projection GEMMs (cuBLASLt, beta = 1): no residual kernel runs; "
               "this ladder is what that fusion saves",
               {}}};
  k.cost = [](const std::vector<int64_t>& d, const std::string& p) {
    const double n = double(d[0]) * double(d[1]), es = element_bytes(p);
    return Cost{2 * n * es, n * es, 0};
  };
  k.tolerance = kStorageTolerance;
  return k;
}

KernelInfo residual_layernorm() {
  KernelInfo k;
  k.name = "residual_layernorm";
  k.summary = "x' = x + r (the residual stream, written), then y = layernorm(x') over each row of [rows, C]";
  k.kind = "norm";
  k.dims = rows_c(16384, 2100);
  k.precisions = {"bf16", "fp32"};
  k.versions = {
      {"v1",
       "an add kernel, then a LayerNorm kernel, plain",
       "residual v1 writes x + r and layernorm v1 reads it back: the sum's round trip through memory, each kernel "
       "in its plainest form",
       {},
       ""},
      {"v2",
       "an add kernel, then a LayerNorm kernel, each at its best",
       "residual v3 and layernorm v6: the same round trip, each pass at the bandwidth floor",
       {},
       ""},
      {"v3",
       "fused: one warp per row",
       "the warp adds r to x in registers, writes x + r for the residual stream and normalises the sum it still "
       "holds: x + r is never read back, four passes over the row instead of five (kernels/residual.cu, its "
       "registers sized to the row as layernorm v4's; the unfused pair where the row does not fit the registers)",
       {},
       ""},
  };
  k.production = kV3;
  k.model_shapes = {{"gpt2 B8 T1024: x + attn, then ln_2", {8192, 768}}};
  k.odd_shapes = {{"one element", {1, 1}},
                  {"odd rows and C", {37, 771}},
                  {"the fused path, a ragged block", {67, 768}},
                  {"past the fused path", {5, 2056}}};
  k.models = {{"gpt2",
               "x + attn(ln_1(x)), then ln_2",
               false,
               "GPT-2 fuses the add into the projection GEMMs instead, and runs ln_2 alone after it",
               {}}};
  k.cost = [](const std::vector<int64_t>& d, const std::string& p) {
    const double rows = double(d[0]), C = double(d[1]), es = element_bytes(p);
    return Cost{rows * C * es * 2 + 2 * C * es, rows * C * es * 2, 0};
  };
  k.tolerance = kStorageTolerance;
  return k;
}

// --- fp8 -----------------------------------------------------------------------------------

KernelInfo quantize() {
  KernelInfo k;
  k.name = "quantize";
  k.summary = "q = e4m3(x · inv_scale), rounded to nearest even and saturated to ±448; x bf16 [rows, C]";
  k.kind = "elementwise";
  k.dims = rows_c(65536, 4200);
  k.precisions = {"fp8"};
  k.versions = {
      {"v1",
       "one thread per element",
       "as many threads as elements, each reading the inverse scale from device memory",
       {},
       ""},
      {"v2",
       "grid-stride loop",
       "a grid sized to the GPU, each thread looping: the scale read once a thread, far fewer blocks "
       "(kernels/fp8.cu's general kernel, production's fallback)",
       {},
       ""},
      {"v3",
       "8 elements a thread: 16 bytes in, 8 out",
       "bf16 loads of 16 bytes and e4m3 stores of 8 (production, kernels/fp8.cu)",
       {},
       ""},
  };
  k.production = kV3;
  k.model_shapes = {{"gpt2 B8 T1024 fp8: attn.c_proj's input (the heads)", {8192, 768}},
                    {"resnet50 B256 fp8: a layer1 activation [256, 56, 56, 256]", {802816, 256}}};
  k.odd_shapes = {{"one element", {1, 1}}, {"odd rows and C", {37, 771}}, {"the vector path", {3, 4104}}};
  const std::string note =
      "fp8's layers (layers/linear.cpp, layers/resnet50/conv2d.cpp) call the production quantizer; "
      "--kernel is not wired there";
  k.models = {{"gpt2", "-p fp8: the input of each e4m3 GEMM whose producer writes bf16", false, note, {}},
              {"resnet50", "-p fp8: the input of each e4m3 convolution", false, note, {}}};
  k.cost = [](const std::vector<int64_t>& d, const std::string&) {
    const double n = double(d[0]) * double(d[1]);
    return Cost{n * 2 + 4, n, 0};  // bf16 in and the scale, e4m3 out
  };
  k.tolerance = kExact;
  return k;
}

KernelInfo amax() {
  KernelInfo k;
  k.name = "amax";
  k.summary = "*amax = max(*amax, max |x|) over x bf16 [rows, C] (fp8 calibration; a NaN wins)";
  k.kind = "elementwise";
  k.dims = rows_c(65536, 4200);
  k.precisions = {"fp8"};
  k.versions = {
      {"v1",
       "one atomicMax per element",
       "every thread lands its |x| with an atomic on one address: they queue in L2",
       {},
       ""},
      {"v2", "a warp's max, one atomic a warp", "shuffles reduce 32 values first: 32 times fewer atomics", {}, ""},
      {"v3",
       "grid-stride, a block's max, one atomic a block",
       "each thread keeps a running max over many elements and the block reduces its warps in shared memory "
       "(production, kernels/fp8.cu)",
       {},
       ""},
  };
  k.production = kV3;
  k.model_shapes = {{"gpt2 B8 T1024 fp8: a GEMM input", {8192, 768}},
                    {"resnet50 B256 fp8: a layer1 activation [256, 56, 56, 256]", {802816, 256}}};
  k.odd_shapes = {{"one element", {1, 1}}, {"odd rows and C", {37, 771}}, {"many blocks", {300, 4104}}};
  const std::string note = "calibration only: it runs once at build, never in a forward";
  k.models = {{"gpt2", "-p fp8 calibration: every e4m3 GEMM's input and weight", false, note, {}},
              {"resnet50", "-p fp8 calibration: every e4m3 convolution's input and weight", false, note, {}}};
  k.cost = [](const std::vector<int64_t>& d, const std::string&) {
    return Cost{double(d[0]) * double(d[1]) * 2 + 4, 4, 0};  // bf16 in and amax read, amax written
  };
  k.tolerance = kExact;
  return k;
}

// --- ResNet-50 -----------------------------------------------------------------------------

KernelInfo maxpool() {
  KernelInfo k;
  k.name = "maxpool";
  k.summary = "3 x 3 max pool, stride 2, padding 1 (padded positions never win), NHWC [N, H, W, C]";
  k.kind = "pool";
  k.dims = {{"N", 1, 4096, 1, 3}, {"H", 1, 8192, 1, 40}, {"W", 1, 8192, 1, 40}, {"C", 1, 8192, 1, 80}};
  k.precisions = {"bf16", "fp32"};
  k.versions = {
      {"v1",
       "one output element a thread",
       "each thread loops over its clipped 3 x 3 window, one element a load (kernels/pooling.cu's general kernel, "
       "production's fallback)",
       {},
       ""},
      {"v2",
       "16-byte vectors, one output a thread",
       "8 bf16 or 4 fp32 channels of one output pixel: 9 wide loads "
       "instead of 9 narrow ones per channel",
       {},
       ""},
      {"v3",
       "16-byte vectors, two outputs a thread",
       "two horizontally adjacent outputs share a window column: 15 loads for two outputs instead of 18, the window "
       "clamped onto the image with no branch (production, kernels/pooling.cu)",
       {},
       ""},
  };
  k.production = kV3;
  k.model_shapes = {{"resnet50 B256 224x224: maxpool", {256, 112, 112, 64}}};
  k.odd_shapes = {{"one pixel", {1, 1, 1, 8}},
                  {"odd sides, odd C", {2, 7, 9, 12}},
                  {"odd sides, the vector path", {1, 13, 11, 64}},
                  {"a 2 x 2 image", {3, 2, 2, 16}}};
  k.models = {{"resnet50",
               "maxpool after the stem",
               true,
               "with --stem cudnn (and in fp32 and tf32): bf16's default fused stem runs the max pool inside its "
               "own kernel",
               {"fp32", "tf32", "bf16", "fp8"}}};
  k.cost = [](const std::vector<int64_t>& d, const std::string& p) {
    const double N = double(d[0]), C = double(d[3]), es = element_bytes(p);
    const double Ho = double((d[1] - 1) / 2 + 1), Wo = double((d[2] - 1) / 2 + 1);
    return Cost{N * double(d[1]) * double(d[2]) * C * es, N * Ho * Wo * C * es, 0};
  };
  k.tolerance = kExact;
  return k;
}

KernelInfo avgpool() {
  KernelInfo k;
  k.name = "avgpool";
  k.summary = "global average pool before the classifier: y[N, C] = mean over H x W of x [N, H, W, C], fp32 sums";
  k.kind = "pool";
  k.dims = {{"N", 1, 65535, 1, 3}, {"H", 1, 1024, 1, 7}, {"W", 1, 1024, 1, 7}, {"C", 1, 8192, 1, 80}};
  k.precisions = {"bf16", "fp32"};
  k.versions = {
      {"v1",
       "one output element a thread",
       "each thread walks its channel down all H x W pixels, one 2-byte load at a time: a warp's load is 64 "
       "contiguous bytes and a thread has its 49 loads in a row, so few bytes are in flight (v3's fallback)",
       {},
       ""},
      {"v2",
       "16-byte vectors, one output vector a thread",
       "8 bf16 or 4 fp32 channels a load, 512 contiguous bytes a warp-load, but a thread still walks all 49 "
       "pixels in a row, and there are 8 times fewer threads: 65536 at ResNet-50's B256, half a wave of the "
       "H200's resident threads",
       {},
       ""},
      {"v3",
       "16-byte vectors, the pixels split over a block's warps",
       "a block takes 32 vectors of channels of one image; each of its 8 warps sums every eighth pixel, and "
       "warp 0 adds the 8 partial sums from shared memory: v2's wide loads with 8 times the threads and "
       "loads in flight (kernels/pooling.cu's global_avgpool_forward)",
       {},
       ""},
  };
  k.production = {{"bf16", "v3"}, {"fp32", "v3"}};
  k.model_shapes = {{"resnet50 B256 224x224: avgpool", {256, 7, 7, 2048}}};
  k.odd_shapes = {{"one pixel", {1, 1, 1, 8}},
                  {"odd sides, odd C", {2, 3, 5, 12}},
                  {"C not a multiple of a block's 32 vectors", {3, 7, 7, 264}},
                  {"a 2 x 2 image", {4, 2, 2, 16}}};
  k.models = {{"resnet50",
               "avgpool before fc",
               true,
               "fp8's e4m3 stream pools its e4m3 activations in a kernel of its own",
               {"fp32", "tf32", "bf16"}}};
  k.cost = [](const std::vector<int64_t>& d, const std::string& p) {
    const double N = double(d[0]), C = double(d[3]), es = element_bytes(p);
    return Cost{N * double(d[1]) * double(d[2]) * C * es, N * C * es, 0};
  };
  k.tolerance = kStorageTolerance;
  return k;
}

KernelInfo conv_epilogue() {
  KernelInfo k;
  k.name = "conv_epilogue";
  k.summary = "y = act(y + bias[c] (+ residual)) in place over NHWC [rows, C] (folded BatchNorm's bias; act: ReLU)";
  k.kind = "elementwise";
  k.dims = {{"rows", 1, kMaxRows, 1, 300}, {"C", 1, 16384, 1, 600}, {"residual", 0, 1, 0, 1}, {"relu", 0, 1, 0, 1}};
  k.precisions = {"bf16", "fp32"};
  k.versions = {
      {"v1",
       "three passes: bias, residual, ReLU",
       "one kernel per term, one thread per element: the tensor goes through memory three times",
       {},
       ""},
      {"v2",
       "one fused pass, grid-stride",
       "bias, residual and ReLU in one read and one write, the ReLU a template parameter "
       "(kernels/conv_epilogue.cu's general kernel, production's fallback)",
       {},
       ""},
      {"v3",
       "fused, 16-byte vectors",
       "8 bf16 or 4 fp32 channels a load, the bias's too, where C is a multiple of the vector "
       "(production, kernels/conv_epilogue.cu)",
       {},
       ""},
  };
  k.production = kV3;
  k.model_shapes = {{"resnet50 B256: layer1's conv3, + residual, ReLU", {802816, 256, 1, 1}},
                    {"resnet50 B256: layer1's conv1, ReLU", {802816, 64, 0, 1}},
                    {"resnet50 B256: layer4's conv3, + residual, ReLU", {12544, 2048, 1, 1}}};
  k.odd_shapes = {{"one element", {1, 1, 1, 1}},
                  {"odd rows and C", {37, 771, 1, 1}},
                  {"no residual, no ReLU", {33, 2048, 0, 0}},
                  {"the vector path, no residual", {129, 64, 0, 1}}};
  k.models = {{"resnet50",
               "every convolution's bias, residual and ReLU where cuDNN cannot fuse them",
               false,
               "the convolutions run their epilogue inside cuDNN's or cuBLASLt's call on every route chosen today "
               "(layers/resnet50/conv2d.h); this kernel is ConvRoute::Separate's",
               {}}};
  k.cost = [](const std::vector<int64_t>& d, const std::string& p) {
    const double rows = double(d[0]), C = double(d[1]), es = element_bytes(p);
    return Cost{rows * C * es * (1 + double(d[2])) + C * es, rows * C * es, 0};
  };
  k.tolerance = kStorageTolerance;
  return k;
}

KernelInfo stem() {
  KernelInfo k;
  k.name = "stem";
  k.summary =
      "ResNet's stem in one kernel: 4 x 4 stride-1 conv on the image's 2 x 2 space-to-depth transform "
      "(16 channels; the 7 x 7 stride-2 conv rewritten) + bias + ReLU + 3 x 3/2 max pool, NHWC bf16, fp32 sums";
  k.kind = "conv";
  k.dims = {{"N", 1, 4096, 1, 3}, {"Hs", 4, 1024, 4, 40}, {"C", 8, 64, 8, 64}};
  k.precisions = {"bf16"};
  k.versions = {
      {"v1",
       "one thread a pooled output, CUDA cores",
       "the loop a learner writes first: each thread computes the nine conv pixels of its pooling window "
       "(2304 multiply-adds, fp32 on CUDA cores), rounds each after the ReLU and keeps the max; the conv output "
       "never reaches memory, but every conv pixel is computed up to four times",
       {},
       ""},
      {"v2",
       "tensor cores through mma.sync, a ring of conv rows",
       "the implicit GEMM (M = pixels, N = channels, K = 256) on mma.sync from ldmatrix fragments; persistent "
       "blocks stage the weights once, double-buffer the input rows and keep five conv rows in a shared-memory "
       "ring, so each conv pixel is computed once and pooled from there (kernels/stem.cu; production before sm_90)",
       {},
       ""},
      {"v3",
       "wgmma: the weights in registers, the pixels as the staged rows",
       "the GEMM transposed onto wgmma (M = 64 channels from registers, N = 112 pixels of one conv row from shared "
       "memory): each "
       "k-step's operand is the staged input itself shifted by a row and a column, no im2col, and the tensor "
       "cores run asynchronously at four warps a scheduler's worth of work (kernels/stem_sm90.cu; production on "
       "sm_90, 64 channels; n/a elsewhere)",
       {},
       ""},
      {"v4",
       "wgmma with the pool overlapped: a warpgroup of its own, the MMA warpgroups in ping-pong",
       "v3's tensor cores sat idle 55% of the time, through its epilogue and pool phase (each warp alone on its "
       "scheduler); here a third warpgroup pools step s while the MMA warpgroups compute step s + 1 (a ring of nine "
       "rows, named barriers), the two take the rows in turn at the tensor cores so that one's epilogue runs under "
       "the other's MMA, and the epilogue has no shuffle: a conversion and two 2-byte stores a value pair "
       "(not production: on the H200 it ran 4% slower than v3, its pool warpgroup idle and the epilogue still "
       "longer than a row's MMA; sm_90, 64 channels, conv side <= 112)",
       {},
       ""},
  };
  k.production = {{"bf16", "v3"}};
  k.model_shapes = {{"resnet50 B256 224x224: conv1 + maxpool", {256, 115, 64}},
                    {"resnet50 B32 224x224: conv1 + maxpool", {32, 115, 64}},
                    {"resnet50 B1 224x224: conv1 + maxpool", {1, 115, 64}}};
  k.odd_shapes = {{"the smallest side: one conv pixel", {1, 4, 64}},
                  {"odd sides, 64 channels", {3, 35, 64}},
                  {"a narrow stem", {2, 19, 8}},
                  {"the model's side, two images", {2, 115, 64}},
                  {"24 channels, an odd side", {1, 33, 24}}};
  k.models = {{"resnet50",
               "conv1 and the max pool after it: bf16's default fused stem",
               true,
               "with the fused stem, not with --stem cudnn; in fp8 the fused stem writes e4m3, which only "
               "production does",
               {"bf16"}}};
  k.cost = [](const std::vector<int64_t>& d, const std::string&) {
    const double N = double(d[0]), Hs = double(d[1]), C = double(d[2]), So = double(d[1] - 3);
    const double Po = double((d[1] - 4) / 2 + 1);
    // The 7 x 7 x 3 convolution's multiply-adds: the s2d form's zero taps are not work that must be done.
    return Cost{N * Hs * Hs * 16 * 2 + C * 256 * 2 + C * 2, N * Po * Po * C * 2, 2 * N * So * So * C * 147};
  };
  k.shape_error = [](const std::vector<int64_t>& d) -> std::string {
    if (d[2] % 8 != 0) return "the stem takes output channels in steps of 8, not " + std::to_string(d[2]) + ".";
    return "";
  };
  k.tolerance = kStorageTolerance;
  return k;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(sep, start);
    parts.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

// A user's word inside a sentence: at most 40 characters, quoted.
std::string quoted(const std::string& s) { return "'" + (s.size() > 40 ? s.substr(0, 40) + "..." : s) + "'"; }

}  // namespace

const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> p{"fp32", "bf16", "fp8"};
  return p;
}

int KernelInfo::version_index(const std::string& id) const {
  for (size_t i = 0; i < versions.size(); ++i)
    if (versions[i].id == id) return static_cast<int>(i);
  return -1;
}

namespace {
// The value a per-version map holds for (version, precision), else `fallback`.
double per_version(const std::map<std::string, std::map<std::string, double>>& m, const std::string& id,
                   const std::string& precision, double fallback) {
  const auto v = m.find(id);
  if (v == m.end()) return fallback;
  const auto p = v->second.find(precision);
  return p == v->second.end() ? fallback : p->second;
}
}  // namespace

double KernelInfo::floor_of(int version, const std::string& precision) const {
  if (version < 0 || version >= static_cast<int>(versions.size())) return 0;  // a learner's file: the plain bound
  return per_version(error_floor, versions[static_cast<size_t>(version)].id, precision, 0);
}

double KernelInfo::bound_of(int version, const std::string& precision) const {
  if (version < 0 || version >= static_cast<int>(versions.size())) return tolerance.at(precision);
  return per_version(version_tolerance, versions[static_cast<size_t>(version)].id, precision, tolerance.at(precision));
}

int KernelInfo::production_index(const std::string& precision) const {
  const auto it = production.find(precision);
  return it == production.end() ? -1 : version_index(it->second);
}

bool KernelInfo::has_precision(const std::string& precision) const {
  return std::find(precisions.begin(), precisions.end(), precision) != precisions.end();
}

bool KernelInfo::runs_in(const Version& v, const std::string& precision) const {
  if (!has_precision(precision)) return false;
  return v.precisions.empty() || std::find(v.precisions.begin(), v.precisions.end(), precision) != v.precisions.end();
}

int KernelInfo::dim_index(const std::string& dim) const {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i].name == dim) return static_cast<int>(i);
  return -1;
}

const std::vector<KernelInfo>& kernels() {
  static const std::vector<KernelInfo> all{layernorm(),          bias_gelu(), attention(), embedding(), residual(),
                                           residual_layernorm(), quantize(),  amax(),      maxpool(),   avgpool(),
                                           conv_epilogue(),      stem()};
  return all;
}

const KernelInfo* find_kernel(const std::string& name) {
  for (const KernelInfo& k : kernels())
    if (k.name == name) return &k;
  return nullptr;
}

std::string unknown_kernel(const std::string& name) {
  if (find_kernel(name)) return "";
  std::vector<std::string> names;
  for (const KernelInfo& k : kernels()) names.push_back(k.name);
  return "unknown kernel " + quoted(name) + ": choose one of " + join(names, ", ") + " (`laptime lab --list`).";
}

std::string parse_versions(const KernelInfo& k, const std::string& text, std::vector<int>* indices) {
  indices->clear();
  std::vector<std::string> ids;
  for (const Version& v : k.versions) ids.push_back(v.id);
  if (text == "all") {
    for (size_t i = 0; i < k.versions.size(); ++i) indices->push_back(static_cast<int>(i));
    return "";
  }
  if (text == "none") return "";
  for (const std::string& id : split(text, ',')) {
    const int i = k.version_index(id);
    if (i < 0)
      return "--versions: " + k.name + " has no version " + quoted(id) + ": it has " + join(ids, ", ") +
             " (or all, or none).";
    if (std::find(indices->begin(), indices->end(), i) != indices->end()) return "--versions names " + id + " twice.";
    indices->push_back(i);
  }
  std::sort(indices->begin(), indices->end());
  return "";
}

std::string shape_text(const KernelInfo& k, const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < k.dims.size() && i < dims.size(); ++i)
    s += (s.empty() ? "" : " ") + k.dims[i].name + "=" + std::to_string(dims[i]);
  return s;
}

std::string parse_shape(const KernelInfo& k, const std::string& text, Shape* shape) {
  std::vector<std::string> names;
  for (const Dim& d : k.dims) names.push_back(d.name);
  shape->label = "--shape";
  shape->dims = k.model_shapes.front().dims;
  std::vector<bool> given(k.dims.size(), false);
  for (const std::string& pair : split(text, ',')) {
    const size_t eq = pair.find('=');
    const int i = eq == std::string::npos ? -1 : k.dim_index(pair.substr(0, eq));
    if (i < 0)
      return "--shape takes NAME=VALUE pairs separated by commas, NAME one of " + k.name + "'s dimensions (" +
             join(names, ", ") + "), not " + quoted(pair) + ".";
    const Dim& d = k.dims[static_cast<size_t>(i)];
    if (given[static_cast<size_t>(i)]) return "--shape names " + d.name + " twice.";
    given[static_cast<size_t>(i)] = true;
    const std::string value = pair.substr(eq + 1);
    const bool digits = !value.empty() && value.size() <= 12 &&
                        std::all_of(value.begin(), value.end(), [](unsigned char c) { return c >= '0' && c <= '9'; });
    const int64_t v = digits ? std::stoll(value) : -1;
    if (!digits || v < d.min || v > d.max)
      return "--shape: " + d.name + " must be an integer from " + std::to_string(d.min) + " to " +
             std::to_string(d.max) + ", not " + quoted(value) + ".";
    shape->dims[static_cast<size_t>(i)] = v;
  }
  if (k.shape_error) {
    const std::string why = k.shape_error(shape->dims);
    if (!why.empty()) return "--shape: " + why;
  }
  return "";
}

int chosen_version(const KernelChoice& choice, const std::string& kernel, DType storage) {
  const auto it = choice.find(kernel);
  if (it != choice.end()) return it->second;
  return find_kernel(kernel)->production_index(storage == DType::F32 ? "fp32" : "bf16");
}

std::string add_kernel_choice(const std::string& text, KernelChoice* choice, KernelFiles* files) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return "--kernel takes NAME=VERSION (layernorm=v2) or NAME=FILE.cu, not " + quoted(text) + ".";
  const std::string name = text.substr(0, eq), id = text.substr(eq + 1);
  if (const std::string why = unknown_kernel(name); !why.empty()) return "--kernel: " + why;
  const KernelInfo& k = *find_kernel(name);
  if (choice->count(name) || (files && files->count(name))) return "--kernel names " + name + " twice.";
  if (id.size() > 3 && id.compare(id.size() - 3, 3, ".cu") == 0) {
    if (!files) return "--kernel " + name + "=FILE.cu: internal, no place for a file here.";
    (*files)[name] = id;
    return "";
  }
  const int i = k.version_index(id);
  if (i < 0) {
    std::vector<std::string> ids;
    for (const Version& v : k.versions) ids.push_back(v.id);
    return "--kernel: " + name + " has no version " + quoted(id) + ": it has " + join(ids, ", ") +
           ", or a file of yours, NAME=FILE.cu.";
  }
  (*choice)[name] = i;
  return "";
}

std::string check_kernel_choice(const KernelChoice& choice, const std::string& model, const std::string& precision,
                                const KernelFiles& files) {
  KernelChoice all = choice;
  for (const auto& [name, file] : files) all[name] = -1;  // a file: no ladder version to check
  for (const auto& [name, index] : all) {
    const KernelInfo* k = find_kernel(name);
    if (!k) return unknown_kernel(name);
    const ModelUse* use = nullptr;
    std::vector<std::string> runs;
    for (const ModelUse& m : k->models) {
      runs.push_back(m.model);
      if (m.model == model) use = &m;
    }
    if (!use)
      return "--kernel " + name + ": " + model + " runs no " + name + " kernel (" + join(runs, " and ") +
             (runs.size() == 1 ? " does" : " do") + "; `laptime lab " + name + "` runs its versions alone).";
    if (!use->swappable)
      return "--kernel " + name + ": " + model + " cannot swap it: " + use->note + ". `laptime lab " + name +
             "` runs its versions alone.";
    if (std::find(use->precisions.begin(), use->precisions.end(), precision) == use->precisions.end())
      return "--kernel " + name + " swaps into " + model + " in " + join(use->precisions, ", ") + ", not " + precision +
             (use->note.empty() ? "." : ": " + use->note + ".");
    const std::string storage = precision == "fp32" || precision == "tf32" ? "fp32" : "bf16";
    if (index < 0 || index >= static_cast<int>(k->versions.size())) {
      if (!k->has_precision(storage))
        return "--kernel " + name + " runs in " + join(k->precisions, " and ") + ", not " + storage + " (-p " +
               precision + ").";
      continue;
    }
    const Version& v = k->versions[static_cast<size_t>(index)];
    if (!k->runs_in(v, storage))
      return "--kernel " + name + "=" + v.id + " runs in " +
             join(v.precisions.empty() ? k->precisions : v.precisions, " and ") + ", not " + storage + " (-p " +
             precision + ").";
  }
  return "";
}

std::string kernel_choice_text(const KernelChoice& choice) {
  std::string s;
  for (const auto& [name, index] : choice) {
    const KernelInfo* k = find_kernel(name);
    const UserVersionInfo* file = user_version_info(name, index);
    s += (s.empty() ? "" : " ") + name + "=" +
         (file ? file->file + " (sha256 " + file->sha256.substr(0, 16) + ")"
          : k  ? version_name(*k, index)
               : "?");
  }
  return s;
}

namespace {
// Process-wide: the files this process loaded (registry.h says why).
std::vector<UserVersionInfo>& user_table() {
  static std::vector<UserVersionInfo> table;
  return table;
}
}  // namespace

int add_user_version_info(const UserVersionInfo& info) {
  const KernelInfo* k = find_kernel(info.kernel);
  if (!k) throw std::logic_error("internal: a learner's file for kernel '" + info.kernel + "', which is none.");
  int place = 0;
  for (const UserVersionInfo& u : user_table()) place += u.kernel == info.kernel;
  user_table().push_back(info);
  return static_cast<int>(k->versions.size()) + place;
}

const UserVersionInfo* user_version_info(const std::string& kernel, int index) {
  const KernelInfo* k = find_kernel(kernel);
  if (!k || index < static_cast<int>(k->versions.size())) return nullptr;
  int place = index - static_cast<int>(k->versions.size());
  for (const UserVersionInfo& u : user_table())
    if (u.kernel == kernel && place-- == 0) return &u;
  return nullptr;
}

const std::vector<UserVersionInfo>& user_version_infos() { return user_table(); }

std::string version_name(const KernelInfo& k, int index) {
  if (index >= 0 && index < static_cast<int>(k.versions.size())) return k.versions[static_cast<size_t>(index)].id;
  const UserVersionInfo* u = user_version_info(k.name, index);
  return u ? u->name : "v?";
}

}  // namespace laptime::lab
