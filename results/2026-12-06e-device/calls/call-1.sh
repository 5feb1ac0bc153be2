#!/usr/bin/env bash
# Call 1 (2026-12-06e), on an H200 only (another card: nothing run, exit 3): docs/PERF.md's table
# in one call, laptime at the head 302ce8d: the lap rows beside PyTorch eager, torch.compile's rows,
# then the energy part whole (every laptime row, PyTorch eager's GPT-2 and ResNet-50 rows, and
# torch.compile's, compiled again from the Inductor cache the compile part left). The per-layer
# captures (the layers part) follow in the next call on the same card.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
L=$OUT/call-1.log
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; date -u; } >"$L"
if ! grep -q H200 "$L"; then
  # Another card: the table is not run. FALLBACK=attn (the default) uses the start instead: the TMA
  # attention harness (scratch, built into .carry/attn_tma), then the GPU checks owed (test_fp8_layers
  # whole with FP8_TESTS=1; the host-build part: the split laptime under the real nsys). FALLBACK=none: exit at once.
  [[ ${FALLBACK:-attn} == attn ]] || { echo "== not an H200: nothing run" >>"$L"; exit 3; }
  echo "== not an H200: the table is not run; the fallback instead" >>"$L"
  tar xJf .carry/build.tar.xz || exit 2
  (
    source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1
    timeout -k 5 120 .carry/attn_tma >"$OUT/attn_tma.txt" 2>&1
    echo "== attn_tma rc=$? at ${SECONDS}s" >>"$L"
    if [[ ${FP8_TESTS:-0} == 1 ]]; then
      timeout -k 5 120 build/tests/test_fp8_layers >"$OUT/fp8-tests.txt" 2>&1
      echo "== test_fp8_layers (all) rc=$? at ${SECONDS}s" >>"$L"
    fi
  )
  mkdir -p /tmp/dcout
  OUT=/tmp/dcout BUDGET=100 RESULTS=/tmp/dc timeout -k 5 150 scripts/dev/device-call.sh host-build >/dev/null 2>&1
  echo "== host-build rc=$? at ${SECONDS}s" >>"$L"
  cp /tmp/dcout/device-call-host-build.txt "$OUT/" 2>/dev/null
  # The convolutions' final round (LAPTIME_CONV_TUNE=on, the default) against the choice without
  # it (once): the plans at B1 bf16, the end-to-end check at B1 bf16, then 3 alternated pairs of
  # ResNet-50 `--graph` B1 bf16 and fp8, B32 bf16.
  (
    source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1
    LT=$(realpath build/bench/laptime)
    LAPTIME_CONV_TUNE=on "$LT" bench resnet50 -p bf16 -b 1 --graph >"$OUT/b1-bf16-on.txt" 2>&1
    LAPTIME_CONV_TUNE=once "$LT" bench resnet50 -p bf16 -b 1 --graph >"$OUT/b1-bf16-once.txt" 2>&1
    timeout -k 5 120 python3 tests/e2e/check_resnet50.py --laptime "$LT" --precisions bf16 --batches 1 >/tmp/e2e.log 2>&1
    echo "== e2e rc=$?: $(grep -A3 '^summary:' /tmp/e2e.log | tr '\n' ' ')" >>"$L"
    printf '#!/bin/sh\nLAPTIME_CONV_TUNE=once exec %s "$@"\n' "$LT" >/tmp/once.sh
    printf '#!/bin/sh\nLAPTIME_CONV_TUNE=on exec %s "$@"\n' "$LT" >/tmp/on.sh
    chmod +x /tmp/once.sh /tmp/on.sh
    for row in "b1_bf16:-b 1 -p bf16" "b1_fp8:-b 1 -p fp8" "b32_bf16:-b 32 -p bf16"; do
      ((SECONDS < 420)) || break
      # shellcheck disable=SC2086
      BUDGET=$((460 - SECONDS)) RESULTS=/tmp/ab scripts/dev/device-call.sh ab "r50_${row%%:*}" 3 /tmp/once.sh /tmp/on.sh -- resnet50 --graph ${row#*:} >/dev/null 2>&1
    done
    cp /tmp/ab/ab/summary.txt "$OUT/ab-summary.txt" 2>/dev/null
    tar cJf "$OUT/ab-json.tar.xz" -C /tmp/ab/ab json 2>/dev/null
    echo "== final-round A/B done at ${SECONDS}s" >>"$L"
  )
  exit 3
fi
tar xJf .carry/build.tar.xz || exit 2
mkdir -p /tmp/dcout
OUT=/tmp/dcout LAYERS=0 LAPS_BUDGET=150 COMPILE_BUDGET=100 ENERGY_BUDGET=290 RESULTS=/tmp/dc \
  timeout -k 5 $((585 - SECONDS)) scripts/dev/device-call.sh table >/dev/null 2>&1
echo "== table rc=$? at ${SECONDS}s" >>"$L"
cp /tmp/dcout/device-call-table.txt "$OUT/" 2>/dev/null
tar cf "$OUT/table.tar" -C /tmp/dcout . 2>/dev/null
