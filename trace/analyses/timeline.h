// The events a report page draws: the median steady iteration (Iterations::svg_iteration) as lanes
// of a timeline, taken from the trace once, so the page (trace/write/html_page.h) draws what the
// analysis saw and computes nothing from the trace by a second path.
//
// The window is the iteration's GPU span, widened to its host range when the two overlap (a loop
// that waits for the GPU, or launches just ahead of it). A loop that runs a whole lap or more
// ahead enqueued the iteration before its GPU work began: the window is then the GPU span alone,
// and the host lanes show what the host did meanwhile (enqueuing later iterations). Lanes,
// top to bottom: for each thread that opened the iteration range, launched its GPU work or waited
// in a synchronization inside the window, its NVTX ranges (one row per nesting level) and its
// CUDA API calls; then the iteration's ranges projected onto the GPU (each from the first start to
// the last end of the GPU work launched inside it, as Nsight Systems draws NVTX on its GPU rows: a
// loop that runs ahead shows its layers where the GPU ran them); then one lane per (device,
// stream) with GPU work in the window. Every event that
// overlaps the window is kept with its own start and duration (the page clips what it draws), and
// marked as the iteration's or a neighbour's: GPU work by the range its launch sat in, host events
// by whether they overlap the iteration's range. The iteration's gaps (utilization.h) and the
// synchronizations in the window (sync.h) come with their causes and costs, each blocking call's
// event linked to its record: a call outside the steady iterations (the synchronize after the
// loop, often as long as the window) says where it sat, so that no page draws it as the loop's.
//
// Bounded: at most kTimelineEvents events, so a page stays a few MB however large the iteration
// (one range holding a million kernels). Past it, the iteration's own events are kept before its
// neighbours', then the longest first; what was cut is counted per lane with its total time.
// NVTX rows past kTimelineDepth levels below a thread's outermost range in the window are cut the
// same way. The other iterations are not here: the report's `iterations` summarize them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "trace/analyses/iterations.h"
#include "trace/analyses/join.h"
#include "trace/analyses/sync.h"
#include "trace/analyses/utilization.h"
#include "trace/model/category.h"

namespace laptime::trace {

constexpr size_t kTimelineEvents = 10000;
constexpr int kTimelineDepth = 12;

enum class TimelineLaneKind { Ranges, Api, GpuRanges, Gpu };
const char* timeline_lane_kind_name(TimelineLaneKind k);

struct TimelineLane {
  TimelineLaneKind kind = TimelineLaneKind::Gpu;
  uint32_t pid = 0;
  uint32_t tid = 0;     // Ranges and Api
  uint32_t device = 0;  // Gpu
  uint32_t stream = 0;  // Gpu
  std::string label;    // "NVTX (python3)", "CUDA API (python3)", "GPU 0 stream 7"
  int rows = 1;         // Ranges, GpuRanges: nesting levels drawn
};

enum class TimelineEventKind { Range, Call, Kernel, Memcpy, Memset, GraphReplay };
const char* timeline_event_kind_name(TimelineEventKind k);

struct TimelineEvent {
  int lane = 0;
  Ns start = 0, end = 0;  // as the trace has them: may reach past the window
  int name = 0;           // index into Timeline::names
  // The layer it belongs to (its own text for a range; the innermost range around the launch for
  // GPU work, as the kernel mix's by-layer table counts it; around the call for an API call) and
  // that layer with block indices folded (the table of patterns): indices into Timeline::names,
  // -1 for none.
  int layer = -1, layer_pattern = -1;
  TimelineEventKind kind = TimelineEventKind::Kernel;
  Category category = Category::Other;  // GPU work
  int depth = 0;                        // ranges: the row, 0 at the lane's outermost
  bool blocking = false;                // API calls: a synchronization the analysis measured
  int sync = -1;                        // such a call: its record in Timeline::syncs, -1 for none
  bool in_iteration = false;            // the shown iteration's, not a neighbour's
};

struct TimelineGap {
  Ns start = 0, end = 0;
  GapCause cause = GapCause::Other;
};

// A synchronization call in the window (steady or not), with what it cost.
struct TimelineSync {
  int lane = -1;  // the Api lane of its thread, -1 when its thread has none
  Ns start = 0, duration = 0;
  std::string api;
  SyncKind kind = SyncKind::DeviceSync;
  SyncEffect effect = SyncEffect::Unknown;
  Ns pending = 0;
  SyncWhere where = SyncWhere::Steady;  // only a steady iteration's call is the loop's cost
  bool steady() const { return where == SyncWhere::Steady; }
};

// What the bound left out of one lane.
struct TimelineOmitted {
  int lane = 0;
  size_t events = 0;
  Ns time = 0;  // their durations, summed
};

struct Timeline {
  int iteration = -1;  // position in Iterations::iterations; -1: no iteration with GPU work to show
  uint64_t index = 0;  // that iteration's index
  Ns start = 0, end = 0;
  bool host_range = false;         // the window holds the iteration's host range (above)
  std::vector<std::string> names;  // every name the events use, once
  std::vector<TimelineLane> lanes;
  std::vector<TimelineEvent> events;  // by lane, then start
  std::vector<TimelineGap> gaps;      // the iteration's gaps, by start
  std::vector<TimelineSync> syncs;    // by start
  size_t events_in_window = 0;        // before the bound
  std::vector<TimelineOmitted> omitted;
  bool truncated() const { return events.size() < events_in_window; }
};

// The timeline of `iteration` (a position in it.iterations; -1: it.svg_iteration). `ops_of` is the
// GPU work launched in each iteration (utilization.h's ops_by_iteration), `u` and `s` the steady
// iterations' gaps and synchronizations. An empty Timeline (iteration -1) when there is no such
// iteration with GPU work.
Timeline timeline_of(const TraceJoin& j, const Iterations& it, const std::vector<std::vector<int>>& ops_of,
                     const Utilization& u, const Synchronizations& s, int iteration = -1,
                     size_t max_events = kTimelineEvents);

}  // namespace laptime::trace
