#!/usr/bin/env bash
# Call A of results/2026-12-05-conv2-into-fold: conv2 writing t2 straight into the folded
# shortcut's left half (ShortcutWay::Folded) and CUTLASS's GEMMs launched as programmatic
# dependents (LAPTIME_CUTLASS_PDL). First the suites that run either, side by side (the card's
# memory holds them all): test_resnet50_layers (the strided conv, the copy, every way of the
# Bottleneck and the golden Blocks) and test_cutlass_gemm (test_fp8_layers, test_e4m3_stream,
# test_gpt2_layers and test_layer_costs in call B: the carry's 64 MiB with the tracked tree). Then laps on an idle card, one at a time, alternating:
# ResNet-50 B256 bf16 LAPTIME_RESNET_SHORTCUT=folded against folded-copy (every switch named: the
# defaults keep the unchecked ways off until this call); GPT-2 B8 fp8 and bf16 and
# ResNet-50 B256 fp8 with LAPTIME_CUTLASS_PDL on and off; the small --graph rows; `laptime lab avgpool`.
# Packed with PROBES=0 BUILD80=0 TESTS="test_resnet50_layers test_cutlass_gemm"
# scripts/dev/pack-carry.sh build.
set -u
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$PWD/build/lib:${LD_LIBRARY_PATH:-}
tar xJf .carry/build.tar.xz
R=${OUT:?}; L=$PWD/build/bench/laptime; T=$PWD/build/tests; D=/tmp/a
mkdir -p $D/laps && t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv >$D/gpu.txt 2>&1
note() { echo "$1 rc=$2 $((SECONDS - t0))s" >>$D/rc.txt; }
suite() {  # suite NAME SECONDS
  timeout "$2" "$T/$1" >$D/$1.log 2>&1; note "$1" $?
}
suite test_resnet50_layers 270 &
suite test_cutlass_gemm 200 &
wait
bench() {  # bench NAME MODEL ARGS...
  local n=$1; shift
  timeout 60 "$L" bench "$@" --json $D/laps/$n.json >$D/laps/$n.log 2>&1; note "$n" $?
}
timeout 60 "$L" lab avgpool --json $D/lab_avgpool_bf16.json >$D/lab_avgpool_bf16.log 2>&1; note "lab avgpool bf16" $?
timeout 60 "$L" lab avgpool -p fp32 --json $D/lab_avgpool_fp32.json >$D/lab_avgpool_fp32.log 2>&1; note "lab avgpool fp32" $?
for i in 1 2; do
  LAPTIME_RESNET_SHORTCUT=folded bench rn_bf16_folded_$i resnet50 -p bf16
  LAPTIME_RESNET_SHORTCUT=folded-copy bench rn_bf16_copy_$i resnet50 -p bf16
done
for i in 1 2; do
  LAPTIME_CUTLASS_PDL=on bench gpt2_fp8_pdl_$i gpt2 -p fp8
  LAPTIME_CUTLASS_PDL=off bench gpt2_fp8_nopdl_$i gpt2 -p fp8
done
for i in 1 2; do
  LAPTIME_CUTLASS_PDL=on bench gpt2_bf16_pdl_$i gpt2 -p bf16
  LAPTIME_CUTLASS_PDL=off bench gpt2_bf16_nopdl_$i gpt2 -p bf16
done
LAPTIME_CUTLASS_PDL=on bench rn_fp8_pdl resnet50 -p fp8
LAPTIME_CUTLASS_PDL=off bench rn_fp8_nopdl resnet50 -p fp8
LAPTIME_RESNET_SHORTCUT=folded bench rn_bf16_b32_graph resnet50 -p bf16 -b 32 --graph
LAPTIME_RESNET_SHORTCUT=folded bench rn_bf16_b1_graph resnet50 -p bf16 -b 1 --graph
LAPTIME_CUTLASS_PDL=on bench gpt2_bf16_b1_graph_pdl gpt2 -p bf16 -b 1 --graph
bench gpt2_bf16_b1_graph gpt2 -p bf16 -b 1 --graph
grep -H "lap time" $D/laps/*.log >$D/laps/summary.txt
grep -H "downsample" $D/laps/rn_bf16_folded_1.log $D/laps/rn_bf16_b32_graph.log $D/laps/rn_bf16_b1_graph.log >$D/laps/shortcut_plans.txt
cp $D/rc.txt $D/laps/summary.txt $D/laps/shortcut_plans.txt "$R/" 2>/dev/null; tar czf "$R/a.tgz" -C $D .
ls -la "$R"
