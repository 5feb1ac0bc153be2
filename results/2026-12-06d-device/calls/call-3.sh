#!/usr/bin/env bash
# Call 3 (2026-12-06d): cuDNN's split-K variants for small convolutions (LAPTIME_CONV_SPLITK=on,
# layers/resnet50/conv_plan.cpp), any Hopper card: (1) correctness with it on: test_resnet50_layers
# and the end-to-end check at B1 and B32 (bf16, fp8) on `bench --output`; (2) the plans it chose at
# B1 bf16; (3) off against on, alternated (3 pairs): ResNet-50 B1 and B32 `--graph` in bf16 and fp8.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
tar xJf .carry/build.tar.xz || exit 2
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
L=$OUT/call-3.log
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; date -u; } >"$L"
source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1
LT=$(realpath build/bench/laptime)
(
  LAPTIME_CONV_SPLITK=on timeout -k 5 200 build/tests/test_resnet50_layers >/tmp/r50.log 2>&1 &
  LAPTIME_CONV_SPLITK=on timeout -k 5 200 python3 tests/e2e/check_resnet50.py --laptime "$LT" --precisions bf16,fp8 \
    --batches 1,32 >/tmp/e2e.log 2>&1 &
  wait
  echo "== test_resnet50_layers (split-K on)"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|Failure' /tmp/r50.log | head
  echo "== e2e (split-K on)"; sed -n '/^summary:/,$p' /tmp/e2e.log; tail -3 /tmp/e2e.log
) >"$OUT/tests.log" 2>&1
echo "== tests done at ${SECONDS}s" >>"$L"
LAPTIME_CONV_SPLITK=on "$LT" bench resnet50 -p bf16 -b 1 --graph >"$OUT/b1-bf16-on.txt" 2>&1
LAPTIME_CONV_SPLITK=off "$LT" bench resnet50 -p bf16 -b 1 --graph >"$OUT/b1-bf16-off.txt" 2>&1
echo "== plans done at ${SECONDS}s" >>"$L"
printf '#!/bin/sh\nLAPTIME_CONV_SPLITK=off exec %s "$@"\n' "$LT" >/tmp/off.sh
printf '#!/bin/sh\nLAPTIME_CONV_SPLITK=on exec %s "$@"\n' "$LT" >/tmp/on.sh
chmod +x /tmp/off.sh /tmp/on.sh
for row in "b1_bf16:-b 1 -p bf16" "b1_fp8:-b 1 -p fp8" "b32_bf16:-b 32 -p bf16" "b32_fp8:-b 32 -p fp8"; do
  ((SECONDS < 540)) || break
  # shellcheck disable=SC2086
  BUDGET=$((560 - SECONDS)) RESULTS=/tmp/ab scripts/dev/device-call.sh ab "r50_${row%%:*}" 3 /tmp/off.sh /tmp/on.sh -- resnet50 --graph ${row#*:} >/dev/null 2>&1
  cat /tmp/ab/ab/summary.txt >>"$OUT/ab-summary.txt" 2>/dev/null
done
echo "== ab done at ${SECONDS}s" >>"$L"
tar cJf "$OUT/ab-json.tar.xz" -C /tmp/ab/ab json 2>/dev/null
