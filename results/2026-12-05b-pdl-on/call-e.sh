#!/usr/bin/env bash
# Call E of results/2026-12-05b-pdl-on, on the H200 once call F has passed with
# LAPTIME_CUTLASS_PDL on (exported here): the PERF.md table alone, on an idle card (`LAYERS=0 LAPS_BUDGET=190
# COMPILE_BUDGET=100 scripts/dev/table-run.sh`), and `laptime lab avgpool`.
# Packed with PROBES=0 BUILD80=0 TESTS="" scripts/dev/pack-carry.sh build (laptime alone).
set -u
export LAPTIME_CUTLASS_PDL=on  # run only after call F has passed with it on
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; E=/tmp/e
mkdir -p $E && t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv >$E/gpu.txt 2>&1
note() { echo "$1 rc=$2 $((SECONDS - t0))s" >>$E/rc.txt; }
LAYERS=0 LAPS_BUDGET=190 COMPILE_BUDGET=100 timeout 290 bash scripts/dev/table-run.sh >$E/table-run.log 2>&1
note table $?
timeout 15 "$L" lab avgpool --json $E/lab_avgpool_bf16.json >$E/lab_avgpool_bf16.log 2>&1; note "lab avgpool" $?
cp /tmp/device-run/table.txt $E/rc.txt "$R/" 2>/dev/null
tar czf "$R/e.tgz" -C $E . 2>/dev/null
tar czf "$R/table.tgz" -C /tmp/device-run . 2>/dev/null
ls -la "$R"
