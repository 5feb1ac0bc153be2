#!/usr/bin/env bash
# Call B of results/2026-12-02c-stem: Nsight Compute (--set full, source counters) on the B256
# stem, v2 (mma.sync) and v3 (wgmma), one launch each through `laptime lab stem --once` (the 30 launches before are its checks).
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
timeout 240 "$NCU" --set full --import-source yes -k regex:fused_stem --launch-skip 30 --launch-count 2 -o "$R/stem" \
  "$L" lab stem --once --versions v2,v3 >"$R/ncu_run.log" 2>&1; echo "ncu rc=$?" >"$R/rc.txt"
"$NCU" --import "$R/stem.ncu-rep" --page details >"$R/details.txt" 2>&1
"$NCU" --import "$R/stem.ncu-rep" --page source --csv --print-source sass >"$R/sass.csv" 2>&1
gzip "$R/sass.csv"; ls -la "$R"
