#!/usr/bin/env bash
# Call E of results/2026-12-02e-layernorm: the PERF.md table again at the session's last code
# commit (LayerNorm v6, a lap's clock as the mean of its readings), scripts/dev/table-run.sh with
# LAYERS=0, on an idle card. Packed with PROBES=0 BUILD80=0 TESTS="test_bench_report"
# scripts/dev/pack-carry.sh build.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; E=/tmp/e
mkdir -p $E && t0=$SECONDS
LAYERS=0 LAPS_BUDGET=190 COMPILE_BUDGET=100 timeout 300 bash scripts/dev/table-run.sh >$E/table-run.log 2>&1
echo "table rc=$? $((SECONDS - t0))s" >$E/rc.txt
cp /tmp/device-run/table.txt $E/ 2>/dev/null
tar czf "$R/table.tgz" -C /tmp/device-run . 2>/dev/null
cp $E/rc.txt "$R/"; tar czf "$R/e.tgz" -C $E .
ls -la "$R"
