// The PyTorch profiler's trace (Kineto's Chrome trace-event JSON: what `torch.profiler`'s
// `export_chrome_trace` and `tensorboard_trace_handler` write, `*.pt.trace.json`, often gzipped)
// read into the trace model the nsys reader fills, so every question, diff and the job view read
// it unchanged.
//
// One streaming pass (RapidJSON's SAX reader over trace/read/byte_source.h, gzip inflated as it
// is read): memory holds the rows kept, never the document. What becomes what:
//   kernel, gpu_memcpy, gpu_memset   Kernel, Memcpy, Memset on the GPU's device and stream (args
//                                    `device`, `stream`); pid: the process whose runtime call has
//                                    the same `correlation` (Kineto draws GPU rows as pid = device)
//                                    A copy's direction and memory kinds come from its name
//                                    ("Memcpy HtoD (Pageable -> Device)"), as Kineto writes them.
//   cuda_runtime, cuda_driver        ApiCall (the launch, the synchronizing call), `correlation`
//                                    from args; where a row lacks it, the `ac2g` flow that starts
//                                    or ends at the row's thread and time gives it.
//                                    A CUDA Graph's kernels carry their cudaGraphLaunch's
//                                    correlation, so each joins that launch as a graph node's work.
//   cuda_sync                        SyncEvent (stream, event, context synchronization, stream wait)
//   user_annotation                  NvtxEvent in the default domain "": `ProfilerStep#N` (the
//                                    profiler's steps, payload N) and the user's record_function
//                                    ranges, matched by --range and the iteration rules as NVTX
//   cpu_op                           NvtxEvent in the domain "pytorch": `aten::linear` and the like,
//                                    the layer names a kernel's launch sits in, folded as NVTX's
//   gpu_user_annotation              not kept: the GPU-side shadow of a user_annotation, which the
//                                    launches' correlation already places
//   process_name, thread_name (ph M) Trace::process_names, Trace::thread_names (CPU rows only)
//   deviceProperties                 Gpu (name, SM count: the roofline's GPU match)
//   distributedInfo.rank             the process's name gains "rank N" (the job view's rows)
// Everything else (python_function, cpu_instant_event, the profiler's own "Spans" and "Traces"
// rows with string pids, memory events) is read past.
//
// Times are microseconds written as decimals, often with a nanosecond fraction
// ("1712195495505583.123"): converted to integer nanoseconds from the text itself (never through
// a double, which holds only 0.25 us at today's epoch), digits past the nanosecond cut, then
// shifted so the trace's first kept event is at 0. A row whose time, id or duration no GPU could
// produce is left out and counted (Trace::dropped, "table" = the event's category), as the nsys
// reader does.
//
// The profiler's own cudaDeviceSynchronize, the last runtime call of the window, outside every
// range (torch.profiler waits for the GPU before it stops), is not the program's: left out, with a
// note saying so.
#pragma once

#include <string>
#include <string_view>

#include "trace/model/error.h"
#include "trace/model/trace.h"

namespace laptime::trace {

// Reads a Kineto trace (plain or gzipped JSON). Throws TraceError with one sentence for a file
// that cannot be read, is not JSON, is cut short, nests deeper than 64 levels, is a gzip bomb, is
// JSON but no profiler trace, or holds no profiled events. The result is finalized.
Trace load_kineto_json(const std::string& path);

enum class TimeText { Ok, NotNumber, OutOfRange };
// A JSON number of microseconds ("12.5", "1712195495505583.123", "1.5e3") as integer nanoseconds,
// exactly: digits past the nanosecond are cut (toward zero). OutOfRange when the value is negative
// or reaches 2^62 ns.
TimeText micros_to_ns(std::string_view text, Ns* ns);

}  // namespace laptime::trace
