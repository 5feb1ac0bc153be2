#!/usr/bin/env bash
# Call C of results/2026-12-02d-overlap: Nsight Compute (--set full, source counters) on the B256
# stem, v3 and v4, one launch each: `laptime lab stem --once` puts each timed call in an NVTX range
# (laptime@lab/stem/vN), and the model shapes come B256 first.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
timeout 300 "$NCU" --set full --import-source yes --nvtx --nvtx-include "laptime@lab/stem/" -k regex:fused_stem_wgmma \
  --launch-count 2 -o "$R/stem" "$L" lab stem --once --versions v3,v4 >"$R/ncu_run.log" 2>&1; echo "ncu rc=$?" >"$R/rc.txt"
"$NCU" --import "$R/stem.ncu-rep" --page details >"$R/details.txt" 2>&1
"$NCU" --import "$R/stem.ncu-rep" --page source --csv --print-source sass >"$R/sass.csv" 2>&1
gzip "$R/sass.csv"; ls -la "$R"
