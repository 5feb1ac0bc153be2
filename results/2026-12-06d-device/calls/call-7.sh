#!/usr/bin/env bash
# Call 7 (2026-12-06d; run twice, the second with the rule narrowed to Nsight Compute): an eager
# build under Nsight Compute charges the GPU's time alone
# (core/timing.h, under_nsight_compute): (1) what ncu sets in its target's environment; (2) the fp8
# suite's eager-charge tests; (3) ncu over GPT-2 B8 fp8's block h.0 and ResNet-50 B256 fp8's
# layer3.0 as `laptime kernels --command` prints it, each report read per layer: the kernels must
# be the bench's own (fp8 GEMMs), and the plan lines must say "eager under Nsight Compute".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
tar xJf .carry/build.tar.xz || exit 2
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
L=$OUT/call-7.log
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; date -u; } >"$L"
source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1
export PATH=/opt/nvidia/nsight-compute/2025.3.1:$PATH
echo "== the environment ncu gives its target:" >>"$L"
ncu --print-summary none bash -c 'env | grep -cE "^(CUDA_INJECTION64_PATH|NV_COMPUTE_PROFILER_PERFWORKS_DIR)="' >>"$L" 2>&1
(timeout -k 5 200 build/tests/test_fp8_layers --gtest_filter='*Eager*:*Nsight*' 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED|  OK|RUN) |Failure' ) >"$OUT/tests.log" 2>&1
N=/tmp/ncu && mkdir -p $N && cd $N || exit 1
LT=$OLDPWD/build/bench/laptime
"$LT" peak --cache peak.json >peak.log 2>&1
while IFS='|' read -r stem spec; do
  # shellcheck disable=SC2086  # spec is a word list
  cmd=$("$LT" kernels --command $spec --binary "$LT" -o "$stem" 2>&1 | grep -m1 '^  ncu ')
  echo "== $stem at ${SECONDS}s" >>"$L"
  timeout -k 5 150 bash -c "$cmd" >"$stem.ncu.log" 2>&1 || echo "ncu rc=$?" >>"$L"
  "$LT" kernels "$stem.ncu-rep" --peak peak.json --json "$stem.kernels.json" >"$stem.kernels.txt" 2>&1
  python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['config'].get('plans', []); print(sum('eager under Nsight Compute' in x for x in p), 'of', len(p), 'plan lines under Nsight Compute')" "$stem.json" >>"$L" 2>&1
  sed -n '/^Occupancy/,/^Diagnosis/p' "$stem.kernels.txt" | cut -c1-110 >>"$L"
done <<<"gpt2_fp8_h0|gpt2 -b 8 -t 1024 -p fp8 --within h.0
resnet50_fp8_layer3_0|resnet50 -b 256 -p fp8 --within layer3.0"
tar czf "$OUT/ncu.tgz" --exclude='*.ncu-rep' . 2>/dev/null
echo "== done at ${SECONDS}s" >>"$L"
