// `laptime lab KERNEL`: bench/lab/lab.h says what a run does; bench/lab/measure.h how a version is
// checked and timed; bench/lab/try_run.h how a learner's file gets there. Here: the order of the
// work and what goes into the result.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "bench/clocks.h"
#include "bench/lab/lab.h"
#include "bench/lab/measure.h"
#include "bench/lab/run.h"
#include "bench/lab/try_child.h"
#include "bench/lab/try_run.h"
#include "bench/layer_costs.h"
#include "core/check.h"
#include "core/nvtx.h"
#include "core/os.h"
#include "core/output_file.h"
#include "core/stats.h"
#include "kernels/lab/gpu_wait.h"
#include "kernels/lab/try_template.h"
#include "kernels/lab/user_kernel.h"
#include "trace/model/error.h"
#include "trace/model/text.h"
#include "trace/read/sidecars.h"
#include "trace/write/html_page.h"

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

// The SM clock over the samples of one version's timing: median, lowest, the throttling seen.
void assign_clock(TimingRow& row, const std::vector<ClockSample>& samples) {
  if (samples.empty()) return;
  std::vector<double> mhz;
  uint64_t reasons = 0;
  for (const ClockSample& s : samples) {
    mhz.push_back(s.sm_mhz);
    reasons |= s.reasons & kClockThrottles;
  }
  row.sm_mhz = static_cast<int>(std::lround(stats::median(mhz)));
  row.sm_mhz_min = static_cast<int>(*std::min_element(mhz.begin(), mhz.end()));
  row.throttle = reasons;
}

class Runner {
 public:
  Runner(const LabOptions& o, const KernelInfo& k, Context& ctx, LabResult& r)
      : o_(o), k_(k), ctx_(ctx), r_(r), flush_(ctx), clock_(ctx.device()), lab_name_("lab"), kernel_name_(k.name) {
    policy_.target = o.target;
    for (const VersionResult& v : r.versions) version_names_.emplace(v.index, NvtxName("lab/" + k.name + "/" + v.id));
    r.stopping_rule = stopping_rule(policy_);
    r.clock_note = clock_.unavailable();
  }

  bool lost() const { return lost_; }

  // Every version against the reference at `shape`, on each kind of input in `kinds`.
  void check_shape(LabCase& c, const Shape& s, const InputKind* kinds, size_t n_kinds) {
    const std::string where = shape_text(k_, s.dims) + " (" + s.label + ")";
    std::vector<std::string> refused(r_.versions.size());
    for (size_t i = 0; i < n_kinds && !lost_; ++i) {
      c.set_inputs(kinds[i], next_seed(), ctx_.stream());
      for (size_t v = 0; v < r_.versions.size() && !lost_; ++v) {
        VersionResult& vr = r_.versions[v];
        if (!vr.refusal.empty()) continue;
        if (i == 0) refused[v] = c.prepare(vr.index, ctx_);
        if (!refused[v].empty()) {
          if (i == 0) vr.checks.push_back(skipped(where, refused[v]));
          continue;
        }
        watch_phase(k_.name + " " + vr.id + ": the check at " + where + ", " + input_kind_name(kinds[i]) + " inputs");
        CheckRow row = guarded_check(c, vr);
        row.shape = where;
        row.inputs = input_kind_name(kinds[i]);
        vr.checks.push_back(row);
      }
    }
  }

