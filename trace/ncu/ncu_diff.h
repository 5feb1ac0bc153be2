// `laptime kernels A B`: two Nsight Compute reports of the same program compared layer by layer
// (a kernel before and after a change: `--attention naive` against `flash`, `--stem cudnn`
// against `fused`).
//
// Layers are matched by name under one grouping (both sides grouped by trace/ncu/ncu_layers.h with
// the same --by and --domain). For each: every metric on both sides and its change (time and
// DRAM bytes relative to A; percentages in points), the kernels gone (short names in A's layer
// and not in B's) and new, and the diagnosis on each side. A layer on one side only is listed
// as such, with its kernels. ncu times each kernel alone, so a change of time here is the
// kernels' own; a lap changes by it only as far as the kernels ran back to back.
#pragma once

#include <cstdio>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "trace/ncu/ncu_layers.h"

namespace laptime::trace {

struct NcuLayerChange {
  std::string name;
  int a = -1, b = -1;              // indices into NcuDiff::a.layers and ::b.layers; -1: not on that side
  std::vector<std::string> gone;   // kernels (short names) of A's layer that B's does not have
  std::vector<std::string> added;  // and the other way round
};

struct NcuDiff {
  NcuLayers a, b;
  std::vector<NcuLayerChange> rows;  // A's layers by A's time, then B's own by B's time
  std::vector<std::string> notes;
};

// Throws TraceError when the two were grouped differently (a caller's mistake).
NcuDiff ncu_diff(NcuLayers a, NcuLayers b);
void print_ncu_diff(const NcuDiff& d, std::FILE* out);
nlohmann::json ncu_diff_to_json(const NcuDiff& d, DeferredKernelLists* deferred = nullptr);

}  // namespace laptime::trace
