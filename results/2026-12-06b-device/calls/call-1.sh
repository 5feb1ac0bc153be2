#!/usr/bin/env bash
# Call 1: what the last GPU session owed. device-call.sh check (every GPU suite, the sm_80 build's,
# the end-to-end checks on `bench --output` in all four precisions, interrupt / io / host-build)
# with the lab's suites beside it; then device-call.sh lab-try (the mended parameter probe: the
# sanitizer's run of the faulting file must carry no "invalid argument" line); then ResNet-50 B1
# per layer, bf16 against fp8 (why fp8 is slower there). Within END seconds.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
tar xJf .carry/build.tar.xz || exit 2
OUT=${OUT:-/tmp/out}
END=${END:-560}
mkdir -p "$OUT"
L1=$OUT/call-1.log
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; git log -1 --format='%h %s' | cut -c1-80; date -u; } >"$L1"
(
  source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1
  for t in test_lab_try test_lab_kernels test_lab_cli; do
    timeout -k 5 250 "build/tests/$t" >"/tmp/$t.log" 2>&1 &
  done
  wait
  for t in test_lab_try test_lab_kernels test_lab_cli; do
    echo "== $t"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|Failure|rror' "/tmp/$t.log" | head -40
  done >"$OUT/lab-tests.log" 2>&1
) &
PAR_LIMIT=250 BUDGET=250 scripts/dev/device-call.sh check >>"$L1" 2>&1
echo "== check rc=$? at ${SECONDS}s" >>"$L1"
wait
left=$((END - SECONDS - 80))
if ((left >= 90)); then
  BUDGET=$left scripts/dev/device-call.sh lab-try >>"$L1" 2>&1
  echo "== lab-try rc=$? at ${SECONDS}s" >>"$L1"
else
  echo "== lab-try skipped: ${left}s left" >>"$L1"
fi
left=$((END - SECONDS - 10))
if ((left >= 50)); then
  TRACES="r50b1_bf16:resnet50 -b 1 -p bf16
r50b1_fp8:resnet50 -b 1 -p fp8" DIFFS="r50b1_bf16:r50b1_fp8" BUDGET=$left scripts/dev/device-call.sh layers >>"$L1" 2>&1
  echo "== layers rc=$? at ${SECONDS}s" >>"$L1"
fi
