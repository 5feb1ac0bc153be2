#include "trace/analyses/program.h"

#include <string>
#include <unordered_set>

#include "trace/analyses/iterations.h"

namespace laptime::trace {

const char* program_name(Program p) {
  switch (p) {
    case Program::Laptime:
      return "laptime";
    case Program::PyTorch:
      return "PyTorch";
    case Program::Other:
      return "other";
  }
  return "?";
}

namespace {

bool starts(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

bool is_aten_kernel(const std::string& name) {
  // Demangled: "void at::native::vectorized_elementwise_kernel<...>(...)" as nsys prints it, "void
  // at::vectorized_elementwise_kernel<...>" as ncu does (inline namespaces dropped), ATen's CUDA
  // helpers under at::cuda.
  return starts(name, "void at::") || starts(name, "at::") || name.find("at::native::") != std::string::npos ||
         name.find("at::cuda::") != std::string::npos;
}

bool is_emit_nvtx_range(const std::string& text) { return starts(text, "aten::"); }

Program identify_program(const Trace& t, std::optional<uint32_t> pid) {
  auto ours = [&](uint32_t p) { return !pid || p == *pid; };
  if (starts(t.source, "laptime")) return Program::Laptime;
  if (t.format == TraceFormat::Kineto) return Program::PyTorch;  // torch.profiler wrote it
  for (const NvtxEvent& e : t.nvtx)
    if (ours(e.pid) && e.domain.str() == "laptime") return Program::Laptime;
  std::unordered_set<uint32_t> pids;
  if (pid)
    pids.insert(*pid);
  else
    for (const auto& [thread, name] : t.thread_names) pids.insert(thread.first);
  for (uint32_t p : pids) {
    const std::string name = process_name(t, p);
    if (name == "laptime") return Program::Laptime;
    if (starts(name, "python") || name == "pt_main_thread") return Program::PyTorch;
  }
  // Kernel names are interned: each distinct one is looked at once.
  std::unordered_set<const void*> looked;
  for (const Kernel& k : t.kernels)
    if (ours(k.pid) && looked.insert(k.name.key()).second && is_aten_kernel(k.name.str())) return Program::PyTorch;
  for (const NvtxEvent& e : t.nvtx)
    if (ours(e.pid) && is_emit_nvtx_range(e.text.str())) return Program::PyTorch;
  return Program::Other;
}

}  // namespace laptime::trace
