#!/usr/bin/env bash
# Call A of results/2026-12-02f-shortcut: the projection shortcut folded into conv3 (4582bd5).
# ResNet-50 B256 bf16 laps, the build's choice (auto) against LAPTIME_RESNET_SHORTCUT=apart,
# alternating; the B32 and B1 --graph rows with auto; the ResNet-50 layers suite (both ways against
# the oracle and the goldens), the fp8 layers suite and GPT-2 B1 --graph (owed since LayerNorm v6),
# ResNet-50's end-to-end check. Packed with PROBES=0 BUILD80=0
# TESTS="test_resnet50_layers test_fp8_layers" scripts/dev/pack-carry.sh build.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests; D=/tmp/a
mkdir -p $D/laps && t0=$SECONDS
note() { echo "$1 rc=$2 $((SECONDS - t0))s" >>$D/rc.txt; }
bench() {  # bench NAME MODEL ARGS...
  local n=$1; shift
  timeout 90 "$L" bench "$@" --json $D/laps/$n.json >$D/laps/$n.log 2>&1; note "$n" $?
}
for i in 1 2; do
  bench rn_bf16_auto_$i resnet50 -p bf16
  LAPTIME_RESNET_SHORTCUT=apart bench rn_bf16_apart_$i resnet50 -p bf16
done
bench rn_bf16_b32_graph resnet50 -p bf16 -b 32 --graph
bench rn_bf16_b1_graph resnet50 -p bf16 -b 1 --graph
bench gpt2_bf16_b1_graph gpt2 -p bf16 -b 1 --graph
bench gpt2_bf16_b1_graph_v5 gpt2 -p bf16 -b 1 --graph --kernel layernorm=v5
grep -H "lap time" $D/laps/*.log >$D/laps/summary.txt
grep -H "downsample\|conv3:" $D/laps/rn_bf16_auto_1.log $D/laps/rn_bf16_b1_graph.log >$D/laps/shortcut_plans.txt
(timeout 240 "$T/test_resnet50_layers" >$D/test_resnet50_layers.log 2>&1; note test_resnet50_layers $?) &
(timeout 200 "$T/test_fp8_layers" >$D/test_fp8_layers.log 2>&1; note test_fp8_layers $?) &
wait
timeout 150 python3 tests/e2e/check_resnet50.py --laptime "$L" >$D/e2e_resnet50.log 2>&1; note e2e_resnet50 $?
cp $D/rc.txt $D/laps/summary.txt $D/laps/shortcut_plans.txt "$R/" 2>/dev/null; tar czf "$R/a.tgz" -C $D .
ls -la "$R"
