#!/usr/bin/env bash
# Call G of results/2026-12-05b-pdl-on (the ninth session): is call D's ResNet-50 B256 bf16 row
# (4.947 ms, laps 5-15 at 4.92-4.95 and laps 16-24 at 5.05-5.13 with the SM clock still at 1980
# MHz) a lap that holds? Three pairs of ResNet-50 B256 bf16 runs of 100 laps, LAPTIME_CUTLASS_PDL
# off and on alternating, one fp8 pair, then one long bf16 run (300 laps) and GPT-2 B8 bf16 (60
# laps), while nvidia-smi logs the SM and memory clocks, the power, both temperatures and the
# clock event reasons every 50 ms, to say what slows the laps that run slower at the full clock.
# Packed with PROBES=0 BUILD80=0 TESTS="" scripts/dev/pack-carry.sh build.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; D=/tmp/g
mkdir -p $D/laps && t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv >$D/gpu.txt 2>&1
F=clocks_event_reasons.active
nvidia-smi --query-gpu=$F --format=csv >/dev/null 2>&1 || F=clocks_throttle_reasons.active
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,temperature.memory,$F \
  --format=csv,nounits -lms 50 >$D/smi.csv 2>&1 &
smi=$!
bench() {  # bench NAME ARGS...
  local n=$1; shift
  echo "$n start $(date +%T.%N)" >>$D/marks.txt
  timeout 60 "$L" bench "$@" --json $D/laps/$n.json >$D/laps/$n.log 2>&1
  echo "$n rc=$? $((SECONDS - t0))s end $(date +%T.%N)" >>$D/marks.txt
}
for i in 1 2 3; do
  LAPTIME_CUTLASS_PDL=off bench r50_bf16_pdl_off_$i resnet50 -p bf16 -n 100
  LAPTIME_CUTLASS_PDL=on bench r50_bf16_pdl_on_$i resnet50 -p bf16 -n 100
done
LAPTIME_CUTLASS_PDL=off bench r50_fp8_pdl_off resnet50 -p fp8 -n 100
LAPTIME_CUTLASS_PDL=on bench r50_fp8_pdl_on resnet50 -p fp8 -n 100
LAPTIME_CUTLASS_PDL=on bench r50_bf16_long resnet50 -p bf16 -n 300
LAPTIME_CUTLASS_PDL=on bench gpt2_bf16 gpt2 -p bf16 -n 60
kill $smi
grep -H "lap time" $D/laps/*.log >$D/summary.txt
cp $D/summary.txt $D/marks.txt "$R/"
tar czf "$R/g.tgz" -C $D .
ls -la "$R"
