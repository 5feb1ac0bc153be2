#!/usr/bin/env bash
# Call 4: the small tiles' energy, before against after, alternated (ResNet-50 B1 --graph fp8, about
# 1.2 s of steady laps a row so that NVML's counter steps often enough), then test_lab_try whole
# (the --once change touched the child's path too). Run from the repository root, .carry3 carried.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
tar xJf .carry3/build.tar.xz || exit 2
mkdir -p build-before/bench && tar xJf .carry3/before.tar.xz -C build-before/bench || exit 2
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
B=$(realpath build-before/bench/laptime) A=$(realpath build/bench/laptime)
BUDGET=90 scripts/dev/device-call.sh ab r50_b1_graph_fp8_energy 2 "$B" "$A" -- resnet50 -b 1 --graph -p fp8 --iters 4700 \
  >"$OUT/call-4.log" 2>&1
(
  source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1
  timeout -k 5 150 build/tests/test_lab_try >/tmp/test_lab_try.log 2>&1
  echo "test_lab_try rc=$?"
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|Failure' /tmp/test_lab_try.log | head -30
) >"$OUT/test_lab_try.log" 2>&1
