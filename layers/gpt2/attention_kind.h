// Which implementation computes the attention core softmax(q·kᵀ/sqrt(hd)) · v of GPT-2's
// causal self-attention (the QKV and output projections are cuBLASLt GEMMs in every case).
// Kept apart from layers/gpt2/attention.h so that the CLI can name the choice without the layer.
#pragma once

namespace laptime {

//   Auto:  the fastest measured for the precision (docs/history/gpt2-notes.md): bf16 (and fp8's
//          bf16 core) -> Wgmma where it runs, else Cudnn; tf32 -> Cudnn (Flash where cuDNN refuses
//          the shape), fp32 -> Flash (Naive where the head size is not 16, 32 or 64). One function
//          decides: auto_kind in layers/gpt2/attention.cpp.
//   Cudnn: cuDNN's fused attention (SDPA graph through cudnn-frontend), bf16; in tf32 an fp16
//          core with fp16 projections around it (inputs rounded to the 10-bit mantissa TF32 also
//          rounds to: layers/gpt2/attention.h). Not strict fp32.
//   Flash: our FlashAttention-2 style kernels, no T x T matrix in memory: bf16 with head size 64
//          (kernels/flash_attention.cu, tensor cores); fp32 and tf32 with head size 16, 32 or 64
//          (kernels/flash_attention_f32.cu, fp32 FFMA, exact in strict fp32).
//   Wgmma: the flash algorithm on Hopper's warpgroup MMA (kernels/flash_attention_sm90.cu): bf16
//          with head size 64 on an sm_90 GPU, in a build for sm_90.
//   Naive: the T x T score matrix materialised: split heads, batched GEMM, softmax, batched
//          GEMM, merge heads. Every precision.
enum class AttentionKind { Auto, Cudnn, Flash, Wgmma, Naive };

inline const char* attention_kind_name(AttentionKind k) {
  switch (k) {
    case AttentionKind::Auto:
      return "auto";
    case AttentionKind::Cudnn:
      return "cudnn";
    case AttentionKind::Flash:
      return "flash";
    case AttentionKind::Wgmma:
      return "wgmma";
    case AttentionKind::Naive:
      return "naive";
  }
  return "?";
}

}  // namespace laptime