  // Each version that passed everything so far, timed at shape `si`.
  void time_shape(LabCase& c, int si) {
    const Cost cost = r_.shapes[static_cast<size_t>(si)].cost;
    const cudaStream_t s = ctx_.stream();
    for (VersionResult& vr : r_.versions) {
      if (lost_ || !vr.passed() || skipped_at(vr, r_.shapes[static_cast<size_t>(si)])) continue;
      const auto call = [&] { c.run(vr.index, ctx_); };
      const std::string at = r_.shapes[static_cast<size_t>(si)].text;
      if (o_.once) {
        c.set_inputs(InputKind::Random, next_seed(), s);
        c.reset(s);
        flush_.run(s);  // outside the ranges: a profiler filtering on them sees the call alone
        watch_phase(k_.name + " " + vr.id + ": one call at " + at);
        {
          NvtxRange a(ctx_, NvtxLevel::Layer, lab_name_), b(ctx_, NvtxLevel::Layer, kernel_name_),
              v(ctx_, NvtxLevel::Layer, version_names_.at(vr.index));
          call();
        }
        CUDA_CHECK(wait_stream(s));
        continue;
      }
      // Fresh inputs and poisoned outputs before each call (outside the events).
      uint32_t draw = static_cast<uint32_t>(next_seed());
      const auto before = [&] {
        c.draw_inputs(InputKind::Random, ++draw, s);
        c.reset(s);
      };
      TimingRow row;
      try {
        watch_phase(k_.name + " " + vr.id + ": the timed calls at " + at);
        NvtxRange a(ctx_, NvtxLevel::Layer, lab_name_), b(ctx_, NvtxLevel::Layer, kernel_name_),
            v(ctx_, NvtxLevel::Layer, version_names_.at(vr.index));
        clock_.start();
        const Timing cold = time_calls(ctx_, call, before, &flush_, policy_, next_seed());
        const Timing hot = time_calls(ctx_, call, before, nullptr, policy_, next_seed());
        assign_clock(row, clock_.stop());
        row = timing_row(si, cold, hot, cost, row);
      } catch (const Error& e) {
        clock_.stop();
        fail(vr, at, "timed calls", after_throw(vr, e.what()));  // a fault of a file ends its rung here
        continue;
      }
      // The last timed call's output against the reference of its inputs.
      c.read_inputs(s);
      CheckRow last = guarded_output_check(c, vr);
      if (lost_ || !last.passed) {
        last.shape = at + " (" + r_.shapes[static_cast<size_t>(si)].shape.label + ")";
        last.inputs = "the last timed call's";
        vr.checks.push_back(last);
        continue;
      }
      vr.timings.push_back(row);
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

  void fail(VersionResult& vr, const std::string& where, const std::string& inputs, const std::string& why) {
    CheckRow row;
    row.shape = where;
    row.inputs = inputs;
    row.rel_error = NAN;
    row.bound = bound(vr.index);
    row.detail = why;
    vr.checks.push_back(row);
  }

  // After a call that threw: whether the GPU still works. A fault leaves the context unusable
  // (a sticky error): for the ladder's own versions that ends the run; for a learner's file it ends
  // its rung, with the command that finds the faulting line.
  std::string after_throw(const VersionResult& vr, const std::string& what) {
    if (wait_device() == cudaSuccess) return what;
    if (!vr.is_file())
      throw Error(k_.name + " " + vr.id + " left the GPU unusable (" + what + "); the versions after it cannot run.");
    lost_ = true;
    return what + " The GPU is unusable after it; to find the line: " + sanitizer_command(o_, vr.file);
  }

  CheckRow guarded_check(LabCase& c, const VersionResult& vr) {
    try {
      return check_version(c, vr.index, ctx_, bound(vr.index), next_seed(), k_.floor_of(vr.index, r_.precision));
    } catch (const Error& e) {
      CheckRow row;
      row.rel_error = NAN;
      row.bound = bound(vr.index);
      row.detail = after_throw(vr, e.what());
      return row;
    }
  }

  CheckRow guarded_output_check(LabCase& c, const VersionResult& vr) {
    try {
      return compare_outputs(c, ctx_.stream(), bound(vr.index), next_seed(), k_.floor_of(vr.index, r_.precision));
    } catch (const Error& e) {
      CheckRow row;
      row.rel_error = NAN;
      row.bound = bound(vr.index);
      row.detail = after_throw(vr, e.what());
      return row;
    }
  }

  double bound(int version) const { return k_.bound_of(version, r_.precision); }

  TimingRow timing_row(int si, const Timing& t, const Timing& hot, const Cost& cost, TimingRow row) const {
    row.shape = si;
    row.runs = t.runs;
    row.converged = t.converged;
    row.median_us = t.median_ms * 1e3, row.lo_us = t.lo_ms * 1e3, row.hi_us = t.hi_ms * 1e3;
    row.hot_runs = hot.runs;
    row.hot_converged = hot.converged;
    row.hot_median_us = hot.median_ms * 1e3, row.hot_lo_us = hot.lo_ms * 1e3, row.hot_hi_us = hot.hi_ms * 1e3;
    const double sec = t.median_ms * 1e-3;
    if (sec > 0) {
      row.gbps = cost.bytes() / sec / 1e9;
      row.tflops = cost.flops / sec / 1e12;
    }
    if (r_.dram_gbps > 0) row.dram_pct = 100 * row.gbps / r_.dram_gbps;
    if (r_.compute_tflops > 0 && cost.flops > 0) row.compute_pct = 100 * row.tflops / r_.compute_tflops;
    return row;
  }

  void speedups(int si) { lab::speedups(r_, si); }

  const LabOptions& o_;
  const KernelInfo& k_;
  Context& ctx_;
  LabResult& r_;
  L2Flush flush_;
  ClockSampler clock_;
  TimingPolicy policy_;
  NvtxName lab_name_, kernel_name_;
  std::map<int, NvtxName> version_names_;
  uint64_t draws_ = 0;
  bool lost_ = false;
};

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

// `--template [FILE]`: the file, or standard output. An existing file is never replaced: it is
// most likely the learner's own work.
int write_template(const LabOptions& o) {
  const std::string text = template_text(o.kernel);
  if (o.template_file->empty() || *o.template_file == "-") {
    std::fputs(text.c_str(), stdout);
    return std::ferror(stdout) ? 1 : 0;
  }
  const std::string& path = *o.template_file;
  require(!path_exists(path), path + " exists: --template writes a new file and replaces none (give another name).");
  OutputFile out(OutputSpec{"template", path});
  out.write(text);
  out.commit();
  std::printf("laptime lab: wrote %s, %s's template: `laptime lab %s --try %s` checks and times it.\n", path.c_str(),
              o.kernel.c_str(), o.kernel.c_str(), path.c_str());
  return 0;
}

}  // namespace

void speedups(LabResult& r, int si) {
  const TimingRow* production = nullptr;
  double best = 0;
  for (VersionResult& vr : r.versions)
    for (TimingRow& t : vr.timings) {
      if (t.shape != si) continue;
      if (vr.production) production = &t;
      if (!vr.is_file() && t.median_us > 0 && (best == 0 || t.median_us < best)) best = t.median_us;
    }
  const TimingRow* previous = nullptr;
  for (VersionResult& vr : r.versions)
    for (TimingRow& t : vr.timings) {
      if (t.shape != si || t.median_us <= 0) continue;
      t.vs_previous = previous && !vr.is_file() ? previous->median_us / t.median_us : 0;
      t.vs_production = production ? production->median_us / t.median_us : 0;
      t.vs_best = best > 0 ? best / t.median_us : 0;
      if (!vr.is_file()) previous = &t;
    }
}

LabResult start_result(const LabOptions& o, const KernelInfo& k, const Context& ctx,
                       const std::vector<int>& version_indices) {
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
  for (int i : version_indices) {
    VersionResult vr;
    vr.index = i;
    if (const UserVersionInfo* u = user_version_info(k.name, i)) {
      vr.id = u->name;
      vr.title = "your file " + u->file;
      vr.file = u->file;
      vr.sha256 = u->sha256;
      vr.compiled = u->compiled;
      r.versions.push_back(vr);
      continue;
    }
    const Version& v = k.versions[static_cast<size_t>(i)];
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

void run_versions(const LabOptions& o, const KernelInfo& k, Context& ctx, LabResult& r) {
  Runner run(o, k, ctx, r);
  for (const Shape& s : k.odd_shapes) {
    if (run.lost()) return;
    std::unique_ptr<LabCase> c = make_case(k, s, o.precision);
    run.check_shape(*c, s, kAdversarial, std::size(kAdversarial));
  }
  for (size_t i = 0; i < r.shapes.size() && !run.lost(); ++i) {
    const Shape& s = r.shapes[i].shape;
    std::unique_ptr<LabCase> c = make_case(k, s, o.precision);
    const bool given = s.label == "--shape";  // a shape of the user's: every kind of input
    run.check_shape(*c, s, kAdversarial, given ? std::size(kAdversarial) : 1);
    run.time_shape(*c, static_cast<int>(i));
  }
}

namespace {

// One kernel: the learners' files first (each in a process of its own: before this one touches
// CUDA), then the ladder, then the files' rungs among them.
LabResult run_kernel(const LabOptions& given, const KernelInfo& k) {
  LabOptions o = given;
  if (!o.seed) o.seed = std::random_device{}();  // one seed for the ladder and the files' processes
  TryRungs tries = run_tries_apart(o, k);        // none with --once: those run in this process below
  Context ctx(o.device, StreamKind::Created, NvtxLevel::Layer);
  std::vector<int> indices = o.version_indices;
  std::unique_ptr<ProcessWatchdog> watchdog;
  if (o.once && !o.tries.empty()) {
    watchdog = std::make_unique<ProcessWatchdog>(o.timeout, "laptime lab " + k.name + " --try");
    for (int i : load_tries_here(o, k, ctx)) indices.push_back(i);
  }
  LabResult r = start_result(o, k, ctx, indices);
  run_versions(o, k, ctx, r);
  for (VersionResult& v : tries.rungs) r.versions.push_back(std::move(v));
  for (size_t i = 0; i < r.shapes.size(); ++i) speedups(r, static_cast<int>(i));
  write_sidecar(o, k, r);
  return r;
}

}  // namespace

int run_lab(const LabOptions& o) {
  if (o.template_file) return write_template(o);
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
  if (o.all) return run_all(o);
  const KernelInfo& k = *find_kernel(o.kernel);
  const std::string sidecar = o.once && !o.json.empty() && o.json != "-" ? trace::layer_costs_path(o.json) : "";
  std::vector<std::string> inputs = o.tries;
  if (!o.peak.empty()) inputs.push_back(o.peak);
  check_outputs({{"JSON report", o.json, true}, {"layer costs", sidecar}, {"HTML report", o.html}},
                inputs);  // before any GPU work
  std::optional<OutputFile> out;
  if (!o.json.empty()) out.emplace(OutputSpec{"JSON report", o.json, true}, inputs);
  const LabResult r = run_kernel(o, k);
  print_lab(r);
  const std::string document = lab_to_json(r).dump(2) + "\n";  // what --json writes and the page embeds
  if (out) {
    out->write(document);
    out->commit();
  }
  if (!o.html.empty()) {
    trace::write_html(o.html, document, "laptime lab " + k.name + " " + o.precision);
    std::printf("\nwrote HTML report: %s\n", trace::escape_name(o.html).c_str());
  }
  for (const VersionResult& v : r.versions)
    if (v.refusal.empty() && !v.passed()) return 1;
  return 0;
}

int run_all(const LabOptions& o) {
  std::vector<std::string> inputs;
  if (!o.peak.empty()) inputs.push_back(o.peak);
  check_outputs({{"JSON report", o.json, true}}, inputs);
  std::optional<OutputFile> out;
  if (!o.json.empty()) out.emplace(OutputSpec{"JSON report", o.json, true}, inputs);
  std::vector<LabResult> results;
  for (const KernelInfo& k : kernels()) {
    LabOptions one = o;
    one.all = false;
    one.kernel = k.name;
    one.precision = k.precisions.front();
    // The first version that runs in the precision (bias_gelu's v1 is fp32's alone), and production.
    int first = 0;
    while (first + 1 < static_cast<int>(k.versions.size()) && !k.runs_in(k.versions[first], one.precision)) ++first;
    one.version_indices = {first};
    const int production = k.production_index(one.precision);
    if (production > first) one.version_indices.push_back(production);
    one.timed_shapes = k.model_shapes;
    std::fprintf(stderr, "laptime lab --all: %s, %s ...\n", k.name.c_str(), one.precision.c_str());
    results.push_back(run_kernel(one, k));
  }
  const AllResult a = summarize_all(std::move(results));
  print_all(a);
  if (out) {
    out->write(all_to_json(a).dump(2) + "\n");
    out->commit();
  }
  for (const LabResult& r : a.kernels)
    for (const VersionResult& v : r.versions)
      if (v.refusal.empty() && !v.passed()) return 1;
  return 0;
}

}  // namespace laptime::lab
