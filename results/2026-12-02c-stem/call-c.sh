#!/usr/bin/env bash
# Call C of results/2026-12-02c-stem: the wgmma stem with one conv row a chunk (n112) and its
# epilogue cut to four instructions a value pair, checked and timed; its tests and ResNet-50's
# end-to-end check; then the PERF.md table (scripts/dev/table-run.sh, LAYERS=0).
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests
mkdir -p /tmp/c && t0=$SECONDS
timeout 100 "$L" lab stem --versions v2,v3 --json /tmp/c/lab_stem.json >/tmp/c/lab_stem.log 2>&1; echo "lab stem rc=$? $((SECONDS - t0))s" >>/tmp/c/rc.txt
(timeout 200 "$T/test_resnet50_layers" --gtest_filter='*FusedStem*' >/tmp/c/test_resnet50_stem.log 2>&1; echo "resnet50 stem tests rc=$? $((SECONDS - t0))s" >>/tmp/c/rc.txt) &
(timeout 200 "$T/test_lab_kernels" --gtest_filter='*stem*:*Stem*' >/tmp/c/test_lab_stem.log 2>&1; echo "lab stem tests rc=$? $((SECONDS - t0))s" >>/tmp/c/rc.txt) &
(timeout 200 "$T/test_e4m3_stream" >/tmp/c/test_e4m3_stream.log 2>&1; echo "e4m3 stream rc=$? $((SECONDS - t0))s" >>/tmp/c/rc.txt) &
(timeout 200 python3 tests/e2e/check_resnet50.py --laptime "$L" >/tmp/c/e2e_resnet50.log 2>&1; echo "e2e_resnet50 rc=$? $((SECONDS - t0))s" >>/tmp/c/rc.txt) &
wait
cp /tmp/c/rc.txt "$R/rc.txt"
tar czf "$R/checks.tgz" -C /tmp/c .
LAYERS=0 LAPS_BUDGET=220 COMPILE_BUDGET=110 timeout 330 bash scripts/dev/table-run.sh >"$R/table-run.log" 2>&1
echo "table rc=$? $((SECONDS - t0))s" >>"$R/rc.txt"
ls "$R"
