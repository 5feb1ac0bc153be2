#!/usr/bin/env bash
# ResNet-50 on the GPU in one go (issue 11): the GPU suites, the end-to-end check against
# PyTorch in all three precisions, and the lap times of the five issue cases, with a table last.
#
#   scripts/dev/resnet-perf.sh [--quick] [--baseline PATH] [--build DIR]
#     --quick          end-to-end at batch 3 only (default: 32,3), and no traces
#     --short          about a minute of device time: the small-batch cases and bf16 B256 (before
#                      and after), then the end-to-end check at batch 32; no suites, no traces
#     --baseline PATH  another laptime binary (e.g. main's) timed on the same cases first, so the
#                      before/after comes from one run on one card
#     --build DIR      where bench/laptime and tests/test_resnet50_* are (default: build)
# Environment: BATCHES (end-to-end batches, default 32,3), GTEST_FILTER (the layer suite's tests).
# Writes logs and JSON reports under $OUT (default: ./resnet-perf-out).
set -uo pipefail
QUICK=0; SHORT=0; BASE=""; BUILD=build
while (($#)); do
  case $1 in
    --quick) QUICK=1; shift ;;
    --short) SHORT=1; QUICK=1; shift ;;
    --baseline) BASE=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$PWD/resnet-perf-out}
LOGS=$(mktemp -d)  # bench logs and JSON, packed into $OUT/reports.tar.gz at the end
mkdir -p "$OUT" "$LOGS/json"
LT=$BUILD/bench/laptime
ROWS=()
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv,noheader || true

step() {  # name, timeout, command...
  local name=$1 t=$2; shift 2
  local s=$SECONDS
  echo "=== $name"
  timeout "$t" "$@"
  local rc=$?
  echo "=== $name: rc=$rc, $((SECONDS - s)) s"
  ROWS+=("$(printf '%-34s rc=%-3s %4ss' "$name" "$rc" "$((SECONDS - s))")")
}

LAPS=()
bench() {  # label, binary, args...
  local label=$1 bin=$2; shift 2
  local log="$LOGS/bench-${label// /_}.log"
  timeout 120 "$bin" bench resnet50 --nvtx iter --iters 20 --warmup 5 "$@" >"$log" 2>&1
  local rc=$?
  local lap; lap=$(grep -o 'lap time: [0-9.]* ms' "$log" | grep -o '[0-9.]*' | head -1)
  local build; build=$(grep -o 'batch [0-9]* planned in [0-9.]* s' "$log" | tail -1)
  LAPS+=("$(printf '%-36s %9s ms   %s' "$label" "${lap:-rc=$rc}" "$build")")
  echo "--- $label: ${lap:-FAILED rc=$rc} ms  $build"
  ((rc)) && tail -5 "$log"
}
if ((SHORT)); then
  for c in "bf16 B1 graph:-p bf16 -b 1 --graph" "bf16 B32 graph:-p bf16 -b 32 --graph" "bf16 B256:-p bf16 -b 256"; do
    # shellcheck disable=SC2086
    bench "after ${c%%:*}" "$LT" ${c#*:} --json "$LOGS/json/$(echo "${c%%:*}" | tr ' ' _).json"
    # shellcheck disable=SC2086
    [[ -n $BASE && $c != *B256* ]] && bench "before ${c%%:*}" "$BASE" ${c#*:}
  done
  echo "=== engines per layer (bf16 B1 graph)"
  sed -n '/^  plans/,/build:/p' "$LOGS/bench-after_bf16_B1_graph.log" | head -70
  step "check_resnet50 (32)" 100 python3 tests/e2e/check_resnet50.py --laptime "$LT" --batches 32 \
    --precisions fp32,tf32,bf16
else
step "test_resnet50_reference" 60 "$BUILD/tests/test_resnet50_reference" --gtest_brief=1
BATCHES=${BATCHES:-32,3}; ((QUICK)) && BATCHES=3
step "check_resnet50 ($BATCHES)" 150 python3 tests/e2e/check_resnet50.py --laptime "$LT" --batches "$BATCHES" \
  --precisions fp32,tf32,bf16

CASES=("bf16 B256:-p bf16 -b 256" "tf32 B256:-p tf32 -b 256" "fp32 B256:-p fp32 -b 256"
       "bf16 B32 graph:-p bf16 -b 32 --graph" "bf16 B1 graph:-p bf16 -b 1 --graph")
for c in "${CASES[@]}"; do
  # shellcheck disable=SC2086
  bench "after ${c%%:*}" "$LT" ${c#*:} --json "$LOGS/json/$(echo "${c%%:*}" | tr ' ' _).json"
done
# The untimed plan choice (cuDNN's first plan) with everything else of this build: what tuning alone buys.
LAPTIME_CONV_TUNE=off bench "tune=off bf16 B256" "$LT" -p bf16 -b 256
if [[ -n $BASE ]]; then
  for c in "${CASES[@]}"; do
    # shellcheck disable=SC2086
    bench "before ${c%%:*}" "$BASE" ${c#*:}
  done
fi
# GTEST_FILTER (environment) narrows the layer suite when device time is short.
step "test_resnet50_layers" 150 "$BUILD/tests/test_resnet50_layers" --gtest_brief=1
echo "=== engines per layer (bf16 B256)"
sed -n '/^  plans/,/build:/p' "$LOGS/bench-after_bf16_B256.log" | head -70
fi

if ((QUICK == 0)); then
  for c in "bf16 B256:-p bf16 -b 256" "bf16 B1 graph:-p bf16 -b 1 --graph"; do
    f="$OUT/trace-$(echo "${c%%:*}" | tr ' ' _)"
    # shellcheck disable=SC2086
    t="$LOGS/trace.sqlite"
    timeout 90 "$LT" bench resnet50 --nvtx layer --iters 10 --warmup 3 ${c#*:} --trace "$t" >/dev/null 2>&1 &&
      timeout 60 "$LT" analyze "$t" >"$f.txt" 2>&1
    rm -f "$t"
  done
fi
tar -C "$LOGS" -czf "$OUT/reports.tar.gz" .
echo
echo "================ summary"
printf '%s\n' "${ROWS[@]}"
echo
printf '%-36s %12s   %s\n' "case" "lap" "build"
printf '%s\n' "${LAPS[@]}"
