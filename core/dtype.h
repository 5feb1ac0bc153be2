// Element types of tensors in files and on the device, and the run-time precision choice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace laptime {

// Element types laptime reads from safetensors files or keeps on the device. F8E4M3 (OCP fp8
// e4m3 "fn": 4 exponent bits, 3 mantissa bits, max 448, no infinity) lives on the device only:
// fp8 GEMM operands made at build (weights) or by the layer before (activations); a file
// holding it is refused like any other unknown type (parse_dtype does not accept it).
enum class DType { F32, F16, BF16, F64, I32, I64, U8, F8E4M3 };

std::size_t dtype_size(DType t);
const char* dtype_name(DType t);  // safetensors spelling: "F32", "BF16", ...
bool parse_dtype(const std::string& s, DType* out);

// How a model computes. Chosen at model build; weights are converted on upload.
//   FP32: fp32 storage and math, tensor-core TF32 forbidden (strict).
//   TF32: fp32 storage, GEMMs/convolutions may round inputs to TF32 on tensor cores.
//   BF16: bf16 weights and activations, fp32 accumulation, norm/softmax statistics in fp32.
//   FP8:  BF16 storage (the residual stream, norms, softmax, attention, logits, every layer
//         that stays in bf16) with e4m3 operands for the GEMMs where fp8 measured faster:
//         per-tensor scales, weights' from the weights, activations' calibrated on one batch at
//         build, fp32 accumulation (layers/linear.h has the recipe). Needs sm_89 or newer.
enum class Precision { FP32, TF32, BF16, FP8 };

const char* precision_name(Precision p);  // "fp32", "tf32", "bf16", "fp8"

// Storage type of weights and activations for a precision (FP8 stores bf16; its fp8 operands
// are extra copies made where a layer runs in fp8).
inline DType activation_dtype(Precision p) {
  return p == Precision::BF16 || p == Precision::FP8 ? DType::BF16 : DType::F32;
}

}  // namespace laptime
