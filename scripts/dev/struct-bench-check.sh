#!/usr/bin/env bash
# A restructuring of bench/, core/, layers/ or models/ (issue 17; issue 26's GPU half: weights
# uploaded on ctx.stream(), peak timed through core/timing.h, the environment switches in
# core/env_switches.h, Conv2d's plan choice in layers/conv_plan.cpp), on a GPU machine: is the
# new laptime the same as the binary before it, and do the GPU suites pass?
#
#   scripts/dev/struct-bench-check.sh [OLD_BIN] [BUILD_DIR]
#
#   OLD_BIN    the laptime from before the change (default: $OLD_LAPTIME, else
#              build/laptime-base-477829a), with its liblaptime_gpu.so beside it
#   BUILD_DIR  the new build (default: build), with the laptime command (bench/ or cli/) and its
#              module, and tests/test_{gpt2,resnet50}_{layers,reference}, test_layer_costs,
#              test_bench_report, test_fp8_{layers,reference}, test_env_switches (a missing
#              test binary is reported as missing, not run)
#
# 1. In the background, the GPU suites, split as h200-final.sh splits them: test_gpt2_layers
#    and test_resnet50_layers per precision and the rest, test_gpt2_reference,
#    test_resnet50_reference, test_layer_costs (the built models' costs against the committed
#    sidecars, byte for byte), test_bench_report, test_fp8_layers, test_fp8_reference,
#    test_env_switches.
# 2. Meanwhile, the same bench rows with both binaries, old and new side by side, each in a
#    folder of its own so both print the same relative paths: GPT-2 (B=8 T=1024) and ResNet-50
#    (B=32), bf16 / tf32 / fp32, eager and --graph, every row with --trace t.sqlite and
#    --json r.json (so each writes t.layers.json and r.layers.json). ResNet-50's rows choose
#    their convolutions untimed (LAPTIME_CONV_TUNE=off), so that the plan lines, the workspace
#    and the trace's kernels are deterministic and compared exactly; one more ResNet-50 row
#    times them (the tuned path, through core/timing.h) and one GPT-2 row times its GEMMs
#    (LAPTIME_GPT2_GEMM=timed, Gemm::autotune through core/timing.h): there what a timing
#    chose is masked too. fp8 rows (GPT-2, ResNet-50 B=32) force e4m3 (LAPTIME_FP8_GEMM=fp8) so
#    that the choice and the sidecars are deterministic; their plan lines, which carry measured
#    milliseconds, are masked. Three small GPT-2 rows run the pitfalls (sync, pageable, alloc),
#    one writes --json - (standard output), and `laptime peak --force` runs once a side (its
#    lines and file compared with every number masked: the format, not the ceilings).
#    scripts/dev/struct_bench_compare.py compares each row: text and JSON with only what
#    measures time masked (its docstring lists every masked field), the sidecars byte for
#    byte, the trace's NVTX range and kernel names with their counts, the exit status.
# 3. Last, with the GPU otherwise idle, four rows timed one binary at a time, old and new in
#    turn (GPT-2 bf16 and fp8 --graph, ResNet-50 bf16 B=256 eager and B=32 --graph): each
#    side's "lap time:" line goes to the summary, for the lead to see the laps unchanged.
#    LAPS=0 leaves this step out (a call short of device time).
#
# Takes about 5 minutes on one H200. Results: $OUT/struct-bench-check.tgz (every log, output
# and diff) and $OUT/summary.txt; without $OUT, $RESULTS (default /tmp/struct-bench-check).
# Exit 1 when a row differs or a suite fails (step 3 is information only).
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 2
OLD=${1:-${OLD_LAPTIME:-build/laptime-base-477829a}}
BUILD=${2:-build}
[[ -x $OLD ]] || { echo "struct-bench-check: no old laptime at $OLD (pass it as the first argument)." >&2; exit 2; }
NEW=""
for c in "$BUILD/cli/laptime" "$BUILD/bench/laptime"; do [[ -x $c ]] && { NEW=$c; break; }; done
[[ -n $NEW ]] || { echo "struct-bench-check: no laptime in $BUILD/cli or $BUILD/bench; build it first." >&2; exit 2; }
OLD=$(readlink -f "$OLD")
NEW=$(readlink -f "$NEW")
T=$(readlink -f "$BUILD/tests")
R=${RESULTS:-/tmp/struct-bench-check}
rm -rf "$R"
mkdir -p "$R/rows" "$R/suites"
SUMMARY=$R/summary.txt
export LAPTIME_SOURCE_DIR=$REPO PYTHONUNBUFFERED=1
# build/lib: the system libraries pack-carry.sh copies (RE2) where the device lacks them.
BUILD_LIB=$(readlink -f "$BUILD")/lib
export LD_LIBRARY_PATH=$BUILD_LIB:/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:${LD_LIBRARY_PATH:-}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
  echo "old: $OLD"; echo "new: $NEW ($(git log -1 --format='%h %s' 2>/dev/null | cut -c1-80))"; } >"$SUMMARY"
pack() { [[ -n ${OUT:-} ]] && { tar czf "$OUT/struct-bench-check.tgz" -C "$R" . 2>/dev/null; cp "$SUMMARY" "$OUT/summary.txt"; }; true; }
status=0

# 1. The suites, in the background.
suite() {  # suite NAME BINARY [gtest args...]
  local name=$1
  shift
  [[ -x $1 ]] || { echo "$name: missing ($1)" >>"$R/suites/rc.txt"; return; }
  (timeout -k 5 300 "$@" >"$R/suites/$name.log" 2>&1; echo "$name: rc=$?" >>"$R/suites/rc.txt") &
}
for p in fp32 tf32 bf16; do
  suite gpt2_layers_$p "$T/test_gpt2_layers" --gtest_filter="*/$p"
  suite resnet50_layers_$p "$T/test_resnet50_layers" --gtest_filter="*/$p"
