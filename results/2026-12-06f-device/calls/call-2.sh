#!/usr/bin/env bash
# Call 2 (2026-12-06f), right after call 1 on the same H200 (another card: CHECK=1's part alone):
# (1) test_resnet50_layers under LAPTIME_CONV_TUNE=final in the background (the final round's plans
# checked before it can become the default); with CHECK=1, `device-call.sh check` beside it (call 1's
# fallback ran it on an H100 at this head: every suite passed); (2) the table's layers part:
# `laptime peak --force`, the per-layer CUPTI captures of GPT-2 B8 and ResNet-50 B256 in bf16 and
# fp8 against their roofs, diffed; (3) Nsight Compute over one GPT-2 block and two ResNet-50
# bottlenecks (bf16, fp8), each report read per layer by `laptime kernels`, until END seconds.
# ANY_CARD=1 runs it on whatever card the call got (the device's rules lend an H200 only to work that
# cannot fit an H100's memory: comparisons are made within one call, on its card).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
[[ -x build/bench/laptime ]] || tar xJf .carry/build.tar.xz || exit 2
OUT=${OUT:-/tmp/out}
END=${END:-575}
mkdir -p "$OUT"
L=$OUT/call-2.log
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; date -u; } >"$L"
(
  source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1
  LAPTIME_CONV_TUNE=final timeout -k 5 300 build/tests/test_resnet50_layers >/tmp/r50-final.log 2>&1
  echo "== test_resnet50_layers, LAPTIME_CONV_TUNE=final: rc=$?"
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|Failure' /tmp/r50-final.log | head -20
) >"$OUT/r50-final-tests.log" 2>&1 &
if [[ ${CHECK:-0} == 1 ]]; then
  BUDGET=380 RESULTS=/tmp/dc timeout -k 5 450 scripts/dev/device-call.sh check >/dev/null 2>&1
  echo "== check rc=$? at ${SECONDS}s" >>"$L"
  tar czf "$OUT/check.tgz" -C /tmp/dc/check --exclude='*.nsys-rep' --exclude='*.sqlite' --exclude='*.bin' . 2>/dev/null
fi
wait
echo "== final-round suite done at ${SECONDS}s" >>"$L"
[[ ${ANY_CARD:-0} == 1 ]] || grep -q H200 <<<"$(nvidia-smi --query-gpu=name --format=csv,noheader)" || { echo "== not an H200: no layers, no ncu" >>"$L"; exit 0; }
mkdir -p /tmp/dcout
OUT=/tmp/dcout BUDGET=130 RESULTS=/tmp/dc timeout -k 5 170 scripts/dev/device-call.sh layers >/dev/null 2>&1
echo "== layers rc=$? at ${SECONDS}s" >>"$L"
cp /tmp/dcout/device-call-layers.tgz /tmp/dcout/device-call-layers.txt "$OUT/" 2>/dev/null
(
  source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1
  export PATH=/opt/nvidia/nsight-compute/2025.3.1:$PATH
  N=/tmp/ncu && mkdir -p $N && cd $N || exit 1
  LT=$OLDPWD/build/bench/laptime
  "$LT" peak --cache peak.json >peak.log 2>&1
  while IFS='|' read -r stem spec; do
    ((SECONDS < END - 25)) || { echo "== $stem: no time" >>"$L"; continue; }
    # shellcheck disable=SC2086  # spec is a word list
    cmd=$("$LT" kernels --command $spec --binary "$LT" -o "$stem" 2>&1 | grep -m1 '^  ncu ')
    echo "== $stem at ${SECONDS}s: $cmd" >>"$L"
    timeout -k 5 $((END - SECONDS - 10)) bash -c "$cmd" >"$stem.ncu.log" 2>&1 || echo "ncu rc=$?" >>"$L"
    "$LT" kernels "$stem.ncu-rep" --peak peak.json --json "$stem.kernels.json" >"$stem.kernels.txt" 2>&1
  done <<<"gpt2_bf16_h0|gpt2 -b 8 -t 1024 -p bf16 --within h.0
gpt2_fp8_h0|gpt2 -b 8 -t 1024 -p fp8 --within h.0
resnet50_bf16_layer3_0|resnet50 -b 256 -p bf16 --within layer3.0
resnet50_fp8_layer3_0|resnet50 -b 256 -p fp8 --within layer3.0
resnet50_bf16_layer1_0|resnet50 -b 256 -p bf16 --within layer1.0
resnet50_fp8_layer1_0|resnet50 -b 256 -p fp8 --within layer1.0"
  tar czf "$OUT/ncu.tgz" --exclude='*.ncu-rep' . 2>/dev/null
)
echo "== done at ${SECONDS}s" >>"$L"
