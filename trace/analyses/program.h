// Who made the trace, so that advice is in the user's own terms: laptime's bench gets laptime's
// flags (`--graph`, run without `--pitfall`), a PyTorch loop PyTorch's remedies (torch.cuda.graphs,
// torch.compile(mode="reduce-overhead"), pin_memory=True, `.item()` out of the loop), any other
// program CUDA's own (stream capture, pinned memory).
//
// The rules, first that applies, over the reported process's rows (the whole trace's without one):
//   laptime   an NVTX range in the `laptime` domain, a process named laptime, or a trace laptime's
//             own CUPTI tracer wrote
//   PyTorch   the PyTorch profiler's trace, the process is named python* or pt_main_thread, a kernel of ATen (at::native::...,
//             at::cuda::...), or an emit_nvtx range ("aten::linear, seq = 3")
//   other     otherwise
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "trace/model/trace.h"

namespace laptime::trace {

enum class Program { Laptime, PyTorch, Other };
// "laptime", "PyTorch", "other": what the JSON's "program" says.
const char* program_name(Program p);

Program identify_program(const Trace& t, std::optional<uint32_t> pid);

// The rules' pieces, for an Nsight Compute report too (trace/ncu/ncu_layers.h): a kernel of ATen,
// from its demangled name; an NVTX range PyTorch's emit_nvtx opened, from its text.
bool is_aten_kernel(const std::string& demangled);
bool is_emit_nvtx_range(const std::string& text);

}  // namespace laptime::trace
