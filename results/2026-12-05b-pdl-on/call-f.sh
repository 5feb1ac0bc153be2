#!/usr/bin/env bash
# Call F of results/2026-12-05b-pdl-on, cut to the device time that was left (about 400 s with the
# machine's start): the checks with LAPTIME_CUTLASS_PDL on and avgpool v3 production side by
# side, each log written straight to $OUT so a call cut at its limit still brings back what ran:
# the end-to-end checks against PyTorch (both models, every precision), test_fp8_layers and
# test_e4m3_stream, and from the sm_80 build the ResNet-50 layer tests of what changed and GPT-2's
# embedding and golden blocks (the whole-model tests, JIT-compiled from PTX, took 363 s on the
# fifth session's H200: more than this call has).
# Packed with PROBES=0 TESTS="test_fp8_layers test_e4m3_stream" LAPTIME80=0
# TESTS80="test_resnet50_layers test_gpt2_layers" scripts/dev/pack-carry.sh build build80.
set -u
export LAPTIME_CUTLASS_PDL=on  # what these checks are for; the build defaults to off until they pass
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests; T80=$PWD/build80/tests
t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv >>$R/rc.txt 2>&1
run() {  # run NAME SECONDS COMMAND...
  local n=$1 s=$2; shift 2
  timeout "$s" "$@" >$R/$n.log 2>&1; echo "$n rc=$? $((SECONDS - t0))s" >>$R/rc.txt
}
run e2e_resnet50 175 python3 tests/e2e/check_resnet50.py --laptime "$L" &
run e2e_gpt2 175 python3 tests/e2e/check_gpt2.py --laptime "$L" &
run test_fp8_layers 175 "$T/test_fp8_layers" &
run test_e4m3_stream 175 "$T/test_e4m3_stream" &
run sm80_resnet50 175 "$T80/test_resnet50_layers" \
  --gtest_filter='*Bottleneck*:*ConcatShortcut*:*Conv2dStridedOutput*:*GlobalAvgPool*:*Classifier*:*MaxPool*:*Golden.Blocks*:*Golden.Head*' &
run sm80_gpt2 175 "$T80/test_gpt2_layers" --gtest_filter='*Embedding*:*Gpt2Golden.Blocks*:*Gpt2Golden.LayerNorm*' &
wait
ls -la "$R"
