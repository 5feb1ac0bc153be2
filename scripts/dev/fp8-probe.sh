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
# full (about 230 s; BUDGET defaults to 240), the closing run's rows, in order of need (a step
# that would start past the budget is skipped and says so):
#   1. correctness, in parallel (nothing here is timed): test_fp8_layers and test_fp8_reference,
#      the sm_80 build's fp8 suite and its `-p fp8` refusal (when build80/ is carried), end to end
#      for both models in bf16 and fp8 (auto and every GEMM) beside PyTorch bf16 and PyTorch's fp8
#      counterpart (_scaled_mm, the same recipe): GPT-2 B4 T1024 and B3 T77, ResNet-50 B32.
#      CHECKS=0 skips this phase (~60 s): scripts/dev/closing-run.sh a runs these suites, and the
#      end-to-end checks in every precision (fp8 included) at both shapes each.
#   2. `laptime peak --force`: fp8's GEMM ceiling, which analyze and diff bound fp8 layers by;
#   3. the lap table, serial: laptime bf16 / fp8 for GPT-2 at B8 T1024 and B1 --graph (and fp8
#      with LAPTIME_FP8_MLP=apart at B8, the quick probe's choice, beside the pair), ResNet-50 at
#      B256, B32 --graph and B1 --graph; PyTorch eager bf16 and _scaled_mm fp8 for GPT-2 at B8 and
#      B1 (scripts/dev/torch_rows.py: one process a model, each row as its own command line runs
#      it); every row's --json report;
#   4. CUPTI captures of GPT-2 B8 and ResNet-50 B256 in bf16 and fp8, `laptime analyze` of the fp8
#      ones (the roofline at fp8's ceiling) and `laptime diff` bf16 -> fp8 for both models;
#   5. PyTorch eager bf16 for ResNet-50 at B256, B32 and B1 (run 3 has them if the budget runs out
#      here), fp8 apart at B1 --graph, the summary last.
# Not in it: torch.compile rows (a compile is 40-90 s a row: too long for this call; docs/PERF.md
# run 3 has bf16's), fast accumulation (LAPTIME_FP8_FAST_ACCUM=1), laptime_fp8_shapes (its table is
# in docs/PERF.md's fp8 section).
# Binaries (stripped copies are enough): build/bench/laptime, build/bench/liblaptime_gpu.so,
# build/tests/test_fp8_layers, build/tests/test_fp8_reference; with build80/: build80/bench/laptime,
# build80/bench/liblaptime_gpu.so, build80/tests/test_fp8_layers. The probe says which are missing.
# Both: $OUT/summary-fp8.txt and everything in $OUT/fp8-probe.tgz (json/ is docs/perf/<date>-fp8/).
set -uo pipefail
MODE=${1:-full}
[[ $MODE == quick || $MODE == full ]] || { echo "fp8-probe.sh: the mode is 'quick' or 'full', not '$MODE'." >&2; exit 2; }
if [[ $MODE == quick ]]; then BUDGET=${BUDGET:-150}; else BUDGET=${BUDGET:-240}; fi
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
PAR_LIMIT=120
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
  step "bench_$name" 60 env $envs "$L" bench "$@" --nvtx iter --warmup 5 --iters 20 --json "$R/json/laptime_$name.json"
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

