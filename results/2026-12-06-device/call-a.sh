#!/usr/bin/env bash
# Call A: a learner's own kernel files first (device-call.sh lab-try, docs/KERNELS.md "Write your
# own": its steps pack as they finish, so a call cut short keeps them), then every GPU suite, the
# sm_80 build's, the end-to-end checks on `bench --output` in all four precisions, interrupt / io /
# host-build (device-call.sh check, in parallel) with the lab's own suites beside them, within END
# seconds. Run from the repository root with .carry and .nsys-deps carried.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
tar xJf .carry/build.tar.xz || exit 2
OUT=${OUT:-/tmp/out}
END=${END:-450}
mkdir -p "$OUT"
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; git log -1 --format='%h %s' | cut -c1-80; date -u; } >"$OUT/call-a.log"
BUDGET=${LAB_BUDGET:-250} scripts/dev/device-call.sh lab-try >>"$OUT/call-a.log" 2>&1
echo "== lab-try rc=$? at ${SECONDS}s" >>"$OUT/call-a.log"
left=$((END - SECONDS - 15))
((left >= 60)) || { echo "== check skipped: ${left}s left" >>"$OUT/call-a.log"; exit 0; }
# The lab's GPU suites beside check's (correctness only: they share the GPU).
(
  # shellcheck source=scripts/dev/device-call.sh
  source scripts/dev/device-call.sh --env "$(realpath build/lib)"
  for t in test_lab_try test_lab_kernels test_lab_cli; do
    timeout -k 5 "$left" "build/tests/$t" >"/tmp/$t.log" 2>&1 &
  done
  wait
  for t in test_lab_try test_lab_kernels test_lab_cli; do
    echo "== $t"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|Failure|rror' "/tmp/$t.log" | head -40
  done >"$OUT/lab-tests.log" 2>&1
) &
PAR_LIMIT=$left BUDGET=$left scripts/dev/device-call.sh check >>"$OUT/call-a.log" 2>&1
echo "== check rc=$? at ${SECONDS}s" >>"$OUT/call-a.log"
wait
