#!/usr/bin/env python3
"""Cross-checks one model's roofline, from the files of scripts/dev/roofline-check.sh.

For every layer of `laptime analyze --json`'s roofline, recomputes the % of its bound from
  - the bench's own counts: the sidecar beside the bench's --json (FLOPs and bytes),
  - the layer's time from the analysis's range table (kernel_mix.ranges: GPU time by
    innermost NVTX range over the steady iterations), an independent path through the trace,
  - the ceilings file of `laptime peak`,
and requires agreement within 2%. Also requires the sidecar's FLOPs (sum of the leaves) to be
the bench report's flops_per_forward. Prints one line per disagreement and a summary; exit 1
on any.

usage: roofline_check.py BENCH_JSON ANALYZE_JSON PEAK_JSON
"""
import json
import os
import sys


def main(bench_path, analyze_path, peak_path):
    bench = json.load(open(bench_path))
    analyze = json.load(open(analyze_path))
    peak = json.load(open(peak_path))
    sidecar_path = os.path.splitext(bench_path)[0] + ".layers.json"
    sidecar = json.load(open(sidecar_path))
    roof = analyze.get("roofline")
    if roof is None:
        print(f"{analyze_path}: no roofline section (was the sidecar beside the trace?)")
        return 1
    layers = {l["name"]: l for l in sidecar["layers"]}
    parents = {l["parent"] for l in sidecar["layers"] if l["parent"]}
    leaf_flops = sum(l["flops"] for l in sidecar["layers"] if l["name"] not in parents)
    failures = 0
    if abs(leaf_flops - bench["flops_per_forward"]) > 1e-9 * bench["flops_per_forward"]:
        print(f"sidecar FLOPs {leaf_flops:.6g} != bench flops_per_forward {bench['flops_per_forward']:.6g}")
        failures += 1
    steady = analyze["steady_iterations"]
    range_ns = {r["range"]: r["time_ns"] for r in analyze["kernel_mix"]["ranges"]}
    tflops = peak["tflops"][sidecar["precision"]] * 1e12
    bw = peak["copy_gbps"] * 1e9
    worst = 0.0
    for row in roof["layers"]:
        e = layers[row["name"]]
        nbytes = e["bytes"]["weights"] + e["bytes"]["inputs"] + e["bytes"]["outputs"]
        if row["name"] not in range_ns:
            print(f"{row['name']}: not an innermost range in the analysis (nested ranges inside it?)")
            failures += 1
            continue
        seconds = range_ns[row["name"]] / steady * 1e-9
        compute = e["flops"] / nbytes >= tflops / bw
        expected = 100 * (e["flops"] / seconds / tflops if compute else nbytes / seconds / bw)
        dev = abs(row["pct_of_bound"] - expected) / expected if expected else 0.0
        worst = max(worst, dev)
        if dev > 0.02 or row["bound"] != ("compute" if compute else "memory"):
            print(f"{row['name']}: roofline {row['pct_of_bound']:.2f}% {row['bound']}, "
                  f"bench FLOPs/time {expected:.2f}% {'compute' if compute else 'memory'}")
            failures += 1
    print(f"{sidecar['model']}: {len(roof['layers'])} layers, worst deviation {100 * worst:.3f}%, "
          f"{failures} disagreement(s) over 2%")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
