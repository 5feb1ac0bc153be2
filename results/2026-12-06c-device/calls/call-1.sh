#!/usr/bin/env bash
# Call 1 (2026-12-06c): the wgmma attention core's first GPU run. (1) Correct first, in parallel:
# GPT-2's attention layer with every core (wgmma among them) on odd shapes and the whole model,
# laptime lab's attention ladder against the CPU reference (v5 among them), test_lab_try (the
# hostile files, now read from kernels/lab/examples/hostile/) and test_lab_cli. (2) The core's
# configurations alone on the card, checked against the mma.sync kernel and timed. (3) `laptime lab
# attention` (cuDNN's v4 beside v5). (4) GPT-2 B8 eager, --attention cudnn against wgmma, alternated.
# (Reconstructed from the session's record after the carried copy was replaced.)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
tar xJf .carry/build.tar.xz || exit 2
OUT=${OUT:-/tmp/out}
END=${END:-560}
mkdir -p "$OUT"
L1=$OUT/call-1.log
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; date -u; } >"$L1"
source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1
LT=$(realpath build/bench/laptime)
(
  timeout -k 5 240 build/tests/test_gpt2_layers \
    --gtest_filter='*CausalSelfAttention*:*UnsupportedAttention*:*WholeModel/*:*WholeModelInGraph/*' >/tmp/gpt2_layers.log 2>&1 &
  timeout -k 5 240 build/tests/test_lab_kernels --gtest_filter='*attention*:*Gpt2WithEveryVersion*' >/tmp/lab_kernels.log 2>&1 &
  timeout -k 5 240 build/tests/test_lab_try >/tmp/lab_try.log 2>&1 &
  timeout -k 5 240 build/tests/test_lab_cli >/tmp/lab_cli.log 2>&1 &
  wait
  for t in gpt2_layers lab_kernels lab_try lab_cli; do
    echo "== $t"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|Failure|Expected|Which is|seed|error' "/tmp/$t.log" | head -40
  done
) >"$OUT/tests.log" 2>&1
echo "== tests done at ${SECONDS}s" >>"$L1"
timeout -k 5 150 .carry/attn_variants >"$OUT/variants.log" 2>&1
echo "== variants rc=$? at ${SECONDS}s" >>"$L1"
timeout -k 5 120 "$LT" lab attention -p bf16 --json "$OUT/lab_attention_bf16.json" >"$OUT/lab_attention.txt" 2>&1
echo "== lab rc=$? at ${SECONDS}s" >>"$L1"
for a in cudnn wgmma; do printf '#!/bin/sh\nexec %s "$@" --attention %s\n' "$LT" "$a" >/tmp/$a.sh; chmod +x /tmp/$a.sh; done
left=$((END - SECONDS))
((left > 60)) && RESULTS=/tmp/dc BUDGET=$((left - 10)) scripts/dev/device-call.sh ab gpt2_b8_bf16 3 /tmp/cudnn.sh /tmp/wgmma.sh -- gpt2 -p bf16 >>"$L1" 2>&1
cp /tmp/dc/ab/summary.txt "$OUT/ab-summary.txt" 2>/dev/null
tar czf "$OUT/ab-json.tgz" -C /tmp/dc/ab json 2>/dev/null
echo "== ab done at ${SECONDS}s" >>"$L1"