# PyTorch rows in one process a model (scripts/dev/torch_rows.py); any row that left no report is
# run again alone, as before, while the budget lasts.
torch_rows() {
  local name=$1
  shift
  step "rows_torch_$name" 120 python3 scripts/dev/torch_rows.py "$R" "$@"
  while (($# >= 2)); do
    [[ -s $R/json/torch_$1.json ]] || { read -r -a a <<<"$2"; torch_row "$1" "${a[@]}"; }
    shift 2
  done
}

full() {
  local need=(build/bench/laptime build/bench/liblaptime_gpu.so build/tests/test_fp8_layers build/tests/test_fp8_reference)
  [[ -d build80 ]] && need+=(build80/bench/laptime build80/bench/liblaptime_gpu.so build80/tests/test_fp8_layers)
  for f in "${need[@]}"; do [[ -e $f ]] || echo "missing: $f" >>"$R/steps.txt"; done
  # 1. Correctness (the GPU is shared; nothing here is timed).
  if [[ ${CHECKS:-1} != 0 ]]; then
    par fp8_layers build/tests/test_fp8_layers
    par fp8_reference build/tests/test_fp8_reference
    if [[ -x build80/tests/test_fp8_layers ]]; then
      par sm80_fp8_layers build80/tests/test_fp8_layers
      par sm80_refusal build80/bench/laptime bench gpt2 -b 1 -t 64 -n 2 -p fp8  # must fail with the sentence
    fi
    par e2e_gpt2 python3 tests/e2e/check_gpt2.py --laptime "$L" --precisions bf16,fp8 --shapes 4x1024,3x77
    par e2e_resnet50 python3 tests/e2e/check_resnet50.py --laptime "$L" --precisions bf16,fp8 --batches 32
    wait
    pack
  fi

  # 2. fp8's ceiling beside bf16's (analyze and diff read it from $LAPTIME_CACHE_DIR).
  step peak 40 "$L" peak --force

  # 3. The lap table.
  bench_row gpt2_bf16_b8 - gpt2 -p bf16
  bench_row gpt2_fp8_b8 - gpt2 -p fp8
  bench_row gpt2_fp8apart_b8 LAPTIME_FP8_MLP=apart gpt2 -p fp8
  bench_row gpt2_bf16_b1_graph - gpt2 -p bf16 -b 1 --graph
  bench_row gpt2_fp8_b1_graph - gpt2 -p fp8 -b 1 --graph
  bench_row resnet50_bf16_b256 - resnet50 -p bf16
  bench_row resnet50_fp8_b256 - resnet50 -p fp8
  bench_row resnet50_bf16_b32_graph - resnet50 -p bf16 -b 32 --graph
  bench_row resnet50_fp8_b32_graph - resnet50 -p fp8 -b 32 --graph
  bench_row resnet50_bf16_b1_graph - resnet50 -p bf16 -b 1 --graph
  bench_row resnet50_fp8_b1_graph - resnet50 -p fp8 -b 1 --graph
  local loop="--nvtx iter --warmup 5 --iters 20"
  torch_rows gpt2 gpt2_bf16_b8 "gpt2 --precision bf16 $loop" gpt2_fp8_b8 "gpt2 --precision fp8 $loop" \
    gpt2_bf16_b1 "gpt2 --precision bf16 -b 1 $loop" gpt2_fp8_b1 "gpt2 --precision fp8 -b 1 $loop"

  # 4. Per-layer captures and their diff.
  local cap=(--nvtx layer --warmup 3 --iters 10)
  step trace_bf16 45 "$L" bench gpt2 -p bf16 "${cap[@]}" --trace "$R/gpt2_bf16.sqlite"
  step trace_fp8 45 "$L" bench gpt2 -p fp8 "${cap[@]}" --trace "$R/gpt2_fp8.sqlite"
  step analyze_fp8 20 "$L" analyze "$R/gpt2_fp8.sqlite"
  step diff 20 "$L" diff "$R/gpt2_bf16.sqlite" "$R/gpt2_fp8.sqlite"
  step trace_r50_bf16 45 "$L" bench resnet50 -p bf16 "${cap[@]}" --trace "$R/r50_bf16.sqlite"
  step trace_r50_fp8 45 "$L" bench resnet50 -p fp8 "${cap[@]}" --trace "$R/r50_fp8.sqlite"
  step analyze_r50_fp8 20 "$L" analyze "$R/r50_fp8.sqlite"
  step diff_r50 20 "$L" diff "$R/r50_bf16.sqlite" "$R/r50_fp8.sqlite"
  rm -f "$R"/*.sqlite  # large; the analyses above and the sidecars are what comes back

  # PyTorch's ResNet-50 rows after the captures: where the budget runs short, docs/PERF.md run 3 has them.
  torch_rows resnet50 resnet50_bf16_b256 "resnet50 --precision bf16 $loop" \
    resnet50_bf16_b32 "resnet50 --precision bf16 -b 32 $loop" resnet50_bf16_b1 "resnet50 --precision bf16 -b 1 $loop"

  # 5. What is left if the budget allows.
  bench_row gpt2_fp8apart_b1_graph LAPTIME_FP8_MLP=apart gpt2 -p fp8 -b 1 --graph
}

"$MODE"

# The summary, last.
lap_of() {  # "median (min x)" of a lap row's log
  local med min
  med=$(grep -oE '^lap time: [0-9.]+' "$1" | grep -oE '[0-9.]+$')
  min=$(grep -oE 'steady state .* min [0-9.]+' "$1" | grep -oE '[0-9.]+$')
  [[ -n $med ]] && echo "$med (min $min)"
}
{
  echo "fp8-probe.sh $MODE (budget ${BUDGET}s, ${SECONDS}s used)"
  cat "$R/machine.txt"
  echo "--- steps"; cat "$R/par.txt" "$R/steps.txt" "$R"/rows_torch_*.log 2>/dev/null
  echo "--- suites"
  for f in "$R"/fp8_*.log "$R"/*_layers_*.log "$R"/sm80_fp8_layers.log; do
    [[ -f $f ]] && echo "  ${f##*/}: $(gtest_line "$f")"
  done
  grep -hE "^\[  FAILED  \] [A-Za-z]|rel L2 against|the recipe's error|per tensor|RMS relative" "$R"/fp8_*.log \
    "$R"/*_layers_*.log "$R"/sm80_*.log 2>/dev/null | sort -u | cut -c1-220 | head -40
  [[ -f $R/sm80_refusal.log ]] && echo "  sm_80 -p fp8 (must be refused): $(grep -m1 -E 'fp8' "$R/sm80_refusal.log" | cut -c1-200)"
  echo "--- the first failures' messages (test_fp8_layers)"
  grep -hE -A3 "Failure$" "$R/fp8_layers.log" 2>/dev/null | grep -vE "^--$" | cut -c1-400 | head -24
  echo "--- cuBLASLt's own log (CUBLASLT_LOG_LEVEL=1), by count"
  grep -hoE "\[cublasLt\].*" "$R"/*.log 2>/dev/null | sed -E 's/\[[0-9]+\]//' | cut -c1-300 | sort | uniq -c | sort -rn | head -8
  echo "--- end to end"
  for f in "$R"/e2e_*.log; do sed -n '/^summary:/,$p' "$f" | tail -12; grep -m3 -iE "error|Traceback" "$f"; done
  echo "--- peak"; grep -E "GEMM|copy" "$R/peak.log" 2>/dev/null
  echo "--- laps (ms, median of 20)"
  for f in "$R"/bench_*.log "$R"/torch_*.log; do
    [[ -f $f ]] || continue
    printf '  %-30s %s\n' "$(basename "$f" .log)" "$(lap_of "$f")"
  done
  echo "  (torch.compile rows: not run, 40-90 s of compile a row is too long for this call)"
  echo "--- fp8 choices, GPT-2 (B8; B8 with LAPTIME_FP8_MLP=apart; B1 --graph)"
  for f in "$R/bench_gpt2_fp8_b8.log" "$R/bench_gpt2_fp8apart_b8.log" "$R/bench_gpt2_fp8_b1_graph.log"; do
    grep -hE "^  variant" "$f" 2>/dev/null
    sed -n '/^  plans/,/^  layers/p' "$f" 2>/dev/null | grep -v "^  layers" | cut -c1-400
  done
  echo "--- fp8 choices, ResNet-50 B256 (the 1x1 convolutions' candidates, the fc, the rest)"
  sed -nE 's/^ +([a-z0-9.]+): .*fp8 candidate: (.*)/  \1: \2/p' "$R/bench_resnet50_fp8_b256.log" 2>/dev/null | cut -c1-300 | head -34
  grep -hE "^ +fp8 " "$R/bench_resnet50_fp8_b256.log" 2>/dev/null | cut -c1-400
  for a in analyze_fp8 analyze_r50_fp8; do
    echo "--- $a (by layer, then the roofline at each layer's own ceiling)"
    sed -n '/by layer/,/^$/p' "$R/$a.log" 2>/dev/null | head -14
    sed -n '/^Roofline per layer/,$p' "$R/$a.log" 2>/dev/null | cut -c1-200 | head -24
  done
  echo "--- diff bf16 -> fp8 (GPT-2 B8)"; sed -n '/^  layer /,$p' "$R/diff.log" 2>/dev/null | head -24
  echo "--- diff bf16 -> fp8 (ResNet-50 B256)"; grep -E "^  (layer|\(iteration\))|^Verdict" "$R/diff_r50.log" 2>/dev/null | head -30
} >"$SUMMARY"
pack
cat "$SUMMARY"
