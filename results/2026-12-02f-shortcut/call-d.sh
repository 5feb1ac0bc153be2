#!/usr/bin/env bash
# Call D of results/2026-12-02f-shortcut: after the review's refactor (one function for the shortcut
# and conv3, used by forward and the build's timing): test_resnet50_layers, test_layer_costs, a
# ResNet-50 B256 bf16 lap (its plan lines: the choice) and ResNet-50's end-to-end check. Packed with
# PROBES=0 BUILD80=0 TESTS="test_resnet50_layers test_layer_costs" scripts/dev/pack-carry.sh build.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests; t0=$SECONDS
note() { echo "$1 rc=$2 $((SECONDS - t0))s" >>"$R/rc.txt"; }
timeout 90 "$L" bench resnet50 -p bf16 >"$R/rn_bf16.log" 2>&1; note rn_bf16 $?
(timeout 260 "$T/test_resnet50_layers" >"$R/test_resnet50_layers.log" 2>&1; note test_resnet50_layers $?) &
(timeout 200 "$T/test_layer_costs" >"$R/test_layer_costs.log" 2>&1; note test_layer_costs $?) &
wait
timeout 150 python3 tests/e2e/check_resnet50.py --laptime "$L" >"$R/e2e_resnet50.log" 2>&1; note e2e_resnet50 $?
cat "$R/rc.txt"