done
suite gpt2_layers_rest "$T/test_gpt2_layers" --gtest_filter='-*/fp32:*/tf32:*/bf16'
suite resnet50_layers_rest "$T/test_resnet50_layers" --gtest_filter='-*/fp32:*/tf32:*/bf16'
suite gpt2_reference "$T/test_gpt2_reference"
suite resnet50_reference "$T/test_resnet50_reference"
suite layer_costs "$T/test_layer_costs"
suite bench_report "$T/test_bench_report"
suite fp8_layers "$T/test_fp8_layers"
suite fp8_reference "$T/test_fp8_reference"
suite env_switches "$T/test_env_switches"

# 2. The rows: row NAME [--tuned-conv] [--json-stdout] -- [VAR=value...] bench ARGS...
row() {
  local name=$1 flags=()
  shift
  while [[ $1 != -- ]]; do flags+=("$1"); shift; done
  shift
  local envs=()
  while [[ $1 == *=* ]]; do envs+=("$1"); shift; done
  local side bin pids=()
  for side in old new; do  # side by side: correctness only, nothing here is a timing
    bin=$OLD
    [[ $side == new ]] && bin=$NEW
    mkdir -p "$R/rows/$name/$side"
    (cd "$R/rows/$name/$side" && env "${envs[@]}" timeout -k 5 120 "$bin" "$@" >stdout 2>stderr; echo $? >rc) &
    pids+=($!)
  done
  wait "${pids[@]}"  # these two only: the suites run on
  python3 "$REPO/scripts/dev/struct_bench_compare.py" "$R/rows/$name" "${flags[@]}" | tee -a "$SUMMARY"
  ((PIPESTATUS[0] == 0)) || status=1
  pack
}
ROWS=(--warmup 1 --iters 3 --nvtx layer --trace t.sqlite --json r.json)
TUNE_OFF=LAPTIME_CONV_TUNE=off
for p in bf16 tf32 fp32; do
  row gpt2_${p}_eager -- bench gpt2 --precision $p "${ROWS[@]}"
  row gpt2_${p}_graph -- bench gpt2 --precision $p --graph "${ROWS[@]}"
  row resnet50_${p}_b32_eager -- $TUNE_OFF bench resnet50 --precision $p --batch 32 "${ROWS[@]}"
  row resnet50_${p}_b32_graph -- $TUNE_OFF bench resnet50 --precision $p --batch 32 --graph "${ROWS[@]}"
done
row gpt2_bf16_timed_gemm -- LAPTIME_GPT2_GEMM=timed bench gpt2 --precision bf16 "${ROWS[@]}"
row resnet50_bf16_b32_tuned --tuned-conv -- bench resnet50 --precision bf16 --batch 32 "${ROWS[@]}"
row resnet50_bf16_b32_cudnnstem -- $TUNE_OFF bench resnet50 --precision bf16 --batch 32 --stem cudnn "${ROWS[@]}"
for pit in sync pageable alloc; do
  row gpt2_pitfall_$pit -- bench gpt2 --batch 1 --seq 64 --pitfall $pit --warmup 1 --iters 2 --nvtx layer \
    --trace t.sqlite --json r.json
done
row gpt2_json_stdout --json-stdout -- bench gpt2 --batch 1 --seq 64 --warmup 1 --iters 2 --json -
FP8=LAPTIME_FP8_GEMM=fp8
row gpt2_fp8_eager --tuned-conv -- $FP8 bench gpt2 --precision fp8 "${ROWS[@]}"
row resnet50_fp8_b32_graph --tuned-conv -- $FP8 $TUNE_OFF bench resnet50 --precision fp8 --batch 32 --graph "${ROWS[@]}"
row peak --peak -- peak --force --cache p.json
echo "rows done at ${SECONDS}s" >>"$SUMMARY"

# The suites' verdicts.
wait

# 3. Laps, one binary at a time on an idle GPU, old and new in turn.
lap() {  # lap NAME bench ARGS...
  local name=$1 side bin
  shift
  for side in old new; do
    bin=$OLD
    [[ $side == new ]] && bin=$NEW
    mkdir -p "$R/laps/$name"
    timeout -k 5 300 "$bin" "$@" >"$R/laps/$name/$side.txt" 2>&1
    local rc=$?
    echo "lap $name $side: $(grep -h '^lap time:' "$R/laps/$name/$side.txt" || echo "no lap time (exit $rc)")" >>"$SUMMARY"
  done
}
if [[ ${LAPS:-1} == 1 ]]; then
  lap gpt2_bf16_b8_graph bench gpt2 --precision bf16 --graph
  lap gpt2_fp8_b8_graph bench gpt2 --precision fp8 --graph
  lap resnet50_bf16_b256_eager bench resnet50 --precision bf16 --batch 256
  lap resnet50_bf16_b32_graph bench resnet50 --precision bf16 --batch 32 --graph
fi
sort "$R/suites/rc.txt" >>"$SUMMARY"
grep -q 'rc=[^0]' "$R/suites/rc.txt" && status=1
for f in "$R"/suites/*.log; do
  echo "  ${f##*/}: $(grep -hE '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+' "$f" | tr '\n' ' ')" >>"$SUMMARY"
done
grep -hE '^\[  FAILED  \] [A-Za-z]' "$R"/suites/*.log | sort -u | head -20 >>"$SUMMARY"
echo "done at ${SECONDS}s, exit $status" >>"$SUMMARY"
pack
cat "$SUMMARY"
exit "$status"
