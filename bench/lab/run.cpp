// `laptime lab KERNEL`: bench/lab/lab.h says what a run does; bench/lab/measure.h how a version is
// checked and timed. Here: the order of the work and what goes into the result.
#include <cstdio>
#include <random>

#include <nlohmann/json.hpp>

#include "bench/lab/lab.h"
#include "bench/lab/measure.h"
#include "bench/layer_costs.h"
#include "core/check.h"
#include "core/nvtx.h"
#include "core/output_file.h"
#include "trace/model/error.h"
#include "trace/read/sidecars.h"

namespace laptime::lab {
namespace {

constexpr InputKind kAdversarial[] = {InputKind::Random, InputKind::Zeros, InputKind::Huge};

// `laptime peak`'s ceilings for this GPU: the DRAM roof and the precision's compute roof.
void read_roofs(const LabOptions& o, const cudaDeviceProp& p, LabResult& r) {
  trace::FoundCeilings found = trace::find_ceilings(o.peak, p.name);
  if (!found.ceilings) {
    r.ceilings_note = !found.note.empty() ? found.note + " (GB/s only)"
                                          : "no `laptime peak` cache for " + std::string(p.name) + " (" +
                                                trace::default_peak_path(p.name) +
                                                "): GB/s only; `laptime peak` measures the roofs once";
    return;
  }
  const trace::Ceilings& c = *found.ceilings;
  const std::string& path = c.source;
  if (c.gpu != p.name) {
    r.ceilings_note = path + " holds the ceilings of " + c.gpu + ", not of this " + p.name + ": GB/s only";
    return;
  }
  r.ceilings_source = path;
  r.dram_gbps = c.copy_gbps;
  r.compute_tflops = r.precision == "fp32" ? c.fp32_tflops : r.precision == "fp8" ? c.fp8_tflops : c.bf16_tflops;
}

Precision precision_of(const std::string& p) {
  return p == "fp32" ? Precision::FP32 : p == "fp8" ? Precision::FP8 : Precision::BF16;
}

class Runner {
 public:
  Runner(const LabOptions& o, const KernelInfo& k, Context& ctx, LabResult& r)
      : o_(o), k_(k), ctx_(ctx), r_(r), flush_(ctx), lab_name_("lab"), kernel_name_(k.name) {
    policy_.target = o.target;
    for (const Version& v : k.versions) version_names_.emplace_back("lab/" + k.name + "/" + v.id);
  }

  // Every version against the reference at `shape`, on each kind of input in `kinds`.
  void check_shape(LabCase& c, const Shape& s, const InputKind* kinds, size_t n_kinds) {
    const std::string where = shape_text(k_, s.dims) + " (" + s.label + ")";
    std::vector<std::string> refused(r_.versions.size());
    for (size_t i = 0; i < n_kinds; ++i) {
      c.set_inputs(kinds[i], next_seed(), ctx_.stream());
      for (size_t v = 0; v < r_.versions.size(); ++v) {
        VersionResult& vr = r_.versions[v];
        if (!vr.refusal.empty()) continue;
        if (i == 0) refused[v] = c.prepare(vr.index, ctx_);
        if (!refused[v].empty()) {
          if (i == 0) vr.checks.push_back(skipped(where, refused[v]));
          continue;
        }
        CheckRow row = guarded_check(c, vr);
        row.shape = where;
        row.inputs = input_kind_name(kinds[i]);
        vr.checks.push_back(row);
      }
    }
  }

  // Each version that passed everything so far, timed at shape `si` (the inputs as drawn last).
  void time_shape(LabCase& c, int si) {
    const Cost cost = r_.shapes[static_cast<size_t>(si)].cost;
    for (VersionResult& vr : r_.versions) {
      if (!vr.passed() || skipped_at(vr, r_.shapes[static_cast<size_t>(si)])) continue;
      const auto call = [&] { c.run(vr.index, ctx_); };
      if (o_.once) {
        flush_.run(ctx_.stream());  // outside the ranges: a profiler filtering on them sees the call alone
        NvtxRange a(ctx_, NvtxLevel::Layer, lab_name_), b(ctx_, NvtxLevel::Layer, kernel_name_),
            v(ctx_, NvtxLevel::Layer, version_names_[static_cast<size_t>(vr.index)]);
        call();
        CUDA_CHECK(cudaStreamSynchronize(ctx_.stream()));
        continue;
      }
      Timing t;
      {
        NvtxRange a(ctx_, NvtxLevel::Layer, lab_name_), b(ctx_, NvtxLevel::Layer, kernel_name_),
            v(ctx_, NvtxLevel::Layer, version_names_[static_cast<size_t>(vr.index)]);
        t = time_calls(ctx_, call, flush_, policy_, next_seed());
      }
      vr.timings.push_back(timing_row(si, t, cost));
    }
    speedups(si);
  }

