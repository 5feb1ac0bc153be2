#!/usr/bin/env bash
# Call D of results/2026-12-05b-pdl-on: calls F and E in one, given ~800 s of device time: the
# checks with LAPTIME_CUTLASS_PDL on (exported) and avgpool v3 production side by side (the end-to-end checks of both models in every
# precision, test_fp8_layers, test_e4m3_stream, call F's sm_80 ResNet-50 and GPT-2 layer
# tests), then the PERF.md table on an idle card (`LAYERS=0 LAPS_BUDGET=190 COMPILE_BUDGET=100
# scripts/dev/table-run.sh`), then GPT-2 B8 fp8 with LAPTIME_CUTLASS_PDL off and on, alternating,
# and `laptime lab avgpool`.
# Packed with PROBES=0 TESTS="test_fp8_layers test_e4m3_stream" LAPTIME80=0
# TESTS80="test_resnet50_layers test_gpt2_layers" scripts/dev/pack-carry.sh build build80.
set -u
export LAPTIME_CUTLASS_PDL=on  # what these checks are for; the build defaults to off until they pass
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests; T80=$PWD/build80/tests; D=/tmp/d
mkdir -p $D/laps && t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv >$D/gpu.txt 2>&1
note() { echo "$1 rc=$2 $((SECONDS - t0))s" >>$D/rc.txt; }
run() {  # run NAME SECONDS COMMAND...
  local n=$1 s=$2; shift 2
  timeout "$s" "$@" >$D/$n.log 2>&1; note "$n" $?
}
run e2e_resnet50 200 python3 tests/e2e/check_resnet50.py --laptime "$L" &
run e2e_gpt2 150 python3 tests/e2e/check_gpt2.py --laptime "$L" &
run test_fp8_layers 200 "$T/test_fp8_layers" &
run test_e4m3_stream 200 "$T/test_e4m3_stream" &
# The sm_80 tests of what changed, as call F (the whole suites, JIT-compiled, run past 225 s).
run sm80_test_resnet50_layers 225 "$T80/test_resnet50_layers" \
  --gtest_filter='*Bottleneck*:*ConcatShortcut*:*Conv2dStridedOutput*:*GlobalAvgPool*:*Classifier*:*MaxPool*:*Golden.Blocks*:*Golden.Head*' &
run sm80_test_gpt2_layers 200 "$T80/test_gpt2_layers" --gtest_filter='*Embedding*:*Gpt2Golden.Blocks*:*Gpt2Golden.LayerNorm*' &
wait
LAYERS=0 LAPS_BUDGET=190 COMPILE_BUDGET=100 timeout 290 bash scripts/dev/table-run.sh >$D/table-run.log 2>&1
note table $?
bench() {  # bench NAME ARGS...
  local n=$1; shift
  timeout 30 "$L" bench "$@" --json $D/laps/$n.json >$D/laps/$n.log 2>&1; note "$n" $?
}
for i in 1 2; do
  [[ $((SECONDS - t0)) -lt 545 ]] || break
  LAPTIME_CUTLASS_PDL=off bench gpt2_fp8_nopdl_$i gpt2 -p fp8
  bench gpt2_fp8_pdl_$i gpt2 -p fp8
done
timeout 15 "$L" lab avgpool --json $D/lab_avgpool_bf16.json >$D/lab_avgpool_bf16.log 2>&1; note "lab avgpool" $?
grep -H "lap time" $D/laps/*.log >$D/laps/summary.txt
cp /tmp/device-run/table.txt $D/rc.txt $D/laps/summary.txt "$R/" 2>/dev/null
tar czf "$R/d.tgz" -C $D . 2>/dev/null
tar czf "$R/table.tgz" -C /tmp/device-run . 2>/dev/null
ls -la "$R"
