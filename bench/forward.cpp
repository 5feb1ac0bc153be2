// `laptime forward`: one forward pass on given inputs, logits written as raw fp32: the model as
// the build policy makes it (models/policy.h), the same as `laptime bench` times, on inputs from
// files (the bench draws its own, seeded).
#include <cstring>

#include "bench/bench.h"
#include "bench/lab/kernel_files.h"
#include "bench/limits.h"
#include "core/check.h"
#include "core/input_file.h"
#include "core/output_file.h"
#include "models/policy.h"

namespace laptime {
namespace {

// Opened without blocking and checked by its descriptor (core/input_file.h): the CLI checked
// the path already, this keeps a FIFO swapped in since from blocking the run.
std::string read_file(const std::string& path, const std::string& what) {
  try {
    return read_input(path, what, size_t{1} << 40);
  } catch (const InputError& e) {
    throw Error(e.what());
  }
}

// The logits, through a temporary renamed onto the output when complete (core/output_file.h).
void write_f32(OutputFile& out, const std::vector<float>& values) {
  out.write(std::string_view(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  out.commit();
}

std::vector<int32_t> read_tokens(const std::string& path) {
  const std::string raw = read_file(path, "a token file");
  require(raw.size() % sizeof(int32_t) == 0, path + " is not a whole number of int32 token ids.");
  std::vector<int32_t> tokens(raw.size() / sizeof(int32_t));
  std::memcpy(tokens.data(), raw.data(), raw.size());
  return tokens;
}

int forward_gpt2(const ForwardOptions& o, OutputFile& out) {
  require(!o.workload.weights.empty(), "laptime forward needs --weights FILE.");
  const std::vector<int32_t> tokens = read_tokens(o.tokens);
  const std::vector<int32_t> calibration = o.calibrate.empty() ? tokens : read_tokens(o.calibrate);
  const int64_t B = o.workload.batch ? o.workload.batch : 1;
  const int64_t T = o.workload.seq ? o.workload.seq : static_cast<int64_t>(tokens.size()) / B;
  require(T >= 1 && T <= limits::kMaxSeq, o.tokens + " holds " + std::to_string(tokens.size()) + " token ids: " +
                                              std::to_string(T) + " per sequence for batch " + std::to_string(B) +
                                              ", outside [1, " + std::to_string(limits::kMaxSeq) + "].");
  limits::check_tokens(B, T);
  require(static_cast<int64_t>(tokens.size()) == B * T, o.tokens + " holds " + std::to_string(tokens.size()) +
                                                            " token ids, not B*T = " + std::to_string(B) + "*" +
                                                            std::to_string(T) + " = " + std::to_string(B * T) + ".");
  require(calibration.size() == tokens.size(), o.calibrate + " holds " + std::to_string(calibration.size()) +
                                                   " token ids, not the " + std::to_string(tokens.size()) +
                                                   " of --tokens.");

  Context ctx(o.device);
  WorkloadOptions w = o.workload;
  w.batch = static_cast<int>(B);  // both within the CLI's limits
  w.seq = static_cast<int>(T);
  const Gpt2Build built = build_gpt2(ctx, w, lab::load_kernel_files);
  GPT2& model = *built.model;
  // fp8: scales from --calibrate's batch (checked like --tokens), else from the input itself.
  model.upload_tokens(ctx, calibration, w.batch, w.seq);  // checked like the tokens: same B x T, ids in range
  model.calibrate(ctx, w.batch, w.seq);
  model.upload_tokens(ctx, tokens, w.batch, w.seq);
  model.forward(ctx, w.batch, w.seq);
  write_f32(out, model.logits_to_host(ctx, w.batch, w.seq));
  return 0;
}

// Images as PyTorch takes them, fp32 NCHW [B, 3, S, S]; S from --image-size, else the file's.
int forward_resnet50(const ForwardOptions& o, OutputFile& out) {
  require(!o.workload.weights.empty(), "laptime forward needs --weights FILE.");
  SafeTensors file = SafeTensors::open(o.workload.weights);
  const ResNetConfig cfg = ResNetConfig::from_file(file);
  const int B = o.workload.batch ? o.workload.batch : 1;
  const int S = o.workload.image_size ? o.workload.image_size : cfg.image_size;
  check_resnet50_input(cfg, B, S);
  auto read_images = [&](const std::string& path) {
    const std::string raw = read_file(path, "an image file");
    const std::size_t n = std::size_t(B) * 3 * S * S;
    require(raw.size() == n * sizeof(float),
            path + " holds " + std::to_string(raw.size()) + " bytes, not the " + std::to_string(n * sizeof(float)) +
                " of " + std::to_string(B) + " fp32 images of 3x" + std::to_string(S) + "x" + std::to_string(S) + ".");
    std::vector<float> images(n);
    std::memcpy(images.data(), raw.data(), raw.size());
    return images;
  };
  const std::vector<float> images = read_images(o.input);
  const std::vector<float> calibration = o.calibrate.empty() ? std::vector<float>() : read_images(o.calibrate);

  Context ctx(o.device);
  WorkloadOptions w = o.workload;
  w.batch = B;
  w.image_size = S;
  const Resnet50Build built = build_resnet50(ctx, w, lab::load_kernel_files);
  ResNet50& model = *built.model;
  // fp8: scales from --calibrate's images, else from the input itself.
  model.upload_input(ctx, calibration.empty() ? images : calibration, B);
  model.calibrate(ctx, B);
  model.upload_input(ctx, images, B);
  model.forward(ctx, B);
  write_f32(out, model.logits_to_host(ctx, B));
  return 0;
}

}  // namespace

int run_forward(const ForwardOptions& o) {
  // The output is checked and opened before any work: never one of the inputs, never a device.
  std::vector<std::string> inputs{o.workload.weights, o.tokens, o.input, o.calibrate};
  for (const auto& [name, path] : o.workload.kernel_files) inputs.push_back(path);  // --kernel NAME=FILE.cu
  OutputFile out({"logits", o.output}, inputs);
  if (o.workload.model == "gpt2") return forward_gpt2(o, out);
  if (o.workload.model == "resnet50") return forward_resnet50(o, out);
  throw Error("laptime forward does not support '" + o.workload.model + "' yet.");
}

}  // namespace laptime