 private:
  uint64_t next_seed() { return r_.seed + 7919 * ++draws_; }

  static CheckRow skipped(const std::string& where, const std::string& why) {
    CheckRow row;
    row.shape = where;
    row.inputs = "-";
    row.skipped = true;
    row.passed = true;
    row.detail = why;
    return row;
  }

  bool skipped_at(const VersionResult& vr, const ShapeResult& s) const {
    for (const CheckRow& c : vr.checks)
      if (c.skipped && c.shape.rfind(s.text + " (", 0) == 0) return true;
    return false;
  }

  // A version's call that throws (a launch refused, a fault) fails its check; a fault that left
  // the device unusable ends the run, since nothing after it can run.
  CheckRow guarded_check(LabCase& c, const VersionResult& vr) {
    try {
      return check_version(c, vr.index, ctx_, bound(vr.index), next_seed(), k_.floor_of(vr.index, r_.precision));
    } catch (const Error& e) {
      if (cudaDeviceSynchronize() != cudaSuccess)
        throw Error(k_.name + " " + vr.id + " left the GPU unusable (" + e.what() +
                    "); the versions after it cannot run.");
      CheckRow row;
      row.rel_error = NAN;
      row.bound = bound(vr.index);
      row.detail = e.what();
      return row;
    }
  }

  double bound(int version) const { return k_.bound_of(version, r_.precision); }

  TimingRow timing_row(int si, const Timing& t, const Cost& cost) const {
    TimingRow row;
    row.shape = si;
    row.runs = t.runs;
    row.converged = t.converged;
    row.median_us = t.median_ms * 1e3, row.lo_us = t.lo_ms * 1e3, row.hi_us = t.hi_ms * 1e3;
    const double sec = t.median_ms * 1e-3;
    if (sec > 0) {
      row.gbps = cost.bytes() / sec / 1e9;
      row.tflops = cost.flops / sec / 1e12;
    }
    if (r_.dram_gbps > 0) row.dram_pct = 100 * row.gbps / r_.dram_gbps;
    if (r_.compute_tflops > 0 && cost.flops > 0) row.compute_pct = 100 * row.tflops / r_.compute_tflops;
    return row;
  }

  void speedups(int si) {
    const TimingRow* production = nullptr;
    for (VersionResult& vr : r_.versions)
      for (TimingRow& t : vr.timings)
        if (t.shape == si && vr.production) production = &t;
    const TimingRow* previous = nullptr;
    for (VersionResult& vr : r_.versions)
      for (TimingRow& t : vr.timings) {
        if (t.shape != si) continue;
        if (previous && t.median_us > 0) t.vs_previous = previous->median_us / t.median_us;
        if (production && t.median_us > 0) t.vs_production = production->median_us / t.median_us;
        previous = &t;
      }
  }

