#!/usr/bin/env bash
# Call C of results/2026-12-05b-pdl-on (any card: correctness first), with LAPTIME_CUTLASS_PDL on
# (it exports it) and avgpool v3 production: the end-to-end checks against
# PyTorch (both models, every precision), test_fp8_layers and test_e4m3_stream (the CUTLASS GEMMs
# as programmatic dependents), and the sm_80 build's GPT-2 layer suite and the ResNet-50 layer tests
# of what changed (the whole-model tests left out: JIT-compiled from PTX they took 363 s on the
# fifth session's H200, more than this session's device time allows), side by side; then the
# headline rows with the new defaults on whatever card this is.
# Packed with PROBES=0 TESTS="test_fp8_layers test_e4m3_stream" LAPTIME80=0
# TESTS80="test_resnet50_layers test_gpt2_layers" scripts/dev/pack-carry.sh build build80.
set -u
export LAPTIME_CUTLASS_PDL=on  # what these checks are for; the build defaults to off until they pass
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests; T80=$PWD/build80/tests; C=/tmp/c
mkdir -p $C && t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv >$C/gpu.txt 2>&1
note() { echo "$1 rc=$2 $((SECONDS - t0))s" >>$C/rc.txt; }
run() {  # run NAME SECONDS COMMAND...
  local n=$1 s=$2; shift 2
  timeout "$s" "$@" >$C/$n.log 2>&1; note "$n" $?
}
run e2e_resnet50 200 python3 tests/e2e/check_resnet50.py --laptime "$L" &
run e2e_gpt2 150 python3 tests/e2e/check_gpt2.py --laptime "$L" &
run test_fp8_layers 200 "$T/test_fp8_layers" &
run test_e4m3_stream 200 "$T/test_e4m3_stream" &
run sm80_test_resnet50_layers 200 "$T80/test_resnet50_layers" \
  --gtest_filter='*Bottleneck*:*ConcatShortcut*:*Conv2dStridedOutput*:*GlobalAvgPool*:*Classifier*:*MaxPool*:*Golden.Blocks*:*Golden.Head*' &
run sm80_test_gpt2_layers 200 "$T80/test_gpt2_layers" &
wait
mkdir -p $C/laps
for row in "gpt2_fp8 gpt2 -p fp8" "gpt2_bf16 gpt2 -p bf16" "resnet50_bf16 resnet50 -p bf16" "resnet50_fp8 resnet50 -p fp8"; do
  set -- $row; n=$1; shift
  [[ $((SECONDS - t0)) -lt 230 ]] || break
  timeout 30 "$L" bench "$@" --json $C/laps/$n.json >$C/laps/$n.log 2>&1; note "$n" $?
done
grep -H "lap time" $C/laps/*.log >$C/summary.txt
cp $C/rc.txt $C/summary.txt "$R/"; tar czf "$R/c.tgz" -C $C .
ls -la "$R"
