#!/usr/bin/env bash
# Call B of results/2026-12-05-conv2-into-fold: the end-to-end checks against PyTorch (both
# models, every precision) and test_gpt2_layers side by side, then the PERF.md table on an idle
# card (`LAYERS=0 LAPS_BUDGET=190 COMPILE_BUDGET=100 scripts/dev/table-run.sh`: every row beside
# PyTorch eager and torch.compile, one row at a time, the --json reports packed).
# Packed with PROBES=0 BUILD80=0 TESTS="test_gpt2_layers" scripts/dev/pack-carry.sh build.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests; B=/tmp/b
mkdir -p $B && t0=$SECONDS
note() { echo "$1 rc=$2 $((SECONDS - t0))s" >>$B/rc.txt; }
(timeout 170 python3 tests/e2e/check_resnet50.py --laptime "$L" >$B/e2e_resnet50.log 2>&1; note e2e_resnet50 $?) &
(timeout 120 python3 tests/e2e/check_gpt2.py --laptime "$L" >$B/e2e_gpt2.log 2>&1; note e2e_gpt2 $?) &
(timeout 170 "$T/test_gpt2_layers" >$B/test_gpt2_layers.log 2>&1; note test_gpt2_layers $?) &
wait
LAYERS=0 LAPS_BUDGET=190 COMPILE_BUDGET=100 timeout 330 bash scripts/dev/table-run.sh >$B/table-run.log 2>&1
note table $?
cp /tmp/device-run/table.txt $B/rc.txt "$R/" 2>/dev/null
tar czf "$R/b.tgz" -C $B . 2>/dev/null
tar czf "$R/table.tgz" -C /tmp/device-run . 2>/dev/null
ls -la "$R"
