#!/usr/bin/env bash
# Call E of results/2026-12-02c-stem: after the review's mend (the two stem kernels share
# next_work, stem_common.cuh), the stem's GPU tests on both cores and its lab ladder again.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests
(timeout 150 "$T/test_resnet50_layers" --gtest_filter='*FusedStem*' >"$R/test_resnet50_stem.log" 2>&1; echo "resnet50 stem tests rc=$?" >>"$R/rc.txt") &
(timeout 150 "$T/test_lab_kernels" --gtest_filter='*stem*' >"$R/test_lab_stem.log" 2>&1; echo "lab stem tests rc=$?" >>"$R/rc.txt") &
(timeout 150 "$T/test_e4m3_stream" >"$R/test_e4m3_stream.log" 2>&1; echo "e4m3 stream rc=$?" >>"$R/rc.txt") &
wait
timeout 60 "$L" lab stem --versions v2,v3 >"$R/lab_stem.log" 2>&1; echo "lab stem rc=$?" >>"$R/rc.txt"
