#!/usr/bin/env bash
# Issue 29's CUTLASS measurement in one device call (about 120 s; BUDGET defaults to 170):
#
#   scripts/cutlass-probe.sh          (from the repository root; build/ carried, nothing is built:
#                                      scripts/dev/pack-carry.sh packs it, carry .carry, and
#                                      `tar xJf .carry/build.tar.xz` first)
#
#   1. correctness, in parallel (nothing here is timed): test_cutlass_gemm (every sm_90a kernel
#      against the CPU reference, through the Gemm plan the layers use; one first run inside a
#      graph's capture), test_gemm_tuner (Eager charges the host, Graph does not), and the suites
#      where the tuner now weighs CUTLASS beside cuBLASLt: test_gpt2_layers' timed-GEMM tests
#      (LinearTimedAlgorithm, WholeModelInGraph, against the oracle) and test_fp8_layers;
#   2. laptime_cutlass_probe alone (bench/cutlass_probe.cu): GPT-2's five GEMM shapes at M = 8192
#      and 1024, bf16, fp8 and fp8 -> e4m3, every CUTLASS kernel and schedule beside cuBLASLt's
#      best, checked and timed; its table and --json;
#   3. lap rows, serial: GPT-2 B8 T1024 bf16 and fp8 with LAPTIME_GPT2_GEMM=timed, CUTLASS off
#      then on (LAPTIME_CUTLASS=off|auto: the integration's A/B, its plan lines name the kernel
#      each fp8 layer kept), then B1 --graph bf16 off/on while the budget lasts;
#   4. the summary, last.
# Binaries: build/tests/test_cutlass_gemm, build/tests/test_gemm_tuner, build/tests/test_gpt2_layers,
# build/tests/test_fp8_layers, build/bench/laptime_cutlass_probe, build/bench/laptime and
# build/bench/liblaptime_gpu.so (stripped copies are enough); the ones missing are listed.
# Out: $OUT/cutlass-summary.txt, $OUT/cutlass-probe.json, everything in $OUT/cutlass-logs.tgz.
set -uo pipefail
BUDGET=${BUDGET:-170}
R=${RESULTS:-/tmp/cutlass-probe}
mkdir -p "$R/json"
L=build/bench/laptime
export LAPTIME_SOURCE_DIR=$PWD PYTHONUNBUFFERED=1
# build/lib: the system libraries scripts/dev/pack-carry.sh ships beside the binaries (RE2).
export LD_LIBRARY_PATH=$PWD/build/lib:/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:${LD_LIBRARY_PATH:-}
export LAPTIME_CACHE_DIR=$R/cache
SUMMARY=$R/summary.txt
: >"$R/steps.txt"

pack() {
  [[ -n ${OUT:-} ]] || return 0
  tar czf "$OUT/cutlass-logs.tgz" -C "$R" . 2>/dev/null
  cp "$R/json/cutlass-probe.json" "$OUT/cutlass-probe.json" 2>/dev/null
  cp "$SUMMARY" "$OUT/cutlass-summary.txt" 2>/dev/null
  true
}
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
par() { local name=$1; shift; (t0=$SECONDS; timeout -k 5 60 "$@" >"$R/$name.log" 2>&1; echo "$name: rc=$? $((SECONDS - t0))s" >>"$R/steps.txt") & }
gtest_line() { grep -hE '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+' "$@" | tr '\n' ' '; }

for f in build/tests/test_cutlass_gemm build/tests/test_gemm_tuner build/tests/test_gpt2_layers build/tests/test_fp8_layers \
  build/bench/laptime_cutlass_probe "$L" build/bench/liblaptime_gpu.so; do
  [[ -e $f ]] || echo "missing: $f" >>"$R/steps.txt"
done
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader
  git log -1 --oneline 2>/dev/null; date -u; } >"$R/machine.txt" 2>&1

# 1. Correctness.
par cutlass_gemm build/tests/test_cutlass_gemm
par gemm_tuner build/tests/test_gemm_tuner
par gpt2_timed build/tests/test_gpt2_layers --gtest_filter='*LinearTimedAlgorithm*:*WholeModelInGraph*'
par fp8_layers build/tests/test_fp8_layers
wait
pack

# 2. The probe, alone on the GPU.
step probe 70 build/bench/laptime_cutlass_probe --json "$R/json/cutlass-probe.json"

# 3. Lap rows: NAME ENV... -- ARGS.
bench_row() {
  local name=$1 cutlass=$2
  shift 2
  step "bench_$name" 35 env LAPTIME_GPT2_GEMM=timed LAPTIME_CUTLASS="$cutlass" "$L" bench gpt2 "$@" --nvtx iter \
    --warmup 5 --iters 20 --json "$R/json/laptime_$name.json"
}
bench_row bf16_b8_cublaslt off -p bf16
bench_row bf16_b8_cutlass auto -p bf16
bench_row fp8_b8_cublaslt off -p fp8
bench_row fp8_b8_cutlass auto -p fp8
bench_row bf16_b1_graph_cublaslt off -p bf16 -b 1 --graph
bench_row bf16_b1_graph_cutlass auto -p bf16 -b 1 --graph

# 4. The summary.
lap_of() {  # "median (min x)" of a lap row's log
  local med min
  med=$(grep -oE '^lap time: [0-9.]+' "$1" | grep -oE '[0-9.]+$')
  min=$(grep -oE 'steady state .* min [0-9.]+' "$1" | grep -oE '[0-9.]+$')
  [[ -n $med ]] && echo "$med (min $min)"
}
{
  echo "cutlass-probe.sh (budget ${BUDGET}s, ${SECONDS}s used)"
  cat "$R/machine.txt"
  echo "--- steps"; cat "$R/steps.txt"
  echo "--- suites"
  for f in "$R"/cutlass_gemm.log "$R"/gemm_tuner.log "$R"/gpt2_timed.log "$R"/fp8_layers.log; do
    [[ -f $f ]] && echo "  ${f##*/}: $(gtest_line "$f")"
  done
  grep -hE -B2 -A6 "Failure$" "$R"/cutlass_gemm.log "$R"/gemm_tuner.log "$R"/gpt2_timed.log "$R"/fp8_layers.log 2>/dev/null |
    cut -c1-300 | head -40
  echo "--- probe (bench/cutlass_probe.cu; times in us, x: cuBLASLt's time over CUTLASS's)"
  cat "$R/probe.log" 2>/dev/null
  echo "--- laps (ms, median of 20; LAPTIME_GPT2_GEMM=timed)"
  for f in "$R"/bench_*.log; do
    [[ -f $f ]] || continue
    printf '  %-32s %s\n' "$(basename "$f" .log)" "$(lap_of "$f")"
  done
  echo "--- fp8 plan lines with CUTLASS (B8)"
  sed -n '/^  plans/,/^  layers/p' "$R/bench_fp8_b8_cutlass.log" 2>/dev/null | grep -v "^  layers" | cut -c1-400
  grep -hiE "error|refused|cannot" "$R"/bench_*.log 2>/dev/null | sort -u | cut -c1-300 | head -10
} >"$SUMMARY"
pack
cat "$SUMMARY"
