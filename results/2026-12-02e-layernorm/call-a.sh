#!/usr/bin/env bash
# Call A of results/2026-12-02e-layernorm: the clock under long runs (nvidia-smi every 20 ms), the
# LayerNorm ladder, GPT-2 laps with and without the new LayerNorm (alternating), then the GPU
# suites owed since last session (ResNet-50's and the e4m3 stream's in call B, for the carry's size) and both end-to-end checks.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests; A=/tmp/a
mkdir -p $A/laps $A/clock && t0=$SECONDS
note() { echo "$1 rc=$2 $((SECONDS - t0))s" >>$A/rc.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,enforced.power.limit --format=csv >$A/gpu.txt 2>&1
sample() {  # sample NAME CMD...: the command under nvidia-smi every 20 ms
  local name=$1; shift
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
    --format=csv,noheader -lms 20 >$A/clock/$name.csv 2>&1 &
  local smi=$!
  nvidia-smi --query-gpu=timestamp,clocks_throttle_reasons.active,clocks_throttle_reasons.sw_power_cap,clocks_throttle_reasons.hw_slowdown,clocks_throttle_reasons.sw_thermal_slowdown \
    --format=csv,noheader -lms 20 >$A/clock/$name.reasons.csv 2>&1 &
  local smi2=$!
  sleep 0.5
  "$@" >$A/clock/$name.log 2>&1; local rc=$?
  kill $smi $smi2 2>/dev/null; wait $smi $smi2 2>/dev/null
  note "clock $name" $rc
}
sample resnet50_bf16_n100 timeout 60 "$L" bench resnet50 -p bf16 -n 100 --json $A/clock/resnet50_bf16_n100.json
sample gpt2_bf16_n100 timeout 60 "$L" bench gpt2 -p bf16 -n 100 --json $A/clock/gpt2_bf16_n100.json
timeout 60 "$L" lab layernorm >$A/lab_layernorm_bf16.log 2>&1; note "lab layernorm bf16" $?
timeout 60 "$L" lab layernorm -p fp32 --json $A/lab_layernorm_fp32.json >$A/lab_layernorm_fp32.log 2>&1; note "lab layernorm fp32" $?
timeout 60 "$L" lab layernorm --json $A/lab_layernorm_bf16.json >/dev/null 2>&1
timeout 60 "$L" lab residual_layernorm >$A/lab_residual_layernorm.log 2>&1; note "lab residual_layernorm" $?
for i in 1 2; do
  timeout 60 "$L" bench gpt2 -p bf16 --json $A/laps/bf16_v5_$i.json >$A/laps/bf16_v5_$i.log 2>&1; note "gpt2 bf16 v5 $i" $?
  timeout 60 "$L" bench gpt2 -p bf16 --kernel layernorm=v3 --json $A/laps/bf16_v3_$i.json >$A/laps/bf16_v3_$i.log 2>&1
  note "gpt2 bf16 v3 $i" $?
  timeout 60 "$L" bench gpt2 -p fp8 --json $A/laps/fp8_$i.json >$A/laps/fp8_$i.log 2>&1; note "gpt2 fp8 $i" $?
done
grep -H "lap time" $A/laps/*.log >$A/laps/summary.txt
(timeout 240 "$T/test_lab_kernels" >$A/test_lab_kernels.log 2>&1; note test_lab_kernels $?) &
(timeout 240 "$T/test_gpt2_layers" >$A/test_gpt2_layers.log 2>&1; note test_gpt2_layers $?) &
(timeout 240 "$T/test_fp8_layers" >$A/test_fp8_layers.log 2>&1; note test_fp8_layers $?) &
(timeout 240 python3 tests/e2e/check_gpt2.py --laptime "$L" >$A/e2e_gpt2.log 2>&1; note e2e_gpt2 $?;
 timeout 200 python3 tests/e2e/check_resnet50.py --laptime "$L" >$A/e2e_resnet50.log 2>&1; note e2e_resnet50 $?) &
wait
cp $A/rc.txt $A/laps/summary.txt "$R/" 2>/dev/null; tar czf "$R/a.tgz" -C $A .
ls -la "$R"
