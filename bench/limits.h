// The bounds `laptime bench` and `laptime forward` accept, stated once: the help text, the
// checks in cli/gpu_cli.cpp and docs/ERRORS.md all say these numbers. They are sanity bounds
// for a command line (a typo of three extra zeros is refused in one sentence rather than
// after minutes of allocation); the models check their own shapes on top.
#pragma once

#include <cstdint>
#include <string>

#include "core/check.h"

namespace laptime::limits {

inline constexpr int64_t kMaxBatch = 65536;
inline constexpr int64_t kMaxSeq = 65536;  // the weights' n_ctx is checked by the model
inline constexpr int64_t kMaxImageSize = 8192;
inline constexpr int64_t kMaxTokens = 1 << 20;  // gpt2: B*T per forward
inline constexpr int64_t kMaxWarmup = 100000;
inline constexpr int64_t kMaxIters = 1000000;
inline constexpr int64_t kMaxDevice = 1023;

// B*T in 64 bits, refused above kMaxTokens with both factors named ("B*T = 65536*65536 =
// 4294967296 tokens ..."); batch or seq 0 means "the default" and is not checked here.
inline void check_tokens(int64_t batch, int64_t seq) {
  if (batch <= 0 || seq <= 0) return;
  const int64_t tokens = batch * seq;  // both at most 65536: no overflow
  require(tokens <= kMaxTokens, "--batch times --seq must be at most " + std::to_string(kMaxTokens) +
                                    " tokens per forward, got B*T = " + std::to_string(batch) + "*" +
                                    std::to_string(seq) + " = " + std::to_string(tokens) + ".");
}

}  // namespace laptime::limits
