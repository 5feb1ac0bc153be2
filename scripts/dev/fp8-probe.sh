#!/usr/bin/env bash
# fp8 (issue 22) in one device call:
#
#   scripts/dev/fp8-probe.sh [full|quick]   (from the repository root, build/ carried; build80/ too if present)
#
# quick (about 150 s; BUDGET defaults to 150): after the fix of the first probe's "the fp8 plan
# failed to run" (scale pointers 16-byte aligned, no C = D under another type, the refusal's
# words on the plans line):
#   1. in parallel: the fp8 GPU suite (test_fp8_layers, with cuBLASLt's own error log on:
#      CUBLASLT_LOG_LEVEL=1) and the end-to-end GPT-2 fp8 check at B4 T1024 (auto and every GEMM
#      in fp8, beside PyTorch's _scaled_mm and bf16 errors and top-1);
#   2. lap rows, serial: GPT-2 bf16 / fp8 at B8 T1024 and B1 --graph, ResNet-50 fp8 B256 (its
#      plan lines carry each 1x1 convolution's fp8 choice);
#   3. the summary, last.
#
# full (about 7 minutes; BUDGET defaults to 420), the closing run's rows:
#   1. correctness, in parallel: every fp8 suite (kernels, linear layer, 1x1 convolution, GPT-2
#      against the CPU oracle, CUDA Graph; the host fp8 reference), the bf16 GPT-2 and ResNet-50
#      suites (Linear, Conv2d and LayerNorm changed under them), the sm_80 build's fp8 refusal,
#      and end to end: GPT-2 bf16 and fp8 (auto and every GEMM) at B4 T1024 and B3 T77 beside
#      PyTorch's bf16 and _scaled_mm, ResNet-50 bf16 and fp8 at B32;
#   2. `laptime peak --force` (the fp8 GEMM ceiling beside bf16's); laptime_fp8_shapes: ResNet-50's
#      1x1 convolutions as bf16 / fp8 GEMMs (and the quantize pass) and every convolution through
#      cuDNN's bf16 / fp8 graphs;
#   3. the lap table, serial: GPT-2 bf16 / fp8 (auto, every GEMM, fast accumulation) at B8 T1024
#      and B1 --graph; ResNet-50 bf16 / fp8 at B256, B32 --graph and B1 --graph; PyTorch eager bf16
#      and _scaled_mm fp8 for GPT-2 at B8 and B1, eager bf16 for ResNet-50 at B256, B32 and B1;
#      every row's --json report (for docs/perf/<date>-fp8/);
#   4. CUPTI captures of GPT-2 bf16 and fp8 B8, `laptime analyze` (roofline at fp8's ceiling) and
#      `laptime diff` bf16 -> fp8; the same for ResNet-50 B256;
#   5. the summary, last.
# Both: $OUT/summary-fp8.txt and everything in $OUT/fp8-probe.tgz. Steps stop once BUDGET seconds
# are spent; each has its own limit.
set -uo pipefail
MODE=${1:-full}
[[ $MODE == quick || $MODE == full ]] || { echo "fp8-probe.sh: the mode is 'quick' or 'full', not '$MODE'." >&2; exit 2; }
if [[ $MODE == quick ]]; then BUDGET=${BUDGET:-150}; else BUDGET=${BUDGET:-420}; fi
R=${RESULTS:-/tmp/fp8-probe}
mkdir -p "$R/json"
L=build/bench/laptime
export LAPTIME_SOURCE_DIR=$PWD PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:${LD_LIBRARY_PATH:-}
export LAPTIME_CACHE_DIR=$R/cache
SUMMARY=$R/summary.txt

pack() { [[ -n ${OUT:-} ]] && tar czf "$OUT/fp8-probe.tgz" -C "$R" . 2>/dev/null && cp "$SUMMARY" "$OUT/summary-fp8.txt" 2>/dev/null; true; }
left() { echo $((BUDGET - SECONDS)); }
step() {  # step NAME LIMIT COMMAND...: log in $R/NAME.log, skipped once the budget is spent
  local name=$1 limit=$2 rc=0 t0=$SECONDS
  shift 2
  if (($(left) < 10)); then echo "$name: SKIPPED (budget spent)" >>"$R/steps.txt"; return; fi
  ((limit > $(left))) && limit=$(left)
  timeout -k 5 "$limit" "$@" >"$R/$name.log" 2>&1 || rc=$?
  echo "$name: rc=$rc $((SECONDS - t0))s" >>"$R/steps.txt"
  pack
}
PAR_LIMIT=150
[[ $MODE == quick ]] && PAR_LIMIT=90
par() { local name=$1; shift; (timeout -k 5 "$PAR_LIMIT" "$@" >"$R/$name.log" 2>&1; echo "$name: rc=$?" >>"$R/par.txt") & }
gtest_line() { grep -hE '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+' "$@" | tr '\n' ' '; }

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuDNN", torch.backends.cudnn.version())'
  git log -1 --oneline 2>/dev/null; date -u; } >"$R/machine.txt" 2>&1

