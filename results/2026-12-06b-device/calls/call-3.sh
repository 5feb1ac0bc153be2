#!/usr/bin/env bash
# Call 3, right after call 2 on the same card: (1) the new small tiles (64x64 implicit-GEMM conv,
# 64x128 residual GEMM) against the build before them, alternated: ResNet-50 B1 --graph fp8 (the
# row they are for) and B256 fp8 (must not move); (2) NVML's sampler off against on (GPT-2 B1 eager,
# launch-bound, the row a busy CPU thread would show in); (3) the per-layer captures at the headline
# shapes analyzed against their roofs; (4) Nsight Compute over one GPT-2 block (bf16, fp8) and one
# ResNet-50 bottleneck (bf16, fp8) read per layer: which limit each layer meets. Within END s.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
tar xJf .carry/build.tar.xz || exit 2
mkdir -p build-before/bench && tar xJf .carry/before.tar.xz -C build-before/bench || exit 2
OUT=${OUT:-/tmp/out}
END=${END:-540}
mkdir -p "$OUT"
L3=$OUT/call-3.log
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; date -u; } >"$L3"
# (0) The new tiles' correctness first, in parallel (no timing): every conv kernel and residual GEMM
# against the host, the e4m3 stream's suites, the end-to-end fp8 check at B1 and B32 (the bench's
# own plans), and the lab's --once test.
(
  source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1
  for t in test_e4m3_stream test_cutlass_gemm; do timeout -k 5 200 "build/tests/$t" >"/tmp/$t.log" 2>&1 & done
  timeout -k 5 200 build/tests/test_lab_try --gtest_filter='TryOnGpu.Once*' >/tmp/test_lab_try.log 2>&1 &
  timeout -k 5 240 python3 tests/e2e/check_resnet50.py --laptime build/bench/laptime --precisions fp8 --batches 1,32 \
    >/tmp/e2e_resnet50.log 2>&1 &
  wait
  for t in test_e4m3_stream test_cutlass_gemm test_lab_try; do
    echo "== $t"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|Failure' "/tmp/$t.log" | head -30
  done
  echo "== e2e_resnet50"; grep -A12 '^summary:' /tmp/e2e_resnet50.log || tail -30 /tmp/e2e_resnet50.log
) >"$OUT/tests.log" 2>&1
echo "== tests done at ${SECONDS}s" >>"$L3"
printf '#!/bin/sh\nLAPTIME_BENCH_CLOCK=off exec %s "$@"\n' "$(realpath build/bench/laptime)" >/tmp/clock-off.sh
printf '#!/bin/sh\nLAPTIME_BENCH_CLOCK=on exec %s "$@"\n' "$(realpath build/bench/laptime)" >/tmp/clock-on.sh
chmod +x /tmp/clock-off.sh /tmp/clock-on.sh
B=$(realpath build-before/bench/laptime) A=$(realpath build/bench/laptime)
BUDGET=150 scripts/dev/device-call.sh ab r50_b1_graph_fp8 4 "$B" "$A" -- resnet50 -b 1 --graph -p fp8 >>"$L3" 2>&1
BUDGET=60 scripts/dev/device-call.sh ab r50_b256_fp8 2 "$B" "$A" -- resnet50 -p fp8 >>"$L3" 2>&1
BUDGET=50 scripts/dev/device-call.sh ab gpt2_b1_clock 3 /tmp/clock-off.sh /tmp/clock-on.sh -- gpt2 -b 1 -p bf16 --iters 200 >>"$L3" 2>&1
echo "== ab done at ${SECONDS}s" >>"$L3"
left=$((END - SECONDS - 120))
((left > 60)) && BUDGET=$left scripts/dev/device-call.sh layers >>"$L3" 2>&1
echo "== layers done at ${SECONDS}s" >>"$L3"
# Nsight Compute: one block each, its report read per layer.
(
  source scripts/dev/device-call.sh --env "$(realpath build/lib)" >/dev/null 2>&1
  export PATH=/opt/nvidia/nsight-compute/2025.3.1:$PATH
  N=/tmp/ncu && mkdir -p $N && cd $N || exit 1
  LT=$OLDPWD/build/bench/laptime
  "$LT" peak --cache peak.json >peak.log 2>&1
  while IFS='|' read -r stem spec; do
    ((SECONDS < END - 20)) || break
    # shellcheck disable=SC2086  # spec is a word list
    cmd=$("$LT" kernels --command $spec --binary "$LT" -o "$stem" 2>&1 | grep -m1 '^  ncu ')
    echo "== $stem: $cmd" >>"$L3"
    timeout -k 5 $((END - SECONDS - 10)) bash -c "$cmd" >"$stem.ncu.log" 2>&1 || echo "ncu rc=$?" >>"$L3"
    "$LT" kernels "$stem.ncu-rep" --peak peak.json --json "$stem.kernels.json" >"$stem.kernels.txt" 2>&1
  done <<<"gpt2_bf16_h0|gpt2 -b 8 -t 1024 -p bf16 --within h.0
gpt2_fp8_h0|gpt2 -b 8 -t 1024 -p fp8 --within h.0
resnet50_bf16_layer3_0|resnet50 -b 256 -p bf16 --within layer3.0
resnet50_fp8_layer3_0|resnet50 -b 256 -p fp8 --within layer3.0"
  tar czf "$OUT/ncu.tgz" --exclude='*.ncu-rep' . 2>/dev/null
)
echo "== done at ${SECONDS}s" >>"$L3"
