#!/usr/bin/env bash
# Call 3 (2026-12-06e), any Hopper card: what call 1's fallback ran, on whatever card is lent (the
# H200 table is left for a session that gets one early: starts kept failing): the TMA attention
# harness (thread 0 as loader; a producer warpgroup at one block an SM, and at two with its
# registers given to the consumers), Nsight Compute over one launch of it and of Wide; the
# host-build part (the split laptime under the real nsys); then the convolutions' final round
# against the choice without it: the plans at B1 bf16, the end-to-end check at B1 bf16, 3
# alternated pairs of ResNet-50 `--graph` B1 bf16 and fp8, B32 bf16.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
L=$OUT/call-3.log
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; date -u; } >"$L"
tar xJf .carry/build.tar.xz || exit 2
(
  source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1
  timeout -k 5 120 .carry/attn_tma >"$OUT/attn_tma.txt" 2>&1
  echo "== attn_tma rc=$? at ${SECONDS}s" >>"$L"
  # The producer-warpgroup variant whose consumers ask for 112 registers: alone, since a CTA's
  # register pool that cannot give them hangs it (timeout 124 then says so).
  timeout -k 5 40 .carry/attn_tma 112 >"$OUT/attn_tma_112.txt" 2>&1
  echo "== attn_tma 112 rc=$? at ${SECONDS}s" >>"$L"
  # Nsight Compute over one launch of the producer-warp kernel and of Wide at GPT-2's B8 shape.
  for k in attention_tma_ws_kernel attention_kernel; do
    timeout -k 5 90 /opt/nvidia/nsight-compute/2025.3.1/ncu --set full -k "regex:^$k$" -c 1 -f -o "/tmp/$k" \
      .carry/attn_tma profile >/dev/null 2>&1
    /opt/nvidia/nsight-compute/2025.3.1/ncu --import "/tmp/$k.ncu-rep" --page details >"$OUT/ncu-$k.txt" 2>&1
  done
  echo "== ncu done at ${SECONDS}s" >>"$L"
)
mkdir -p /tmp/dcout
OUT=/tmp/dcout BUDGET=100 RESULTS=/tmp/dc timeout -k 5 150 scripts/dev/device-call.sh host-build >/dev/null 2>&1
echo "== host-build rc=$? at ${SECONDS}s" >>"$L"
cp /tmp/dcout/device-call-host-build.txt "$OUT/" 2>/dev/null
# The convolutions' final round (LAPTIME_CONV_TUNE=final) against the choice without
# it (once): the plans at B1 bf16, the end-to-end check at B1 bf16, then 3 alternated pairs of
# ResNet-50 `--graph` B1 bf16 and fp8, B32 bf16.
(
  source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1
  LT=$(realpath build/bench/laptime)
  LAPTIME_CONV_TUNE=final "$LT" bench resnet50 -p bf16 -b 1 --graph >"$OUT/b1-bf16-final.txt" 2>&1
  LAPTIME_CONV_TUNE=once "$LT" bench resnet50 -p bf16 -b 1 --graph >"$OUT/b1-bf16-once.txt" 2>&1
  LAPTIME_CONV_TUNE=final timeout -k 5 120 python3 tests/e2e/check_resnet50.py --laptime "$LT" --precisions bf16 --batches 1 >/tmp/e2e.log 2>&1
  echo "== e2e rc=$?: $(grep -A3 '^summary:' /tmp/e2e.log | tr '\n' ' ')" >>"$L"
  printf '#!/bin/sh\nLAPTIME_CONV_TUNE=once exec %s "$@"\n' "$LT" >/tmp/once.sh
  printf '#!/bin/sh\nLAPTIME_CONV_TUNE=final exec %s "$@"\n' "$LT" >/tmp/final.sh
  chmod +x /tmp/once.sh /tmp/final.sh
  for row in "b1_bf16:-b 1 -p bf16" "b1_fp8:-b 1 -p fp8" "b32_bf16:-b 32 -p bf16"; do
    ((SECONDS < ${AB_END:-300} - 40)) || break
    # shellcheck disable=SC2086
    BUDGET=$((${AB_END:-300} - SECONDS)) RESULTS=/tmp/ab scripts/dev/device-call.sh ab "r50_${row%%:*}" 3 /tmp/once.sh /tmp/final.sh -- resnet50 --graph ${row#*:} >/dev/null 2>&1
  done
  cp /tmp/ab/ab/summary.txt "$OUT/ab-summary.txt" 2>/dev/null
  tar cJf "$OUT/ab-json.tar.xz" -C /tmp/ab/ab json 2>/dev/null
  echo "== final-round A/B done at ${SECONDS}s" >>"$L"
)

