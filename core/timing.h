// Timing on the GPU: the events of the bench's loop, CUDA Graph capture, one event-pair
// measurement (time_enqueued: `laptime peak`'s ceilings), and the one way laptime times a
// candidate (a cuBLASLt algorithm, a cuDNN plan) when a layer chooses between several at build.
//
// time_candidate's method. One direct run first (it reports a refusal, loads modules, pays
// lazy initialisation); then kCandidateGraphRuns runs captured in one CUDA graph, launched
// once untimed, and replayed kCandidateTimedReplays times between two events; the least
// replay divided by kCandidateGraphRuns is the candidate's time. Where the capture fails (a
// legacy stream, a library call that cannot be captured) the replays are direct runs instead.
//
// Why a graph. Between two events on a stream, a direct run is timed from the moment the
// first event is reached to the moment the last kernel ends, so when the GPU is faster than
// the host can enqueue (a batch-1 convolution, a small GEMM) the measurement is the host's
// enqueue cost, and candidates are ranked by their host overhead, which a model replayed by
// the bench's --graph does not pay at all. Inside a graph the runs are back to back on the
// GPU, as they are in the steady state of a loop that keeps the GPU fed, so the time is the
// GPU's alone. Several runs per replay and the minimum of a few replays keep a single slow
// launch (clock ramp, a neighbour on the GPU) from deciding.
//
// An eager build may time them the other way (CandidateLaunch::Direct, chosen by the layers for a
// model built for the bench's eager loop with LAPTIME_EAGER_TIMING=direct): each replay is
// kCandidateGraphRuns direct runs between the two events, launched one after another as that
// loop launches them, queued behind a host function that holds the stream until they are all
// enqueued (the loop's host runs ahead of its GPU; the host's enqueue is not timed: where it is
// the slower side, eager_charge_ms below charges it). What a graph hides is then charged: a
// library's own launches beside its kernel (cuBLASLt's and cuDNN's 4-byte memsets, ~1 us each on
// the GPU and a kernel boundary more) and the gap at each launch.
//
// Build time only: every call synchronizes with the stream, and must run on the stream the
// layer will later run on (docs/DESIGN-NOTES.md, "The build contract": build-time device work on ctx.stream).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

namespace laptime {

// CUDA events made before a timed loop, so that the loop creates nothing.
class EventPool {
 public:
  explicit EventPool(std::size_t n);
  ~EventPool();
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  cudaEvent_t operator[](std::size_t i) const { return events_[i]; }
  std::size_t size() const { return events_.size(); }

 private:
  std::vector<cudaEvent_t> events_;
};

// One capture of what a callable enqueues on a stream, instantiated for replay.
class CudaGraph {
 public:
  CudaGraph() = default;
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // Records what `body` enqueues on `stream` (thread-local capture mode: a forbidden call on
  // this thread, such as an allocation or a synchronization, breaks the capture) and
  // instantiates it; call once. When `body` throws, the capture is ended, what it recorded is
  // dropped, and the exception propagates unchanged; a capture the runtime refuses throws Error.
  void capture(cudaStream_t stream, const std::function<void()>& body);
  // Enqueues one replay on `stream`. Throws Error when the launch fails.
  void launch(cudaStream_t stream) const;
  bool captured() const { return exec_ != nullptr; }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// Milliseconds of GPU time between ev[0] and ev[1], recorded on `stream` before and after what
// `work` enqueues there: the one event-pair measurement the candidate timing below and
// `laptime peak` share. Synchronizes with ev[1]; an exception from `work` propagates.
float time_enqueued(cudaStream_t stream, const EventPool& ev, const std::function<void()>& work);

// Runs of the candidate per captured graph, and timed replays of it (see the top of this file).
constexpr int kCandidateGraphRuns = 5;
constexpr int kCandidateTimedReplays = 3;

// Milliseconds of GPU time of one call of `run` on `stream`, measured as the top of this file
// says. `run` enqueues one run of the candidate on `stream` and returns false when the
// candidate refuses to run; it may also throw laptime::Error. Either way the result is
// negative: the candidate is to be passed over, and `why` (when given) gets the reason, the
// library's own words when it threw, so that a refused candidate can be reported (a layer's
// plan line) instead of vanishing. Synchronizes.
enum class CandidateLaunch { Graph, Direct };
float time_candidate(cudaStream_t stream, const std::function<bool()>& run, std::string* why = nullptr,
                     CandidateLaunch launch = CandidateLaunch::Graph);

// Milliseconds of host time that one call of `run` takes to enqueue its work on `stream`: the
// launches' CPU cost, what an eager loop pays per call where the GPU is faster than the host (a
// batch-1 layer), and what a CUDA graph's replay does not pay. One untimed call, then
// kCandidateHostRuns calls back to back with no wait between them, timed on the host's steady
// clock; the mean. Negative (and `why` filled) when `run` refuses, as time_candidate. Synchronizes.
constexpr int kCandidateHostRuns = 20;
float enqueue_ms(cudaStream_t stream, const std::function<bool()>& run, std::string* why = nullptr);

// True when this process runs under Nsight Compute (NV_COMPUTE_PROFILER_PERFWORKS_DIR set, as ncu
// 2025.3 starts its target; it preloads its injection library rather than set
// CUDA_INJECTION64_PATH). Its interception makes each enqueue many times slower, so the process's
// host times are ncu's, not the run's. Nsight Systems' overhead is a fraction of an enqueue: a run
// under nsys keeps charging them, as the run it captures does.
bool under_nsight_compute();

// What a candidate measured on the GPU (`gpu_ms`, time_candidate's) costs an eager loop:
// max(gpu_ms, enqueue_ms(run)), as the loop runs at the slower of the two. Under Nsight Compute
// (above) gpu_ms alone: charging its enqueue time would choose for the profiled run a
// configuration the bench does not time (Nsight Compute's GPT-2 B8 fp8 run chose bf16 for every
// GEMM that way), while at the shapes a profiler is pointed at (B8, B256) the GPU is the slower
// side and gpu_ms is what the unprofiled build charges. A negative gpu_ms (a refusal) is returned
// as it is, without running `run`; a refusal while enqueueing is negative too, `why` filled.
// Synchronizes.
float eager_charge_ms(float gpu_ms, cudaStream_t stream, const std::function<bool()>& run, std::string* why = nullptr);

}  // namespace laptime
