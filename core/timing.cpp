#include "core/timing.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>

#include "core/check.h"

namespace laptime {

EventPool::EventPool(std::size_t n) {
  events_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    cudaEvent_t e = nullptr;
    const cudaError_t err = cudaEventCreate(&e);
    if (err != cudaSuccess) {
      for (cudaEvent_t made : events_) cudaEventDestroy(made);  // a throwing constructor runs no destructor
      events_.clear();
      CUDA_CHECK(err);
    }
    events_.push_back(e);
  }
}

EventPool::~EventPool() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

CudaGraph::~CudaGraph() {
  if (exec_) cudaGraphExecDestroy(exec_);
  if (graph_) cudaGraphDestroy(graph_);
}

void CudaGraph::capture(cudaStream_t stream, const std::function<void()>& body) {
  require(!graph_ && !exec_, "internal: a CudaGraph is captured once.");
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    body();
  } catch (...) {
    // Leave the stream out of capture mode whatever was thrown, and drop the partial graph.
    cudaGraph_t broken = nullptr;
    cudaStreamEndCapture(stream, &broken);
    if (broken) cudaGraphDestroy(broken);
    (void)cudaGetLastError();  // the capture's own error, not one of a later call
    throw;
  }
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
  CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
}

void CudaGraph::launch(cudaStream_t stream) const {
  require(exec_ != nullptr, "internal: CudaGraph::launch before capture.");
  CUDA_CHECK(cudaGraphLaunch(exec_, stream));
}

float time_enqueued(cudaStream_t stream, const EventPool& ev, const std::function<void()>& work) {
  CUDA_CHECK(cudaEventRecord(ev[0], stream));
  work();
  CUDA_CHECK(cudaEventRecord(ev[1], stream));
  CUDA_CHECK(cudaEventSynchronize(ev[1]));
  float ms = 0.f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
  return ms;
}

namespace {
// A host function at the head of the stream that holds it until the host has enqueued what
// follows (or 100 ms pass): the GPU then finds the runs queued, as in an eager loop whose host
// runs ahead, and the host's enqueue of the first run is not inside the timed window.
struct Gate {
  std::atomic<bool> open{false};
};
void CUDART_CB hold_until_open(void* p) {
  const Gate* gate = static_cast<const Gate*>(p);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  while (!gate->open.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < until)
    std::this_thread::yield();
}

// `direct` direct runs in a row between two events, behind a Gate: milliseconds per run,
// negative when a run refuses. The stream is idle again when it returns or throws.
float timed_direct(cudaStream_t stream, const EventPool& ev, int direct, const std::function<bool()>& run) {
  Gate gate;
  CUDA_CHECK(cudaLaunchHostFunc(stream, hold_until_open, &gate));
  bool ran = true;
  try {
    CUDA_CHECK(cudaEventRecord(ev[0], stream));
    for (int i = 0; i < direct && ran; ++i) ran = run();
    CUDA_CHECK(cudaEventRecord(ev[1], stream));
  } catch (...) {
    gate.open.store(true, std::memory_order_release);
    (void)cudaStreamSynchronize(stream);  // the host function is done with `gate`
    throw;
  }
  gate.open.store(true, std::memory_order_release);
  CUDA_CHECK(cudaEventSynchronize(ev[1]));
  if (!ran) return -1.f;
  float ms = 0.f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
  return ms / direct;
}

// One replay of `graph` (or, without one, one direct run) between two events: milliseconds per
// run, negative when the direct run refuses.
float timed_replay(cudaStream_t stream, const EventPool& ev, const CudaGraph* graph, const std::function<bool()>& run) {
  bool ran = true;
  const float ms = time_enqueued(stream, ev, [&] {
    if (graph)
      graph->launch(stream);
    else
      ran = run();
  });
  if (!ran) return -1.f;
  return graph ? ms / kCandidateGraphRuns : ms;
}
}  // namespace

float time_candidate(cudaStream_t stream, const std::function<bool()>& run, std::string* why, CandidateLaunch launch) {
  const EventPool ev(2);  // outside the try: a device that cannot make events is an error, not a refusal
  auto refused = [&](const std::string& reason) {
    if (why) *why = reason;
    return -1.f;
  };
  try {
    if (!run()) return refused("the candidate refused to run");
    std::unique_ptr<CudaGraph> graph;
    if (launch == CandidateLaunch::Graph) {
      try {
        graph = std::make_unique<CudaGraph>();
        graph->capture(stream, [&] {
          for (int i = 0; i < kCandidateGraphRuns; ++i)
            if (!run()) throw Error("internal: a candidate refused to run inside a capture.");
        });
        graph->launch(stream);  // the first launch of a graph pays its upload: untimed
        CUDA_CHECK(cudaStreamSynchronize(stream));
      } catch (const Error&) {
        (void)cudaGetLastError();
        graph.reset();  // a candidate that cannot be captured is timed by direct runs
      }
    } else {
      CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    float best = -1.f;
    for (int i = 0; i < kCandidateTimedReplays; ++i) {
      const float ms = launch == CandidateLaunch::Direct ? timed_direct(stream, ev, kCandidateGraphRuns, run)
                                                         : timed_replay(stream, ev, graph.get(), run);
      if (ms < 0.f) return refused("the candidate refused to run on a timed replay");
      if (best < 0.f || ms < best) best = ms;
    }
    return best;
  } catch (const Error& e) {
    (void)cudaGetLastError();  // a launch error of the refused candidate is not a later call's
    return refused(e.what());  // a candidate the library lists but will not run here: passed over
  }
}

float enqueue_ms(cudaStream_t stream, const std::function<bool()>& run, std::string* why) {
  try {
    if (!run()) {
      if (why) *why = "the candidate refused to run";
      return -1.f;
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCandidateHostRuns; ++i)
      if (!run()) throw Error("the candidate refused to run on a timed call");
    const auto t1 = std::chrono::steady_clock::now();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return static_cast<float>(std::chrono::duration<double, std::milli>(t1 - t0).count() / kCandidateHostRuns);
  } catch (const Error& e) {
    (void)cudaGetLastError();
    if (why) *why = e.what();
    return -1.f;
  }
}

bool under_nsight_compute() {
  const char* v = std::getenv("NV_COMPUTE_PROFILER_PERFWORKS_DIR");
  return v != nullptr && *v != '\0';
}

float eager_charge_ms(float gpu_ms, cudaStream_t stream, const std::function<bool()>& run, std::string* why) {
  if (gpu_ms < 0.f || under_nsight_compute()) return gpu_ms;
  const float host = enqueue_ms(stream, run, why);
  return host < 0.f ? host : std::max(gpu_ms, host);
}

}  // namespace laptime
