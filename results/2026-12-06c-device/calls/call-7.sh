#!/usr/bin/env bash
# Call 7: the wgmma core as production (Auto's bf16 core on sm_90; Wide at B8, Narrow at B1). (1)
# Correct, in parallel: GPT-2's layer and whole-model suites in every precision, the lab's suites,
# the fp8 suites, the reference suite, the end-to-end check of `bench --output` against PyTorch in
# bf16 and fp8 (the bench's own configuration, now with the wgmma core). (2) The two configurations
# across shapes. (3) `laptime lab attention` (v3, cuDNN's v4, v5) at B8 and B1. (4) GPT-2 lap rows,
# --attention cudnn against the default (wgmma), alternated: B8 bf16 eager, B1 bf16 --graph, B8 fp8;
# then B8 bf16 with ~1.5 s of laps each for the joules.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
tar xJf .carry/build.tar.xz || exit 2
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
L=$OUT/call-7.log
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; date -u; } >"$L"
source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1
LT=$(realpath build/bench/laptime)
(
  T=build/tests
  timeout -k 5 300 $T/test_gpt2_layers --gtest_filter='*/bf16' >/tmp/gpt2_layers_bf16.log 2>&1 &
  timeout -k 5 300 $T/test_gpt2_layers --gtest_filter='-*/bf16' >/tmp/gpt2_layers_rest.log 2>&1 &
  timeout -k 5 300 $T/test_lab_kernels >/tmp/lab_kernels.log 2>&1 &
  timeout -k 5 300 $T/test_lab_cli >/tmp/lab_cli.log 2>&1 &
  timeout -k 5 300 $T/test_fp8_layers >/tmp/fp8_layers.log 2>&1 &
  timeout -k 5 300 $T/test_fp8_reference >/tmp/fp8_reference.log 2>&1 &
  timeout -k 5 300 $T/test_gpt2_reference >/tmp/gpt2_reference.log 2>&1 &
  timeout -k 5 330 python3 tests/e2e/check_gpt2.py --laptime "$LT" --precisions bf16,fp8 >/tmp/e2e_gpt2.log 2>&1 &
  wait
  for t in gpt2_layers_bf16 gpt2_layers_rest lab_kernels lab_cli fp8_layers fp8_reference gpt2_reference; do
    echo "== $t"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|Failure' "/tmp/$t.log" | head -20
  done
  echo "== e2e_gpt2"; sed -n '/^summary:/,$p' /tmp/e2e_gpt2.log | tail -30; tail -5 /tmp/e2e_gpt2.log
) >"$OUT/tests.log" 2>&1
echo "== tests done at ${SECONDS}s" >>"$L"
timeout -k 5 150 .carry/attn_variants >"$OUT/variants.log" 2>&1
echo "== variants rc=$? at ${SECONDS}s" >>"$L"
timeout -k 5 120 "$LT" lab attention -p bf16 --versions v3,v4,v5 --json "$OUT/lab_attention_bf16.json" >"$OUT/lab_attention.txt" 2>&1
echo "== lab rc=$? at ${SECONDS}s" >>"$L"
printf '#!/bin/sh\nexec %s "$@" --attention cudnn\n' "$LT" >/tmp/cudnn.sh
printf '#!/bin/sh\nexec %s "$@"\n' "$LT" >/tmp/auto.sh
chmod +x /tmp/cudnn.sh /tmp/auto.sh
export RESULTS=/tmp/dc
AB="scripts/dev/device-call.sh ab"
BUDGET=70 $AB gpt2_b8_bf16 3 /tmp/cudnn.sh /tmp/auto.sh -- gpt2 -p bf16 >/dev/null 2>&1
BUDGET=70 $AB gpt2_b1_graph_bf16 3 /tmp/cudnn.sh /tmp/auto.sh -- gpt2 -b 1 --graph -p bf16 >/dev/null 2>&1
BUDGET=50 $AB gpt2_b8_fp8 2 /tmp/cudnn.sh /tmp/auto.sh -- gpt2 -p fp8 >/dev/null 2>&1
BUDGET=70 $AB gpt2_b8_bf16_energy 2 /tmp/cudnn.sh /tmp/auto.sh -- gpt2 -p bf16 --iters 400 >/dev/null 2>&1
grep -h "lap time" /tmp/dc/ab/summary.txt >>"$L"
tar czf "$OUT/ab-json.tgz" -C /tmp/dc/ab json summary.txt 2>/dev/null
python3 - /tmp/dc/ab/json >>"$L" 2>&1 <<'PY'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    r = json.load(open(f)); e = r.get("energy") or {}
    print(os.path.basename(f), r.get("config", {}).get("variant", "")[:40], "lap", r.get("lap_ms") or r.get("steady", {}).get("median_ms"),
          "J/forward", e.get("joules_per_forward"), "W", e.get("mean_watts"))
PY
echo "== ab done at ${SECONDS}s" >>"$L"
