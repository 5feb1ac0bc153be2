#!/usr/bin/env bash
# Call D of results/2026-12-02c-stem: the sm_80 build (-DCMAKE_CUDA_ARCHITECTURES=80, its PTX
# JIT-compiled on the H200: an A100's path) — test_resnet50_layers, whose FusedStem test runs the
# mma.sync core and the lab's v1 and v2 there (wgmma is not compiled), and its bf16 B256 stem line.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}
timeout 400 build80/tests/test_resnet50_layers >"$R/sm80_test_resnet50_layers.log" 2>&1; echo "sm80 resnet50 layers rc=$?" >"$R/rc.txt"
timeout 100 build80/bench/laptime bench resnet50 -b 32 -p bf16 -n 10 >"$R/sm80_r50_bf16_b32.log" 2>&1; echo "sm80 bench rc=$?" >>"$R/rc.txt"
