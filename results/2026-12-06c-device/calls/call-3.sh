#!/usr/bin/env bash
# Call 3: the wgmma core after its softmax was cut to ~4 instructions a score (exp2 on the SFU with
# the scale in its FFMA, the mask only on diagonal tiles, no -inf guards, fully masked tiles
# skipped): the configurations timed, `laptime lab attention`, GPT-2 B8 cudnn against wgmma.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
tar xJf .carry/build.tar.xz || exit 2
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
L=$OUT/call-3.log
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; date -u; } >"$L"
source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1
LT=$(realpath build/bench/laptime)
timeout -k 5 150 build/tests/test_gpt2_layers --gtest_filter='*CausalSelfAttention/bf16*:*WholeModel/bf16*' >/tmp/t.log 2>&1
grep -E '^\[  (PASSED|FAILED) |Failure' /tmp/t.log >>"$L"
timeout -k 5 150 .carry/attn_variants >"$OUT/variants.log" 2>&1
echo "== variants rc=$? at ${SECONDS}s" >>"$L"
timeout -k 5 120 "$LT" lab attention -p bf16 --versions v3,v4,v5 >"$OUT/lab_attention.txt" 2>&1
echo "== lab rc=$? at ${SECONDS}s" >>"$L"
for a in cudnn wgmma; do printf '#!/bin/sh\nexec %s "$@" --attention %s\n' "$LT" "$a" >/tmp/$a.sh; chmod +x /tmp/$a.sh; done
RESULTS=/tmp/dc BUDGET=120 scripts/dev/device-call.sh ab gpt2_b8_bf16 3 /tmp/cudnn.sh /tmp/wgmma.sh -- gpt2 -p bf16 >/dev/null 2>&1
grep "lap time" /tmp/dc/ab/summary.txt >>"$L"
echo "== ab done at ${SECONDS}s" >>"$L"
