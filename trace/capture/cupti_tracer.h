// `laptime bench ... --trace FILE`: capture the run with CUPTI's Activity API, no Nsight
// Systems needed, into the trace model, saved in the nsys SQLite schema subset that
// `laptime analyze` reads (save_nsys_sqlite).
//
// What it records, as nsys's `--trace=cuda,nvtx` does:
//   CONCURRENT_KERNEL, MEMCPY, MEMSET   GPU work (kernel names demangled, shortName derived)
//   RUNTIME, DRIVER                     host API calls, joined to GPU work by correlation id
//   SYNCHRONIZATION                     what each synchronize call waited for
//   MARKER, MARKER_DATA                 NVTX ranges with domain, payload and category: CUPTI
//                                       receives them as the process's NVTX injection
//
// NVTX reaches CUPTI only if CUPTI is the NVTX injection library, which NVTX looks up (in
// NVTX_INJECTION64_PATH) once, at the process's first NVTX call. So the tracer must be
// constructed before anything calls NVTX or CUDA: first thing in run_bench. If NVTX was
// already initialized, the trace simply has no ranges, and a note says why.
//
// Known hazard: some CUPTI 13.0 builds crash inside nvtxNameOsThreadA when CUPTI is the
// NVTX injection. While a tracer injects NVTX (injects_nvtx()), don't call the
// nvtxName* resource-naming functions; name the thread with name_current_thread() instead.
//
// CUPTI delivers records through process-wide C callbacks, so at most one tracer can be
// alive at a time (a second construction throws TraceError).
#pragma once

#include <memory>
#include <string>

#include "trace/model/error.h"
#include "trace/model/trace.h"

namespace laptime::trace {

enum class NvtxCapture {
  Inject,  // make CUPTI the NVTX injection (unless another tool already is) and record ranges
  Off,     // leave NVTX alone: kernels and API calls only
};

struct CuptiState;  // what the CUPTI callbacks fill; cupti_tracer.cpp

class CuptiTracer {
 public:
  // Starts recording. Throws TraceError when CUPTI refuses (another tracer alive, a profiler
  // such as nsys or ncu already attached, CUPTI missing) with CUPTI's own message.
  explicit CuptiTracer(NvtxCapture nvtx = NvtxCapture::Inject);
  ~CuptiTracer();  // stops if still recording; never throws
  CuptiTracer(const CuptiTracer&) = delete;
  CuptiTracer& operator=(const CuptiTracer&) = delete;

  // True when this tracer made CUPTI the NVTX injection: see the hazard above.
  bool injects_nvtx() const { return injects_nvtx_; }

  // Records a name for the calling thread, as nvtxNameOsThreadA would, without NVTX.
  void name_current_thread(const std::string& name);

  // Flushes every buffer and stops recording. Call after the GPU work has finished
  // (cudaDeviceSynchronize), or its last records may still be in flight.
  void stop();

  // The capture, finalized. Stops first if needed; call once.
  Trace take();

 private:
  std::unique_ptr<CuptiState> state_;
  bool injects_nvtx_ = false;
  bool stopped_ = false;
};

}  // namespace laptime::trace
