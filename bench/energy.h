// Energy per forward from NVML's total-energy counter, read while `laptime bench` loops.
//
// The counter (nvmlDeviceGetTotalEnergyConsumption: millijoules since the driver loaded, Volta
// and newer) is exact between its own updates but moves in steps: NVML does not document how
// often, and it is tens of milliseconds on recent boards, longer than any lap. So no lap gets an
// energy of its own. The clock sampler (bench/clocks.h) polls the counter every millisecond and
// keeps each change with the two polls around it; the midpoint of those polls is when the
// counter stepped, known to half a millisecond. Two steps bound a block: the energy between
// them is exact, and the laps inside it are counted by how much of each lap's span lies in it
// (a lap cut by a step counts its fraction on either side; the GPU's idle time between laps,
// if any, is charged to the laps around it). Over the steady laps:
//
//   joules per forward   the energy of every whole block inside the steady laps / their laps
//   blocks' p10-p90      the spread of each block's own joules per forward
//   mean watts           the blocks' energy / their time
//   mJ per item          joules per forward x 1000 / tokens or images per forward
//   laps at the cap      steady laps in which NVML gave the SW power cap as a reason the clock
//                        was held down (the clock sampler's rule for a lap, bench_result.h)
//
// Fewer than two steps inside the steady laps (a short run) leaves the energy unmeasured, and
// the reason says how many laps would do. `laptime diff` compares two reports' blocks
// (trace/compare/diff.h). Host-only: tested without a GPU (tests/test_bench_report.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace laptime {

// One step of the counter: it read `mj` at the poll at seen_ms and something else at the poll
// before, at before_ms (milliseconds from the loop's start, as ClockSample's).
struct EnergyReading {
  double before_ms = 0, seen_ms = 0;
  uint64_t mj = 0;
};

// The stretch between two steps of the counter, and what it held.
struct EnergyBlock {
  double start_ms = 0, end_ms = 0;
  double joules = 0;
  double laps = 0;  // the steady laps inside it, fractions at its edges
};

struct BenchEnergy {
  std::string unavailable;  // why there is no figure; "" when there is one
  double joules_per_forward = 0;
  double block_p10 = 0, block_p90 = 0;  // of the blocks' joules per forward
  double mj_per_item = 0;
  std::string item;  // "tokens" | "images", as the throughput's
  double mean_watts = 0;
  int power_limit_w = 0;                   // the board's enforced limit; 0 if unknown
  std::optional<std::size_t> laps_at_cap;  // none when the clock's reasons were not read
  std::size_t laps = 0;                    // steady laps
  double measured_ms = 0, steady_ms = 0;   // the blocks' span; the steady laps' span
  std::size_t steps = 0;                   // steps of the counter over the whole loop
  double step_interval_ms = 0;             // their median spacing; 0 for fewer than two
  std::vector<EnergyBlock> blocks;
};

// What measure_energy needs of the run.
struct EnergyInputs {
  std::vector<std::pair<double, double>> steady_spans;  // each steady lap's [start, end], in order
  std::vector<bool> at_cap;                             // per steady lap; empty when the clock was not read
  int64_t items_per_forward = 0;
  std::string item;
  int power_limit_w = 0;
};

// The energy of the steady laps from the counter's steps over the loop (see the top of this file).
BenchEnergy measure_energy(const EnergyInputs& in, const std::vector<EnergyReading>& readings);

// "token" for "tokens": the unit one item is, for "mJ per token".
std::string item_singular(const std::string& item);

}  // namespace laptime
