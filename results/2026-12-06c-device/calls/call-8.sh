#!/usr/bin/env bash
# Call 8, the head's GPU code (the wgmma core's Wide/Narrow rule at one wave, LayerNorm's vector
# width in one constant): (1) GPT-2's layer suites in every precision, the sm_80 build's, the lab's
# suites, in parallel; (2) `laptime lab attention` at B8 and B1 (v3, cuDNN's v4, v5), its JSON
# kept; (3) `device-call.sh lab-try` with the committed hostile files (owed since 2026-12-06b).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
tar xJf .carry/build.tar.xz || exit 2
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
L=$OUT/call-8.log
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; date -u; } >"$L"
source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1
LT=$(realpath build/bench/laptime)
(
  T=build/tests
  for p in fp32 tf32 bf16; do timeout -k 5 300 $T/test_gpt2_layers --gtest_filter="*/$p" >/tmp/gpt2_layers_$p.log 2>&1 & done
  timeout -k 5 300 $T/test_gpt2_layers --gtest_filter='-*/fp32:*/tf32:*/bf16' >/tmp/gpt2_layers_rest.log 2>&1 &
  timeout -k 5 300 build80/tests/test_gpt2_layers >/tmp/sm80_gpt2_layers.log 2>&1 &
  timeout -k 5 300 $T/test_lab_kernels >/tmp/lab_kernels.log 2>&1 &
  timeout -k 5 300 $T/test_lab_cli >/tmp/lab_cli.log 2>&1 &
  wait
  for t in gpt2_layers_fp32 gpt2_layers_tf32 gpt2_layers_bf16 gpt2_layers_rest sm80_gpt2_layers lab_kernels lab_cli; do
    echo "== $t"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|Failure' "/tmp/$t.log" | head -20
  done
) >"$OUT/tests.log" 2>&1
echo "== tests done at ${SECONDS}s" >>"$L"
timeout -k 5 120 "$LT" lab attention -p bf16 --versions v3,v4,v5 --json "$OUT/lab_attention_bf16.json" >"$OUT/lab_attention.txt" 2>&1
echo "== lab rc=$? at ${SECONDS}s" >>"$L"
BUDGET=$((560 - SECONDS)) RESULTS=/tmp/dc scripts/dev/device-call.sh lab-try >/dev/null 2>&1
echo "== lab-try rc=$? at ${SECONDS}s" >>"$L"
cp /tmp/dc/lab-try/summary.txt "$OUT/lab-try-summary.txt" 2>/dev/null
tar czf "$OUT/lab-try.tgz" -C /tmp/dc/lab-try --exclude='*.nsys-rep' --exclude='*.sqlite' . 2>/dev/null
