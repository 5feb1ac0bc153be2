#!/usr/bin/env bash
# Call 3 (2026-12-06f), on the same H200 when device time is left (another card: nothing run,
# exit 3): the convolutions' final round against the choice without it, on this card: ResNet-50
# `--graph` B1 bf16, B1 fp8, B32 bf16, three alternated pairs each (LAPTIME_CONV_TUNE=once, the
# default, against final), until AB_END seconds.
# ANY_CARD=1 runs it on whatever card the call got (the device's rules lend an H200 only to work that
# cannot fit an H100's memory: comparisons are made within one call, on its card).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/out}
AB_END=${AB_END:-420}
mkdir -p "$OUT"
L=$OUT/call-3.log
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; date -u; } >"$L"
[[ ${ANY_CARD:-0} == 1 ]] || grep -q H200 "$L" || { echo "== not an H200: nothing run" >>"$L"; exit 3; }
[[ -x build/bench/laptime ]] || tar xJf .carry/build.tar.xz || exit 2
(
  source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1
  LT=$(realpath build/bench/laptime)
  printf '#!/bin/sh\nLAPTIME_CONV_TUNE=once exec %s "$@"\n' "$LT" >/tmp/once.sh
  printf '#!/bin/sh\nLAPTIME_CONV_TUNE=final exec %s "$@"\n' "$LT" >/tmp/final.sh
  chmod +x /tmp/once.sh /tmp/final.sh
  for row in "b1_bf16:-b 1 -p bf16" "b1_fp8:-b 1 -p fp8" "b32_bf16:-b 32 -p bf16"; do
    ((SECONDS < AB_END - 40)) || break
    # shellcheck disable=SC2086
    BUDGET=$((AB_END - SECONDS)) RESULTS=/tmp/ab scripts/dev/device-call.sh ab "r50_${row%%:*}" 3 /tmp/once.sh /tmp/final.sh -- resnet50 --graph ${row#*:} >/dev/null 2>&1
  done
  cp /tmp/ab/ab/summary.txt "$OUT/ab-summary.txt" 2>/dev/null
  tar cJf "$OUT/ab-json.tar.xz" -C /tmp/ab/ab json 2>/dev/null
  echo "== final-round A/B done at ${SECONDS}s" >>"$L"
)
echo "== done at ${SECONDS}s" >>"$L"
