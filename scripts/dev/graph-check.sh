#!/usr/bin/env bash
# shellcheck disable=SC2015  # `check && pass || fail`: pass only echoes, so fail runs only when check fails
# CUDA Graph replays through laptime's own CUPTI capture, on a machine with a GPU (issue 18, item 3),
# in one call:
#   1. `laptime bench resnet50 -b 32 --graph --trace` (tests/fixtures/graph/capture.sh, CASES=
#      laptime_resnet50_graph_cupti): the capture, trimmed of the setup's cuDNN tuning graphs by
#      trim_setup.py so that it stays a fixture (under 2 MB), with the layer costs the bench writes
#      beside it; where nsys is installed, the node-level nsys capture of the same run again
#      (laptime_resnet50_graph_node: trim_setup.py now keeps the memset nodes' creation too);
#   2. the new files put in tests/fixtures/graph of this working copy, reference.py rerun over them
#      (reference.expected.json gains the CUPTI case);
#   3. `laptime analyze` of the CUPTI capture: GPU-bound, a per-layer table of the replayed graph
#      (conv1, layer*.conv*), the roofline from the sidecar; checked by test_trace_graph
#      (GraphCapture.LaptimesOwnCuptiCaptureOfAGraphRunNamesEveryLayer and the other graph tests);
#   4. for docs/PROFILING.md: GPT-2 B1 eager and --graph through CUPTI, analyzed, and their diff.
# Everything that comes back is in $OUT/graph-check.tgz (the fixture files to commit under
# tests/fixtures/graph, the reports) and $OUT/graph-check.txt (this script's own log).
#
#   scripts/dev/graph-check.sh [BUILD_DIR]      (default: build; needs bench/laptime and
#                                                 tests/test_trace_graph in it)
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(realpath "${1:-$REPO/build}")
laptime=$build/bench/laptime
tests=$build/tests/test_trace_graph
out=${OUT:-graph-check-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"

main() {
  [[ -x $laptime ]] || { echo "graph-check: $laptime not found; build the laptime target first."; return 1; }
  [[ -x $tests ]] || { echo "graph-check: $tests not found; build the test_trace_graph target first."; return 1; }
  work=$(mktemp -d -t graph-check.XXXXXX)
  fx=$REPO/tests/fixtures/graph
  failures=0
  pass() { echo "  ok    $*"; }
  fail() { echo "  FAIL  $*"; failures=$((failures + 1)); }
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true

  echo "1. captures"
  cases=laptime_resnet50_graph_cupti
  command -v nsys >/dev/null && cases="$cases laptime_resnet50_graph_node"
  t0=$SECONDS
  CASES=$cases "$fx/capture.sh" "$work/cap" "$build" >"$work/capture.log" 2>&1
  echo "  capture.sh ($cases): $((SECONDS - t0)) s"
  cupti=$work/cap/laptime_resnet50_graph_cupti
  [[ -s $cupti.sqlite ]] && pass "CUPTI capture written" || fail "no CUPTI capture (see capture.log)"
  size=$(stat -c %s "$cupti.sqlite" 2>/dev/null || echo 0)
  ((size > 0 && size < 2 * 1024 * 1024)) && pass "trimmed to $size bytes (under 2 MB)" || fail "$size bytes after trimming"
  [[ -s $cupti.layers.json ]] && pass "layer costs beside it" || fail "no $cupti.layers.json"

  echo "2. fixtures and the reference"
  mkdir -p "$work/fixtures"
  for f in "$work"/cap/laptime_resnet50_graph_cupti.{sqlite,layers.json,log} "$work"/cap/laptime_resnet50_graph_node{.sqlite,.log,.tables.txt,_cuda_api_sum.csv,_cuda_gpu_kern_sum.csv,_nvtx_sum.csv}; do
    [[ -f $f ]] && cp "$f" "$fx/" && cp "$f" "$work/fixtures/"
  done
  python3 "$fx/reference.py" && pass "reference.py over the new captures" || fail "reference.py"
  cp "$fx/reference.expected.json" "$work/fixtures/"
  python3 "$fx/reference.py" --print laptime_resnet50_graph_cupti | python3 -c 'if True:
    import json, sys
    d = json.load(sys.stdin)
    print("  reference: GPU lap %.3f ms, %d steady, %.0f ops per iteration, %d layers" % (
        d["gpu_lap_ms"], d["steady"], d["ops_per_iteration"], len(d["layer_ms_per_iteration"])))'

  echo "3. analyze the CUPTI capture"
  mkdir -p "$work/reports"
  "$laptime" analyze "$fx/laptime_resnet50_graph_cupti.sqlite" --peak "$REPO/tests/fixtures/peak_example.json" \
    --json "$work/reports/resnet50_graph_cupti.analyze.json" >"$work/reports/resnet50_graph_cupti.analyze.txt" 2>&1 \
    && pass "analyze exits 0" || fail "analyze (see reports/resnet50_graph_cupti.analyze.txt)"
  r=$work/reports/resnet50_graph_cupti.analyze.txt
  grep -q '^Verdict: GPU-bound' "$r" && pass "verdict GPU-bound" || fail "verdict: $(grep '^Verdict' "$r")"
  grep -qE '^    layer1\.\*\.conv[0-9]' "$r" && pass "per-layer table of the replayed graph" || fail "no layer rows"
  grep -q '^Roofline per layer' "$r" && pass "roofline table" || fail "no roofline table"
  LAPTIME_SOURCE_DIR=$REPO "$tests" --gtest_filter='GraphCapture.*:Graph/Capture.*' >"$work/reports/test_trace_graph.txt" 2>&1 \
    && pass "test_trace_graph" || fail "test_trace_graph (see reports/test_trace_graph.txt)"
  grep -q 'SKIPPED' "$work/reports/test_trace_graph.txt" && fail "a test skipped: $(grep -m1 SKIPPED "$work/reports/test_trace_graph.txt")"

  echo "4. GPT-2 B1 eager and --graph through CUPTI"
  for mode in eager graph; do
    flag=()
    [[ $mode == graph ]] && flag=(--graph)
    "$laptime" bench gpt2 -b 1 "${flag[@]}" --warmup 2 --iters 20 --trace "$work/gpt2_b1_$mode.sqlite" \
      >"$work/reports/gpt2_b1_${mode}_cupti.bench.txt" 2>&1 || fail "bench gpt2 -b 1 $mode"
    "$laptime" analyze "$work/gpt2_b1_$mode.sqlite" >"$work/reports/gpt2_b1_${mode}_cupti.analyze.txt" 2>&1 \
      || fail "analyze gpt2 $mode"
  done
  "$laptime" diff "$work/gpt2_b1_eager.sqlite" "$work/gpt2_b1_graph.sqlite" >"$work/reports/gpt2_b1_cupti.diff.txt" 2>&1
  [[ $? -le 1 ]] && pass "diff eager graph" || fail "diff eager graph"
  grep -q '^Verdict: GPU-bound' "$work/reports/gpt2_b1_graph_cupti.analyze.txt" && pass "GPT-2 B1 graph GPU-bound" \
    || fail "GPT-2 B1 graph: $(grep '^Verdict' "$work/reports/gpt2_b1_graph_cupti.analyze.txt")"

  cp "$work/capture.log" "$work/reports/"
  tar -czf "$out/graph-check.tgz" -C "$work" fixtures reports
  ls -la "$work/fixtures" "$work/reports"
  rm -rf "$work"
  if ((failures)); then echo "graph-check: $failures check(s) failed"; return 1; fi
  echo "graph-check: all checks passed"
}

main 2>&1 | tee "$out/graph-check.txt"
exit "${PIPESTATUS[0]}"
