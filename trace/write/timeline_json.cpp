#include "trace/write/timeline_json.h"

#include <nlohmann/json.hpp>

namespace laptime::trace {

nlohmann::json timeline_to_json(const Timeline& t) {
  using nlohmann::json;
  if (t.iteration < 0) return nullptr;
  json lanes = json::array();
  for (const TimelineLane& l : t.lanes) {
    json x{{"kind", timeline_lane_kind_name(l.kind)}, {"label", l.label}};
    if (l.kind == TimelineLaneKind::Gpu) {
      x["device"] = l.device;
      x["stream"] = l.stream;
    } else {
      x["pid"] = l.pid;
      x["tid"] = l.tid;
    }
    if (l.kind == TimelineLaneKind::Ranges || l.kind == TimelineLaneKind::GpuRanges) x["rows"] = l.rows;
    lanes.push_back(std::move(x));
  }
  auto index = [](int i) { return i < 0 ? json(nullptr) : json(i); };
  json events = json::array();
  for (const TimelineEvent& e : t.events) {
    json x{{"lane", e.lane},
           {"start_ns", e.start},
           {"duration_ns", e.end - e.start},
           {"name", e.name},
           {"kind", timeline_event_kind_name(e.kind)},
           {"layer", index(e.layer)},
           {"layer_pattern", index(e.layer_pattern)},
           {"in_iteration", e.in_iteration}};
    if (e.kind == TimelineEventKind::Range) x["depth"] = e.depth;
    if (e.kind == TimelineEventKind::Call) {
      x["blocking"] = e.blocking;
      if (e.blocking) x["sync"] = index(e.sync);
    }
    if (e.kind != TimelineEventKind::Range && e.kind != TimelineEventKind::Call)
      x["category"] = category_name(e.category);
    events.push_back(std::move(x));
  }
  json gaps = json::array();
  for (const TimelineGap& g : t.gaps)
    gaps.push_back({{"start_ns", g.start}, {"duration_ns", g.end - g.start}, {"cause", gap_cause_name(g.cause)}});
  json syncs = json::array();
  for (const TimelineSync& s : t.syncs)
    syncs.push_back({{"lane", index(s.lane)},
                     {"start_ns", s.start},
                     {"duration_ns", s.duration},
                     {"api", s.api},
                     {"kind", sync_kind_name(s.kind)},
                     {"effect", sync_effect_name(s.effect)},
                     {"pending_ns", s.pending},
                     {"steady", s.steady()},
                     {"where", sync_where_name(s.where)}});
  json omitted = json::array();
  for (const TimelineOmitted& o : t.omitted)
    omitted.push_back({{"lane", o.lane}, {"events", o.events}, {"time_ns", o.time}});
  json j{{"iteration", t.iteration},
         {"index", t.index},
         {"start_ns", t.start},
         {"end_ns", t.end},
         {"host_range_in_window", t.host_range},
         {"events_in_window", t.events_in_window},
         {"truncated", t.truncated()},
         {"max_events", kTimelineEvents},
         {"names", t.names}};
  j["lanes"] = std::move(lanes);
  j["events"] = std::move(events);
  j["gaps"] = std::move(gaps);
  j["syncs"] = std::move(syncs);
  j["omitted"] = std::move(omitted);
  return j;
}

}  // namespace laptime::trace