# Lap rows: NAME ENV ARGS (ENV "-" for none).
bench_row() {
  local name=$1 envs=$2
  shift 2
  [[ $envs == - ]] && envs=
  # shellcheck disable=SC2086
  step "bench_$name" 90 env $envs "$L" bench "$@" --nvtx iter --warmup 5 --iters 20 --json "$R/json/laptime_$name.json"
}
torch_row() {
  local name=$1
  shift
  step "torch_$name" 90 python3 bench/torch_baseline.py "$@" --nvtx iter --warmup 5 --iters 20 --json "$R/json/torch_$name.json"
}

quick() {
  # cuBLASLt's own words on any refusal, beside laptime's (its log goes to stderr, into the log).
  par fp8_layers env CUBLASLT_LOG_LEVEL=1 build/tests/test_fp8_layers
  par e2e_gpt2 python3 tests/e2e/check_gpt2.py --laptime "$L" --precisions fp8 --shapes 4x1024
  wait
  pack
  bench_row gpt2_bf16_b8 - gpt2 -p bf16
  bench_row gpt2_fp8_b8 CUBLASLT_LOG_LEVEL=1 gpt2 -p fp8
  bench_row gpt2_bf16_b1_graph - gpt2 -p bf16 -b 1 --graph
  bench_row gpt2_fp8_b1_graph - gpt2 -p fp8 -b 1 --graph
  bench_row resnet50_fp8_b256 CUBLASLT_LOG_LEVEL=1 resnet50 -p fp8
}

