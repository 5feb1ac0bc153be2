#!/usr/bin/env bash
# Call C of results/2026-12-02f-shortcut: test_layer_costs (ResNet-50's hand counts with the folded
# shortcut's ranges) and test_e4m3_stream. Packed with PROBES=0 BUILD80=0
# TESTS="test_layer_costs test_e4m3_stream" scripts/dev/pack-carry.sh build.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; T=$PWD/build/tests
timeout 200 "$T/test_layer_costs" >"$R/test_layer_costs.log" 2>&1; echo "test_layer_costs rc=$?" >>"$R/rc.txt"
timeout 150 "$T/test_e4m3_stream" >"$R/test_e4m3_stream.log" 2>&1; echo "test_e4m3_stream rc=$?" >>"$R/rc.txt"
cat "$R/rc.txt"