  const LabOptions& o_;
  const KernelInfo& k_;
  Context& ctx_;
  LabResult& r_;
  L2Flush flush_;
  TimingPolicy policy_;
  NvtxName lab_name_, kernel_name_;
  std::vector<NvtxName> version_names_;
  uint64_t draws_ = 0;
};

LabResult start_result(const LabOptions& o, const KernelInfo& k, const Context& ctx) {
  LabResult r;
  r.kernel = k.name;
  r.summary = k.summary;
  r.precision = o.precision;
  r.gpu = ctx.props().name;
  r.seed = o.seed ? *o.seed : std::random_device{}();
  r.once = o.once;
  r.target = o.target;
  read_roofs(o, ctx.props(), r);
  const int production = k.production_index(o.precision);
  for (int i : o.version_indices) {
    const Version& v = k.versions[static_cast<size_t>(i)];
    VersionResult vr;
    vr.index = i;
    vr.id = v.id, vr.title = v.title, vr.reason = v.reason;
    vr.production = i == production;
    if (!k.runs_in(v, o.precision)) {
      std::string list;
      for (const std::string& p : v.precisions) list += (list.empty() ? "" : " and ") + p;
      vr.refusal = "runs in " + list + " only";
    }
    r.versions.push_back(vr);
  }
  for (const Shape& s : o.timed_shapes) r.shapes.push_back({s, shape_text(k, s.dims), k.cost(s.dims, o.precision)});
  return r;
}

// --once with --json: every version's range and what it must move over the shapes it ran at,
// beside the report, for `laptime kernels RUN.ncu-rep` (the bench's sidecar format).
void write_sidecar(const LabOptions& o, const KernelInfo& k, LabResult& r) {
  if (!o.once || o.json.empty() || o.json == "-") return;
  std::vector<LayerCost> costs;
  for (const VersionResult& vr : r.versions) {
    if (!vr.passed()) continue;
    LayerCost c;
    c.name = "lab/" + k.name + "/" + vr.id;
    c.kind = k.kind;
    for (const ShapeResult& s : r.shapes) {
      bool skip = false;
      for (const CheckRow& row : vr.checks) skip |= row.skipped && row.shape.rfind(s.text + " (", 0) == 0;
      if (skip) continue;
      c.flops += s.cost.flops, c.input_bytes += s.cost.read, c.output_bytes += s.cost.written;
    }
    costs.push_back(c);
  }
  std::string shapes;
  for (const ShapeResult& s : r.shapes) shapes += (shapes.empty() ? "" : "; ") + s.text;
  const std::string path = trace::layer_costs_path(o.json);
  write_layer_costs(path, layer_costs_json("lab " + k.name, precision_of(o.precision), shapes, costs));
  r.sidecars.push_back(path);
}

}  // namespace

int run_lab(const LabOptions& o) {
  if (o.list) {
    std::optional<OutputFile> out;
    if (!o.json.empty()) out.emplace(OutputSpec{"lab list", o.json, true});
    print_lab_list();  // with --json -, on standard error (core/output_file.h)
    if (out) {
      out->write(lab_list_json().dump(2) + "\n");
      out->commit();
    }
    return 0;
  }
  const KernelInfo& k = *find_kernel(o.kernel);
  const std::string sidecar = o.once && !o.json.empty() && o.json != "-" ? trace::layer_costs_path(o.json) : "";
  std::vector<std::string> inputs;
  if (!o.peak.empty()) inputs.push_back(o.peak);
  check_outputs({{"JSON report", o.json, true}, {"layer costs", sidecar}}, inputs);  // before any GPU work
  std::optional<OutputFile> out;
  if (!o.json.empty()) out.emplace(OutputSpec{"JSON report", o.json, true}, inputs);
  Context ctx(o.device, StreamKind::Created, NvtxLevel::Layer);
  LabResult r = start_result(o, k, ctx);
  Runner run(o, k, ctx, r);
  for (const Shape& s : k.odd_shapes) {
    std::unique_ptr<LabCase> c = make_case(k, s, o.precision);
    run.check_shape(*c, s, kAdversarial, std::size(kAdversarial));
  }
  for (size_t i = 0; i < r.shapes.size(); ++i) {
    const Shape& s = r.shapes[i].shape;
    std::unique_ptr<LabCase> c = make_case(k, s, o.precision);
    const bool given = s.label == "--shape";  // a shape of the user's: every kind of input
    run.check_shape(*c, s, kAdversarial, given ? std::size(kAdversarial) : 1);
    if (given) c->set_inputs(InputKind::Random, static_cast<uint32_t>(r.seed), ctx.stream());
    run.time_shape(*c, static_cast<int>(i));
  }
  write_sidecar(o, k, r);
  print_lab(r);
  if (out) {
    out->write(lab_to_json(r).dump(2) + "\n");
    out->commit();
  }
  for (const VersionResult& v : r.versions)
    if (v.refusal.empty() && !v.passed()) return 1;
  return 0;
}

}  // namespace laptime::lab