full() {
  # 1. Correctness (the GPU is shared; nothing here is timed).
  par fp8_layers build/tests/test_fp8_layers
  par fp8_reference build/tests/test_fp8_reference
  par gpt2_layers_bf16 build/tests/test_gpt2_layers --gtest_filter='*/bf16'
  par resnet50_layers_bf16 build/tests/test_resnet50_layers --gtest_filter='*/bf16'
  [[ -x build80/tests/test_fp8_layers ]] && par sm80_fp8_layers build80/tests/test_fp8_layers
  par e2e_gpt2 python3 tests/e2e/check_gpt2.py --laptime "$L" --precisions bf16,fp8 --shapes 4x1024,3x77
  par e2e_resnet50 python3 tests/e2e/check_resnet50.py --laptime "$L" --precisions bf16,fp8 --batches 32
  wait
  pack

  # 2. The ceilings, and ResNet-50's convolution shapes in bf16 and fp8, alone.
  step peak 60 "$L" peak --force
  step resnet_shapes 60 build/bench/laptime_fp8_shapes 256

  # 3. The lap table.
  bench_row gpt2_bf16_b8 - gpt2 -p bf16
  bench_row gpt2_fp8_b8 - gpt2 -p fp8
  bench_row gpt2_fp8all_b8 LAPTIME_FP8_GEMM=fp8 gpt2 -p fp8
  bench_row gpt2_fp8fast_b8 LAPTIME_FP8_FAST_ACCUM=1 gpt2 -p fp8
  bench_row gpt2_bf16_b1_graph - gpt2 -p bf16 -b 1 --graph
  bench_row gpt2_fp8_b1_graph - gpt2 -p fp8 -b 1 --graph
  bench_row resnet50_bf16_b256 - resnet50 -p bf16
  bench_row resnet50_fp8_b256 - resnet50 -p fp8
  bench_row resnet50_bf16_b32_graph - resnet50 -p bf16 -b 32 --graph
  bench_row resnet50_fp8_b32_graph - resnet50 -p fp8 -b 32 --graph
  bench_row resnet50_bf16_b1_graph - resnet50 -p bf16 -b 1 --graph
  bench_row resnet50_fp8_b1_graph - resnet50 -p fp8 -b 1 --graph
  torch_row gpt2_bf16_b8 gpt2 --precision bf16
  torch_row gpt2_fp8_b8 gpt2 --precision fp8
  torch_row gpt2_bf16_b1 gpt2 --precision bf16 -b 1
  torch_row gpt2_fp8_b1 gpt2 --precision fp8 -b 1
  torch_row resnet50_bf16_b256 resnet50 --precision bf16
  torch_row resnet50_bf16_b32 resnet50 --precision bf16 -b 32
  torch_row resnet50_bf16_b1 resnet50 --precision bf16 -b 1

  # 4. Per-layer captures and their diff.
  step trace_bf16 60 "$L" bench gpt2 -p bf16 --nvtx layer --warmup 3 --iters 10 --trace "$R/gpt2_bf16.sqlite"
  step trace_fp8 60 "$L" bench gpt2 -p fp8 --nvtx layer --warmup 3 --iters 10 --trace "$R/gpt2_fp8.sqlite"
  step analyze_fp8 30 "$L" analyze "$R/gpt2_fp8.sqlite"
  step diff 30 "$L" diff "$R/gpt2_bf16.sqlite" "$R/gpt2_fp8.sqlite"
  step trace_r50_bf16 60 "$L" bench resnet50 -p bf16 --nvtx layer --warmup 3 --iters 10 --trace "$R/r50_bf16.sqlite"
  step trace_r50_fp8 60 "$L" bench resnet50 -p fp8 --nvtx layer --warmup 3 --iters 10 --trace "$R/r50_fp8.sqlite"
  step diff_r50 30 "$L" diff "$R/r50_bf16.sqlite" "$R/r50_fp8.sqlite"
  rm -f "$R"/*.sqlite  # large; the analyses above are what comes back
}

"$MODE"

# The summary, last.
{
  echo "fp8-probe.sh $MODE"
  cat "$R/machine.txt"
  echo "--- steps"; cat "$R/par.txt" "$R/steps.txt" 2>/dev/null
  echo "--- suites"
  for f in "$R"/fp8_*.log "$R"/*_layers_*.log "$R"/sm80_*.log; do
    [[ -f $f ]] && echo "  ${f##*/}: $(gtest_line "$f")"
  done
  grep -hE "^\[  FAILED  \] [A-Za-z]|rel L2 against the oracle|per tensor|RMS relative" "$R"/fp8_*.log "$R"/*_layers_*.log \
    "$R"/sm80_*.log 2>/dev/null | sort -u | head -30
  echo "--- the first failures' messages (test_fp8_layers)"
  grep -hE -A3 "Failure$" "$R/fp8_layers.log" 2>/dev/null | grep -vE "^--$" | cut -c1-400 | head -24
  echo "--- cuBLASLt's own log (CUBLASLT_LOG_LEVEL=1), by count"
  grep -hoE "\[cublasLt\].*" "$R"/*.log 2>/dev/null | sed -E 's/\[[0-9]+\]//' | cut -c1-300 | sort | uniq -c | sort -rn | head -8
  echo "--- end to end"
  for f in "$R"/e2e_*.log; do sed -n '/^summary:/,$p' "$f" | tail -12; grep -m3 -iE "error|Traceback" "$f"; done
  echo "--- peak"; grep -E "GEMM|copy" "$R/peak.log" 2>/dev/null
  echo "--- ResNet-50 shapes (B256)"; cut -c1-240 "$R/resnet_shapes.log" 2>/dev/null
  echo "--- laps (ms)"
  for f in "$R"/bench_*.log "$R"/torch_*.log; do
    [[ -f $f ]] || continue
    printf '  %-30s %s\n' "$(basename "$f" .log)" "$(grep -oE '^lap time: [0-9.]+' "$f" | grep -oE '[0-9.]+$')"
  done
  echo "--- fp8 choices, GPT-2 (B8, then B1)"
  for f in "$R/bench_gpt2_fp8_b8.log" "$R/bench_gpt2_fp8_b1_graph.log"; do
    grep -hE "^  variant" "$f" 2>/dev/null
    sed -n '/^  plans/,/^  layers/p' "$f" 2>/dev/null | grep -v "^  layers" | cut -c1-400
  done
  echo "--- fp8 choices, ResNet-50 B256 (the 1x1 convolutions' candidates, the fc, the rest)"
  sed -nE 's/^ +([a-z0-9.]+): .*fp8 candidate: (.*)/  \1: \2/p' "$R/bench_resnet50_fp8_b256.log" 2>/dev/null | cut -c1-300 | head -34
  grep -hE "^ +fp8 " "$R/bench_resnet50_fp8_b256.log" 2>/dev/null | cut -c1-400
  echo "--- fp8 capture (analyze, top of the layer table)"; grep -A14 -iE "roofline|per layer" "$R/analyze_fp8.log" 2>/dev/null | head -30
  echo "--- diff bf16 -> fp8 (GPT-2)"; head -40 "$R/diff.log" 2>/dev/null
  echo "--- diff bf16 -> fp8 (ResNet-50 B256)"; grep -E "^  (layer|\(iteration\))|^Verdict" "$R/diff_r50.log" 2>/dev/null | head -30
} >"$SUMMARY"
pack
cat "$SUMMARY"
