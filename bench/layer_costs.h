// The layer costs sidecar: every NVTX range's FLOPs and bytes for the run's shapes, written
// beside the bench's --json and --trace (RUN.layers.json, schema laptime.layers/1, read by
// trace/analyses/roofline.h for `laptime analyze --roofline-svg` and by `laptime diff`).
//
// The entries come from the layers themselves (layers/layer_cost.h: each layer reports its
// FLOPs and bytes under its own range name, for the shapes it was prepared for; the workload
// gathers them from its model), so this file only says how they are written down.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/dtype.h"
#include "layers/layer_cost.h"

namespace laptime {

// The sidecar (schema laptime.layers/1, read by trace/analyses/roofline.h).
nlohmann::json layer_costs_json(const std::string& model, Precision precision, const std::string& shape,
                                const std::vector<LayerCost>& costs);
// Writes it; throws Error with one sentence when the file cannot be written.
void write_layer_costs(const std::string& path, const nlohmann::json& sidecar);

}  // namespace laptime
