#!/usr/bin/env bash
# Call B of results/2026-12-05b-pdl-on, with LAPTIME_CUTLASS_PDL on (exported; run it after call C
# or F has passed with it on) and avgpool v3 production (both measured on an H100 in call A,
# results/2026-12-05-conv2-into-fold): the PERF.md table on an idle card (`LAYERS=0
# LAPS_BUDGET=190 COMPILE_BUDGET=100 scripts/dev/table-run.sh`), then each change against its
# switch on this card, alternating: GPT-2 B8 fp8 PDL on and off, ResNet-50 B256 bf16 avgpool v3
# and v1, and `laptime lab avgpool`.
# Packed with PROBES=0 BUILD80=0 TESTS="" scripts/dev/pack-carry.sh build (laptime alone).
set -u
export LAPTIME_CUTLASS_PDL=on  # run only after call C or F has passed with it on
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; B=/tmp/b
mkdir -p $B/laps && t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv >$B/gpu.txt 2>&1
note() { echo "$1 rc=$2 $((SECONDS - t0))s" >>$B/rc.txt; }
LAYERS=0 LAPS_BUDGET=190 COMPILE_BUDGET=100 timeout 300 bash scripts/dev/table-run.sh >$B/table-run.log 2>&1
note table $?
bench() {  # bench NAME ARGS...
  local n=$1; shift
  timeout 40 "$L" bench "$@" --json $B/laps/$n.json >$B/laps/$n.log 2>&1; note "$n" $?
}
for i in 1 2; do
  LAPTIME_CUTLASS_PDL=off bench gpt2_fp8_nopdl_$i gpt2 -p fp8
  bench gpt2_fp8_pdl_$i gpt2 -p fp8
done
bench rn_bf16_avgpool_v1 resnet50 -p bf16 --kernel avgpool=v1
bench rn_bf16_avgpool_v3 resnet50 -p bf16
timeout 30 "$L" lab avgpool --json $B/lab_avgpool_bf16.json >$B/lab_avgpool_bf16.log 2>&1; note "lab avgpool" $?
grep -H "lap time" $B/laps/*.log >$B/laps/summary.txt
cp /tmp/device-run/table.txt $B/rc.txt $B/laps/summary.txt "$R/" 2>/dev/null
tar czf "$R/b.tgz" -C $B . 2>/dev/null
tar czf "$R/table.tgz" -C /tmp/device-run . 2>/dev/null
ls -la "$R"
